//! The audits of method §4 for one scenario / arm run: green-but-broken checks per
//! seed, then the weak-oracle items over all seeds. What faultline can see it measures;
//! the rest comes from the run spec's `declare` map or stays unchecked (blocking PASS).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use regex::Regex;

use super::iteration::IterationFacts;
use crate::oracle::measure;
use crate::verdict::{AuditItem, AuditSource, AuditStatus};

/// Items a run spec may vouch for, because faultline cannot see them itself.
/// Everything else is measured, and a declaration naming it is refused.
pub const DECLARABLE: [&str; 5] = [
    "gbb-8-recovery",
    "gbb-9-baseline",
    "weak-retries-visible",
    "weak-fault-variant",
    "weak-topology",
];

/// Words in a service log that betray a swallowed error (gbb-7).
const SWALLOWED: &str = r"(?i)\bpanic|\bpanicked\b|exception|internal error";

/// What the audits need to know about the scenario besides one iteration's facts.
pub struct AuditCtx<'a> {
    /// Workload duration the budget asked for.
    pub duration: Duration,
    /// A falsified claim is statistical (performance / SLO).
    pub statistical: bool,
    /// A falsified claim is stated "for any size".
    pub any_size: bool,
    /// Faults that end the victim (SIGKILL / SIGTERM, docker kill / stop / restart) per
    /// iteration.
    pub failovers_planned: usize,
    /// `declare` entries of the binding, with the journal record that logged each.
    pub declared: &'a BTreeMap<String, (String, u64)>,
    /// The binding declares a quiesce condition (a run that never reached it, the
    /// cluster down before the workload, has no `quiesced` fact all the same).
    pub quiesce_declared: bool,
}

fn measured(
    id: &str,
    status: AuditStatus,
    evidence: impl Into<String>,
    cites: Vec<u64>,
) -> AuditItem {
    AuditItem {
        id: id.to_string(),
        status,
        source: AuditSource::Measured,
        evidence: evidence.into(),
        cites,
    }
}

fn passed_if(ok: bool) -> AuditStatus {
    if ok {
        AuditStatus::Passed
    } else {
        AuditStatus::Failed
    }
}

/// A declarable item: the run spec's word, or unchecked. `n/a…` declares it not
/// applicable.
fn declared_or_unchecked(id: &str, ctx: &AuditCtx<'_>, what: &str) -> AuditItem {
    match ctx.declared.get(id) {
        Some((text, seq)) => AuditItem {
            id: id.to_string(),
            status: if text.trim().to_lowercase().starts_with("n/a") {
                AuditStatus::NotApplicable
            } else {
                AuditStatus::Passed
            },
            source: AuditSource::Declared,
            evidence: text.clone(),
            cites: vec![*seq],
        },
        None => AuditItem {
            id: id.to_string(),
            status: AuditStatus::Unchecked,
            source: AuditSource::Declared,
            evidence: format!("not measurable by faultline and not declared: {what}"),
            cites: Vec::new(),
        },
    }
}

