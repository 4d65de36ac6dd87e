//! The lint report of the demo plan, pinned as a snapshot so any change to what the
//! operator reads is reviewed (`cargo insta review`).

use crate::common;

use common::demo_plan as demo;
use faultline::plan::{lint, lint_json, lint_text};

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
