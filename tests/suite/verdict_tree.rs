//! The decision tree against an independent reference, over the full
//! cartesian product of evidence inputs, plus property tests.

use faultline::verdict::{
    AuditItem, AuditSource, AuditStatus, CheckerRun, Evidence, Tier, Verdict, decide,
};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Chk {
    NotRun,
    CleanFull,
    CleanPartial,
    Anomalies,
    MissingFields,
    Unknown,
    Mismatch,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Gbb {
    AllPassed,
    FirstFailed,
    ThirdFailed,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Weak {
    AllPassed,
    OneUnchecked,
    SeedsFailed,
}

#[derive(Debug, Clone, Copy)]
struct Case {
    not_run: bool,
    env: bool,
    chk: Chk,
    rerun: Option<bool>,
    fault_planned: bool,
    landing: bool,
    fault_active: bool,
    tier: Option<Tier>,
    serious: bool,
    seeds: u32,
    gbb: Gbb,
    weak: Weak,
}

fn audit(id: &str, status: AuditStatus) -> AuditItem {
    AuditItem {
        id: id.into(),
        status,
        source: AuditSource::Measured,
        evidence: format!("{id} evidence"),
        cites: vec![],
    }
}

fn evidence(c: &Case) -> Evidence {
    let checker = match c.chk {
        Chk::NotRun => CheckerRun::NotRun,
        Chk::CleanFull => CheckerRun::Judged {
            anomalies: 0,
            ops_checked: 100,
            ops_produced: 100,
        },
        Chk::CleanPartial => CheckerRun::Judged {
            anomalies: 0,
            ops_checked: 60,
            ops_produced: 100,
        },
        Chk::Anomalies => CheckerRun::Judged {
            anomalies: 2,
            ops_checked: 100,
            ops_produced: 100,
        },
        Chk::MissingFields => CheckerRun::MissingFields {
            fields: vec!["fault_epoch".into()],
        },
        Chk::Unknown => CheckerRun::Unknown {
            reason: "out of memory".into(),
        },
        Chk::Mismatch => CheckerRun::Mismatch {
            reason: "queue model, register checker".into(),
        },
    };
    let gbb1 = if c.gbb == Gbb::FirstFailed {
        AuditStatus::Failed
    } else {
        AuditStatus::Passed
    };
    let gbb3 = if c.gbb == Gbb::ThirdFailed {
        AuditStatus::Failed
    } else {
        AuditStatus::Passed
    };
    let mut weak = vec![audit("weak-not-final-state-only", AuditStatus::Passed)];
    match c.weak {
        Weak::AllPassed => weak.push(audit("weak-seeds", AuditStatus::Passed)),
        Weak::OneUnchecked => weak.push(audit("weak-topologies", AuditStatus::Unchecked)),
        Weak::SeedsFailed => weak.push(audit("weak-seeds", AuditStatus::Failed)),
    }
    let mut cites = BTreeMap::new();
    cites.insert("checker".to_string(), vec![7]);
    Evidence {
        not_run: c.not_run.then(|| "excluded by --only".to_string()),
        env_missing: c.env.then(|| "tc missing".to_string()),
        rerun_reproduced: c.rerun,
        fault_planned: c.fault_planned,
        landing_proven: c.landing,
        checker,
        fault_active: c.fault_active,
        tier_met: c.tier,
        serious: c.serious,
        seeds_agreeing: c.seeds,
        green_but_broken: vec![
            audit("gbb-1-workload-rate", gbb1),
            audit("gbb-2-oracle-consumed", AuditStatus::Passed),
            audit("gbb-3-fault-injected", gbb3),
        ],
        weak_oracle: weak,
        expired_step: None,
        services_ended: Vec::new(),
        never_injected: Vec::new(),
        cites,
    }
}

/// Reference written straight from method §3/§4 and policy §8.
fn reference(c: &Case) -> Verdict {
    if c.not_run {
        return Verdict::NotRun;
    }
    if c.env {
        return Verdict::InconclusiveEnv;
    }
    if c.chk == Chk::Anomalies {
        return if c.rerun == Some(true) {
            Verdict::FailReproducible
        } else {
            Verdict::FailNondeterministic
        };
    }
    if c.fault_planned && !c.landing {
        return Verdict::InconclusiveFaultNotProven;
    }
    match c.chk {
        Chk::NotRun => return Verdict::PartialSurface,
        Chk::MissingFields | Chk::Unknown | Chk::Mismatch => {
            return Verdict::InconclusiveOracleTooWeak;
        }
        Chk::CleanPartial => return Verdict::PartialModel,
        Chk::CleanFull | Chk::Anomalies => {}
    }
    let mut hardening = c.fault_active;
    match c.gbb {
        Gbb::FirstFailed => return Verdict::PartialSurface,
        Gbb::ThirdFailed => return Verdict::InconclusiveFaultNotProven,
        Gbb::AllPassed => {}
    }
    match c.tier {
        None => return Verdict::PartialSurface,
        Some(Tier::Smoke) => hardening = false,
        Some(_) => {}
    }
    match c.weak {
        Weak::OneUnchecked => return Verdict::PartialSurface,
        Weak::SeedsFailed if hardening && c.serious => return Verdict::PartialModel,
        _ => {}
    }
    if hardening && c.seeds < 3 {
        return Verdict::PartialModel;
    }
    if hardening {
        Verdict::PassHardening
    } else {
        Verdict::PassSmoke
    }
}

fn all_cases() -> Vec<Case> {
    let b = [false, true];
    let chks = [
        Chk::NotRun,
        Chk::CleanFull,
        Chk::CleanPartial,
        Chk::Anomalies,
        Chk::MissingFields,
        Chk::Unknown,
        Chk::Mismatch,
    ];
    let reruns = [None, Some(true), Some(false)];
    let tiers = [
        None,
        Some(Tier::Smoke),
        Some(Tier::Hardening),
        Some(Tier::Release),
    ];
    let gbbs = [Gbb::AllPassed, Gbb::FirstFailed, Gbb::ThirdFailed];
    let weaks = [Weak::AllPassed, Weak::OneUnchecked, Weak::SeedsFailed];
    let mut out = Vec::new();
    for not_run in b {
        for env in b {
            for chk in chks {
                for rerun in reruns {
                    for fault_planned in b {
                        for landing in b {
                            for fault_active in b {
                                for tier in tiers {
                                    for serious in b {
                                        for seeds in [1, 3] {
                                            for gbb in gbbs {
                                                for weak in weaks {
                                                    out.push(Case {
                                                        not_run,
                                                        env,
                                                        chk,
                                                        rerun,
                                                        fault_planned,
                                                        landing,
                                                        fault_active,
                                                        tier,
                                                        serious,
                                                        seeds,
                                                        gbb,
                                                        weak,
                                                    });
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

#[test]
fn exhaustive_table_matches_reference() {
    let cases = all_cases();
    assert_eq!(cases.len(), 2 * 2 * 7 * 3 * 2 * 2 * 2 * 4 * 2 * 2 * 3 * 3);
    let mut seen = std::collections::HashSet::new();
    for c in &cases {
        let e = evidence(c);
        let d = decide(&e);
        assert_eq!(
            d.verdict,
            reference(c),
            "case {c:?}\nreasons {:#?}",
            d.reasons
        );
        assert_eq!(d.tier_met, c.tier, "case {c:?}");
        assert!(!d.reasons.is_empty(), "case {c:?}: empty reason chain");
        seen.insert(d.verdict);
    }
    // Every verdict is reachable from the table.
    for v in Verdict::ALL {
        assert!(seen.contains(&v), "{v} never produced");
    }
}

fn clean_hardening() -> Case {
    Case {
        not_run: false,
        env: false,
        chk: Chk::CleanFull,
        rerun: None,
        fault_planned: true,
        landing: true,
        fault_active: true,
        tier: Some(Tier::Release),
        serious: true,
        seeds: 3,
        gbb: Gbb::AllPassed,
        weak: Weak::AllPassed,
    }
}

#[test]
fn release_annotation_and_cites() {
    let d = decide(&evidence(&clean_hardening()));
    assert_eq!(d.verdict, Verdict::PassHardening);
    assert!(d.reasons.iter().any(|r| r.question == "release annotation"));
    let checker = d
        .reasons
        .iter()
        .find(|r| r.question.contains("checker run"))
        .expect("checker question asked");
    assert_eq!(checker.cites, vec![7]);
}

#[test]
fn expired_step_is_named_and_verdict_kept() {
    let mut e = evidence(&clean_hardening());
    e.expired_step = Some("wait-for-recovery".into());
    let d = decide(&e);
    assert_eq!(d.verdict, Verdict::PassHardening);
    assert!(
        d.reasons
            .iter()
            .any(|r| r.answer.contains("wait-for-recovery"))
    );
}

#[test]
fn reasons_name_fields_unchecked_count_and_no_rerun() {
    let mut c = clean_hardening();
    c.chk = Chk::MissingFields;
    let d = decide(&evidence(&c));
    assert!(d.reasons.iter().any(|r| r.answer.contains("fault_epoch")));

    c.chk = Chk::CleanPartial;
    let d = decide(&evidence(&c));
    assert!(d.reasons.iter().any(|r| r.answer.contains("40 of 100")));

    c.chk = Chk::Anomalies;
    let d = decide(&evidence(&c));
    assert_eq!(d.verdict, Verdict::FailNondeterministic);
    assert!(d.reasons.iter().any(|r| r.answer.contains("no re-run")));

    c.chk = Chk::CleanFull;
    c.gbb = Gbb::FirstFailed;
    let d = decide(&evidence(&c));
    assert!(
        d.reasons
            .iter()
            .any(|r| r.answer.contains("gbb-1-workload-rate"))
    );
}

fn arb_status() -> impl Strategy<Value = AuditStatus> {
    prop_oneof![
        Just(AuditStatus::Passed),
        Just(AuditStatus::Failed),
        Just(AuditStatus::NotApplicable),
        Just(AuditStatus::Unchecked),
    ]
}

fn arb_items(prefix: &'static str) -> impl Strategy<Value = Vec<AuditItem>> {
    prop::collection::vec(
        (0u8..12, arb_status()).prop_map(move |(n, s)| {
            let id = if prefix == "weak" && n == 0 {
                "weak-seeds".to_string()
            } else {
                format!("{prefix}-{n}-item")
            };
            audit(&id, s)
        }),
        0..5,
    )
}

fn arb_checker() -> impl Strategy<Value = CheckerRun> {
    prop_oneof![
        Just(CheckerRun::NotRun),
        (0u64..3, 0u64..50, 0u64..50).prop_map(|(a, c, p)| CheckerRun::Judged {
            anomalies: a,
            ops_checked: c,
            ops_produced: p,
        }),
        Just(CheckerRun::MissingFields {
            fields: vec!["node".into()]
        }),
        Just(CheckerRun::Unknown {
            reason: "timeout".into()
        }),
        Just(CheckerRun::Mismatch {
            reason: "model".into()
        }),
    ]
}

fn arb_evidence() -> impl Strategy<Value = Evidence> {
    (
        (
            prop::option::of(Just("x".to_string())),
            prop::option::of(Just("y".to_string())),
            prop::option::of(any::<bool>()),
            any::<bool>(),
            any::<bool>(),
            arb_checker(),
            any::<bool>(),
        ),
        (
            prop::option::of(prop_oneof![
                Just(Tier::Smoke),
                Just(Tier::Hardening),
                Just(Tier::Release)
            ]),
            any::<bool>(),
            0u32..6,
            arb_items("gbb"),
            arb_items("weak"),
            prop::option::of(Just("step".to_string())),
        ),
    )
        .prop_map(
            |(
                (not_run, env_missing, rerun, fault_planned, landing, checker, fault_active),
                (tier_met, serious, seeds, gbb, weak, expired),
            )| Evidence {
                not_run,
                env_missing,
                rerun_reproduced: rerun,
                fault_planned,
                landing_proven: landing,
                checker,
                fault_active,
                tier_met,
                serious,
                seeds_agreeing: seeds,
                green_but_broken: gbb,
                weak_oracle: weak,
                expired_step: expired,
                services_ended: Vec::new(),
                never_injected: Vec::new(),
                cites: BTreeMap::new(),
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn no_unproven_pass(e in arb_evidence()) {
        let v = decide(&e).verdict;
        if v.is_pass() {
            prop_assert!(!e.fault_planned || e.landing_proven, "landing unproven");
            match &e.checker {
                CheckerRun::Judged { anomalies, ops_checked, ops_produced } => {
                    prop_assert_eq!(*anomalies, 0);
                    prop_assert!(*ops_produced > 0 && ops_checked >= ops_produced, "coverage");
                }
                other => prop_assert!(false, "PASS with checker {:?}", other),
            }
            prop_assert!(e.tier_met.is_some(), "no tier met");
            prop_assert!(
                e.weak_oracle.iter().all(|i| i.status != AuditStatus::Unchecked),
                "weak-oracle item unchecked"
            );
            prop_assert!(
                e.green_but_broken
                    .iter()
                    .all(|i| !matches!(i.status, AuditStatus::Failed | AuditStatus::Unchecked)),
                "gbb failed"
            );
            if v == Verdict::PassHardening {
                prop_assert!(e.fault_active && e.seeds_agreeing >= 3);
                prop_assert!(e.tier_met >= Some(Tier::Hardening));
            }
        }
    }

    #[test]
    fn fail_only_with_anomalies(e in arb_evidence()) {
        let v = decide(&e).verdict;
        if v.is_fail() {
            let has_anomalies = matches!(e.checker, CheckerRun::Judged { anomalies, .. } if anomalies > 0);
            prop_assert!(has_anomalies);
            prop_assert!(e.not_run.is_none() && e.env_missing.is_none());
        }
        if v == Verdict::FailReproducible {
            prop_assert_eq!(e.rerun_reproduced, Some(true));
        }
    }

    /// The decision is a function of the evidence's value alone: the same for a batch
    /// decided forwards, backwards, interleaved with other inputs, on other threads,
    /// and after a round trip through JSON (a fresh value, nothing shared).
    #[test]
    fn decide_depends_on_its_evidence_alone(
        batch in prop::collection::vec(arb_evidence(), 2..16),
    ) {
        if let Err(why) = same_everywhere(&batch, decide) {
            prop_assert!(false, "{}", why);
        }
    }
}

/// Decides `batch` with `f` in several orders, threads and copies; the first place
/// two decisions of one evidence differ, if any.
fn same_everywhere<D, F>(batch: &[Evidence], f: F) -> Result<(), String>
where
    D: PartialEq + std::fmt::Debug + Send,
    F: Fn(&Evidence) -> D + Sync,
{
    let forwards: Vec<D> = batch.iter().map(&f).collect();
    let mut backwards: Vec<D> = batch.iter().rev().map(&f).collect();
    backwards.reverse();
    // Each decided right after its neighbour's, then after itself again.
    let interleaved: Vec<D> = batch
        .iter()
        .zip(batch.iter().cycle().skip(1))
        .map(|(e, other)| {
            let _ = f(other);
            let _ = f(e);
            f(e)
        })
        .collect();
    let copied: Vec<D> = batch
        .iter()
        .map(|e| {
            let json = serde_json::to_string(e).map_err(|err| err.to_string())?;
            let fresh: Evidence = serde_json::from_str(&json).map_err(|err| err.to_string())?;
            Ok(f(&fresh))
        })
        .collect::<Result<_, String>>()?;
    let threaded: Vec<D> = std::thread::scope(|scope| {
        let handles: Vec<_> = batch.iter().rev().map(|e| scope.spawn(|| f(e))).collect();
        let mut out: Vec<D> = handles
            .into_iter()
            .map(|h| h.join().expect("a decision panicked"))
            .collect();
        out.reverse();
        out
    });
    for (how, decided) in [
        ("backwards", backwards),
        ("interleaved", interleaved),
        ("from a JSON copy", copied),
        ("on other threads", threaded),
    ] {
        for (i, (a, b)) in forwards.iter().zip(&decided).enumerate() {
            if a != b {
                return Err(format!(
                    "evidence {i} decided {a:?} in order but {b:?} {how}: {:?}",
                    batch[i]
                ));
            }
        }
    }
    Ok(())
}

/// The check above can fail: a decision that keeps state between calls (a count,
/// a cache keyed on something else than the evidence) is caught.
#[test]
fn a_decision_with_hidden_state_is_caught() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let batch = vec![evidence(&clean_hardening()); 3];
    assert_eq!(same_everywhere(&batch, decide), Ok(()));
    let calls = AtomicUsize::new(0);
    let counting = |e: &Evidence| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        (decide(e).verdict, n % 2)
    };
    assert!(same_everywhere(&batch, counting).is_err());
    let last = std::sync::Mutex::new(None::<Verdict>);
    let remembering = |e: &Evidence| {
        let mut last = last.lock().expect("lock");
        let before = *last;
        *last = Some(decide(e).verdict);
        before.is_some()
    };
    assert!(same_everywhere(&batch, remembering).is_err());
}

#[test]
fn fault_check_outranks_other_green_but_broken_failures() {
    let mut e = evidence(&clean_hardening());
    for item in &mut e.green_but_broken {
        item.status = AuditStatus::Failed;
    }
    let d = decide(&e);
    assert_eq!(d.verdict, Verdict::InconclusiveFaultNotProven);
    assert!(
        d.reasons
            .iter()
            .any(|r| r.answer.contains("gbb-3-fault-injected"))
    );
}
