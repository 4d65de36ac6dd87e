//! Peak memory of reading and checking EDN histories (issue 33 item 4: one
//! streaming reader for every format, peak memory <= 3x the file's size).
//!
//! One history of 1,000,000 ops (a register: writes and reads of versions on 8
//! processes, Jepsen's `{:type … :f … :value … :process … :time …}` maps) is written
//! twice to a temporary directory: one op map per line, and as a single EDN vector
//! on one line (the whole history one form, as `jepsen.store` writes it). Each is
//! then read and checked in a child process pinned to one core, so that its peak
//! resident memory (VmHWM) is its own, by a checker that folds ops
//! (monotonic-reads) and by linearizability-register, two ways:
//!
//! - **old**: the whole file read into one `String`, every form read into one
//!   generic EDN tree (the reader as it was, [`old_edn`]), then the `History` built while that tree
//!   is held (the reader before this bench, kept here as the baseline: text, tree
//!   and `History` were all alive at once), then the checker over the `History`;
//! - **new**: `faultline check`'s path: the file read as a stream (one entry at a
//!   time; a one-line vector one element at a time), monotonic-reads folding ops
//!   as they are paired with no `History` (`format::fold_history`, two passes),
//!   linearizability-register over the `History` built from the stream
//!   (`format::read_history_file`).
//!
//! Prints, per layout, checker and path: seconds, peak RSS, peak RSS / file size
//! and PASS/MISS against <= 3x.
//!
//! `cargo bench --bench read_formats` (`READ_FORMATS_OPS=N` for another size,
//! `READ_FORMATS_VECTOR_OPS=N` for the one-line vector's, default 300,000 ops
//! (about 50 MB); `READ_FORMATS_OLD=0` skips the old path, which needs tens of
//! times the file's size; `READ_FORMATS_DIR=DIR` writes the histories into DIR
//! and keeps them, so that one child can be run again alone, e.g. under
//! heaptrack: `READ_FORMATS_CHILD='new linearizability-register'
//! target/release/deps/read_formats-… DIR/vector.edn`).

use faultline::oracle::checker::RunOptions;
use faultline::oracle::format::{Format, fold_history, read_history_file};
use faultline::oracle::jepsen::parse_edn;
use faultline::oracle::linear::Linear;
use faultline::oracle::params::Params;
use faultline::oracle::registry::{self, Inputs};
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

#[path = "support/child.rs"]
mod child;

const TARGET_MEMORY: f64 = 3.0;
const CHILD: &str = "READ_FORMATS_CHILD";
const CHECKERS: [&str; 2] = ["monotonic-reads", "linearizability-register"];

fn main() {
    if let Ok(how) = std::env::var(CHILD) {
        in_child(&how);
        return;
    }
    let size_of = |var: &str, default: u64| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let lines_ops = size_of("READ_FORMATS_OPS", 1_000_000);
    let vector_ops = size_of("READ_FORMATS_VECTOR_OPS", 300_000);
    let old = std::env::var("READ_FORMATS_OLD").map_or(true, |v| v != "0");
    let temp = tempfile::tempdir().expect("temp dir");
    let dir =
        std::env::var_os("READ_FORMATS_DIR").map_or_else(|| temp.path().to_path_buf(), Into::into);
    println!(
        "{:<7} {:<25} {:>4} {:>8} {:>10} {:>9}  target",
        "layout", "checker", "path", "s", "peak MiB", "RSS/file"
    );
    for (layout, ops) in [("lines", lines_ops), ("vector", vector_ops)] {
        let history = dir.join(format!("{layout}.edn"));
        write_history(&history, ops, layout == "vector");
        let size = std::fs::metadata(&history).expect("size").len() as f64;
        for checker in CHECKERS {
            for path in ["old", "new"] {
                if path == "old" && !old {
                    continue;
                }
                let how = format!("{path} {checker}");
                let figures = match child::run(CHILD, &how, &[&history]) {
                    Ok(figures) => figures,
                    Err(said) => {
                        println!("{layout:<7} {checker:<25} {path:>4} failed: {said}");
                        continue;
                    }
                };
                let child::Figures {
                    ops: ops_read,
                    secs,
                    peak_kib,
                    anomalies,
                } = figures;
                let memory = peak_kib * 1024.0 / size;
                let verdict = if memory <= TARGET_MEMORY {
                    "PASS"
                } else {
                    "MISS"
                };
                println!(
                    "{layout:<7} {checker:<25} {path:>4} {secs:>8.2} {:>10.1} {memory:>8.2}x  \
                     {verdict} <= 3x file ({ops_read} ops, {anomalies} anomalies, file {:.1} MiB)",
                    peak_kib / 1024.0,
                    size / 1048576.0
                );
            }
        }
    }
}

