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
