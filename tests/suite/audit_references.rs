//! references/audits.md lists exactly the audit items the engine produces, and says
//! which of them may be declared.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use faultline::engine::audit::{self, AuditCtx, DECLARABLE};
use faultline::engine::iteration::IterationFacts;

fn headings() -> BTreeSet<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/references/audits.md");
    let text = std::fs::read_to_string(path).expect("references/audits.md readable");
    text.lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(|h| h.trim().to_string())
        .collect()
}

#[test]
fn audit_headings_match_the_items_the_engine_produces() {
    let declared = BTreeMap::new();
    let ctx = AuditCtx {
        duration: Duration::from_secs(1),
        statistical: false,
        any_size: false,
        failovers_planned: 0,
        declared: &declared,
        quiesce_declared: false,
    };
    let facts = IterationFacts::default();
    // A declared quiesce that never ran is not called missing from the run spec.
    let never_ran = audit::green_but_broken(
        &facts,
        &AuditCtx {
            quiesce_declared: true,
            ..ctx
        },
    );
    let gbb8 = |items: &[faultline::verdict::AuditItem]| {
        items
            .iter()
            .find(|i| i.id == "gbb-8-recovery")
            .map(|i| i.evidence.clone())
            .unwrap_or_default()
    };
    assert!(
        gbb8(&never_ran).contains("never ran"),
        "{}",
        gbb8(&never_ran)
    );
    let gbb = audit::green_but_broken(&facts, &ctx);
    assert!(
        gbb8(&gbb).contains("no quiesce condition"),
        "{}",
        gbb8(&gbb)
    );
    let (gbb, weak) = audit::combine(&[gbb], &[&facts], 0, &ctx);
    let code: BTreeSet<String> = gbb
        .iter()
        .chain(weak.iter())
        .map(|i| i.id.clone())
        .collect();
    assert_eq!(
        gbb.len() + weak.len(),
        code.len(),
        "an item id appears twice"
    );
    assert_eq!(headings(), code);
}

#[test]
fn every_declarable_item_is_documented_as_declarable() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/references/audits.md");
    let text = std::fs::read_to_string(path).expect("readable");
    for id in DECLARABLE {
        let section = text
            .split(&format!("### {id}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("{id} not documented"));
        let body = section.split("### ").next().unwrap_or_default();
        assert!(
            body.contains("Declarable") || body.contains("declarable"),
            "{id}: {body}"
        );
    }
}
