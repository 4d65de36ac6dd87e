//! One scenario or arm, all of its seeds: iterations, the same-seed re-run of a FAIL,
//! the audits, and the [`Evidence`] the decision tree reads — every answer citing the
//! journal records it rests on.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::audit::{self, AuditCtx};
use super::iteration::{self, EngineError, FaultFacts, IterationCtx, IterationFacts};
use crate::oracle::series::{self, FaultMark};
use crate::runspec::vars::Vars;
use crate::runspec::{Binding, TierBudget};
use crate::session::event::{self, Event, millis};
use crate::session::journal::{Journal, Scope};
use crate::session::label::IterationLabel;
use crate::session::outcome::{LandingEvidence, OracleEvidence, RunOutcome, SeedRun, ServiceEnd};
use crate::verdict::{AuditStatus, CheckerRun, Evidence, Tier, decide};

/// Where and how one binding runs.
pub struct BindingRun<'a> {
    pub id: String,
    pub scope: Scope,
    pub binding: &'a Binding,
    /// The tier the operator asked for; the binding runs the budget of the highest
    /// tier it declares at or below it.
    pub requested: Tier,
    /// The plan's §7.M block is filled.
    pub serious: bool,
    pub statistical: bool,
    pub any_size: bool,
    pub cwd: PathBuf,
    /// Session `logs/` and `artifacts/`; this run writes under `<id>/seed-<n>/`.
    pub logs: PathBuf,
    pub artifacts: PathBuf,
    pub vars: Vars,
    pub cancel: CancellationToken,
    /// How far a reproducible FAIL's schedule may be reduced.
    pub reduce: super::request::ReduceBudget,
    /// The recorded approval of the binding's privileged fault actions, if given.
    pub privileged: Option<super::privileged::Approval>,
    /// The run spec's nodes, connected.
    pub hosts: crate::host::Hosts,
}

/// The budget a binding runs under: the highest declared tier not above `requested`.
pub fn budget_for(binding: &Binding, requested: Tier) -> Option<(Tier, &TierBudget)> {
    binding
        .tiers
        .iter()
        .filter(|(tier, _)| **tier <= requested)
        .max_by_key(|(tier, _)| **tier)
        .map(|(tier, budget)| (*tier, budget))
}

/// Everything one binding produced.
pub struct BindingResult {
    pub evidence: Evidence,
    pub outcome: RunOutcome,
}

