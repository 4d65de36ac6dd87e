//! Keeps the session directory's documents current while the session runs:
//! `session-log.md` and `findings/<id>.md` are rewritten as journal records arrive
//! (so a killed run still leaves partial findings); `verdicts.json`, `junit.xml` and
//! the report (`report.md`, and `report.html` beside it) are written at the end.
//!
//! Nothing here holds the journal's records or a copy of the outcome: the session
//! log is written from the journal file, read as a stream (see
//! [`crate::report::journal_pass`]); the only scenarios kept are those started and
//! not yet written done, whose findings a record may still change.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedSender;

use super::request::Records;
use crate::plan::Plan;
use crate::report;
use crate::report::journal_pass::Pass;
use crate::session::dir::SessionDir;
use crate::session::journal::Record;
use crate::session::outcome::{Phase, ScenarioOutcome, SessionOutcome};
use crate::verdict::Tier;

#[derive(Clone)]
pub struct Outputs {
    shared: Arc<Shared>,
}

struct Shared {
    plan: Arc<Plan>,
    dir: SessionDir,
    report_path: Option<PathBuf>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The session's tier, once an outcome was published: what a finding states.
    tier: Option<Tier>,
    /// Each scenario started and not yet written done, as last published, its phase
    /// moved on by the records since: what a record's refresh of its findings shows.
    live: HashMap<String, ScenarioOutcome>,
    /// Scenarios whose findings were written after they were done: unchanged since,
    /// so a publish does not write them again.
    settled: HashSet<String>,
    /// When the session log was last written, and what writing it cost.
    log_written: Option<Instant>,
    log_cost: Duration,
}

/// The session log is rewritten at most this often while the run goes (and whole at
/// the end), and never more than a tenth of the time: its cost grows with the
/// journal, the cost of a record must not.
const LOG_EVERY: Duration = Duration::from_secs(1);

/// Replaces the document at `path` whole (a full disk leaves its previous version);
/// a failure is logged and returned, naming the file.
fn write(path: &Path, text: &str) -> Result<(), String> {
    written(path, crate::atomic::write(path, text.as_bytes()))
}

/// A write's failure logged and returned, naming the file.
fn written(path: &Path, result: std::io::Result<()>) -> Result<(), String> {
    result.map_err(|e| {
        let why = format!(
            "{} could not be written (its previous version, if any, is kept): {e}",
            path.display()
        );
        tracing::warn!("{why}");
        why
    })
}

