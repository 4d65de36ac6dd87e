//! What the templates lay out: plan and outcome joined per scenario and run.

use minijinja::value::Value;
use serde::Serialize;

use super::derived::{self, AdequacyView, Confidence, CoverageRow, SurfaceRow};
use super::lazy::{Asks, Index, List, lazy};
use crate::plan::{Field, Header, Hypothesis, Plan};
use crate::session::event::Event;
use crate::session::journal::Record;
use crate::session::label::IterationLabel;
use crate::session::outcome::{Phase, RunOutcome, ScenarioOutcome, SessionOutcome};
use crate::session::view::View;
use crate::verdict::{ReasonStep, Tier, Verdict};

/// One scenario with its plan entry and its runs.
#[derive(Serialize)]
pub struct ScenarioView<'a> {
    pub outcome: &'a ScenarioOutcome,
    pub plan: Option<PlanEntry<'a>>,
    pub has_arms: bool,
    /// `pending`, `running` or `done`.
    pub state: &'static str,
    /// The verdict's reason in words.
    pub reason: Option<String>,
    /// The last reason step, shown as a verdict's note.
    pub last_step: Option<&'a ReasonStep>,
    pub runs: Vec<RunView<'a>>,
    pub claims: Vec<Labelled<'a>>,
    pub hypotheses: Vec<Labelled<'a>>,
}

/// What the templates read of a scenario's plan entry (the entry whole would be
/// converted for every scenario of every report).
#[derive(Serialize)]
pub struct PlanEntry<'a> {
    pub oracle: Option<&'a Field>,
}

/// What report.md reads of the plan (its scenarios are read through
/// [`ScenarioView`]).
#[derive(Serialize)]
pub struct PlanPart<'a> {
    pub header: &'a Header,
    pub hypotheses: &'a [Hypothesis],
    pub confidence: Option<&'a str>,
}

/// One arm or scenario run with its own verdict.
#[derive(Serialize)]
pub struct RunView<'a> {
    pub run: &'a RunOutcome,
    pub verdict: Option<Verdict>,
    pub tier_met: Option<Tier>,
    /// The verdict's reason in words.
    pub reason: Option<String>,
    pub last_step: Option<&'a ReasonStep>,
}

/// A plan item id with its text (claim text, hypothesis title).
#[derive(Serialize)]
pub struct Labelled<'a> {
    pub id: &'a str,
    pub text: Option<&'a str>,
}

/// Everything report.md shows.
#[derive(Serialize)]
pub struct ReportView<'a> {
    pub plan: PlanPart<'a>,
    /// The session part (its scenarios are in `scenarios`).
    pub outcome: SessionOutcome,
    pub exit_code: Option<i32>,
    /// Every scenario, as [`ScenarioView`] (made as the template reads them, see
    /// [`super::lazy`]).
    pub scenarios: Value,
    pub coverage: Vec<CoverageRow<'a>>,
    pub surface: Vec<SurfaceRow<'a>>,
    /// The scenarios without a Release budget, as [`super::derived::Disclosure`].
    pub disclosures: Value,
    pub adequacy: Vec<AdequacyView<'a>>,
    pub confidence: Confidence<'a>,
    pub nodes: Vec<NodeView>,
    pub figures: FiguresView,
    /// The notes operators left on the run, in the order written.
    pub notes: Vec<NoteView>,
}

/// A verdict's reason as one sentence (`None` while undecided).
pub fn in_words(id: &str, verdict: Option<Verdict>, reasons: &[ReasonStep]) -> Option<String> {
    verdict.map(|v| crate::verdict::words::sentence(id, v, reasons))
}

/// Joins one scenario's outcome with its plan entry.
pub fn scenario<'a>(plan: &'a Plan, outcome: &'a ScenarioOutcome) -> ScenarioView<'a> {
    let planned = plan.scenarios.iter().find(|s| s.id == outcome.id);
    scenario_of(plan, planned, outcome)
}

