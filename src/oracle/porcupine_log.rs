//! Porcupine-style operation logs: one JSON object per line with the fields of
//! Porcupine's `Operation` — client id, input, call time, output, return time —
//! spelled `ClientId`/`client_id`, `Input`/`input`, `Call`/`call`,
//! `Output`/`output`, `Return`/`return`.
//!
//! The input is `{op, key, value}` (`op` a name such as `get`/`put`/`read`/
//! `write`/`cas`, or Porcupine's KV numbering 0 get, 1 put, 2 append) or a bare
//! value (a write to the single register). A crashed op has a null or absent
//! return time (or one at or past 2^62, the "infinite" return Porcupine harnesses
//! write): its effect is unknown. Porcupine logs carry no errors, so `error` is
//! null for every op.

use super::format::Source;
use super::history::{History, HistoryError, Op, converted_fields};
use super::jsonl_read::{Header, LINE_LIMIT};
use super::op_view::OpSink;
use compact_str::format_compact;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::io::Read;

/// Return times at or past this mean "never returned".
const INFINITE_RETURN: u64 = 1 << 62;

/// Parse a Porcupine-style log. `source` names it in error messages.
pub fn parse_porcupine(source: &str, text: &str) -> Result<History, HistoryError> {
    read_porcupine(source, text.as_bytes())
}

/// A Porcupine-style log read from `reader` line by line into a [`History`].
pub fn read_porcupine(source: &str, reader: impl Read) -> Result<History, HistoryError> {
    let mut ops = Vec::new();
    let present = ops_of(source, reader, &mut |op| ops.push(op))?;
    Ok(History {
        ops,
        present_fields: present,
        unknown_fields: Default::default(),
        source: source.to_string(),
    })
}

/// A Porcupine-style log handed to `sink` one op at a time, as it is read.
pub fn fold_porcupine(
    source: &str,
    reader: impl Read,
    sink: &mut impl OpSink,
) -> Result<Header, HistoryError> {
    let mut ops = 0u64;
    let present = ops_of(source, reader, &mut |op| {
        ops += 1;
        sink.op(&op.view());
    })?;
    Ok(Header {
        source: source.to_string(),
        present_fields: present,
        unknown_fields: BTreeSet::new(),
        ops,
    })
}

/// Each line's op handed to `emit` as it is read; the fields every op has. The
/// error is the one reading the whole file first would give: a read error, then
/// bytes not UTF-8, then the first bad line.
fn ops_of(
    source: &str,
    reader: impl Read,
    emit: &mut dyn FnMut(Op),
) -> Result<BTreeSet<String>, HistoryError> {
    let mut bytes = Source::new(reader);
    let mut every_op_keyed = true;
    let mut buf = Vec::new();
    let mut line = 0usize;
    let found = loop {
        buf.clear();
        let Some(ended) = bytes.read_line(&mut buf, LINE_LIMIT + 1) else {
            break None;
        };
        line += 1;
        let line_err = |message: String| HistoryError::Line {
            source_name: source.to_string(),
            line,
            message,
        };
        if buf.len() > LINE_LIMIT {
            break Some(line_err(format!(
                "longer than {LINE_LIMIT} bytes: refused (one op is one line of JSON; is this \
                 a history?)"
            )));
        }
        // Not UTF-8: the source's error, saying where, outranks this one.
        let Ok(text) = std::str::from_utf8(&buf) else {
            break Some(line_err("not UTF-8".into()));
        };
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            continue;
        }
        let map = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => break Some(line_err("expected a JSON object".into())),
            Err(e) if !ended => {
                break Some(line_err(format!(
                    "truncated final line (no trailing newline, invalid JSON: {e})"
                )));
            }
            Err(e) => break Some(line_err(format!("invalid JSON: {e}"))),
        };
        match (LogLine {
            source,
            line,
            map: &map,
        })
        .op()
        {
            Ok(op) => {
                every_op_keyed &= op.key.is_some();
                emit(op);
            }
            Err(e) => break Some(e),
        }
    };
    bytes.settle(source, found)?;
    Ok(converted_fields(every_op_keyed, false))
}

struct LogLine<'a> {
    source: &'a str,
    line: usize,
    map: &'a Map<String, Value>,
}

impl LogLine<'_> {
    fn err(&self, field: &str, message: &str) -> HistoryError {
        HistoryError::field(self.source, self.line, field, message)
    }

    /// The first of `names` present in the record.
    fn get(&self, names: &[&str]) -> Option<&Value> {
        names.iter().find_map(|n| self.map.get(*n))
    }

    fn op(&self) -> Result<Op, HistoryError> {
        let client = match self.get(&["ClientId", "client_id", "client"]) {
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::String(s)) => s.clone(),
            _ => return Err(self.err("client_id", "expected a client id")),
        };
        let call = self
            .get(&["Call", "call"])
            .and_then(Value::as_u64)
            .ok_or_else(|| self.err("call", "expected a non-negative integer call time"))?;
        let ret = match self.get(&["Return", "return"]) {
            None | Some(Value::Null) => None,
            Some(v) => {
                let t = v
                    .as_u64()
                    .ok_or_else(|| self.err("return", "expected a non-negative integer"))?;
                (t < INFINITE_RETURN).then_some(t)
            }
        };
        if let Some(r) = ret
            && r < call
        {
            return Err(self.err("return", "return time is before the call time"));
        }
        let input = self
            .get(&["Input", "input"])
            .cloned()
            .unwrap_or(Value::Null);
        let (op_type, key, value) = split_input(&input);
        let output = match self.get(&["Output", "output"]) {
            Some(Value::Object(o)) => o
                .get("value")
                .or_else(|| o.get("Value"))
                .cloned()
                .unwrap_or(Value::Null),
            Some(v) => v.clone(),
            None => Value::Null,
        };
        Ok(Op {
            op_id: format_compact!("L{}", self.line),
            process: client.into(),
            invoke_ts: call,
            complete_ts: ret,
            op_type: op_type.into(),
            key: key.map(Into::into),
            input: value,
            output: if ret.is_some() { output } else { Value::Null },
            error: None,
            timeout: ret.is_none(),
            node: None,
            fault_epoch: None,
        })
    }
}

/// (op type, key, input value) of a Porcupine input.
fn split_input(input: &Value) -> (String, Option<String>, Value) {
    let Value::Object(o) = input else {
        return ("write".into(), None, input.clone());
    };
    let field = |names: &[&str]| names.iter().find_map(|n| o.get(*n));
    let op_type = match field(&["op", "Op", "f", "type"]) {
        Some(Value::Number(n)) => match n.as_u64() {
            Some(0) => "read".to_string(),
            Some(1) => "write".to_string(),
            Some(2) => "append".to_string(),
            _ => n.to_string(),
        },
        Some(Value::String(s)) => match s.as_str() {
            "get" => "read".to_string(),
            "put" => "write".to_string(),
            other => other.to_string(),
        },
        _ => "write".to_string(),
    };
    let key = field(&["key", "Key"]).map(|k| match k {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let value = field(&["value", "Value"]).cloned().unwrap_or(Value::Null);
    (op_type, key, value)
}
