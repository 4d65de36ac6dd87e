//! A session's journal file read as a stream, one line at a time, for the documents
//! written from it: one pass folds the reducer's view (and keeps the few records the
//! session log lists whole); the session log's timeline reads the file again, record
//! by record, as it is written. No document holds all of a journal's records at once,
//! so what writing them costs in memory stays flat however long the session ran.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::session::event::Event;
use crate::session::journal::Record;
use crate::session::view::View;

/// What one pass over a journal found.
pub struct Pass {
    /// The reducer's view of every record read.
    pub view: View,
    /// The first and last records' times (the session's span, as journaled).
    pub first_ts: Option<String>,
    pub last_ts: Option<String>,
    /// The records the session log lists in their own sections.
    pub toolbox: Vec<Record>,
    pub capabilities: Vec<Record>,
    pub preconditions: Vec<Record>,
    /// How many records the session log's timeline shows.
    pub timeline: usize,
    /// Where the records were read from, up to which byte: a later read of the
    /// timeline stops there, so it shows the same records however far the journal
    /// has grown since.
    pub source: Source,
}

/// A journal file and the length of it a pass read.
#[derive(Debug, Clone)]
pub struct Source {
    pub path: PathBuf,
    pub end: u64,
}

impl Pass {
    /// Reads the journal at `path` once.
    pub fn read(path: &Path) -> io::Result<Pass> {
        let mut lines = Lines::open(path, u64::MAX)?;
        let mut pass = Pass::default_at(path);
        for record in lines.by_ref() {
            pass.take(record?);
        }
        pass.source.end = lines.read;
        Ok(pass)
    }

    /// The pass over records already in memory (a test's, or a caller's that has
    /// them); its timeline is empty, there being no file to read it from.
    pub fn of(records: &[Record]) -> Pass {
        let mut pass = Pass::default_at(Path::new(""));
        for record in records {
            pass.take(record.clone());
        }
        pass.timeline = 0;
        pass
    }

    fn default_at(path: &Path) -> Pass {
        Pass {
            view: View::default(),
            first_ts: None,
            last_ts: None,
            toolbox: Vec::new(),
            capabilities: Vec::new(),
            preconditions: Vec::new(),
            timeline: 0,
            source: Source {
                path: path.to_path_buf(),
                end: 0,
            },
        }
    }

    fn take(&mut self, record: Record) {
        self.view.apply(&record);
        if self.first_ts.is_none() {
            self.first_ts = Some(record.ts.clone());
        }
        if !record.event.restates_outcome() {
            self.timeline += 1;
        }
        let list = match &record.event {
            Event::ToolboxItem(_) => &mut self.toolbox,
            Event::Capability(_) => &mut self.capabilities,
            Event::Precondition(_) => &mut self.preconditions,
            _ => {
                self.last_ts = Some(record.ts);
                return;
            }
        };
        self.last_ts = Some(record.ts.clone());
        list.push(record);
    }
}

/// The records of a journal file, in order, up to a byte offset. Lines that are not
/// records are passed over, as [`crate::session::journal::read`] passes them over; a
/// last line still being written (no newline, not yet a record) is not read, and
/// not counted in [`Lines::read`].
pub struct Lines {
    reader: BufReader<io::Take<File>>,
    path: PathBuf,
    line: Vec<u8>,
    /// The bytes consumed so far, up to the end of the last record read.
    pub read: u64,
    offset: u64,
}

impl Lines {
    pub fn open(path: &Path, end: u64) -> io::Result<Lines> {
        let file = File::open(path).map_err(|e| named(path, e))?;
        Ok(Lines {
            reader: BufReader::with_capacity(64 << 10, file.take(end)),
            path: path.to_path_buf(),
            line: Vec::new(),
            read: 0,
            offset: 0,
        })
    }

    /// The records from `source`'s file, up to its end.
    pub fn of(source: &Source) -> io::Result<Lines> {
        Lines::open(&source.path, source.end)
    }
}

fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

impl Iterator for Lines {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<io::Result<Record>> {
        loop {
            self.line.clear();
            let n = match self.reader.read_until(b'\n', &mut self.line) {
                Ok(0) => return None,
                Ok(n) => n,
                Err(e) => return Some(Err(named(&self.path, e))),
            };
            self.offset += n as u64;
            let whole = self.line.last() == Some(&b'\n');
            // A crash can cut a record inside a multi-byte character: decode
            // leniently, the JSON parse judges the line.
            let text = String::from_utf8_lossy(&self.line);
            if text.trim().is_empty() {
                if whole {
                    self.read = self.offset;
                }
                continue;
            }
            match serde_json::from_str::<Record>(&text) {
                Ok(record) => {
                    self.read = self.offset;
                    return Some(Ok(record));
                }
                Err(_) if whole => self.read = self.offset,
                Err(_) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::event::{Event, Precondition};
    use crate::session::journal::{Journal, Scope};

    #[test]
    fn a_pass_reads_every_record_and_stops_before_a_line_still_being_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("journal.jsonl");
        let mut journal = Journal::open(&path).expect("journal");
        for ok in [true, false] {
            journal
                .append(
                    Scope::default(),
                    Event::Precondition(Precondition {
                        name: "clock".into(),
                        ok,
                        cites: Vec::new(),
                    }),
                )
                .expect("append");
        }
        drop(journal);
        let whole = std::fs::metadata(&path).expect("meta").len();
        // A line cut short, and a damaged one before it: neither is a record.
        let mut text = std::fs::read_to_string(&path).expect("read");
        text.push_str("not json\n{\"seq\":3,\"ts\":\"2026-");
        std::fs::write(&path, &text).expect("write");
        let pass = Pass::read(&path).expect("pass");
        assert_eq!(pass.preconditions.len(), 2);
        assert_eq!(pass.timeline, 2);
        assert_eq!(pass.view.seq, 2);
        assert_eq!(pass.source.end, whole + "not json\n".len() as u64);
        let again: Vec<u64> = Lines::of(&pass.source)
            .expect("lines")
            .map(|r| r.expect("record").seq)
            .collect();
        assert_eq!(again, [1, 2]);
        let journaled = crate::session::journal::read(&path).expect("read");
        assert_eq!(journaled.records.len(), 2);
        assert_eq!(pass.view, View::of(&journaled.records));
    }
}
