//! no-lost-ack on large histories (issue 16: 1M ops in under 5 s): the checker on
//! 10k, 100k and 1M writes, and, as the baseline in the same run, the rule asked
//! pairwise (every acknowledged write against every other write on its key, as the
//! checker did before) on the sizes where that finishes.
//!
//! Each history: writes over 1,000 keys by 50 clients, 1 % timed out, 1 % refused;
//! the final state is each key's last write, except 10 keys that hold a value
//! nobody wrote (so every acknowledged write to them, about 1 % of all, is lost:
//! the pairwise baseline counts the same). Prints time, ns per op, the anomalies
//! found, and the ratio of ns per op at each size to the 10k run (near 1: linear).
//!
//! `cargo bench --bench no_lost_ack`.

use faultline::oracle::history::{DEFAULT_FIELDS, History, Op};
use faultline::oracle::no_lost_ack;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const KEYS: u64 = 1_000;

fn history(n: u64) -> (History, BTreeMap<String, Value>) {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut last: BTreeMap<String, Value> = BTreeMap::new();
    let ops: Vec<Op> = (0..n)
        .map(|i| {
            let key = (next() % KEYS).to_string();
            let roll = next() % 100;
            let (timeout, error) = (roll == 0, (roll == 1).then(|| "refused".to_string()));
            let invoke = i * 10;
            if error.is_none() {
                last.insert(key.clone(), json!(i));
            }
            Op {
                op_id: i.to_string().into(),
                process: (i % 50).to_string().into(),
                invoke_ts: invoke,
                complete_ts: (!timeout).then_some(invoke + 5),
                op_type: "write".into(),
                key: Some(key.into()),
                input: json!(i),
                output: Value::Null,
                error,
                timeout,
                node: None,
                fault_epoch: None,
            }
        })
        .collect();
    for k in 0..10u64 {
        last.insert(k.to_string(), json!("never written"));
    }
    let history = History {
        ops,
        present_fields: DEFAULT_FIELDS.iter().map(|f| f.to_string()).collect(),
        unknown_fields: Default::default(),
        source: "generated".into(),
    };
    (history, last)
}

/// The rule asked pairwise: the count of lost acknowledged writes.
fn pairwise(h: &History, last: &BTreeMap<String, Value>) -> usize {
    let writes: Vec<&Op> = h.ops.iter().collect();
    writes
        .iter()
        .filter(|w| w.is_acked())
        .filter(|w| {
            let key = w.key.as_deref().unwrap_or_default();
            match last.get(key) {
                None => true,
                Some(v) if *v == w.input => false,
                Some(v) => !writes.iter().any(|o| {
                    o.op_id != w.op_id
                        && o.key == w.key
                        && o.invoke_ts >= w.invoke_ts
                        && (o.is_acked() || o.timeout)
                        && o.input == *v
                }),
            }
        })
        .count()
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

fn main() {
    let mut per_op_10k = None;
    for n in [10_000u64, 100_000, 1_000_000] {
        let (h, last) = history(n);
        let (report, took) = timed(|| no_lost_ack::check(&h, &last));
        let ns = took.as_nanos() as f64 / n as f64;
        let base = *per_op_10k.get_or_insert(ns);
        let lost = report.anomalies.len();
        print!(
            "no-lost-ack {n:>9} ops: {:>8.1} ms, {ns:>6.0} ns/op ({:.2}× the 10k run's), {lost} lost found",
            took.as_secs_f64() * 1e3,
            ns / base
        );
        if n <= 10_000 {
            let (count, slow) = timed(|| pairwise(&h, &last));
            print!(
                "; pairwise baseline {:.1} ms ({:.0}× slower), {count} lost",
                slow.as_secs_f64() * 1e3,
                slow.as_secs_f64() / took.as_secs_f64().max(1e-9)
            );
        }
        println!(
            "{}",
            if n == 1_000_000 {
                format!(
                    " — target < 5 s: {}",
                    if took < Duration::from_secs(5) {
                        "met"
                    } else {
                        "MISSED"
                    }
                )
            } else {
                String::new()
            }
        );
    }
}