impl BindingRun<'_> {
    fn log(&self, journal: &mut Journal, event: Event) -> Result<u64, EngineError> {
        Ok(journal.append(self.scope.clone(), event)?.seq)
    }

    async fn iterate(
        &self,
        journal: &mut Journal,
        label: IterationLabel,
        duration: Duration,
    ) -> Result<IterationFacts, EngineError> {
        self.iterate_with(self.binding, journal, label, duration)
            .await
    }

    /// One iteration of `binding` (this run's, or a reduction candidate of it).
    pub(super) async fn iterate_with(
        &self,
        binding: &Binding,
        journal: &mut Journal,
        label: IterationLabel,
        duration: Duration,
    ) -> Result<IterationFacts, EngineError> {
        let seed = label.seed;
        let label_text = label.to_string();
        let stem = crate::session::dir::file_stem_for_id(&self.id);
        let logs = self.logs.join(&stem).join(&label_text);
        std::fs::create_dir_all(&logs).map_err(|e| EngineError::Io {
            id: self.id.clone(),
            message: format!("{}: {e}", logs.display()),
        })?;
        self.log(
            journal,
            Event::IterationStarted(event::IterationStarted {
                seed,
                label,
                duration_ms: millis(duration),
            }),
        )?;
        let mut ctx = IterationCtx {
            id: self.id.clone(),
            scope: self.scope.clone(),
            cwd: self.cwd.clone(),
            logs,
            artifacts: self.artifacts.join(&stem).join(&label_text),
            vars: self.vars.clone(),
            seed,
            duration,
            cancel: self.cancel.clone(),
            privileged: self.privileged.clone(),
            hosts: self.hosts.clone(),
        };
        let facts = iteration::run(binding, &mut ctx, journal).await?;
        self.write_metrics(&stem, &label_text, &facts);
        Ok(facts)
    }

    /// The seed's throughput and latency over time, beside the session's logs as
    /// `metrics/<id>/<label>.json` and `.csv`, and drawn as SVG and PNG under `figures/<id>/`
    /// (see `report::figures`). Figures only: a write that fails is
    /// logged and the run goes on (the verdict never rests on them).
    fn write_metrics(&self, stem: &str, label: &str, facts: &IterationFacts) {
        let Some(history) = &facts.history else {
            return;
        };
        let marks: Vec<FaultMark> = facts
            .faults
            .iter()
            .filter_map(|f| {
                Some(FaultMark {
                    epoch: f.epoch?,
                    fault: f.id.clone(),
                    proven: Some(f.proven()),
                })
            })
            .collect();
        let series = series::of_history(&history.ops, &marks);
        let dir = self.logs.with_file_name("metrics").join(stem);
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            let json = serde_json::to_vec_pretty(&series).map_err(std::io::Error::other)?;
            std::fs::write(dir.join(format!("{label}.json")), json)?;
            std::fs::write(dir.join(format!("{label}.csv")), series.to_csv())
        };
        if let Err(e) = write() {
            tracing::warn!(dir = %dir.display(), error = %e, "metrics not written");
        }
        // The same seed as pictures, `figures/<id>/<label>-<figure>.svg|png`, logged alike.
        let dir = self.logs.with_file_name("figures").join(stem);
        let write = || -> Result<(), Box<dyn std::error::Error>> {
            let svgs = crate::report::figures::render_all(&history.ops, &series)?;
            let pngs = crate::report::figures::render_all_png(&history.ops, &series)?;
            std::fs::create_dir_all(&dir)?;
            for (name, svg) in svgs {
                std::fs::write(dir.join(format!("{label}-{name}.svg")), svg)?;
            }
            for (name, png) in pngs {
                std::fs::write(dir.join(format!("{label}-{name}.png")), png)?;
            }
            Ok(())
        };
        if let Err(e) = write() {
            tracing::warn!(dir = %dir.display(), error = %e, "figures not written");
        }
        // What the checker found, drawn: `<label>-anomaly-<n>.svg`, `<label>-lost-acks.*`.
        let Some((report, _)) = &facts.checker else {
            return;
        };
        let write = || -> Result<(), Box<dyn std::error::Error>> {
            for (name, bytes) in
                crate::report::figures::of_anomalies(&history.ops, report, &series.windows)?
            {
                std::fs::write(dir.join(format!("{label}-{name}")), bytes)?;
            }
            Ok(())
        };
        if let Err(e) = write() {
            tracing::warn!(dir = %dir.display(), error = %e, "anomaly figures not written");
        }
    }

    /// Runs every seed of the budget (stopping at the first seed that cannot pass),
    /// re-runs a FAIL with its seed, audits, and builds the evidence.
    pub async fn run(&self, journal: &mut Journal) -> Result<BindingResult, EngineError> {
        let Some((tier, budget)) = budget_for(self.binding, self.requested) else {
            let reason = format!(
                "the run spec binds no budget tier at or below `{}`",
                self.requested
            );
            let seq = self.log(
                journal,
                Event::NotRun(event::Reason {
                    reason: reason.clone(),
                }),
            )?;
            return Ok(self.not_run(reason, seq));
        };
        let duration = budget.duration.0;
        let seq = self.log(
            journal,
            Event::Budget(event::Budget {
                tier: Some(tier),
                seeds: budget.seeds,
                duration_ms: millis(duration),
                faults: budget.faults,
            }),
        )?;
        let declared = self.declarations(journal)?;
        let ctx = AuditCtx {
            duration,
            statistical: self.statistical,
            any_size: self.any_size,
            failovers_planned: self
                .binding
                .faults
                .iter()
                .filter(|f| f.value.nemesis.ends_processes())
                .count(),
            declared: &declared,
            quiesce_declared: self.binding.quiesce.is_some(),
        };
        let mut seeds: Vec<(u64, IterationFacts, Vec<crate::verdict::AuditItem>)> = Vec::new();
        let mut rerun = None;
        let mut reduction = None;
        for seed in 1..=u64::from(budget.seeds.max(1)) {
            let facts = self
                .iterate(journal, IterationLabel::seed(seed), duration)
                .await?;
            let gbb = audit::green_but_broken(&facts, &ctx);
            let failed = anomalies(&facts) > 0;
            let clean = is_clean(&facts, &gbb);
            seeds.push((seed, facts, gbb));
            if failed {
                let facts = self
                    .iterate(journal, IterationLabel::rerun(seed), duration)
                    .await?;
                let reproduced = anomalies(&facts) > 0;
                let seq = self.log(
                    journal,
                    Event::RerunResult(event::RerunResult { seed, reproduced }),
                )?;
                rerun = Some((facts, reproduced, seq));
                if reproduced && self.binding.faults.len() > 1 && self.reduce.runs > 0 {
                    reduction = Some(self.reduce(journal, seed, duration).await?);
                }
                break;
            }
            if !clean {
                self.log(
                    journal,
                    Event::SeedsStopped(event::SeedsStopped {
                        after_seed: seed,
                        reason: "this seed cannot support a PASS; further seeds would not \
                                 change the verdict"
                            .into(),
                    }),
                )?;
                break;
            }
        }
        let mut result = self.evidence(tier, budget, seq, &ctx, seeds, rerun);
        result.outcome.reduction = reduction.map(Box::new);
        Ok(result)
    }

    /// The binding's `declare` entries, journaled so audit items can cite them;
    /// a declaration of a measured item is refused (and journaled as such).
    fn declarations(
        &self,
        journal: &mut Journal,
    ) -> Result<BTreeMap<String, (String, u64)>, EngineError> {
        let mut declared = BTreeMap::new();
        for (id, text) in &self.binding.declare {
            if audit::DECLARABLE.contains(&id.as_str()) {
                let seq = self.log(
                    journal,
                    Event::AuditDeclared(event::AuditDeclared {
                        item: id.clone(),
                        text: text.clone(),
                    }),
                )?;
                declared.insert(id.clone(), (text.clone(), seq));
            } else {
                self.log(
                    journal,
                    Event::DeclarationRefused(event::DeclarationRefused {
                        item: id.clone(),
                        reason: "faultline measures this item itself; it cannot be declared".into(),
                    }),
                )?;
            }
        }
        Ok(declared)
    }

    fn not_run(&self, reason: String, seq: u64) -> BindingResult {
        let evidence = Evidence {
            not_run: Some(reason),
            cites: BTreeMap::from([("not_run".to_string(), vec![seq])]),
            ..Evidence::empty()
        };
        let decision = decide(&evidence);
        BindingResult {
            evidence,
            outcome: RunOutcome::decided(&self.id, decision),
        }
    }

    fn evidence(
        &self,
        tier: Tier,
        budget: &TierBudget,
        budget_seq: u64,
        ctx: &AuditCtx<'_>,
        seeds: Vec<(u64, IterationFacts, Vec<crate::verdict::AuditItem>)>,
        rerun: Option<(IterationFacts, bool, u64)>,
    ) -> BindingResult {
        let facts: Vec<&IterationFacts> = seeds.iter().map(|(_, f, _)| f).collect();
        let clean: Vec<&(u64, IterationFacts, Vec<crate::verdict::AuditItem>)> =
            seeds.iter().filter(|(_, f, g)| is_clean(f, g)).collect();
        let clean_seeds = u32::try_from(clean.len()).unwrap_or(u32::MAX);
        let per_seed: Vec<Vec<crate::verdict::AuditItem>> =
            seeds.iter().map(|(_, _, g)| g.clone()).collect();
        let (gbb, weak) = audit::combine(&per_seed, &facts, clean_seeds, ctx);

        let mut cites: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        let mut cite =
            |key: &str, seqs: Vec<u64>| cites.entry(key.to_string()).or_default().extend(seqs);
        cite(
            "not_run",
            facts
                .iter()
                .flat_map(|f| f.workload.map(|w| w.2))
                .take(1)
                .collect(),
        );
        let env_missing = facts.iter().find_map(|f| f.env_missing.clone());
        match &env_missing {
            Some((_, seq)) => cite("env", vec![*seq]),
            None => cite(
                "env",
                facts.iter().flat_map(|f| f.preconditions.clone()).collect(),
            ),
        }
        let failing = facts.iter().find(|f| anomalies(f) > 0);
        let checker = match failing {
            Some(f) => f
                .checker
                .as_ref()
                .map_or(CheckerRun::NotRun, |c| c.0.run.clone()),
            None => summed_checker(&facts),
        };
        let checker_seqs: Vec<u64> = match failing {
            Some(f) => f.checker.iter().map(|c| c.1).collect(),
            None => facts
                .iter()
                .filter_map(|f| f.checker.as_ref().map(|c| c.1))
                .collect(),
        };
        for key in ["fail", "checker", "fields", "coverage"] {
            cite(key, checker_seqs.clone());
        }
        let rerun_reproduced = rerun.as_ref().map(|(_, reproduced, seq)| {
            cite("rerun", vec![*seq]);
            *reproduced
        });
        let fault_planned = !self.binding.faults.is_empty();
        let planned: usize = self
            .binding
            .faults
            .iter()
            .map(|f| f.value.injections())
            .sum();
        let landing_proven = fault_planned
            && !facts.is_empty()
            && facts
                .iter()
                .all(|f| f.faults.len() == planned && f.faults.iter().all(FaultFacts::proven));
        cite(
            "landing",
            facts
                .iter()
                .flat_map(|f| f.faults.iter().flat_map(|x| x.cites.clone()))
                .collect(),
        );
        let fault_active = fault_planned
            && !facts.is_empty()
            && facts.iter().all(|f| {
                f.history
                    .as_ref()
                    .is_some_and(crate::oracle::measure::fault_window_covered)
            });
        cite("fault_active", checker_seqs.clone());
        let tier_met = tier_met(self.binding, self.requested, &clean, budget, tier);
        cite("tier", vec![budget_seq]);
        cite("seeds", checker_seqs);
        let expired_step = facts.iter().find_map(|f| f.expired_step.clone());
        // Each service's unexplained end once (the same end in every seed is one line).
        let mut services_ended: Vec<String> = Vec::new();
        for (said, seq) in facts.iter().flat_map(|f| f.unexplained_ends()) {
            cite("ended", vec![seq]);
            if !services_ended.contains(&said) {
                services_ended.push(said);
            }
        }

        // Each fault whose injection failed, once (the same failure in every seed is
        // one line).
        let mut never_injected: Vec<String> = Vec::new();
        for fault in facts.iter().flat_map(|f| &f.faults) {
            if let Some(why) = &fault.inject_failed {
                let line = format!("{}: {why}", fault.id);
                if !never_injected.contains(&line) {
                    never_injected.push(line);
                }
            }
        }

        let evidence = Evidence {
            not_run: None,
            env_missing: env_missing.map(|(name, _)| format!("precondition `{name}` failed")),
            rerun_reproduced,
            fault_planned,
            landing_proven,
            checker,
            fault_active,
            tier_met,
            serious: self.serious,
            seeds_agreeing: clean_seeds,
            green_but_broken: gbb.clone(),
            weak_oracle: weak.clone(),
            expired_step,
            services_ended,
            never_injected,
            cites,
        };
        let decision = decide(&evidence);
        let mut audits = gbb;
        audits.extend(weak);
        let stem = crate::session::dir::file_stem_for_id(&self.id);
        let outcome = RunOutcome {
            id: self.id.clone(),
            decision: Some(decision),
            seeds: seeds
                .iter()
                .map(|(seed, f, _)| seed_run(*seed, f))
                .collect(),
            rerun: rerun
                .as_ref()
                .and_then(|(f, _, _)| seeds.last().map(|(seed, _, _)| seed_run(*seed, f)))
                .map(Box::new),
            audits,
            artifacts: seeds
                .iter()
                .map(|(seed, _, _)| format!("artifacts/{stem}/seed-{seed}/history.jsonl"))
                .chain(
                    seeds
                        .iter()
                        .map(|(seed, _, _)| format!("logs/{stem}/seed-{seed}/")),
                )
                .collect(),
            reduction: None,
        };
        BindingResult { evidence, outcome }
    }
}

