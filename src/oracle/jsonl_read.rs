//! faultline's JSONL history read as a stream: line by line from a reader (no
//! whole-file text), each line read straight into borrowed fields (no JSON value
//! per record; `input` and `output` stay raw JSON text), each op handed to an
//! [`OpSink`] as it is read. A checker that folds ops judges the history while it
//! is read; [`super::history::parse_jsonl`] collects them into a
//! [`History`](super::history::History).
//!
//! Three readers, each taking what the one before it does not: a hand scanner
//! ([`scan`]) for the common record (the default fields, strings without escapes,
//! integers, literals, `input`/`output` of any shape checked as it cuts them
//! out); a typed serde visitor for any other record of the default fields; and,
//! for a line neither takes as it is — a field of another type, an unknown or
//! repeated field, a renamed field, the `ops_total` trailer, anything invalid —
//! the per-line reader of `history.rs`, which reads it as a JSON value, so every
//! such line means, and every error says (file, line, field), exactly what it did
//! when the whole file was parsed into values. The scanner takes a line only when
//! the visitor would take it and read the same.

use super::history::{DEFAULT_FIELDS, HistoryError, Op, canonical_field, op_from_map};
use super::intern::IntMap;
use super::op_view::{Key, OpSink, OpView, Val, plain_run};
use serde::de::{self, Deserializer as _, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::{self, Write as _};
use std::io::{BufRead, ErrorKind};

/// The longest line read: one op is one line, and a line longer than this is
/// refused rather than held whole in memory.
pub const LINE_LIMIT: usize = 16 << 20;

/// What a history is besides its ops: where it came from, the fields it has.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Header {
    pub source: String,
    /// Keys present in EVERY record (absent anywhere → not listed).
    pub present_fields: BTreeSet<String>,
    /// Keys some record has that the reader does not read.
    pub unknown_fields: BTreeSet<String>,
    /// Ops read.
    pub ops: u64,
}

/// Read a JSONL history from `reader`, handing each op to `sink` in file order.
/// `renames` maps the reader's field to the recorder's name for it. `source`
/// names the file in errors.
pub fn read_jsonl(
    source: &str,
    mut reader: impl BufRead,
    renames: &BTreeMap<String, String>,
    sink: &mut impl OpSink,
) -> Result<Header, HistoryError> {
    let want = sink.input_field().map(str::to_owned);
    let mut state = State::new(source, renames, want.as_deref());
    let mut bufs = Bufs::default();
    // A line cut by the end of the reader's buffer, put together here; every other
    // line is read where it lies in that buffer (no copy).
    let mut held: Vec<u8> = Vec::new();
    let mut at = At::default();
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(state.line_error(at.line + 1, e.to_string())),
        };
        if chunk.is_empty() {
            break;
        }
        let taken = chunk.len();
        let mut rest = chunk;
        if !held.is_empty() {
            let Some(nl) = memchr::memchr(b'\n', rest) else {
                state.within_limit(at.line + 1, held.len() + rest.len())?;
                held.extend_from_slice(rest);
                reader.consume(taken);
                continue;
            };
            state.within_limit(at.line + 1, held.len() + nl)?;
            held.extend_from_slice(&rest[..nl]);
            state.bytes(&mut at, &held, false, &mut bufs, sink)?;
            held.clear();
            rest = &rest[nl + 1..];
        }
        // The buffer's whole lines checked as UTF-8 at once (SIMD); if any is not,
        // line by line, so that the error says which.
        let whole = memchr::memrchr(b'\n', rest)
            .and_then(|nl| Some((simdutf8::basic::from_utf8(&rest[..nl]).ok()?, nl + 1)));
        if let Some((lines, end)) = whole {
            // Cut with memchr's iterator: `str::split` searched byte-wise per line.
            let mut start = 0;
            let ends = memchr::memchr_iter(b'\n', lines.as_bytes());
            for nl in ends.chain(std::iter::once(lines.len())) {
                // Both ends are at a newline or the end: char boundaries.
                let text = &lines[start..nl];
                start = nl + 1;
                state.within_limit(at.line + 1, text.len())?;
                state.text(&mut at, text, false, &mut bufs, sink)?;
            }
            rest = &rest[end..];
        }
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            state.within_limit(at.line + 1, nl)?;
            state.bytes(&mut at, &rest[..nl], false, &mut bufs, sink)?;
            rest = &rest[nl + 1..];
        }
        state.within_limit(at.line + 1, rest.len())?;
        held.extend_from_slice(rest);
        reader.consume(taken);
    }
    // No newline: the file's last line (a torn one is an error).
    if !held.is_empty() {
        state.bytes(&mut at, &held, true, &mut bufs, sink)?;
    }
    state.finish()
}

/// Where the reader is: lines read, and the byte offset of the next line.
#[derive(Default)]
struct At {
    line: usize,
    offset: usize,
}

/// What the reader keeps from line to line: small, whatever the history's size
/// but for one entry per op id (duplicates are refused).
struct State<'s> {
    source: &'s str,
    renames: &'s BTreeMap<String, String>,
    /// The input member the sink reads ([`OpSink::input_field`]), which the
    /// scanner notes as it reads the input.
    want: Option<&'s str>,
    /// Default fields every record so far had (bit i: `DEFAULT_FIELDS[i]`).
    present: u16,
    /// Other fields every record so far had (`None` before the first record).
    present_other: Option<BTreeSet<String>>,
    unknown: BTreeSet<String>,
    trailer: Option<(usize, u64)>,
    ids: Seen,
    /// Per process, its op with no completion and no timeout marker (line, op id).
    open: HashMap<Box<str>, (usize, String)>,
    /// The first lost completion, reported when the file has no other error (as
    /// when the whole file was parsed first).
    lost: Option<HistoryError>,
    ops: u64,
}

impl<'s> State<'s> {
    fn new(source: &'s str, renames: &'s BTreeMap<String, String>, want: Option<&'s str>) -> Self {
        State {
            source,
            renames,
            want,
            present: u16::MAX,
            present_other: None,
            unknown: BTreeSet::new(),
            trailer: None,
            ids: Seen::default(),
            open: HashMap::new(),
            lost: None,
            ops: 0,
        }
    }

    fn line_error(&self, line: usize, message: String) -> HistoryError {
        HistoryError::Line {
            source_name: self.source.to_string(),
            line,
            message,
        }
    }

    fn field_error(&self, line: usize, field: &str, message: String) -> HistoryError {
        HistoryError::field(self.source, line, field, message)
    }