/// Green-but-broken checks 1–9 for one iteration (check 10 needs every seed).
pub fn green_but_broken(facts: &IterationFacts, ctx: &AuditCtx<'_>) -> Vec<AuditItem> {
    let workload_cite: Vec<u64> = facts.workload.iter().map(|w| w.2).collect();
    let checker_cite: Vec<u64> = facts.checker.iter().map(|c| c.1).collect();
    let mut items = Vec::new();
    items.push(match &facts.history {
        Some(h) => AuditItem {
            cites: checker_cite.clone(),
            ..measure::workload_rate(h, ctx.duration)
        },
        None => measured(
            "gbb-1-workload-rate",
            AuditStatus::Failed,
            "no history was read",
            workload_cite.clone(),
        ),
    });
    items.push(match &facts.checker {
        Some((report, seq)) => AuditItem {
            cites: vec![*seq],
            ..measure::oracle_consumed(report)
        },
        None => measured(
            "gbb-2-oracle-consumed",
            AuditStatus::Failed,
            "the checker never judged a history",
            Vec::new(),
        ),
    });
    items.extend(fault_checks(facts));
    items.push(match &facts.history {
        Some(h) => AuditItem {
            cites: checker_cite,
            ..measure::monotonic(h)
        },
        None => measured(
            "gbb-5-monotonic",
            AuditStatus::Failed,
            "no history was read",
            Vec::new(),
        ),
    });
    items.push(duration_check(facts, ctx.duration));
    items.push(swallowed_errors(&facts.service_logs));
    items.push(match facts.quiesced {
        Some((reached, seq)) => measured(
            "gbb-8-recovery",
            passed_if(reached),
            if reached {
                "quiesce condition reached after the workload"
            } else {
                "quiesce condition not reached before its timeout"
            },
            vec![seq],
        ),
        None => declared_or_unchecked(
            "gbb-8-recovery",
            ctx,
            if ctx.quiesce_declared {
                "the quiesce condition never ran (the iteration ended before the workload did)"
            } else {
                "no quiesce condition in the run spec"
            },
        ),
    });
    items.push(declared_or_unchecked(
        "gbb-9-baseline",
        ctx,
        "was the baseline comparison fair?",
    ));
    items
}

/// Checks 3 (injector AND victim evidence) and 4 (not a silent no-op).
fn fault_checks(facts: &IterationFacts) -> [AuditItem; 2] {
    if facts.faults.is_empty() {
        return [
            measured(
                "gbb-3-fault-injected",
                AuditStatus::NotApplicable,
                "no fault planned",
                vec![],
            ),
            measured(
                "gbb-4-fault-not-noop",
                AuditStatus::NotApplicable,
                "no fault planned",
                vec![],
            ),
        ];
    }
    let cites: Vec<u64> = facts.faults.iter().flat_map(|f| f.cites.clone()).collect();
    let detail = facts
        .faults
        .iter()
        .map(|f| format!("{}: {}", f.id, f.detail.join("; ")))
        .collect::<Vec<_>>()
        .join(" | ");
    let both_sides = facts
        .faults
        .iter()
        .all(|f| f.injected && f.injector_landed && f.victim_side_seen);
    let in_window = facts
        .history
        .as_ref()
        .is_some_and(measure::fault_window_covered);
    let declared = facts.faults.iter().all(|f| f.declared_landed);
    let noop_evidence = format!(
        "declared signals {}; ops recorded inside the fault window: {}",
        if declared { "all seen" } else { "not all seen" },
        if in_window { "yes" } else { "none" }
    );
    [
        measured(
            "gbb-3-fault-injected",
            passed_if(both_sides),
            detail,
            cites.clone(),
        ),
        measured(
            "gbb-4-fault-not-noop",
            passed_if(declared && in_window),
            noop_evidence,
            cites,
        ),
    ]
}

/// Check 6: the workload ran its full budgeted duration and exited cleanly.
fn duration_check(facts: &IterationFacts, intended: Duration) -> AuditItem {
    const ID: &str = "gbb-6-duration";
    let Some((elapsed, exited_ok, seq)) = facts.workload else {
        return measured(
            ID,
            AuditStatus::Failed,
            "the workload never ran",
            Vec::new(),
        );
    };
    // Startup jitter aside, a workload that ends well before its budget stopped early.
    let enough = elapsed.as_secs_f64() >= intended.as_secs_f64() * 0.95;
    measured(
        ID,
        passed_if(enough && exited_ok),
        format!(
            "workload ran {:.1} s of {:.1} s budgeted, {}",
            elapsed.as_secs_f64(),
            intended.as_secs_f64(),
            if exited_ok {
                "exit 0"
            } else {
                "did not exit 0"
            }
        ),
        vec![seq],
    )
}

