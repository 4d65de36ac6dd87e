//! Jepsen / Knossos EDN histories: `{:type :invoke|:ok|:fail|:info, :f, :value,
//! :process, :time, :index}` maps, either one vector of them or one per line.
//!
//! Each invoke is paired with its process's next completion. `:info` (or an
//! invoke still open when the history ends) is indeterminate: the op may have
//! taken effect at any time after its invoke, or never. `:fail` did not take
//! effect. The key is a `:key` beside `:value` (Porcupine's kv histories:
//! `{:process 0, :type :invoke, :f :append, :key "6", :value "x 0 5 y"}`) or a
//! `#jepsen.independent/tuple [k v]` value. A completion that names a key or an
//! `:f` must name its invoke's.
//!
//! As Jepsen and Elle write them: `:index` may be absent or skip numbers (file
//! order is the order; an index that repeats or goes back is an error); `:time`
//! is nanoseconds; `:process` may be absent (such an op has no process, so no
//! process order; its completion pairs with the one open process-less invoke of
//! the same `:f` and key, and an ambiguous pairing is refused). Nemesis entries (a
//! non-integer `:process`, e.g. `:nemesis`) are never client ops: they are read
//! as fault windows and each client op invoked inside one gets
//! that window's number as its `fault_epoch`.

use super::edn::{Edn, EdnEntries, EdnError, EdnItem, EdnKind};
use super::format::Source;
use super::history::{History, HistoryError, Op, converted_fields};
use super::jsonl_read::Header;
use compact_str::{ToCompactString, format_compact};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::io::Read;

/// Parse an EDN history. `source` names it in error messages.
pub fn parse_edn(source: &str, text: &str) -> Result<History, HistoryError> {
    read_edn(source, text.as_bytes())
}

/// An EDN history read from `reader` as a stream (one entry at a time, see
/// [`EdnEntries`]) into a [`History`]. `source` names it in error messages.
pub fn read_edn(source: &str, reader: impl Read) -> Result<History, HistoryError> {
    collect(source, |emit| pair_edn(source, reader, emit))
}

/// The fault windows an EDN history's nemesis entries describe, in the order
/// they opened (each `epoch` is its rank, from 1), on the history's clock
/// (`:time` when every entry has one, else file positions).
pub fn parse_fault_windows(source: &str, text: &str) -> Result<Vec<FaultWindow>, HistoryError> {
    Ok(pair_edn(source, text.as_bytes(), &mut |_, _| {})?.windows())
}

/// Where an op's invoke and completion stand in the file (entry positions, the
/// clock of a history without `:time` on every entry).
pub(super) type At = (u64, Option<u64>);

/// The ops of an EDN history read from `reader`, handed to `emit` in invoke order
/// as each completes (with [`At`]; their clock and fault epoch are settled by the
/// [`Summary`] returned, which needs the whole history). The error is the one
/// reading the whole file first would give: a read error, then bytes not UTF-8,
/// then EDN syntax, then the first entry that is not a well-paired op.
pub(super) fn pair_edn<R: Read>(
    source: &str,
    reader: R,
    emit: &mut dyn FnMut(Op, At),
) -> Result<Summary, HistoryError> {
    let mut bytes = Source::new(reader);
    let mut pairing = Pairing::new(source, emit);
    let mut found = None;
    let mut entries = EdnEntries::new(&mut bytes);
    let mut position = 0u64;
    let syntax = loop {
        match entries.next_item() {
            Ok(None) => break None,
            Ok(Some(EdnItem::Entry(entry))) => {
                if found.is_none()
                    && let Err(e) = pairing.entry(position, &entry)
                {
                    found = Some(e);
                }
                position += 1;
            }
            // The first entry is not an op: that outranks any error after it.
            Ok(Some(EdnItem::NotAlone { line })) => found = Some(not_an_op(source, line)),
            Err(e) => break Some(syntax_error(source, e)),
        }
    };
    bytes.settle(source, syntax.or(found))?;
    Ok(pairing.finish())
}

fn syntax_error(source: &str, e: EdnError) -> HistoryError {
    HistoryError::Line {
        source_name: source.to_string(),
        line: e.line,
        message: if e.at_end {
            format!("truncated: {}", e.message)
        } else {
            e.message
        },
    }
}

fn not_an_op(source: &str, line: usize) -> HistoryError {
    HistoryError::Line {
        source_name: source.to_string(),
        line,
        message: "expected an op map {:type … :f … :value …}".into(),
    }
}

