//! EDN, Porcupine and Jepsen-log histories read as streams: `faultline check`
//! says what it said when they were read whole, the checkers that fold ops judge
//! a one-line EDN vector as they judge the same history in JSONL, and hostile
//! input (deep nesting, a huge entry, bad bytes after a bad entry) is refused
//! with the error reading the whole file gave.

use faultline::oracle::Op;
use faultline::oracle::checker::CheckerReport;
use faultline::oracle::cli::to_json;
use faultline::oracle::edn::ENTRY_LIMIT;
use faultline::oracle::format::{Format, fold_history, read_history, read_history_file};
use faultline::oracle::linear::{self, Linear};
use faultline::oracle::op_view::{OpSink, OpView};
use faultline::oracle::params::Params;
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::io::BufReader;
use std::path::Path;
use std::process::Command;

/// Every command of `check-golden.txt` (recorded with the readers that read a
/// history whole, before they streamed) prints what it printed then: stdout,
/// stderr and the exit code, over every fixture in EDN, Porcupine and Jepsen-log
/// and over malformed ones. (Since recorded, two things changed on purpose: the
/// linearizability evidence names the first op the model could not check, and
/// exactly-once no longer calls a dump key with a count of 0 a phantom effect.)
#[test]
fn check_says_what_the_whole_file_readers_said() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let golden =
        std::fs::read_to_string(root.join("tests/fixtures/stream-formats/check-golden.txt"))
            .expect("golden");
    let mut now = String::new();
    let mut commands = 0;
    for line in golden.lines().filter_map(|l| l.strip_prefix("$ ")) {
        let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
            .current_dir(root)
            .arg("check")
            .args(line.split(' '))
            .output()
            .expect("faultline runs");
        let code = out.status.code().map_or("none".into(), |c| c.to_string());
        let _ = write!(
            now,
            "$ {line}\n{}--- stderr\n{}--- exit {code}\n",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        commands += 1;
    }
    assert!(commands > 100, "{commands} commands");
    for (was, is) in golden.split("\n$ ").zip(now.split("\n$ ")) {
        assert_eq!(is, was);
    }
    assert_eq!(now, golden);
}

/// A history of `n` ops on 8 processes as Jepsen EDN entries and as faultline's
/// JSONL records: writes (some failed, some timed out), reads of a version (some
/// going back) and a queue's enqueues and dequeues (some out of order).
fn history(n: usize) -> (Vec<String>, Vec<String>) {
    let (mut edn, mut jsonl) = (Vec::new(), Vec::new());
    let mut index = 0u64;
    for batch in 0..n / 8 {
        let mut done = Vec::new();
        for p in 0..8u64 {
            let i = (batch * 8) as u64 + p;
            let key = format!("k{}", i % 37);
            let (f, input, output) = match i % 4 {
                0 | 1 => ("write", json!(i), json!(i)),
                2 => (
                    "read",
                    Value::Null,
                    json!((i / 16).saturating_sub((i % 11 == 2) as u64)),
                ),
                _ if p % 2 == 0 => ("enqueue", json!(i), json!(i)),
                _ => (
                    "dequeue",
                    Value::Null,
                    json!(i.saturating_sub(5 + (i % 13 == 3) as u64 * 12)),
                ),
            };
            let kind = match i % 23 {
                5 => "fail",
                9 => "info",
                _ => "ok",
            };
            let edn_value = |v: &Value| {
                if v.is_null() {
                    "nil".to_string()
                } else {
                    v.to_string()
                }
            };
            edn.push(format!(
                "{{:index {index}, :time {}, :type :invoke, :process {p}, :f :{f}, :key \"{key}\", :value {}}}",
                index * 10,
                edn_value(&input)
            ));
            done.push((index, p, i, key, f, input, output, kind));
            index += 1;
        }
        for (invoked, p, _, key, f, input, output, kind) in done {
            let error = match kind {
                "fail" => json!("fail"),
                "info" => json!("timeout"),
                _ => Value::Null,
            };
            let extra = if kind == "info" {
                ", :error :timeout"
            } else {
                ""
            };
            let value = if kind == "ok" { &output } else { &input };
            edn.push(format!(
                "{{:index {index}, :time {}, :type :{kind}, :process {p}, :f :{f}, :key \"{key}\", :value {}{extra}}}",
                index * 10,
                if value.is_null() { "nil".to_string() } else { value.to_string() }
            ));
            jsonl.push(
                json!({
                    "op_id": invoked.to_string(),
                    "process": p.to_string(),
                    "invoke_ts": invoked * 10,
                    "complete_ts": if kind == "info" { Value::Null } else { json!(index * 10) },
                    "op_type": f,
                    "key": key,
                    "input": input,
                    "output": if kind == "ok" { output } else { Value::Null },
                    "error": error,
                    "timeout": kind == "info",
                })
                .to_string(),
            );
            index += 1;
        }
    }
    (edn, jsonl)
}

