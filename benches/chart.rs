//! The live chart over a long run: time per refresh in the first and the last
//! minute of one simulated hour at 500 ops/s, for the incremental series the chart
//! keeps ([`Tally`]: new ops folded in at each refresh) against the full recompute
//! it did before (`of_history` over every op read so far), in one run.
//!
//! `cargo bench --bench chart`. 1.8 M ops are appended in chunks of a quarter
//! second of simulated time (125 ops), one refresh after each (14,400 refreshes, the
//! UI's 4 a second). The incremental series runs every refresh; the full recompute
//! runs every refresh of the first minute and the last 8 refreshes of the hour (its
//! cost grows with the ops, so the hour in full would take hours). Each refresh is
//! timed on its own (monotonic clock, one thread, the series' work only); the
//! figures are the median of a minute's refreshes (a refresh preempted by another
//! process does not move it) and the mean. "Flat" is a last-minute / first-minute
//! ratio of the medians of at most 1.5. The ops are built as the history reader
//! gives them, so the figures are the series' cost alone (reading and parsing each
//! refresh's new lines costs the same at any point of the run).

use faultline::oracle::history::Op;
use faultline::oracle::series::{FaultMark, Series, Tally, of_history};
use serde_json::Value;
use std::time::{Duration, Instant};

const OPS_PER_S: u64 = 500;
const HOUR_S: u64 = 3_600;
const REFRESH_MS: u64 = 250;
const OPS_PER_REFRESH: u64 = OPS_PER_S * REFRESH_MS / 1_000;
const REFRESHES: u64 = HOUR_S * 1_000 / REFRESH_MS;
const PER_MINUTE: u64 = 60 * 1_000 / REFRESH_MS;
/// Full recomputes timed at the end of the hour.
const OLD_LAST: u64 = 8;
const FLAT: f64 = 1.5;

/// Median and mean of `times`, in microseconds.
fn median_mean(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort_unstable();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = times.iter().map(|d| us(*d)).sum::<f64>() / times.len().max(1) as f64;
    (times.get(times.len() / 2).map_or(0.0, |d| us(*d)), mean)
}

/// xorshift64*: a reproducible run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

/// The ops of refresh `r` (invoked in its quarter second): latencies of 1–20 ms with
/// a tail, 1% failed, 0.5% timed out; a one-minute fault every ten minutes.
fn chunk(r: u64, rng: &mut Rng) -> Vec<Op> {
    (0..OPS_PER_REFRESH)
        .map(|k| {
            let invoke = (r * REFRESH_MS * 1_000_000) + k * (1_000_000_000 / OPS_PER_S);
            let took_ms = 1 + rng.below(20) + if rng.below(100) == 0 { 300 } else { 0 };
            let fate = rng.below(200);
            let minute = invoke / 60_000_000_000;
            let epoch = (minute % 10 == 5).then_some(minute / 10 + 1);
            Op {
                op_id: (r * OPS_PER_REFRESH + k).to_string().into(),
                process: (k % 16).to_string().into(),
                invoke_ts: invoke,
                complete_ts: (fate != 0).then_some(invoke + took_ms * 1_000_000),
                op_type: "write".into(),
                key: Some("k".into()),
                input: Value::from(k),
                output: Value::Null,
                error: (fate < 2).then(|| "refused".to_string()),
                timeout: fate == 0,
                node: None,
                fault_epoch: epoch.or(Some(0)),
            }
        })
        .collect()
}

fn main() {
    let marks: Vec<FaultMark> = (1..=6)
        .map(|epoch| FaultMark {
            epoch,
            fault: format!("pause-{epoch}"),
            proven: Some(epoch % 2 == 0),
        })
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut tally = Tally::default();
    let mut all: Vec<Op> = Vec::new();
    // Each refresh's time: incremental in the first and the last minute, full
    // recompute in the first minute and at the end.
    let (mut new_first, mut old_first, mut new_last, mut old_last) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut same = true;
    let mut last: Option<Series> = None;
    for r in 0..REFRESHES {
        let ops = chunk(r, &mut rng);
        let first_minute = r < PER_MINUTE;
        let last_minute = r >= REFRESHES - PER_MINUTE;
        let start = Instant::now();
        tally.add(&ops);
        let series = std::hint::black_box(tally.series(&marks));
        let spent = start.elapsed();
        if first_minute {
            new_first.push(spent);
        } else if last_minute {
            new_last.push(spent);
        }
        all.extend(ops);
        if first_minute || r >= REFRESHES - OLD_LAST {
            let start = Instant::now();
            let whole = std::hint::black_box(of_history(&all, &marks));
            let spent = start.elapsed();
            if first_minute {
                old_first.push(spent);
            } else {
                old_last.push(spent);
            }
            same &= whole == series;
        }
        last = Some(series);
    }
    let (nf, nf_mean) = median_mean(new_first);
    let (nl, nl_mean) = median_mean(new_last);
    let (of, of_mean) = median_mean(old_first);
    let (ol, ol_mean) = median_mean(old_last);
    let verdict = |ratio: f64| if ratio <= FLAT { "PASS" } else { "MISS" };
    let buckets = last.as_ref().map_or(0, |s| s.buckets.len());
    println!(
        "one hour at {OPS_PER_S} ops/s: {} ops, {REFRESHES} refreshes of {OPS_PER_REFRESH} new ops; {buckets} buckets at the end",
        all.len()
    );
    println!(
        "{:<28} {:>22} {:>22} {:>14}",
        "µs per refresh",
        "first minute (median, mean)",
        "last minute (median, mean)",
        "ratio of medians"
    );
    println!(
        "{:<28} {nf:>12.1} {nf_mean:>9.1} {nl:>12.1} {nl_mean:>9.1} {:>14.2}  {} (flat: ratio ≤ {FLAT})",
        "incremental series (Tally)",
        nl / nf,
        verdict(nl / nf)
    );
    println!(
        "{:<28} {of:>12.1} {of_mean:>9.1} {ol:>12.1} {ol_mean:>9.1} {:>14.2}  {}",
        "full recompute (before)",
        ol / of,
        verdict(ol / of)
    );
    println!(
        "last minute, full recompute / incremental (medians): {:.0}×; series identical where both ran: {}",
        ol / nl,
        if same { "yes" } else { "NO" }
    );
}
