//! The services, looked at while the engine waits: one that ended on its own before
//! the workload did is journaled (`service-exited`) with how it ended, when, its last
//! stderr lines and the fault that explains it, if one does. A fault explains an end
//! when it ends processes and was aimed at that service's group, or may have ended
//! any process (a `command` fault, a container kill, a signal to a pid that is no
//! service's group).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::{EngineError, Explainer, Runner};
use crate::exec::Outcome;
use crate::nemesis::spec::Kind;
use crate::runspec::FaultStep;
use crate::session::event::{self, Event, STDERR_TAIL_CHARS, STDERR_TAIL_LINES, millis};

impl Runner<'_> {
    /// Journals every service that ended since the last look (the workload client is
    /// no service); returns the records of those no fault explains.
    pub(super) fn watch_services(&mut self) -> Result<Vec<u64>, EngineError> {
        let during = if self.workload_started {
            crate::session::label::CommandRole::Workload.as_str()
        } else {
            "start"
        };
        let names: Vec<String> = self
            .services
            .keys()
            .filter(|k| {
                *k != crate::session::label::CommandRole::Workload.as_str()
                    && !self.ended.contains(*k)
            })
            .cloned()
            .collect();
        let mut unexplained = Vec::new();
        for name in names {
            let Some(running) = self.services.get_mut(&name) else {
                continue;
            };
            let Some(outcome) = running.ended() else {
                continue;
            };
            let (code, signal) = match outcome {
                Outcome::Exited(code) => (Some(code), None),
                Outcome::Signaled(sig) => (None, Some(sig)),
                Outcome::DeadlineExpired => (None, None),
            };
            let pgid = running.pgid;
            let explainer = self
                .explainers
                .iter()
                .rev()
                .find(|x| x.any || x.pid == Some(pgid));
            let exited = event::ServiceExited {
                name: name.clone(),
                pgid,
                node: running.node().map(str::to_string),
                code,
                signal,
                elapsed_ms: millis(running.started.elapsed()),
                during: during.into(),
                stderr_tail: stderr_tail(&running.stderr_log),
                explained_by: explainer.map(|x| x.seq),
                fault: explainer.map(|x| x.fault.clone()),
            };
            let seq = self.log(Event::ServiceExited(exited.clone()))?;
            self.ended.insert(name);
            if exited.explained_by.is_none() {
                unexplained.push(seq);
            }
            self.facts.services_ended.push((exited, seq));
        }
        Ok(unexplained)
    }

    /// Remembers an injected fault (its `fault-injected` record `seq`) that may end a
    /// service, for [`Runner::watch_services`].
    pub(super) fn note_injected(
        &mut self,
        step: &FaultStep,
        fault: &str,
        pid: Option<i32>,
        seq: u64,
    ) {
        let command = step.nemesis.kind() == Kind::Command;
        let ends = step.nemesis.ends_processes();
        if !command && !ends {
            return;
        }
        let a_service = pid.is_some_and(|p| self.services.values().any(|r| r.pgid == p));
        self.explainers.push(Explainer {
            seq,
            fault: fault.to_string(),
            pid,
            any: command || !a_service,
        });
    }
}

/// The last [`STDERR_TAIL_LINES`] non-blank lines of the log at `path`, each sanitized
/// and cut at [`STDERR_TAIL_CHARS`] characters (see [`log_tail`]).
pub(super) fn stderr_tail(path: &Path) -> Vec<String> {
    log_tail(path)
}

/// The last [`STDERR_TAIL_LINES`] non-blank lines of the log at `path`, each sanitized
/// and cut at [`STDERR_TAIL_CHARS`] characters (`…` marking a cut), empty when it cannot
/// be read. The log is read backwards, at most [`TAIL_SCAN`] bytes of it, and each line
/// is cut as it is read: a huge line costs no memory and cannot push the lines before
/// it out of the tail. A line that starts before what was read begins with `…`.
pub(super) fn log_tail(path: &Path) -> Vec<String> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let floor = len.saturating_sub(TAIL_SCAN);
    let mut pos = len;
    // Newest first while reading.
    let mut kept: Vec<String> = Vec::new();
    let mut line = Partial::default();
    let mut chunk = vec![0u8; TAIL_CHUNK];
    while pos > floor && kept.len() < STDERR_TAIL_LINES {
        let size = usize::try_from((pos - floor).min(TAIL_CHUNK as u64)).unwrap_or(TAIL_CHUNK);
        pos -= size as u64;
        let Some(buf) = chunk.get_mut(..size) else {
            break;
        };
        if file.seek(SeekFrom::Start(pos)).is_err() || file.read_exact(buf).is_err() {
            // What was gathered so far stands; the line being read is incomplete.
            pos = 1;
            break;
        }
        let mut end = size;
        while let Some(newline) = buf[..end].iter().rposition(|&b| b == b'\n') {
            line.prepend(&buf[newline + 1..end]);
            if let Some(text) = std::mem::take(&mut line).text(false) {
                kept.push(text);
                if kept.len() == STDERR_TAIL_LINES {
                    break;
                }
            }
            end = newline;
        }
        if kept.len() < STDERR_TAIL_LINES {
            line.prepend(&buf[..end]);
        }
    }
    if kept.len() < STDERR_TAIL_LINES
        && let Some(text) = line.text(pos > 0)
    {
        kept.push(text);
    }
    kept.reverse();
    kept
}

