//! What the engine is doing now, and what a watcher needs to chart the running
//! iteration: folded from the same records as everything else. The status line
//! reads [`Activity`] ("workload 12 s of 30", "re-probing fl-client"), the Run
//! screen follows [`View::active`] and charts [`Live`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::View;
use crate::oracle::series::FaultMark;
use crate::session::event::Event;
use crate::session::journal::Record;
use crate::session::label::CommandRole;

/// The engine's current step: what, for which row, since when, and for how long at
/// most when that is known (the workload's duration, a wait's limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    pub what: String,
    /// The run row it is about (index into [`View::runs`]).
    pub row: Option<usize>,
    /// When it began (RFC 3339, as journaled).
    pub since: String,
    pub limit_ms: Option<u64>,
}

/// One fault of the running iteration, as the journal told it so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultLine {
    pub mark: FaultMark,
    pub healed: bool,
    /// The service it was aimed at: the command whose process group its injected
    /// pid leads (`None` for a fault aimed at no service's process).
    pub target: Option<String>,
}

/// The running (or last) iteration of one row: where its history grows, under
/// which field names, and its faults in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Live {
    pub label: crate::session::label::IterationLabel,
    pub history: Option<PathBuf>,
    pub fields: BTreeMap<String, String>,
    pub faults: Vec<FaultLine>,
    /// The iteration's declared duration.
    pub duration_ms: u64,
    /// When it started (its `iteration-started` record's time, RFC 3339).
    pub started: Option<String>,
    /// When its workload started (its `command-started` record's time): where the
    /// chart's clock, which counts from the first invoke, begins.
    pub workload_started: Option<String>,
}

impl View {
    /// Folds what the record says of the engine's current step and of the running
    /// iteration's live data.
    pub(super) fn fold_activity(&mut self, record: &Record) {
        let row = self.row_index(record);
        let id = row
            .and_then(|r| self.runs.get(r))
            .map(|r| r.id.clone())
            .unwrap_or_default();
        let now = |what: String, limit_ms: Option<u64>| Activity {
            what,
            row,
            since: record.ts.clone(),
            limit_ms,
        };
        let duration = row
            .and_then(|r| self.live.get(&r))
            .map(|l| l.duration_ms)
            .filter(|d| *d > 0);
        let next = match &record.event {
            Event::SessionStarted(_) => Some(now("starting the session".into(), None)),
            Event::ToolboxItem(_) => Some(now("discovering the toolbox".into(), None)),
            Event::Capability(c) => Some(now(format!("probing {}", clean(&c.capability)), None)),
            // The interval in the words the question used (one constant, journaled).
            Event::CapabilityWait(w) => {
                Some(now(
                    format!(
                        "re-probing {} every {}",
                        clean(&w.capability),
                        crate::capability::interval_words(w.every_ms.unwrap_or(
                            crate::session::event::millis(crate::capability::WAIT_EVERY)
                        ))
                    ),
                    w.limit_ms,
                ))
            }
            Event::CapabilityWaitStopped(w) => Some(now(
                format!(
                    "stopped waiting for {} (taken back by {})",
                    clean(&w.capability),
                    clean(&w.by)
                ),
                None,
            )),
            Event::IterationStarted(i) => {
                if let Some(r) = row {
                    self.live.insert(
                        r,
                        Live {
                            label: i.label,
                            duration_ms: i.duration_ms,
                            started: Some(record.ts.clone()),
                            ..Live::default()
                        },
                    );
                }
                Some(now(format!("{id} {}: preconditions", i.label), None))
            }
            Event::HistoryLive(h) => {
                if let Some(live) = row.and_then(|r| self.live.get_mut(&r)) {
                    live.history = Some(PathBuf::from(&h.path));
                    live.fields = h.fields.clone();
                }
                None
            }
            Event::CommandStarted(c) => Some(match CommandRole::of(&c.name) {
                Some(CommandRole::Workload) => {
                    if let Some(live) = row.and_then(|r| self.live.get_mut(&r)) {
                        live.workload_started = Some(record.ts.clone());
                    }
                    now(format!("{id}: workload"), duration)
                }
                Some(CommandRole::Quiesce) => now(format!("{id}: waiting for quiescence"), None),
                Some(CommandRole::Checker | CommandRole::FinalState) => {
                    now(format!("{id}: checking the history"), None)
                }
                None => now(format!("{id}: starting {}", clean(&c.name)), None),
            }),
            Event::FaultIntent(f) => {
                if let Some(live) = row.and_then(|r| self.live.get_mut(&r)) {
                    live.faults.push(FaultLine {
                        mark: FaultMark {
                            epoch: f.epoch,
                            fault: clean(&f.fault),
                            proven: None,
                        },
                        healed: false,
                        target: None,
                    });
                }
                Some(now(format!("{id}: injecting {}", clean(&f.fault)), None))
            }
            Event::FaultInjected(f) => {
                let target = row
                    .and_then(|r| self.runs.get(r))
                    .zip(f.pid)
                    .and_then(|(r, pid)| r.commands.iter().rev().find(|c| c.pgid == pid))
                    .map(|c| c.name.clone());
                self.fault_line(row, &f.fault, |l| l.target = target);
                Some(now(
                    format!("{id}: proving landing of {}", clean(&f.fault)),
                    None,
                ))
            }
            // Evidence alone decides nothing here: the `fault-proof` record does.
            Event::LandingDeclared(l) => {
                Some(now(format!("{id}: holding {}", clean(&l.fault)), None))
            }
            Event::FaultProof(p) => {
                self.fault_line(row, &p.fault, |f| f.mark.proven = Some(p.proven));
                let fault = clean(&p.fault);
                Some(now(
                    if p.proven {
                        format!("{id}: {fault} proven, held")
                    } else {
                        format!("{id}: {fault} NOT proven ({}), held", clean(&p.why))
                    },
                    None,
                ))
            }
            Event::FaultHealed(h) => {
                self.fault_line(row, &h.fault, |f| f.healed = true);
                Some(now(
                    format!("{id}: workload ({} healed)", clean(&h.fault)),
                    None,
                ))
            }
            Event::RerunResult(_) => Some(now(format!("{id}: re-run done"), None)),
            Event::ReductionStarted(r) => Some(now(
                format!("{id}: reducing the failing schedule ({} events)", r.events),
                Some(r.budget_ms).filter(|b| *b > 0),
            )),
            Event::Verdict(v) => v
                .verdict
                .map(|verdict| now(format!("{id}: {verdict}"), None)),
            Event::SessionVerdict(_) => Some(now("writing the report".into(), None)),
            _ => None,
        };
        if let Some(activity) = next {
            if matches!(
                record.event,
                Event::IterationStarted(_) | Event::CommandStarted(_) | Event::FaultIntent(_)
            ) && row.is_some()
            {
                self.active = row;
            }
            self.activity = Some(activity);
        }
    }

    fn fault_line(&mut self, row: Option<usize>, fault: &str, change: impl FnOnce(&mut FaultLine)) {
        let fault = clean(fault);
        if let Some(line) = row
            .and_then(|r| self.live.get_mut(&r))
            .and_then(|l| l.faults.iter_mut().rev().find(|f| f.mark.fault == fault))
        {
            change(line);
        }
    }
}

fn clean(text: &str) -> String {
    crate::sanitize::line(text)
}
