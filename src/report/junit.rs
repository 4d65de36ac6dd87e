//! `findings/junit.xml`: the session as the JUnit report CI systems read (Jenkins,
//! GitLab). One testsuite for the plan, one testcase per scenario run (a scenario
//! without arms, or each arm); FAIL is a failure carrying its reason chain,
//! INCONCLUSIVE / PARTIAL / NOT-RUN are skipped with the reason in words, and each
//! case's findings file is attached by path (`[[ATTACHMENT|path]]` in system-out).

use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, FixedOffset};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use crate::session::journal::Record;
use crate::session::outcome::{Phase, ScenarioOutcome, SessionOutcome};
use crate::session::view::View;
use crate::verdict::{ReasonStep, Tier, Verdict, words};

/// One testcase: a scenario without arms, or one arm.
struct Case<'a> {
    id: &'a str,
    scenario: &'a ScenarioOutcome,
    verdict: Option<Verdict>,
    tier_met: Option<Tier>,
    reasons: &'a [ReasonStep],
    seconds: f64,
}

/// How a case counts: a failure, skipped, or passed.
enum Kind {
    Failed,
    Skipped,
    Passed,
}

impl Case<'_> {
    fn kind(&self) -> Kind {
        match self.verdict {
            Some(v) if v.is_pass() => Kind::Passed,
            Some(v) if v.is_fail() => Kind::Failed,
            _ => Kind::Skipped,
        }
    }
}

/// The JUnit XML of `outcome`; `journal` gives each case's own wall time (the
/// reducer's: its first iteration's start to its verdict). The document is
/// quick-junit's (the model cargo-nextest writes): the root and the one testsuite
/// carry the counts it keeps as cases are added, every time is seconds to the
/// millisecond.
pub fn junit(outcome: &SessionOutcome, journal: &[Record]) -> std::io::Result<String> {
    let first_last = journal.first().zip(journal.last());
    of_view(
        outcome,
        &View::of(journal),
        first_last.map(|(f, l)| (f.ts.as_str(), l.ts.as_str())),
    )
}

/// [`junit`] from the reducer's `view` of the journal and its first and last
/// records' times.
pub fn of_view(
    outcome: &SessionOutcome,
    view: &View,
    first_last: Option<(&str, &str)>,
) -> std::io::Result<String> {
    let cases = cases(outcome, view);
    // The journal's first to last record (milliseconds), else the outcome's own
    // start and end (whole seconds), else the cases' sum.
    let total = first_last
        .and_then(|(first, last)| span(first, Some(last)))
        .or_else(|| span(&outcome.started, outcome.finished.as_deref()))
        .unwrap_or_else(|| cases.iter().map(|c| c.seconds).sum());
    let name = clean_line(&outcome.plan_slug);

    let mut suite = TestSuite::new(name.as_str());
    suite.set_time(duration(total));
    // xs:dateTime; a start that does not parse is left out rather than guessed.
    if let Ok(started) = DateTime::parse_from_rfc3339(&outcome.started) {
        suite.set_timestamp(started);
    }
    suite.add_properties(properties(outcome));
    for case in &cases {
        suite.add_test_case(testcase(outcome, case));
    }
    let mut report = Report::new(name.as_str());
    report.set_time(duration(total));
    report.add_test_suite(suite);
    report.to_string().map_err(std::io::Error::other)
}

/// Every scenario run in plan order; a scenario that holds no run yet is one case.
fn cases<'a>(outcome: &'a SessionOutcome, view: &View) -> Vec<Case<'a>> {
    // The first row of an id counts (looked up once, not per case).
    let mut rows = std::collections::HashMap::new();
    for row in view.runs.iter().rev() {
        rows.insert(row.id.as_str(), row);
    }
    let took = |id: &str| {
        rows.get(id)
            .map_or(0.0, |row| crate::session::view::RunRow::seconds(row))
    };
    let mut out = Vec::new();
    for s in &outcome.scenarios {
        if s.runs.is_empty() {
            out.push(Case {
                id: &s.id,
                scenario: s,
                verdict: s.verdict,
                tier_met: s.tier_met,
                reasons: &s.reasons,
                seconds: took(&s.id),
            });
        }
        for run in &s.runs {
            out.push(Case {
                id: &run.id,
                scenario: s,
                verdict: run.decision.as_ref().map(|d| d.verdict),
                tier_met: run.decision.as_ref().and_then(|d| d.tier_met),
                reasons: run.decision.as_ref().map_or(&[][..], |d| &d.reasons[..]),
                seconds: took(&run.id),
            });
        }
    }
    out
}

fn span(from: &str, to: Option<&str>) -> Option<f64> {
    let parse = |t: &str| DateTime::parse_from_rfc3339(t).ok();
    let (from, to): (DateTime<FixedOffset>, _) = (parse(from)?, parse(to?)?);
    let ms = (to - from).num_milliseconds();
    (ms >= 0).then(|| ms as f64 / 1000.0)
}

/// Seconds as the document writes them: whole milliseconds, never negative.
fn duration(s: f64) -> Duration {
    Duration::from_millis((s.max(0.0) * 1000.0).round() as u64)
}

