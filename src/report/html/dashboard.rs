//! The top of report.html: the session's verdict, and every scenario and arm as a
//! coloured verdict badge linking to its section, each on a lane of the session's
//! timeline (every iteration a bar on the session's clock, the deciding seed marked,
//! the fault windows below it shaded by proof state).
//!
//! Every fact is the reducer's: the verdicts are the outcome it folds from the
//! journal, and the bars and windows are read from its running iteration
//! ([`View::live`]) as the records are applied one by one, each change placed at the
//! time of the record that made it; the deciding seed is the one report.md shows the
//! figures of.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::escape;
use crate::report::journal_pass::Lines;
use crate::report::view::{FigureFiles, figures};
use crate::session::event::Event;
use crate::session::journal::{Record, Scope};
use crate::session::label::IterationLabel;
use crate::session::view::{Live, View};
use crate::verdict::{SessionVerdict, Verdict};

/// What the top of the page shows.
pub(super) struct Dashboard {
    verdict: Option<SessionVerdict>,
    started: String,
    finished: Option<String>,
    interrupted: Option<String>,
    /// One per scenario, then one per arm of a scenario that has arms.
    lanes: Vec<Lane>,
    /// The session's length on its clock (seconds from its first record).
    span_s: f64,
    /// Its start to its finish, when it has finished; else `span_s`.
    took_s: f64,
}

/// A scenario or arm: its badge and its iterations.
struct Lane {
    id: String,
    name: String,
    verdict: Option<Verdict>,
    kind: LaneKind,
    bars: Vec<Bar>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LaneKind {
    /// A scenario without arms: its one run's iterations.
    Scenario,
    /// A scenario with arms: its verdict aggregates theirs, its lanes follow.
    Arms,
    /// One arm of the scenario above.
    Arm,
}

/// One iteration on the session's clock (seconds from its start).
#[derive(Debug, Clone, PartialEq)]
struct Bar {
    label: IterationLabel,
    from: f64,
    to: f64,
    /// The seed that decided the verdict (the one whose figures report.md shows).
    deciding: bool,
    faults: Vec<FaultWindow>,
}

/// One fault of an iteration: from its intent to its heal (or the iteration's end).
#[derive(Debug, Clone, PartialEq)]
struct FaultWindow {
    fault: String,
    from: f64,
    to: f64,
    healed: bool,
    proven: Option<bool>,
}

impl Dashboard {
    /// The dashboard of the session whose report's links are relative to `base`
    /// (its `findings/`): its journal and its figures. `None` when there is no
    /// journal or it holds no outcome yet.
    pub(super) fn load(base: &Path) -> Option<Dashboard> {
        let session = base.parent()?;
        // Read record by record, never held whole (a read error ends it there).
        let lines = Lines::open(&session.join("journal.jsonl"), u64::MAX).ok()?;
        Dashboard::folded(
            lines.map_while(Result::ok),
            &crate::report::figure_files(session),
        )
    }

    /// The dashboard of `records`, the deciding seeds read from `files`.
    fn folded<R: Borrow<Record>>(
        records: impl IntoIterator<Item = R>,
        files: &FigureFiles,
    ) -> Option<Dashboard> {
        let (view, mut by_run, span_s) = fold(records);
        let outcome = view.outcome()?;
        let deciding: BTreeMap<String, String> = figures(&outcome, files)
            .runs
            .into_iter()
            .map(|f| (f.id, f.label))
            .collect();
        let mut bars_of = |id: &str| {
            let mut bars = by_run.remove(id).unwrap_or_default();
            if let Some(label) = deciding.get(id)
                && let Some(bar) = bars.iter_mut().find(|b| b.label.to_string() == *label)
            {
                bar.deciding = true;
            }
            bars
        };
        let mut lanes = Vec::new();
        for s in &outcome.scenarios {
            let arms = s.runs.iter().any(|r| r.id != s.id);
            lanes.push(Lane {
                id: s.id.clone(),
                name: s.name.clone(),
                verdict: s.verdict,
                kind: if arms {
                    LaneKind::Arms
                } else {
                    LaneKind::Scenario
                },
                bars: if arms { Vec::new() } else { bars_of(&s.id) },
            });
            if arms {
                for r in &s.runs {
                    lanes.push(Lane {
                        id: r.id.clone(),
                        name: s.name.clone(),
                        verdict: r.decision.as_ref().map(|d| d.verdict),
                        kind: LaneKind::Arm,
                        bars: bars_of(&r.id),
                    });
                }
            }
        }
        let took_s = match (
            instant(&outcome.started),
            outcome.finished.as_deref().and_then(instant),
        ) {
            (Some(from), Some(to)) if to >= from => to - from,
            _ => span_s,
        };
        Some(Dashboard {
            took_s,
            verdict: outcome.verdict,
            started: outcome.started,
            finished: outcome.finished,
            interrupted: outcome.interrupted,
            lanes,
            span_s,
        })
    }