/// How much of the end of a log [`log_tail`] reads at most.
const TAIL_SCAN: u64 = 1024 * 1024;
/// How much it reads at a time.
const TAIL_CHUNK: usize = 64 * 1024;
/// How many bytes of a line's start it keeps: room for [`STDERR_TAIL_CHARS`]
/// characters once escape sequences are removed.
const LINE_KEEP: usize = 4 * 1024;

/// A line read backwards: its first [`LINE_KEEP`] bytes of those read so far.
#[derive(Default)]
struct Partial {
    bytes: Vec<u8>,
    /// Bytes after those kept were dropped.
    cut: bool,
}

impl Partial {
    /// `earlier` bytes of the line, read after (so before, in the file) those it has.
    fn prepend(&mut self, earlier: &[u8]) {
        if earlier.is_empty() {
            return;
        }
        let mut joined = Vec::with_capacity(LINE_KEEP.min(earlier.len() + self.bytes.len()));
        joined.extend_from_slice(&earlier[..earlier.len().min(LINE_KEEP)]);
        let room = LINE_KEEP - joined.len();
        joined.extend_from_slice(&self.bytes[..self.bytes.len().min(room)]);
        self.cut |= earlier.len() + self.bytes.len() > joined.len();
        self.bytes = joined;
    }

    /// The line as shown (sanitized, cut), `None` when blank; `head_missing`: it
    /// started before what was read.
    fn text(self, head_missing: bool) -> Option<String> {
        let text = crate::sanitize::line(&crate::sanitize::decode(&self.bytes));
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let mut shown = crate::sanitize::clip(text, STDERR_TAIL_CHARS);
        if self.cut && !shown.ends_with('…') {
            shown.push('…');
        }
        if head_missing {
            shown.insert(0, '…');
        }
        Some(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_lines_sanitized_and_cut() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("n1.stderr.log");
        let long = "x".repeat(300);
        std::fs::write(
            &log,
            format!("one\ntwo\n\nthree\n\u{1b}[31mfour\u{1b}[0m\nfive\n{long}\n   \n"),
        )
        .expect("log");
        let tail = stderr_tail(&log);
        assert_eq!(tail.len(), STDERR_TAIL_LINES, "{tail:?}");
        assert_eq!(tail[0], "two");
        assert_eq!(tail[2], "four");
        assert_eq!(tail[4].chars().count(), STDERR_TAIL_CHARS + 1);
        assert!(stderr_tail(&dir.path().join("absent")).is_empty());
    }

    /// Issue 30 (3): a reason on one line, then one line longer than the old 64 KiB
    /// window: the reason survives, the long line is cut to its start.
    #[test]
    fn a_huge_last_line_does_not_push_the_reason_out_of_the_tail() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("n1.stderr.log");
        let huge = "A".repeat(70 * 1024);
        std::fs::write(
            &log,
            format!("starting\nFATAL: cannot bind: permission denied\n{huge}\n"),
        )
        .expect("log");
        let tail = stderr_tail(&log);
        assert_eq!(tail.len(), 3, "{tail:?}");
        assert_eq!(tail[0], "starting");
        assert_eq!(tail[1], "FATAL: cannot bind: permission denied");
        assert_eq!(tail[2], format!("{}…", "A".repeat(STDERR_TAIL_CHARS)));
        // Three of them in a row, each over a chunk: every one cut, the reason kept.
        let mut text = String::from("why: disk full\n");
        for c in ['B', 'C', 'D'] {
            text.push_str(&c.to_string().repeat(TAIL_CHUNK + 17));
            text.push('\n');
        }
        std::fs::write(&log, text).expect("log");
        let tail = stderr_tail(&log);
        assert_eq!(tail.len(), 4, "{tail:?}");
        assert_eq!(tail[0], "why: disk full");
        for (line, c) in tail[1..].iter().zip(['B', 'C', 'D']) {
            assert_eq!(
                *line,
                format!("{}…", c.to_string().repeat(STDERR_TAIL_CHARS))
            );
        }
    }

    /// A line that began before the most the tail reads is kept as the piece read,
    /// marked at both ends; escape sequences inside a cut line are still removed.
    #[test]
    fn a_line_longer_than_the_scan_is_marked_as_a_piece() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("n1.stderr.log");
        let huge = "y".repeat(usize::try_from(TAIL_SCAN).expect("small") * 3);
        std::fs::write(&log, format!("before\nwhy it died: {huge}")).expect("log");
        let tail = stderr_tail(&log);
        assert_eq!(tail.len(), 1, "{tail:?}");
        assert!(
            tail[0].starts_with("…y") && tail[0].ends_with("y…"),
            "{tail:?}"
        );
        let colored = "\u{1b}[31mred\u{1b}[0m ".repeat(1000);
        std::fs::write(&log, format!("{colored}\n")).expect("log");
        let tail = stderr_tail(&log);
        assert_eq!(tail.len(), 1, "{tail:?}");
        assert!(
            tail[0].starts_with("red red") && !tail[0].contains('\u{1b}'),
            "{tail:?}"
        );
        assert!(tail[0].ends_with('…'), "{tail:?}");
    }
}
