//! Key-to-screen latency of the real TUI in a pty while eight services stream output
//! as fast as they can, plus the TUI's memory before and after.
//!
//! Each service writes varying lines at about 2 MB/s for the whole run (a burst every
//! 100 ms), so the live pane keeps changing while the disk use stays bounded.
//!
//! `cargo bench --bench tui_latency`. Each sample writes `?` to the pty and times until
//! the frame carrying the help overlay arrives (then closes it with Esc); it reports
//! p50 / p99 / max, and VmRSS of the faultline process at the start and end.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const PLAN: &str = r#"# Test Plan: stream

## 1b. Claims under test

| ID | Claim | Category | Source | Inferred? |
|---|---|---|---|---|
| C1 | The tool answers. | liveness | bench | no |

## 7. Scenarios

### Scenario S1: eight_streams

- **Falsifies if it FAILs:** C1
- **Workload:** eight services print as fast as they can.
- **Faults:** none.
- **Oracle:** the external checker over the JSONL history reports no anomaly.
- **Smoke budget:** 1 seed, 20 s.
- **Hardening budget:** not applicable — no fault.
- **Release budget:** not provided — benchmark. Revisit when: never.

```faultline
cluster:
  services:
    - { name: s1, run: "while :; do seq $RANDOM $((RANDOM+40000)); sleep 0.1; done" }
    - { name: s2, run: "while :; do seq $RANDOM $((RANDOM+40000)); sleep 0.1; done" }
    - { name: s3, run: "while :; do seq $RANDOM $((RANDOM+40000)); sleep 0.1; done" }
    - { name: s4, run: "while :; do seq $RANDOM $((RANDOM+40000)); sleep 0.1; done" }
    - { name: s5, run: "while :; do seq $RANDOM $((RANDOM+40000)); sleep 0.1; done" }
    - { name: s6, run: "while :; do seq $RANDOM $((RANDOM+40000)); sleep 0.1; done" }
    - { name: s7, run: "while :; do seq $RANDOM $((RANDOM+40000)); sleep 0.1; done" }
    - { name: s8, run: "while :; do seq $RANDOM $((RANDOM+40000)); sleep 0.1; done" }
workload: { run: "sleep 25", deadline: 60s }
tiers: { smoke: { duration: 20s } }
```
"#;

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// utime + stime of `pid` in clock ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start past its ')'.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// The TUI's CPU use over `window` while nothing changes, in percent of one core.
fn idle_cpu(pid: u32, window: Duration) -> Option<f64> {
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    let before = cpu_ticks(pid)?;
    std::thread::sleep(window);
    let after = cpu_ticks(pid)?;
    Some((after - before) as f64 / hz / window.as_secs_f64() * 100.0)
}

fn main() {
    let Ok(dir) = tempfile::tempdir() else { return };
    if std::fs::write(dir.path().join("plan.md"), PLAN).is_err() {
        return;
    }
    let winsize = nix::pty::Winsize {
        ws_row: 40,
        ws_col: 140,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let Ok(pty) = nix::pty::openpty(Some(&winsize), None) else {
        eprintln!("no pty");
        return;
    };
    let slave: OwnedFd = pty.slave;
    let (Ok(stdin), Ok(stdout)) = (slave.try_clone(), slave.try_clone()) else {
        return;
    };
    let exe = std::env::var("FAULTLINE_BIN").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/faultline").to_string()
    });
    let Ok(mut child) = Command::new(&exe)
        .args(["run", "plan.md", "--out", "sessions"])
        .current_dir(dir.path())
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::null())
        .spawn()
    else {
        eprintln!("cannot start {exe} (build it: cargo build --release)");
        return;
    };
    drop(slave);
    let mut master = std::fs::File::from(pty.master);
    let Ok(mut reader) = master.try_clone() else {
        return;
    };
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
    // Let the services start streaming.
    std::thread::sleep(Duration::from_secs(3));
    while rx.try_recv().is_ok() {}
    let rss_start = rss_kib(child.id());
    let mut samples = Vec::new();
    let mut bytes_seen = 0usize;
    for _ in 0..40 {
        let sent = Instant::now();
        if master.write_all(b"?").is_err() {
            break;
        }
        let mut window = Vec::new();
        loop {
            match rx.recv_timeout(Duration::from_secs(2)) {
                Ok((at, chunk)) => {
                    bytes_seen += chunk.len();
                    window.extend_from_slice(&chunk);
                    // The help overlay's title: the frame that answers the key.
                    if window.windows(4).any(|w| w == b"Keys") {
                        samples.push(at.duration_since(sent));
                        break;
                    }
                }
                Err(_) => {
                    samples.push(Duration::from_secs(2));
                    break;
                }
            }
        }
        // Close it again (not timed: only the cells under the overlay repaint).
        let _ = master.write_all(b"\x1b");
        std::thread::sleep(Duration::from_millis(200));
        while let Ok((_, chunk)) = rx.try_recv() {
            bytes_seen += chunk.len();
        }
    }
    let rss_end = rss_kib(child.id());
    // The session ends (services stopped, report on screen); then nothing changes.
    let mut screen = Vec::new();
    let ended_by = Instant::now() + Duration::from_secs(60);
    while Instant::now() < ended_by {
        if let Ok((_, chunk)) = rx.recv_timeout(Duration::from_millis(500)) {
            screen.extend_from_slice(&chunk);
            // The status line names the session verdict once it is decided.
            let decided = [b"session: D", b"session: I", b"session: F", b"session: B"];
            if decided
                .iter()
                .any(|d| screen.windows(d.len()).any(|w| w == *d))
            {
                break;
            }
            let keep = screen.len().saturating_sub(4096);
            screen.drain(..keep);
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    let idle_window = Duration::from_secs(30);
    let idle = idle_cpu(child.id(), idle_window);
    let mut idle_bytes = 0usize;
    while let Ok((_, chunk)) = rx.try_recv() {
        idle_bytes += chunk.len();
    }
    // Quit the way an operator does: q (the session has ended, so no confirmation).
    let _ = master.write_all(b"q");
    std::thread::sleep(Duration::from_millis(300));
    let _ = master.write_all(b"y\r");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    samples.sort();
    let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize];
    if samples.is_empty() {
        eprintln!("no samples");
        return;
    }
    println!(
        "tui key-to-screen latency, 8 services streaming, {} samples",
        samples.len()
    );
    println!(
        "  p50 {:?}  p99 {:?}  max {:?}",
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    println!("  bytes written to the terminal meanwhile: {bytes_seen}");
    println!("  VmRSS start {:?} KiB, end {:?} KiB", rss_start, rss_end);
    match idle {
        Some(pct) => println!(
            "tui idle CPU after the session ended, over {idle_window:?}: {pct:.2}% of one core \
             ({idle_bytes} bytes drawn meanwhile)"
        ),
        None => println!("tui idle CPU: could not read /proc"),
    }
    // The UI logs its frame times when it ends.
    if let Ok(log) = std::fs::read_to_string(dir.path().join("sessions/faultline.log"))
        && let Some(line) = log.lines().rev().find(|l| l.contains("tui frame times"))
    {
        println!("  frame times: {}", line.trim());
    }
    // Stop every service the aborted session left (their groups outlive a SIGKILL).
    let _ = Command::new(&exe)
        .arg("heal")
        .arg(dir.path().join("sessions"))
        .output();
    if let Ok(entries) = std::fs::read_dir(dir.path().join("sessions/stream")) {
        for e in entries.flatten() {
            let _ = Command::new(&exe).arg("heal").arg(e.path()).output();
        }
    }
}
