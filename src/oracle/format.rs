//! The history formats faultline reads, by name, and the byte source their
//! streaming readers share.

use super::history::{History, HistoryError, read_jsonl_history};
use super::jepsen::{pair_edn, read_edn};
use super::jepsen_log::{pair_jepsen_log, read_jepsen_log};
use super::jsonl_read::Header;
use super::op_view::OpSink;
use super::porcupine_log::{fold_porcupine, read_porcupine};
use super::txn::history::parse_txn_jsonl;
use std::io::{BufRead, Read};
use std::path::Path;

/// A history file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// faultline's JSONL records (the default fields).
    Jsonl,
    /// Jepsen / Knossos EDN.
    Edn,
    /// Porcupine-style operation log (JSONL).
    Porcupine,
    /// One JSON object per transaction (`type`, `value` micro-ops).
    TxnJsonl,
    /// Jepsen's operation log (`jepsen.util - 0\t:invoke\t:read\tnil` lines).
    JepsenLog,
}

impl Format {
    pub const NAMES: [&'static str; 5] = ["jsonl", "edn", "porcupine", "txn-jsonl", "jepsen-log"];

    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "jsonl" => Some(Format::Jsonl),
            "edn" => Some(Format::Edn),
            "porcupine" => Some(Format::Porcupine),
            "txn-jsonl" => Some(Format::TxnJsonl),
            "jepsen-log" => Some(Format::JepsenLog),
            _ => None,
        }
    }

    /// Guess from a file name: `.edn` is EDN, anything else faultline's JSONL.
    pub fn from_path(path: &std::path::Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("edn") => Format::Edn,
            _ => Format::Jsonl,
        }
    }
}

/// Parse `text` in `format`; `source` names it in errors.
pub fn read_history(format: Format, source: &str, text: &str) -> Result<History, HistoryError> {
    match format {
        Format::TxnJsonl => parse_txn_jsonl(source, text),
        _ => read_history_file(format, source, text.as_bytes()),
    }
}

/// Read a history in `format` from `reader` (a file, capped by the caller) as a
/// stream: no whole-file text, no tree of the whole file (txn-jsonl, read
/// whole, excepted). `source` names it in errors; an error is the one reading the
/// whole file first would give (a read error, then bytes that are not UTF-8, then
/// the first malformed entry).
pub fn read_history_file(
    format: Format,
    source: &str,
    mut reader: impl BufRead,
) -> Result<History, HistoryError> {
    match format {
        Format::Jsonl => read_jsonl_history(source, reader, &std::collections::BTreeMap::new()),
        Format::Edn => read_edn(source, reader),
        Format::Porcupine => read_porcupine(source, reader),
        Format::JepsenLog => read_jepsen_log(source, reader),
        Format::TxnJsonl => {
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .map_err(|e| read_error(source, &e))?;
            let text = String::from_utf8(bytes).map_err(|e| {
                let at = e.utf8_error().valid_up_to();
                let good = &e.as_bytes()[..at];
                let line = good.iter().filter(|b| **b == b'\n').count() + 1;
                let column = at - good.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1) + 1;
                not_utf8(source, line, column as u64, at as u64)
            })?;
            parse_txn_jsonl(source, &text)
        }
    }
}

/// Fold a history in `format` into `sink` as it is read, building no [`History`]
/// (a checker that folds ops, [`super::linear::Linear`]). EDN and Jepsen logs are
/// read twice: a completion's clock and fault window may depend on entries after
/// it (`:time` missing on a later entry, a later nemesis entry), so the first
/// pass settles those and the second hands each op over once it is complete.
/// `again` opens the history from its start for that second pass; without it (a
/// pipe) the history is read whole and its ops handed over. txn-jsonl is read
/// whole.
pub fn fold_history<R: BufRead>(
    format: Format,
    source: &str,
    reader: R,
    again: Option<impl FnOnce() -> std::io::Result<R>>,
    sink: &mut impl OpSink,
) -> Result<Header, HistoryError> {
    let pair = match format {
        Format::Jsonl => {
            return super::jsonl_read::read_jsonl(
                source,
                reader,
                &std::collections::BTreeMap::new(),
                sink,
            );
        }
        Format::Porcupine => return fold_porcupine(source, reader, sink),
        Format::Edn => pair_edn::<R>,
        Format::JepsenLog => pair_jepsen_log::<R>,
        Format::TxnJsonl => {
            return Ok(fold_whole(
                &read_history_file(format, source, reader)?,
                sink,
            ));
        }
    };
    let Some(again) = again else {
        return Ok(fold_whole(
            &read_history_file(format, source, reader)?,
            sink,
        ));
    };
    let first = pair(source, reader, &mut |_, _| {})?;
    let windows = first.windows();
    let reader = again().map_err(|e| read_error(source, &e))?;
    pair(source, reader, &mut |mut op, at| {
        first.settle(&mut op, at, &windows);
        sink.op(&op.view());
    })?;
    Ok(first.header(source))
}

