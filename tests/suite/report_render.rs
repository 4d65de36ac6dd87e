//! The session log, findings, report.md and verdicts.json rendered from a hand-built
//! session over the demo plan: §7 sections in order, every hypothesis covered, table
//! cells that cannot break rows, and a report that is printed whole when it cannot
//! be written.

use crate::common;

use faultline::plan::{Field, Plan};
use faultline::report;
use faultline::session::dir::Revision;
use faultline::session::journal::{Record, Scope};
use faultline::session::outcome::{
    Finding, LandingEvidence, OracleEvidence, Phase, RunOutcome, ScenarioOutcome, SeedRun,
    SessionOutcome,
};
use faultline::verdict::{
    AuditItem, AuditSource, AuditStatus, Decision, ReasonStep, SessionVerdict, Tier, Verdict,
};
use serde_json::json;

/// The §7 section headings, in the order the report must show them.
const SECTIONS: [&str; 10] = [
    "## Summary",
    "## Scenario results",
    "## Findings",
    "## Coverage summary",
    "## Surface coverage",
    "## Release-budget disclosures",
    "## Adequacy vs the plan's §7b",
    "## Confidence delta vs §7d",
    "## Green-but-broken and weak-oracle results",
    "## Session verdict",
];

fn step(question: &str, answer: &str, cites: &[u64]) -> ReasonStep {
    ReasonStep {
        question: question.to_string(),
        answer: answer.to_string(),
        cites: cites.to_vec(),
    }
}

fn audit(id: &str, status: AuditStatus, source: AuditSource, evidence: &str) -> AuditItem {
    AuditItem {
        id: id.to_string(),
        status,
        source,
        evidence: evidence.to_string(),
        cites: vec![7],
    }
}

fn seed(seed: u64, fault: Option<&str>, landed: bool, anomalies: u64) -> SeedRun {
    SeedRun {
        seed,
        landing: fault
            .map(|f| LandingEvidence {
                fault: f.to_string(),
                injected: true,
                injector_side: true,
                victim_side: landed,
                declared: landed,
                healed: true,
                detail: format!("{f} seen by faultline"),
                cites: vec![5, 6],
            })
            .into_iter()
            .collect(),
        oracle: Some(OracleEvidence {
            checker: "no-lost-ack".to_string(),
            ops_checked: 150,
            ops_produced: 150,
            anomalies,
            evidence: format!("{anomalies} acked writes missing on n2"),
            cites: vec![9],
            listed: Vec::new(),
        }),
        env_missing: None,
        expired_step: None,
        services_ended: Vec::new(),
    }
}

fn run(id: &str, verdict: Verdict, tier: Option<Tier>, reasons: Vec<ReasonStep>) -> RunOutcome {
    RunOutcome {
        id: id.to_string(),
        decision: Some(Decision {
            verdict,
            tier_met: tier,
            reasons,
        }),
        seeds: Vec::new(),
        rerun: None,
        audits: Vec::new(),
        artifacts: Vec::new(),
        reduction: None,
    }
}

fn scenario(id: &str, name: &str, runs: Vec<RunOutcome>) -> ScenarioOutcome {
    let decision = runs.first().and_then(|r| r.decision.clone());
    ScenarioOutcome {
        id: id.to_string(),
        name: name.to_string(),
        phase: Phase::Done,
        verdict: decision.as_ref().map(|d| d.verdict),
        tier_met: decision.as_ref().and_then(|d| d.tier_met),
        reasons: decision.map(|d| d.reasons).unwrap_or_default(),
        runs,
        finding: None,
        degraded: None,
        toolbox_used: Vec::new(),
    }
}

fn d1() -> ScenarioOutcome {
    let mut r = run(
        "D1",
        Verdict::PassSmoke,
        Some(Tier::Smoke),
        vec![step("did the checker find anomalies?", "no", &[9])],
    );
    r.seeds = vec![seed(1, None, false, 0)];
    r.audits = vec![audit(
        "gbb-1-workload-rate",
        AuditStatus::Passed,
        AuditSource::Measured,
        "rate 50 ops/s | floor 10\nover 3 s",
    )];
    r.artifacts = vec!["artifacts/D1/history.jsonl".to_string()];
    scenario("D1", "acked_writes_visible_without_faults", vec![r])
}

