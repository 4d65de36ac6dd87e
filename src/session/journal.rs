//! The session journal: an append-only, fsync'd JSONL file that is the source of truth
//! for everything a session did (architecture property 2).
//!
//! Each record is written and synced before anyone is told about it, so a session
//! killed at any point leaves a journal whose every complete line really happened.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::event::{Event, TornTail};

/// Which scenario / arm an event belongs to (both empty for session-wide events).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    pub scenario: Option<String>,
    pub arm: Option<String>,
}

/// One journal line: a numbered, timestamped, scoped [`Event`].
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// 1-based, strictly increasing within a journal.
    pub seq: u64,
    /// UTC wall-clock time, RFC 3339, for people.
    pub ts: String,
    pub scope: Scope,
    pub event: Event,
}

impl Record {
    /// The kind this record is journaled as.
    pub fn kind(&self) -> &str {
        self.event.kind()
    }
}

/// The line as written: `kind` and `data` beside the number, time and scope.
#[derive(Serialize)]
struct LineOut<'a> {
    seq: u64,
    ts: &'a str,
    #[serde(flatten)]
    scope: &'a Scope,
    kind: &'a str,
    data: Value,
}

#[derive(Deserialize)]
struct LineIn {
    seq: u64,
    ts: String,
    #[serde(flatten)]
    scope: Scope,
    kind: String,
    #[serde(default)]
    data: Value,
}

impl Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        LineOut {
            seq: self.seq,
            ts: &self.ts,
            scope: &self.scope,
            kind: self.event.kind(),
            data: self.event.data(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let line = LineIn::deserialize(deserializer)?;
        Ok(Record {
            seq: line.seq,
            ts: line.ts,
            scope: line.scope,
            event: Event::from_parts(line.kind, line.data),
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("cannot encode journal event `{kind}`: {message}")]
    Encode { kind: String, message: String },
    #[error(
        "{lock}: another faultline process is writing this session (still locked after {waited:?}); \
         let it finish, or end it first"
    )]
    Busy { lock: PathBuf, waited: Duration },
}

/// How long an opener waits for another writer (a watchdog healing a killed run, say)
/// to let go of a session's journal.
pub const LOCK_WAIT: Duration = Duration::from_secs(20);

/// Append handle on a journal file. Cloning it (see [`Journal::share`]) gives another
/// handle on the same file, numbering and tap: the session server journals who joined
/// and what was asked while the engine journals the run, one sequence for both.
pub struct Journal {
    inner: std::sync::Arc<std::sync::Mutex<Inner>>,
}

struct Inner {
    path: PathBuf,
    file: File,
    /// The file's length: where a failed write is cut back to.
    len: u64,
    next_seq: u64,
    /// Live listeners (headless progress, the TUI); a closed one is ignored.
    tap: Option<tokio::sync::mpsc::UnboundedSender<Record>>,
    /// Holds the exclusive lock on `journal.lock` for as long as this handle lives, so
    /// two processes never number records concurrently. Closed (and unlocked) by the
    /// kernel when the holder dies; never inherited by children (close-on-exec).
    _lock: File,
}

