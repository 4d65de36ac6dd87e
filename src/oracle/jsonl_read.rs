//! faultline's JSONL history read as a stream: line by line from a reader (no
//! whole-file text), each line parsed by a typed serde visitor straight into
//! borrowed fields (no JSON value per record; `input` and `output` stay raw JSON
//! text), each op handed to an [`OpSink`] as it is read. A checker that folds ops
//! judges the history while it is read; [`super::history::parse_jsonl`] collects
//! them into a [`History`](super::history::History).
//!
//! A line the typed visitor does not take as it is — a field of another type, an
//! unknown or repeated field, a renamed field, the `ops_total` trailer, anything
//! invalid — is read again as a JSON value by the per-line reader of
//! `history.rs`, so every such line means, and every error says (file, line,
//! field), exactly what it did when the whole file was parsed into values.

use super::history::{DEFAULT_FIELDS, HistoryError, Op, canonical_field, op_from_map};
use super::op_view::{Key, OpSink, OpView, Val};
use serde::de::{self, Deserializer as _, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::{self, Write as _};
use std::io::{BufRead, Read};

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
    let mut state = State::new(source, renames);
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut bufs = Bufs::default();
    let mut line = 0usize;
    let mut offset = 0usize;
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(LINE_LIMIT as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| state.line_error(line + 1, e.to_string()))?;
        if n == 0 {
            break;
        }
        line += 1;
        // No newline: the file's last line (a torn one is an error), or one cut at
        // the limit.
        let last = buf.last() != Some(&b'\n');
        if last && buf.len() > LINE_LIMIT {
            return Err(state.line_error(
                line,
                format!(
                    "longer than {LINE_LIMIT} bytes: refused (one op is one line of JSON; is \
                     this a history?)"
                ),
            ));
        }
        let end = if last { buf.len() } else { buf.len() - 1 };
        let text = std::str::from_utf8(&buf[..end]).map_err(|e| {
            state.line_error(
                line,
                format!(
                    "not UTF-8 at line {line}, column {} (byte {}); a history is UTF-8 text",
                    e.valid_up_to() + 1,
                    offset + e.valid_up_to()
                ),
            )
        })?;
        offset += n;
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            continue;
        }
        state.line(line, text, last, &mut bufs, sink)?;
    }
    state.finish()
}

/// What the reader keeps from line to line: small, whatever the history's size
/// but for one entry per op id (duplicates are refused).
struct State<'s> {
    source: &'s str,
    renames: &'s BTreeMap<String, String>,
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
    fn new(source: &'s str, renames: &'s BTreeMap<String, String>) -> Self {
        State {
            source,
            renames,
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

    fn line(
        &mut self,
        line: usize,
        text: &str,
        last: bool,
        bufs: &mut Bufs,
        sink: &mut impl OpSink,
    ) -> Result<(), HistoryError> {
        if self.renames.is_empty() {
            let mut de = serde_json::Deserializer::from_str(text);
            let fast = de
                .deserialize_map(FastVisitor)
                .and_then(|rec| de.end().map(|()| rec));
            if let Ok(rec) = fast
                && let Some(view) = rec.view(bufs)
            {
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

    /// One more record with the default fields `mask` and the others `other`.
    fn fields(&mut self, mask: u16, other: Option<BTreeSet<String>>) {
        self.present &= mask;
        let other = other.unwrap_or_default();
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

/// Op ids seen, with the line of each: integers apart, so the common numbered ids
/// hash no string.
#[derive(Default)]
struct Seen {
    ints: HashMap<u64, usize, foldhash::fast::RandomState>,
    texts: HashMap<Box<str>, usize, foldhash::fast::RandomState>,
}

impl Seen {
    /// The line `id` was first seen on, if it was; else it is noted as on `line`.
    fn insert(&mut self, id: &str, line: usize) -> Option<usize> {
        if let Some(v) = super::intern::canonical_u64(id) {
            return match self.ints.entry(v) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(line);
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
enum Text<'t> {
    Str(Cow<'t, str>),
    Int(i128),
}

impl Text<'_> {
    fn show<'b>(&'b self, buf: &'b mut String) -> &'b str {
        match self {
            Text::Str(s) => s,
            Text::Int(v) => {
                buf.clear();
                let _ = write!(buf, "{v}");
                buf
            }
        }
    }
}

/// A record as the typed visitor read it; a field absent is `None`, `null` is
/// `Some(None)` where the two differ.
#[derive(Default)]
struct Fast<'t> {
    /// Fields present (bit i: `DEFAULT_FIELDS[i]`).
    seen: u16,
    op_id: Option<Text<'t>>,
    process: Option<Text<'t>>,
    invoke_ts: Option<u64>,
    complete_ts: Option<u64>,
    op_type: Option<Text<'t>>,
    key: Option<Text<'t>>,
    input: Option<&'t RawValue>,
    output: Option<&'t RawValue>,
    error: Option<Text<'t>>,
    timeout: Option<bool>,
    node: Option<Text<'t>>,
    fault_epoch: Option<u64>,
}

const INVOKE_TS: u16 = 1 << 2;
const OP_TYPE: u16 = 1 << 4;

/// serde_json's own limit on nesting when it parses a value.
const NESTING_LIMIT: usize = 128;

/// `json` (valid JSON text) opens fewer than [`NESTING_LIMIT`] arrays and objects
/// inside each other, so parsing it again cannot fail on depth.
fn within_nesting(json: &str) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in json.as_bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth >= NESTING_LIMIT {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

impl<'t> Fast<'t> {
    /// The op, or `None` when the per-line reader must say what is wrong (a
    /// required field null, a completion before its invoke).
    fn view<'b>(&'b self, bufs: &'b mut Bufs) -> Option<OpView<'b>> {
        if self.seen & INVOKE_TS != 0 && self.invoke_ts.is_none()
            || self.seen & OP_TYPE != 0 && self.op_type.is_none()
        {
            return None;
        }
        let invoke_ts = self.invoke_ts.unwrap_or(0);
        if self.complete_ts.is_some_and(|c| c < invoke_ts) {
            return None;
        }
        // Raw text is cut out without serde_json's nesting limit, and a checker
        // parses it later: a value nested deeper than that limit goes to the
        // per-line reader, which refuses it naming the line (it was read as null).
        if [self.input, self.output]
            .into_iter()
            .flatten()
            .any(|raw| !within_nesting(raw.get()))
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
        let null = || Val::Tree(&Value::Null);
        Some(OpView {
            op_id: self.op_id.as_ref().map_or("", |t| t.show(op_id)),
            process: self.process.as_ref().map_or("", |t| t.show(process)),
            invoke_ts,
            complete_ts: self.complete_ts,
            op_type: self.op_type.as_ref().map_or("", |t| t.show(op_type)),
            key: self.key.as_ref().map(|t| t.show(key)),
            input: self.input.map_or_else(null, Val::Raw),
            output: self.output.map_or_else(null, Val::Raw),
            error: self.error.as_ref().map(|t| t.show(error)),
            timeout: self.timeout.unwrap_or(false),
            node: self.node.as_ref().map(|t| t.show(node)),
            // Epochs count from 1: a client that writes 0 for "no fault" is outside one.
            fault_epoch: self.fault_epoch.filter(|e| *e != 0),
        })
    }
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
            // The index in DEFAULT_FIELDS (a match: no string compared twelve times).
            let i: u16 = match name.as_ref() {
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
                _ => return Err(de::Error::custom("not a default field")),
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
                6 => rec.input = Some(map.next_value()?),
                7 => rec.output = Some(map.next_value()?),
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