fn d2() -> ScenarioOutcome {
    let mut r = run(
        "D2",
        Verdict::PassHardening,
        Some(Tier::Hardening),
        vec![
            step("did the fault land?", "yes: every seed", &[5, 6]),
            step("did the checker find anomalies?", "no", &[9]),
            step("how many seeds agree?", "3 seeds agree", &[9, 12, 15]),
        ],
    );
    r.seeds = (1..=3)
        .map(|s| seed(s, Some("SIGSTOP n3"), true, 0))
        .collect();
    r.audits = vec![
        audit(
            "gbb-3-landing",
            AuditStatus::Passed,
            AuditSource::Measured,
            "injector and victim side seen",
        ),
        audit(
            "weak-seeds",
            AuditStatus::Passed,
            AuditSource::Measured,
            "3 distinct seeds",
        ),
        audit(
            "gbb-7-clock",
            AuditStatus::Passed,
            AuditSource::Declared,
            "operator: NTP disabled on the host",
        ),
    ];
    scenario("D2", "paused_follower_resyncs_without_loss", vec![r])
}

fn d3() -> ScenarioOutcome {
    let mut r = run(
        "D3",
        Verdict::FailReproducible,
        Some(Tier::Smoke),
        vec![
            step(
                "did the checker find anomalies?",
                "yes: 4 acked writes lost",
                &[9],
            ),
            step("did a same-seed re-run reproduce it?", "yes", &[21]),
        ],
    );
    r.seeds = vec![seed(7, Some("SIGKILL n1"), true, 4)];
    r.rerun = Some(Box::new(seed(7, Some("SIGKILL n1"), true, 4)));
    let mut s = scenario("D3", "primary_kill_loses_no_acked_write", vec![r]);
    s.finding = Some(Box::new(Finding {
        id: "F1".to_string(),
        scenario: "D3".to_string(),
        hypothesis: vec!["H1".to_string()],
        what_happened: "4 writes acked by n1 were absent from n2 after the kill.".to_string(),
        reproducer: "faultline run examples/demo/plan.md --only D3 --seed 7".to_string(),
        reproduced: true,
        blame: "unknown — pending re-run on alternative harness/host".to_string(),
        classified_by: "alice (approver, uid 1001) (attached)".to_string(),
        bug_type: "crash-recovery".to_string(),
        tags: "replication, durability".to_string(),
        severity: "P0".to_string(),
        root_cause: "the primary acks before a follower has the write".to_string(),
        evidence: vec!["journal #9: 4 anomalies".to_string()],
        next_action: "make the primary wait for one follower before acking".to_string(),
        reduction: Some(
            "reduced from 2 events to 1 over 2 re-runs (seed 1; kept: kill-primary)".to_string(),
        ),
        anomalies: vec![
            "acknowledged write missing from the final state: op 7-12 (process 0) write k7-12 \u{2190} \"v12\" \u{2192} \"ok\", ok, invoked +1.84 s, outside every fault window".to_string(),
        ],
        anomalies_total: 4,
    }));
    s
}

fn d4() -> ScenarioOutcome {
    let mut r = run(
        "D4",
        Verdict::InconclusiveFaultNotProven,
        None,
        vec![
            step("was a fault planned?", "yes", &[]),
            step(
                "did the declared landing signal appear in the fault window?",
                "no: the primary never logged `replication to … timed out`",
                &[5, 6],
            ),
        ],
    );
    r.seeds = vec![seed(1, Some("SIGSTOP n4"), false, 0)];
    scenario("D4", "paused_replica_is_noticed", vec![r])
}

fn d5() -> ScenarioOutcome {
    let mut api = run(
        "D5/api",
        Verdict::PassSmoke,
        Some(Tier::Smoke),
        vec![step("did the checker find anomalies?", "no", &[30])],
    );
    api.seeds = vec![seed(1, None, false, 0)];
    let admin = run(
        "D5/admin",
        Verdict::NotRun,
        None,
        vec![step("was the arm reached?", "no: no run spec binding", &[])],
    );
    let mut s = scenario("D5", "every_surface_reports_acked_writes", vec![api, admin]);
    s.verdict = Some(Verdict::PartialSurface);
    s.tier_met = None;
    s.reasons = vec![step(
        "do all arms agree?",
        "no: D5/admin NOT-RUN, so PARTIAL-surface",
        &[30],
    )];
    s
}

