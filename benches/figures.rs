//! What drawing every figure adds to a demo run (issue 19: under 1 s). Runs the real
//! demo once (`faultline demo --headless --yes`, timed: the run with its figures),
//! then draws every figure of that session again from the session's own files — each
//! seed's history, its series (metrics/<id>/<label>.json) and the figures of what its
//! checker finds (no-lost-ack against the seed's final-state dump where it has one,
//! else linearizability of a register: D8's timeline) — timed over a few rounds (the
//! checks run once, before the clock starts: only drawing is timed). Prints the run, the figures' time (best round), the ratio of the figures
//! to the run without them, and whether they stay under 1 s.
//!
//! `cargo bench --bench figures`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use faultline::oracle::checker::CheckerReport;
use faultline::oracle::history::{Op, parse_jsonl};
use faultline::oracle::linearizability::{self, Limits, Model};
use faultline::oracle::no_lost_ack;
use faultline::oracle::series::Series;
use faultline::report::figures;

const ROUNDS: usize = 3;

/// One seed of the session: its history, series and its checker's report.
struct Seed {
    ops: Vec<Op>,
    series: Series,
    report: CheckerReport,
}

fn fail(what: impl std::fmt::Display) -> ! {
    eprintln!("{what}");
    std::process::exit(1);
}

/// Every seed with metrics in `session`, read from its files.
fn seeds(session: &Path) -> Vec<Seed> {
    let mut out = Vec::new();
    let metrics = session.join("metrics");
    let ids =
        std::fs::read_dir(&metrics).unwrap_or_else(|e| fail(format!("{}: {e}", metrics.display())));
    for id in ids.flatten() {
        let Ok(labels) = std::fs::read_dir(id.path()) else {
            continue;
        };
        for entry in labels.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let (Some(label), Some(stem)) =
                (path.file_stem(), id.path().file_name().map(PathBuf::from))
            else {
                continue;
            };
            let artifacts = session.join("artifacts").join(stem).join(label);
            let read = |p: &Path| {
                std::fs::read_to_string(p).unwrap_or_else(|e| fail(format!("{}: {e}", p.display())))
            };
            let series: Series = serde_json::from_str(&read(&path))
                .unwrap_or_else(|e| fail(format!("{}: {e}", path.display())));
            let history = artifacts.join("history.jsonl");
            let history = parse_jsonl(&history.to_string_lossy(), &read(&history))
                .unwrap_or_else(|e| fail(e));
            // The seed's checker: no-lost-ack where it dumped a final state, else
            // linearizability of a register (D8).
            let dump = artifacts.join("final.json");
            let report = if dump.exists() {
                let state =
                    no_lost_ack::parse_final_state(&read(&dump)).unwrap_or_else(|e| fail(e));
                no_lost_ack::check(&history, &state)
            } else {
                linearizability::check(&history, Model::Register, Limits::default())
            };
            out.push(Seed {
                ops: history.ops,
                series,
                report,
            });
        }
    }
    out
}

/// Draws every figure of every seed as the run does: three SVGs and three PNGs, and
/// the figures of its checker's anomalies.
/// Returns how many files were drawn.
fn draw(seeds: &[Seed], dir: &Path) -> usize {
    let mut files = 0;
    for (n, seed) in seeds.iter().enumerate() {
        let mut write = |name: &str, bytes: &[u8]| {
            std::fs::write(dir.join(format!("{n}-{name}")), bytes).unwrap_or_else(|e| fail(e));
            files += 1;
        };
        for (name, svg) in figures::render_all(&seed.ops, &seed.series).unwrap_or_else(|e| fail(e))
        {
            write(&format!("{name}.svg"), svg.as_bytes());
        }
        for (name, png) in
            figures::render_all_png(&seed.ops, &seed.series).unwrap_or_else(|e| fail(e))
        {
            write(&format!("{name}.png"), &png);
        }
        for (name, bytes) in figures::of_anomalies(&seed.ops, &seed.report, &seed.series.windows)
            .unwrap_or_else(|e| fail(e))
        {
            write(&name, &bytes);
        }
    }
    files
}

fn main() {
    let work = tempfile::tempdir().unwrap_or_else(|e| fail(format!("temporary directory: {e}")));
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["demo", "--headless", "--yes", "--out"])
        .arg(work.path().join("sessions"))
        .current_dir(work.path())
        .output()
        .unwrap_or_else(|e| fail(format!("faultline demo: {e}")));
    let run = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let session = stdout
        .lines()
        .find_map(|l| l.strip_prefix("session: "))
        .map(PathBuf::from)
        .unwrap_or_else(|| fail(format!("no session in the demo's output:\n{stdout}")));
    let seeds = seeds(&session);
    let dir = work.path().join("figures");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| fail(e));
    let mut files = 0;
    let drawn = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            files = draw(&seeds, &dir);
            start.elapsed()
        })
        .min()
        .unwrap_or_default();
    let without = run.saturating_sub(drawn);
    let ratio = drawn.as_secs_f64() / without.as_secs_f64().max(1e-9);
    let ops: usize = seeds.iter().map(|s| s.ops.len()).sum();
    println!(
        "every figure of one demo session ({} seeds, {ops} ops, {files} files):",
        seeds.len()
    );
    println!(
        "  demo run, figures included:       {:.1} s",
        run.as_secs_f64()
    );
    println!(
        "  drawing every figure (best of {ROUNDS}): {} ms",
        drawn.as_millis()
    );
    println!(
        "  ratio figures / run without them: {:.4} ({:.2} %)",
        ratio,
        ratio * 100.0
    );
    let verdict = if drawn < Duration::from_secs(1) {
        "under"
    } else {
        "OVER"
    };
    println!("  {verdict} the 1 s asked for the session's figures");
}