    /// The tone (`tone-pass`, …) of the scenario or arm `id`, if it has a lane.
    pub(super) fn tone_of(&self, id: &str) -> Option<&'static str> {
        self.lanes
            .iter()
            .find(|l| l.id == id)
            .map(|l| verdict_tone(l.verdict))
    }

    /// The dashboard as HTML (every text of the session escaped).
    pub(super) fn html(&self) -> String {
        let mut out = String::with_capacity(8192);
        out.push_str("<section id=\"dashboard\" class=\"dashboard\" aria-label=\"The session at a glance\">\n");
        self.verdict_line(&mut out);
        out.push_str("<figure class=\"session-timeline\">\n<div class=\"lanes\">\n");
        let ticks = ticks(self.span_s);
        for lane in &self.lanes {
            self.lane(&mut out, lane, &ticks);
        }
        // The time axis, under the last lane's track.
        out.push_str(
            "<div class=\"lane axis\" aria-hidden=\"true\"><span></span><div class=\"track\">",
        );
        let step = ticks.get(1).copied().unwrap_or(self.span_s);
        for &t in &ticks {
            let _ = write!(
                out,
                "<span class=\"tick\" style=\"left:{:.3}%\">{}</span>",
                self.percent(t),
                tick_label(t, step)
            );
        }
        out.push_str("</div></div>\n</div>\n");
        out.push_str(LEGEND);
        out.push_str("</figure>\n</section>\n");
        out
    }

    fn verdict_line(&self, out: &mut String) {
        let (word, tone) = match self.verdict {
            Some(v) => (v.as_str(), session_tone(v)),
            None => ("not decided yet", "tone-grey"),
        };
        let _ = write!(
            out,
            "<div class=\"session-verdict {tone}\" data-session-verdict=\"{}\">\
             <span class=\"caption\">Session verdict</span> <strong>{}</strong>",
            escape(word),
            escape(word)
        );
        if let Some(v) = self.verdict {
            let _ = write!(
                out,
                " <span class=\"exit\">exit code {}</span>",
                i32::from(v.exit())
            );
        }
        // How many scenarios ended each way, in the badges' colours.
        let mut tally: Vec<(&'static str, &'static str, usize)> = Vec::new();
        for lane in self.lanes.iter().filter(|l| l.kind != LaneKind::Arm) {
            let (tone, family) = (verdict_tone(lane.verdict), family(lane.verdict));
            match tally.iter_mut().find(|t| t.1 == family) {
                Some(t) => t.2 += 1,
                None => tally.push((tone, family, 1)),
            }
        }
        let scenarios: usize = tally.iter().map(|t| t.2).sum();
        let _ = write!(
            out,
            " <span class=\"tally\">{scenarios} scenario{}:",
            if scenarios == 1 { "" } else { "s" }
        );
        for (tone, family, n) in tally {
            let _ = write!(out, " <span class=\"chip {tone}\">{n} {family}</span>");
        }
        out.push_str("</span>");
        let _ = write!(
            out,
            " <span class=\"when\">{} to {} ({})</span>",
            escape(&self.started),
            escape(self.finished.as_deref().unwrap_or("still running")),
            duration_words(self.took_s)
        );
        if let Some(why) = &self.interrupted {
            let _ = write!(out, " <span class=\"interrupted\">{}</span>", escape(why));
        }
        out.push_str("</div>\n");
    }

