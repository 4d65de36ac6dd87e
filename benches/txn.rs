//! list-append on large histories (issue 20: 100k txns in under 5 s on one core):
//! 10k, 100k and 1M-txn histories, judged at strict-serializable (every edge kind,
//! real-time order included). Prints the time and the peak resident memory
//! (VmHWM: the process's peak so far, so the sizes run smallest first).
//!
//! Each history is a serial execution spread over 20 processes: txn i takes effect
//! at 10·i and its invoke / completion lie up to 95 before / after (about 19 txns
//! in flight at once, each process's txns never overlap). A txn has 4 micro-ops,
//! appends or reads with even odds, on one of 4 keys of a window that moves on
//! every 16 txns (keys retire after about 32 appends, as Elle's generator rotates
//! them). Valid by construction: the checker must find nothing.
//!
//! `cargo bench --bench txn`.

use faultline::oracle::history::{History, Op, converted_fields};
use faultline::oracle::params::Params;
use faultline::oracle::txn::list_append;
use faultline::verdict::CheckerRun;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Instant;

fn history(n: u64) -> History {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut lists: HashMap<u64, Vec<u64>> = HashMap::new();
    let mut value = 0u64;
    let mut ops = Vec::with_capacity(n as usize);
    for i in 0..n {
        let mut mops = Vec::with_capacity(4);
        for _ in 0..4 {
            let key = i / 16 + next() % 4;
            if next() % 2 == 0 {
                value += 1;
                lists.entry(key).or_default().push(value);
                mops.push(json!(["append", key, value]));
            } else {
                let list = lists.get(&key).cloned().unwrap_or_default();
                mops.push(json!(["r", key, list]));
            }
        }
        // Keys below the window are retired.
        lists.retain(|&k, _| k + 4 > i / 16);
        let at = 100 + i * 10;
        ops.push(Op {
            op_id: i.to_string(),
            process: (i % 20).to_string(),
            invoke_ts: at - next() % 96,
            complete_ts: Some(at + 1 + next() % 95),
            op_type: "txn".into(),
            key: None,
            input: Value::Null,
            output: Value::Array(mops),
            error: None,
            timeout: false,
            node: None,
            fault_epoch: None,
        });
    }
    History {
        ops,
        present_fields: converted_fields(false, false),
        unknown_fields: Default::default(),
        source: format!("generated-{n}"),
    }
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

fn main() {
    let params =
        Params::parse(&["consistency=strict-serializable", "time_limit_s=600"]).expect("params");
    for n in [10_000u64, 100_000, 1_000_000] {
        let history = history(n);
        let started = Instant::now();
        let report = list_append::check(&history, &params).expect("judged");
        let took = started.elapsed();
        let anomalies = match report.run {
            CheckerRun::Judged { anomalies, .. } => anomalies,
            ref other => panic!("not judged: {other:?}"),
        };
        assert_eq!(anomalies, 0, "{:#?}", report.anomalies.first());
        println!(
            "list-append {n:>9} txns: {:>8.3} s ({:>6.2} µs/txn), peak RSS {:>7.1} MiB, {anomalies} anomalies",
            took.as_secs_f64(),
            took.as_secs_f64() * 1e6 / n as f64,
            peak_rss_mib()
        );
        drop(history);
    }
}
