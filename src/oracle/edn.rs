//! A reader for the subset of EDN that Jepsen / Knossos histories use: maps,
//! vectors, lists, sets, keywords, symbols, strings, integers, floats, `nil`,
//! booleans, characters, comments, `#_` discards and tagged literals (kept with
//! their tag). Written here because the EDN crates on crates.io are deprecated or
//! pull in long-unmaintained dependency trees for a few hundred lines of grammar.
//!
//! A history is read as a stream ([`EdnEntries`]): one entry at a time from a
//! buffered byte source, never the whole file as text or as one tree; nesting
//! ([`MAX_DEPTH`]) and an entry's size ([`ENTRY_LIMIT`]) are bounded.

use super::format::Source;
use serde_json::{Map, Number, Value};

/// One EDN value, with the line it starts on (for error messages).
#[derive(Debug, Clone, PartialEq)]
pub struct Edn {
    pub line: usize,
    pub kind: EdnKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EdnKind {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// Without the leading colon.
    Keyword(String),
    Symbol(String),
    Char(char),
    Vector(Vec<Edn>),
    List(Vec<Edn>),
    Set(Vec<Edn>),
    Map(Vec<(Edn, Edn)>),
    Tagged(String, Box<Edn>),
}

impl Edn {
    /// The value under keyword `:key` of a map.
    pub fn get(&self, key: &str) -> Option<&Edn> {
        match &self.kind {
            EdnKind::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(&k.kind, EdnKind::Keyword(name) if name == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The JSON rendering used inside faultline's op model: keywords and
    /// symbols become strings, collections become arrays, map keys strings.
    pub fn to_json(&self) -> Value {
        match &self.kind {
            EdnKind::Nil => Value::Null,
            EdnKind::Bool(b) => Value::Bool(*b),
            EdnKind::Int(i) => Value::Number((*i).into()),
            EdnKind::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            EdnKind::Str(s) | EdnKind::Keyword(s) | EdnKind::Symbol(s) => Value::String(s.clone()),
            EdnKind::Char(c) => Value::String(c.to_string()),
            EdnKind::Vector(items) | EdnKind::List(items) | EdnKind::Set(items) => {
                Value::Array(items.iter().map(Edn::to_json).collect())
            }
            EdnKind::Map(entries) => {
                let mut map = Map::new();
                for (k, v) in entries {
                    let key = match k.to_json() {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    map.insert(key, v.to_json());
                }
                Value::Object(map)
            }
            EdnKind::Tagged(_, inner) => inner.to_json(),
        }
    }
}

/// A syntax error: line and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdnError {
    pub line: usize,
    pub message: String,
    /// The input ended inside a value (a torn file, not a typo).
    pub at_end: bool,
}

/// Reads every top-level value of `text`.
pub fn read_all(text: &str) -> Result<Vec<Edn>, EdnError> {
    let mut source = Source::new(text.as_bytes());
    let mut reader = Reader::new(&mut source);
    let mut out = Vec::new();
    loop {
        reader.skip_blank();
        if reader.peek().is_none() {
            return Ok(out);
        }
        reader.entry_start = reader.source.offset();
        if let Some(value) = reader.value()? {
            out.push(value);
        }
    }
}

/// What [`EdnEntries`] reads next.
#[derive(Debug, Clone, PartialEq)]
pub enum EdnItem {
    /// One entry of the history.
    Entry(Edn),
    /// The first form, a vector or list whose elements were read as the entries
    /// (the whole history in one form), is followed by another form: it is one
    /// entry among several, on `line`, and not an op map.
    NotAlone { line: usize },
}

/// The entries of an EDN history read as a stream: each top-level form, or, when
/// the first form is a vector or list, each of its elements as it is read (a
/// whole history in one form, one line, holds one element at a time). Nothing is
/// kept from one entry to the next.
pub struct EdnEntries<'s, R> {
    reader: Reader<'s, R>,
    state: Top,
}

#[derive(Clone, Copy)]
enum Top {
    Start,
    /// Inside the first form, a vector or list, opened on `line`.
    Elements {
        close: u8,
        line: usize,
    },
    /// The first form, a vector or list opened on `line`, is closed.
    Closed {
        line: usize,
    },
    Forms,
}

impl<'s, R: std::io::Read> EdnEntries<'s, R> {
    pub(super) fn new(source: &'s mut Source<R>) -> Self {
        EdnEntries {
            reader: Reader::new(source),
            state: Top::Start,
        }
    }

    /// The next entry; `None` at the end of the input.
    pub fn next_item(&mut self) -> Result<Option<EdnItem>, EdnError> {
        let r = &mut self.reader;
        loop {
            r.skip_blank();
            let Some(b) = r.peek() else {
                return match self.state {
                    Top::Elements { close, line } => Err(never_closed(close, line)),
                    _ => Ok(None),
                };
            };
            r.entry_start = r.source.offset();
            match self.state {
                Top::Start if matches!(b, b'[' | b'(') => {
                    let close = if b == b'[' { b']' } else { b')' };
                    self.state = Top::Elements {
                        close,
                        line: r.line,
                    };
                    r.bump();
                    // As deep as an element of the form read whole.
                    r.depth = 1;
                }
                Top::Elements { close, line } if b == close => {
                    r.bump();
                    r.depth = 0;
                    self.state = Top::Closed { line };
                }
                Top::Elements { .. } => {
                    if let Some(value) = r.value()? {
                        return Ok(Some(EdnItem::Entry(value)));
                    }
                }
                Top::Closed { line } => {
                    if r.value()?.is_some() {
                        self.state = Top::Forms;
                        return Ok(Some(EdnItem::NotAlone { line }));
                    }
                }
                Top::Start | Top::Forms => {
                    if let Some(value) = r.value()? {
                        self.state = Top::Forms;
                        return Ok(Some(EdnItem::Entry(value)));
                    }
                }
            }
        }
    }
}

struct Reader<'s, R> {
    source: &'s mut Source<R>,
    line: usize,
    /// Values open around the one being read.
    depth: usize,
    /// Where the entry being read began (see [`ENTRY_LIMIT`]).
    entry_start: u64,
    scratch: Vec<u8>,
}

/// Deepest nesting read. Jepsen histories nest a handful of levels; the limit keeps a
/// hostile file of brackets from overflowing the stack (reading recurses).
pub const MAX_DEPTH: usize = 256;

/// The most bytes one entry (an op map, or a top-level form) may span: an entry is
/// read whole into a tree several times its size, and an op is tens of bytes.
pub const ENTRY_LIMIT: u64 = 16 << 20;

fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b',' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'"' | b';'
        )
}