/// How much of each service log check 7 reads: a service that floods its log must
/// not make the audit read gigabytes into memory.
const SWALLOWED_SCAN_LIMIT: u64 = 64 * 1024 * 1024;

/// The first line of `path` matching `pattern`, streamed (each line cut at
/// [`LINE_LIMIT`](crate::exec::LINE_LIMIT), so a huge line costs no memory), reading at
/// most [`SWALLOWED_SCAN_LIMIT`] bytes; also says whether the file was longer.
fn first_match(path: &std::path::Path, pattern: &Regex) -> std::io::Result<(Option<String>, bool)> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let longer = file.metadata()?.len() > SWALLOWED_SCAN_LIMIT;
    let mut reader = std::io::BufReader::new(file.take(SWALLOWED_SCAN_LIMIT));
    let mut found = None;
    let mut judge = |line: &[u8]| {
        let text = crate::sanitize::decode(line);
        let hit = pattern.is_match(&text);
        if hit {
            found = Some(crate::sanitize::line(text.trim_end()));
        }
        hit
    };
    let mut lines = crate::exec::LineCap::default();
    if !lines.scan(&mut reader, &mut judge)?.1 {
        // The last line may lack its newline.
        judge(&lines.finish());
    }
    Ok((found, longer))
}

/// Check 7: panics, exceptions or "internal error" in the services' logs.
fn swallowed_errors(logs: &[PathBuf]) -> AuditItem {
    const ID: &str = "gbb-7-swallowed-errors";
    let Ok(pattern) = Regex::new(SWALLOWED) else {
        return measured(
            ID,
            AuditStatus::Unchecked,
            "pattern failed to compile",
            vec![],
        );
    };
    let mut read = 0usize;
    let mut cut = 0usize;
    for path in logs {
        let Ok((found, longer)) = first_match(path, &pattern) else {
            continue;
        };
        read += 1;
        cut += usize::from(longer);
        if let Some(line) = found {
            return measured(
                ID,
                AuditStatus::Failed,
                format!(
                    "{}: {line}",
                    path.file_name()
                        .map(|n| n.to_string_lossy())
                        .unwrap_or_default()
                ),
                vec![],
            );
        }
    }
    if read == 0 {
        return measured(ID, AuditStatus::Unchecked, "no service log to grep", vec![]);
    }
    let note = if cut > 0 {
        format!(
            "; {cut} log(s) longer than {} MiB were read only that far",
            SWALLOWED_SCAN_LIMIT >> 20
        )
    } else {
        String::new()
    };
    measured(
        ID,
        AuditStatus::Passed,
        format!("{read} service logs grepped for panics, exceptions, internal errors: none{note}"),
        vec![],
    )
}

/// The whole run's audit items: the worst green-but-broken result of every check
/// across seeds, check 10, then the weak-oracle items.
pub fn combine(
    per_seed: &[Vec<AuditItem>],
    facts: &[&IterationFacts],
    clean_seeds: u32,
    ctx: &AuditCtx<'_>,
) -> (Vec<AuditItem>, Vec<AuditItem>) {
    let mut gbb: Vec<AuditItem> = Vec::new();
    for seed in per_seed {
        for item in seed {
            match gbb.iter_mut().find(|i| i.id == item.id) {
                Some(kept)
                    if kept.status == AuditStatus::Passed && item.status != AuditStatus::Passed =>
                {
                    *kept = item.clone();
                }
                Some(_) => {}
                None => gbb.push(item.clone()),
            }
        }
    }
    let seeds_evidence = format!("{clean_seeds} seed(s) ran clean with the same verdict");
    gbb.push(if ctx.statistical {
        measured(
            "gbb-10-replicated",
            passed_if(clean_seeds >= 3),
            seeds_evidence.clone(),
            vec![],
        )
    } else {
        measured(
            "gbb-10-replicated",
            AuditStatus::NotApplicable,
            "no statistical claim falsified by this scenario",
            vec![],
        )
    });
    (gbb.clone(), weak_oracle(&gbb, facts, clean_seeds, ctx))
}

