//! Reading and checking 1M-op JSONL histories with the linear checkers (issue 33
//! item 4: >= 2 M ops/s on one core including parsing, peak memory <= 3x the file).
//!
//! For each of no-lost-ack, exactly-once, prefix-order and monotonic-reads, one
//! history of 1,000,000 ops is written to a temporary directory, then read and
//! checked twice, each run in a child process pinned to one core so that its peak
//! resident memory (VmHWM) is its own:
//!
//! - **old**: the whole file read into one `String`, every line parsed into a
//!   `serde_json::Value` map and converted to an `Op` (the reader before this
//!   bench, kept here as the baseline), all ops in a `History`, then the checker's
//!   `check(&History)`;
//! - **new**: the file read as a stream by `faultline check`'s path
//!   (`oracle::linear::Linear`): each line parsed by the typed reader and folded
//!   into the checker as it is read, no `History` built.
//!
//! Prints, per checker and path: seconds, M ops/s, peak RSS, peak RSS / file size,
//! the new path's speed-up over the old, and PASS/MISS against the targets.
//!
//! `cargo bench --bench read_history` (`READ_HISTORY_OPS=N` for another size;
//! `READ_HISTORY_PATHS=new` skips the old path; `READ_HISTORY_DIR=DIR` writes the
//! histories into DIR and keeps them, so that
//! one child can be run again alone, e.g. under `perf record`:
//! `READ_HISTORY_CHILD='new exactly-once' target/release/deps/read_history-…
//! DIR/exactly-once.jsonl DIR/exactly-once.final.json`).

use faultline::oracle::history::{History, HistoryError, Op, op_from_map};
use faultline::oracle::linear::Linear;
use faultline::oracle::params::Params;
use faultline::oracle::{exactly_once, no_lost_ack, prefix_order, session};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

const CHECKERS: [&str; 4] = [
    "no-lost-ack",
    "exactly-once",
    "prefix-order",
    "monotonic-reads",
];
const TARGET_OPS_PER_S: f64 = 2e6;
const TARGET_MEMORY: f64 = 3.0;
#[path = "support/child.rs"]
mod child;

const CHILD: &str = "READ_HISTORY_CHILD";