fn outcome(scenarios: Vec<ScenarioOutcome>, verdict: SessionVerdict) -> SessionOutcome {
    SessionOutcome {
        plan_path: "examples/demo/plan.md".to_string(),
        plan_slug: "demo-kv-replication".to_string(),
        sut_dir: "examples/demo".to_string(),
        session_dir: "test-sessions/demo-kv-replication/20261201T101500Z".to_string(),
        revision: Some(Revision {
            commit: "0123456789abcdef0123456789abcdef01234567".to_string(),
            dirty: true,
        }),
        operator: "--yes".to_string(),
        tier: Tier::Hardening,
        started: "2026-12-01T10:15:00Z".to_string(),
        finished: Some("2026-12-01T10:17:30Z".to_string()),
        scenarios,
        verdict: Some(verdict),
        interrupted: None,
        toolbox: Vec::new(),
        capabilities: vec![faultline::capability::MatrixRow {
            requirement: "binary:demo-skewd (a clock-skew daemon no package provides)".into(),
            capability: Some("binary:demo-skewd".into()),
            present: Some(false),
            version: None,
            source: "probe".into(),
            used_by: vec!["D7".into()],
            note: "`demo-skewd` not found on PATH".into(),
        }],
    }
}

pub(crate) fn full_outcome() -> SessionOutcome {
    outcome(vec![d1(), d2(), d3(), d4(), d5()], SessionVerdict::Fail)
}

fn record(
    seq: u64,
    scope: (Option<&str>, Option<&str>),
    kind: &str,
    data: serde_json::Value,
) -> Record {
    Record {
        seq,
        ts: format!("2026-12-01T10:15:{seq:02}.000Z"),
        scope: Scope {
            scenario: scope.0.map(str::to_string),
            arm: scope.1.map(str::to_string),
        },
        event: faultline::session::event::Event::from_parts(kind.to_string(), data),
    }
}

fn journal() -> Vec<Record> {
    vec![
        record(
            1,
            (None, None),
            "session-started",
            json!({"started_by": "--yes"}),
        ),
        record(
            2,
            (Some("D1"), None),
            "precondition",
            json!({"name": "cluster up and healthy", "ok": true, "cites": [1]}),
        ),
        record(
            3,
            (Some("D1"), None),
            "command-output",
            json!({"line": "a | b\nsecond line"}),
        ),
        record(
            4,
            (Some("D5"), Some("D5/api")),
            "fault-injected",
            json!({"fault": "pause-n3", "pid": 42}),
        ),
        record(5, (None, None), "session-ended", json!("FAIL")),
    ]
}

/// Every markdown table keeps one column count on every row (unescaped `|` only).
fn assert_tables_intact(text: &str) {
    let pipes = |line: &str| {
        let mut count = 0;
        let mut prev = ' ';
        for c in line.chars() {
            if c == '|' && prev != '\\' {
                count += 1;
            }
            prev = c;
        }
        count
    };
    let mut expected = None;
    for line in text.lines() {
        if line.starts_with('|') {
            let n = pipes(line);
            let want = *expected.get_or_insert(n);
            assert_eq!(n, want, "table row breaks its columns: {line}");
            assert!(line.ends_with('|'), "table row cut short: {line}");
        } else {
            expected = None;
        }
    }
}

#[test]
fn report_sections_come_in_method_order_headline_first() {
    let plan = common::demo_plan();
    let text = report::report(&plan, &full_outcome(), &[], &report::FigureFiles::default())
        .expect("render");
    let mut at = 0;
    for heading in SECTIONS {
        let found = text[at..]
            .find(&format!("\n{heading}\n"))
            .unwrap_or_else(|| panic!("`{heading}` missing or out of order:\n{text}"));
        at += found + 1;
    }
    let headline = text.find("**Result: FAIL.**").expect("FAIL headline");
    assert!(headline < text.find("## Summary").expect("summary"));
    assert!(
        text.contains(
            "a reproducer exists: `faultline run examples/demo/plan.md --only D3 --seed 7`"
        )
    );
    assert!(text.contains("### F1: D3 primary_kill_loses_no_acked_write"));
    assert!(
        text.contains("INCONCLUSIVE-fault-not-proven — D4: the fault's landing was not proven (the primary never logged"),
        "inconclusive verdicts carry a one-line reason:\n{text}"
    );
    assert!(text.contains("**Confidence: less**"));
    assert!(text.contains("| D5 | D5/admin | reads back through the admin dump. | no | NOT-RUN | admin arm has no run binding in the run spec |"));
    assert!(text.contains("**FAIL** (exit code 1)."));
}

