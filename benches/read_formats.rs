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
//!   generic EDN tree (`edn::read_all`), then the `History` built while that tree
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
//! times the file's size).

use faultline::oracle::checker::RunOptions;
use faultline::oracle::edn::read_all;
use faultline::oracle::format::{Format, fold_history, read_history_file};
use faultline::oracle::jepsen::parse_edn;
use faultline::oracle::linear::Linear;
use faultline::oracle::params::Params;
use faultline::oracle::registry::{self, Inputs};
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const TARGET_MEMORY: f64 = 3.0;
const CHILD: &str = "READ_FORMATS_CHILD";
const CHECKERS: [&str; 2] = ["monotonic-reads", "linearizability-register"];

fn main() {
    if let Ok(how) = std::env::var(CHILD) {
        child(&how);
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
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = std::env::current_exe().expect("own path");
    println!(
        "{:<7} {:<25} {:>4} {:>8} {:>10} {:>9}  target",
        "layout", "checker", "path", "s", "peak MiB", "RSS/file"
    );
    for (layout, ops) in [("lines", lines_ops), ("vector", vector_ops)] {
        let history = dir.path().join(format!("{layout}.edn"));
        write_history(&history, ops, layout == "vector");
        let size = std::fs::metadata(&history).expect("size").len() as f64;
        for checker in CHECKERS {
            for path in ["old", "new"] {
                if path == "old" && !old {
                    continue;
                }
                let out = Command::new(&exe)
                    .env(CHILD, format!("{path} {checker}"))
                    .arg(&history)
                    .output()
                    .expect("child");
                let said = String::from_utf8_lossy(&out.stdout);
                let fields: Vec<f64> = said
                    .split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect();
                let [ops_read, secs, peak_kib, anomalies] = fields[..] else {
                    println!(
                        "{layout:<7} {checker:<25} {path:>4} failed: {said} {}",
                        String::from_utf8_lossy(&out.stderr).trim()
                    );
                    continue;
                };
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
fn child(how: &str) {
    let mut cpus = nix::sched::CpuSet::new();
    let _ = cpus.set(0);
    let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &cpus);
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
                let tree = read_all(&text).expect("EDN");
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
    println!("{ops} {secs} {} {}", peak_kib(), report.anomalies.len());
}

/// This process's peak resident memory (VmHWM), KiB.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
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