    fn lane(&self, out: &mut String, lane: &Lane, ticks: &[f64]) {
        let verdict = lane.verdict.map_or("not decided yet", Verdict::as_str);
        let tone = verdict_tone(lane.verdict);
        let class = match lane.kind {
            LaneKind::Arm => "lane arm",
            _ => "lane",
        };
        let _ = write!(
            out,
            "<div class=\"{class}\"><a class=\"badge {tone}\" href=\"#{}\" data-run=\"{}\" \
             data-verdict=\"{}\" title=\"{} {}: {}\"><b>{}</b> {}</a><div class=\"track\">",
            anchor(&lane.id),
            escape(&lane.id),
            escape(verdict),
            escape(&lane.id),
            escape(&lane.name),
            escape(verdict),
            escape(&lane.id),
            escape(verdict)
        );
        for &t in ticks.iter().filter(|t| **t > 0.0) {
            let _ = write!(
                out,
                "<span class=\"grid\" style=\"left:{:.3}%\"></span>",
                self.percent(t)
            );
        }
        if lane.bars.is_empty() {
            let note = match lane.kind {
                LaneKind::Arms => "its arms run below",
                _ => "no seed ran",
            };
            let _ = write!(out, "<span class=\"track-note\">{note}</span>");
        }
        for bar in &lane.bars {
            let kind = if bar.deciding {
                format!("bar deciding {tone}")
            } else if bar.label.is_seed() {
                "bar seed".to_string()
            } else {
                "bar extra".to_string()
            };
            let _ = write!(
                out,
                "<span class=\"{kind}\" style=\"left:{:.3}%;width:{:.3}%\" title=\"{} {}{}: {} to {}\"></span>",
                self.percent(bar.from),
                self.percent(bar.to - bar.from),
                escape(&lane.id),
                escape(&bar.label.words()),
                if bar.deciding {
                    ", which decided the verdict"
                } else {
                    ""
                },
                seconds(bar.from),
                seconds(bar.to)
            );
            for w in &bar.faults {
                let (class, state) = proof_words(w.proven);
                let _ = write!(
                    out,
                    "<span class=\"fault {class}\" style=\"left:{:.3}%;width:{:.3}%\" \
                     title=\"fault {} ({state}) in {} {}: {} to {}{}\"></span>",
                    self.percent(w.from),
                    self.percent(w.to - w.from),
                    escape(&w.fault),
                    escape(&lane.id),
                    escape(&bar.label.to_string()),
                    seconds(w.from),
                    seconds(w.to),
                    if w.healed { "" } else { " (not healed)" }
                );
            }
        }
        out.push_str("</div></div>\n");
    }

    fn percent(&self, s: f64) -> f64 {
        (s / self.span_s * 100.0).clamp(0.0, 100.0)
    }
}

/// The legend under the timeline: what a bar and a shading mean.
const LEGEND: &str = "<figcaption class=\"legend\">Each scenario and arm on the session's clock \
(from its start): a bar per iteration, the fault windows under it. \
<span class=\"key\"><span class=\"swatch bar seed\"></span>seed</span> \
<span class=\"key\"><span class=\"swatch bar deciding\"></span>the seed that decided the verdict (its figures are shown)</span> \
<span class=\"key\"><span class=\"swatch bar extra\"></span>re-run or reduction run</span> \
<span class=\"key\"><span class=\"swatch fault proof-proven\"></span>fault: landing proven</span> \
<span class=\"key\"><span class=\"swatch fault proof-not-proven\"></span>fault: landing NOT proven</span> \
<span class=\"key\"><span class=\"swatch fault proof-undecided\"></span>fault: undecided</span>\
</figcaption>\n";