impl Journal {
    /// Opens (creating if needed) the journal at `path` for appending. Existing records
    /// are kept; numbering continues after the last complete one. Waits up to
    /// [`LOCK_WAIT`] while another process holds the journal.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        Journal::open_waiting(path, LOCK_WAIT)
    }

    /// [`Journal::open`], waiting at most `wait` for the lock.
    pub fn open_waiting(path: &Path, wait: Duration) -> Result<Journal, JournalError> {
        let io_err = |source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        };
        let lock = lock(&path.with_extension("lock"), wait)?;
        let existing = if path.exists() {
            read(path)?
        } else {
            Contents::default()
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io_err)?;
        // A line cut short by a crash would glue itself to the next record: it moves to
        // `journal.torn` (kept, never lost) and the journal ends at its last full line.
        if let Some(tail) = &existing.torn_tail {
            let mut torn = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path.with_extension("torn"))
                .map_err(io_err)?;
            writeln!(torn, "{tail}").map_err(io_err)?;
            torn.sync_data().map_err(io_err)?;
            let bytes = std::fs::read(path).map_err(io_err)?;
            let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            file.set_len(keep as u64).map_err(io_err)?;
            file.sync_data().map_err(io_err)?;
        }
        // A last record intact but for its newline (a crash between the bytes of one
        // write, a hand edit) is kept: the newline goes on before any new record, which
        // would otherwise glue itself onto it and take both out of every later read.
        let mut len = file.metadata().map_err(io_err)?.len();
        if existing.torn_tail.is_none() && len > 0 && !ends_with_newline(path).map_err(io_err)? {
            (&file).write_all(b"\n").map_err(io_err)?;
            file.sync_data().map_err(io_err)?;
            len += 1;
        }
        let next_seq = existing.records.last().map_or(1, |r| r.seq + 1);
        let mut journal = Journal {
            inner: std::sync::Arc::new(std::sync::Mutex::new(Inner {
                path: path.to_path_buf(),
                file,
                len,
                next_seq,
                tap: None,
                _lock: lock,
            })),
        };
        // Whoever opens it first after the crash says so, in the journal itself.
        if let Some(tail) = &existing.torn_tail {
            journal.append(
                Scope::default(),
                Event::JournalTornTail(TornTail {
                    bytes: tail.len(),
                    kept_in: "journal.torn".into(),
                }),
            )?;
        }
        Ok(journal)
    }

    /// Sends a copy of every record appended from now on to `tx`.
    pub fn tap(&mut self, tx: tokio::sync::mpsc::UnboundedSender<Record>) {
        self.inner().tap = Some(tx);
    }

    /// Stops sending records to the tap (every handle's), closing its channel.
    pub fn untap(&mut self) {
        self.inner().tap = None;
    }

    /// Another handle on this journal (same file, numbering and tap).
    pub fn share(&self) -> Journal {
        Journal {
            inner: self.inner.clone(),
        }
    }

    /// The journal file's path.
    pub fn path(&self) -> PathBuf {
        self.inner().path.clone()
    }

    /// The seq the next record gets.
    pub fn next_seq(&self) -> u64 {
        self.inner().next_seq
    }

    /// A panic elsewhere while holding the lock leaves the file as the last write
    /// left it (a failed write is cut back first), so the handle stays usable.
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends one event and syncs it to disk before returning its record.
    pub fn append(&mut self, scope: Scope, event: Event) -> Result<Record, JournalError> {
        let mut inner = self.inner();
        for note in super::watchdog::take_notes() {
            inner.write(Scope::default(), Event::Watchdog(note))?;
        }
        inner.write(scope, event)
    }

    /// Appends `events` in order with one sync for all of them (records of little
    /// weight that come in bursts: clients joining and leaving).
    pub fn append_all(&mut self, scope: Scope, events: Vec<Event>) -> Result<(), JournalError> {
        let mut inner = self.inner();
        let mut written = Vec::with_capacity(events.len());
        for event in events {
            written.push(inner.put(scope.clone(), event)?);
        }
        let path = inner.path.clone();
        inner
            .file
            .sync_data()
            .map_err(|source| JournalError::Io { path, source })?;
        for record in written {
            inner.published(record);
        }
        Ok(())
    }
}

impl Inner {
    fn write(&mut self, scope: Scope, event: Event) -> Result<Record, JournalError> {
        let record = self.put(scope, event)?;
        let path = self.path.clone();
        self.file
            .sync_data()
            .map_err(|source| JournalError::Io { path, source })?;
        self.published(record.clone());
        Ok(record)
    }

    /// On disk (after the sync): crash testing, then the tap.
    fn published(&self, record: Record) {
        crash_point(&record);
        if let Some(tap) = &self.tap {
            let _ = tap.send(record);
        }
    }

