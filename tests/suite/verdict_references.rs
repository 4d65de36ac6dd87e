//! references/verdicts.md lists exactly the verdicts the code knows.

use faultline::verdict::Verdict;
use std::collections::BTreeSet;

#[test]
fn verdict_headings_match_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/references/verdicts.md");
    let text = std::fs::read_to_string(path).expect("references/verdicts.md readable");
    let headings: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(str::trim)
        .collect();
    let doc: BTreeSet<&str> = headings.iter().copied().collect();
    assert_eq!(
        doc.len(),
        headings.len(),
        "duplicate headings: {headings:?}"
    );
    let code: BTreeSet<&str> = Verdict::ALL.iter().map(|v| v.as_str()).collect();
    assert_eq!(doc, code);
}

#[test]
fn checker_headings_match_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/references/checkers.md");
    let text = std::fs::read_to_string(path).expect("references/checkers.md readable");
    let doc: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(str::trim)
        .collect();
    let code: BTreeSet<&str> = faultline::oracle::registry::names().into_iter().collect();
    assert_eq!(doc, code);
}