/// A [`History`] of the ops `pair` hands over, settled by its summary.
pub(super) fn collect(
    source: &str,
    pair: impl FnOnce(&mut dyn FnMut(Op, At)) -> Result<Summary, HistoryError>,
) -> Result<History, HistoryError> {
    let mut ops = Vec::new();
    let mut ats = Vec::new();
    let summary = pair(&mut |op, at| {
        ops.push(op);
        ats.push(at);
    })?;
    let windows = summary.windows();
    for (op, at) in ops.iter_mut().zip(ats) {
        summary.settle(op, at, &windows);
    }
    Ok(History {
        ops,
        present_fields: summary.present_fields(),
        unknown_fields: Default::default(),
        source: source.to_string(),
    })
}

/// What pairing a whole history learnt that its ops' fields depend on.
pub(super) struct Summary {
    every_op_keyed: bool,
    /// Every entry (client or nemesis) has a `:time`.
    every_entry_timed: bool,
    every_op_has_node: bool,
    every_op_has_process: bool,
    /// Nemesis (and other non-client) entries.
    actors: Vec<ActorEntry>,
    ops: u64,
}

impl Summary {
    pub(super) fn present_fields(&self) -> BTreeSet<String> {
        let mut present = converted_fields(self.every_op_keyed, self.every_op_has_node);
        if !self.every_op_has_process {
            present.remove("process");
        }
        if !self.actors.is_empty() {
            // The nemesis is recorded: an op outside every window ran outside a fault.
            present.insert("fault_epoch".into());
        }
        present
    }

    /// The fault windows of the nemesis entries.
    pub(super) fn windows(&self) -> Vec<FaultWindow> {
        windows(&self.actor_stamps())
    }

    /// An op as the history has it: on file positions `at` when not every entry
    /// has a `:time` (file order is then the real-time order), in the fault
    /// window of `windows` it was invoked in when the nemesis is recorded.
    pub(super) fn settle(&self, op: &mut Op, at: At, windows: &[FaultWindow]) {
        if !self.every_entry_timed {
            let (invoked, completed) = at;
            op.invoke_ts = invoked;
            if op.complete_ts.is_some() {
                op.complete_ts = completed;
            }
        }
        if !self.actors.is_empty() {
            op.fault_epoch = epoch_at(windows, op.invoke_ts);
        }
    }

    pub(super) fn header(&self, source: &str) -> Header {
        Header {
            source: source.to_string(),
            present_fields: self.present_fields(),
            unknown_fields: BTreeSet::new(),
            ops: self.ops,
        }
    }

    /// Each nemesis entry's actor, `:f` and stamp on the history's clock.
    fn actor_stamps(&self) -> Vec<(&str, &str, u64)> {
        self.actors
            .iter()
            .map(|a| {
                let stamp = match a.time {
                    Some(t) if self.every_entry_timed => t,
                    _ => a.position,
                };
                (a.actor.as_str(), a.f.as_str(), stamp)
            })
            .collect()
    }
}

/// A fault: from the invoke of the nemesis op that began it to the completion of
/// the one that ended it (`end: None`: still on when the history ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultWindow {
    /// 1 for the first window opened, 2 for the next, …
    pub epoch: u64,
    /// The `:f` that opened it (`start-partition`, `kill`, …).
    pub f: String,
    pub start: u64,
    pub end: Option<u64>,
}

/// One entry of a non-client actor (the nemesis), in file order.
struct ActorEntry {
    actor: String,
    f: String,
    time: Option<u64>,
    position: u64,
}

/// An op invoked, waiting for its completion or for the ops invoked before it.
struct Pending {
    op: Op,
    at: At,
    done: bool,
}

/// Pairs entries, one at a time, into ops handed to `emit` in invoke order: an
/// op is held from its invoke until it and every op invoked before it completed
/// (at most the ops in flight at once, not the history).
pub(super) struct Pairing<'a, 'e> {
    source: &'a str,
    emit: &'e mut dyn FnMut(Op, At),
    /// Ops not handed over yet, in invoke order; the first is op number `base`.
    pending: VecDeque<Pending>,
    base: usize,
    /// process → number of its open op and the invoke's line.
    open: HashMap<String, (usize, usize)>,
    /// Open invokes without a `:process`: op number and line.
    open_unnamed: Vec<(usize, usize)>,
    every_op_keyed: bool,
    every_entry_timed: bool,
    every_op_has_node: bool,
    every_op_has_process: bool,
    last_index: Option<(i64, usize)>,
    /// Position of the entry being read.
    position: u64,
    actors: Vec<ActorEntry>,
}

