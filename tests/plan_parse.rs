//! Parser tests against the real corpus plan and small fixture plans.

use std::path::{Path, PathBuf};

use faultline::plan::{Category, SevenM, hands_back, lint, parse_plan};

fn corpus_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/plans/raft-cr-project-stability.md")
}

fn corpus() -> faultline::plan::Plan {
    let path = corpus_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "corpus plan not found at {} ({e}); the repo must sit next to a `shared/` copy",
            path.display()
        )
    });
    parse_plan(&path.to_string_lossy(), &text)
}

#[test]
fn corpus_debug_dump() {
    let plan = corpus();
    let problems = lint(&plan);
    println!("{}", faultline::plan::lint_text(&plan, &problems));
}
