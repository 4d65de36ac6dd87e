//! faultline's linearizability checker side by side with porcupine-rs, on the
//! same generated register / key-value histories in one run.
//!
//! Each history is produced by simulating clients against an atomic store, so
//! its verdict is known by construction: the "valid" ones are linearizable, and
//! the "stale" ones have one read changed to return a value overwritten before
//! the read began. About 1% of writes crash (never return); half of those take
//! effect; clients think between ops, so about clients / 5 ops are in flight at
//! once. Both checkers get 60 s per history.
//!
//! Each history is checked up to 7 times by each checker, alternately (so both
//! see the same machine load), until the two together have spent 300 ms; the
//! times shown are medians. Prints, per history: both times, their ratio, ops/s,
//! peak heap growth during the first check, the number of runs, and whether the
//! verdicts agree; then the range of ratios per model and size.
//!
//! `cargo bench --bench linearizability` (set `FAULTLINE_BENCH_MAX_OPS` to skip
//! the larger sizes, `FAULTLINE_BENCH_MODEL=register|kv|kv-edn` to run one model). Single-register histories above 10k ops are checked by
//! faultline only: porcupine-rs's cache would exhaust the machine's memory.
//!
//! Every history is also searched once by the cache alone (`Pruning::CacheOnly`,
//! no pruning, within 20 s and 5 M configurations): the "configs pr./unpr." column
//! gives the largest key's search configurations with the prunings and without.
//!
//! `FAULTLINE_BENCH_MODEL=first` times the first anomaly on Porcupine's 50-client kv
//! shape with a stale get (`FAULTLINE_BENCH_SEEDS`, default 40 seeds), after
//! Porcupine's own `c50-ok` / `c50-bad` (from the porcupine-rs crate's test data):
//! every key searched (when the first anomaly is told, when the verdict is out)
//! against `--first` and against the unpruned search, with the search
//! configurations each needed, and PASS / MISS against INVALID within 1 s.
//! `FAULTLINE_BENCH_MODEL=many` writes `FAULTLINE_BENCH_HISTORIES` (default 100)
//! Porcupine-shaped kv histories to a temporary directory and times ONE
//! `faultline check` process over it against porcupine-rs checking the same
//! histories in process (and against one faultline process per history).
//!
//! The `kv-edn` mode runs Porcupine's own kv test shapes (get / put / append on
//! ten keys by 1, 10 or 50 clients, EDN lines; see
//! `tests/suite/oracle_kv_edn/generate.rs`), valid and with one stale get, three
//! seeds each: faultline reads the EDN text and checks it; porcupine-rs checks
//! the same ops (converted from faultline's parse, so both see one history) with
//! a get / put / append model written here.

#[path = "../tests/suite/oracle_kv_edn/generate.rs"]
mod kv_edn;