pub(super) fn anomalies(facts: &IterationFacts) -> u64 {
    match facts.checker.as_ref().map(|c| &c.0.run) {
        Some(CheckerRun::Judged { anomalies, .. }) => *anomalies,
        _ => 0,
    }
}

/// A seed that could support a PASS on its own.
fn is_clean(facts: &IterationFacts, gbb: &[crate::verdict::AuditItem]) -> bool {
    let judged_clean = matches!(
        facts.checker.as_ref().map(|c| &c.0.run),
        Some(CheckerRun::Judged { anomalies: 0, ops_checked, ops_produced }) if ops_checked == ops_produced && *ops_produced > 0
    );
    facts.env_missing.is_none()
        && judged_clean
        && facts.faults.iter().all(FaultFacts::proven)
        && gbb.iter().all(|i| i.status != AuditStatus::Failed)
}

/// All seeds judged → their counts summed; otherwise the first seed's non-judgement.
fn summed_checker(facts: &[&IterationFacts]) -> CheckerRun {
    let mut sum = (0u64, 0u64, 0u64);
    for f in facts {
        match f.checker.as_ref().map(|c| &c.0.run) {
            Some(CheckerRun::Judged {
                anomalies,
                ops_checked,
                ops_produced,
            }) => {
                sum.0 += anomalies;
                sum.1 += ops_checked;
                sum.2 += ops_produced;
            }
            Some(other) => return other.clone(),
            None => return CheckerRun::NotRun,
        }
    }
    if facts.is_empty() {
        return CheckerRun::NotRun;
    }
    CheckerRun::Judged {
        anomalies: sum.0,
        ops_checked: sum.1,
        ops_produced: sum.2,
    }
}

