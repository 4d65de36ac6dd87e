//! Parser tests against the real corpus plan and small fixture plans.

use crate::common;

use common::{corpus, fixture};
use faultline::plan::{Category, SevenM};

fn state(m: &SevenM) -> &'static str {
    match m {
        SevenM::Filled(_) => "filled",
        SevenM::NotApplicable { .. } => "not-applicable",
        SevenM::Missing => "missing",
    }
}

#[test]
fn corpus_header_title_and_claims() {
    let Some(plan) = corpus() else {
        return;
    };
    assert_eq!(plan.title.as_deref(), Some("raft-cr-project-stability"));
    assert_eq!(plan.slug, "raft-cr-project-stability");
    assert_eq!(plan.header.date.as_deref(), Some("2026-05-22"));
    assert_eq!(plan.header.plan_mode.as_deref(), Some("project-wide"));
    assert_eq!(plan.header.status.as_deref(), Some("draft"));
    let ids: Vec<&str> = plan.claims.iter().map(|c| c.id.as_str()).collect();
    let expected: Vec<String> = (1..=40).map(|n| format!("C{n}")).collect();
    assert_eq!(ids, expected);
    let c1 = &plan.claims[0];
    assert_eq!(c1.line, 109);
    assert_eq!(c1.categories, vec![Category::Safety]);
    let c15 = &plan.claims[14];
    assert_eq!(c15.categories, vec![Category::Safety, Category::Liveness]);
    let c35 = &plan.claims[34];
    assert_eq!(
        c35.categories,
        vec![Category::Ordering, Category::Idempotency]
    );
    assert!(c35.unknown_categories.is_empty());
    let c30 = &plan.claims[29];
    assert!(c30.categories.is_empty());
    assert_eq!(c30.unknown_categories, vec!["observability"]);
    let c38 = &plan.claims[37];
    assert_eq!(c38.categories, vec![Category::Isolation]);
    assert_eq!(c38.unknown_categories, vec!["(negative)"]);
    assert_eq!(plan.missing_claims.len(), 10);
    assert_eq!(plan.missing_claims[0].id, "M1");
}

#[test]
fn corpus_scenarios_and_seven_m() {
    let Some(plan) = corpus() else {
        return;
    };
    let ids: Vec<&str> = plan.scenarios.iter().map(|s| s.id.as_str()).collect();
    let expected: Vec<String> = (1..=17).map(|n| format!("S{n:02}")).collect();
    assert_eq!(ids, expected);
    // S08 also writes "§7.M: not applicable" (liveness/SLO scenario).
    let na = ["S08", "S11", "S15", "S16", "S17"];
    for s in &plan.scenarios {
        let want = if na.contains(&s.id.as_str()) {
            "not-applicable"
        } else {
            "filled"
        };
        assert_eq!(state(&s.seven_m), want, "{} §7.M state", s.id);
    }
    let s01 = &plan.scenarios[0];
    assert_eq!(s01.name, "linearizable_writes_under_partition_and_crash");
    assert_eq!(s01.line, 595);
    assert_eq!(s01.falsifies, vec!["C1", "C4", "C5", "C13"]);
    assert_eq!(s01.closes, vec!["H1"]);
    let SevenM::Filled(b) = &s01.seven_m else {
        panic!("S01 §7.M should be filled");
    };
    assert_eq!(b.model_kind.as_deref(), Some("register"));
    assert_eq!(b.line, 640);
    assert!(
        b.checker
            .as_ref()
            .is_some_and(|c| c.text.contains("Knossos"))
    );
    assert!(b.nemesis.as_ref().is_some_and(|n| n.text.contains("pgrep")));
    assert!(s01.tiers.exit_criteria.is_some());
    assert!(s01.tiers.smoke.is_none());
    let skel = s01
        .skeleton
        .as_ref()
        .map(|f| f.text.as_str())
        .unwrap_or_default();
    assert!(skel.contains("AUTO-GENERATED"), "skeleton: {skel}");
    let s12 = &plan.scenarios[11];
    let SevenM::Filled(b) = &s12.seven_m else {
        panic!("S12 §7.M should be filled");
    };
    assert_eq!(b.model_kind.as_deref(), Some("other(parser)"));
    // Oracle with nested bullets keeps every bullet.
    let s09 = plan.scenarios[8].oracle.as_ref().map(|o| o.text.clone());
    let s09 = s09.unwrap_or_default();
    assert!(
        s09.contains("After heal") && s09.contains("Acked client writes"),
        "{s09}"
    );
}

#[test]
fn corpus_hypotheses_and_tables() {
    let Some(plan) = corpus() else {
        return;
    };
    assert_eq!(plan.hypotheses.len(), 35);
    let h1 = &plan.hypotheses[0];
    assert_eq!(h1.id, "H1");
    assert!(h1.title.starts_with("Leader Completeness"), "{}", h1.title);
    assert_eq!(h1.could_falsify, vec!["C1", "C4", "C5"]);
    assert_eq!(h1.subsystem.as_deref(), Some("Node / protocol core"));
    assert!(
        h1.suspected_because
            .as_deref()
            .is_some_and(|s| s.contains("advance_commit_index"))
    );
    let h3 = &plan.hypotheses[2];
    assert_eq!(h3.could_falsify, vec!["C1", "C2", "C3", "C4", "C5"]);
    assert_eq!(plan.requirements.len(), 12);
    assert_eq!(plan.requirements[0].requirement, "Crystal compiler");
    assert!(!plan.adequacy.is_empty());
    assert_eq!(plan.residual.len(), 8);
    let conf = plan.confidence.as_deref().unwrap_or_default();
    assert!(conf.starts_with("If every scenario"), "{conf}");
}