    /// A line longer than the limit is refused rather than held whole.
    fn within_limit(&self, line: usize, len: usize) -> Result<(), HistoryError> {
        if len <= LINE_LIMIT {
            return Ok(());
        }
        Err(self.line_error(
            line,
            format!(
                "longer than {LINE_LIMIT} bytes: refused (one op is one line of JSON; is this a \
                 history?)"
            ),
        ))
    }

    /// The next line, `bytes` without its newline; `last`: the file ended it.
    fn bytes(
        &mut self,
        at: &mut At,
        bytes: &[u8],
        last: bool,
        bufs: &mut Bufs,
        sink: &mut impl OpSink,
    ) -> Result<(), HistoryError> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let line = at.line + 1;
            self.line_error(
                line,
                format!(
                    "not UTF-8 at line {line}, column {} (byte {}); a history is UTF-8 text",
                    e.valid_up_to() + 1,
                    at.offset + e.valid_up_to()
                ),
            )
        })?;
        self.text(at, text, last, bufs, sink)
    }

    /// The next line, `text` without its newline.
    fn text(
        &mut self,
        at: &mut At,
        text: &str,
        last: bool,
        bufs: &mut Bufs,
        sink: &mut impl OpSink,
    ) -> Result<(), HistoryError> {
        at.line += 1;
        let line = at.line;
        at.offset += text.len() + 1;
        let text = text.trim_end_matches('\r');
        // A record starts with `{`; only another line needs trimming to be judged.
        if !text.starts_with('{') && text.trim().is_empty() {
            return Ok(());
        }
        self.line(line, text, last, bufs, sink)
    }

    fn line(
        &mut self,
        line: usize,
        text: &str,
        last: bool,
        bufs: &mut Bufs,
        sink: &mut impl OpSink,
    ) -> Result<(), HistoryError> {
        if self.renames.is_empty() {
            // Read in place (a record is a few hundred bytes: not moved per line).
            let mut rec = Fast::default();
            let read =
                scan(text, &mut rec, self.want).is_some() || typed(text).map(|t| rec = t).is_some();
            if read && let Some(view) = rec.view(bufs, self.want) {
                if let Some((first, _)) = self.trailer {
                    return Err(self.trailer_error(line, first));
                }
                self.fields(rec.seen, None);
                return self.accept(line, &view, sink);
            }
        }
        self.slow_line(line, text, last, sink)
    }

    fn trailer_error(&self, line: usize, first: usize) -> HistoryError {
        self.line_error(
            line,
            format!("record after the `ops_total` trailer on line {first}"),
        )
    }

    /// The line read as a JSON value, as every line was before the typed reader.
    fn slow_line(
        &mut self,
        line: usize,
        text: &str,
        last: bool,
        sink: &mut impl OpSink,
    ) -> Result<(), HistoryError> {
        let mut map: Map<String, Value> = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(self.line_error(line, "expected a JSON object".into())),
            // No trailing newline and invalid JSON: the recorder was cut off.
            Err(e) if last => {
                return Err(self.line_error(
                    line,
                    format!("truncated final line (no trailing newline, invalid JSON: {e})"),
                ));
            }
            Err(e) => return Err(self.line_error(line, format!("invalid JSON: {e}"))),
        };
        for (to, from) in self.renames {
            if let Some(value) = map.remove(from) {
                map.insert(to.clone(), value);
            }
        }
        if let Some((first, _)) = self.trailer {
            return Err(self.trailer_error(line, first));
        }
        if map.len() == 1
            && let Some(total) = map.get("ops_total")
        {
            let total = total
                .as_u64()
                .ok_or_else(|| self.field_error(line, "ops_total", "expected an integer".into()))?;
            self.trailer = Some((line, total));
            return Ok(());
        }
        let mut mask = 0u16;
        let mut other = BTreeSet::new();
        for key in map.keys() {
            let key = canonical_field(key);
            match DEFAULT_FIELDS.iter().position(|f| *f == key) {
                Some(i) => mask |= 1 << i,
                None => {
                    other.insert(key.to_string());
                }
            }
        }
        self.fields(mask, Some(other));
        let op: Op = op_from_map(self.source, line, &map)?;
        self.accept(line, &op.view(), sink)
    }

    /// One more record with the default fields `mask` and the others `other`
    /// (`None`: none).
    fn fields(&mut self, mask: u16, other: Option<BTreeSet<String>>) {
        self.present &= mask;
        let Some(other) = other else {
            // No other field is in every record now. (The common record: no set
            // built, dropped or walked.)
            match &mut self.present_other {
                Some(p) => p.clear(),
                None => self.present_other = Some(BTreeSet::new()),
            }
            return;
        };
        self.unknown.extend(other.iter().cloned());
        self.present_other = Some(match self.present_other.take() {
            None => other,
            Some(p) if p.is_empty() => p,
            Some(p) => p.intersection(&other).cloned().collect(),
        });
    }

    /// The checks across records, then the op to the sink.
    fn accept(
        &mut self,
        line: usize,
        op: &OpView<'_>,
        sink: &mut impl OpSink,
    ) -> Result<(), HistoryError> {
        if op.timeout && op.complete_ts.is_some() {
            return Err(self.field_error(
                line,
                "complete_ts",
                "a timed-out op must have complete_ts null".into(),
            ));
        }
        if !op.op_id.is_empty()
            && let Some(first) = self.ids.insert(op.op_id, line)
        {
            return Err(self.field_error(
                line,
                "op_id",
                format!(
                    "op_id {} already seen on line {first}: duplicate response (recorder error)",
                    op.op_id
                ),
            ));
        }
        if !self.open.is_empty()
            && let Some((prev_line, prev_id)) = self.open.remove(op.process)
            && !op.process.is_empty()
            && self.lost.is_none()
        {
            self.lost = Some(self.field_error(
                prev_line,
                "complete_ts",
                format!(
                    "op {prev_id} has no completion and no timeout marker, yet process {} issued \
                     op {} on line {line}: its completion record is missing",
                    op.process, op.op_id
                ),
            ));
        }
        if op.complete_ts.is_none() && !op.timeout && op.error.is_none() {
            self.open
                .insert(op.process.into(), (line, op.op_id.to_string()));
        }
        self.ops += 1;
        sink.op(op);
        Ok(())
    }

    fn finish(self) -> Result<Header, HistoryError> {
        if let Some((line, total)) = self.trailer
            && total != self.ops
        {
            return Err(self.line_error(
                line,
                format!(
                    "truncated: the trailer counts {total} ops but {} were read",
                    self.ops
                ),
            ));
        }
        if let Some(lost) = self.lost {
            return Err(lost);
        }
        let mut present = BTreeSet::new();
        if let Some(other) = self.present_other {
            present = other;
            for (i, f) in DEFAULT_FIELDS.iter().enumerate() {
                if self.present & (1 << i) != 0 {
                    present.insert(f.to_string());
                }
            }
        }
        Ok(Header {
            source: self.source.to_string(),
            present_fields: present,
            unknown_fields: self.unknown,
            ops: self.ops,
        })
    }
}