/// Applies `records` one by one and reads the bars off the reducer's running
/// iterations: a bar opens at its `iteration-started` record and runs to the last
/// record of its run before the next one starts (or its run's verdict); a fault
/// window opens when the reducer first lists the fault and closes when it marks it
/// healed, carrying the reducer's proof state as the iteration left it. Returns the
/// view, the bars by run id and the session's length (seconds).
fn fold<R: Borrow<Record>>(
    records: impl IntoIterator<Item = R>,
) -> (View, BTreeMap<String, Vec<Bar>>, f64) {
    let mut view = View::default();
    let mut bars: BTreeMap<usize, Vec<Bar>> = BTreeMap::new();
    let mut open: BTreeMap<usize, bool> = BTreeMap::new();
    let mut rows: BTreeMap<(String, Option<String>), usize> = BTreeMap::new();
    let mut origin: Option<f64> = None;
    let mut end = 0.0_f64;
    for record in records {
        let record = record.borrow();
        view.apply(record);
        let Some(at) = instant(&record.ts) else {
            continue;
        };
        let t = at - *origin.get_or_insert(at);
        end = end.max(t);
        let Some(row) = row_of(&view, &record.scope, &mut rows) else {
            continue;
        };
        let Some(live) = view.live.get(&row) else {
            continue;
        };
        let list = bars.entry(row).or_default();
        if matches!(record.event, Event::IterationStarted(_)) {
            list.push(Bar {
                label: live.label,
                from: t,
                to: t,
                deciding: false,
                faults: Vec::new(),
            });
            open.insert(row, true);
            continue;
        }
        if !open.get(&row).copied().unwrap_or(false) || record.event.restates_outcome() {
            continue;
        }
        if let Some(bar) = list.last_mut() {
            follow(bar, live, t);
        }
        if matches!(record.event, Event::Verdict(_)) {
            open.insert(row, false);
        }
    }
    let by_id = bars
        .into_iter()
        .filter_map(|(row, bars)| Some((view.runs.get(row)?.id.clone(), bars)))
        .collect();
    (view, by_id, end.max(1.0))
}

/// The bar of `live` at time `t`: it reaches `t`; each fault the reducer lists is a
/// window that reaches `t` until healed, with the proof state the reducer gives it.
fn follow(bar: &mut Bar, live: &Live, t: f64) {
    bar.to = t;
    for (k, line) in live.faults.iter().enumerate() {
        if k == bar.faults.len() {
            bar.faults.push(FaultWindow {
                fault: line.mark.fault.clone(),
                from: t,
                to: t,
                healed: false,
                proven: None,
            });
        }
        let w = &mut bar.faults[k];
        w.proven = line.mark.proven;
        if !w.healed {
            w.to = t;
            w.healed = line.healed;
        }
    }
}

/// The reducer's row of a record's scope, as it files records: an arm by its id,
/// else the scenario's own row. Remembered per scope.
fn row_of(
    view: &View,
    scope: &Scope,
    rows: &mut BTreeMap<(String, Option<String>), usize>,
) -> Option<usize> {
    let scenario = scope.scenario.as_deref()?;
    let key = (scenario.to_string(), scope.arm.clone());
    if let Some(&row) = rows.get(&key) {
        return Some(row);
    }
    let row = view.runs.iter().position(|r| {
        r.scenario == scenario
            && match scope.arm.as_deref() {
                Some(arm) => r.arm.as_deref() == Some(arm) || r.id == arm,
                None => r.arm.is_none(),
            }
    })?;
    rows.insert(key, row);
    Some(row)
}

/// An RFC 3339 time as seconds since the epoch (ms precision).
fn instant(ts: &str) -> Option<f64> {
    chrono::DateTime::parse_from_rfc3339(ts)
        .ok()
        .map(|t| t.timestamp_millis() as f64 / 1000.0)
}

/// Where a scenario's or arm's section is: `run-D3`, `run-D5-api`.
pub(super) fn anchor(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("run-{safe}")
}

/// The badge colour of a verdict: PASS green, FAIL red, INCONCLUSIVE amber, PARTIAL
/// blue, NOT-RUN (and none yet) grey; the light theme's colours.
pub(super) fn verdict_tone(verdict: Option<Verdict>) -> &'static str {
    match verdict {
        Some(v) if v.is_pass() => "tone-pass",
        Some(v) if v.is_fail() => "tone-fail",
        Some(v) if v.is_inconclusive() => "tone-amber",
        Some(Verdict::PartialSurface | Verdict::PartialModel) => "tone-partial",
        _ => "tone-grey",
    }
}

/// A verdict's family, as the tally counts it.
fn family(verdict: Option<Verdict>) -> &'static str {
    match verdict {
        Some(v) if v.is_pass() => "PASS",
        Some(v) if v.is_fail() => "FAIL",
        Some(v) if v.is_inconclusive() => "INCONCLUSIVE",
        Some(Verdict::PartialSurface | Verdict::PartialModel) => "PARTIAL",
        Some(_) => "NOT-RUN",
        None => "undecided",
    }
}

