//! Lint: a gated scenario's landing probes must watch the signal its §7.M block
//! declares ("Nemesis + landing evidence"). A probe that watches something the plan
//! never named can pass while the declared signal never appears.

use regex::Regex;

use super::load::RunSpec;
use super::model::{Binding, LandingSpec};
use crate::plan::{Plan, Problem, SevenM, Severity};

/// Words of at least three letters, lower-cased (regex syntax and ids drop out).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphabetic())
        .filter(|w| w.len() >= 3)
        .map(str::to_lowercase)
        .collect()
}

/// The phrases the plan quotes in backticks.
fn quoted(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|q| q.replace('…', "x"))
        .collect()
}

/// Whether `probe` watches something the §7.M text names.
fn watches_declared(probe: &LandingSpec, declared: &str) -> bool {
    let lower = declared.to_lowercase();
    let named = |terms: &[String]| !terms.is_empty() && terms.iter().all(|t| lower.contains(t));
    if let Some(log) = &probe.log {
        let by_regex = Regex::new(&log.pattern)
            .is_ok_and(|re| quoted(declared).iter().any(|q| re.is_match(q)));
        return by_regex || named(&words(&log.pattern));
    }
    if let Some(c) = &probe.counter {
        return words(&c.run).iter().any(|w| lower.contains(w.as_str()));
    }
    if let Some(h) = &probe.http {
        let field = h
            .pointer
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_lowercase();
        return !field.is_empty() && lower.contains(&field);
    }
    if let Some(p) = &probe.prometheus {
        let name = p
            .metric
            .split('{')
            .next()
            .unwrap_or_default()
            .to_lowercase();
        return !name.is_empty() && lower.contains(&name);
    }
    if probe.history.is_some() {
        return [
            "history",
            "timeout",
            "indeterminate",
            "time out",
            "timed out",
        ]
        .iter()
        .any(|w| lower.contains(w));
    }
    false
}

/// The landing probes of a binding and of its arms.
fn probes(binding: &Binding) -> Vec<&LandingSpec> {
    let mut out: Vec<&LandingSpec> = binding
        .faults
        .iter()
        .flat_map(|f| f.value.landing.iter())
        .collect();
    for inner in binding.arms.values() {
        out.extend(probes(inner));
    }
    out
}

fn faults(binding: &Binding) -> usize {
    binding.faults.len() + binding.arms.values().map(faults).sum::<usize>()
}

/// A warning for each gated scenario whose bound faults declare no probe watching the
/// signal its §7.M block names.
pub fn landing_mismatches(plan: &Plan, spec: &RunSpec) -> Vec<Problem> {
    let mut out = Vec::new();
    for s in &plan.scenarios {
        let SevenM::Filled(block) = &s.seven_m else {
            continue;
        };
        let (Some(declared), Some((binding, _))) = (&block.nemesis, spec.bindings.get(&s.id))
        else {
            continue;
        };
        if faults(binding) == 0 {
            continue;
        }
        let probes = probes(binding);
        if probes.iter().any(|p| watches_declared(p, &declared.text)) {
            continue;
        }
        let message = if probes.is_empty() {
            format!(
                "{} §7.M declares landing by \"{}\" but its faults declare no landing probe",
                s.id, declared.text
            )
        } else {
            format!(
                "{} §7.M declares landing by \"{}\" but none of its {} landing probe(s) \
                 watches that signal",
                s.id,
                declared.text,
                probes.len()
            )
        };
        out.push(Problem {
            file: None,
            line: declared.line,
            column: 0,
            scenario: Some(s.id.clone()),
            field: "§7.M Nemesis + landing evidence".into(),
            message,
            severity: Severity::Warning,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(pattern: &str) -> LandingSpec {
        serde_saphyr::from_str(&format!(
            "side: victim\nlog: {{ service: n1, pattern: {pattern:?} }}\n"
        ))
        .expect("landing spec")
    }

    #[test]
    fn a_log_probe_matches_a_quoted_phrase_or_its_words() {
        let declared = "SIGSTOP; landing = the primary logs `replication to … timed out`.";
        assert!(watches_declared(
            &log(r"replication to \S+ timed out"),
            declared
        ));
        assert!(watches_declared(
            &log("replication to n3 timed out"),
            declared
        ));
        assert!(!watches_declared(&log("tick gap"), declared));
    }
}