/// The highest declared tier (at or below the one requested) whose every number the
/// clean seeds met: seed count, duration, proven faults per seed.
fn tier_met(
    binding: &Binding,
    requested: Tier,
    clean: &[&(u64, IterationFacts, Vec<crate::verdict::AuditItem>)],
    ran: &TierBudget,
    ran_tier: Tier,
) -> Option<Tier> {
    let fewest_landed = clean
        .iter()
        .map(|(_, f, _)| f.faults.iter().filter(|x| x.proven()).count())
        .min()
        .unwrap_or(0);
    binding
        .tiers
        .iter()
        .filter(|(tier, _)| **tier <= requested && **tier <= ran_tier)
        .filter(|(_, need)| {
            clean.len() >= need.seeds as usize
                && ran.duration.0 >= need.duration.0
                && fewest_landed >= need.faults as usize
        })
        .map(|(tier, _)| *tier)
        .max()
        .filter(|_| !clean.is_empty())
}

fn seed_run(seed: u64, facts: &IterationFacts) -> SeedRun {
    SeedRun {
        seed,
        landing: facts
            .faults
            .iter()
            .map(|f| LandingEvidence {
                fault: f.id.clone(),
                injected: f.injected,
                injector_side: f.injector_landed,
                victim_side: f.victim_side_seen,
                declared: f.declared_landed,
                healed: f.healed,
                detail: f.detail.join("; "),
                cites: f.cites.clone(),
            })
            .collect(),
        oracle: facts.checker.as_ref().map(|(report, seq)| {
            let (anomalies, ops_checked, ops_produced) = match &report.run {
                CheckerRun::Judged {
                    anomalies,
                    ops_checked,
                    ops_produced,
                } => (*anomalies, *ops_checked, *ops_produced),
                _ => (0, 0, 0),
            };
            OracleEvidence {
                checker: report.checker.clone(),
                ops_checked,
                ops_produced,
                anomalies,
                evidence: report.evidence.clone(),
                cites: vec![*seq],
                listed: super::anomalies::notes(report, facts.history.as_ref(), &facts.faults),
            }
        }),
        env_missing: facts.env_missing.as_ref().map(|(name, _)| name.clone()),
        expired_step: facts.expired_step.clone(),
        services_ended: facts
            .services_ended
            .iter()
            .map(|(e, seq)| ServiceEnd {
                said: e.said(),
                fault: e.fault.clone(),
                cites: std::iter::once(*seq).chain(e.explained_by).collect(),
            })
            .collect(),
    }
}