use faultline::oracle::checker::RunOptions;
use faultline::oracle::history::{DEFAULT_FIELDS, History, Op};
use faultline::oracle::jepsen::parse_edn;
use faultline::oracle::linearizability::{
    Limits, Model as FlModel, Pruning, SearchFigures, check_with_figures, check_with_pruning,
};
use faultline::verdict::CheckerRun;
use porcupine_rs::{CheckResult, Model, Operation};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[path = "support/heap.rs"]
mod heap;
use heap::{Counting, LIVE, PEAK};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f`, returning its result, wall time and peak heap growth.
fn measured<T>(f: impl FnOnce() -> T) -> (T, Duration, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let start = Instant::now();
    let out = f();
    let elapsed = start.elapsed();
    (
        out,
        elapsed,
        PEAK.load(Ordering::Relaxed).saturating_sub(base),
    )
}

/// Most runs of each checker per history.
const MAX_RUNS: usize = 7;
/// No further runs once both checkers together have spent this long.
const SAMPLE_BUDGET: Duration = Duration::from_millis(300);

/// Median of `times` (not empty).
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

/// More runs of `a` and (if given) `b`, alternately, after a first run of each
/// took `a0` and `b0`; returns the median time of each and the runs of each.
fn resample(
    a0: Duration,
    mut a: impl FnMut(),
    b0: Option<Duration>,
    mut b: impl FnMut(),
) -> (Duration, Duration, usize) {
    let (mut at, mut bt) = (vec![a0], vec![b0.unwrap_or_default()]);
    let spent = |at: &[Duration], bt: &[Duration]| at.iter().chain(bt).sum::<Duration>();
    while at.len() < MAX_RUNS && spent(&at, &bt) < SAMPLE_BUDGET {
        let start = Instant::now();
        a();
        at.push(start.elapsed());
        if b0.is_some() {
            let start = Instant::now();
            b();
            bt.push(start.elapsed());
        }
    }
    let runs = at.len();
    (median(at), median(bt), runs)
}

/// xorshift64*: reproducible histories without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One generated op; `ret == NEVER` for a crashed write.
#[derive(Clone)]
struct GenOp {
    client: u32,
    key: u32,
    write: bool,
    value: u64,
    call: u64,
    ret: u64,
}

const NEVER: u64 = u64::MAX;

/// Largest single-register history given to porcupine-rs (see `main`).
const PORCUPINE_REGISTER_MAX_OPS: usize = 10_000;

/// `n` ops by `clients` concurrent clients over `keys` keys.
fn generate(n: usize, clients: u32, keys: u32, stale: bool, seed: u64) -> Vec<GenOp> {
    let mut rng = Rng(seed | 1);
    let mut clock: Vec<u64> = (0..clients).map(|_| rng.below(10)).collect();
    let mut ids: Vec<u32> = (0..clients).collect();
    let mut next_id = clients;
    // (linearization point or NEVER, op index)
    let mut points: Vec<(u64, usize)> = Vec::with_capacity(n);
    let mut ops = Vec::with_capacity(n);
    let mut next_value = 1u64;
    for i in 0..n {
        let c = rng.below(u64::from(clients)) as usize;
        // Think time between a client's ops keeps about clients / 5 ops in flight.
        let call = clock[c] + rng.below(80);
        let dur = 1 + rng.below(20);
        let write = rng.below(2) == 0;
        let crashed = write && rng.below(100) == 0;
        let point = if crashed && rng.below(2) == 0 {
            NEVER
        } else {
            call + rng.below(dur + 1)
        };
        let value = if write {
            next_value += 1;
            next_value
        } else {
            0
        };
        ops.push(GenOp {
            client: ids[c],
            key: rng.below(u64::from(keys)) as u32,
            write,
            value,
            call,
            ret: if crashed { NEVER } else { call + dur },
        });
        points.push((point, i));
        clock[c] = call + dur;
        if crashed {
            // A crashed client never returns: its successor is a new process.
            ids[c] = next_id;
            next_id += 1;
        }
    }
    // Reads return the state at their linearization point.
    points.sort_unstable();
    let mut state = vec![0u64; keys as usize];
    for &(point, i) in &points {
        if point == NEVER {
            continue;
        }
        let op = &mut ops[i];
        if op.write {
            state[op.key as usize] = op.value;
        } else {
            op.value = state[op.key as usize];
        }
    }
    if stale {
        plant_stale_read(&mut ops);
    }
    ops
}

/// Make one read in the second half return a value overwritten before it began.
fn plant_stale_read(ops: &mut [GenOp]) {
    let half = ops.len() / 2;
    for r in half..ops.len() {
        if ops[r].write {
            continue;
        }
        let (key, call) = (ops[r].key, ops[r].call);
        let done_before = |limit: u64| {
            ops.iter()
                .filter(move |w| w.write && w.key == key && w.ret != NEVER && w.ret < limit)
        };
        // The latest-starting write done before the read, then one done before it:
        // the older value was overwritten before the read began (values are unique).
        let Some(w2_call) = done_before(call).map(|w| w.call).max() else {
            continue;
        };
        let old = done_before(w2_call).next();
        if let Some(old) = old {
            let v = old.value;
            ops[r].value = v;
            return;
        }
    }
}

fn to_history(ops: &[GenOp]) -> History {
    let ops = ops
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let done = g.ret != NEVER;
            let v = |x: u64| if x == 0 { Value::Null } else { json!(x) };
            Op {
                op_id: i.to_string().into(),
                process: g.client.to_string().into(),
                invoke_ts: g.call,
                complete_ts: done.then_some(g.ret),
                op_type: if g.write { "write" } else { "read" }.into(),
                key: Some(g.key.to_string().into()),
                input: if g.write { json!(g.value) } else { Value::Null },
                output: if g.write { Value::Null } else { v(g.value) },
                error: None,
                timeout: !done,
                node: None,
                fault_epoch: None,
            }
        })
        .collect();
    History {
        ops,
        present_fields: DEFAULT_FIELDS.iter().map(|f| f.to_string()).collect(),
        unknown_fields: Default::default(),
        source: "generated".into(),
    }
}

/// porcupine-rs's model: a register per key, partitioned by key.
#[derive(Clone)]
struct KvModel;

#[derive(Clone, Debug)]
struct KvOp {
    key: u32,
    write: bool,
    value: u64,
}

impl Model for KvModel {
    type State = u64;
    type Op = KvOp;
    type Metadata = ();

    fn partition_operations(history: &[Operation<Self>]) -> Vec<Vec<Operation<Self>>> {
        let mut by_key: std::collections::BTreeMap<u32, Vec<Operation<Self>>> = Default::default();
        for op in history {
            by_key.entry(op.op.key).or_default().push(op.clone());
        }
        by_key.into_values().collect()
    }

    fn init() -> u64 {
        0
    }

    fn step(state: &u64, op: &KvOp) -> (bool, u64) {
        if op.write {
            (true, op.value)
        } else {
            (op.value == *state, *state)
        }
    }
}

fn to_porcupine(ops: &[GenOp]) -> Vec<Operation<KvModel>> {
    ops.iter()
        .map(|g| Operation {
            client_id: Some(g.client),
            call_time: g.call as i64,
            return_time: if g.ret == NEVER {
                i64::MAX
            } else {
                g.ret as i64
            },
            op: KvOp {
                key: g.key,
                write: g.write,
                value: g.value,
            },
            metadata: None,
        })
        .collect()
}

/// porcupine-rs's model of Porcupine's kv test: per key a string, initially
/// empty; get must return it, put replaces it, append concatenates.
#[derive(Clone)]
struct AppendKvModel;

#[derive(Clone, Debug)]
struct AppendKvOp {
    key: String,
    kind: kv_edn::Kind,
    value: String,
}

impl Model for AppendKvModel {
    type State = String;
    type Op = AppendKvOp;
    type Metadata = ();

    fn partition_operations(history: &[Operation<Self>]) -> Vec<Vec<Operation<Self>>> {
        let mut by_key: std::collections::BTreeMap<&str, Vec<Operation<Self>>> = Default::default();
        for op in history {
            by_key.entry(&op.op.key).or_default().push(op.clone());
        }
        by_key.into_values().collect()
    }

    fn init() -> String {
        String::new()
    }

    fn step(state: &String, op: &AppendKvOp) -> (bool, String) {
        match op.kind {
            kv_edn::Kind::Get => (op.value == *state, state.clone()),
            kv_edn::Kind::Put => (true, op.value.clone()),
            kv_edn::Kind::Append => (true, format!("{state}{}", op.value)),
        }
    }
}

/// The ops of a parsed kv EDN history, for porcupine-rs.
fn to_porcupine_append(history: &History) -> Vec<Operation<AppendKvModel>> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    history
        .ops
        .iter()
        .map(|op| {
            let kind = match op.op_type.as_str() {
                "get" => kv_edn::Kind::Get,
                "put" => kv_edn::Kind::Put,
                _ => kv_edn::Kind::Append,
            };
            let value = if kind == kv_edn::Kind::Get {
                text(&op.output)
            } else {
                text(&op.input)
            };
            Operation {
                client_id: op.process.parse().ok(),
                call_time: op.invoke_ts as i64,
                return_time: op.complete_ts.map_or(i64::MAX, |t| t as i64),
                op: AppendKvOp {
                    key: op.key.as_deref().unwrap_or_default().to_string(),
                    kind,
                    value,
                },
                metadata: None,
            }
        })
        .collect()
}

/// The `kv-edn` mode; returns whether every verdict matched the construction.
fn kv_edn_mode(budget: Duration) -> bool {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{:<6} {:>5} {:>4} {:>4} {:>5} {:>4} | {:>8} {:>8} {:>8} | {:>6} {:>6} | {:>4} | {:>19} | verdicts",
        "shape",
        "ops",
        "cli",
        "KiB",
        "kind",
        "seed",
        "parse ms",
        "fl ms",
        "porc ms",
        "ratio",
        "+parse",
        "runs",
        "configs pr./unpr."
    );
    let mut all_agree = true;
    // (shape, check ratio, parse + check ratio)
    let mut ratios: Vec<(&str, f64, f64)> = Vec::new();
    for (name, shape) in kv_edn::PORCUPINE_SHAPES {
        for stale in [false, true] {
            for seed in 1..=3u64 {
                let (ops, planted) = kv_edn::generate(shape, stale, seed);
                let expected = if planted { "illegal" } else { "ok" };
                let text = kv_edn::to_edn(&ops);
                let kib = text.len() / 1024;
                let parse = || parse_edn("generated.edn", &text);
                let parse_start = Instant::now();
                let Ok(history) = parse() else {
                    println!("{name}: the generated EDN did not parse");
                    return false;
                };
                let parse_first = parse_start.elapsed();
                let porcupine_ops = to_porcupine_append(&history);
                let limits = Limits {
                    time: budget,
                    max_configs: 30_000_000,
                };
                let fl_check = || check_with_figures(&history, FlModel::Kv, limits);
                let porc_check = || porcupine_rs::check_operations_timeout(&porcupine_ops, budget);
                let ((report, figures), fl_first, _) = measured(fl_check);
                let configs = configs_both(&history, FlModel::Kv, &figures);
                let (porc, porc_first, _) = measured(porc_check);
                let fl = verdict_of_report(&report.run);
                let pv = verdict_of_result(porc);
                let agree = fl == expected && pv == expected;
                all_agree &= agree;
                let (fl_time, porc_time, runs) = resample(
                    fl_first,
                    || {
                        std::hint::black_box(fl_check());
                    },
                    Some(porc_first),
                    || {
                        std::hint::black_box(porc_check());
                    },
                );
                let (parse_time, _, _) = resample(
                    parse_first,
                    || {
                        let _ = std::hint::black_box(parse());
                    },
                    None,
                    || {},
                );
                let porc_s = porc_time.as_secs_f64().max(1e-9);
                let ratio = fl_time.as_secs_f64() / porc_s;
                let with_parse = (fl_time + parse_time).as_secs_f64() / porc_s;
                ratios.push((name, ratio, with_parse));
                let kind = if planted { "stale" } else { "valid" };
                println!(
                    "{name:<6} {:>5} {:>4} {kib:>4} {kind:>5} {seed:>4} | {:>8.3} {:>8.3} {:>8.3} | {ratio:>6.3} {with_parse:>6.3} | {runs:>4} | {configs:>19} | {} {fl}/{pv} (expected {expected})",
                    shape.ops,
                    shape.clients,
                    ms(parse_time),
                    ms(fl_time),
                    ms(porc_time),
                    if agree { "agree" } else { "DISAGREE" },
                );
            }
        }
    }
    println!(
        "time ratio faultline / porcupine-rs, kv-edn (check only; with faultline's EDN parse):"
    );
    for (name, _) in kv_edn::PORCUPINE_SHAPES {
        let of: Vec<(f64, f64)> = ratios
            .iter()
            .filter(|r| r.0 == name)
            .map(|r| (r.1, r.2))
            .collect();
        let lo = |f: fn(&(f64, f64)) -> f64| of.iter().map(f).fold(f64::INFINITY, f64::min);
        let hi = |f: fn(&(f64, f64)) -> f64| of.iter().map(f).fold(0.0, f64::max);
        println!(
            "  {name}: {:.3}–{:.3}; {:.3}–{:.3} with parse, over {} histories",
            lo(|r| r.0),
            hi(|r| r.0),
            lo(|r| r.1),
            hi(|r| r.1),
            of.len()
        );
    }
    all_agree
}

/// Seeds of the `first` mode: `FAULTLINE_BENCH_SEEDS` (a count, from 1), else 1..=40.
fn bench_seeds() -> u64 {
    std::env::var("FAULTLINE_BENCH_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

/// Limits of the unpruned baseline runs: the cache alone can need far more
/// configurations than a check is worth waiting for (each shown as "> N" then).
const BASELINE: Limits = Limits {
    time: Duration::from_secs(20),
    max_configs: 5_000_000,
};

/// One in-process check: verdict, search figures, wall time.
fn timed_check(
    history: &History,
    model: FlModel,
    limits: Limits,
    first: bool,
    pruning: Pruning,
) -> (&'static str, SearchFigures, Duration) {
    let options = RunOptions {
        first,
        ..RunOptions::default()
    };
    let start = Instant::now();
    let (report, figures) = check_with_pruning(history, model, limits, &options, pruning);
    (verdict_of_report(&report.run), figures, start.elapsed())
}

/// The largest key's search configurations, or "> N" when the budget cut a key's
/// search (N the most any key had cached by then).
fn configs_shown(verdict: &str, figures: &SearchFigures) -> String {
    if verdict == "unknown" || figures.not_searched > 0 {
        format!("> {}", figures.peak_configs)
    } else {
        figures.peak_configs.to_string()
    }
}

/// The configurations of the pruned search (`figures`, already run) and of the
/// cache alone on `history` (run here within [`BASELINE`]), as "pruned / unpruned".
fn configs_both(history: &History, model: FlModel, figures: &SearchFigures) -> String {
    let (verdict, base, _) = timed_check(history, model, BASELINE, false, Pruning::CacheOnly);
    format!(
        "{} / {}",
        figures.peak_configs,
        configs_shown(verdict, &base)
    )
}

/// Porcupine's own kv histories as the porcupine-rs crate ships them
/// (`$CARGO_HOME/registry/src/*/porcupine-rs-*/test_data/kv/NAME.txt`), if found.
fn porcupine_kv_file(name: &str) -> Option<(String, String)> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")))?;
    for registry in std::fs::read_dir(home.join("registry/src")).ok()?.flatten() {
        for krate in std::fs::read_dir(registry.path()).ok()?.flatten() {
            if !krate
                .file_name()
                .to_string_lossy()
                .starts_with("porcupine-rs-")
            {
                continue;
            }
            let path = krate
                .path()
                .join("test_data/kv")
                .join(format!("{name}.txt"));
            if let Ok(text) = std::fs::read_to_string(&path) {
                return Some((path.display().to_string(), text));
            }
        }
    }
    None
}

/// The `first` mode: Porcupine's 50-client kv shape with one stale get, per seed,
/// checked in process — every key searched (the default: the verdict once all keys
/// are done; also when the first anomaly was told), `--first` (every search stops
/// at the first illegal key), and every key searched by the cache alone
/// ([`Pruning::CacheOnly`], the unpruned baseline, within [`BASELINE`]) — with the
/// search configurations each needed; first Porcupine's own `c50-ok` / `c50-bad`
/// the same way; then `faultline check --first` as a process on the seed the
/// default search found hardest.
fn first_mode(budget: Duration) -> bool {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let shape = kv_edn::PORCUPINE_SHAPES[2].1;
    let limits = Limits {
        time: budget,
        max_configs: 30_000_000,
    };
    println!(
        "{:>7} | {:>10} {:>10} {:>10} | {:>10} {:>10} {:>5} | {:>10} {:>11} | verdicts (all/--first/unpruned)",
        "history",
        "all ms",
        "first@ ms",
        "configs",
        "--first ms",
        "configs",
        "cut",
        "unpr. ms",
        "unpr. conf"
    );
    let mut agree = true;
    let mut hardest: Option<(Duration, String)> = None;
    let (mut worst_first, mut worst_told) = (Duration::ZERO, Duration::ZERO);
    // (name, history, expected verdict, counts in the slowest figures)
    let mut histories: Vec<(String, History, &str, bool)> = Vec::new();
    for name in ["c50-ok", "c50-bad"] {
        match porcupine_kv_file(name) {
            Some((path, text)) => match parse_edn(&path, &text) {
                Ok(h) => {
                    let expected = if name == "c50-ok" { "ok" } else { "illegal" };
                    histories.push((name.into(), h, expected, false));
                }
                Err(e) => println!("{name}: {e}"),
            },
            None => println!("{name}: not found under $CARGO_HOME/registry/src (porcupine-rs)"),
        }
    }
    let mut texts = Vec::new();
    for seed in 1..=bench_seeds() {
        let (ops, planted) = kv_edn::generate(shape, true, seed);
        if !planted {
            continue;
        }
        let text = kv_edn::to_edn(&ops);
        let Ok(history) = parse_edn("generated.edn", &text) else {
            println!("seed {seed}: the generated EDN did not parse");
            return false;
        };
        histories.push((format!("{seed}"), history, "illegal", true));
        texts.push(text);
    }
    let mut generated = texts.into_iter();
    for (name, history, expected, counted) in &histories {
        let (all_verdict, all, all_time) =
            timed_check(history, FlModel::Kv, limits, false, Pruning::Full);
        let (first_verdict, first, first_time) =
            timed_check(history, FlModel::Kv, limits, true, Pruning::Full);
        let (base_verdict, base, base_time) =
            timed_check(history, FlModel::Kv, BASELINE, false, Pruning::CacheOnly);
        let told = all.first_anomaly_after.unwrap_or(all_time);
        agree &= all_verdict == *expected
            && first_verdict == *expected
            && (base_verdict == *expected || base_verdict == "unknown");
        if *counted {
            worst_first = worst_first.max(first_time);
            worst_told = worst_told.max(told);
            let text = generated.next().unwrap_or_default();
            if hardest.as_ref().is_none_or(|(t, _)| all_time > *t) {
                hardest = Some((all_time, text));
            }
        }
        println!(
            "{name:>7} | {:>10.2} {:>10.2} {:>10} | {:>10.2} {:>10} {:>5} | {:>10.2} {:>11} | {all_verdict}/{first_verdict}/{base_verdict}",
            ms(all_time),
            ms(told),
            all.peak_configs,
            ms(first_time),
            first.peak_configs,
            first.not_searched,
            ms(base_time),
            configs_shown(base_verdict, &base),
        );
    }
    let target = Duration::from_secs(1);
    println!(
        "slowest generated seed: every key searched {:.1} ms to the first anomaly told; --first {:.1} ms to INVALID ({} against the target of 1 s)",
        ms(worst_told),
        ms(worst_first),
        if worst_first <= target && worst_told <= target {
            "PASS"
        } else {
            "MISS"
        }
    );
    if let Some((all_time, text)) = hardest
        && let Ok(dir) = tempfile::tempdir()
    {
        let path = dir.path().join("c50-hardest.edn");
        if std::fs::write(&path, text).is_ok() {
            let start = Instant::now();
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
                .args(["check", "--checker", "linearizability-kv", "--first"])
                .arg(&path)
                .output();
            let code = out.map(|o| o.status.code());
            println!(
                "faultline check --first (a process) on the hardest ({:.0} ms every key searched in process): {:.1} ms, exit {code:?}",
                ms(all_time),
                ms(start.elapsed())
            );
        }
    }
    agree
}

/// Histories of the `many` mode: `FAULTLINE_BENCH_HISTORIES`, else 100.
fn many_count() -> u64 {
    std::env::var("FAULTLINE_BENCH_HISTORIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

/// The `many` mode: ~100 Porcupine-shaped kv histories (10 clients, 330 ops; every
/// fourth with a stale get) written to a temporary directory, then checked by ONE
/// `faultline check` process over the directory (reading, parsing, checking and
/// starting the process included), by one `faultline check` process per history
/// (the way before), and by porcupine-rs in this process on the same ops
/// (converted from faultline's parse beforehand, not timed). Alternated runs, medians.
fn many_mode(budget: Duration) -> bool {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let Ok(dir) = tempfile::tempdir() else {
        println!("many: no temporary directory");
        return false;
    };
    let shape = kv_edn::PORCUPINE_SHAPES[1].1;
    let mut porcupine_histories = Vec::new();
    let mut expected = Vec::new();
    let mut paths = Vec::new();
    for seed in 1..=many_count() {
        let (ops, planted) = kv_edn::generate(shape, seed % 4 == 0, seed);
        let text = kv_edn::to_edn(&ops);
        let path = dir.path().join(format!("h{seed:03}.edn"));
        let Ok(history) = parse_edn("generated.edn", &text) else {
            println!("many: seed {seed} did not parse");
            return false;
        };
        if std::fs::write(&path, &text).is_err() {
            println!("many: cannot write {}", path.display());
            return false;
        }
        porcupine_histories.push(to_porcupine_append(&history));
        expected.push(planted);
        paths.push(path);
    }
    let binary = env!("CARGO_BIN_EXE_faultline");
    let one_process = || {
        std::process::Command::new(binary)
            .args(["check", "--checker", "linearizability-kv", "--json"])
            .arg(dir.path())
            .output()
    };
    let per_file = || {
        paths
            .iter()
            .map(|p| {
                std::process::Command::new(binary)
                    .args(["check", "--checker", "linearizability-kv", "--json"])
                    .arg(p)
                    .output()
                    .map(|o| o.status.code())
            })
            .collect::<Vec<_>>()
    };
    let porcupine = || {
        porcupine_histories
            .iter()
            .map(|ops| verdict_of_result(porcupine_rs::check_operations_timeout(ops, budget)))
            .collect::<Vec<_>>()
    };
    // Verdicts first.
    let Ok(out) = one_process() else {
        println!("many: faultline did not run");
        return false;
    };
    let valid: Vec<Option<bool>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .ok()
                .and_then(|v| v["valid"].as_bool())
        })
        .collect();
    let fl_agree = valid.len() == expected.len()
        && valid.iter().zip(&expected).all(|(v, bad)| *v == Some(!bad));
    let porc_agree = porcupine()
        .iter()
        .zip(&expected)
        .all(|(v, bad)| *v == if *bad { "illegal" } else { "ok" });
    let (mut one, mut each, mut porc) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        let start = Instant::now();
        let _ = std::hint::black_box(one_process());
        one.push(start.elapsed());
        let start = Instant::now();
        std::hint::black_box(porcupine());
        porc.push(start.elapsed());
        let start = Instant::now();
        std::hint::black_box(per_file());
        each.push(start.elapsed());
    }
    let (one, each, porc) = (median(one), median(each), median(porc));
    println!(
        "many: {} histories ({} ops, {} clients, every fourth stale): one `faultline check` process {:.1} ms; \
         a process per history {:.1} ms; porcupine-rs in process {:.1} ms; \
         ratio one process / porcupine-rs {:.3} (per history: {:.3}); verdicts {} / {}",
        paths.len(),
        shape.ops,
        shape.clients,
        ms(one),
        ms(each),
        ms(porc),
        one.as_secs_f64() / porc.as_secs_f64().max(1e-9),
        each.as_secs_f64() / porc.as_secs_f64().max(1e-9),
        if fl_agree { "agree" } else { "DISAGREE" },
        if porc_agree { "agree" } else { "DISAGREE" },
    );
    fl_agree && porc_agree
}

fn verdict_of_result(result: CheckResult) -> &'static str {
    match result {
        CheckResult::Ok => "ok",
        CheckResult::Illegal => "illegal",
        CheckResult::Unknown => "unknown",
    }
}

fn verdict_of_report(run: &CheckerRun) -> &'static str {
    match run {
        CheckerRun::Judged { anomalies: 0, .. } => "ok",
        CheckerRun::Judged { .. } => "illegal",
        _ => "unknown",
    }
}

fn main() {
    let max_ops: usize = std::env::var("FAULTLINE_BENCH_MAX_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let budget = Duration::from_secs(60);
    let only_model = std::env::var("FAULTLINE_BENCH_MODEL").ok();
    let verdicts = |agree: bool| {
        println!(
            "verdicts: {}",
            if agree {
                "every decided verdict agrees with the other checker's and with the construction"
            } else {
                "DISAGREE somewhere (see above)"
            }
        )
    };
    if only_model.as_deref() == Some("first") {
        verdicts(first_mode(budget));
        return;
    }
    if only_model.as_deref() == Some("many") {
        verdicts(many_mode(budget));
        return;
    }
    if only_model.as_deref() == Some("kv-edn") {
        verdicts(kv_edn_mode(budget));
        return;
    }
    println!(
        "{:<8} {:>7} {:>4} {:>5} {:>5} | {:>9} {:>9} {:>6} | {:>9} {:>9} | {:>7} {:>7} | {:>4} | {:>19} | verdicts",
        "model",
        "ops",
        "cli",
        "crash",
        "kind",
        "fl ms",
        "porc ms",
        "ratio",
        "fl ops/s",
        "porc op/s",
        "fl MiB",
        "porcMiB",
        "runs",
        "configs pr./unpr."
    );
    let mut all_agree = true;
    let mut fl_gave_up: Vec<String> = Vec::new();
    let mut porc_gave_up: Vec<String> = Vec::new();
    // (model, ops, ratio) of every history both checkers judged.
    let mut ratios: Vec<(&str, usize, f64)> = Vec::new();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mib = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
    for (name, keys) in [("register", 1u32), ("kv", 20)] {
        if only_model.as_deref().is_some_and(|m| m != name) {
            continue;
        }
        for n in [1_000usize, 10_000, 100_000] {
            if n > max_ops {
                continue;
            }
            let per_s = |d: Duration| n as f64 / d.as_secs_f64().max(1e-9);
            for clients in [10u32, 50] {
                for stale in [false, true] {
                    let seed = (n as u64) * 31
                        + u64::from(clients) * 7
                        + u64::from(keys)
                        + u64::from(stale);
                    let ops = generate(n, clients, keys, stale, seed);
                    let crashed = ops.iter().filter(|o| o.ret == NEVER).count();
                    let history = to_history(&ops);
                    let porcupine_ops = to_porcupine(&ops);
                    let model = if keys == 1 {
                        FlModel::Register
                    } else {
                        FlModel::Kv
                    };
                    let limits = Limits {
                        time: budget,
                        max_configs: 30_000_000,
                    };
                    let fl_check = || check_with_figures(&history, model, limits);
                    let porc_check =
                        || porcupine_rs::check_operations_timeout(&porcupine_ops, budget);
                    let ((report, figures), fl_first, fl_mem) = measured(fl_check);
                    let configs = configs_both(&history, model, &figures);
                    let fl = verdict_of_report(&report.run);
                    let expected = if stale { "illegal" } else { "ok" };
                    let kind = if stale { "stale" } else { "valid" };
                    let row = format!("{name:<8} {n:>7} {clients:>4} {crashed:>5} {kind:>5}");
                    if keys == 1 && n > PORCUPINE_REGISTER_MAX_OPS {
                        // porcupine-rs caches a bitset of every op per configuration
                        // (12.5 KB each at 100k ops): it would exhaust this machine's
                        // memory long before its time budget.
                        if fl == "unknown" {
                            fl_gave_up.push(row.clone());
                        } else {
                            all_agree &= fl == expected;
                        }
                        let (fl_time, _, runs) = resample(
                            fl_first,
                            || {
                                std::hint::black_box(fl_check());
                            },
                            None,
                            || {},
                        );
                        println!(
                            "{row} | {:>9.2} {:>9} {:>6} | {:>9.0} {:>9} | {:>7.2} {:>7} | {runs:>4} | {configs:>19} | {fl} (expected {expected}); porcupine-rs skipped (memory)",
                            ms(fl_time),
                            "-",
                            "-",
                            per_s(fl_time),
                            "-",
                            mib(fl_mem),
                            "-",
                        );
                        continue;
                    }
                    let (porc, porc_first, porc_mem) = measured(porc_check);
                    let pv = verdict_of_result(porc);
                    // Running out of budget ("unknown") is not a verdict, so it is not a
                    // disagreement either; it is counted apart.
                    let decided_wrong = |v: &str| v != "unknown" && v != expected;
                    let status = if decided_wrong(fl) || decided_wrong(pv) {
                        "DISAGREE"
                    } else if fl == "unknown" {
                        fl_gave_up.push(row.clone());
                        "faultline out of budget;"
                    } else if pv == "unknown" {
                        porc_gave_up.push(row.clone());
                        "porcupine-rs out of budget;"
                    } else {
                        "agree"
                    };
                    all_agree &= status != "DISAGREE";
                    let (fl_time, porc_time, runs) = resample(
                        fl_first,
                        || {
                            std::hint::black_box(fl_check());
                        },
                        Some(porc_first),
                        || {
                            std::hint::black_box(porc_check());
                        },
                    );
                    let ratio = fl_time.as_secs_f64() / porc_time.as_secs_f64().max(1e-9);
                    // A side that gave up at its budget has no time to compare.
                    if fl != "unknown" && pv != "unknown" {
                        ratios.push((name, n, ratio));
                    }
                    println!(
                        "{row} | {:>9.2} {:>9.2} {ratio:>6.3} | {:>9.0} {:>9.0} | {:>7.2} {:>7.2} | {runs:>4} | {configs:>19} | {status} {fl}/{pv} (expected {expected})",
                        ms(fl_time),
                        ms(porc_time),
                        per_s(fl_time),
                        per_s(porc_time),
                        mib(fl_mem),
                        mib(porc_mem),
                    );
                }
            }
        }
    }
    println!(
        "time ratio faultline / porcupine-rs (medians of alternated runs; histories both decided):"
    );
    let mut groups: Vec<(&str, usize)> = ratios.iter().map(|&(m, n, _)| (m, n)).collect();
    groups.dedup();
    for (model, n) in groups {
        let of: Vec<f64> = ratios
            .iter()
            .filter(|r| r.0 == model && r.1 == n)
            .map(|r| r.2)
            .collect();
        let lo = of.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = of.iter().copied().fold(0.0, f64::max);
        println!(
            "  {model:<8} {n:>7} ops: {lo:.3}–{hi:.3} over {} histories",
            of.len()
        );
    }
    if only_model.is_none() {
        all_agree &= kv_edn_mode(budget);
    }
    verdicts(all_agree);
    for (who, rows) in [("faultline", &fl_gave_up), ("porcupine-rs", &porc_gave_up)] {
        println!(
            "out of budget (unknown, never a verdict): {who} on {} histories",
            rows.len()
        );
        for row in rows {
            println!("  {}", row.split_whitespace().collect::<Vec<_>>().join(" "));
        }
    }
}
