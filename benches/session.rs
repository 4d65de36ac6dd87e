//! The session's own robustness, as figures (issue 15):
//! 1. SIGTERM at a random moment into a 300-scenario plan: how long faultline takes
//!    to exit (target: ≤ 2 s, healed — its journal ends with the session verdict);
//! 2. a 5000-scenario plan run to the end: the mean cost of a scenario among the first
//!    100 against the last 100 (target: flat, a ratio ≤ 1.5), and peak RSS (target:
//!    under 100 MB, issue 33: nothing that grows with the journal is held); each
//!    target is said PASS or MISS.
//!
//! The scenarios have no run-spec binding, so each is decided NOT-RUN at once: what is
//! measured is the session's own per-scenario work (journal, reducer, documents).
//!
//! `cargo bench --bench session` (FAULTLINE_BENCH_SCENARIOS changes the 5000,
//! FAULTLINE_BENCH_TRIALS the number of SIGTERM trials, 5).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_faultline");

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The demo plan with its scenarios replaced by `n` copies of its first one.
fn plan(n: usize) -> String {
    let demo = faultline::launch::DEMO_PLAN;
    let start = demo.find("### Scenario D1").unwrap_or(demo.len());
    let end = demo.find("### Scenario D2").unwrap_or(demo.len());
    let tail = demo.find("## 7b.").unwrap_or(demo.len());
    let one = &demo[start..end];
    let mut out = demo[..start].to_string();
    for i in 1..=n {
        out.push_str(&one.replace(
            "### Scenario D1: acked_writes_visible_without_faults",
            &format!("### Scenario S{i}: acked_writes_visible_copy_{i}"),
        ));
    }
    out.push_str(&demo[tail..]);
    out
}

/// A small deterministic generator for the moments (no dependency for one number).
struct Moments(u64);

impl Moments {
    fn next_ms(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (self.0 >> 33) % below
    }
}

fn last_kind(journal: &Path) -> String {
    std::fs::read_to_string(journal)
        .ok()
        .and_then(|t| {
            t.lines()
                .last()
                .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        })
        .and_then(|v| v["kind"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `<root>/<plan>/<session>/journal.jsonl` (the root also holds `faultline.log`).
fn journal_of(root: &Path) -> Option<std::path::PathBuf> {
    let dirs = |dir: &Path| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default()
    };
    dirs(root)
        .iter()
        .flat_map(|plan| dirs(plan))
        .map(|session| session.join("journal.jsonl"))
        .find(|journal| journal.exists())
}

fn sigterm_trials(trials: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("plan.md"), plan(300)).expect("plan");
    let mut moments = Moments(0x5eed_u64 ^ u64::from(std::process::id()));
    let mut worst = Duration::ZERO;
    for trial in 0..trials {
        let root = dir.path().join(format!("out{trial}"));
        let mut child = Command::new(EXE)
            .args(["run", "plan.md", "--headless", "--yes", "--out"])
            .arg(&root)
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("faultline starts");
        let moment = Duration::from_millis(200 + moments.next_ms(2800));
        std::thread::sleep(moment);
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
        let sent = Instant::now();
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let status = child.wait().expect("faultline exits");
        let took = sent.elapsed();
        worst = worst.max(took);
        let journal = journal_of(&root);
        let last = journal.as_deref().map(last_kind).unwrap_or_default();
        // Healed: the reducer finds nothing left injected or mounted.
        let open = journal
            .and_then(|j| faultline::session::journal::read(&j).ok())
            .map(|c| {
                let view = faultline::session::view::View::of(&c.records);
                view.open_faults.len() + view.open_mounts.len()
            })
            .unwrap_or_default();
        println!(
            "sigterm trial {trial}: sent {:.2} s in, exited {:.3} s later ({status}), journal ends with {last}, {open} faults open",
            moment.as_secs_f64(),
            took.as_secs_f64()
        );
    }
    println!(
        "sigterm: worst {:.3} s over {trials} trials (target ≤ 2 s): {}",
        worst.as_secs_f64(),
        if worst <= Duration::from_secs(2) {
            "met"
        } else {
            "MISSED"
        }
    );
}

fn flat(n: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("plan.md"), plan(n)).expect("plan");
    let root = dir.path().join("out");
    let started = Instant::now();
    let out = Command::new(EXE)
        .args(["run", "plan.md", "--headless", "--yes", "--out"])
        .arg(&root)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("faultline runs");
    let took = started.elapsed();
    let journal = journal_of(&root).expect("a journal");
    let text = std::fs::read_to_string(&journal).expect("journal");
    // The time each scenario's verdict was journaled, in order.
    let stamps: Vec<chrono::DateTime<chrono::FixedOffset>> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "verdict")
        .filter_map(|v| chrono::DateTime::parse_from_rfc3339(v["ts"].as_str()?).ok())
        .collect();
    let gaps: Vec<f64> = stamps
        .windows(2)
        .map(|w| (w[1] - w[0]).num_microseconds().unwrap_or(0) as f64 / 1000.0)
        .collect();
    let window = 100.min(gaps.len() / 2).max(1);
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let first = mean(&gaps[..window.min(gaps.len())]);
    let last = mean(&gaps[gaps.len().saturating_sub(window)..]);
    let ratio = last / first.max(f64::EPSILON);
    let rss = peak_rss_of_children();
    println!(
        "flat: {n} scenarios in {:.1} s ({out}); per scenario: first {window} {first:.2} ms, last {window} {last:.2} ms, ratio {ratio:.2}; peak RSS {}",
        took.as_secs_f64(),
        rss.map_or_else(|e| format!("unknown ({e})"), |mb| format!("{mb} MB")),
    );
    let verdict = |met: bool| if met { "PASS" } else { "MISS" };
    println!(
        "flat: ratio {ratio:.2} (target ≤ {RATIO_TARGET}): {}; peak RSS (target < {RSS_TARGET_MB} MB): {}",
        verdict(ratio <= RATIO_TARGET),
        verdict(rss.is_ok_and(|mb| mb < RSS_TARGET_MB)),
    );
}

/// Issue 33: a scenario late in a long session costs about what one early costs...
const RATIO_TARGET: f64 = 1.5;
/// ...and the whole 5000-scenario session fits in this much resident memory.
const RSS_TARGET_MB: i64 = 100;

/// The largest resident set any child of this process reached (getrusage), in MB:
/// the 5000-scenario run's, its resident set being far larger than the SIGTERM
/// trials' 300-scenario runs'.
fn peak_rss_of_children() -> Result<i64, nix::Error> {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .map(|usage| usage.max_rss() / 1024)
}

fn main() {
    sigterm_trials(env_number("FAULTLINE_BENCH_TRIALS", 5));
    flat(env_number("FAULTLINE_BENCH_SCENARIOS", 5000));
}