/// [`scenario`] with its plan entry found already (`None`: the plan has none).
pub fn scenario_of<'a>(
    plan: &'a Plan,
    planned: Option<&'a crate::plan::Scenario>,
    outcome: &'a ScenarioOutcome,
) -> ScenarioView<'a> {
    let runs: Vec<RunView<'a>> = outcome
        .runs
        .iter()
        .map(|run| RunView {
            run,
            verdict: run.decision.as_ref().map(|d| d.verdict),
            tier_met: run.decision.as_ref().and_then(|d| d.tier_met),
            reason: run
                .decision
                .as_ref()
                .and_then(|d| in_words(&run.id, Some(d.verdict), &d.reasons)),
            last_step: run.decision.as_ref().and_then(|d| d.reasons.last()),
        })
        .collect();
    let has_arms = has_arms(planned.is_some_and(|s| !s.arms.is_empty()), outcome);
    let state = state(outcome);
    let claims = planned.map_or_else(Vec::new, |s| {
        s.falsifies
            .iter()
            .map(|id| Labelled {
                id,
                text: plan
                    .claims
                    .iter()
                    .find(|c| &c.id == id)
                    .map(|c| c.text.as_str()),
            })
            .collect()
    });
    let hypotheses = planned.map_or_else(Vec::new, |s| {
        s.closes
            .iter()
            .map(|id| Labelled {
                id,
                text: plan
                    .hypotheses
                    .iter()
                    .find(|h| &h.id == id)
                    .map(|h| h.title.as_str()),
            })
            .collect()
    });
    ScenarioView {
        outcome,
        plan: planned.map(|s| PlanEntry {
            oracle: s.oracle.as_ref(),
        }),
        has_arms,
        state,
        reason: in_words(&outcome.id, outcome.verdict, &outcome.reasons),
        last_step: outcome.reasons.last(),
        runs,
        claims,
        hypotheses,
    }
}

/// Whether a scenario shows as arms: the plan gives it arms (`planned`), or it ran
/// under another id.
pub fn has_arms(planned: bool, outcome: &ScenarioOutcome) -> bool {
    planned || outcome.runs.iter().any(|r| r.id != outcome.id)
}

/// `pending`, `running` or `done`.
pub fn state(outcome: &ScenarioOutcome) -> &'static str {
    match outcome.phase {
        Phase::Pending => "pending",
        Phase::Done => "done",
        _ => "running",
    }
}

/// The view report.md renders; `files` are the figures found in the session, and
/// the lists of one entry per scenario are made on request through `asks`.
pub fn report<'a>(
    index: &Index<'a>,
    view: &View,
    files: &FigureFiles,
    asks: &Asks,
) -> ReportView<'a> {
    let (plan, outcome) = (index.plan, index.outcome);
    ReportView {
        plan: PlanPart {
            header: &plan.header,
            hypotheses: &plan.hypotheses,
            confidence: plan.confidence.as_deref(),
        },
        outcome: outcome.head(),
        figures: figures(outcome, files),
        nodes: nodes(view, &outcome.session_dir),
        notes: notes(view),
        exit_code: outcome.verdict.map(|v| i32::from(v.exit())),
        scenarios: lazy(List::Scenarios, outcome.scenarios.len(), asks),
        coverage: derived::coverage(index, asks),
        surface: derived::surface(plan, outcome),
        disclosures: lazy(List::Disclosures, index.len(List::Disclosures), asks),
        adequacy: derived::adequacy(plan, outcome),
        confidence: derived::confidence(index, asks),
    }
}

/// Everything session-log.md shows.
#[derive(Serialize)]
pub struct SessionLogView<'a> {
    pub plan: &'a Plan,
    pub outcome: &'a SessionOutcome,
    /// Commit under test, `(dirty)` appended, or "not a git work tree".
    pub commit: String,
    pub journal: Vec<Entry<'a>>,
    pub toolbox: Vec<Entry<'a>>,
    pub capabilities: Vec<Entry<'a>>,
    pub preconditions: Vec<Entry<'a>>,
    pub scenarios: Vec<ScenarioView<'a>>,
    pub nodes: Vec<NodeView>,
}