/// A history read whole, its ops handed to `sink`.
fn fold_whole(history: &History, sink: &mut impl OpSink) -> Header {
    for op in &history.ops {
        sink.op(&op.view());
    }
    history.header()
}

/// Why a run's history file was not read.
#[derive(Debug)]
pub enum HistoryFileError {
    /// Missing, not believed, not a regular file, too large, or a read failed
    /// before a byte of it was judged.
    Unreadable(std::io::Error),
    /// Read, and not a history (file, line, field).
    Rejected(HistoryError),
}

/// A history file a run's recorder wrote (see [`crate::untrusted::open_untrusted`]:
/// never through a symlink, a regular file only), read as a stream in `format`:
/// JSONL line by line with the recorder's field names `renames` (the reader's
/// field → the recorder's name), the other formats as [`read_history_file`] reads
/// them. At most [`crate::untrusted::READ_LIMIT`] bytes.
pub fn read_run_history(
    format: Format,
    path: &Path,
    renames: &std::collections::BTreeMap<String, String>,
) -> Result<History, HistoryFileError> {
    let limit = crate::untrusted::READ_LIMIT;
    let file = crate::untrusted::open_untrusted(path).map_err(HistoryFileError::Unreadable)?;
    let size = file.metadata().map_err(HistoryFileError::Unreadable)?.len();
    if size > limit {
        return Err(HistoryFileError::Unreadable(std::io::Error::other(
            format!("larger than {limit} bytes"),
        )));
    }
    let source = path.display().to_string();
    // A file still growing past the limit is refused, not cut short.
    let reader = std::io::BufReader::with_capacity(1 << 16, Capped { file, left: limit });
    match format {
        Format::Jsonl => read_jsonl_history(&source, reader, renames),
        _ => read_history_file(format, &source, reader),
    }
    .map_err(HistoryFileError::Rejected)
}

/// A file read at most `left` more bytes; a byte past them is an error.
pub(crate) struct Capped {
    pub(crate) file: std::fs::File,
    pub(crate) left: u64,
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX).max(1));
        let n = self.file.read(&mut buf[..want])?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(format!(
                "larger than {} bytes: refused",
                crate::untrusted::READ_LIMIT
            )));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

fn read_error(source: &str, e: &std::io::Error) -> HistoryError {
    HistoryError::Line {
        source_name: source.to_string(),
        line: 0,
        message: e.to_string(),
    }
}

fn not_utf8(source: &str, line: usize, column: u64, byte: u64) -> HistoryError {
    HistoryError::Line {
        source_name: source.to_string(),
        line,
        message: format!(
            "not UTF-8 at line {line}, column {column} (byte {byte}); a history is UTF-8 text"
        ),
    }
}

/// Bytes read from a history, a buffer at a time, for the streaming readers: the
/// parser looks at one byte ([`Source::peek`]) or one line ([`Source::read_line`])
/// at a time, while every byte read is checked for UTF-8 on the side, so the
/// first byte that is not is found wherever the parser stopped. A read error
/// ends the input and is kept. [`Source::settle`] says which error wins.
pub(super) struct Source<R> {
    inner: R,
    buf: Box<[u8]>,
    /// Next byte for the parser.
    pos: usize,
    end: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    /// `buf[..checked]` is UTF-8; what follows up to `end` is the start of a
    /// character whose rest is not read yet.
    checked: usize,
    /// Newlines before `buf[0]`, and the stream offset just after the last of them.
    newlines: usize,
    line_start: u64,
    /// The first byte that is not UTF-8: line, column, stream offset.
    bad: Option<(usize, u64, u64)>,
    failed: Option<std::io::Error>,
    done: bool,
}

