//! Porcupine's 102 Jepsen etcd histories (issue 33, item 1): every one checked by ONE
//! `faultline check --format jepsen-log` process (start, reading, parsing and
//! checking included), against porcupine-rs in this process over the same files
//! (reading, parsing and checking timed too), and, when `FAULTLINE_BENCH_PORCUPINE_GO`
//! names a built checkout of Porcupine's Go repository, against its own etcd test
//! suite. Five alternated rounds, medians.
//!
//! The logs and the expected verdicts come from the porcupine-rs crate Cargo already
//! fetched for the dev-dependencies (`test_data/jepsen/etcd_NNN.log`, and the
//! `etcd_test!(N, linearizable)` lines of `tests/etcd_jepsen.rs`, which repeat
//! Porcupine's Go suite); nothing of theirs is in this repository. An empty log
//! (etcd_095 in porcupine-rs 0.3.0) is left out on every side and said.
//!
//! `cargo bench --bench etcd` (`PORCUPINE_RS_DIR` overrides where the crate is;
//! `FAULTLINE_BENCH_PORCUPINE_GO=DIR`: `DIR/porcupine.test` built by
//! `go test -c -o porcupine.test` there, run as `-test.run Etcd`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use porcupine_rs::{CheckResult, Model, Operation};

/// Target of issue 33: one faultline process at no more than 0.2x Porcupine's Go suite.
const TARGET_VS_GO: f64 = 0.2;
const ROUNDS: usize = 5;
/// The return time of an op whose outcome is unknown: after everything else.
const NEVER: i64 = i64::MAX;

/// A single register with compare-and-set, as Porcupine's etcd model reads the logs:
/// a `nil` read means never written; a timed-out read or cas constrains nothing; a
/// failed cas (`:fail`) saw another value.
#[derive(Clone, Debug)]
enum EtcdOp {
    Read(Option<i64>),
    Write(i64),
    Cas {
        from: i64,
        to: i64,
        /// `None`: the outcome is unknown.
        swapped: Option<bool>,
    },
    Unknown,
}

#[derive(Clone, Debug)]
struct Register;

impl Model for Register {
    type State = Option<i64>;
    type Op = EtcdOp;
    type Metadata = ();

    fn init() -> Option<i64> {
        None
    }

    fn step(state: &Option<i64>, op: &EtcdOp) -> (bool, Option<i64>) {
        match op {
            EtcdOp::Read(seen) => (seen == state, *state),
            EtcdOp::Write(v) => (true, Some(*v)),
            EtcdOp::Cas { from, to, swapped } => {
                let applies = *state == Some(*from);
                let next = if applies { Some(*to) } else { *state };
                (swapped.is_none_or(|s| s == applies), next)
            }
            EtcdOp::Unknown => (true, *state),
        }
    }
}

/// The porcupine-rs crate's directory (its test data and tests).
fn porcupine_rs_dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("PORCUPINE_RS_DIR") {
        return Some(PathBuf::from(dir));
    }
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let registry = std::fs::read_dir(home.join("registry/src")).ok()?;
    registry
        .flatten()
        .map(|index| index.path().join("porcupine-rs-0.3.0"))
        .find(|dir| dir.join("test_data/jepsen").is_dir())
}

/// `etcd_test!(N, true|false)` lines: log number → linearizable.
fn expectations(tests: &str) -> HashMap<u32, bool> {
    tests
        .split("etcd_test!(")
        .skip(1)
        .filter_map(|rest| {
            let (n, rest) = rest.split_once(',')?;
            let verdict = rest.trim_start();
            let linearizable = if verdict.starts_with("true") {
                true
            } else if verdict.starts_with("false") {
                false
            } else {
                return None;
            };
            Some((n.trim().parse().ok()?, linearizable))
        })
        .collect()
}

fn number_of(path: &Path) -> Option<u32> {
    let name = path.file_stem()?.to_str()?;
    name.strip_prefix("etcd_")?.parse().ok()
}