/// A node of the run spec as the journal saw it: how it was reached (or why not) and
/// the logs of what ran on it.
#[derive(Serialize, Debug, PartialEq)]
pub struct NodeView {
    pub name: String,
    /// `user@host:port`; `None` while (or when) it was never reached.
    pub address: Option<String>,
    pub host_key: String,
    pub unreachable: Option<String>,
    /// Log files of the commands started on it, relative to the session directory.
    pub logs: Vec<String>,
}

/// Every node the journal names, in name order, as the reducer folded them; log
/// paths relative to the session directory.
pub fn nodes(view: &View, session_dir: &str) -> Vec<NodeView> {
    let relative = |path: &str| {
        std::path::Path::new(path)
            .strip_prefix(session_dir)
            .map_or_else(|_| path.to_string(), |p| p.display().to_string())
    };
    view.node_rows
        .iter()
        .map(|(name, row)| NodeView {
            name: name.clone(),
            address: row.address.clone(),
            host_key: row.host_key.clone(),
            unreachable: row.unreachable.clone(),
            logs: row.logs.iter().map(|l| relative(l)).collect(),
        })
        .collect()
}

/// A note as report.md shows it: every field but `text` escaped for inline markdown,
/// `text` as written (line breaks kept) for a fenced block whose `fence` no run of
/// backticks in it can close. An operator's words never become markup.
#[derive(Serialize, Debug, PartialEq)]
pub struct NoteView {
    pub seq: u64,
    /// When it was written (UTC, as journaled).
    pub ts: String,
    pub author: String,
    /// The run and iteration it was written during (`D3 (seed-2)`); `None` outside
    /// any run.
    pub during: Option<String>,
    pub text: String,
    pub fence: String,
}

/// The reducer's notes, in order, fit for report.md.
pub fn notes(view: &View) -> Vec<NoteView> {
    view.notes
        .iter()
        .map(|n| NoteView {
            seq: n.seq,
            ts: inline_markdown(&n.ts),
            author: inline_markdown(&n.author),
            during: n.during().as_deref().map(inline_markdown),
            text: n.text.clone(),
            fence: fence_for(&n.text),
        })
        .collect()
}

/// `text` (one line) with every character that could start markdown or HTML inline
/// escaped by a backslash, so it reads as the same words in any renderer.
fn inline_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::sanitize::line(text).chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '!' | '&' | '~' | '|' | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code fence longer than any run of backticks in `text` (at least three), so
/// nothing in it ends the block early.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// A journal record with the scope it is shown under (`D5/api`, `D3`, `session`).
#[derive(Serialize)]
pub struct Entry<'a> {
    pub record: &'a Record,
    pub scope: &'a str,
}

/// A record with the scope it is shown under.
pub fn entry(record: &Record) -> Entry<'_> {
    Entry {
        record,
        scope: record
            .scope
            .arm
            .as_deref()
            .or(record.scope.scenario.as_deref())
            .unwrap_or("session"),
    }
}

/// The commit under test as the session log states it.
pub fn commit(outcome: &SessionOutcome) -> String {
    match &outcome.revision {
        Some(rev) if rev.dirty => format!("{} (dirty)", rev.commit),
        Some(rev) => rev.commit.clone(),
        None => "not a git work tree".to_string(),
    }
}

/// The view session-log.md renders, from records in memory (see [`super::log`] for
/// the one written from the journal file as it is read).
pub fn session_log<'a>(
    plan: &'a Plan,
    outcome: &'a SessionOutcome,
    journal: &'a [Record],
) -> SessionLogView<'a> {
    let entries = |keep: fn(&Event) -> bool| -> Vec<Entry<'a>> {
        journal
            .iter()
            .filter(|r| keep(&r.event))
            .map(entry)
            .collect()
    };
    SessionLogView {
        plan,
        outcome,
        commit: commit(outcome),
        journal: entries(|e| !e.restates_outcome()),
        toolbox: entries(|e| matches!(e, Event::ToolboxItem(_))),
        capabilities: entries(|e| matches!(e, Event::Capability(_))),
        preconditions: entries(|e| matches!(e, Event::Precondition(_))),
        nodes: nodes(&View::of(journal), &outcome.session_dir),
        scenarios: outcome
            .scenarios
            .iter()
            .map(|s| scenario(plan, s))
            .collect(),
    }
}

