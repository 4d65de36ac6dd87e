//! The demo plan and its sidecar run spec load together and bind what the demo needs.

use std::path::Path;

use faultline::nemesis::Kind;
use faultline::plan::{lint, parse};
use faultline::runspec;

#[test]
fn demo_plan_is_runnable_and_its_sidecar_binds_every_scenario_but_one_arm() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let plan_path = root.join("examples/demo/plan.md");
    let plan_text = std::fs::read_to_string(&plan_path).expect("demo plan");
    let plan = parse::parse_plan("examples/demo/plan.md", &plan_text);
    assert!(
        !lint::hands_back(&lint::lint(&plan)),
        "the demo plan is handed back"
    );

    let sidecar = runspec::sidecar_path(&plan_path);
    assert_eq!(sidecar, root.join("examples/demo/plan.run.yaml"));
    let yaml = std::fs::read_to_string(&sidecar).expect("demo run spec");
    let spec = runspec::load(&plan, Some(("examples/demo/plan.run.yaml", &yaml)))
        .unwrap_or_else(|errors| panic!("demo run spec invalid: {errors:?}"));

    let ids: Vec<&str> = plan.scenarios.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8"]);
    for id in ids {
        assert!(spec.bindings.contains_key(id), "{id} has no binding");
    }
    let (d5, _) = &spec.bindings["D5"];
    let arms: Vec<&str> = d5.arms.keys().map(String::as_str).collect();
    assert_eq!(
        arms,
        ["api"],
        "D5/admin must stay unbound so it is never reached"
    );
    let plan_arms: Vec<&str> = plan.scenarios[4]
        .arms
        .iter()
        .map(|a| a.id.as_str())
        .collect();
    assert_eq!(plan_arms, ["D5/api", "D5/admin"]);

    let (d3, _) = &spec.bindings["D3"];
    assert_eq!(d3.faults[0].value.kind(), Kind::Process);
    let planted = d3.cluster.as_ref().is_some_and(|c| {
        c.services
            .iter()
            .any(|s| s.run.contains("--ack-before-replicate"))
    });
    assert!(planted, "D3 must run the store with the planted bug");

    // D6 needs a session-local install; D7 needs something nothing can install.
    let needs: Vec<(&str, bool)> = spec
        .requires
        .iter()
        .map(|(r, _)| {
            (
                r.need.as_str(),
                r.local_install.is_some() || r.package.is_some(),
            )
        })
        .collect();
    assert_eq!(
        needs,
        [("binary:fl-client", true), ("binary:demo-skewd", false)]
    );
}