/// One log read for porcupine-rs: `None` when a line is not understood.
fn porcupine_ops(text: &str) -> Option<Vec<Operation<Register>>> {
    let mut open: HashMap<i64, (i64, &str, &str)> = HashMap::new();
    let mut ops = Vec::new();
    let int = |s: &str| s.trim().parse::<i64>().ok();
    let pair = |s: &str| {
        let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
        let (a, b) = inner.split_once(' ')?;
        Some((int(a)?, int(b)?))
    };
    for (at, line) in text.lines().enumerate() {
        let at = at as i64;
        let Some((_, fields)) = line.split_once("jepsen.util - ") else {
            continue;
        };
        // Tabs in most logs, spaces in some: the value is the rest of the line.
        let mut rest = fields.trim();
        let mut field = || {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let (this, after) = rest.split_at(end);
            rest = after.trim_start();
            this
        };
        let (process, kind, f) = (field(), field(), field());
        let value = rest;
        let Some(process) = int(process) else {
            continue;
        };
        if kind == ":invoke" {
            open.insert(process, (at, f, value));
            continue;
        }
        let (call, f, input) = open.remove(&process)?;
        let returned = if kind == ":info" { NEVER } else { at };
        let op = match (f, kind) {
            (":read", ":ok") if value == "nil" => EtcdOp::Read(None),
            (":read", ":ok") => EtcdOp::Read(Some(int(value)?)),
            (":read", _) => EtcdOp::Unknown,
            (":write", ":fail") => continue,
            (":write", _) => EtcdOp::Write(int(input)?),
            (":cas", _) => {
                let (from, to) = pair(input)?;
                let swapped = match kind {
                    ":ok" => Some(true),
                    ":fail" => Some(false),
                    _ => None,
                };
                EtcdOp::Cas { from, to, swapped }
            }
            _ => return None,
        };
        ops.push(Operation {
            client_id: u32::try_from(process).ok(),
            call_time: call,
            return_time: returned,
            op,
            metadata: None,
        });
    }
    // Invokes never answered took effect at any time after their call, or never.
    for (process, (call, f, input)) in open {
        let op = match f {
            ":write" => EtcdOp::Write(int(input)?),
            ":cas" => {
                let (from, to) = pair(input)?;
                EtcdOp::Cas {
                    from,
                    to,
                    swapped: None,
                }
            }
            _ => EtcdOp::Unknown,
        };
        ops.push(Operation {
            client_id: u32::try_from(process).ok(),
            call_time: call,
            return_time: NEVER,
            op,
            metadata: None,
        });
    }
    Some(ops)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let Some(crate_dir) = porcupine_rs_dir() else {
        println!(
            "etcd: SKIP: porcupine-rs 0.3.0 not found in Cargo's registry (set PORCUPINE_RS_DIR)"
        );
        return;
    };
    let expected = expectations(
        &std::fs::read_to_string(crate_dir.join("tests/etcd_jepsen.rs")).unwrap_or_default(),
    );
    let Ok(dir) = tempfile::tempdir() else {
        println!("etcd: no temporary directory");
        std::process::exit(1);
    };
    let mut logs: Vec<(u32, PathBuf, String)> = Vec::new();
    let mut empty = Vec::new();
    let Ok(entries) = std::fs::read_dir(crate_dir.join("test_data/jepsen")) else {
        println!(
            "etcd: cannot list {}",
            crate_dir.join("test_data/jepsen").display()
        );
        std::process::exit(1);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let (Some(n), Ok(text)) = (number_of(&path), std::fs::read_to_string(&path)) else {
            continue;
        };
        if text.trim().is_empty() {
            empty.push(n);
            continue;
        }
        let copy = dir.path().join(entry.file_name());
        if std::fs::write(&copy, &text).is_err() {
            println!("etcd: cannot write {}", copy.display());
            std::process::exit(1);
        }
        logs.push((n, copy, text));
    }
    logs.sort_by_key(|(n, ..)| *n);
    let budget = Duration::from_secs(60);
    let binary = env!("CARGO_BIN_EXE_faultline");
    let faultline = |jobs: Option<&str>| {
        let mut command = Command::new(binary);
        command.args([
            "check",
            "--checker",
            "linearizability-register",
            "--format",
            "jepsen-log",
            "--json",
        ]);
        if let Some(jobs) = jobs {
            command.args(["--jobs", jobs]);
        }
        command.arg(dir.path()).output()
    };
    let porcupine = || {
        logs.iter()
            .map(|(n, path, _)| {
                let text = std::fs::read_to_string(path).unwrap_or_default();
                let verdict = porcupine_ops(&text).map(|ops| {
                    porcupine_rs::check_operations_timeout(&ops, budget) == CheckResult::Ok
                });
                (*n, verdict)
            })
            .collect::<Vec<_>>()
    };
    let go_dir = std::env::var_os("FAULTLINE_BENCH_PORCUPINE_GO").map(PathBuf::from);
    let go = |dir: &Path| {
        Command::new(dir.join("porcupine.test"))
            .args(["-test.run", "Etcd", "-test.count=1"])
            .current_dir(dir)
            .output()
    };

    // Verdicts first: faultline's, porcupine-rs's and the suite's expectation.
    let Ok(out) = faultline(None) else {
        println!("etcd: faultline did not run");
        std::process::exit(1);
    };
    let mut faultline_valid: HashMap<u32, Option<bool>> = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(row) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let Some(n) = row["file"].as_str().and_then(|f| number_of(Path::new(f))) {
            faultline_valid.insert(n, row["valid"].as_bool());
        }
    }
    let mut disagreements = Vec::new();
    for (n, porc) in porcupine() {
        let fl = faultline_valid.get(&n).copied().flatten();
        let want = expected.get(&n).copied();
        if fl.is_none() || fl != porc || (want.is_some() && fl != want) {
            disagreements.push(format!(
                "etcd_{n:03}: faultline {fl:?}, porcupine-rs {porc:?}, expected {want:?}"
            ));
        }
    }

    let (mut one, mut single, mut porc, mut go_times) = (vec![], vec![], vec![], vec![]);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let _ = std::hint::black_box(faultline(None));
        one.push(start.elapsed());
        let start = Instant::now();
        let _ = std::hint::black_box(faultline(Some("1")));
        single.push(start.elapsed());
        let start = Instant::now();
        std::hint::black_box(porcupine());
        porc.push(start.elapsed());
        if let Some(dir) = &go_dir {
            let start = Instant::now();
            match go(dir) {
                Ok(o) if o.status.success() || !o.stdout.is_empty() => {
                    go_times.push(start.elapsed())
                }
                _ => {}
            }
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (one, single, porc) = (median(one), median(single), median(porc));
    let linearizable = faultline_valid
        .values()
        .filter(|v| **v == Some(true))
        .count();
    println!(
        "etcd: {} Jepsen etcd histories ({} linearizable){}",
        logs.len(),
        linearizable,
        if empty.is_empty() {
            String::new()
        } else {
            format!("; left out, empty: {empty:?}")
        }
    );
    println!(
        "  one `faultline check` process, all cores: {:8.1} ms",
        ms(one)
    );
    println!(
        "  one `faultline check` process, --jobs 1:  {:8.1} ms",
        ms(single)
    );
    println!(
        "  porcupine-rs in process, one after another: {:6.1} ms   ratio faultline/porcupine-rs {:.3} (--jobs 1: {:.3})",
        ms(porc),
        one.as_secs_f64() / porc.as_secs_f64().max(1e-9),
        single.as_secs_f64() / porc.as_secs_f64().max(1e-9),
    );
    // Jobs on several cores must pay: a lock every job queues on (once, one malloc
    // arena for the whole process) made all cores take twice --jobs 1's time.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parallel = one.as_secs_f64() / single.as_secs_f64().max(1e-9);
    let mut missed = cores > 1 && parallel >= 1.0;
    println!(
        "  all cores / --jobs 1: {parallel:.3} on {cores} cores (target < 1 with more than one: {})",
        match (cores > 1, missed) {
            (false, _) => "not judged",
            (true, true) => "MISS",
            (true, false) => "PASS",
        }
    );
    match (&go_dir, go_times.is_empty()) {
        (None, _) => println!(
            "  Porcupine's Go suite: not run (FAULTLINE_BENCH_PORCUPINE_GO=DIR with DIR/porcupine.test)"
        ),
        (Some(dir), true) => {
            println!(
                "  Porcupine's Go suite: {}/porcupine.test did not run",
                dir.display()
            );
            missed = true;
        }
        (Some(_), false) => {
            let go = median(go_times);
            let ratio = one.as_secs_f64() / go.as_secs_f64().max(1e-9);
            missed |= ratio > TARGET_VS_GO;
            println!(
                "  Porcupine's Go suite (-test.run Etcd): {:8.1} ms   ratio faultline/Go {ratio:.3} (target <= {TARGET_VS_GO}: {})",
                ms(go),
                if missed { "MISS" } else { "PASS" }
            );
        }
    }
    if disagreements.is_empty() {
        println!(
            "  verdicts: faultline, porcupine-rs and the suite's expectations agree on every log"
        );
    } else {
        for d in &disagreements {
            println!("  DISAGREE {d}");
        }
    }
    if !disagreements.is_empty() || missed {
        std::process::exit(1);
    }
}