fn main() {
    if let Ok(how) = std::env::var(CHILD) {
        in_child(&how);
        return;
    }
    let n: u64 = std::env::var("READ_HISTORY_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let temp = tempfile::tempdir().expect("temp dir");
    let dir =
        std::env::var_os("READ_HISTORY_DIR").map_or_else(|| temp.path().to_path_buf(), Into::into);
    let paths = std::env::var("READ_HISTORY_PATHS").unwrap_or_else(|_| "old new".into());
    println!(
        "{:<16} {:>4} {:>8} {:>9} {:>11} {:>9} {:>9}  target",
        "checker", "path", "s", "M ops/s", "peak MiB", "RSS/file", "speed-up"
    );
    for checker in CHECKERS {
        let history = dir.join(format!("{checker}.jsonl"));
        let dump = dir.join(format!("{checker}.final.json"));
        write_history(checker, n, &history, &dump);
        let size = std::fs::metadata(&history).expect("size").len() as f64;
        let mut old_secs = f64::NAN;
        for path in paths.split_whitespace() {
            let how = format!("{path} {checker}");
            let child::Figures {
                ops,
                secs,
                peak_kib,
                anomalies,
            } = child::run(CHILD, &how, &[&history, &dump])
                .unwrap_or_else(|said| panic!("child {how}: {said}"));
            let rate = ops / secs;
            let memory = peak_kib * 1024.0 / size;
            let (speedup, verdict) = if path == "old" {
                old_secs = secs;
                (String::from("1.00"), String::new())
            } else {
                let pass = |ok: bool| if ok { "PASS" } else { "MISS" };
                (
                    format!("{:.2}", old_secs / secs),
                    format!(
                        "{} >= 2 M ops/s, {} <= 3x file",
                        pass(rate >= TARGET_OPS_PER_S),
                        pass(memory <= TARGET_MEMORY)
                    ),
                )
            };
            println!(
                "{checker:<16} {path:>4} {secs:>8.3} {:>9.2} {:>11.1} {memory:>8.2}x {speedup:>8}x  {verdict} \
                 ({anomalies} anomalies, file {:.1} MiB)",
                rate / 1e6,
                peak_kib / 1024.0,
                size / 1048576.0
            );
        }
    }
}

/// One read-and-check in this process, pinned to one core; prints ops, seconds,
/// peak RSS in KiB and the anomalies found.
fn in_child(how: &str) {
    child::pin_to_one_core();
    let (path, checker) = how.split_once(' ').expect("path checker");
    let args: Vec<String> = std::env::args().collect();
    let (history, dump) = (Path::new(&args[1]), Path::new(&args[2]));
    let started = Instant::now();
    let params = Params::parse::<&str>(&[]).expect("params");
    let report = if path == "old" {
        let text = std::fs::read_to_string(history).expect("history");
        let h = old_parse_jsonl("h", &text).expect("parses");
        drop(text);
        let dump: Value =
            serde_json::from_str(&std::fs::read_to_string(dump).expect("dump")).expect("dump");
        let map: BTreeMap<String, Value> = match &dump {
            Value::Object(m) => m.clone().into_iter().collect(),
            _ => BTreeMap::new(),
        };
        match checker {
            "no-lost-ack" => no_lost_ack::check(&h, &map),
            "exactly-once" => {
                exactly_once::check(&h, exactly_once::Effects::Tree(&dump), &params).expect("check")
            }
            "prefix-order" => prefix_order::check(&h, &params).expect("check"),
            _ => session::monotonic_reads::check(&h, &params).expect("check"),
        }
    } else {
        let file = std::fs::File::open(history).expect("history");
        let mut fold = Linear::new(checker, &params, None).expect("a linear checker");
        let header = fold
            .read("h", std::io::BufReader::with_capacity(1 << 16, file))
            .expect("reads");
        let dump = std::fs::read_to_string(dump).expect("dump");
        fold.finish(&header, Some(&dump)).expect("check")
    };
    let secs = started.elapsed().as_secs_f64();
    let ops = match report.run {
        faultline::verdict::CheckerRun::Judged { ops_produced, .. } => ops_produced,
        ref other => panic!("{other:?}"),
    };
    child::report(ops, secs, report.anomalies.len());
}

/// xorshift64: the same histories on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A record with the twelve default fields, as faultline's recorders write them.
#[allow(clippy::too_many_arguments)]
fn record(
    i: u64,
    process: u64,
    invoke: u64,
    complete: Option<u64>,
    op_type: &str,
    key: Option<&str>,
    input: Value,
    output: Value,
    error: Option<&str>,
    timeout: bool,
) -> Value {
    json!({
        "op_id": format!("{i}"),
        "process": process,
        "invoke_ts": invoke,
        "complete_ts": complete,
        "op_type": op_type,
        "key": key,
        "input": input,
        "output": output,
        "error": error,
        "timeout": timeout,
        "node": format!("n{}", process % 5 + 1),
        "fault_epoch": null,
    })
}

/// `n` ops for `checker` into `history`, and the final state it is judged against
/// into `dump` (about 1 % of the ops are anomalies where the checker has any).
fn write_history(checker: &str, n: u64, history: &Path, dump: &Path) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = std::io::BufWriter::new(std::fs::File::create(history).expect("history"));
    let mut line = |v: Value| writeln!(out, "{v}").expect("write");
    let mut last: BTreeMap<String, Value> = BTreeMap::new();
    let mut effects: BTreeMap<String, Value> = BTreeMap::new();
    let clients = 50;
    match checker {
        "no-lost-ack" | "exactly-once" => {
            for i in 0..n {
                let roll = rng.next() % 100;
                let (timeout, error) = (roll == 0, (roll == 1).then_some("refused"));
                let invoke = i * 10;
                let complete = (!timeout).then_some(invoke + 5);
                if checker == "no-lost-ack" {
                    let key = format!("k{}", rng.next() % 1000);
                    if error.is_none() {
                        last.insert(key.clone(), json!(i));
                    }
                    let (k, input) = (Some(key.as_str()), json!(i));
                    line(record(
                        i,
                        i % clients,
                        invoke,
                        complete,
                        "write",
                        k,
                        input,
                        Value::Null,
                        error,
                        timeout,
                    ));
                } else {
                    let key = format!("t{i}");
                    if error.is_none() {
                        // About 1 in 200 committed twice: a duplicate effect.
                        effects.insert(
                            key.clone(),
                            json!(1 + u64::from(rng.next().is_multiple_of(200))),
                        );
                    }
                    let input = json!({"idempotency_key": key, "amount": i % 1000});
                    line(record(
                        i,
                        i % clients,
                        invoke,
                        complete,
                        "transfer",
                        None,
                        input,
                        json!("ok"),
                        error,
                        timeout,
                    ));
                }
            }
        }
        "prefix-order" => {
            // Half enqueues (acknowledged in order), half dequeues by 10 consumers,
            // each reading the first n/20 values; one consumer skips one.
            let produced = n / 2;
            for i in 0..produced {
                let t = i * 10;
                line(record(
                    i,
                    i % 20,
                    t,
                    Some(t + 5),
                    "enqueue",
                    None,
                    json!(i),
                    Value::Null,
                    None,
                    false,
                ));
            }
            let per = (n - produced) / 10;
            let mut id = produced;
            for c in 0..10u64 {
                for j in 0..per {
                    let value = if c == 3 && j == 7 { per + 1 } else { j };
                    let t = produced * 10 + j * 100 + c;
                    line(record(
                        id,
                        100 + c,
                        t,
                        Some(t + 5),
                        "dequeue",
                        None,
                        Value::Null,
                        json!(value),
                        None,
                        false,
                    ));
                    id += 1;
                }
            }
        }
        _ => {
            // Reads of 1,000 keys by 50 sessions; the version read is the time
            // divided by 1,000, except that 1 in 1,000 reads an older one.
            for i in 0..n {
                let key = format!("k{}", rng.next() % 1000);
                let t = i * 10;
                let stale = rng.next().is_multiple_of(1000);
                let version = (t / 1000).saturating_sub(if stale { 1000 } else { 0 });
                let output = json!({"value": format!("v{version}"), "version": version});
                line(record(
                    i,
                    i % clients,
                    t,
                    Some(t + 5),
                    "read",
                    Some(&key),
                    Value::Null,
                    output,
                    None,
                    false,
                ));
            }
        }
    }
    drop(out);
    let state = if checker == "exactly-once" {
        effects
    } else {
        last
    };
    let mut state: Map<String, Value> = state.into_iter().collect();
    if checker == "no-lost-ack" {
        for k in 0..10 {
            state.insert(format!("k{k}"), json!("never written"));
        }
    }
    std::fs::write(dump, Value::Object(state).to_string()).expect("dump");
}

