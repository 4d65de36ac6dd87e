//! The skeleton's three TODO regions (workload, faults, oracle), filled from the
//! scenario's run-spec binding. A region the binding does not cover keeps its TODO,
//! and the file says it is incomplete. The workload command is written as code in the
//! target's idiom where faultline knows one, so running the authored test runs it.

use super::idiom::{self, Idiom};
use crate::runspec::Binding;

/// The regions a skeleton marks with `TODO`, in the method's order.
pub const REGIONS: [&str; 3] = ["workload", "fault", "oracle"];

/// What filling did.
pub struct Filled {
    pub text: String,
    /// Regions the skeleton marks that no binding covers (their TODO stays).
    pub missing: Vec<&'static str>,
    /// The workload region runs the bound workload command (not only comments).
    pub workload_code: bool,
}

/// The lines a binding offers for `region`, empty when it offers none.
fn offered(binding: Option<&Binding>, region: &str) -> Vec<String> {
    let Some(b) = binding else {
        return Vec::new();
    };
    match region {
        "workload" => {
            let services = b
                .cluster
                .iter()
                .flat_map(|c| &c.services)
                .map(|s| format!("service {} (faultline starts it): {}", s.name, s.run));
            services
                .chain(b.workload.iter().map(|w| format!("workload: {}", w.run)))
                .collect()
        }
        "fault" => b
            .faults
            .iter()
            .map(|f| {
                let step = serde_json::to_string(&f.value).unwrap_or_default();
                format!("fault {}: {step}", f.value.id)
            })
            .collect(),
        _ => {
            let history = b
                .history
                .iter()
                .map(|h| format!("history: {} ({:?})", h.path, h.format));
            let checker = b.checkers().into_iter().flat_map(|c| {
                c.builtin
                    .iter()
                    .map(|n| format!("checker: built-in {n}"))
                    .chain(c.external.iter().map(|e| format!("checker: {e}")))
                    .chain(c.final_state.iter().map(|f| format!("final state: {f}")))
            });
            history.chain(checker).collect()
        }
    }
}

/// Fills each `TODO` line naming a region with the binding's lines for it, as
/// comments in `comment` style under the same indentation; the workload command
/// also as code when `idiom` can carry it.
pub fn fill(skeleton: &str, binding: Option<&Binding>, comment: &str, idiom: &Idiom) -> Filled {
    // Go code must import what it calls, after a package clause: without one, comments.
    let go = matches!(idiom, Idiom::Go { .. });
    let idiom = if go && !idiom::has_package_clause(skeleton) {
        &Idiom::Comment
    } else {
        idiom
    };
    let mut text = String::with_capacity(skeleton.len());
    let mut missing = Vec::new();
    let mut workload_code = false;
    for line in skeleton.lines() {
        let lower = line.to_ascii_lowercase();
        let region = REGIONS
            .iter()
            .find(|r| line.contains("TODO") && lower.contains(*r));
        let Some(region) = region else {
            text.push_str(line);
            text.push('\n');
            continue;
        };
        let lines = offered(binding, region);
        if lines.is_empty() {
            missing.push(*region);
            text.push_str(line);
            text.push('\n');
            continue;
        }
        let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
        text.push_str(&format!(
            "{indent}{comment} {region}: from the scenario's run-spec binding\n"
        ));
        for l in lines {
            text.push_str(&format!("{indent}{comment}   {}\n", l.replace('\n', " ")));
        }
        let command = binding.and_then(|b| b.workload.as_ref()).map(|w| &w.run);
        if *region == "workload"
            && let Some(code) = command.and_then(|c| idiom::workload_code(idiom, c, &indent))
        {
            text.push_str(&code);
            workload_code = true;
        }
    }
    if workload_code && matches!(idiom, Idiom::Go { .. }) {
        text = idiom::with_go_imports(&text);
    }
    Filled {
        text,
        missing,
        workload_code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_regions_are_filled_and_unbound_ones_keep_their_todo() {
        let binding: Binding =
            serde_saphyr::from_str("workload: { run: \"./load.sh --seed 1\" }\n").expect("binding");
        let skeleton = "fn t() {\n    // TODO workload\n    // TODO faults\n}\n";
        let filled = fill(skeleton, Some(&binding), "//", &Idiom::Comment);
        assert!(
            filled
                .text
                .contains("    //   workload: ./load.sh --seed 1"),
            "{}",
            filled.text
        );
        assert!(!filled.text.contains("TODO workload"));
        assert!(filled.text.contains("TODO faults"));
        assert_eq!(filled.missing, vec!["fault"]);
        assert!(!filled.workload_code);
        let go = Idiom::Go { to_sut: ".".into() };
        let packaged = fill("package kv\n// TODO workload\n", Some(&binding), "//", &go);
        assert!(packaged.workload_code);
        assert!(
            packaged.text.contains("flexec \"os/exec\""),
            "{}",
            packaged.text
        );
        let bare = fill("// TODO workload\n", Some(&binding), "//", &go);
        assert!(!bare.workload_code, "no package clause to import after");
        assert!(!bare.text.contains("flexec"), "{}", bare.text);
        let shell = fill("# TODO workload\n", Some(&binding), "#", &Idiom::Shell);
        assert!(shell.workload_code);
        assert!(
            shell.text.contains("if ! ( ./load.sh --seed 1\n); then"),
            "{}",
            shell.text
        );
    }
}