fn weak_oracle(
    gbb: &[AuditItem],
    facts: &[&IterationFacts],
    clean_seeds: u32,
    ctx: &AuditCtx<'_>,
) -> Vec<AuditItem> {
    let status_of = |id: &str| {
        gbb.iter()
            .find(|i| i.id == id)
            .map(|i| (i.status, i.evidence.clone(), i.cites.clone()))
    };
    let history_judged = !facts.is_empty()
        && facts
            .iter()
            .all(|f| f.checker.as_ref().is_some_and(|(r, _)| r.ops_checked() > 0));
    let judged_evidence = if history_judged {
        "the checker judged a client-side operation history".to_string()
    } else {
        "the checker did not judge a history in every seed".to_string()
    };
    let timeouts_recorded = !facts.is_empty()
        && facts.iter().all(|f| {
            f.history
                .as_ref()
                .is_some_and(|h| h.present_fields.contains("timeout"))
        });
    let mut items = vec![
        measured(
            "weak-not-final-state-only",
            passed_if(history_judged),
            judged_evidence.clone(),
            vec![],
        ),
        measured(
            "weak-not-logs-only",
            passed_if(history_judged),
            judged_evidence.clone(),
            vec![],
        ),
        measured(
            "weak-not-health-only",
            passed_if(history_judged),
            judged_evidence,
            vec![],
        ),
        measured(
            "weak-not-error-metrics-only",
            passed_if(timeouts_recorded),
            if timeouts_recorded {
                "client-side history carries the timeout marker on every op"
            } else {
                "no client-side history with timeout markers"
            },
            vec![],
        ),
    ];
    if let Some((status, evidence, cites)) = status_of("gbb-6-duration") {
        items.push(measured("weak-duration", status, evidence, cites));
    }
    items.push(failovers(facts, ctx));
    items.push(declared_or_unchecked(
        "weak-retries-visible",
        ctx,
        "does the recorder see retries the client library hides?",
    ));
    if let Some((status, evidence, cites)) = status_of("gbb-5-monotonic") {
        items.push(measured("weak-monotonic", status, evidence, cites));
    }
    let faults_planned = facts.iter().any(|f| !f.faults.is_empty());
    items.push(if faults_planned {
        declared_or_unchecked(
            "weak-fault-variant",
            ctx,
            "was a fault-set variant exercised?",
        )
    } else {
        measured(
            "weak-fault-variant",
            AuditStatus::NotApplicable,
            "no fault planned",
            vec![],
        )
    });
    items.push(measured(
        "weak-seeds",
        passed_if(clean_seeds >= 3),
        format!("{clean_seeds} PRNG seed(s) agreed"),
        vec![],
    ));
    items.push(if ctx.any_size {
        declared_or_unchecked("weak-topology", ctx, "was more than one topology run?")
    } else {
        measured(
            "weak-topology",
            AuditStatus::NotApplicable,
            "no falsified claim is stated for any cluster size",
            vec![],
        )
    });
    items
}

/// Failover-based scenarios must exercise more than one failover per run.
fn failovers(facts: &[&IterationFacts], ctx: &AuditCtx<'_>) -> AuditItem {
    const ID: &str = "weak-failovers";
    if ctx.failovers_planned == 0 {
        return measured(
            ID,
            AuditStatus::NotApplicable,
            "no fault ends a process",
            vec![],
        );
    }
    let fewest = facts
        .iter()
        .map(|f| f.faults.iter().filter(|x| x.injector_landed).count())
        .min()
        .unwrap_or(0);
    measured(
        ID,
        passed_if(ctx.failovers_planned >= 2 && fewest >= 2),
        format!(
            "{} process-ending fault(s) planned per run; fewest landed in a seed: {fewest}",
            ctx.failovers_planned
        ),
        vec![],
    )
}