fn session_tone(verdict: SessionVerdict) -> &'static str {
    match verdict {
        SessionVerdict::Done => "tone-pass",
        SessionVerdict::Fail => "tone-fail",
        SessionVerdict::DoneWithConcerns | SessionVerdict::Inconclusive => "tone-amber",
        SessionVerdict::Blocked => "tone-grey",
    }
}

/// A fault window's class and its state in the figures' words.
fn proof_words(proven: Option<bool>) -> (&'static str, &'static str) {
    match proven {
        Some(true) => ("proof-proven", "proven"),
        Some(false) => ("proof-not-proven", "NOT proven"),
        None => ("proof-undecided", "undecided"),
    }
}

fn seconds(s: f64) -> String {
    format!("{s:.1} s")
}

/// `59 s`, `4 min 12 s`, `2 h 3 min`.
fn duration_words(s: f64) -> String {
    let whole = s.round() as u64;
    match whole {
        0..60 => format!("{whole} s"),
        60..3600 => format!("{} min {} s", whole / 60, whole % 60),
        _ => format!("{} h {} min", whole / 3600, whole % 3600 / 60),
    }
}

/// Tick positions for an axis of `span` seconds, at most about seven: 0 and every
/// multiple of a round step (seconds, then minutes, then hours).
fn ticks(span: f64) -> Vec<f64> {
    const STEPS: [f64; 18] = [
        0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0,
        3600.0, 7200.0, 21600.0,
    ];
    let raw = span / 6.0;
    let step = STEPS
        .into_iter()
        .find(|s| *s >= raw)
        .unwrap_or_else(|| (raw / 86400.0).ceil() * 86400.0);
    (0..)
        .map(|k| f64::from(k) * step)
        .take_while(|t| *t <= span + step * 1e-9)
        .collect()
}