#[test]
fn coverage_summary_names_every_hypothesis() {
    let plan = common::demo_plan();
    let text = report::report(&plan, &full_outcome(), &[], &report::FigureFiles::default())
        .expect("render");
    let coverage = &text[text.find("## Coverage summary").expect("coverage")
        ..text.find("## Surface coverage").expect("surface")];
    for h in &plan.hypotheses {
        assert!(
            coverage.contains(&format!("| {} |", h.id)),
            "{} missing:\n{coverage}",
            h.id
        );
    }
    assert_eq!(plan.hypotheses.len(), 5);
    assert!(
        coverage.contains("| D1: PASS-smoke — D1: passed"),
        "{coverage}"
    );
    assert!(
        coverage.contains("; D3: FAIL-reproducible — D3 failed"),
        "{coverage}"
    );
}

#[test]
fn an_unexercised_hypothesis_says_why() {
    let plan = common::demo_plan();
    let session = outcome(vec![d1(), d3(), d5()], SessionVerdict::Fail);
    let text =
        report::report(&plan, &session, &[], &report::FigureFiles::default()).expect("render");
    assert!(
        text.contains("| H2 | Resync gap | D2: not in this session; D4: not in this session | no: D2: not in this session; D4: not in this session |"),
        "{text}"
    );
}

#[test]
fn empty_sections_say_so_for_a_plan_without_arms_or_failures() {
    let mut plan: Plan = common::demo_plan();
    plan.scenarios.retain(|s| s.arms.is_empty());
    for s in &mut plan.scenarios {
        s.tiers.release = Some(Field {
            text: "10 seeds, 10 min each".to_string(),
            line: s.line,
        });
    }
    let mut d4 = d2();
    d4.id = "D4".to_string();
    for r in &mut d4.runs {
        r.id = "D4".to_string();
    }
    let session = outcome(vec![d1(), d2(), d4], SessionVerdict::Done);
    let text =
        report::report(&plan, &session, &[], &report::FigureFiles::default()).expect("render");
    assert!(
        text.contains("\nNo findings: no scenario failed.\n"),
        "{text}"
    );
    assert!(text.contains("\nNo boundary or fairness scenarios in this plan\n"));
    assert!(text.contains("\nAll scenarios declared a concrete release budget\n"));
    assert!(text.contains("**Result: DONE.** Every scenario passed."));
    assert!(text.contains("**Confidence: less**"), "D3 never ran");
}

#[test]
fn release_budget_disclosures_copy_the_plan_verbatim() {
    let plan = common::demo_plan();
    let text = report::report(&plan, &full_outcome(), &[], &report::FigureFiles::default())
        .expect("render");
    let section = &text[text.find("## Release-budget disclosures").expect("section")
        ..text.find("## Adequacy").expect("next")];
    for s in &plan.scenarios {
        let release = s
            .tiers
            .release
            .as_ref()
            .expect("demo declares Release budget");
        assert!(
            section.contains(&release.text),
            "{} not verbatim:\n{section}",
            s.id
        );
    }
    assert!(section.contains(
        "not provided — smoke scenario only. Revisit when: the store grows a second write path."
    ));
}

#[test]
fn table_cells_with_pipes_and_newlines_do_not_break_rows() {
    let plan = common::demo_plan();
    let session = full_outcome();
    let report_text =
        report::report(&plan, &session, &[], &report::FigureFiles::default()).expect("render");
    assert_tables_intact(&report_text);
    assert!(report_text.contains("rate 50 ops/s \\| floor 10 over 3 s"));
    let log = report::session_log(&plan, &session, &journal()).expect("render");
    assert_tables_intact(&log);
    assert!(log.contains("line=a \\| b second line"), "{log}");
    for s in &session.scenarios {
        assert_tables_intact(&report::finding(&plan, &session, s).expect("render"));
    }
}