/// Op ids seen, with the line of each: numbers apart (see [`IntMap`]), so the
/// common numbered ids hash nothing.
#[derive(Default)]
struct Seen {
    ints: IntMap,
    /// Lines past [`FAR`], of ids noted as on [`FAR`].
    far: HashMap<u64, usize, foldhash::fast::RandomState>,
    texts: HashMap<Box<str>, usize, foldhash::fast::RandomState>,
}

/// In [`Seen::ints`]: the id's line is in [`Seen::far`].
const FAR: u32 = u32::MAX - 1;

impl Seen {
    /// The line `id` was first seen on, if it was; else it is noted as on `line`.
    fn insert(&mut self, id: &str, line: usize) -> Option<usize> {
        if let Some(v) = super::intern::canonical_u64(id) {
            let at = u32::try_from(line).ok().filter(|l| *l < FAR).unwrap_or(FAR);
            return match self.ints.get_or_insert(v, at) {
                Some(FAR) => self.far.get(&v).copied(),
                Some(first) => Some(first as usize),
                None => {
                    if at == FAR {
                        self.far.insert(v, line);
                    }
                    None
                }
            };
        }
        if let Some(first) = self.texts.get(id) {
            return Some(*first);
        }
        self.texts.insert(id.into(), line);
        None
    }
}

/// Where the fields of a numbered id are printed (reused from line to line).
#[derive(Default)]
struct Bufs {
    op_id: String,
    process: String,
    op_type: String,
    key: String,
    error: String,
    node: String,
}

/// A string, or an integer the op's string fields hold printed.
#[derive(Debug, PartialEq)]
enum Text<'t> {
    Str(Cow<'t, str>),
    Int(i128),
    /// A non-negative integer as the line has it (its canonical decimal form).
    Digits(&'t str),
}

impl Text<'_> {
    fn show<'b>(&'b self, buf: &'b mut String) -> &'b str {
        match self {
            Text::Str(s) => s,
            Text::Digits(s) => s,
            Text::Int(v) => {
                buf.clear();
                let _ = write!(buf, "{v}");
                buf
            }
        }
    }
}

/// A record as the scanner or the typed visitor read it; a field absent is
/// `None`, `null` is `Some(None)` where the two differ.
#[derive(Default, Debug)]
struct Fast<'t> {
    /// Fields present (bit i: `DEFAULT_FIELDS[i]`).
    seen: u16,
    op_id: Option<Text<'t>>,
    process: Option<Text<'t>>,
    invoke_ts: Option<u64>,
    complete_ts: Option<u64>,
    op_type: Option<Text<'t>>,
    key: Option<Text<'t>>,
    /// Raw JSON text, checked.
    input: Option<&'t str>,
    output: Option<&'t str>,
    error: Option<Text<'t>>,
    timeout: Option<bool>,
    node: Option<Text<'t>>,
    fault_epoch: Option<u64>,
    /// `input` and `output` are known to parse again (see [`reparses`]).
    checked: bool,
    /// The member of `input` the sink reads, as the scanner found it.
    member: Member<'t>,
}

/// The one member of an op's input object the sink reads (`want`), as the
/// scanner found it while checking the input.
#[derive(Default, Debug, Clone, Copy)]
enum Member<'t> {
    /// Not known: no name wanted, the input is not an object, or the last
    /// member whose name has an escape may have been that name.
    #[default]
    Unread,
    /// The value of the last member of that name (none: no member has it).
    Read(Option<Val<'t>>),
}

const INVOKE_TS: u16 = 1 << 2;
const OP_TYPE: u16 = 1 << 4;

/// serde_json's own limit on nesting when it parses a value.
const NESTING_LIMIT: usize = 128;

/// The longest number the scanner takes in `input` or `output`: a longer one
/// may be out of `f64`'s range, which serde_json refuses when it parses it.
const NUMBER_LEN: usize = 256;

