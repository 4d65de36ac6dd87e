//! Keeps the session directory's documents current while the session runs:
//! `session-log.md` and `findings/<id>.md` are rewritten as journal records arrive
//! (so a killed run still leaves partial findings); `verdicts.json`, `junit.xml` and
//! the report (`report.md`, and `report.html` beside it) are written at the end.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

use super::request::Records;
use crate::plan::Plan;
use crate::report;
use crate::session::dir::SessionDir;
use crate::session::journal::Record;
use crate::session::outcome::{Phase, ScenarioOutcome, SessionOutcome};

#[derive(Clone)]
pub struct Outputs {
    shared: Arc<Shared>,
}

struct Shared {
    plan: Plan,
    dir: SessionDir,
    report_path: Option<PathBuf>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    outcome: Option<SessionOutcome>,
    records: Vec<Record>,
    /// Scenarios whose findings were written after they were done: unchanged since,
    /// so a publish does not write them again.
    settled: HashSet<String>,
    /// Each scenario's place in `outcome.scenarios`, so the work a record does is the
    /// same at the first scenario and at the five-thousandth.
    index: HashMap<String, usize>,
    /// When the session log was last written, and what writing it cost.
    log_written: Option<Instant>,
    log_cost: Duration,
}

impl State {
    /// Takes `outcome` whole, and where each of its scenarios is.
    fn replace(&mut self, outcome: &SessionOutcome) {
        self.index = outcome
            .scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect();
        self.outcome = Some(outcome.clone());
    }
}

/// The session log is rewritten at most this often while the run goes (and whole at
/// the end), and never more than a tenth of the time: its cost grows with the
/// journal, the cost of a record must not.
const LOG_EVERY: Duration = Duration::from_secs(1);

/// Which findings files a render writes.
#[derive(Clone, Copy)]
enum Only<'a> {
    All,
    /// Every started scenario not written since it was done.
    Unsettled,
    Scenario(&'a str),
}

/// Replaces the document at `path` whole (a full disk leaves its previous version);
/// a failure is logged and returned, naming the file.
fn write(path: &Path, text: &str) -> Result<(), String> {
    crate::atomic::write(path, text.as_bytes()).map_err(|e| {
        let why = format!(
            "{} could not be written (its previous version, if any, is kept): {e}",
            path.display()
        );
        tracing::warn!("{why}");
        why
    })
}