#[test]
fn session_log_sections_and_placeholders() {
    let plan = common::demo_plan();
    let mut session = full_outcome();
    let log = report::session_log(&plan, &session, &journal()).expect("render");
    let order = [
        "## Toolbox discovered",
        "## Environment capability matrix",
        "## Preconditions check",
        "## Scenario timeline",
        "## Scenario verdicts",
        "## Artifacts",
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|h| log.find(h).unwrap_or_else(|| panic!("{h} missing")))
        .collect();
    assert!(positions.is_sorted(), "{log}");
    assert!(log.contains("No toolbox discovery ran in this session."));
    // The matrix comes from the session's capability rows.
    assert!(log.contains("| binary:demo-skewd (a clock-skew daemon no package provides) | binary:demo-skewd | no |"), "{log}");
    let mut unprobed = full_outcome();
    unprobed.capabilities.clear();
    let bare = report::session_log(&plan, &unprobed, &[]).expect("render");
    assert!(bare.contains("| faultline binary (ships the demo store) | — | all | not probed"));
    assert!(log.contains("0123456789abcdef0123456789abcdef01234567 (dirty)"));
    assert!(log.contains("| D5/api | smoke | PASS-smoke |"));
    assert!(log.contains("| D5 (all arms) | — | PARTIAL-surface |"));
    session.revision = None;
    let log = report::session_log(&plan, &session, &[]).expect("render");
    assert!(log.contains("**Commit under test:** not a git work tree"));
    assert!(log.contains("No preconditions were checked in this session."));
}

#[test]
fn findings_are_readable_at_any_phase() {
    let plan = common::demo_plan();
    let session = full_outcome();
    let mut pending = d2();
    pending.phase = Phase::Pending;
    pending.verdict = None;
    pending.runs.clear();
    let text = report::finding(&plan, &session, &pending).expect("render");
    assert!(text.contains("pending"));
    assert!(text.contains("**Verdict:** not decided yet"));
    let mut running = d2();
    running.phase = Phase::Workload;
    running.verdict = None;
    running.runs[0].decision = None;
    let text = report::finding(&plan, &session, &running).expect("render");
    assert!(text.contains("running (now at: workload)"));
    assert!(text.contains("Not decided yet."));
    let text = report::finding(&plan, &session, &session.scenarios[2]).expect("render");
    assert!(text.contains(
        "C1 (A write acknowledged by the primary is present on every in-sync follower.)"
    ));
    assert!(
        text.contains("1. did the checker find anomalies? — yes: 4 acked writes lost (journal #9)")
    );
    assert!(text.contains("- **F1** (D3)"));
}

#[test]
fn verdicts_json_round_trips_verdicts_and_cites() {
    let session = full_outcome();
    let value = serde_json::to_value(report::verdicts_json(&session)).expect("json");
    assert_eq!(value["session_verdict"], "FAIL");
    assert_eq!(value["tier"], "hardening");
    let scenarios = value["scenarios"].as_array().expect("scenarios");
    let verdicts: Vec<&str> = scenarios
        .iter()
        .map(|s| s["verdict"].as_str().expect("verdict"))
        .collect();
    assert_eq!(
        verdicts,
        [
            "PASS-smoke",
            "PASS-hardening",
            "FAIL-reproducible",
            "INCONCLUSIVE-fault-not-proven",
            "PARTIAL-surface"
        ]
    );
    let d5_runs = scenarios[4]["runs"].as_array().expect("runs");
    assert_eq!(d5_runs[0]["id"], "D5/api");
    assert_eq!(d5_runs[1]["verdict"], "NOT-RUN");
    for v in Verdict::ALL {
        let back: Verdict = serde_json::from_value(json!(v.as_str())).expect("parse");
        assert_eq!(back, v);
    }
    let d3 = &scenarios[2]["runs"][0];
    assert_eq!(d3["reasons"][1]["cites"], json!([21]));
    assert_eq!(d3["audits"], json!([]));
    assert_eq!(scenarios[1]["runs"][0]["audits"][2]["source"], "declared");
    assert_eq!(scenarios[1]["runs"][0]["oracle"]["ops_checked"], 450);
    assert_eq!(
        scenarios[1]["runs"][0]["seeds"].as_array().map(Vec::len),
        Some(3)
    );
}

