//! The transactional checkers (`list-append`, `rw-register`) on large txn-jsonl
//! histories (issue 33: a million list-append txns in under 10 s and 1 GiB on
//! one core, 100k in under 1 s; rw-register likewise), each run from the file:
//! reading and parsing included, as `faultline check --format txn-jsonl` runs it.
//!
//! Each history is a serial execution spread over 20 processes: txn i takes effect
//! at 10·i and its invoke / completion lie up to 95 before / after (about 19 txns
//! in flight at once, each process's txns never overlap). A txn has 4 micro-ops,
//! writes (appends) or reads with even odds, on one of 4 keys of a window that
//! moves on every 16 txns (keys retire after about 32 writes, as Elle's generator
//! rotates them). The "valid" histories are valid by construction (the checker
//! must find nothing at strict-serializable); the "stale" ones have one anomaly
//! injected in the middle: a txn reads nil from a key that a txn which completed
//! 25 txns earlier wrote: a dependency cycle, which must be found (a
//! G-single-realtime one; others too where the keys they share give one).
//!
//! Every check runs in a child process of its own, so its peak resident set
//! (VmHWM) is its own; the peak heap is counted by a global allocator. Beside
//! each, the same history through the checkers as they were before issue 33
//! (`txn::baseline`: the whole file as a string, a generic `History` of JSON
//! values, petgraph), for the sizes up to `FAULTLINE_BENCH_BASELINE_MAX`
//! (default 100000: the baseline needs ~45 s and ~6 GiB at 1M).
//!
//! `cargo bench --bench txn` (run it under `taskset -c 1` for one core;
//! `FAULTLINE_BENCH_SIZES=100000,1000000` by default; `FAULTLINE_BENCH_KEEP=DIR`
//! writes the histories to DIR and keeps them, for `faultline check` to be run on).

use faultline::oracle::history::History;
use faultline::oracle::params::Params;
use faultline::oracle::txn::{self, baseline, history::parse_txn_jsonl};
use faultline::verdict::CheckerRun;
use serde_json::json;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Instant;

#[path = "support/heap.rs"]
mod heap;
use heap::{Counting, LIVE, PEAK};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const CHILD: &str = "FAULTLINE_TXN_BENCH_CHILD";