/// The SVG files under a session's `figures/`, by scenario / arm file stem (`D5-api`),
/// as [`super::figure_files`] found them: the report links what is there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FigureFiles {
    pub by_stem: std::collections::BTreeMap<String, Vec<String>>,
}

/// One figure file, as report.md links it (relative to `findings/`).
#[derive(Serialize, Debug, PartialEq)]
pub struct FigureLink {
    /// `throughput`, `anomaly-1`, …
    pub name: String,
    /// `throughput of D2 seed-1`, escaped for markdown.
    pub alt: String,
    /// `../figures/D2/seed-1-throughput.svg`, ready for a markdown link.
    pub href: String,
}

/// The figures of one iteration label (`seed-2`, `seed-1-rerun`, `seed-1-reduce-3`).
#[derive(Serialize, Debug, PartialEq)]
pub struct LabelFigures {
    pub label: String,
    pub figures: Vec<FigureLink>,
}

/// A scenario's or arm's figures: those of the seed that decided its verdict, shown,
/// and every other iteration's, linked.
#[derive(Serialize, Debug, PartialEq)]
pub struct RunFigures {
    pub id: String,
    /// The deciding seed's label, and why it is that one.
    pub label: String,
    pub why: &'static str,
    pub shown: Vec<FigureLink>,
    pub others: Vec<LabelFigures>,
}

/// Every run's figures (runs with none are named in `without`).
#[derive(Serialize, Debug, PartialEq, Default)]
pub struct FiguresView {
    pub runs: Vec<RunFigures>,
    pub without: Vec<String>,
}

/// What report.md's Figures section shows for `outcome`, from the files found.
pub fn figures(outcome: &SessionOutcome, files: &FigureFiles) -> FiguresView {
    let mut view = FiguresView::default();
    for run in outcome.scenarios.iter().flat_map(|s| &s.runs) {
        let stem = crate::session::dir::file_stem_for_id(&run.id);
        let found = files.by_stem.get(&stem).map(Vec::as_slice).unwrap_or(&[]);
        match run_figures(run, &stem, found) {
            Some(figures) => view.runs.push(figures),
            None => view.without.push(run.id.clone()),
        }
    }
    view
}

fn run_figures(run: &RunOutcome, stem: &str, files: &[String]) -> Option<RunFigures> {
    // (figure name, file name) by label, the labels in the order they ran.
    let mut by_label: std::collections::BTreeMap<LabelOrder, Vec<(&str, &str)>> =
        Default::default();
    for file in files {
        // A file this naming does not explain is still linked, under `other`.
        let (label, name) = match split_figure_file(file) {
            Some((label, name)) => (label_order(Some(label), label.to_string()), name),
            None => (label_order(None, "other".to_string()), file.as_str()),
        };
        by_label.entry(label).or_default().push((name, file));
    }
    if by_label.is_empty() {
        return None;
    }
    let failing = run
        .seeds
        .iter()
        .find(|s| s.oracle.as_ref().is_some_and(|o| o.anomalies > 0));
    let (label, why) = match (failing, run.seeds.last()) {
        (Some(seed), _) => (
            IterationLabel::seed(seed.seed).to_string(),
            "the failing seed",
        ),
        (None, Some(seed)) => (
            IterationLabel::seed(seed.seed).to_string(),
            "the last seed run",
        ),
        // An outcome without its seeds: the last seed drawn.
        (None, None) => (
            by_label
                .keys()
                .rfind(|k| k.1.is_some_and(|l| l.is_seed()))
                .map_or_else(String::new, |k| k.2.clone()),
            "the last seed drawn",
        ),
    };
    let mut shown = Vec::new();
    let mut others = Vec::new();
    for ((.., this), mut names) in by_label {
        names.sort_by_key(|(name, _)| figure_order(name));
        let links: Vec<FigureLink> = names
            .into_iter()
            .map(|(name, file)| FigureLink {
                name: name.to_string(),
                alt: markdown_text(&format!("{name} of {} {this}", run.id)),
                href: markdown_destination(&format!("../figures/{stem}/{file}")),
            })
            .collect();
        if this == label {
            shown = links;
        } else {
            others.push(LabelFigures {
                label: this,
                figures: links,
            });
        }
    }
    Some(RunFigures {
        id: run.id.clone(),
        label,
        why,
        shown,
        others,
    })
}