#[test]
fn an_unwritable_report_is_printed_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").expect("write");
    let text = report::report(
        &common::demo_plan(),
        &full_outcome(),
        &[],
        &report::FigureFiles::default(),
    )
    .expect("render");
    let target = file.join("findings/report.md");
    let mut fallback = Vec::new();
    let written = report::write_report(&target, &text, &mut fallback).expect("fallback io");
    assert!(!written);
    let printed = String::from_utf8(fallback).expect("utf8");
    let first = printed.lines().next().expect("a first line");
    assert!(first.starts_with(&format!(
        "report could not be written to {}: ",
        target.display()
    )));
    assert!(first.ends_with("; here it is in full:"));
    assert!(printed.ends_with(&text));

    let good = dir.path().join("out/findings/report.md");
    let mut unused = Vec::new();
    assert!(report::write_report(&good, &text, &mut unused).expect("write"));
    assert_eq!(std::fs::read_to_string(good).expect("read"), text);
    assert!(unused.is_empty());
}

#[test]
fn snapshots() {
    let plan = common::demo_plan();
    let session = full_outcome();
    insta::assert_snapshot!(
        "report",
        report::report(&plan, &session, &[], &report::FigureFiles::default()).expect("render")
    );
    insta::assert_snapshot!(
        "session_log",
        report::session_log(&plan, &session, &journal()).expect("render")
    );
    insta::assert_snapshot!(
        "finding_d3",
        report::finding(&plan, &session, &session.scenarios[2]).expect("render")
    );
}

/// Every verdict carries its reason as a sentence, never the tree's raw answer.
#[test]
fn every_verdict_s_reason_is_said_in_words() {
    let plan = common::demo_plan();
    let text = report::report(&plan, &full_outcome(), &[], &report::FigureFiles::default())
        .expect("render");
    assert!(
        text.contains("NOT-RUN — admin arm has no run binding in the run spec"),
        "{text}"
    );
    assert!(!text.contains(": no: "), "a raw tree answer: {text}");
    let finding = report::finding(&plan, &full_outcome(), &d5()).expect("render");
    assert!(
        finding.contains("**Verdict:** NOT-RUN — admin arm has no run binding in the run spec"),
        "{finding}"
    );
}

/// The counts are said once: the checker's evidence adds only what they do not say.
#[test]
fn oracle_evidence_is_not_said_twice() {
    let plan = common::demo_plan();
    let mut session = full_outcome();
    let seed = &mut session.scenarios[0].runs[0].seeds[0];
    let oracle = seed.oracle.as_mut().expect("D1 has an oracle");
    oracle.ops_checked = 199;
    oracle.ops_produced = 199;
    oracle.anomalies = 26;
    oracle.evidence = "checked 199 ops, 26 anomalies; p99 4.10 ms".into();
    let text =
        report::report(&plan, &session, &[], &report::FigureFiles::default()).expect("render");
    assert!(
        text.contains("seed 1: no-lost-ack checked 199 of 199 ops, 26 anomalies; p99 4.10 ms (#9)"),
        "{text}"
    );
    assert_eq!(text.matches("26 anomalies").count(), 1, "{text}");
}

/// "interrupted by" is said once, whether the outcome's text says it or not.
#[test]
fn an_interruption_is_said_once() {
    let plan = common::demo_plan();
    for (stored, said) in [
        (
            "interrupted by the operator",
            "The session was interrupted by the operator (faults",
        ),
        ("SIGINT", "The session was interrupted by SIGINT (faults"),
    ] {
        let mut session = full_outcome();
        session.interrupted = Some(stored.into());
        let text =
            report::report(&plan, &session, &[], &report::FigureFiles::default()).expect("render");
        assert!(text.contains(said), "{text}");
        assert!(!text.contains("interrupted by interrupted"), "{text}");
    }
}