/// `json` (valid JSON text, cut out by serde_json as a raw value, which checks
/// less than parsing it does) surely parses again as a value: it opens fewer than
/// [`NESTING_LIMIT`] arrays and objects inside each other, has no `\u` escape of
/// a surrogate (a lone one is refused) and no number with an exponent or longer
/// than [`NUMBER_LEN`] (out of range is refused). Anything else goes to the
/// per-line reader, which says what is wrong (it was read as null).
fn reparses(json: &str) -> bool {
    let b = json.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                i += 1;
                while let Some(&c) = b.get(i) {
                    match c {
                        b'"' => break,
                        b'\\' if b.get(i + 1) == Some(&b'u') && surrogate(&b[i + 2..]) => {
                            return false;
                        }
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth >= NESTING_LIMIT {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'-' | b'0'..=b'9' => {
                let len = b[i..]
                    .iter()
                    .take_while(|c| matches!(c, b'-' | b'+' | b'.' | b'0'..=b'9' | b'e' | b'E'))
                    .count();
                let number = &b[i..i + len];
                if len > NUMBER_LEN || number.iter().any(|c| matches!(c, b'e' | b'E')) {
                    return false;
                }
                i += len;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    true
}

/// `hex` starts with the four hex digits of a surrogate (D800–DFFF).
fn surrogate(hex: &[u8]) -> bool {
    matches!(
        hex,
        [b'd' | b'D', b'8' | b'9' | b'a'..=b'f' | b'A'..=b'F', ..]
    )
}

impl<'t> Fast<'t> {
    /// The op, or `None` when the per-line reader must say what is wrong (a
    /// required field null, a completion before its invoke).
    fn view<'b>(&'b self, bufs: &'b mut Bufs, want: Option<&'b str>) -> Option<OpView<'b>> {
        if self.seen & INVOKE_TS != 0 && self.invoke_ts.is_none()
            || self.seen & OP_TYPE != 0 && self.op_type.is_none()
        {
            return None;
        }
        let invoke_ts = self.invoke_ts.unwrap_or(0);
        if self.complete_ts.is_some_and(|c| c < invoke_ts) {
            return None;
        }
        // A checker parses raw text later: text that might not parse goes to the
        // per-line reader, which refuses it naming the line (it was read as null).
        if !self.checked
            && [self.input, self.output]
                .into_iter()
                .flatten()
                .any(|raw| !reparses(raw))
        {
            return None;
        }
        let Bufs {
            op_id,
            process,
            op_type,
            key,
            error,
            node,
        } = bufs;
        let raw = |v: Option<&'b str>| Val::Json(v.unwrap_or("null"));
        Some(OpView {
            op_id: self.op_id.as_ref().map_or("", |t| t.show(op_id)),
            process: self.process.as_ref().map_or("", |t| t.show(process)),
            invoke_ts,
            complete_ts: self.complete_ts,
            op_type: self.op_type.as_ref().map_or("", |t| t.show(op_type)),
            key: self.key.as_ref().map(|t| t.show(key)),
            input: raw(self.input),
            input_member: match (want, self.member) {
                (Some(name), Member::Read(value)) => Some((name, value)),
                _ => None,
            },
            output: raw(self.output),
            error: self.error.as_ref().map(|t| t.show(error)),
            timeout: self.timeout.unwrap_or(false),
            node: self.node.as_ref().map(|t| t.show(node)),
            // Epochs count from 1: a client that writes 0 for "no fault" is outside one.
            fault_epoch: self.fault_epoch.filter(|e| *e != 0),
        })
    }
}

/// The index in `DEFAULT_FIELDS` of a record's field name (`timeout_marker` is
/// `timeout`); `None` for any other name.
fn field_index(name: &str) -> Option<u16> {
    Some(match name {
        "op_id" => 0,
        "process" => 1,
        "invoke_ts" => 2,
        "complete_ts" => 3,
        "op_type" => 4,
        "key" => 5,
        "input" => 6,
        "output" => 7,
        "error" => 8,
        "timeout" | "timeout_marker" => 9,
        "node" => 10,
        "fault_epoch" => 11,
        _ => return None,
    })
}

/// How deep the scanner follows arrays and objects inside `input` or `output`;
/// deeper values go to the typed visitor (and past [`NESTING_LIMIT`] on to the
/// per-line reader).
const SCAN_DEPTH: usize = 64;

/// The common record read by hand, as the typed visitor reads it: `None` for
/// anything it does not know (an escape in a field's name or a string field, a
/// negative or fractional number where an integer or text is read, an unknown or
/// repeated field, invalid JSON, values nested [`SCAN_DEPTH`] deep), which the
/// visitor then reads. `text` is one line, valid UTF-8; `rec` a record as
/// [`Fast::default`] makes it, filled in (on `None`, partly); `want` the input
/// member to note in `rec.member`.
fn scan<'t>(text: &'t str, rec: &mut Fast<'t>, want: Option<&str>) -> Option<()> {
    let mut c = Scan {
        text,
        b: text.as_bytes(),
        i: 0,
    };
    rec.checked = true;
    // The fields seen, kept here and stored once (kept in `rec`, each line's
    // loads of it waited on its stores).
    let mut seen = 0u16;
    c.ws();
    c.eat(b'{')?;
    c.ws();
    if c.peek() == Some(b'}') {
        c.i += 1;
    } else {
        loop {
            let i = c.field()?;
            if seen & (1 << i) != 0 {
                return None;
            }
            seen |= 1 << i;
            c.ws();
            c.eat(b':')?;
            c.ws();
            match i {
                0 => c.text(&mut rec.op_id)?,
                1 => c.text(&mut rec.process)?,
                2 => rec.invoke_ts = c.opt_u64()?,
                3 => rec.complete_ts = c.opt_u64()?,
                4 => c.text(&mut rec.op_type)?,
                5 => c.text(&mut rec.key)?,
                6 => {
                    let member = &mut rec.member;
                    let input = match want {
                        Some(name) => c.raw::<true>(name.as_bytes(), member),
                        None => c.raw::<false>(b"", member),
                    };
                    rec.input = Some(input?);
                }
                7 => rec.output = Some(c.raw::<false>(b"", &mut Member::Unread)?),
                8 => c.text(&mut rec.error)?,
                9 => rec.timeout = c.opt_bool()?,
                10 => c.text(&mut rec.node)?,
                _ => rec.fault_epoch = c.opt_u64()?,
            }
            c.ws();
            match c.next()? {
                b',' => c.ws(),
                b'}' => break,
                _ => return None,
            }
        }
    }
    c.ws();
    rec.seen = seen;
    (c.i == c.b.len()).then_some(())
}

/// The scanner's place in a line.
struct Scan<'t> {
    text: &'t str,
    b: &'t [u8],
    i: usize,
}

