//! Figures of a demo-sized session (issue 19: drawing every figure adds under 1 s):
//! the three SVGs and PNGs of each seed of a session as large as the demo's (7 scenarios,
//! 3 seeds each, every seed the recorded D3 history of 195 ops with two fault
//! windows), written to a temporary directory. The baseline, timed in the same run,
//! is what each seed already cost before figures: its series and the metrics JSON
//! and CSV written beside them. Prints both times (best of a few rounds), the ratio
//! figures / baseline, and whether the figures stay under the 1 s asked.
//!
//! `cargo bench --bench figures`.

use std::path::Path;
use std::time::{Duration, Instant};

use faultline::oracle::history::{Op, parse_jsonl};
use faultline::oracle::series::{self, FaultMark};
use faultline::report::figures;

const HISTORY: &str = "tests/fixtures/histories/demo-d3-two-faults.jsonl";
const SEEDS: usize = 7 * 3;
const ROUNDS: usize = 5;

fn marks() -> Vec<FaultMark> {
    vec![
        FaultMark {
            epoch: 1,
            fault: "pause-spare".into(),
            proven: Some(true),
        },
        FaultMark {
            epoch: 2,
            fault: "kill-primary".into(),
            proven: Some(false),
        },
    ]
}

/// What each seed wrote before figures: the series as JSON and CSV.
fn metrics(ops: &[Op], dir: &Path, seed: usize) -> std::io::Result<()> {
    let series = series::of_history(ops, &marks());
    let json = serde_json::to_vec_pretty(&series).map_err(std::io::Error::other)?;
    std::fs::write(dir.join(format!("seed-{seed}.json")), json)?;
    std::fs::write(dir.join(format!("seed-{seed}.csv")), series.to_csv())
}

/// The figures of each seed, SVG and PNG, from the same series.
fn figures(ops: &[Op], dir: &Path, seed: usize) -> std::io::Result<()> {
    let series = series::of_history(ops, &marks());
    let svgs = figures::render_all(ops, &series).map_err(std::io::Error::other)?;
    for (name, svg) in svgs {
        std::fs::write(dir.join(format!("seed-{seed}-{name}.svg")), svg)?;
    }
    let pngs = figures::render_all_png(ops, &series).map_err(std::io::Error::other)?;
    for (name, png) in pngs {
        std::fs::write(dir.join(format!("seed-{seed}-{name}.png")), png)?;
    }
    Ok(())
}

/// The best of `ROUNDS` runs of `work` over every seed.
fn best(ops: &[Op], dir: &Path, work: fn(&[Op], &Path, usize) -> std::io::Result<()>) -> Duration {
    (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for seed in 0..SEEDS {
                if let Err(e) = work(ops, dir, seed) {
                    eprintln!("seed {seed}: {e}");
                    std::process::exit(1);
                }
            }
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(HISTORY);
    let source = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            std::process::exit(1);
        }
    };
    let ops = match parse_jsonl(HISTORY, &source) {
        Ok(h) => h.ops,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("temporary directory: {e}");
            std::process::exit(1);
        }
    };
    let baseline = best(&ops, dir.path(), metrics);
    let drawn = best(&ops, dir.path(), figures);
    let ratio = drawn.as_secs_f64() / baseline.as_secs_f64().max(1e-9);
    println!(
        "figures of {SEEDS} seeds x {} ops (best of {ROUNDS}):",
        ops.len()
    );
    println!("  baseline (series + metrics JSON/CSV): {baseline:?}");
    println!("  figures (3 SVGs + 3 PNGs per seed):   {drawn:?}");
    println!("  ratio figures / baseline:             {ratio:.1}");
    let verdict = if drawn < Duration::from_secs(1) {
        "under"
    } else {
        "OVER"
    };
    println!("  {verdict} the 1 s budget for the session's figures");
}
