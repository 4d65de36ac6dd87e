//! Capture throughput: 8 children each writing as fast as they can, started through
//! faultline's process-group runner (output streamed to files under `logs/`), against
//! the same commands redirected to files by the shell — in one run, reported as a ratio.
//!
//! `cargo bench --bench capture` (set FAULTLINE_BENCH_MB to change the per-child size).

use std::path::Path;
use std::time::{Duration, Instant};

use faultline::exec::{self, CommandSpec};

const ARMS: usize = 8;

fn mb() -> u64 {
    std::env::var("FAULTLINE_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

fn writer(mb: u64) -> String {
    format!("head -c {}M /dev/zero | tr '\\0' 'x' | fold -w 100", mb)
}

async fn through_faultline(dir: &Path, mb: u64) -> Duration {
    let start = Instant::now();
    let mut running = Vec::new();
    for arm in 0..ARMS {
        let spec = CommandSpec {
            name: format!("arm-{arm}"),
            command: writer(mb),
            cwd: dir.to_path_buf(),
            env: Vec::new(),
        };
        match exec::spawn(&spec, dir) {
            Ok(r) => running.push(r),
            Err(e) => eprintln!("spawn failed: {e}"),
        }
    }
    for mut r in running {
        let _ = r.wait(Duration::from_secs(600)).await;
    }
    start.elapsed()
}

fn through_shell(dir: &Path, mb: u64) -> Duration {
    let start = Instant::now();
    let children: Vec<_> = (0..ARMS)
        .filter_map(|arm| {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("{} > shell-{arm}.log", writer(mb)))
                .current_dir(dir)
                .spawn()
                .ok()
        })
        .collect();
    for mut c in children {
        let _ = c.wait();
    }
    start.elapsed()
}

fn bytes_in(dir: &Path, prefix: &str) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn main() {
    let mb = mb();
    let Ok(dir) = tempfile::tempdir() else {
        eprintln!("no temp dir");
        return;
    };
    let Ok(runtime) = tokio::runtime::Runtime::new() else {
        eprintln!("no runtime");
        return;
    };
    // Alternate the two, three rounds each, so neither always runs on a warm cache.
    let (mut ours, mut shell) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..3 {
        shell += through_shell(dir.path(), mb);
        ours += runtime.block_on(through_faultline(dir.path(), mb));
    }
    let ours_bytes = bytes_in(dir.path(), "arm-");
    let shell_bytes = bytes_in(dir.path(), "shell-");
    let total = (ARMS as u64 * mb * 1024 * 1024) as f64 * 3.0;
    println!("capture: {ARMS} arms x {mb} MiB, 3 rounds each");
    println!(
        "  shell redirect : {:>8.2} s  {:>8.1} MiB/s",
        shell.as_secs_f64(),
        total / shell.as_secs_f64() / 1048576.0
    );
    println!(
        "  faultline exec : {:>8.2} s  {:>8.1} MiB/s",
        ours.as_secs_f64(),
        total / ours.as_secs_f64() / 1048576.0
    );
    println!(
        "  throughput ratio (faultline / shell): {:.2}",
        shell.as_secs_f64() / ours.as_secs_f64()
    );
    println!(
        "  bytes on disk, last round: faultline {ours_bytes}, shell {shell_bytes} (equal = no line lost)"
    );
}