impl<'t> Scan<'t> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    /// JSON's whitespace.
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    /// A field's name, as its index in `DEFAULT_FIELDS` (see [`field_index`]):
    /// `None` for any other name, or one with an escape.
    fn field(&mut self) -> Option<u16> {
        let rest = self.b.get(self.i + 1..)?;
        let is = |name: &[u8]| rest.starts_with(name) && rest.get(name.len()) == Some(&b'"');
        let (i, len) = match rest.first()? {
            b'o' if is(b"op_id") => (0, 5),
            b'o' if is(b"op_type") => (4, 7),
            b'o' if is(b"output") => (7, 6),
            b'p' if is(b"process") => (1, 7),
            b'i' if is(b"invoke_ts") => (2, 9),
            b'i' if is(b"input") => (6, 5),
            b'c' if is(b"complete_ts") => (3, 11),
            b'k' if is(b"key") => (5, 3),
            b'e' if is(b"error") => (8, 5),
            b't' if is(b"timeout") => (9, 7),
            b't' if is(b"timeout_marker") => (9, 14),
            b'n' if is(b"node") => (10, 4),
            b'f' if is(b"fault_epoch") => (11, 11),
            _ => return None,
        };
        (self.b[self.i] == b'"').then_some(())?;
        self.i += len + 2;
        Some(i)
    }

    /// A string with no escape, its text (`None`: not a string, or one with an
    /// escape or a control character).
    fn plain(&mut self) -> Option<&'t str> {
        self.eat(b'"')?;
        let start = self.i;
        self.i += plain_run(self.b.get(start..)?);
        // Anything but the closing quote (an escape, a control character, the
        // line's end) is not plain.
        self.eat(b'"')?;
        // Cut at quotes, which are never inside a UTF-8 sequence.
        self.text.get(start..self.i - 1)
    }

    /// A non-negative integer in `u64`, and its text.
    fn uint(&mut self) -> Option<(u64, &'t str)> {
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(d) = self
            .peek()
            .map(|c| c.wrapping_sub(b'0'))
            .filter(|d| *d <= 9)
        {
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            self.i += 1;
        }
        let digits = self.text.get(start..self.i)?;
        // No digit, a leading zero, or a fraction or exponent (a float to serde_json).
        if digits.is_empty()
            || digits.len() > 1 && digits.starts_with('0')
            || matches!(self.peek(), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        // Twenty digits may not fit: those are read again, checked.
        if digits.len() >= 20 {
            v = digits.parse().ok()?;
        }
        Some((v, digits))
    }

    /// A string, a non-negative integer or null, into `field`, which is `None`
    /// (each field is read once, into a default record). Written in place: a
    /// returned `Option<Option<Text>>` went through the stack, and reading it
    /// back was the scanner's costliest instruction.
    fn text(&mut self, field: &mut Option<Text<'t>>) -> Option<()> {
        match self.peek()? {
            b'"' => *field = Some(Text::Str(Cow::Borrowed(self.plain()?))),
            b'n' => self.literal(b"null")?,
            b'0'..=b'9' => *field = Some(Text::Digits(self.uint()?.1)),
            _ => return None,
        }
        Some(())
    }

    fn opt_u64(&mut self) -> Option<Option<u64>> {
        match self.peek()? {
            b'n' => self.literal(b"null").map(|()| None),
            _ => Some(Some(self.uint()?.0)),
        }
    }

    fn opt_bool(&mut self) -> Option<Option<bool>> {
        match self.peek()? {
            b'n' => self.literal(b"null").map(|()| None),
            b't' => self.literal(b"true").map(|()| Some(true)),
            _ => self.literal(b"false").map(|()| Some(false)),
        }
    }

    /// Any JSON value, checked as serde_json checks a raw value, its text. With
    /// `PICK`, of an object, the last top-level member named `want` is noted in
    /// `member` (without, neither is read: `output` pays nothing for it).
    fn raw<const PICK: bool>(&mut self, want: &[u8], member: &mut Member<'t>) -> Option<&'t str> {
        let start = self.i;
        // Members one deep exist only in an object.
        if PICK && self.peek() == Some(b'{') {
            *member = Member::Read(None);
        }
        // Where the wanted member's value starts, while it is read; whether the
        // last string value read had no escape.
        let (mut picking, mut plain) = (None, false);
        // Open arrays and objects, innermost last (bit set: an object).
        let (mut depth, mut objects) = (0usize, 0u64);
        loop {
            // A value.
            match self.peek()? {
                open @ (b'{' | b'[') => {
                    self.i += 1;
                    depth += 1;
                    if depth >= SCAN_DEPTH {
                        return None;
                    }
                    objects = objects << 1 | u64::from(open == b'{');
                    self.ws();
                    let close = if open == b'{' { b'}' } else { b']' };
                    if self.peek() != Some(close) {
                        if open == b'{' {
                            let name = self.member_name()?;
                            if PICK && depth == 1 {
                                picking = self.picks(want, name, member);
                            }
                        }
                        continue;
                    }
                    self.i += 1;
                    depth -= 1;
                    objects >>= 1;
                }
                b'"' => plain = !self.string()?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => self.number()?,
            }
            // What follows it: the next item, or the ends of arrays and objects.
            loop {
                if depth == 0 {
                    return self.text.get(start..self.i);
                }
                if PICK
                    && depth == 1
                    && let Some(at) = picking.take()
                {
                    let value = self.text.get(at..self.i);
                    *member = Member::Read(value.map(|v| match v.starts_with('"') && plain {
                        true => Val::Str(v),
                        false => Val::Json(v),
                    }));
                }
                self.ws();
                let in_object = objects & 1 == 1;
                match self.next()? {
                    b',' => {
                        self.ws();
                        if in_object {
                            let name = self.member_name()?;
                            if PICK && depth == 1 {
                                picking = self.picks(want, name, member);
                            }
                        }
                        break;
                    }
                    b'}' if in_object => {}
                    b']' if !in_object => {}
                    _ => return None,
                }
                depth -= 1;
                objects >>= 1;
            }
        }
    }

    /// An object member's name and its colon: the name as the line has it, and
    /// whether it has an escape.
    fn member_name(&mut self) -> Option<(&'t [u8], bool)> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.i + 1;
        let escaped = self.string()?;
        let name = self.b.get(start..self.i - 1)?;
        self.ws();
        self.eat(b':')?;
        self.ws();
        Some((name, escaped))
    }

    /// Where the value of the top-level member just named starts, if it is the
    /// one `want`ed. A name with an escape may read as any name: what was noted
    /// is then unknown, until a later member of the plain name.
    fn picks(
        &self,
        want: &[u8],
        (name, escaped): (&[u8], bool),
        member: &mut Member<'t>,
    ) -> Option<usize> {
        if escaped {
            *member = Member::Unread;
            return None;
        }
        (want == name).then_some(self.i)
    }

    /// A string, escapes checked as serde_json checks them (and no surrogate: see
    /// [`reparses`]); whether it had an escape.
    fn string(&mut self) -> Option<bool> {
        self.eat(b'"')?;
        let mut escaped = false;
        loop {
            self.i += plain_run(self.b.get(self.i..)?);
            match self.next()? {
                b'"' => return Some(escaped),
                b'\\' => {
                    escaped = true;
                    match self.next()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            let hex = self.b.get(self.i..self.i + 4)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) || surrogate(hex) {
                                return None;
                            }
                            self.i += 4;
                        }
                        _ => return None,
                    }
                }
                0..0x20 => return None,
                _ => {}
            }
        }
    }

    /// A number in JSON's grammar, with no exponent and at most [`NUMBER_LEN`]
    /// long (see [`reparses`]).
    fn number(&mut self) -> Option<()> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.next()? {
            b'0' => {
                if matches!(self.peek(), Some(b'0'..=b'9')) {
                    return None;
                }
            }
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return None;
            }
            self.digits();
        }
        (self.i - start <= NUMBER_LEN && !matches!(self.peek(), Some(b'e' | b'E'))).then_some(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
    }
}

/// The line read by the typed serde visitor; `None` when it does not take it.
fn typed(text: &str) -> Option<Fast<'_>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let rec = de.deserialize_map(FastVisitor).ok()?;
    de.end().ok()?;
    Some(rec)
}

/// Reads one record's map into [`Fast`]; any field it does not take as it is
/// fails the line, which is then read by the per-line reader.
struct FastVisitor;

