//! Jepsen / Knossos EDN histories: `{:type :invoke|:ok|:fail|:info, :f, :value,
//! :process, :time, :index}` maps, either one vector of them or one per line.
//!
//! Each invoke is paired with its process's next completion. `:info` (or an
//! invoke still open when the history ends) is indeterminate: the op may have
//! taken effect at any time after its invoke, or never. `:fail` did not take
//! effect. The key is a `:key` beside `:value` (Porcupine's kv histories:
//! `{:process 0, :type :invoke, :f :append, :key "6", :value "x 0 5 y"}`) or a
//! `#jepsen.independent/tuple [k v]` value. A completion that names a key or an
//! `:f` must name its invoke's. Nemesis entries (a non-integer `:process`) are
//! not client ops and are skipped.

use super::edn::{Edn, EdnKind, read_all};
use super::history::{History, HistoryError, Op, converted_fields};
use serde_json::Value;
use std::collections::HashMap;

/// Parse an EDN history. `source` names it in error messages.
pub fn parse_edn(source: &str, text: &str) -> Result<History, HistoryError> {
    let top = read_all(text).map_err(|e| HistoryError::Line {
        source_name: source.to_string(),
        line: e.line,
        message: if e.at_end {
            format!("truncated: {}", e.message)
        } else {
            e.message
        },
    })?;
    let entries: Vec<Edn> = match top.as_slice() {
        [
            Edn {
                kind: EdnKind::Vector(items) | EdnKind::List(items),
                ..
            },
        ] => items.clone(),
        _ => top,
    };
    Pairing::new(source).run(&entries)
}

struct Pairing<'a> {
    source: &'a str,
    ops: Vec<Op>,
    /// process → index of its open op in `ops` and the invoke's line.
    open: HashMap<String, (usize, usize)>,
    every_op_keyed: bool,
    every_op_timed: bool,
    every_op_has_node: bool,
    last_index: Option<(i64, usize)>,
    /// File positions of each op's invoke and completion (the fallback clock).
    positions: Vec<(u64, Option<u64>)>,
    /// Position of the entry being read.
    position: u64,
}

impl<'a> Pairing<'a> {
    fn new(source: &'a str) -> Self {
        Pairing {
            source,
            ops: Vec::new(),
            open: HashMap::new(),
            every_op_keyed: true,
            every_op_timed: true,
            every_op_has_node: true,
            last_index: None,
            positions: Vec::new(),
            position: 0,
        }
    }

    fn field_err(&self, line: usize, field: &str, message: String) -> HistoryError {
        HistoryError::field(self.source, line, field, message)
    }

    fn run(mut self, entries: &[Edn]) -> Result<History, HistoryError> {
        for (position, entry) in entries.iter().enumerate() {
            self.entry(position as u64, entry)?;
        }
        let present = converted_fields(self.every_op_keyed, self.every_op_has_node);
        if !self.every_op_timed {
            // Without :time on every entry, file order is the real-time order.
            for (op, (invoked, completed)) in self.ops.iter_mut().zip(&self.positions) {
                op.invoke_ts = *invoked;
                if op.complete_ts.is_some() {
                    op.complete_ts = *completed;
                }
            }
        }
        Ok(History {
            ops: self.ops,
            present_fields: present,
            unknown_fields: Default::default(),
            source: self.source.to_string(),
        })
    }

    fn entry(&mut self, position: u64, entry: &Edn) -> Result<(), HistoryError> {
        let line = entry.line;
        if !matches!(entry.kind, EdnKind::Map(_)) {
            return Err(HistoryError::Line {
                source_name: self.source.to_string(),
                line,
                message: "expected an op map {:type … :process …}".into(),
            });
        }
        self.check_index(entry)?;
        let process = match entry.get("process").map(|p| &p.kind) {
            Some(EdnKind::Int(p)) => p.to_string(),
            Some(_) => return Ok(()), // the nemesis or another non-client actor
            None => return Err(self.field_err(line, ":process", "absent".into())),
        };
        let kind = match entry.get("type").map(|t| &t.kind) {
            Some(EdnKind::Keyword(k)) => k.clone(),
            _ => {
                return Err(self.field_err(
                    line,
                    ":type",
                    "expected :invoke, :ok, :fail or :info".into(),
                ));
            }
        };
        let time = match entry.get("time").map(|t| &t.kind) {
            Some(EdnKind::Int(t)) if *t >= 0 => Some(*t as u64),
            Some(_) => {
                return Err(self.field_err(
                    line,
                    ":time",
                    "expected a non-negative integer".into(),
                ));
            }
            None => {
                self.every_op_timed = false;
                None
            }
        };
        let stamp = time.unwrap_or(position);
        self.position = position;
        let (tuple_key, value) = split_tuple(entry.get("value"));
        let key = match (self.key_field(entry)?, tuple_key) {
            (Some(k), Some(t)) if k != t => {
                return Err(self.field_err(
                    line,
                    ":key",
                    format!(
                        "names key {k:?} but the :value tuple names key {t:?}: give the key once"
                    ),
                ));
            }
            (k, t) => k.or(t),
        };
        match kind.as_str() {
            "invoke" => self.invoke(line, process, stamp, key, value, entry),
            "ok" | "fail" | "info" => {
                self.complete(line, &process, &kind, stamp, key, value, entry)
            }
            other => Err(self.field_err(
                line,
                ":type",
                format!(":{other} is not one of :invoke, :ok, :fail, :info"),
            )),
        }
    }