/// The JSONL reader before the streaming one: the whole text, each line parsed
/// into a JSON value map (the baseline; errors as they were).
fn old_parse_jsonl(source: &str, text: &str) -> Result<History, HistoryError> {
    let mut ops = Vec::new();
    let mut present: Option<BTreeSet<String>> = None;
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut op_lines: Vec<usize> = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let line_err = |message: String| HistoryError::Line {
            source_name: source.to_string(),
            line: line_no,
            message,
        };
        let map: Map<String, Value> = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(line_err("expected a JSON object".into())),
            Err(e) => return Err(line_err(format!("invalid JSON: {e}"))),
        };
        let keys: BTreeSet<String> = map.keys().cloned().collect();
        present = Some(match present {
            None => keys,
            Some(p) => p.intersection(&keys).cloned().collect(),
        });
        let op: Op = op_from_map(source, line_no, &map)?;
        if !op.op_id.is_empty()
            && let Some(first) = seen.insert(op.op_id.to_string(), line_no)
        {
            return Err(line_err(format!("op_id {} repeats line {first}", op.op_id)));
        }
        ops.push(op);
        op_lines.push(line_no);
    }
    // The lost-completion pass over every op, as the old reader made it.
    let mut open: HashMap<&str, usize> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        if open.remove(op.process.as_str()).is_some() && !op.process.is_empty() {
            return Err(HistoryError::Line {
                source_name: source.to_string(),
                line: op_lines[i],
                message: "a completion record is missing".into(),
            });
        }
        if op.complete_ts.is_none() && !op.timeout && op.error.is_none() {
            open.insert(op.process.as_str(), i);
        }
    }
    Ok(History {
        ops,
        present_fields: present.unwrap_or_default(),
        unknown_fields: BTreeSet::new(),
        source: source.to_string(),
    })
}