/// Write a generated history of `n` txns to `path`, one txn-jsonl line at a
/// time. `register`: writes and single-value reads; else appends and list reads.
fn generate(path: &Path, n: u64, register: bool, stale: bool) -> std::io::Result<u64> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut lists: HashMap<u64, Vec<u64>> = HashMap::new();
    let mut value = 0u64;
    let injected = n / 2;
    for i in 0..n {
        let mut mops = Vec::with_capacity(5);
        for _ in 0..4 {
            let key = i / 16 + next() % 4;
            if next() % 2 == 0 {
                value += 1;
                lists.entry(key).or_default().push(value);
                mops.push(json!([if register { "w" } else { "append" }, key, value]));
            } else {
                let list = lists.get(&key).map(Vec::as_slice).unwrap_or_default();
                mops.push(match (register, list.last()) {
                    (false, _) => json!(["r", key, list]),
                    (true, None) => json!(["r", key, null]),
                    (true, Some(v)) => json!(["r", key, v]),
                });
            }
        }
        if stale {
            // 25 txns before the middle writes key "s"; the middle reads it as nil
            // (stale: the write completed before it began); the next one sees it.
            let w = if register { "w" } else { "append" };
            if i == injected - 25 {
                mops.push(json!([w, "s", "x"]));
            } else if i == injected {
                mops.push(json!(["r", "s", null]));
            } else if i == injected + 1 {
                mops.push(if register {
                    json!(["r", "s", "x"])
                } else {
                    json!(["r", "s", ["x"]])
                });
            }
        }
        // Keys below the window are retired.
        lists.retain(|&k, _| k + 4 > i / 16);
        let at = 100 + i * 10;
        let record = json!({
            "op_id": i,
            "process": i % 20,
            "invoke_ts": at - next() % 96,
            "complete_ts": at + 1 + next() % 95,
            "type": "ok",
            "value": mops,
        });
        serde_json::to_writer(&mut out, &record)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(std::fs::metadata(path)?.len())
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// In the child: check `path` one way and print `seconds heap_mib rss_mib
/// anomalies first_anomaly_kind`.
fn child(way: &str, checker: &str, path: &Path) {
    let params =
        Params::parse(&["consistency=strict-serializable", "time_limit_s=600"]).expect("params");
    let source = path.display().to_string();
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let started = Instant::now();
    let report = match way {
        "faultline" => txn::check_file(checker, path, &params).expect("checked"),
        _ => {
            let text = std::fs::read_to_string(path).expect("read");
            let history: History = parse_txn_jsonl(&source, &text).expect("parsed");
            drop(text);
            match checker {
                "list-append" => baseline::list_append::check(&history, &params),
                _ => baseline::rw_register::check(&history, &params),
            }
            .expect("checked")
        }
    };
    let took = started.elapsed();
    let heap = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    let anomalies = match report.run {
        CheckerRun::Judged { anomalies, .. } => anomalies,
        ref other => panic!("not judged: {other:?}"),
    };
    let kinds: Vec<&str> = report
        .anomalies
        .iter()
        .filter_map(|a| a.why.split(' ').next())
        .collect();
    let kinds = if kinds.is_empty() {
        "-".to_string()
    } else {
        kinds.join(",")
    };
    println!(
        "{} {} {} {anomalies} {kinds}",
        took.as_secs_f64(),
        heap as f64 / (1 << 20) as f64,
        peak_rss_mib()
    );
}

struct Run {
    secs: f64,
    heap: f64,
    rss: f64,
    anomalies: u64,
    /// The anomalies' kinds, comma-separated.
    kinds: String,
}

fn spawn(way: &str, checker: &str, path: &Path) -> Run {
    let exe = std::env::current_exe().expect("this bench");
    let out = Command::new(exe)
        .env(CHILD, format!("{way}\t{checker}\t{}", path.display()))
        .output()
        .expect("child runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{way} {checker}: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = text.lines().last().unwrap_or_default();
    let f: Vec<&str> = last.split(' ').collect();
    let num = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    Run {
        secs: num(0),
        heap: num(1),
        rss: num(2),
        anomalies: num(3) as u64,
        kinds: f.get(4).unwrap_or(&"-").to_string(),
    }
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD) {
        let parts: Vec<&str> = spec.splitn(3, '\t').collect();
        if let [way, checker, path] = parts.as_slice() {
            child(way, checker, Path::new(path));
        }
        return;
    }
    let sizes: Vec<u64> = std::env::var("FAULTLINE_BENCH_SIZES")
        .unwrap_or_else(|_| "100000,1000000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let baseline_max: u64 = std::env::var("FAULTLINE_BENCH_BASELINE_MAX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let keep = std::env::var_os("FAULTLINE_BENCH_KEEP").map(PathBuf::from);
    let dir = keep.clone().unwrap_or_else(tempfile_dir);
    std::fs::create_dir_all(&dir).expect("history dir");
    println!(
        "checker      history     txns   file MiB | faultline: time   heap MiB   RSS MiB | \
         baseline: time   heap MiB   RSS MiB | speed-up  memory (RSS) | anomalies"
    );
    for &n in &sizes {
        for register in [false, true] {
            for stale in [false, true] {
                let checker = if register {
                    "rw-register"
                } else {
                    "list-append"
                };
                let path = dir.join(format!(
                    "{checker}-{n}-{}.jsonl",
                    if stale { "stale" } else { "valid" }
                ));
                let bytes = generate(&path, n, register, stale).expect("generated");
                let fast = spawn("faultline", checker, &path);
                let expect = |r: &Run, who: &str| {
                    if stale {
                        let cycle = r.kinds.split(',').any(|k| {
                            ["G0", "G1c", "G-single", "G2-item"]
                                .iter()
                                .any(|c| k.starts_with(c))
                        });
                        assert!(
                            r.anomalies >= 1 && cycle,
                            "{who} {checker} {n}: {} anomalies: {}",
                            r.anomalies,
                            r.kinds
                        );
                    } else {
                        assert_eq!(r.anomalies, 0, "{who} {checker} {n}");
                    }
                };
                expect(&fast, "faultline");
                let old = (n <= baseline_max).then(|| spawn("baseline", checker, &path));
                if let Some(old) = &old {
                    expect(old, "baseline");
                    assert_eq!(old.kinds, fast.kinds, "{checker} {n}");
                }
                let (old_cols, ratio) = match &old {
                    Some(o) => (
                        format!("{:>9.2} s {:>10.0} {:>9.0}", o.secs, o.heap, o.rss),
                        format!(
                            "{:>8.1}× {:>8.1}×",
                            o.secs / fast.secs.max(1e-9),
                            o.rss / fast.rss.max(1e-9)
                        ),
                    ),
                    None => (format!("{:>31}", "(not run)"), format!("{:>19}", "")),
                };
                println!(
                    "{checker:<12} {:<7} {n:>9} {:>10.0} | {:>10.2} s {:>10.0} {:>9.0} | {old_cols} | {ratio} | {}",
                    if stale { "stale" } else { "valid" },
                    bytes as f64 / (1 << 20) as f64,
                    fast.secs,
                    fast.heap,
                    fast.rss,
                    fast.kinds,
                );
                if keep.is_none() {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir(&dir);
    }
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("faultline-txn-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