impl Outputs {
    pub fn new(plan: &Plan, dir: &SessionDir, report_path: Option<PathBuf>) -> Outputs {
        Outputs {
            shared: Arc::new(Shared {
                plan: plan.clone(),
                dir: dir.clone(),
                report_path,
                state: Mutex::new(State::default()),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts from the records a resumed session's journal already holds.
    pub fn seed(&self, records: Vec<Record>) {
        self.lock().records = records;
    }

    /// Takes the engine's latest view and rewrites the documents from it.
    pub fn publish(&self, outcome: &SessionOutcome) {
        let mut state = self.lock();
        state.replace(outcome);
        self.render(&mut state, Only::Unsettled, false);
    }

    /// [`Outputs::publish`] when, of the scenarios, only `index` changed: copies that
    /// one and the session part, not every scenario (whose cost would grow with the
    /// session).
    pub fn publish_at(&self, outcome: &SessionOutcome, index: usize) {
        let mut state = self.lock();
        let Some(kept) = state
            .outcome
            .as_mut()
            .filter(|k| k.scenarios.len() == outcome.scenarios.len())
        else {
            drop(state);
            return self.publish(outcome);
        };
        let scenarios = std::mem::take(&mut kept.scenarios);
        *kept = SessionOutcome {
            scenarios,
            ..outcome.head()
        };
        if let (Some(slot), Some(now)) =
            (kept.scenarios.get_mut(index), outcome.scenarios.get(index))
        {
            *slot = now.clone();
        }
        self.render(&mut state, Only::Unsettled, false);
    }

    /// Rewrites the session log (`whole`, or when it is due) and the findings files
    /// `only` names.
    fn render(&self, state: &mut State, only: Only<'_>, whole: bool) {
        let Some(outcome) = &state.outcome else {
            return;
        };
        let plan = &self.shared.plan;
        let due = state
            .log_written
            .is_none_or(|at| at.elapsed() >= LOG_EVERY.max(state.log_cost * 10));
        if whole || due {
            let started = Instant::now();
            match report::session_log(plan, outcome, &state.records) {
                Ok(text) => {
                    let _ = write(&self.shared.dir.path.join("session-log.md"), &text);
                }
                Err(e) => tracing::warn!("session log: {e}"),
            }
            state.log_written = Some(Instant::now());
            state.log_cost = started.elapsed();
        }
        let wanted: Vec<usize> = match only {
            Only::All => (0..outcome.scenarios.len())
                .filter(|&i| outcome.scenarios[i].phase != Phase::Pending)
                .collect(),
            Only::Unsettled => (0..outcome.scenarios.len())
                .filter(|&i| {
                    let s = &outcome.scenarios[i];
                    s.phase != Phase::Pending && !state.settled.contains(&s.id)
                })
                .collect(),
            Only::Scenario(id) => state.index.get(id).copied().into_iter().collect(),
        };
        for scenario in wanted.into_iter().filter_map(|i| outcome.scenarios.get(i)) {
            if scenario.phase == Phase::Done {
                state.settled.insert(scenario.id.clone());
            }
            match report::finding(plan, outcome, scenario) {
                Ok(text) => {
                    let _ = write(&self.shared.dir.findings_file(&scenario.id), &text);
                }
                Err(e) => tracing::warn!("findings for {}: {e}", scenario.id),
            }
            // Each arm also gets its own file (`S5-api.md`), holding only that arm.
            for run in scenario.runs.iter().filter(|r| r.id != scenario.id) {
                let arm = ScenarioOutcome {
                    verdict: run.decision.as_ref().map(|d| d.verdict),
                    tier_met: run.decision.as_ref().and_then(|d| d.tier_met),
                    reasons: run
                        .decision
                        .as_ref()
                        .map(|d| d.reasons.clone())
                        .unwrap_or_default(),
                    runs: vec![run.clone()],
                    ..scenario.clone()
                };
                match report::finding(plan, outcome, &arm) {
                    Ok(text) => {
                        let _ = write(&self.shared.dir.findings_file(&run.id), &text);
                    }
                    Err(e) => tracing::warn!("findings for {}: {e}", run.id),
                }
            }
        }
    }

    /// Follows the journal: every record is forwarded to `tap`, moves its scenario's
    /// phase, and refreshes that scenario's findings file. Ends when the journal closes.
    pub async fn follow(self, mut rx: Records, tap: Option<UnboundedSender<Record>>) {
        while let Some(record) = rx.recv().await {
            let scenario = record.scope.scenario.clone();
            let phase = crate::session::view::phase_of(&record.event);
            if let Some(tap) = &tap {
                let _ = tap.send(record.clone());
            }
            let mut state = self.lock();
            // `finish` may already have read this record from the file.
            if state
                .records
                .last()
                .is_some_and(|last| last.seq >= record.seq)
            {
                continue;
            }
            state.records.push(record);
            let at = scenario
                .as_ref()
                .and_then(|id| state.index.get(id).copied());
            if let (Some(at), Some(phase), Some(outcome)) = (at, phase, state.outcome.as_mut())
                && let Some(s) = outcome.scenarios.get_mut(at)
                && s.phase != Phase::Done
            {
                s.phase = phase;
            }
            let only = Only::Scenario(scenario.as_deref().unwrap_or(""));
            self.render(&mut state, only, false);
        }
    }

    /// Final documents: session log from the whole journal on disk, every findings
    /// file, `verdicts.json`, and the report (printed whole if it cannot be written).
    pub fn finish(&self, outcome: &SessionOutcome) -> Result<PathBuf, String> {
        let journal_path = self.shared.dir.path.join("journal.jsonl");
        let mut state = self.lock();
        if let Ok(contents) = crate::session::journal::read(&journal_path) {
            state.records = contents.records;
        }
        state.replace(outcome);
        self.render(&mut state, Only::All, true);
        let records = std::mem::take(&mut state.records);
        drop(state);
        // Every final document is tried; those that could not be written are named
        // with the report's own outcome.
        let mut unwritten = Vec::new();
        let json = report::verdicts_json(outcome);
        match serde_json::to_string_pretty(&json) {
            Ok(text) => {
                unwritten.extend(write(&self.shared.dir.path.join("verdicts.json"), &text).err())
            }
            Err(e) => unwritten.push(format!("verdicts.json: {e}")),
        }
        match report::junit(outcome, &records) {
            Ok(text) => unwritten.extend(
                write(
                    &self.shared.dir.path.join("findings").join("junit.xml"),
                    &text,
                )
                .err(),
            ),
            Err(e) => unwritten.push(format!("junit.xml: {e}")),
        }
        let path = self
            .shared
            .report_path
            .clone()
            .unwrap_or_else(|| self.shared.dir.path.join("findings").join("report.md"));
        let figures = report::figure_files(&self.shared.dir.path);
        let text = report::report(&self.shared.plan, outcome, &records, &figures)
            .map_err(|e| e.to_string())?;
        // The engine never prints: an unwritable report goes back whole, for whoever
        // owns the terminal to show once it may.
        let mut fallback = Vec::new();
        let written = report::write_report(&path, &text, &mut fallback);
        unwritten.extend(self.write_html(&path, &text).err());
        match written {
            Ok(true) if unwritten.is_empty() => Ok(path),
            Ok(true) => {
                unwritten.push(format!("report: {}", path.display()));
                Err(unwritten.join("\n"))
            }
            Ok(false) | Err(_) => {
                unwritten.push(String::from_utf8_lossy(&fallback).into_owned());
                Err(unwritten.join("\n"))
            }
        }
    }

    /// `report.html` beside the report at `report` (same stem), its figures read from
    /// the session's `figures/`. A failure is logged and returned.
    fn write_html(&self, report: &Path, markdown: &str) -> Result<(), String> {
        let Some(html) = report::html::html_path(report) else {
            tracing::warn!(
                "report.html not written: the report's own path {} ends in .html",
                report.display()
            );
            return Ok(());
        };
        // report.md's relative links are written from findings/, wherever it goes.
        let text = report::html::render(markdown, &self.shared.dir.path.join("findings"));
        write(&html, &text)
    }
}