    /// The `:key` of an entry: a string, keyword, symbol or integer.
    fn key_field(&self, entry: &Edn) -> Result<Option<String>, HistoryError> {
        match entry.get("key").map(|k| &k.kind) {
            None => Ok(None),
            Some(EdnKind::Str(k) | EdnKind::Keyword(k) | EdnKind::Symbol(k)) => Ok(Some(k.clone())),
            Some(EdnKind::Int(k)) => Ok(Some(k.to_string())),
            Some(_) => Err(self.field_err(
                entry.line,
                ":key",
                "expected a string, keyword or integer (e.g. :key \"6\")".into(),
            )),
        }
    }

    /// `:index` values, when present, must be consecutive: a gap means lost lines.
    fn check_index(&mut self, entry: &Edn) -> Result<(), HistoryError> {
        let Some(EdnKind::Int(index)) = entry.get("index").map(|i| &i.kind) else {
            return Ok(());
        };
        if let Some((prev, prev_line)) = self.last_index
            && *index != prev + 1
        {
            return Err(self.field_err(
                entry.line,
                ":index",
                format!(
                    "truncated or edited: :index {index} follows :index {prev} (line {prev_line})"
                ),
            ));
        }
        self.last_index = Some((*index, entry.line));
        Ok(())
    }

    fn invoke(
        &mut self,
        line: usize,
        process: String,
        stamp: u64,
        key: Option<String>,
        value: Value,
        entry: &Edn,
    ) -> Result<(), HistoryError> {
        if let Some((_, open_line)) = self.open.get(&process) {
            return Err(self.field_err(
                line,
                ":type",
                format!(
                    "process {process} invokes again while its op invoked on line {open_line} \
                     has no completion: a completion line is missing"
                ),
            ));
        }
        let op_type = op_name(entry).ok_or_else(|| {
            self.field_err(
                line,
                ":f",
                "expected a keyword naming the op (e.g. :read, :write, :cas, :get, :put, \
                 :append)"
                    .into(),
            )
        })?;
        let op_id = match entry.get("index").map(|i| &i.kind) {
            Some(EdnKind::Int(i)) => i.to_string(),
            _ => format!("L{line}"),
        };
        if key.is_none() {
            self.every_op_keyed = false;
        }
        let node = entry.get("node").map(|n| match n.to_json() {
            Value::String(s) => s,
            other => other.to_string(),
        });
        if node.is_none() {
            self.every_op_has_node = false;
        }
        self.open.insert(process.clone(), (self.ops.len(), line));
        self.positions.push((self.position, None));
        self.ops.push(Op {
            op_id,
            process,
            invoke_ts: stamp,
            complete_ts: None,
            op_type,
            key,
            input: value,
            output: Value::Null,
            error: None,
            timeout: false,
            node,
            fault_epoch: None,
        });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn complete(
        &mut self,
        line: usize,
        process: &str,
        kind: &str,
        stamp: u64,
        key: Option<String>,
        value: Value,
        entry: &Edn,
    ) -> Result<(), HistoryError> {
        let Some((index, invoke_line)) = self.open.remove(process) else {
            return Err(self.field_err(
                line,
                ":type",
                format!(":{kind} for process {process}, which has no open invoke"),
            ));
        };
        let invoked = &self.ops[index];
        if let Some(f) = op_name(entry)
            && f != invoked.op_type
        {
            return Err(self.field_err(
                line,
                ":f",
                format!(
                    ":{f} differs from the :{} of its invoke on line {invoke_line}: a completion \
                     repeats its invoke's :f",
                    invoked.op_type
                ),
            ));
        }
        if let Some(k) = key
            && invoked.key.as_ref() != Some(&k)
        {
            let theirs = invoked
                .key
                .as_ref()
                .map_or_else(|| "no key".to_string(), |t| format!("key {t:?}"));
            return Err(self.field_err(
                line,
                ":key",
                format!(
                    "names key {k:?} but its invoke on line {invoke_line} names {theirs}: a \
                     completion repeats its invoke's key"
                ),
            ));
        }
        self.positions[index].1 = Some(self.position);
        let op = &mut self.ops[index];
        match kind {
            "ok" => {
                op.complete_ts = Some(stamp);
                op.output = value;
            }
            "fail" => {
                op.complete_ts = Some(stamp);
                op.error = Some(
                    entry
                        .get("error")
                        .map(|e| match e.to_json() {
                            Value::String(s) => s,
                            other => other.to_string(),
                        })
                        .unwrap_or_else(|| "fail".to_string()),
                );
            }
            _ => op.timeout = true,
        }
        Ok(())
    }
}

/// The op named by an entry's `:f`.
fn op_name(entry: &Edn) -> Option<String> {
    match entry.get("f").map(|f| &f.kind) {
        Some(EdnKind::Keyword(f) | EdnKind::Symbol(f) | EdnKind::Str(f)) => Some(f.clone()),
        _ => None,
    }
}

/// A `#jepsen.independent/tuple [k v]` value is (key, value); anything else has no key.
fn split_tuple(value: Option<&Edn>) -> (Option<String>, Value) {
    let Some(value) = value else {
        return (None, Value::Null);
    };
    if let EdnKind::Tagged(tag, inner) = &value.kind
        && tag.ends_with("independent/tuple")
        && let EdnKind::Vector(pair) = &inner.kind
        && let [k, v] = pair.as_slice()
    {
        let key = match k.to_json() {
            Value::String(s) => s,
            other => other.to_string(),
        };
        return (Some(key), v.to_json());
    }
    (None, value.to_json())
}
