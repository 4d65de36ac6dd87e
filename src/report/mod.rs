//! Renders what a session produced (session log, findings, report, verdicts.json)
//! from the templates in `assets/`.

mod cells;
mod cycle;
mod derived;
pub mod figures;
pub mod html;
pub mod journal_pass;
mod json;
mod junit;
mod lazy;
mod log;
mod templates;
pub mod timeline;
mod view;

use std::io::Write;
use std::path::Path;

use crate::plan::Plan;
use crate::session::journal::Record;
use crate::session::outcome::{ScenarioOutcome, SessionOutcome};
use crate::session::view::View;

pub use json::{VerdictsJson, verdicts_json};

/// Journal records as a report cites them: `#12, #14` (`—` for none).
pub fn cites_text(seqs: &[u64]) -> String {
    cells::cites(seqs.to_vec())
}
pub use view::FigureFiles;

/// A template failed to load or render.
#[derive(Debug, thiserror::Error)]
#[error("template {template}: {source:#}")]
pub struct RenderError {
    /// The template's name, e.g. `report.md.j2`.
    pub template: &'static str,
    #[source]
    pub source: minijinja::Error,
}

/// `session-log.md`: header, toolbox, capabilities, preconditions, timeline, verdicts,
/// artifacts (method §2.4).
pub fn session_log(
    plan: &Plan,
    outcome: &SessionOutcome,
    journal: &[Record],
) -> Result<String, RenderError> {
    templates::render(
        "session-log.md.j2",
        &view::session_log(plan, outcome, journal),
    )
}

/// [`session_log`] written to `out` as it is rendered: the journal's facts from
/// `pass`, its timeline read from the journal file record by record (the same
/// document, not held whole, nor the journal's records). An error reading the
/// journal or rendering is returned, and `out` holds part of the log.
pub fn write_session_log(
    plan: &Plan,
    outcome: &SessionOutcome,
    pass: &journal_pass::Pass,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    log::write(plan, outcome, pass, out)
}

/// `findings/<id>.md` for one scenario, readable at any phase.
pub fn finding(
    plan: &Plan,
    outcome: &SessionOutcome,
    scenario: &ScenarioOutcome,
) -> Result<String, RenderError> {
    finding_at(plan, outcome.tier, scenario)
}

/// [`finding`] in a session run at `tier`.
pub fn finding_at(
    plan: &Plan,
    tier: crate::verdict::Tier,
    scenario: &ScenarioOutcome,
) -> Result<String, RenderError> {
    // Only what the template reads of the session: handing it the whole outcome
    // would convert every scenario for each finding, a cost that grows with the
    // session (issue 15's flat-cost bench).
    #[derive(serde::Serialize)]
    struct SessionPart {
        tier: crate::verdict::Tier,
    }
    #[derive(serde::Serialize)]
    struct FindingView<'a> {
        outcome: SessionPart,
        scenario: view::ScenarioView<'a>,
    }
    templates::render(
        "finding.md.j2",
        &FindingView {
            outcome: SessionPart { tier },
            scenario: view::scenario(plan, scenario),
        },
    )
}

/// `findings/report.md` (method §7); `journal` says which nodes ran what, `figures`
/// which figures there are to link (see [`figure_files`]).
pub fn report(
    plan: &Plan,
    outcome: &SessionOutcome,
    journal: &[Record],
    figures: &FigureFiles,
) -> Result<String, RenderError> {
    report_of(plan, outcome, &View::of(journal), figures)
}

/// [`report`] from the reducer's `view` of the journal.
pub fn report_of(
    plan: &Plan,
    outcome: &SessionOutcome,
    view: &View,
    figures: &FigureFiles,
) -> Result<String, RenderError> {
    let index = lazy::Index::new(plan, outcome);
    lazy::rendering(&index, |asks| {
        templates::render("report.md.j2", &view::report(&index, view, figures, asks))
    })
}

/// The SVG figures under `<session>/figures/<stem>/`, read from disk here so that
/// rendering the report stays a function of what it is handed. A directory that
/// cannot be read counts as holding none.
pub fn figure_files(session_dir: &Path) -> FigureFiles {
    let mut files = FigureFiles::default();
    let Ok(stems) = std::fs::read_dir(session_dir.join("figures")) else {
        return files;
    };
    for stem in stems.flatten() {
        let (Ok(name), Ok(entries)) = (
            stem.file_name().into_string(),
            std::fs::read_dir(stem.path()),
        ) else {
            continue;
        };
        let mut svgs: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|f| f.ends_with(".svg"))
            .collect();
        svgs.sort();
        if !svgs.is_empty() {
            files.by_stem.insert(name, svgs);
        }
    }
    files
}

/// `findings/junit.xml`: one testcase per scenario and arm, for CI systems; `journal`
/// gives each case's time.
pub fn junit(outcome: &SessionOutcome, journal: &[Record]) -> std::io::Result<String> {
    junit::junit(outcome, journal)
}

/// [`junit`] from a pass over the journal file.
pub fn junit_of(outcome: &SessionOutcome, pass: &journal_pass::Pass) -> std::io::Result<String> {
    let first_last = pass.first_ts.as_deref().zip(pass.last_ts.as_deref());
    junit::of_view(outcome, &pass.view, first_last)
}

/// Writes `text` to `path` (creating parent directories), whole or not at all (see
/// [`crate::atomic::write`]: a failed write leaves the previous report). When that fails, says so on
/// `fallback` and prints the whole text there instead, returning `Ok(false)`.
pub fn write_report(path: &Path, text: &str, fallback: &mut dyn Write) -> std::io::Result<bool> {
    let written = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir),
        _ => Ok(()),
    }
    .and_then(|()| crate::atomic::write(path, text.as_bytes()));
    match written {
        Ok(()) => Ok(true),
        Err(reason) => {
            writeln!(
                fallback,
                "report could not be written to {}: {reason}; here it is in full:",
                path.display()
            )?;
            fallback.write_all(text.as_bytes())?;
            fallback.flush()?;
            Ok(false)
        }
    }
}