fn fold(checker: &str, path: &Path, format: Format, final_state: &Value) -> CheckerReport {
    let params = Params::parse::<&str>(&[]).expect("no params");
    let mut fold = Linear::new(checker, &params, None).expect("a folding checker");
    let open = || std::fs::File::open(path).map(BufReader::new);
    let header = fold_history(format, "h", open().expect("history"), Some(open), &mut fold)
        .unwrap_or_else(|e| panic!("{checker}: {e}"));
    fold.finish(&header, Some(&final_state.to_string()))
        .expect("a report")
}

/// The checkers that fold ops give the same report over a history of a few MB
/// written as one EDN vector on one line as over the same history in JSONL.
#[test]
fn a_linear_checker_judges_a_one_line_edn_vector_as_the_same_jsonl() {
    let (edn, jsonl) = history(24_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let edn_path = dir.path().join("h.edn");
    let jsonl_path = dir.path().join("h.jsonl");
    std::fs::write(&edn_path, format!("[{}]\n", edn.join(" "))).expect("write");
    std::fs::write(&jsonl_path, jsonl.join("\n") + "\n").expect("write");
    let size = std::fs::metadata(&edn_path).expect("size").len();
    assert!(size > 2 << 20, "{size} bytes");
    // Keys hold their first writes only: later acknowledged writes are lost.
    let final_state = Value::Object((0..37).map(|k| (format!("k{k}"), json!(k))).collect());
    let mut anomalies = 0;
    for checker in linear::NAMES {
        let from_edn = fold(checker, &edn_path, Format::Edn, &final_state);
        let from_jsonl = fold(checker, &jsonl_path, Format::Jsonl, &final_state);
        assert_eq!(to_json(&from_edn), to_json(&from_jsonl), "{checker}");
        anomalies += from_edn.anomalies.len();
    }
    assert!(anomalies > 0, "the history has anomalies to agree on");
}

/// Brackets nested past the limit inside a one-line vector, an entry past
/// [`ENTRY_LIMIT`], and bytes that are not UTF-8 after an entry that is not an op:
/// each refused, saying where, as when the file was read whole.
#[test]
fn hostile_edn_is_refused_where_it_is() {
    let deep = format!("[{{:type :invoke}} {}", "[".repeat(200_000));
    let e = read_history(Format::Edn, "deep.edn", &deep).expect_err("too deep");
    assert!(
        e.to_string()
            .contains("deep.edn:1: values nested deeper than"),
        "{e}"
    );

    let huge = format!(
        "{{:type :invoke, :process 0, :f :write, :value \"{}\"}}\n",
        "x".repeat(ENTRY_LIMIT as usize + 1)
    );
    let e = read_history(Format::Edn, "huge.edn", &huge).expect_err("too long");
    assert!(
        e.to_string().contains("huge.edn:1: one entry longer than"),
        "{e}"
    );

    let mut bytes = b"[{:type :bogus, :process 0, :f :write}\n {:type :ok, :value \"".to_vec();
    bytes.extend_from_slice(b"\xff\"}]\n");
    let e = read_history_file(Format::Edn, "bad.edn", &bytes[..]).expect_err("not UTF-8");
    assert_eq!(
        e.to_string(),
        "bad.edn:2: not UTF-8 at line 2, column 22 (byte 60); a history is UTF-8 text"
    );
}

/// The ops a fold is handed.
struct Ops(Vec<Op>);

impl OpSink for Ops {
    fn op(&mut self, op: &OpView<'_>) {
        self.0.push(op.to_op());
    }
}

/// Folding a history (EDN and Jepsen logs in two passes, the clock and fault
/// windows settled by the first) hands over exactly the ops of its `History`, with
/// its header; a malformed one fails with the same error either way.
#[test]
fn a_fold_is_handed_the_ops_of_the_history() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut folded = 0;
    for dir in ["histories", "stream-formats"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("fixtures") {
            let path = entry.expect("entry").path();
            let name = path.display().to_string();
            let format = if name.ends_with(".edn") {
                Format::Edn
            } else if name.ends_with(".porcupine.jsonl") {
                Format::Porcupine
            } else if name.ends_with(".jepsen.log") {
                Format::JepsenLog
            } else {
                continue;
            };
            let open = || std::fs::File::open(&path).map(BufReader::new);
            let whole = read_history_file(format, &name, open().expect("fixture"));
            let mut ops = Ops(Vec::new());
            let fold = fold_history(
                format,
                &name,
                open().expect("fixture"),
                Some(open),
                &mut ops,
            );
            match (whole, fold) {
                (Ok(history), Ok(header)) => {
                    assert_eq!(history.header(), header, "{name}");
                    assert_eq!(history.ops, ops.0, "{name}");
                    folded += 1;
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{name}: read whole {a:?}, folded {b:?}"),
            }
        }
    }
    assert!(folded >= 8, "{folded} histories folded");
}

/// A run's history file, read as a stream with the recorder's field names: its
/// ops; a missing file or a symlink is unreadable, a malformed line rejected
/// (file and line).
#[test]
fn a_runs_history_file_is_read_as_a_stream_with_its_renames() {
    use faultline::oracle::format::{HistoryFileError, read_run_history};
    use std::collections::BTreeMap;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("history.jsonl");
    let ok = |id: u64| {
        json!({"op_id": id.to_string(), "process_id": "p1", "invoke_ts": id, "complete_ts": id + 1,
               "op_type": "write", "key": "k", "input": id, "output": id, "error": null,
               "timeout": false})
        .to_string()
    };
    std::fs::write(&path, format!("{}\n{}\n", ok(1), ok(2))).expect("write");
    let renames = BTreeMap::from([("process".to_string(), "process_id".to_string())]);
    let history = read_run_history(Format::Jsonl, &path, &renames).expect("reads");
    assert_eq!(history.ops.len(), 2);
    assert_eq!(history.ops[1].process, "p1");
    assert!(history.present_fields.contains("process"));

    std::fs::write(&path, format!("{}\n{{\"op_id\": 3\n", ok(1))).expect("write");
    match read_run_history(Format::Jsonl, &path, &renames) {
        Err(HistoryFileError::Rejected(e)) => {
            assert!(
                e.to_string().starts_with(&format!("{}:2:", path.display())),
                "{e}"
            );
        }
        other => panic!("a torn line was not rejected: {other:?}"),
    }
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&path, &link).expect("symlink");
    for unreadable in [dir.path().join("missing.jsonl"), link] {
        assert!(
            matches!(
                read_run_history(Format::Jsonl, &unreadable, &renames),
                Err(HistoryFileError::Unreadable(_))
            ),
            "{}",
            unreadable.display()
        );
    }
}
