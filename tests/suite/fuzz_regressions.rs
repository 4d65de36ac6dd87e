//! Inputs that once panicked a reader (found by the fuzz targets under `fuzz/` or while
//! writing them); each must now come back as a located error.

use faultline::plan::parse_plan;
use faultline::runspec::load;

/// Loads `sidecar` against an empty plan; returns the errors (it must not panic).
fn sidecar_errors(sidecar: &str) -> Vec<String> {
    let plan = parse_plan("p.md", "# Test Plan: x\n");
    match load(&plan, Some(("p.run.yaml", sidecar))) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn a_duration_beyond_what_a_duration_holds_is_an_error_not_a_panic() {
    for deadline in ["99999999999999999999s", "1e300", "6000000000000000h"] {
        let errors = sidecar_errors(&format!(
            "version: 1\nscenarios:\n  S1:\n    workload: {{ run: \"true\", deadline: {deadline} }}\n"
        ));
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("p.run.yaml:4:") && e.contains("invalid duration")),
            "{deadline}: {errors:?}"
        );
    }
}

/// Reading EDN recurses per nesting level, so a file of open brackets once overflowed
/// the stack instead of coming back as an error.
#[test]
fn edn_nested_past_the_depth_limit_is_an_error_not_a_stack_overflow() {
    use faultline::oracle::{Format, read_history};
    let deep = 1_000_000;
    for (what, text) in [
        ("vectors", "[".repeat(deep)),
        ("maps", "{:a ".repeat(deep)),
        ("discards", "#_".repeat(deep)),
        ("tags", "#t ".repeat(deep)),
    ] {
        let Err(e) = read_history(Format::Edn, "deep.edn", &text) else {
            panic!("{what}: {deep} levels read as a history");
        };
        let e = e.to_string();
        assert!(
            e.starts_with("deep.edn:1:") && e.contains("nested deeper than"),
            "{what}: {e}"
        );
    }
}

/// The JSON readers (faultline JSONL, Porcupine logs) and the run-spec YAML loader keep
/// their own parsers' depth limits: deep nesting is a located error there too.
#[test]
fn deep_nesting_in_json_histories_and_yaml_sidecars_is_a_located_error() {
    use faultline::oracle::{Format, read_history};
    let deep = 100_000;
    let line = format!("{}{}", "[".repeat(deep), "]".repeat(deep));
    for format in [Format::Jsonl, Format::Porcupine] {
        let Err(e) = read_history(format, "deep.jsonl", &line) else {
            panic!("{format:?}: {deep} levels read as a history");
        };
        assert!(
            e.to_string().starts_with("deep.jsonl:1:"),
            "{format:?}: {e}"
        );
    }
    let errors = sidecar_errors(&format!("version: 1\nscenarios: {}", "[".repeat(deep)));
    assert!(
        errors.iter().any(|e| e.starts_with("p.run.yaml:")),
        "{errors:?}"
    );
}

/// Found by the plan_parse target: the "no scenario" hand-back pointed at line 0,
/// outside the plan. Every lint problem points at a line of the plan, also for a
/// plan that is empty or has no scenario.
#[test]
fn a_plan_without_scenarios_is_handed_back_at_a_line_of_the_plan() {
    for text in ["", "# Test Plan: x\n", "```\n### Scenario S1: hidden\n"] {
        let plan = faultline::plan::parse_plan("p.md", text);
        let problems = faultline::plan::lint(&plan);
        assert!(
            problems.iter().any(|p| p.message.contains("no scenario")),
            "{problems:?}"
        );
        let lines = text.lines().count().max(1);
        for p in &problems {
            assert!((1..=lines).contains(&p.line), "{text:?}: {p:?}");
        }
    }
}