/// `seed-3-latency.svg` → (`seed-3`, `latency`); the label may also be
/// `seed-3-rerun` or `seed-3-reduce-2` (the re-run and reduction candidates).
fn split_figure_file(file: &str) -> Option<(IterationLabel, &str)> {
    IterationLabel::split_prefix(file.strip_suffix(".svg")?)
}

/// Labels in the order they ran (a seed, its re-run, its reduction candidates by
/// number); a file this naming does not explain last, by name.
type LabelOrder = (bool, Option<IterationLabel>, String);

fn label_order(label: Option<IterationLabel>, name: String) -> LabelOrder {
    (label.is_none(), label, name)
}

/// Known figures first (throughput, latency, quantiles, lost-acks, anomaly-1, …),
/// then any other by name.
fn figure_order(name: &str) -> (u8, u64, String) {
    let known = ["throughput", "latency", "quantiles", "lost-acks"];
    if let Some(at) = known.iter().position(|k| *k == name) {
        return (u8::try_from(at).unwrap_or(0), 0, String::new());
    }
    match name.strip_prefix("anomaly-").and_then(|n| n.parse().ok()) {
        Some(n) => (4, n, String::new()),
        None => (5, 0, name.to_string()),
    }
}

/// Text that markdown shows as it is (in a link's text or an image's alt text).
fn markdown_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '[' | ']' | '*' | '_' | '`' | '<' | '>' | '!') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A link destination markdown reads whole: in `<…>` when it holds a space or a
/// parenthesis.
fn markdown_destination(path: &str) -> String {
    if path.contains(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '<' | '>')) {
        format!("<{}>", path.replace('<', "%3C").replace('>', "%3E"))
    } else {
        path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_files_split_into_label_and_name() {
        let cases = [
            ("seed-1-throughput.svg", Some(("seed-1", "throughput"))),
            ("seed-12-anomaly-3.svg", Some(("seed-12", "anomaly-3"))),
            (
                "seed-1-rerun-latency.svg",
                Some(("seed-1-rerun", "latency")),
            ),
            (
                "seed-2-reduce-10-lost-acks.svg",
                Some(("seed-2-reduce-10", "lost-acks")),
            ),
            (
                "seed-1-reduce-quantiles.svg",
                Some(("seed-1", "reduce-quantiles")),
            ),
            ("seed-1.svg", None),
            ("seed--x.svg", None),
            ("notes.svg", None),
            ("seed-1-throughput.png", None),
        ];
        for (file, want) in cases {
            let got = split_figure_file(file).map(|(l, n)| (l.to_string(), n));
            assert_eq!(got, want.map(|(l, n)| (l.to_string(), n)), "{file}");
        }
    }

    #[test]
    fn labels_and_figures_sort_in_the_order_they_are_read() {
        let mut labels = vec![
            "seed-10",
            "seed-2",
            "other",
            "seed-1-reduce-10",
            "seed-1-rerun",
            "seed-1-reduce-2",
            "seed-1",
        ];
        labels.sort_by_key(|l| label_order(l.parse().ok(), l.to_string()));
        assert_eq!(
            labels,
            [
                "seed-1",
                "seed-1-rerun",
                "seed-1-reduce-2",
                "seed-1-reduce-10",
                "seed-2",
                "seed-10",
                "other"
            ]
        );
        let mut names = vec![
            "zeta",
            "anomaly-10",
            "quantiles",
            "anomaly-2",
            "lost-acks",
            "alpha",
            "latency",
            "throughput",
        ];
        names.sort_by_key(|n| figure_order(n));
        assert_eq!(
            names,
            [
                "throughput",
                "latency",
                "quantiles",
                "lost-acks",
                "anomaly-2",
                "anomaly-10",
                "alpha",
                "zeta"
            ]
        );
    }

    #[test]
    fn markdown_text_and_destinations_stay_whole() {
        assert_eq!(markdown_text("a_b [c]"), "a\\_b \\[c\\]");
        assert_eq!(
            markdown_destination("../figures/D2/x.svg"),
            "../figures/D2/x.svg"
        );
        assert_eq!(
            markdown_destination("../figures/a b/x.svg"),
            "<../figures/a b/x.svg>"
        );
    }
}

