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

/// How much of the end of a log is read for its last lines.
const TAIL_BYTES: u64 = 64 * 1024;

impl Runner<'_> {
    /// Journals every service that ended since the last look (the workload client is
    /// no service); returns the records of those no fault explains.
    pub(super) fn watch_services(&mut self) -> Result<Vec<u64>, EngineError> {
        let during = if self.workload_started {
            "workload"
        } else {
            "start"
        };
        let names: Vec<String> = self
            .services
            .keys()
            .filter(|k| *k != "workload" && !self.ended.contains(*k))
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

/// The last [`STDERR_TAIL_LINES`] non-blank lines of the log at `path`, read from its
/// last [`TAIL_BYTES`], each sanitized and cut at [`STDERR_TAIL_CHARS`] characters.
pub(super) fn stderr_tail(path: &Path) -> Vec<String> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let from = len.saturating_sub(TAIL_BYTES);
    if file.seek(SeekFrom::Start(from)).is_err() {
        return Vec::new();
    }
    let mut raw = Vec::new();
    if file.take(TAIL_BYTES).read_to_end(&mut raw).is_err() {
        return Vec::new();
    }
    let text = crate::sanitize::decode(&raw);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // A read that starts mid-file starts mid-line: that piece is no line — unless it
    // is all there is (a last line longer than the window), kept as its end.
    if from > 0 && lines.len() > 1 {
        lines.remove(0);
    } else if from > 0
        && let Some(only) = lines.first_mut()
    {
        *only = format!("…{only}");
    }
    let kept: Vec<String> = lines
        .iter()
        .map(|l| crate::sanitize::line(l).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    kept[kept.len().saturating_sub(STDERR_TAIL_LINES)..]
        .iter()
        .map(|l| cut(l, STDERR_TAIL_CHARS))
        .collect()
}

/// `text` cut at `chars` characters, `…` marking the cut.
fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
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

    #[test]
    fn a_last_line_longer_than_the_window_is_kept_as_its_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("n1.stderr.log");
        let huge = "y".repeat(usize::try_from(TAIL_BYTES).expect("small") * 3);
        std::fs::write(
            &log,
            format!(
                "before
why it died: {huge}"
            ),
        )
        .expect("log");
        let tail = stderr_tail(&log);
        assert_eq!(tail.len(), 1, "{tail:?}");
        assert!(
            tail[0].starts_with('…') && tail[0].contains('y'),
            "{tail:?}"
        );
    }
}
