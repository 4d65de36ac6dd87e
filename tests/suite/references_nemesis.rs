//! `references/nemesis.md` documents exactly the nemesis kinds the code knows.

use faultline::nemesis::Kind;

#[test]
fn nemesis_reference_lists_every_kind_and_no_other() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("references/nemesis.md"),
    )
    .expect("references/nemesis.md");
    let mut documented: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(str::trim)
        .collect();
    let mut known: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
    documented.sort_unstable();
    known.sort_unstable();
    assert_eq!(documented, known);
}