/// Nodes reached over SSH: the session log and the report list each with its address,
/// host key and the logs of what ran there; an unreachable one says why.
#[test]
fn nodes_are_listed_with_their_host_keys_and_logs() {
    let plan = common::demo_plan();
    let session = full_outcome();
    let logs = format!("{}/logs/D1/seed-1", session.session_dir);
    let journal = vec![
        record(
            1,
            (None, None),
            "node-connected",
            json!({"node": "n1", "spec": {"ssh": "root@10.88.0.11"}, "hostname": "10.88.0.11",
                   "port": 22, "user": "root", "fingerprints": ["ED25519 SHA256:abc"]}),
        ),
        record(
            2,
            (None, None),
            "capability",
            json!({"need": "node n3: ssh", "capability": "node:n3/ssh", "present": false,
                   "command": "ssh", "saw": "Connection timed out", "used_by": ["D2"]}),
        ),
        record(
            3,
            (Some("D1"), None),
            "command-started",
            json!({"name": "n1", "command": "node", "pgid": 7, "node": "n1",
                   "log": format!("{logs}/n1.stderr.log")}),
        ),
    ];
    let log = report::session_log(&plan, &session, &journal).expect("render");
    assert!(log.contains("## Nodes"), "{log}");
    assert!(log.contains("| n1 | root@10.88.0.11:22 | ED25519 SHA256:abc | [logs/D1/seed-1/n1.stdout.log](logs/D1/seed-1/n1.stdout.log), [logs/D1/seed-1/n1.stderr.log](logs/D1/seed-1/n1.stderr.log) |"), "{log}");
    assert!(
        log.contains("| n3 | unreachable: Connection timed out | — | none |"),
        "{log}"
    );
    let text =
        report::report(&plan, &session, &journal, &report::FigureFiles::default()).expect("render");
    assert!(text.contains("(../logs/D1/seed-1/n1.stderr.log)"), "{text}");
    assert!(text.contains("unreachable: Connection timed out"), "{text}");
    let local =
        report::report(&plan, &session, &[], &report::FigureFiles::default()).expect("render");
    assert!(!local.contains("### Nodes"), "{local}");
}

/// An `operator-note` record as the session server journals it (session-wide).
fn note(seq: u64, text: &str, who: serde_json::Value) -> Record {
    record(
        seq,
        (None, None),
        "operator-note",
        json!({"text": text, "who": who, "client": "json"}),
    )
}