impl<'de> Visitor<'de> for FastVisitor {
    type Value = Fast<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an op record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fast<'de>, A::Error> {
        let mut rec = Fast::default();
        while let Some(Key(name)) = map.next_key::<Key<'de>>()? {
            let Some(i) = field_index(&name) else {
                return Err(de::Error::custom("not a default field"));
            };
            if rec.seen & (1 << i) != 0 {
                return Err(de::Error::custom("repeated field"));
            }
            rec.seen |= 1 << i;
            match i {
                0 => rec.op_id = map.next_value::<OptText>()?.0,
                1 => rec.process = map.next_value::<OptText>()?.0,
                2 => rec.invoke_ts = map.next_value()?,
                3 => rec.complete_ts = map.next_value()?,
                4 => rec.op_type = map.next_value::<OptText>()?.0,
                5 => rec.key = map.next_value::<OptText>()?.0,
                6 => rec.input = Some(map.next_value::<&RawValue>()?.get()),
                7 => rec.output = Some(map.next_value::<&RawValue>()?.get()),
                8 => rec.error = map.next_value::<OptText>()?.0,
                9 => rec.timeout = map.next_value()?,
                10 => rec.node = map.next_value::<OptText>()?.0,
                _ => rec.fault_epoch = map.next_value()?,
            }
        }
        Ok(rec)
    }
}

/// A string or integer field, `null` as `None`.
struct OptText<'t>(Option<Text<'t>>);