    /// Writes one record's line, unsynced.
    fn put(&mut self, scope: Scope, event: Event) -> Result<Record, JournalError> {
        let record = Record {
            seq: self.next_seq,
            ts: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            scope,
            event,
        };
        let mut line = serde_json::to_vec(&record).map_err(|e| JournalError::Encode {
            kind: record.kind().to_string(),
            message: e.to_string(),
        })?;
        line.push(b'\n');
        let io_err = |source| JournalError::Io {
            path: self.path.clone(),
            source,
        };
        // One write call per record keeps concurrent readers from seeing half a line
        // in the common case; sync_data makes the record survive a crash. A write that
        // fails part-way (a full disk) is cut off again at once, so the journal still
        // ends at its last whole record and whoever opens it next (heal) need not
        // write anything to recover it.
        if let Err(e) = self.file.write_all(&line) {
            let _ = self.file.set_len(self.len);
            return Err(io_err(e));
        }
        self.len += line.len() as u64;
        self.next_seq += 1;
        Ok(record)
    }
}

/// Crash testing: `FAULTLINE_CRASH_AFTER=<kind>[@<scenario>]` makes this process
/// SIGKILL itself right after the first such record is on disk, so a test kills
/// faultline at an exact point of the journal instead of racing it. Unset, it costs
/// one look at a cached value.
pub const CRASH_AFTER: &str = "FAULTLINE_CRASH_AFTER";

fn crash_point(record: &Record) {
    static POINT: std::sync::OnceLock<Option<(String, Option<String>)>> =
        std::sync::OnceLock::new();
    let point = POINT.get_or_init(|| {
        let text = std::env::var(CRASH_AFTER).ok()?;
        Some(match text.split_once('@') {
            Some((kind, scenario)) => (kind.to_string(), Some(scenario.to_string())),
            None => (text, None),
        })
    });
    let Some((kind, scenario)) = point else {
        return;
    };
    if record.kind() == kind
        && scenario
            .as_deref()
            .is_none_or(|s| record.scope.scenario.as_deref() == Some(s))
    {
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}

/// Whether the file at `path` ends with a newline (its last byte only is read).
fn ends_with_newline(path: &Path) -> io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path)?;
    if file.seek(SeekFrom::End(0))? == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// Takes the exclusive lock on `lock_path`, polling until `wait` has passed.
fn lock(lock_path: &Path, wait: Duration) -> Result<File, JournalError> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path)
        .map_err(|source| JournalError::Io {
            path: lock_path.to_path_buf(),
            source,
        })?;
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(JournalError::Busy {
                    lock: lock_path.to_path_buf(),
                    waited: wait,
                });
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(JournalError::Io {
                    path: lock_path.to_path_buf(),
                    source,
                });
            }
        }
    }
}

/// What a journal file holds.
#[derive(Debug, Default)]
pub struct Contents {
    pub records: Vec<Record>,
    /// A final line cut short by a crash mid-write (kept out of `records`).
    pub torn_tail: Option<String>,
    /// Lines before the last that are not records (a damaged disk block, a NUL
    /// byte): 1-based line number and why. Everything around them is read.
    pub skipped: Vec<Skipped>,
}

/// A damaged journal line that was passed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub line: usize,
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} skipped: {}", self.line, self.why)
    }
}

/// Reads every complete record. A torn last line (no newline, not valid JSON) is
/// reported in `torn_tail`; a bad line anywhere else is passed over and listed in
/// `skipped`, so one damaged record never hides the others (healing needs them).
pub fn read(path: &Path) -> Result<Contents, JournalError> {
    let bytes = std::fs::read(path).map_err(|source| JournalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    // A crash can cut a record inside a multi-byte character: decode leniently, the
    // JSON parse below judges each line.
    let text = String::from_utf8_lossy(&bytes);
    let ends_with_newline = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let mut contents = Contents::default();
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(record) => contents.records.push(record),
            Err(_) if index + 1 == lines.len() && !ends_with_newline => {
                contents.torn_tail = Some((*line).to_string());
            }
            Err(e) => contents.skipped.push(Skipped {
                line: index + 1,
                why: e.to_string(),
            }),
        }
    }
    Ok(contents)
}