#[test]
fn newer_template_fixture() {
    let plan = fixture("newer-template.md");
    assert_eq!(plan.slug, "kv-newer");
    assert_eq!(plan.header.sut.as_deref(), Some("kv store"));
    assert_eq!(plan.scenarios.len(), 2);
    let s1 = &plan.scenarios[0];
    assert_eq!(s1.id, "S1");
    assert_eq!(s1.falsifies, vec!["C1", "C2"]);
    assert!(s1.tiers.smoke.is_some() && s1.tiers.hardening.is_some());
    let release = s1
        .tiers
        .release
        .as_ref()
        .map(|f| f.text.as_str())
        .unwrap_or_default();
    assert!(release.starts_with("not provided"), "{release}");
    let SevenM::Filled(b) = &s1.seven_m else {
        panic!("S1 §7.M should be filled");
    };
    assert_eq!(b.model_kind.as_deref(), Some("register"));
    assert_eq!(
        s1.skeleton_language.as_ref().map(|f| f.text.as_str()),
        Some("rust")
    );
    assert_eq!(plan.embedded_run_specs.len(), 1);
    assert_eq!(plan.embedded_run_specs[0].scenario_id, "S1");
    assert!(
        plan.embedded_run_specs[0]
            .yaml
            .contains("command: ./load.sh")
    );
    let s2 = &plan.scenarios[1];
    assert_eq!(
        s2.tiers.release.as_ref().map(|f| f.text.as_str()),
        Some("500 runs per arm.")
    );
    let arms: Vec<&str> = s2.arms.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(arms, vec!["S2/api", "S2/export"]);
    assert_eq!(s2.arms[0].description, "the REST API.");
    assert_eq!(plan.claims[2].categories, vec![Category::Boundary]);
    assert_eq!(plan.claims[3].categories, vec![Category::PerformanceSlo]);
    assert_eq!(plan.hypotheses.len(), 2);
    assert_eq!(plan.hypotheses[0].title, "Torn WAL tail");
    assert_eq!(plan.hypotheses[0].could_falsify, vec!["C1", "C2"]);
    assert_eq!(plan.hypotheses[0].subsystem.as_deref(), Some("wal"));
    assert!(plan.requirements[1].brought_up_by_sut);
    assert!(!plan.requirements[0].brought_up_by_sut);
}

#[test]
fn drift_forms_fixture() {
    let plan = fixture("drift-forms.md");
    let ids: Vec<&str> = plan.scenarios.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["S1", "S01", "D3", "D4"]);
    assert_eq!(plan.scenarios[1].name, "y");
    assert_eq!(plan.claims.len(), 3, "`## Sec. 1b.` heading recognised");
    let states: Vec<&str> = plan.scenarios.iter().map(|s| state(&s.seven_m)).collect();
    assert_eq!(
        states,
        vec!["filled", "filled", "not-applicable", "missing"]
    );
    assert!(
        plan.scenarios[0].tiers.smoke.is_some(),
        "unbolded `Smoke:` label"
    );
    let SevenM::Filled(b) = &plan.scenarios[1].seven_m else {
        panic!("S01 `Sec. 7.M` block should be filled");
    };
    assert_eq!(b.model_kind.as_deref(), Some("membership-table"));
    assert!(b.nemesis.is_none());
}

/// Lines written as table rows that markdown does not read as a table — no delimiter
/// row, or one whose cell count differs from the header's — are kept as broken tables
/// with their section and first line; real tables, prose with a `|` in it and the
/// corpus plan's tables are not.
#[test]
fn tables_markdown_does_not_read_are_recorded() {
    use faultline::plan::{BrokenTable, parse_plan};
    let text = "# Test Plan: t\n\n\
                ## 1b. Claims\n\n\
                | ID | Claim | Category |\n| C1 | x | safety |\n\n\
                ## 3. Inventory\n\n\
                | Test | Subsystem |\n|---|---|---|\n| a | b |\n\n\
                ## 6b. Requirements\n\n\
                | Requirement | Version floor |\n|---|---|\n| tc | - |\n\n\
                Pipe the log through `grep x | wc -l` | then count.\n";
    let plan = parse_plan("t.md", text);
    assert_eq!(
        plan.broken_tables,
        vec![
            BrokenTable {
                line: 5,
                section: "1b".into(),
                rows: 2
            },
            BrokenTable {
                line: 10,
                section: "3".into(),
                rows: 3
            },
        ]
    );
    assert!(plan.claims.is_empty());
    assert_eq!(plan.requirements.len(), 1);
    if let Some(corpus) = corpus() {
        assert!(corpus.broken_tables.is_empty());
    }
}