impl<'de> de::Deserialize<'de> for OptText<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Text<'de>>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, an integer or null")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Text::Str(Cow::Borrowed(s))))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Some(Text::Str(Cow::Owned(s.to_string()))))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Some(Text::Int(i128::from(v))))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Some(Text::Int(i128::from(v))))
            }
        }
        d.deserialize_any(V).map(OptText)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::history::{History, read_jsonl_history};
    use proptest::prelude::*;

    /// A record as read, every field shown, to compare two readers' readings.
    fn shown(r: &Fast<'_>) -> String {
        let t = |t: &Option<Text<'_>>| {
            let mut buf = String::new();
            t.as_ref().map(|t| t.show(&mut buf).to_string())
        };
        format!(
            "{} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
            r.seen,
            t(&r.op_id),
            t(&r.process),
            r.invoke_ts,
            r.complete_ts,
            t(&r.op_type),
            t(&r.key),
            r.input,
            r.output,
            t(&r.error),
            r.timeout,
            t(&r.node),
            r.fault_epoch
        )
    }

    /// Input member names a sink may want: plain, repeated, nested, escaped in
    /// some inputs (`k\u0065y`), and none.
    const WANTS: &[Option<&str>] = &[
        None,
        Some("idempotency_key"),
        Some("version"),
        Some("a"),
        Some("key"),
    ];

    /// The scanner takes a line only if the typed visitor takes it and reads the
    /// same, and what it takes parses again (its `checked` is true). The input
    /// member it notes for `want` is the one [`Val::field`] finds, and it is noted
    /// for every object input with no escape.
    fn agrees(line: &str, want: Option<&str>) -> Result<bool, TestCaseError> {
        let mut scanned = Fast::default();
        if scan(line, &mut scanned, want).is_none() {
            return Ok(false);
        }
        match (want, scanned.member, scanned.input) {
            (Some(name), Member::Read(value), Some(input)) => {
                let found = Val::Json(input).field(name);
                let read = |v: Option<Val<'_>>| {
                    v.map(|v| (v.as_read().into_owned(), v.text().into_owned()))
                };
                prop_assert_eq!(read(value), read(found), "{} in {}", name, line);
            }
            (Some(_), Member::Unread, Some(input)) => prop_assert!(
                !input.starts_with('{') || input.contains('\\'),
                "no member noted of {}",
                line
            ),
            (_, member, _) => prop_assert!(matches!(member, Member::Unread), "{}", line),
        }
        let typed = typed(line);
        prop_assert!(typed.is_some(), "scanned but not typed: {line}");
        let typed = typed.expect("checked");
        prop_assert_eq!(shown(&scanned), shown(&typed), "{}", line);
        for raw in [scanned.input, scanned.output].into_iter().flatten() {
            prop_assert!(reparses(raw), "scanned {raw} does not parse again: {line}");
        }
        Ok(true)
    }

    /// A field given twice (either value first, `timeout` with its alias too) is
    /// never the scanner's: it writes each field once, in place, into a default
    /// record, and the per-line reader decides what a repeat means.
    #[test]
    fn a_repeated_field_is_never_the_scanner_s() {
        let base = [
            ("op_id", r#""1""#),
            ("process", "0"),
            ("invoke_ts", "0"),
            ("complete_ts", "5"),
            ("op_type", r#""write""#),
            ("key", r#""k""#),
            ("input", "1"),
            ("output", "null"),
            ("error", "null"),
            ("timeout", "false"),
            ("node", r#""n1""#),
            ("fault_epoch", "null"),
        ];
        let record = |fields: &[(&str, &str)]| {
            let members: Vec<String> = fields
                .iter()
                .map(|(n, v)| format!(r#""{n}":{v}"#))
                .collect();
            format!("{{{}}}", members.join(","))
        };
        let mut once = Fast::default();
        assert!(
            scan(&record(&base), &mut once, None).is_some(),
            "the plain record"
        );
        let others = ["null", r#""x""#, "7", "true"];
        for (name, value) in base {
            for other in others.iter().filter(|o| **o != value) {
                for (first, second) in [(value, *other), (*other, value)] {
                    let mut fields = vec![(name, first)];
                    fields.extend(
                        base.iter()
                            .map(|&(n, v)| (n, if n == name { second } else { v })),
                    );
                    let line = record(&fields);
                    assert!(scan(&line, &mut Fast::default(), None).is_none(), "{line}");
                }
            }
        }
        for marker in ["true", "false", "null"] {
            let mut fields = base.to_vec();
            fields.push(("timeout_marker", marker));
            let line = record(&fields);
            assert!(scan(&line, &mut Fast::default(), None).is_none(), "{line}");
            fields.rotate_right(1);
            let line = record(&fields);
            assert!(scan(&line, &mut Fast::default(), None).is_none(), "{line}");
        }
    }

    /// Field names besides the default ones: the alias, others, one with an escape.
    const OTHER_NAMES: &[&str] = &[
        "timeout_marker",
        "ops_total",
        "process_id",
        "op\\u005fid",
        "",
    ];

    /// The `i`th field name of the default ones and [`OTHER_NAMES`], cyclically.
    fn name_at(i: usize) -> &'static str {
        let i = i % (DEFAULT_FIELDS.len() + OTHER_NAMES.len());
        DEFAULT_FIELDS
            .get(i)
            .copied()
            .unwrap_or_else(|| OTHER_NAMES[i - DEFAULT_FIELDS.len()])
    }

    /// Values of every kind, valid and not.
    const VALUES: &[&str] = &[
        "null",
        "true",
        "false",
        "0",
        "-0",
        "7",
        "-7",
        "007",
        "1e3",
        "1E+2",
        "2e-3",
        "1e400",
        "1.5",
        "-1.5",
        "0.0",
        "1.",
        ".5",
        "-",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999",
        "\"x\"",
        "\"\"",
        "\"12\"",
        "\"a\\\"b\"",
        "\"a\\\\b\"",
        "\"\\/\\b\\f\\n\\r\\t\"",
        "\"\\u00e9\"",
        "\"\\u00G9\"",
        "\"\\ud800\"",
        "\"\\udc00x\"",
        "\"\\ud83d\\ude00\"",
        "\"\\q\"",
        "\"é😀 ☃\"",
        "\"ctl\u{1}\"",
        "\"tab\tin\"",
        "\"unterminated",
        "tru",
        "nul",
        "nullx",
        "[]",
        "[ ]",
        "{}",
        "{ }",
        "[1,2]",
        "[1,]",
        "[,1]",
        "[1 2]",
        "[1,[2,{\"a\":null}]]",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{1:2}",
        "{\"a\":1,\"a\":2}",
        "{\"idempotency_key\":\"t1\",\"amount\":5}",
        "{\"version\":3,\"value\":\"v\"}",
        "{ \"k\\u0065y\" : [ true , false , null ] }",
        "[\"]\",\"[\",\"}\"]",
        "[1e5]",
        "{\"n\":-0.5e-2}",
        "]",
        "}",
        ":",
        "x",
    ];

    /// JSON's whitespace and some that is not.
    const SPACES: &[&str] = &["", "", "", " ", "\t", "\r", "  ", "\u{a0}", "\u{b}"];

    /// `depth` arrays around 1.
    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    /// Values of the type a field reads, for lines most of which a reader takes.
    const TEXTS: &[&str] = &[
        "\"x\"",
        "\"\"",
        "\"é😀\"",
        "7",
        "0",
        "18446744073709551615",
        "null",
    ];
    const INTS: &[&str] = &["0", "7", "18446744073709551615", "null", "5"];
    const BOOLS: &[&str] = &["true", "false", "null"];

    /// A line from parts: `(name, value, spaces)` members, then junk or nothing.
    /// `fit`: each field once, with a value of its type (any value in
    /// `input`/`output`).
    fn line(members: &[(usize, usize, usize)], tail: usize, fit: bool) -> String {
        let sp = |i: usize| SPACES[i % SPACES.len()];
        let mut out = format!("{}{{", sp(tail));
        let (mut fields, mut first) = (0u16, true);
        for (name, value, space) in members {
            let name = name_at(*name);
            let any = || match value % (VALUES.len() + 4) {
                v if v < VALUES.len() => VALUES[v].to_string(),
                v => nested([1, 63, 64, 130][v - VALUES.len()]),
            };
            let value = match (fit, field_index(name)) {
                (false, _) => any(),
                (true, None) => continue,
                (true, Some(i)) if fields & (1 << i) != 0 => continue,
                (true, Some(i)) => {
                    fields |= 1 << i;
                    let pick = |pool: &[&str]| pool[value % pool.len()].to_string();
                    match i {
                        2 | 3 | 11 => pick(INTS),
                        6 | 7 => any(),
                        9 => pick(BOOLS),
                        _ => pick(TEXTS),
                    }
                }
            };
            if !first {
                out.push(',');
                out.push_str(sp(*space / 3));
            }
            first = false;
            out.push_str(&format!(
                "{}\"{}\"{}:{}{}{}",
                sp(*space),
                name,
                sp(*space / 2),
                sp(*space / 5),
                value,
                sp(*space / 7)
            ));
        }
        out.push('}');
        out.push_str(["", "", " ", "x", ",", "}", "{}"][tail % 7]);
        out
    }

    /// A record as faultline's recorders write it (every default field, plain).
    fn plain(i: u64) -> String {
        format!(
            "{{\"op_id\":\"{i}\",\"process\":{},\"invoke_ts\":{},\"complete_ts\":{},\
             \"op_type\":\"write\",\"key\":\"k{}\",\"input\":{{\"idempotency_key\":\"t{i}\",\
             \"amount\":{}}},\"output\":[1,\"ok\",null],\"error\":null,\"timeout\":false,\
             \"node\":\"n1\",\"fault_epoch\":null}}",
            i % 7,
            i * 10,
            i * 10 + 5,
            i % 3,
            i % 100
        )
    }

    /// A history read twice: as `faultline check` reads it, and with every line
    /// through the per-line reader (a rename of a field no line has turns the
    /// scanner and the typed visitor off).
    fn both(text: &str) -> (Result<History, HistoryError>, Result<History, HistoryError>) {
        let fast = read_jsonl_history("h", text.as_bytes(), &BTreeMap::new());
        let off = BTreeMap::from([("\u{0}none".to_string(), "\u{0}none".to_string())]);
        let slow = read_jsonl_history("h", text.as_bytes(), &off);
        (fast, slow)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Random lines of every field and value: where the scanner takes one, the
        /// typed visitor reads it the same.
        #[test]
        fn the_scanner_reads_what_the_typed_visitor_reads(
            members in prop::collection::vec((0usize..64, 0usize..128, 0usize..64), 0..14),
            tail in 0usize..64,
            fit in any::<bool>(),
            cut in prop::option::of((0usize..400, 0usize..12)),
            want in 0usize..5,
        ) {
            let mut text = line(&members, tail, fit);
            // Now and then one character dropped or put in.
            if let Some((at, what)) = cut {
                let at = (0..=at.min(text.len())).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
                match what {
                    0 => { if at < text.len() { text.remove(at); } }
                    w => text.insert(at, ['"', '\\', ',', ':', '{', '}', '[', ']', ' ', 'u', '0'][w - 1]),
                }
            }
            agrees(&text, WANTS[want])?;
        }

        /// Whole histories of such lines read as `faultline check` reads them and by
        /// the per-line reader alone: the same ops and fields, or the same error.
        #[test]
        fn the_fast_readers_read_a_history_as_the_per_line_reader(
            recs in prop::collection::vec(
                (0u64..5, prop::collection::vec((0usize..64, 0usize..128, 0usize..64), 0..14), 0usize..64),
                0..12,
            ),
            crlf in any::<bool>(),
        ) {
            let mut text = String::new();
            for (i, (kind, members, tail)) in recs.iter().enumerate() {
                match kind {
                    0 | 1 => text.push_str(&line(members, *tail, *kind == 1)),
                    // A blank line.
                    2 => {}
                    _ => text.push_str(&plain(i as u64)),
                }
                text.push_str(if crlf { "\r\n" } else { "\n" });
            }
            let (fast, slow) = both(&text);
            prop_assert_eq!(fast, slow, "{}", text);
        }
    }

    /// The records recorders write are all read by the scanner (else the fast path
    /// would be fast on nothing).
    #[test]
    fn the_scanner_takes_the_common_records() {
        for i in 0..50 {
            let line = plain(i);
            assert!(
                agrees(&line, Some("idempotency_key")).expect("agrees"),
                "{line}"
            );
        }
        for line in [
            "{}",
            " { \"op_id\" : 7 , \"timeout_marker\" : true , \"complete_ts\" : null } ",
            "{\"input\":[[[{\"a\":[\"\\u00e9\\n\"]}]]],\"output\":-0.25,\"key\":\"é\"}",
            &format!("{{\"input\":{}}}", nested(63)),
        ] {
            assert!(agrees(line, Some("a")).expect("agrees"), "{line}");
        }
        // The wanted member among repeats and escaped names, and of every kind.
        for input in [
            r#"{"key":1,"k\u0065y":2}"#,
            r#"{"k\u0065y":1,"key":2}"#,
            r#"{"key":"a\"b"}"#,
            r#"{"key":{}}"#,
            r#"{"key":"plain","key":[1,{"key":3}]}"#,
            r#"{"other":{"key":1}}"#,
            r#"[{"key":1}]"#,
        ] {
            let line = format!("{{\"input\":{input}}}");
            assert!(agrees(&line, Some("key")).expect("agrees"), "{line}");
        }
        // …and what it leaves to the typed visitor, the visitor reads.
        for line in [
            "{\"op_id\":\"a\\\"b\"}",
            "{\"op\\u005fid\":1}",
            "{\"op_id\":-1}",
            &format!("{{\"input\":{}}}", nested(64)),
        ] {
            assert!(!agrees(line, None).expect("agrees"), "{line}");
            assert!(typed(line).is_some(), "{line}");
        }
    }

    /// Edge cases through the whole reader, fast against the per-line reader:
    /// values the scanner and the visitor cut out but that do not parse again
    /// (a lone surrogate, a number out of range) are refused, not read as null.
    #[test]
    fn values_that_do_not_parse_again_are_refused_as_the_per_line_reader_refuses_them() {
        for input in [
            "\"\\ud800\"",
            "1e400",
            "[\"\\udfff\"]",
            &nested(130),
            "1e3",
            "\"\\ud83d\\ude00\"",
        ] {
            let text = format!("{}\n{{\"op_id\":\"x\",\"input\":{input}}}\n", plain(1));
            let (fast, slow) = both(&text);
            assert_eq!(fast, slow, "{input}");
        }
        let (fast, _) = both(&format!("{{\"input\":{}}}\n", "1e400"));
        let e = fast.expect_err("out of range").to_string();
        assert!(e.starts_with("h:1: invalid JSON"), "{e}");
    }

    /// Lines cut by the end of the reader's buffer at every place read as whole
    /// ones; the line limit counts a line's bytes without its newline.
    #[test]
    fn lines_across_the_buffer_read_as_whole_ones() {
        // Some keys of two, three and four bytes a character, which a cut may split.
        let text: String = (0..20)
            .map(|i| match i % 3 {
                0 => plain(i).replace("\"k", "\"ké€😀"),
                _ => plain(i),
            })
            .map(|line| {
                let end = if line.len() % 2 == 0 { "\n" } else { "\r\n\n" };
                line + end
            })
            .collect();
        let whole = read_jsonl_history("h", text.as_bytes(), &BTreeMap::new()).expect("reads");
        assert_eq!(whole.ops.len(), 20);
        for capacity in [1, 2, 3, 7, 64, 333, 700, 4096] {
            let reader = std::io::BufReader::with_capacity(capacity, text.as_bytes());
            let cut = read_jsonl_history("h", reader, &BTreeMap::new()).expect("reads");
            assert_eq!(cut, whole, "buffer of {capacity}");
        }
        // é in Latin-1: not UTF-8, the 11th byte of line 2.
        let mut latin = format!("{}\n{{\"op_id\":\"", plain(0)).into_bytes();
        latin.extend_from_slice(b"\xe9\"}\n");
        for capacity in [1, 5, 4096] {
            let reader = std::io::BufReader::with_capacity(capacity, latin.as_slice());
            let e = read_jsonl_history("h", reader, &BTreeMap::new()).expect_err("not UTF-8");
            let want = format!(
                "not UTF-8 at line 2, column 11 (byte {})",
                plain(0).len() + 11
            );
            assert!(e.to_string().contains(&want), "{e} / {want}");
        }
        let long = |len: usize, newline: bool| {
            let mut line = format!("{{\"op_id\":\"{}\"}}", "x".repeat(len - 12));
            assert_eq!(line.len(), len);
            if newline {
                line.push('\n');
            }
            line
        };
        for newline in [false, true] {
            let most = long(LINE_LIMIT, newline);
            assert!(read_jsonl_history("h", most.as_bytes(), &BTreeMap::new()).is_ok());
            let text = format!("{}\n{}", plain(0), long(LINE_LIMIT + 1, newline));
            let e = read_jsonl_history("h", text.as_bytes(), &BTreeMap::new()).expect_err("long");
            assert!(e.to_string().starts_with("h:2: longer than"), "{e}");
        }
    }

    /// Op ids are found again, numbers and texts apart; a line past `u32` is kept
    /// whole.
    #[test]
    fn a_repeated_op_id_is_found_with_its_line() {
        let mut seen = Seen::default();
        assert_eq!(seen.insert("5", 7), None);
        assert_eq!(seen.insert("5", 9), Some(7));
        assert_eq!(seen.insert(&u64::MAX.to_string(), 3), None);
        assert_eq!(seen.insert(&u64::MAX.to_string(), 4), Some(3));
        assert_eq!(seen.insert("05", 5), None);
        assert_eq!(seen.insert("05", 6), Some(5));
        // A line past u32 is kept whole.
        let line = u32::MAX as usize + 10;
        assert_eq!(seen.insert("6", line), None);
        assert_eq!(seen.insert("6", 1), Some(line));
        assert_eq!(seen.insert("7", FAR as usize - 1), None);
        assert_eq!(seen.insert("7", 1), Some(FAR as usize - 1));
    }
}