#[cfg(test)]
mod figure_tests {
    use super::*;
    use crate::session::outcome::{OracleEvidence, SeedRun};

    fn seed(seed: u64, anomalies: u64) -> SeedRun {
        SeedRun {
            seed,
            landing: Vec::new(),
            oracle: Some(OracleEvidence {
                checker: "no-lost-ack".into(),
                ops_checked: 10,
                ops_produced: 10,
                anomalies,
                evidence: String::new(),
                cites: Vec::new(),
                listed: Vec::new(),
            }),
            env_missing: None,
            expired_step: None,
            services_ended: Vec::new(),
        }
    }

    fn run(id: &str, seeds: Vec<SeedRun>) -> RunOutcome {
        RunOutcome {
            id: id.into(),
            decision: None,
            seeds,
            rerun: None,
            audits: Vec::new(),
            artifacts: Vec::new(),
            reduction: None,
        }
    }

    fn files(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_failing_seed_is_shown_and_every_other_run_linked_in_order() {
        let found = files(&[
            "seed-1-throughput.svg",
            "seed-2-anomaly-2.svg",
            "seed-2-rerun-latency.svg",
            "seed-2-anomaly-1.svg",
            "seed-2-reduce-1-throughput.svg",
            "seed-2-latency.svg",
            "seed-2-lost-acks.svg",
            "seed-2-throughput.svg",
            "legend.svg",
        ]);
        let got =
            run_figures(&run("D3", vec![seed(1, 0), seed(2, 4)]), "D3", &found).expect("figures");
        assert_eq!(
            (got.label.as_str(), got.why),
            ("seed-2", "the failing seed")
        );
        let shown: Vec<&str> = got.shown.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            shown,
            [
                "throughput",
                "latency",
                "lost-acks",
                "anomaly-1",
                "anomaly-2"
            ]
        );
        assert_eq!(got.shown[0].alt, "throughput of D3 seed-2");
        assert_eq!(got.shown[0].href, "../figures/D3/seed-2-throughput.svg");
        let others: Vec<&str> = got.others.iter().map(|o| o.label.as_str()).collect();
        assert_eq!(
            others,
            ["seed-1", "seed-2-rerun", "seed-2-reduce-1", "other"]
        );
    }

    #[test]
    fn without_a_failure_the_last_seed_is_shown_and_an_arm_uses_its_file_stem() {
        let found = files(&["seed-1-throughput.svg", "seed-3-quantiles.svg"]);
        let arm = run("D5/api", vec![seed(1, 0), seed(2, 0), seed(3, 0)]);
        let got = run_figures(&arm, "D5-api", &found).expect("figures");
        assert_eq!(
            (got.label.as_str(), got.why),
            ("seed-3", "the last seed run")
        );
        assert_eq!(got.shown[0].href, "../figures/D5-api/seed-3-quantiles.svg");
        assert_eq!(got.shown[0].alt, "quantiles of D5/api seed-3");
        let none = run_figures(&run("D1", Vec::new()), "D1", &found).expect("figures");
        assert_eq!(
            (none.label.as_str(), none.why),
            ("seed-3", "the last seed drawn")
        );
        assert!(run_figures(&arm, "D5-api", &[]).is_none());
    }
}