/// Notes are listed under "Notes" in journal order, each with its author (the
/// kernel's uid and user; a `--as` label only as asserted), its time and the run it
/// was written during; its text keeps its lines and never becomes markup, in
/// report.md or in report.html. A journal without notes (every older one) shows no
/// such section.
#[test]
fn notes_are_listed_in_order_with_their_authors_and_never_become_markup() {
    let plan = common::demo_plan();
    let outcome = full_outcome();
    let alice = json!({"uid": 1001, "user": "alice", "role": "owner"});
    let bob = json!({"uid": 1002, "user": "bob", "role": "approver", "label": "*bob* [x](y)"});
    let hostile = "first line\n\n# not a heading\n<script>alert(1)</script> [x](https://example.com) \
                   ![i](https://example.com/i.png)\n```\nstill the note\n| a | b |\n\u{1b}[31mred\u{1b}[0m";
    let records = vec![
        record(
            1,
            (None, None),
            "session-started",
            json!({"started_by": "--yes"}),
        ),
        note(2, "before anything ran", alice.clone()),
        record(
            3,
            (Some("D1"), None),
            "iteration-started",
            json!({"seed": 1, "label": "seed-1", "duration_ms": 3000}),
        ),
        note(4, hostile, bob),
        record(
            5,
            (Some("D1"), None),
            "verdict",
            json!({"id": "D1", "verdict": "PASS-smoke"}),
        ),
        note(6, "while D1's verdict stood", alice.clone()),
        record(
            7,
            (None, None),
            "session-verdict",
            json!({"verdict": "FAIL"}),
        ),
        note(8, "after the verdict", alice),
    ];
    let view = faultline::session::view::View::of(&records);
    let during: Vec<Option<String>> = view.notes.iter().map(|n| n.during()).collect();
    assert_eq!(
        during,
        [None, Some("D1 (seed-1)".into()), Some("D1".into()), None]
    );
    assert_eq!(view.notes[1].run.as_deref(), Some("D1"));
    assert_eq!(view.notes[1].iteration_ms, Some(1000));
    assert_eq!(view.notes[1].who.uid, 1002);

    let text =
        report::report(&plan, &outcome, &records, &report::FigureFiles::default()).expect("render");
    let notes = &text[text.find("\n## Notes\n").expect("a Notes section")
        ..text.find("\n## Figures\n").expect("figures")];
    assert!(
        notes.contains("4 notes the operators left on the run, in the order written"),
        "{notes}"
    );
    let heads: Vec<&str> = notes.lines().filter(|l| l.starts_with("**Note ")).collect();
    assert_eq!(
        heads,
        [
            "**Note 1** by alice (uid 1001, owner), 2026-12-01T10:15:02.000Z, outside any scenario's run (journal record #2):",
            "**Note 2** by \\*bob\\* \\[x\\](y) (asserted by key; uid 1002 bob, approver), 2026-12-01T10:15:04.000Z, during D1 (seed-1) (journal record #4):",
            "**Note 3** by alice (uid 1001, owner), 2026-12-01T10:15:06.000Z, during D1 (journal record #6):",
            "**Note 4** by alice (uid 1001, owner), 2026-12-01T10:15:08.000Z, outside any scenario's run (journal record #8):",
        ],
        "{notes}"
    );
    // The hostile note whole, in a fence longer than its own backticks, lines kept,
    // its escape sequences gone.
    assert!(
        notes.contains(
            "\n````\nfirst line\n\n# not a heading\n<script>alert(1)</script> [x](https://example.com) \
             ![i](https://example.com/i.png)\n```\nstill the note\n| a | b |\nred\n````\n"
        ),
        "{notes}"
    );
    assert!(!text.contains('\u{1b}'));

    let html = report::html::render(&text, std::path::Path::new("."));
    assert!(!html.contains("<script>"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(!html.contains("not a heading</h1>"), "{html}");
    assert!(!html.contains("<strong>bob</strong>"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("href=\"https://example.com\""), "{html}");
    assert!(
        html.contains("still the note\n| a | b |\nred\n</code></pre>"),
        "{html}"
    );

    let without = report::report(&plan, &outcome, &journal(), &report::FigureFiles::default())
        .expect("render");
    assert!(!without.contains("## Notes"), "{without}");
}

/// The session log written from the journal file as it is read (what a session
/// writes) is, byte for byte, the log rendered from the same records held in memory,
/// with every section's branches taken: toolbox and capabilities from the outcome or
/// from the journal, an interruption, nodes, an unfinished session, no revision.
#[test]
fn the_session_log_streamed_from_the_journal_file_is_the_one_rendered_in_memory() {
    let plan = common::demo_plan();
    let mut records = journal();
    let more = [
        (
            "toolbox-item",
            json!({"path": "Makefile", "line": 3, "kind": "make-target", "role": "cluster-up",
                   "name": "up", "evidence": "up: | docker compose up"}),
        ),
        (
            "capability",
            json!({"need": "node n3: ssh", "capability": "node:n3/ssh", "present": false,
                   "command": "ssh", "saw": "Connection timed out", "used_by": ["D2"]}),
        ),
        (
            "node-connected",
            json!({"node": "n1", "host": "10.88.0.11", "port": 22, "user": "root",
                   "fingerprints": ["ED25519 SHA256:abc"]}),
        ),
        ("outcome-scenario", json!({"outcome": null})),
    ];
    for (kind, data) in more {
        let seq = records.len() as u64 + 1;
        records.push(record(seq, (Some("D1"), None), kind, data));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    let mut text = String::new();
    for r in &records {
        text.push_str(&serde_json::to_string(r).expect("record"));
        text.push('\n');
    }
    std::fs::write(&path, text).expect("journal");
    let pass = report::journal_pass::Pass::read(&path).expect("pass");
    assert_eq!(
        pass.timeline,
        records.len() - 1,
        "outcome records are not shown"
    );

    let mut toolbox = full_outcome();
    toolbox.toolbox = vec![
        serde_json::from_value(json!({"path": "Makefile", "line": 3, "kind": "make-target",
            "role": "cluster-up", "name": "up | down", "evidence": "up: docker compose up"}))
        .expect("item"),
    ];
    toolbox.scenarios[0].toolbox_used = vec!["make up".into()];
    toolbox.interrupted = Some("interrupted by the operator".into());
    let mut bare = full_outcome();
    bare.capabilities.clear();
    bare.finished = None;
    bare.revision = None;
    for session in [full_outcome(), toolbox, bare] {
        for (journal, pass) in [
            (&records[..], &pass),
            (&[][..], &report::journal_pass::Pass::of(&[])),
        ] {
            let mut streamed = Vec::new();
            report::write_session_log(&plan, &session, pass, &mut streamed).expect("streamed");
            let streamed = String::from_utf8(streamed).expect("utf-8");
            // Pass::of has no file: its timeline is empty, as is the journal then.
            let held = report::session_log(&plan, &session, journal).expect("render");
            assert_eq!(streamed, held);
        }
    }
}