impl<'a, 'e> Pairing<'a, 'e> {
    pub(super) fn new(source: &'a str, emit: &'e mut dyn FnMut(Op, At)) -> Self {
        Pairing {
            source,
            emit,
            pending: VecDeque::new(),
            base: 0,
            open: HashMap::new(),
            open_unnamed: Vec::new(),
            every_op_keyed: true,
            every_entry_timed: true,
            every_op_has_node: true,
            every_op_has_process: true,
            last_index: None,
            position: 0,
            actors: Vec::new(),
        }
    }

    fn field_err(&self, line: usize, field: &str, message: String) -> HistoryError {
        HistoryError::field(self.source, line, field, message)
    }

    /// The op numbered `index` (held: it is open).
    fn held(&mut self, index: usize) -> &mut Pending {
        &mut self.pending[index - self.base]
    }

    /// Hand over the ops at the front that are complete.
    fn flush(&mut self) {
        while self.pending.front().is_some_and(|p| p.done) {
            if let Some(p) = self.pending.pop_front() {
                (self.emit)(p.op, p.at);
                self.base += 1;
            }
        }
    }

    /// Every op handed over (those still open as they are: indeterminate), and
    /// what the history's clock and fault windows are.
    pub(super) fn finish(mut self) -> Summary {
        let ops = (self.base + self.pending.len()) as u64;
        for p in self.pending.drain(..) {
            (self.emit)(p.op, p.at);
        }
        Summary {
            every_op_keyed: self.every_op_keyed,
            every_entry_timed: self.every_entry_timed,
            every_op_has_node: self.every_op_has_node,
            every_op_has_process: self.every_op_has_process,
            actors: self.actors,
            ops,
        }
    }

