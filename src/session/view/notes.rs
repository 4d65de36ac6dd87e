//! The notes operators left on the run (`operator-note`), in journal order, each with
//! who wrote it, when, and the scenario / arm and iteration that ran then: what
//! report.md's "Notes" section lists and the Run screen marks on its timeline and
//! chart.
//!
//! The server journals a note session-wide (it does not follow the engine), so
//! which run it was written during is the reducer's: the row the engine was working
//! on ([`View::active`]) once it started, until the session's verdict. A note
//! written after a run's verdict and before the next run starts (while its blame
//! is asked, say) is that run's, with no iteration.

use super::View;
use crate::session::event::{Event, NOTE_MAX_BYTES, OperatorNote, Who};
use crate::session::journal::Record;
use crate::session::label::IterationLabel;
use crate::session::outcome::Phase;

/// One note, as every reader shows it. Its text is fit to show (sanitized line by
/// line, line breaks kept as `\n`); it is the operator's own words, so a reader that
/// renders markup (report.md, report.html) must still escape it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NoteRow {
    /// The `operator-note` record's seq.
    pub seq: u64,
    /// When it was written: the record's own timestamp (UTC, RFC 3339, as journaled).
    pub ts: String,
    /// Who wrote it, by the kernel's word (uid, user, role; `label` only as `--as`
    /// asserted it).
    pub who: Who,
    /// [`NoteRow::who`] in words, as the session names attached operators
    /// (`alice (uid 1001, approver)`), sanitized.
    pub author: String,
    /// The client it came through: `json`, `tui` (sanitized).
    pub client: String,
    /// The note, lines joined by `\n`; at most [`NOTE_MAX_BYTES`].
    pub text: String,
    /// The run it was written during: an index into [`View::runs`]; `None` before
    /// any run started and after the session's verdict.
    pub row: Option<usize>,
    /// That run's id (`D3`, `D5/api`), scenario and arm (the arm's short name).
    pub run: Option<String>,
    pub scenario: Option<String>,
    pub arm: Option<String>,
    /// The iteration of that run going on then (`seed-2`, `seed-2-rerun`), while it
    /// had not been decided yet.
    pub iteration: Option<IterationLabel>,
    /// How long after that iteration's start it was written, in milliseconds (where
    /// a chart of that iteration puts it).
    pub iteration_ms: Option<u64>,
}

impl NoteRow {
    /// `D3 (seed-2)`, `D3`, or `None` for a session-wide note: the run it was
    /// written during, in words.
    pub fn during(&self) -> Option<String> {
        let run = self.run.as_deref()?;
        Some(match self.iteration {
            Some(label) => format!("{run} ({label})"),
            None => run.to_string(),
        })
    }
}

impl View {
    /// Folds an `operator-note` record into [`View::notes`].
    pub(super) fn fold_notes(&mut self, record: &Record) {
        let Event::OperatorNote(note) = &record.event else {
            return;
        };
        let row = if record.scope.scenario.is_some() {
            self.row_index(record)
        } else if self.session_verdict.is_some() {
            None
        } else {
            self.active
                .filter(|r| self.runs.get(*r).is_some_and(|r| r.phase != Phase::Pending))
        };
        let run = row.and_then(|r| self.runs.get(r));
        let live = row
            .filter(|_| run.is_some_and(|r| r.phase != Phase::Done))
            .and_then(|r| self.live.get(&r));
        let iteration_ms = live
            .and_then(|l| l.started.as_deref())
            .and_then(|started| millis_between(started, &record.ts));
        self.notes.push(NoteRow {
            seq: record.seq,
            ts: crate::sanitize::line(&record.ts),
            who: note.who.clone(),
            author: note.author(),
            client: crate::sanitize::line(&note.client),
            text: bounded(&OperatorNote::clean(&note.text)),
            row,
            run: run.map(|r| r.id.clone()),
            scenario: run.map(|r| r.scenario.clone()),
            arm: run.and_then(|r| r.arm.clone()),
            iteration: live.map(|l| l.label),
            iteration_ms,
        });
    }
}

/// A journaled text over [`NOTE_MAX_BYTES`] (the server refuses those; a journal
/// written otherwise may hold one) cut at a character boundary, saying so.
fn bounded(text: &str) -> String {
    if text.len() <= NOTE_MAX_BYTES {
        return text.to_string();
    }
    let mut end = NOTE_MAX_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len())
}

/// Milliseconds from `from` to `to` (RFC 3339); `None` when either is unreadable,
/// 0 when `to` is earlier.
fn millis_between(from: &str, to: &str) -> Option<u64> {
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let ms = (parse(to)? - parse(from)?).num_milliseconds().max(0);
    u64::try_from(ms).ok()
}