/// What a CI page shows beside the counts: the session verdict and where to look.
fn properties(outcome: &SessionOutcome) -> Vec<Property> {
    let mut props: Vec<(&str, String)> = vec![
        ("plan", outcome.plan_path.clone()),
        ("session", outcome.session_dir.clone()),
        ("tier", outcome.tier.as_str().to_string()),
        (
            "session_verdict",
            outcome
                .verdict
                .map_or("none yet", |v| v.as_str())
                .to_string(),
        ),
    ];
    if let Some(rev) = &outcome.revision {
        let dirty = if rev.dirty { " (dirty)" } else { "" };
        props.push(("revision", format!("{}{dirty}", rev.commit)));
    }
    if let Some(why) = &outcome.interrupted {
        props.push(("interrupted", why.clone()));
    }
    props
        .into_iter()
        .map(|(name, value)| Property::new(name, clean_line(&value)))
        .collect()
}

fn testcase(outcome: &SessionOutcome, case: &Case<'_>) -> TestCase {
    let s = case.scenario;
    let name = clean_line(&format!("{} {}", case.id, s.name));
    let classname = clean_line(&format!("{}.{}", outcome.plan_slug, s.id));
    let sentence = clean_line(&match case.verdict {
        Some(v) => words::sentence(case.id, v, case.reasons),
        None => undecided(case.id, s, outcome),
    });
    let label = case.verdict.map_or("no verdict", |v| v.as_str());
    let chain = chain(case);
    let mut out = format!("{}: {label}", case.id);
    if let Some(tier) = case.tier_met {
        out.push_str(&format!(" (tier met: {})", tier.as_str()));
    }
    out.push('\n');
    if let Some(note) = &s.degraded {
        out.push_str(&format!("degraded: {note}\n"));
    }
    out.push_str(&chain);
    // The findings file exists once the scenario has started (outputs.rs writes it).
    if s.phase != Phase::Pending {
        let file = crate::session::dir::file_stem_for_id(case.id);
        let path = Path::new(&outcome.session_dir)
            .join("findings")
            .join(format!("{file}.md"));
        out.push_str(&format!("[[ATTACHMENT|{}]]\n", path.display()));
        // Its seeds' figures, as written beside their metrics.
        let figures = Path::new(&outcome.session_dir).join("figures").join(&file);
        let mut drawn: Vec<_> = std::fs::read_dir(&figures)
            .map(|dir| dir.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        drawn.retain(|p| p.extension().is_some_and(|e| e == "svg"));
        drawn.sort();
        for figure in drawn {
            out.push_str(&format!("[[ATTACHMENT|{}]]\n", figure.display()));
        }
    }
    let status = match case.kind() {
        Kind::Failed => {
            let mut body = chain;
            if let Some(f) = &s.finding {
                body.push_str(&finding_text(f));
            }
            let mut failure = TestCaseStatus::non_success(NonSuccessKind::Failure);
            failure
                .set_message(sentence)
                .set_type(label)
                .set_description(clean_text(&body));
            failure
        }
        Kind::Skipped => {
            let mut skipped = TestCaseStatus::skipped();
            skipped.set_message(sentence);
            skipped
        }
        Kind::Passed => TestCaseStatus::success(),
    };
    let mut testcase = TestCase::new(name, status);
    testcase
        .set_classname(classname)
        .set_time(duration(case.seconds))
        .set_system_out(clean_text(&out));
    testcase
}

/// Why a case holds no verdict: not reached, or stopped before it was decided.
fn undecided(id: &str, s: &ScenarioOutcome, outcome: &SessionOutcome) -> String {
    let phase = serde_json::to_value(s.phase)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    match &outcome.interrupted {
        Some(why) => format!("{id} has no verdict: the session was stopped ({why}) at {phase}"),
        None => format!("{id} has no verdict yet (phase {phase})"),
    }
}

/// The decision tree's steps, one a line, with the journal records they cite.
fn chain(case: &Case<'_>) -> String {
    let mut text = String::new();
    for (i, step) in case.reasons.iter().enumerate() {
        text.push_str(&format!("{}. {} {}", i + 1, step.question, step.answer));
        if !step.cites.is_empty() {
            let cites: Vec<String> = step.cites.iter().map(|c| format!("#{c}")).collect();
            text.push_str(&format!(" (journal {})", cites.join(", ")));
        }
        text.push('\n');
    }
    text
}

fn finding_text(f: &crate::session::outcome::Finding) -> String {
    let mut text = format!(
        "finding {}: {}\nreproducer: {}\n",
        f.id, f.what_happened, f.reproducer
    );
    if let Some(reduction) = &f.reduction {
        text.push_str(&format!("reduction: {reduction}\n"));
    }
    if !f.anomalies.is_empty() {
        text.push_str(&format!("anomalies ({} in all):\n", f.anomalies_total));
        for a in &f.anomalies {
            text.push_str(&format!("- {a}\n"));
        }
    }
    text
}

/// One line of text fit for an attribute: no control characters (child output may
/// reach the reasons), nothing XML 1.0 cannot hold.
fn clean_line(text: &str) -> String {
    crate::sanitize::line(&text.replace(['\n', '\r'], " "))
        .chars()
        .filter(|c| !matches!(c, '\u{fffe}' | '\u{ffff}'))
        .collect()
}

/// Multi-line text, each line cleaned as [`clean_line`] does.
fn clean_text(text: &str) -> String {
    text.lines().map(clean_line).collect::<Vec<_>>().join("\n")
}