const BUFFER: usize = 1 << 16;

impl<R: Read> Source<R> {
    pub(super) fn new(inner: R) -> Self {
        Source {
            inner,
            buf: vec![0; BUFFER].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: 0,
            checked: 0,
            newlines: 0,
            line_start: 0,
            bad: None,
            failed: None,
            done: false,
        }
    }

    /// The next byte, not consumed.
    #[inline]
    pub(super) fn peek(&mut self) -> Option<u8> {
        if self.pos < self.end || self.refill() {
            Some(self.buf[self.pos])
        } else {
            None
        }
    }

    /// Consume the byte [`Source::peek`] returned.
    #[inline]
    pub(super) fn advance(&mut self) {
        self.pos += 1;
    }

    /// Bytes consumed so far.
    pub(super) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The next line, without its `\n`, appended to `out` up to `max` bytes (the
    /// rest of a longer line is skipped). `None` at the end of the input;
    /// `Some(false)` for a last line with no `\n`.
    pub(super) fn read_line(&mut self, out: &mut Vec<u8>, max: usize) -> Option<bool> {
        let mut any = false;
        loop {
            if self.pos == self.end && !self.refill() {
                return any.then_some(false);
            }
            any = true;
            let chunk = &self.buf[self.pos..self.end];
            let newline = chunk.iter().position(|b| *b == b'\n');
            let upto = newline.unwrap_or(chunk.len());
            let room = max.saturating_sub(out.len());
            out.extend_from_slice(&chunk[..upto.min(room)]);
            match newline {
                Some(i) => {
                    self.pos += i + 1;
                    return Some(true);
                }
                None => self.pos = self.end,
            }
        }
    }

    /// Read on (every byte consumed) to the end of the input.
    fn drain(&mut self) {
        self.pos = self.end;
        while self.refill() {
            self.pos = self.end;
        }
    }

    /// The outcome of reading a history from this source once its parser stopped,
    /// `found` being the parser's first error: the rest of the input is read, and a
    /// read error, else a byte that is not UTF-8, outranks `found` (as when the
    /// whole file was read into text before it was parsed).
    pub(super) fn settle(
        &mut self,
        source: &str,
        found: Option<HistoryError>,
    ) -> Result<(), HistoryError> {
        self.drain();
        if let Some(e) = &self.failed {
            return Err(read_error(source, e));
        }
        if let Some((line, column, byte)) = self.bad {
            return Err(not_utf8(source, line, column, byte));
        }
        found.map_or(Ok(()), Err)
    }

    /// Read the next buffer (the parser consumed this one); false at the end.
    #[cold]
    fn refill(&mut self) -> bool {
        if self.done {
            return false;
        }
        let keep = self.checked;
        for (i, b) in self.buf[..keep].iter().enumerate() {
            if *b == b'\n' {
                self.newlines += 1;
                self.line_start = self.base + i as u64 + 1;
            }
        }
        // The unfinished character (at most 3 bytes, already consumed) stays in
        // front, to be checked with the bytes that finish it.
        let tail = self.end - keep;
        self.buf.copy_within(keep..self.end, 0);
        self.base += keep as u64;
        let n = loop {
            match self.inner.read(&mut self.buf[tail..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = Some(e);
                    break 0;
                }
            }
        };
        self.done = n == 0;
        self.pos = tail;
        self.end = tail + n;
        self.check();
        n > 0
    }

    fn check(&mut self) {
        if self.bad.is_some() {
            self.checked = self.end;
            return;
        }
        match std::str::from_utf8(&self.buf[..self.end]) {
            Ok(_) => self.checked = self.end,
            Err(e) if e.error_len().is_none() && !self.done => self.checked = e.valid_up_to(),
            Err(e) => {
                let at = e.valid_up_to();
                let before = &self.buf[..at];
                let line = self.newlines + before.iter().filter(|b| **b == b'\n').count() + 1;
                let start = before
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .map_or(self.line_start, |p| self.base + p as u64 + 1);
                let byte = self.base + at as u64;
                self.bad = Some((line, byte - start + 1, byte));
                self.checked = self.end;
            }
        }
    }
}