impl Outputs {
    /// The documents of the session in `dir` run from `plan` (shared, not copied).
    pub fn new(plan: Arc<Plan>, dir: &SessionDir, report_path: Option<PathBuf>) -> Outputs {
        Outputs {
            shared: Arc::new(Shared {
                plan,
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

    fn journal_path(&self) -> PathBuf {
        self.shared.dir.path.join("journal.jsonl")
    }

    /// Takes the engine's latest outcome and rewrites the documents from it: the
    /// findings of every started scenario not yet written done, and the session log
    /// when it is due.
    pub fn publish(&self, outcome: &SessionOutcome) {
        let mut state = self.lock();
        state.tier = Some(outcome.tier);
        for scenario in &outcome.scenarios {
            if scenario.phase != Phase::Pending && !state.settled.contains(&scenario.id) {
                self.took(&mut state, scenario);
            }
        }
        self.log(&mut state, Some(outcome), false);
    }

    /// [`Outputs::publish`] when, of the scenarios, only `index` changed: that one's
    /// findings are written, not every scenario's (whose cost would grow with the
    /// session).
    pub fn publish_at(&self, outcome: &SessionOutcome, index: usize) {
        let mut state = self.lock();
        state.tier = Some(outcome.tier);
        if let Some(scenario) = outcome.scenarios.get(index)
            && scenario.phase != Phase::Pending
        {
            self.took(&mut state, scenario);
        }
        self.log(&mut state, Some(outcome), false);
    }

    /// Writes `scenario`'s findings; keeps it while it may change, forgets it once
    /// written done.
    fn took(&self, state: &mut State, scenario: &ScenarioOutcome) {
        let Some(tier) = state.tier else {
            return;
        };
        self.findings(tier, scenario);
        if scenario.phase == Phase::Done {
            state.live.remove(&scenario.id);
            state.settled.insert(scenario.id.clone());
        } else {
            state.live.insert(scenario.id.clone(), scenario.clone());
        }
    }

    /// Rewrites the session log when it is due (or `whole`): from the journal file,
    /// with `outcome`, or else the outcome the journal holds.
    fn log(&self, state: &mut State, outcome: Option<&SessionOutcome>, whole: bool) {
        let due = state
            .log_written
            .is_none_or(|at| at.elapsed() >= LOG_EVERY.max(state.log_cost * 10));
        if !(whole || due) {
            return;
        }
        let started = Instant::now();
        match Pass::read(&self.journal_path()) {
            Ok(pass) => {
                let _ = self.write_log(&pass, outcome);
            }
            Err(e) => tracing::warn!("session log: {e}"),
        }
        state.log_written = Some(Instant::now());
        state.log_cost = started.elapsed();
    }

    /// `session-log.md` from `pass`, with `outcome` or the one the journal holds
    /// (none before the first is journaled: nothing is written then).
    fn write_log(&self, pass: &Pass, outcome: Option<&SessionOutcome>) -> Result<(), String> {
        let journaled;
        let outcome = match outcome {
            Some(outcome) => outcome,
            None => match pass.view.outcome() {
                Some(o) => {
                    journaled = o;
                    &journaled
                }
                None => return Ok(()),
            },
        };
        let path = self.shared.dir.path.join("session-log.md");
        written(
            &path,
            crate::atomic::write_with(&path, |out| {
                report::write_session_log(&self.shared.plan, outcome, pass, out)
            }),
        )
    }

    /// Writes `scenario`'s findings file, and one for each of its arms (`S5-api.md`,
    /// holding only that arm).
    fn findings(&self, tier: Tier, scenario: &ScenarioOutcome) {
        let plan = &self.shared.plan;
        match report::finding_at(plan, tier, scenario) {
            Ok(text) => {
                let _ = write(&self.shared.dir.findings_file(&scenario.id), &text);
            }
            Err(e) => tracing::warn!("findings for {}: {e}", scenario.id),
        }
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
            match report::finding_at(plan, tier, &arm) {
                Ok(text) => {
                    let _ = write(&self.shared.dir.findings_file(&run.id), &text);
                }
                Err(e) => tracing::warn!("findings for {}: {e}", run.id),
            }
        }
    }

    /// Follows the journal: every record is forwarded to `tap`, moves its scenario's
    /// phase, and refreshes that scenario's findings file and (when due) the session
    /// log. Ends when the journal closes.
    pub async fn follow(self, mut rx: Records, tap: Option<UnboundedSender<Record>>) {
        while let Some(record) = rx.recv().await {
            let phase = crate::session::view::phase_of(&record.event);
            let scenario = record.scope.scenario.clone();
            if let Some(tap) = &tap {
                let _ = tap.send(record);
            }
            let mut state = self.lock();
            if let (Some(id), Some(tier)) = (scenario, state.tier)
                && let Some(live) = state.live.get_mut(&id)
            {
                if let Some(phase) = phase {
                    live.phase = phase;
                }
                self.findings(tier, live);
            }
            self.log(&mut state, None, false);
        }
    }

    /// Final documents, from one pass over the journal file: the session log, every
    /// findings file, `verdicts.json`, `junit.xml` and the report (printed whole if
    /// it cannot be written), each from `outcome`.
    pub fn finish(&self, outcome: &SessionOutcome) -> Result<PathBuf, String> {
        let mut state = self.lock();
        state.tier = Some(outcome.tier);
        state.live.clear();
        for scenario in outcome
            .scenarios
            .iter()
            .filter(|s| s.phase != Phase::Pending)
        {
            self.findings(outcome.tier, scenario);
        }
        // Every final document is tried; those that could not be written are named
        // with the report's own outcome.
        let mut unwritten = Vec::new();
        let pass = match Pass::read(&self.journal_path()) {
            Ok(pass) => {
                unwritten.extend(self.write_log(&pass, Some(outcome)).err());
                pass
            }
            // The log is not rewritten without its journal; the rest is, from the
            // outcome alone.
            Err(e) => {
                unwritten.push(format!("session-log.md not rewritten: {e}"));
                Pass::of(&[])
            }
        };
        state.log_written = Some(Instant::now());
        drop(state);
        unwritten.extend(self.write_verdicts(outcome).err());
        match report::junit_of(outcome, &pass) {
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
        let text = report::report_of(&self.shared.plan, outcome, &pass.view, &figures)
            .map_err(|e| e.to_string())?;
        drop(pass);
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

    /// `verdicts.json` from `outcome`, written as it is serialized; its JSON value is
    /// gone before the report is laid out (the two together were the session's peak).
    fn write_verdicts(&self, outcome: &SessionOutcome) -> Result<(), String> {
        let path = self.shared.dir.path.join("verdicts.json");
        let json = report::verdicts_json(outcome);
        written(
            &path,
            crate::atomic::write_with(&path, |out| {
                serde_json::to_writer_pretty(out, &json).map_err(std::io::Error::other)
            }),
        )
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
        let findings = self.shared.dir.path.join("findings");
        written(
            &html,
            crate::atomic::write_with(&html, |out| {
                report::html::render_to(markdown, &findings, out)
            }),
        )
    }

    /// How many scenarios this holds a copy of (those started and not yet written
    /// done): what a test checks stays small however long the session.
    pub fn scenarios_held(&self) -> usize {
        self.lock().live.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::event::{Event, Precondition};
    use crate::session::journal::{Journal, Scope};
    use crate::verdict::Verdict;

    fn pending(id: &str) -> ScenarioOutcome {
        ScenarioOutcome {
            id: id.into(),
            name: format!("copy {id}"),
            phase: Phase::Pending,
            verdict: None,
            tier_met: None,
            reasons: Vec::new(),
            runs: Vec::new(),
            finding: None,
            degraded: None,
            toolbox_used: Vec::new(),
        }
    }

    /// However many scenarios a session has done, the documents' writer holds a copy
    /// of only those still running, and the session log it writes shows the journal
    /// on disk (the records it was never handed too).
    #[test]
    fn only_running_scenarios_are_held_and_the_log_is_the_journal_s() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("findings")).expect("findings");
        let session = SessionDir {
            path: dir.path().to_path_buf(),
        };
        let plan = Arc::new(crate::plan::parse_plan(
            "plan.md",
            // Not the launcher's copy: it sits above the engine (the layering test).
            include_str!("../../examples/demo/plan.md"),
        ));
        let mut journal = Journal::open(&dir.path().join("journal.jsonl")).expect("journal");
        for n in 0..3 {
            journal
                .append(
                    Scope::default(),
                    Event::Precondition(Precondition {
                        name: format!("check-{n}"),
                        ok: true,
                        cites: Vec::new(),
                    }),
                )
                .expect("append");
        }
        let outputs = Outputs::new(plan, &session, None);
        let mut outcome = SessionOutcome {
            plan_path: "plan.md".into(),
            plan_slug: "demo".into(),
            sut_dir: ".".into(),
            session_dir: dir.path().display().to_string(),
            revision: None,
            operator: "--yes".into(),
            tier: Tier::Smoke,
            started: "2026-12-04T00:00:00Z".into(),
            finished: None,
            scenarios: Vec::new(),
            verdict: None,
            interrupted: None,
            toolbox: Vec::new(),
            capabilities: Vec::new(),
        };
        outcome.scenarios = (1..=200).map(|i| pending(&format!("S{i}"))).collect();
        outputs.publish(&outcome);
        assert_eq!(outputs.scenarios_held(), 0, "nothing started yet");
        for i in 0..200 {
            outcome.scenarios[i].phase = Phase::Preconditions;
            outputs.publish_at(&outcome, i);
            assert_eq!(outputs.scenarios_held(), 1, "S{} running", i + 1);
            outcome.scenarios[i].phase = Phase::Done;
            outcome.scenarios[i].verdict = Some(Verdict::NotRun);
            outputs.publish_at(&outcome, i);
            assert_eq!(outputs.scenarios_held(), 0, "S{} done", i + 1);
        }
        assert!(dir.path().join("findings").join("S200.md").exists());
        outputs.finish(&outcome).expect("finished");
        let log = std::fs::read_to_string(dir.path().join("session-log.md")).expect("log");
        for n in 0..3 {
            assert!(log.contains(&format!("| check-{n} |")), "{log}");
        }
        assert!(log.contains("| S200 | — | NOT-RUN |"), "{log}");
    }
}
