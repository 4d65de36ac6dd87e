//! The lint report of the demo plan, pinned as a snapshot so any change to what the
//! operator reads is reviewed (`cargo insta review`).

use faultline::plan::{lint, lint_json, lint_text, parse_plan};

fn demo() -> faultline::plan::Plan {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/plan.md"),
    )
    .expect("demo plan");
    parse_plan("examples/demo/plan.md", &text)
}

#[test]
fn demo_plan_lint_text() {
    let plan = demo();
    insta::assert_snapshot!(lint_text(&plan, &lint(&plan)));
}

#[test]
fn demo_plan_lint_json() {
    let plan = demo();
    insta::assert_json_snapshot!(lint_json(&plan, &lint(&plan)));
}