fn never_closed(close: u8, line: usize) -> EdnError {
    EdnError {
        line,
        message: format!(
            "`{}` opened here is never closed (input ends)",
            match close {
                b')' => '(',
                b']' => '[',
                _ => '{',
            }
        ),
        at_end: true,
    }
}

impl<'s, R: std::io::Read> Reader<'s, R> {
    fn new(source: &'s mut Source<R>) -> Self {
        Reader {
            source,
            line: 1,
            depth: 0,
            entry_start: 0,
            scratch: Vec::new(),
        }
    }

    fn err(&mut self, message: impl Into<String>) -> EdnError {
        EdnError {
            line: self.line,
            message: message.into(),
            at_end: self.peek().is_none(),
        }
    }

    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.source.peek()
    }

    #[inline]
    fn bump(&mut self) -> Option<u8> {
        let b = self.source.peek()?;
        self.source.advance();
        if b == b'\n' {
            self.line += 1;
        }
        Some(b)
    }

    /// Refuse an entry grown past [`ENTRY_LIMIT`].
    fn within_limit(&mut self) -> Result<(), EdnError> {
        if self.source.offset() - self.entry_start > ENTRY_LIMIT {
            return Err(self.err(format!(
                "one entry longer than {ENTRY_LIMIT} bytes: refused (an op is one map; is \
                 this a history?)"
            )));
        }
        Ok(())
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
        self.within_limit()?;
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
                let token = self.token()?;
                let c = match token.as_str() {
                    "newline" => '\n',
                    "space" => ' ',
                    "tab" => '\t',
                    "return" => '\r',
                    t => {
                        let mut chars = t.chars();
                        match (chars.next(), chars.next()) {
                            (Some(c), None) => c,
                            _ => return Err(self.err(format!("unknown character literal \\{t}"))),
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
                let tag = self.token()?;
                if tag.is_empty() {
                    return Err(self.err("`#` without a tag"));
                }
                let Some(inner) = self.value()? else {
                    return Err(self.err(format!("tag #{tag} has no value")));
                };
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
                None => return Err(never_closed(close, open_line)),
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
        let mut out = Vec::new();
        loop {
            let Some(b) = self.bump() else {
                return Err(EdnError {
                    line: start_line,
                    message: "string is never closed (input ends)".into(),
                    at_end: true,
                });
            };
            match b {
                b'"' => {
                    // Bytes that are not UTF-8 are the source's to report (`Source`).
                    return Ok(String::from_utf8(out)
                        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()));
                }
                b'\\' => {
                    let esc = match self.bump() {
                        Some(esc) => esc,
                        None => return Err(self.err("input ends in an escape")),
                    };
                    out.push(match esc {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'"' => b'"',
                        b'\\' => b'\\',
                        other => {
                            return Err(self.err(format!("unknown escape \\{}", other as char)));
                        }
                    });
                }
                _ => out.push(b),
            }
            // Each byte read adds one: every multiple is seen.
            if out.len().is_multiple_of(4096) {
                self.within_limit()?;
            }
        }
    }

    fn token(&mut self) -> Result<String, EdnError> {
        self.scratch.clear();
        while let Some(b) = self.peek() {
            if is_delimiter(b) {
                break;
            }
            self.scratch.push(b);
            self.source.advance();
            if self.scratch.len().is_multiple_of(4096) {
                self.within_limit()?;
            }
        }
        Ok(String::from_utf8_lossy(&self.scratch).into_owned())
    }

    fn atom(&mut self) -> Result<EdnKind, EdnError> {
        let token = self.token()?;
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

/// Integers (an `N` suffix allowed) and floats (an `M` suffix allowed).
fn number(token: &str) -> Option<EdnKind> {
    let t = token.trim_end_matches(['N', 'M']);
    if let Ok(i) = t.parse::<i64>() {
        return Some(EdnKind::Int(i));
    }
    t.parse::<f64>().ok().map(EdnKind::Float)
}