/// One read-and-check in this process, pinned to one core; prints ops, seconds,
/// peak RSS in KiB and the anomalies found.
fn in_child(how: &str) {
    child::pin_to_one_core();
    let (path, checker) = how.split_once(' ').expect("path checker");
    let history_path = std::env::args().nth(1).expect("history");
    let history_path = Path::new(&history_path);
    let started = Instant::now();
    let params = Params::parse::<&str>(&[]).expect("params");
    let open =
        || BufReader::with_capacity(1 << 16, std::fs::File::open(history_path).expect("history"));
    let report = match (path, checker) {
        ("new", "monotonic-reads") => {
            let mut fold = Linear::new(checker, &params, None).expect("a linear checker");
            let header = fold_history(Format::Edn, "h", open(), Some(|| Ok(open())), &mut fold)
                .expect("reads");
            fold.finish(&header, None).expect("check")
        }
        _ => {
            let history = if path == "old" {
                let text = std::fs::read_to_string(history_path).expect("history");
                let tree = old_edn::read_all(&text).expect("EDN");
                let history = parse_edn("h", &text).expect("parses");
                drop(tree);
                history
            } else {
                read_history_file(Format::Edn, "h", open()).expect("parses")
            };
            let inputs = Inputs {
                history: Some(&history),
                ..Inputs::default()
            };
            registry::run_with(checker, &inputs, &params, &RunOptions::default()).expect("check")
        }
    };
    let secs = started.elapsed().as_secs_f64();
    let ops = match report.run {
        faultline::verdict::CheckerRun::Judged { ops_produced, .. } => ops_produced,
        ref other => panic!("{other:?}"),
    };
    child::report(ops, secs, report.anomalies.len());
}

/// A register history of `ops` ops on 8 processes, one op in flight at a time
/// (so linearizability has one order to find): a write of version `i`, or a read
/// of the last version written. One map per line, or one vector on one line.
fn write_history(path: &Path, ops: u64, vector: bool) {
    let mut out = BufWriter::new(std::fs::File::create(path).expect("history"));
    let sep = if vector { " " } else { "\n" };
    let mut written = 0u64;
    if vector {
        out.write_all(b"[").expect("write");
    }
    for i in 0..ops {
        let process = i % 8;
        let (f, input, output) = if i % 3 == 2 {
            ("read", "nil".to_string(), written.to_string())
        } else {
            ("write", (i + 1).to_string(), (i + 1).to_string())
        };
        if f == "write" {
            written = i + 1;
        }
        let (invoke, complete) = (2 * i, 2 * i + 1);
        write!(
            out,
            "{{:index {invoke}, :time {}, :type :invoke, :process {process}, :f :{f}, :key \
             \"r\", :value {input}}}{sep}{{:index {complete}, :time {}, :type :ok, :process \
             {process}, :f :{f}, :key \"r\", :value {output}}}{sep}",
            invoke * 1000,
            complete * 1000
        )
        .expect("write");
    }
    if vector {
        out.write_all(b"]\n").expect("write");
    }
    out.flush().expect("write");
}

/// The EDN reader before this bench (`src/oracle/edn.rs` as it was), kept as the
/// baseline: every form of the whole text read into one tree.
mod old_edn {
    use faultline::oracle::edn::{Edn, EdnError, EdnKind};

