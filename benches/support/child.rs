//! What the benches that measure one read-and-check per child process share: the
//! child pins itself to one core and reports its own peak resident memory; the
//! parent runs it and reads back the figures it printed. A bench includes it with
//! `#[path = "support/child.rs"] mod child;`.

use std::path::Path;
use std::process::Command;

/// This process on core 0 alone (the targets are "on one core").
pub fn pin_to_one_core() {
    let mut cpus = nix::sched::CpuSet::new();
    let _ = cpus.set(0);
    let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &cpus);
}

/// This process's peak resident memory (VmHWM), KiB.
pub fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// In the child: one read-and-check's figures, as [`run`] reads them back.
pub fn report(ops: u64, secs: f64, anomalies: usize) {
    println!("{ops} {secs} {} {anomalies}", peak_kib());
}

/// Figures a child reported.
pub struct Figures {
    pub ops: f64,
    pub secs: f64,
    pub peak_kib: f64,
    pub anomalies: f64,
}

/// Runs this bench's own executable as a child with `var=how` and `args`; `Err`
/// says what the child printed when it did not report.
pub fn run(var: &str, how: &str, args: &[&Path]) -> Result<Figures, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .env(var, how)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    let said = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<f64> = said
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match fields[..] {
        [ops, secs, peak_kib, anomalies] => Ok(Figures {
            ops,
            secs,
            peak_kib,
            anomalies,
        }),
        _ => Err(format!(
            "{said} {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}