/// A tick's label: `20 s`, `5 min`, `2 h` (the unit its step is counted in).
fn tick_label(t: f64, step: f64) -> String {
    use super::super::figures::compact;
    if step >= 3600.0 {
        format!("{} h", compact(t / 3600.0))
    } else if step >= 60.0 {
        format!("{} min", compact(t / 60.0))
    } else {
        format!("{} s", compact(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_few() {
        let labels = |span: f64| {
            let t = ticks(span);
            let step = t.get(1).copied().unwrap_or(1.0);
            t.iter().map(|&v| tick_label(v, step)).collect::<Vec<_>>()
        };
        assert_eq!(
            labels(59.0),
            ["0 s", "10 s", "20 s", "30 s", "40 s", "50 s"]
        );
        assert_eq!(
            labels(1.0),
            ["0 s", "0.2 s", "0.4 s", "0.6 s", "0.8 s", "1 s"]
        );
        assert_eq!(
            labels(3600.0),
            [
                "0 min", "10 min", "20 min", "30 min", "40 min", "50 min", "60 min"
            ]
        );
        assert_eq!(labels(30000.0).last().map(String::as_str), Some("8 h"));
        assert_eq!(duration_words(59.4), "59 s");
        assert_eq!(duration_words(252.0), "4 min 12 s");
    }

    use crate::session::event::{
        FaultHealed, FaultIntent, FaultProof, IterationStarted, OutcomeScenario, OutcomeSession,
        VerdictEvent,
    };
    use crate::session::outcome::{Phase, RunOutcome, ScenarioOutcome, SessionOutcome};
    use crate::verdict::{Decision, Tier};

    /// A record `at` seconds after 12:00:00 UTC, scoped to `run` (`D5/api` an arm).
    fn record(seq: u64, at: f64, run: Option<&str>, event: Event) -> Record {
        let scope = match run.map(|r| (r, r.split_once('/'))) {
            Some((_, Some((scenario, _)))) | Some((scenario, None)) => Scope {
                scenario: Some(scenario.to_string()),
                arm: run.filter(|r| r.contains('/')).map(str::to_string),
            },
            None => Scope::default(),
        };
        let ms = (at * 1000.0).round() as u64;
        Record {
            seq,
            ts: format!(
                "2026-01-01T12:{:02}:{:02}.{:03}Z",
                ms / 60_000,
                ms / 1000 % 60,
                ms % 1000
            ),
            scope,
            event,
        }
    }

    fn run(id: &str, verdict: Verdict) -> RunOutcome {
        RunOutcome::decided(
            id,
            Decision {
                verdict,
                tier_met: None,
                reasons: Vec::new(),
            },
        )
    }

    fn scenario(id: &str, name: &str, verdict: Verdict, runs: Vec<RunOutcome>) -> ScenarioOutcome {
        ScenarioOutcome {
            id: id.into(),
            name: name.into(),
            phase: Phase::Done,
            verdict: Some(verdict),
            tier_met: None,
            reasons: Vec::new(),
            runs,
            finding: None,
            degraded: None,
            toolbox_used: Vec::new(),
        }
    }

    /// D2: seed-1 with a proven fault healed, seed-2 with a fault NOT proven and
    /// never healed, its verdict; D5 with a hostile name, its arm `api` run once and
    /// `admin` not run; then the outcome, journaled last.
    fn journal() -> Vec<Record> {
        let it = |seed| {
            Event::IterationStarted(IterationStarted {
                seed,
                label: IterationLabel::seed(seed),
                duration_ms: 1000,
            })
        };
        let intent = || {
            Event::FaultIntent(FaultIntent {
                fault: "pause-n3".into(),
                epoch: 1,
            })
        };
        let proof = |proven| {
            Event::FaultProof(FaultProof {
                fault: "pause-n3".into(),
                epoch: Some(1),
                proven,
                why: String::new(),
            })
        };
        let verdict = |id: &str, v| {
            Event::Verdict(VerdictEvent {
                id: id.into(),
                verdict: Some(v),
                tier_met: None,
                reasons: Vec::new(),
            })
        };
        let d2 = scenario(
            "D2",
            "paused",
            Verdict::PassHardening,
            vec![run("D2", Verdict::PassHardening)],
        );
        let d5 = scenario(
            "D5",
            "<script>x</script>",
            Verdict::PartialSurface,
            vec![
                run("D5/api", Verdict::PassSmoke),
                run("D5/admin", Verdict::NotRun),
            ],
        );
        let session = SessionOutcome {
            plan_path: "plan.md".into(),
            plan_slug: "demo".into(),
            sut_dir: String::new(),
            session_dir: String::new(),
            revision: None,
            operator: String::new(),
            tier: Tier::Hardening,
            started: "2026-01-01T12:00:00Z".into(),
            finished: Some("2026-01-01T12:00:20Z".into()),
            scenarios: Vec::new(),
            verdict: Some(SessionVerdict::DoneWithConcerns),
            interrupted: None,
            toolbox: Vec::new(),
            capabilities: Vec::new(),
        };
        let outcome = |s: ScenarioOutcome| {
            Event::OutcomeScenario(OutcomeScenario {
                outcome: Some(Box::new(s)),
            })
        };
        let (d2s, d5s) = (Some("D2"), Some("D5/api"));
        vec![
            record(1, 0.0, None, Event::ChecklistComplete(Default::default())),
            record(2, 1.0, d2s, it(1)),
            record(3, 2.0, d2s, intent()),
            record(4, 2.5, d2s, proof(true)),
            record(
                5,
                3.0,
                d2s,
                Event::FaultHealed(FaultHealed {
                    fault: "pause-n3".into(),
                    ..FaultHealed::default()
                }),
            ),
            record(6, 4.0, d2s, it(2)),
            record(7, 5.0, d2s, intent()),
            record(8, 5.5, d2s, proof(false)),
            record(9, 7.0, d2s, verdict("D2", Verdict::PassHardening)),
            record(10, 8.0, d5s, it(1)),
            record(11, 9.0, d5s, verdict("D5/api", Verdict::PassSmoke)),
            record(12, 15.0, d2s, outcome(d2)),
            record(13, 15.0, Some("D5"), outcome(d5)),
            record(
                14,
                16.0,
                None,
                Event::OutcomeSession(OutcomeSession {
                    outcome: Some(Box::new(session)),
                    order: vec!["D2".into(), "D5".into()],
                }),
            ),
        ]
    }

    #[test]
    fn lanes_and_bars_are_the_reducers_with_the_deciding_seed_marked() {
        let mut files = FigureFiles::default();
        files
            .by_stem
            .insert("D2".into(), vec!["seed-2-throughput.svg".into()]);
        let d = Dashboard::folded(journal(), &files).expect("an outcome");
        let ids: Vec<&str> = d.lanes.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids, ["D2", "D5", "D5/api", "D5/admin"]);
        assert_eq!((d.span_s, d.took_s), (16.0, 20.0));
        let window = |from, to, healed, proven| FaultWindow {
            fault: "pause-n3".into(),
            from,
            to,
            healed,
            proven,
        };
        assert_eq!(
            d.lanes[0].bars,
            [
                Bar {
                    label: IterationLabel::seed(1),
                    from: 1.0,
                    to: 3.0,
                    deciding: false,
                    faults: vec![window(2.0, 3.0, true, Some(true))],
                },
                // Its outcome, journaled later, does not stretch it.
                Bar {
                    label: IterationLabel::seed(2),
                    from: 4.0,
                    to: 7.0,
                    deciding: true,
                    faults: vec![window(5.0, 7.0, false, Some(false))],
                },
            ]
        );
        assert!(d.lanes[1].bars.is_empty() && d.lanes[3].bars.is_empty());
        assert_eq!(d.lanes[2].bars.len(), 1);
        assert_eq!(d.tone_of("D5/admin"), Some("tone-grey"));
        assert_eq!(d.tone_of("D5"), Some("tone-partial"));

        let html = d.html();
        assert_eq!(html.matches("<a class=\"badge ").count(), 4, "{html}");
        for (run, verdict) in [
            ("D2", "PASS-hardening"),
            ("D5", "PARTIAL-surface"),
            ("D5/api", "PASS-smoke"),
            ("D5/admin", "NOT-RUN"),
        ] {
            assert!(
                html.contains(&format!(
                    "href=\"#{}\" data-run=\"{run}\" data-verdict=\"{verdict}\"",
                    anchor(run)
                )),
                "{run}: {html}"
            );
        }
        assert!(html.contains("data-session-verdict=\"DONE_WITH_CONCERNS\""));
        assert!(html.contains("(20 s)"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"), "{html}");
        assert_eq!(html.matches("class=\"bar deciding tone-pass\"").count(), 1);
        assert_eq!(html.matches("class=\"fault proof-proven\"").count(), 1);
        assert_eq!(html.matches("class=\"fault proof-not-proven\"").count(), 1);
        assert!(html.contains("(not healed)"), "{html}");
    }

    #[test]
    fn a_session_is_read_from_the_journal_beside_its_findings() {
        let dir = tempfile::tempdir().expect("tmp");
        let findings = dir.path().join("findings");
        assert!(
            Dashboard::load(&findings).is_none(),
            "no journal, no dashboard"
        );
        let lines: Vec<String> = journal()
            .iter()
            .map(|r| serde_json::to_string(r).expect("a record"))
            .collect();
        std::fs::write(dir.path().join("journal.jsonl"), lines.join("\n") + "\n").expect("journal");
        let d = Dashboard::load(&findings).expect("read back");
        assert_eq!(d.lanes.len(), 4);
        assert_eq!(d.verdict, Some(SessionVerdict::DoneWithConcerns));
        // Without the outcome, nothing to show.
        let records = journal();
        assert!(Dashboard::folded(&records[..11], &FigureFiles::default()).is_none());
    }

    #[test]
    fn anchors_are_safe_in_an_attribute_and_a_fragment() {
        assert_eq!(anchor("D5/api"), "run-D5-api");
        assert_eq!(anchor("x\" onclick=\"y"), "run-x--onclick--y");
    }

    #[test]
    fn every_verdict_has_the_tone_of_its_family() {
        for v in Verdict::ALL {
            let tone = verdict_tone(Some(v));
            let want = match v.as_str().split('-').next() {
                Some("PASS") => "tone-pass",
                Some("FAIL") => "tone-fail",
                Some("INCONCLUSIVE") => "tone-amber",
                Some("PARTIAL") => "tone-partial",
                _ => "tone-grey",
            };
            assert_eq!(tone, want, "{v}");
        }
    }
}
