//! Landing probes: signals that show a fault took effect, observed only inside the
//! fault window (what a log said before the fault proves nothing).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;

use crate::sanitize;

/// Watches a log file for a pattern, counting only bytes written after [`LogWatch::begin`].
#[derive(Debug, Clone)]
pub struct LogWatch {
    pub path: PathBuf,
    pub pattern: Regex,
    start_offset: u64,
}

impl LogWatch {
    /// Opens the window now: existing content of `path` is ignored.
    pub fn begin(path: &Path, pattern: Regex) -> LogWatch {
        let start_offset = std::fs::metadata(path).map_or(0, |m| m.len());
        LogWatch {
            path: path.to_path_buf(),
            pattern,
            start_offset,
        }
    }

    /// The first line written since the window opened that matches, sanitized.
    pub fn poll(&self) -> std::io::Result<Option<String>> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        file.seek(SeekFrom::Start(self.start_offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let text = String::from_utf8_lossy(&bytes);
        Ok(text
            .lines()
            .find(|l| self.pattern.is_match(l))
            .map(sanitize::line))
    }

    /// Polls until the pattern appears or `within` passes.
    pub async fn await_match(&self, within: Duration) -> std::io::Result<Option<String>> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(found) = self.poll()? {
                return Ok(Some(found));
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(None);
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}