    /// Reads every top-level value of `text`.
    pub fn read_all(text: &str) -> Result<Vec<Edn>, EdnError> {
        let mut reader = Reader {
            bytes: text.as_bytes(),
            text,
            pos: 0,
            line: 1,
            depth: 0,
        };
        let mut out = Vec::new();
        loop {
            reader.skip_blank();
            if reader.pos >= reader.bytes.len() {
                return Ok(out);
            }
            if let Some(value) = reader.value()? {
                out.push(value);
            }
        }
    }

    struct Reader<'a> {
        bytes: &'a [u8],
        text: &'a str,
        pos: usize,
        line: usize,
        /// Values open around the one being read.
        depth: usize,
    }

    /// Deepest nesting read. Jepsen histories nest a handful of levels; the limit keeps a
    /// hostile file of brackets from overflowing the stack (reading recurses).
    const MAX_DEPTH: usize = 256;

    fn is_delimiter(b: u8) -> bool {
        b.is_ascii_whitespace()
            || matches!(
                b,
                b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';'
            )
    }

    impl Reader<'_> {
        fn err(&self, message: impl Into<String>) -> EdnError {
            EdnError {
                line: self.line,
                message: message.into(),
                at_end: self.pos >= self.bytes.len(),
            }
        }

        fn peek(&self) -> Option<u8> {
            self.bytes.get(self.pos).copied()
        }

        fn bump(&mut self) -> Option<u8> {
            let b = self.peek()?;
            self.pos += 1;
            if b == b'\n' {
                self.line += 1;
            }
            Some(b)
        }

        /// Whitespace, commas and `;` comments.
        fn skip_blank(&mut self) {
            while let Some(b) = self.peek() {
                if b.is_ascii_whitespace() || b == b',' {
                    self.bump();
                } else if b == b';' {
                    while let Some(c) = self.bump() {
                        if c == b'\n' {
                            break;
                        }
                    }
                } else {
                    break;
                }
            }
        }

        /// The next value; `None` for a `#_` discard.
        fn value(&mut self) -> Result<Option<Edn>, EdnError> {
            if self.depth >= MAX_DEPTH {
                return Err(self.err(format!("values nested deeper than {MAX_DEPTH} levels")));
            }
            self.depth += 1;
            let value = self.value_here();
            self.depth -= 1;
            value
        }

        fn value_here(&mut self) -> Result<Option<Edn>, EdnError> {
            self.skip_blank();
            let line = self.line;
            let Some(b) = self.peek() else {
                return Err(self.err("input ends where a value was expected"));
            };
            let kind = match b {
                b'(' => EdnKind::List(self.seq(b')')?),
                b'[' => EdnKind::Vector(self.seq(b']')?),
                b'{' => {
                    let items = self.seq(b'}')?;
                    if items.len() % 2 != 0 {
                        return Err(EdnError {
                            line,
                            message: "map has an odd number of forms".into(),
                            at_end: false,
                        });
                    }
                    let mut entries = Vec::with_capacity(items.len() / 2);
                    let mut it = items.into_iter();
                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                        entries.push((k, v));
                    }
                    EdnKind::Map(entries)
                }
                b'"' => EdnKind::Str(self.string()?),
                b'\\' => {
                    self.bump();
                    let token = self.token().to_string();
                    let c = match token.as_str() {
                        "newline" => '\n',
                        "space" => ' ',
                        "tab" => '\t',
                        "return" => '\r',
                        t => {
                            let mut chars = t.chars();
                            match (chars.next(), chars.next()) {
                                (Some(c), None) => c,
                                _ => {
                                    return Err(
                                        self.err(format!("unknown character literal \\{t}"))
                                    );
                                }
                            }
                        }
                    };
                    EdnKind::Char(c)
                }
                b'#' => return self.dispatch(line),
                b')' | b']' | b'}' => {
                    return Err(self.err(format!("unexpected `{}`", b as char)));
                }
                _ => self.atom()?,
            };
            Ok(Some(Edn { line, kind }))
        }

        fn dispatch(&mut self, line: usize) -> Result<Option<Edn>, EdnError> {
            self.bump();
            match self.peek() {
                Some(b'{') => {
                    let items = self.seq(b'}')?;
                    Ok(Some(Edn {
                        line,
                        kind: EdnKind::Set(items),
                    }))
                }
                Some(b'_') => {
                    self.bump();
                    self.value()?;
                    Ok(None)
                }
                _ => {
                    let tag = self.token().to_string();
                    if tag.is_empty() {
                        return Err(self.err("`#` without a tag"));
                    }
                    let inner = self
                        .value()?
                        .ok_or_else(|| self.err(format!("tag #{tag} has no value")))?;
                    Ok(Some(Edn {
                        line,
                        kind: EdnKind::Tagged(tag, Box::new(inner)),
                    }))
                }
            }
        }

        /// Forms up to the closing byte (the opening one is current).
        fn seq(&mut self, close: u8) -> Result<Vec<Edn>, EdnError> {
            let open_line = self.line;
            self.bump();
            let mut items = Vec::new();
            loop {
                self.skip_blank();
                match self.peek() {
                    None => {
                        return Err(EdnError {
                            line: open_line,
                            message: format!(
                                "`{}` opened here is never closed (input ends)",
                                match close {
                                    b')' => '(',
                                    b']' => '[',
                                    _ => '{',
                                }
                            ),
                            at_end: true,
                        });
                    }
                    Some(b) if b == close => {
                        self.bump();
                        return Ok(items);
                    }
                    Some(_) => {
                        if let Some(v) = self.value()? {
                            items.push(v);
                        }
                    }
                }
            }
        }

        fn string(&mut self) -> Result<String, EdnError> {
            let start_line = self.line;
            self.bump();
            let mut out = String::new();
            loop {
                let Some(b) = self.bump() else {
                    return Err(EdnError {
                        line: start_line,
                        message: "string is never closed (input ends)".into(),
                        at_end: true,
                    });
                };
                match b {
                    b'"' => return Ok(out),
                    b'\\' => {
                        let esc = self
                            .bump()
                            .ok_or_else(|| self.err("input ends in an escape"))?;
                        out.push(match esc {
                            b'n' => '\n',
                            b't' => '\t',
                            b'r' => '\r',
                            b'"' => '"',
                            b'\\' => '\\',
                            other => {
                                return Err(self.err(format!("unknown escape \\{}", other as char)));
                            }
                        });
                    }
                    _ => {
                        // Copy the whole UTF-8 sequence starting at this byte.
                        let start = self.pos - 1;
                        let width = utf8_width(b);
                        let end = (start + width).min(self.bytes.len());
                        out.push_str(self.text.get(start..end).unwrap_or("\u{fffd}"));
                        self.pos = end;
                    }
                }
            }
        }

        fn token(&mut self) -> &str {
            let start = self.pos;
            while let Some(b) = self.peek() {
                if is_delimiter(b) {
                    break;
                }
                self.pos += 1;
            }
            self.text.get(start..self.pos).unwrap_or("")
        }

        fn atom(&mut self) -> Result<EdnKind, EdnError> {
            let token = self.token().to_string();
            if token.is_empty() {
                return Err(self.err("unexpected character"));
            }
            Ok(match token.as_str() {
                "nil" => EdnKind::Nil,
                "true" => EdnKind::Bool(true),
                "false" => EdnKind::Bool(false),
                t if t.starts_with(':') => EdnKind::Keyword(t[1..].to_string()),
                t if t.starts_with(|c: char| c.is_ascii_digit())
                    || (t.len() > 1
                        && t.starts_with(['-', '+'])
                        && t[1..].starts_with(|c: char| c.is_ascii_digit())) =>
                {
                    number(t).ok_or_else(|| self.err(format!("bad number `{t}`")))?
                }
                t => EdnKind::Symbol(t.to_string()),
            })
        }
    }

    fn utf8_width(first: u8) -> usize {
        match first {
            0xF0..=0xFF => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        }
    }

    /// Integers (an `N` suffix allowed) and floats (an `M` suffix allowed).
    fn number(token: &str) -> Option<EdnKind> {
        let t = token.trim_end_matches(['N', 'M']);
        if let Ok(i) = t.parse::<i64>() {
            return Some(EdnKind::Int(i));
        }
        t.parse::<f64>().ok().map(EdnKind::Float)
    }
}