    /// Read the entry at `position` (its rank in the history).
    pub(super) fn entry(&mut self, position: u64, entry: &Edn) -> Result<(), HistoryError> {
        let line = entry.line;
        if !matches!(entry.kind, EdnKind::Map(_)) {
            return Err(HistoryError::Line {
                source_name: self.source.to_string(),
                line,
                message: "expected an op map {:type … :f … :value …}".into(),
            });
        }
        self.check_index(entry)?;
        let time = match entry.get("time").map(|t| &t.kind) {
            Some(EdnKind::Int(t)) if *t >= 0 => Some(*t as u64),
            None | Some(EdnKind::Nil) => {
                self.every_entry_timed = false;
                None
            }
            Some(_) => {
                return Err(self.field_err(
                    line,
                    ":time",
                    "expected a non-negative integer (nanoseconds, as Jepsen writes it)".into(),
                ));
            }
        };
        self.position = position;
        let process = match entry.get("process").map(|p| &p.kind) {
            Some(EdnKind::Int(p)) => Some(p.to_string()),
            None | Some(EdnKind::Nil) => None,
            Some(other) => {
                // The nemesis or another non-client actor: a fault, not a client op.
                let actor = match other {
                    EdnKind::Keyword(a) | EdnKind::Str(a) | EdnKind::Symbol(a) => a.clone(),
                    _ => entry
                        .get("process")
                        .map(|p| p.to_json().to_string())
                        .unwrap_or_default(),
                };
                self.actors.push(ActorEntry {
                    actor,
                    f: op_name(entry).unwrap_or_default(),
                    time,
                    position,
                });
                return Ok(());
            }
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
        let stamp = time.unwrap_or(position);
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
                self.complete(line, process.as_deref(), &kind, stamp, key, value, entry)
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

    /// `:index`, where an entry has one, increases in file order: it may skip
    /// numbers (hand-edited histories do) but never repeats or goes back.
    fn check_index(&mut self, entry: &Edn) -> Result<(), HistoryError> {
        let index = match entry.get("index").map(|i| &i.kind) {
            None | Some(EdnKind::Nil) => return Ok(()),
            Some(EdnKind::Int(i)) if *i >= 0 => *i,
            Some(_) => {
                return Err(self.field_err(
                    entry.line,
                    ":index",
                    "expected a non-negative integer (or no :index: file order is the order)"
                        .into(),
                ));
            }
        };
        if let Some((prev, prev_line)) = self.last_index
            && index <= prev
        {
            let how = if index == prev {
                "repeats"
            } else {
                "goes back from"
            };
            return Err(self.field_err(
                entry.line,
                ":index",
                format!(
                    ":index {index} {how} :index {prev} on line {prev_line}: indexes must \
                     increase in file order (they may skip numbers, or be absent)"
                ),
            ));
        }
        self.last_index = Some((index, entry.line));
        Ok(())
    }

    fn invoke(
        &mut self,
        line: usize,
        process: Option<String>,
        stamp: u64,
        key: Option<String>,
        value: Value,
        entry: &Edn,
    ) -> Result<(), HistoryError> {
        if let Some(p) = &process
            && let Some((_, open_line)) = self.open.get(p)
        {
            return Err(self.field_err(
                line,
                ":type",
                format!(
                    "process {p} invokes again while its op invoked on line {open_line} \
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
            Some(EdnKind::Int(i)) => i.to_compact_string(),
            _ => format_compact!("L{line}"),
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
        match &process {
            Some(p) => {
                self.open
                    .insert(p.clone(), (self.base + self.pending.len(), line));
            }
            None => {
                self.every_op_has_process = false;
                self.open_unnamed
                    .push((self.base + self.pending.len(), line));
            }
        }
        let op = Op {
            op_id,
            process: process.map(Into::into).unwrap_or_default(),
            invoke_ts: stamp,
            complete_ts: None,
            op_type: op_type.into(),
            key: key.map(Into::into),
            input: value,
            output: Value::Null,
            error: None,
            timeout: false,
            node,
            fault_epoch: None,
        };
        self.pending.push_back(Pending {
            op,
            at: (self.position, None),
            done: false,
        });
        Ok(())
    }

    /// The open invoke a completion without `:process` closes: the one open
    /// process-less invoke of its `:f` and key. None or several is an error:
    /// guessing would give some op another's interval.
    fn pair_unnamed(
        &mut self,
        line: usize,
        kind: &str,
        f: Option<&str>,
        key: Option<&str>,
    ) -> Result<(usize, usize), HistoryError> {
        let fits: Vec<usize> = self
            .open_unnamed
            .iter()
            .enumerate()
            .filter(|(_, (i, _))| {
                let op = &self.pending[*i - self.base].op;
                f.is_none_or(|f| op.op_type == f)
                    && key.is_none_or(|k| op.key.as_deref() == Some(k))
            })
            .map(|(n, _)| n)
            .collect();
        let what = match (f, key) {
            (Some(f), Some(k)) => format!(" of :{f} on key {k:?}"),
            (Some(f), None) => format!(" of :{f}"),
            (None, Some(k)) => format!(" on key {k:?}"),
            (None, None) => String::new(),
        };
        match fits.as_slice() {
            [n] => Ok(self.open_unnamed.remove(*n)),
            [] => Err(self.field_err(
                line,
                ":process",
                format!(
                    "absent, and no invoke without :process{what} is open for this :{kind} to \
                     complete"
                ),
            )),
            many => {
                let lines: Vec<String> = many
                    .iter()
                    .map(|n| self.open_unnamed[*n].1.to_string())
                    .collect();
                Err(self.field_err(
                    line,
                    ":process",
                    format!(
                        "absent, and the invokes{what} on lines {} are all open: without \
                         :process a completion pairs only with the one open invoke of its :f \
                         and key; give the entries their :process",
                        lines.join(", ")
                    ),
                ))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn complete(
        &mut self,
        line: usize,
        process: Option<&str>,
        kind: &str,
        stamp: u64,
        key: Option<String>,
        value: Value,
        entry: &Edn,
    ) -> Result<(), HistoryError> {
        let (index, invoke_line) = match process {
            Some(p) => self.open.remove(p).ok_or_else(|| {
                self.field_err(
                    line,
                    ":type",
                    format!(":{kind} for process {p}, which has no open invoke"),
                )
            })?,
            None => {
                let f = op_name(entry);
                self.pair_unnamed(line, kind, f.as_deref(), key.as_deref())?
            }
        };
        let invoked = &self.pending[index - self.base].op;
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
            && invoked.key.as_deref() != Some(k.as_str())
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
        let position = self.position;
        let held = self.held(index);
        held.at.1 = Some(position);
        held.done = true;
        let op = &mut held.op;
        match kind {
            "ok" => {
                op.complete_ts = Some(stamp);
                op.output = value;
            }
            "fail" => {
                op.complete_ts = Some(stamp);
                op.error = Some(error_text(entry).unwrap_or_else(|| "fail".to_string()));
            }
            _ => {
                // Indeterminate; an :error says why, and changes nothing else.
                op.timeout = true;
                op.error = error_text(entry);
            }
        }
        self.flush();
        Ok(())
    }
}

/// An entry's `:error` as text: a keyword, symbol or string bare, a vector or
/// map as JSON.
fn error_text(entry: &Edn) -> Option<String> {
    match entry.get("error")?.to_json() {
        Value::Null => None,
        Value::String(s) => Some(s),
        other => Some(other.to_string()),
    }
}

/// What a nemesis `:f` does to fault windows.
enum Role<'f> {
    /// Begins a fault that a later op ends (`start`, `start-partition`, `kill`,
    /// `pause`, `bump-clock`).
    Open { verb: &'f str, what: &'f str },
    /// Ends the latest open fault begun by one of `openers` with the same `what`
    /// (`stop-partition` ends `start-partition`, `resume` ends `pause`, `start`
    /// ends `kill`).
    Close {
        openers: &'static [&'static str],
        what: &'f str,
    },
    /// A fault lasting the op itself (`strobe-clock`, `bitflip-wal`, …).
    Span,
}

fn role<'f>(f: &'f str, kill_open: bool) -> Role<'f> {
    let (verb, what) = f.split_once('-').unwrap_or((f, ""));
    match verb {
        "stop" => Role::Close {
            openers: &["start"],
            what,
        },
        "resume" => Role::Close {
            openers: &["pause"],
            what,
        },
        "reset" => Role::Close {
            openers: &["bump"],
            what,
        },
        // After a kill, `start` restarts what was killed: the fault ends.
        "start" if kill_open => Role::Close {
            openers: &["kill"],
            what,
        },
        "start" | "kill" | "pause" | "bump" => Role::Open { verb, what },
        _ => Role::Span,
    }
}

/// The fault windows of nemesis entries `(actor, :f, stamp)` in file order.
///
/// Each actor's entries pair up into ops (the next entry with the same `:f`
/// completes one; Jepsen writes both as `:info`), and the ops into windows by
/// their `:f` (see [`role`]). A window runs from its first op's invoke to its
/// closing op's completion; a close with no matching open window is a heal of
/// nothing and opens none.
fn windows(entries: &[(&str, &str, u64)]) -> Vec<FaultWindow> {
    let mut ops: Vec<(&str, u64, u64)> = Vec::new();
    let mut open: HashMap<&str, usize> = HashMap::new();
    for &(actor, f, stamp) in entries {
        match open.get(actor) {
            Some(&i) if ops[i].0 == f => {
                ops[i].2 = stamp;
                open.remove(actor);
            }
            _ => {
                open.insert(actor, ops.len());
                ops.push((f, stamp, stamp));
            }
        }
    }
    let mut windows: Vec<FaultWindow> = Vec::new();
    // Open windows: index in `windows`, the verb and what that opened it.
    let mut active: Vec<(usize, &str, &str)> = Vec::new();
    for (f, start, end) in ops {
        let kill_open = {
            let what = f.split_once('-').map_or("", |(_, w)| w);
            active.iter().any(|(_, v, w)| *v == "kill" && *w == what)
        };
        match role(f, kill_open) {
            Role::Open { verb, what } => {
                active.push((windows.len(), verb, what));
                windows.push(FaultWindow {
                    epoch: windows.len() as u64 + 1,
                    f: f.to_string(),
                    start,
                    end: None,
                });
            }
            Role::Close { openers, what } => {
                if let Some(pos) = active
                    .iter()
                    .rposition(|(_, v, w)| openers.contains(v) && *w == what)
                {
                    let (i, _, _) = active.remove(pos);
                    windows[i].end = Some(end);
                }
            }
            Role::Span => windows.push(FaultWindow {
                epoch: windows.len() as u64 + 1,
                f: f.to_string(),
                start,
                end: Some(end),
            }),
        }
    }
    windows
}

/// The latest-opened window that is on at `t`.
fn epoch_at(windows: &[FaultWindow], t: u64) -> Option<u64> {
    windows
        .iter()
        .filter(|w| w.start <= t && w.end.is_none_or(|e| t <= e))
        .map(|w| w.epoch)
        .max()
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
