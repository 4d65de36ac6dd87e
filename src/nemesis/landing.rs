//! Landing probes: signals that show a fault took effect, observed only inside the
//! fault window (what a log said before the fault proves nothing).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use regex::Regex;

use crate::exec::LineCap;
use crate::sanitize;

/// Watches a log file for a pattern, counting only bytes written after [`LogWatch::begin`].
/// Each poll reads only what was appended since the previous one, so a log that grows
/// fast is never re-read from the start; a line is matched on its first
/// [`LINE_LIMIT`](crate::exec::LINE_LIMIT) bytes, so a huge line costs no memory.
#[derive(Debug)]
pub struct LogWatch {
    pub path: PathBuf,
    pub pattern: Regex,
    /// Next byte to read, and an unfinished last line carried to the next poll.
    cursor: Mutex<(u64, LineCap)>,
}

/// Most bytes one poll reads; the rest waits for the next poll.
const POLL_CHUNK: u64 = 4 * 1024 * 1024;

impl LogWatch {
    /// Opens the window now: existing content of `path` is ignored.
    pub fn begin(path: &Path, pattern: Regex) -> LogWatch {
        let start_offset = std::fs::metadata(path).map_or(0, |m| m.len());
        LogWatch {
            path: path.to_path_buf(),
            pattern,
            cursor: Mutex::new((start_offset, LineCap::default())),
        }
    }

    /// The first complete line written since the window opened that matches, sanitized.
    pub fn poll(&self) -> std::io::Result<Option<String>> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut cursor = self.cursor.lock().unwrap_or_else(PoisonError::into_inner);
        let (offset, lines) = &mut *cursor;
        file.seek(SeekFrom::Start(*offset))?;
        let mut reader = std::io::BufReader::new(file.take(POLL_CHUNK));
        let mut matched = None;
        let (read, _) = lines.scan(&mut reader, |line| {
            let decoded = sanitize::decode(line);
            let text = decoded.trim_end_matches('\r');
            let hit = self.pattern.is_match(text);
            if hit {
                matched = Some(sanitize::line(text));
            }
            hit
        })?;
        *offset += read;
        Ok(matched)
    }

    /// Polls until the pattern appears or `within` passes.
    pub async fn await_match(&self, within: Duration) -> std::io::Result<Option<String>> {
        // An I/O error ends the wait as surely as a match does.
        super::poll_until(
            within,
            Duration::from_millis(25),
            || self.poll(),
            |r| !matches!(r, Ok(None)),
        )
        .await
    }
}
