//! Bounded resources: 1 GiB of child output, including single lines of 8 MiB, streamed
//! through an arm of a real `faultline run --headless` leaves the faultline process's
//! peak RSS within 32 MiB of its RSS before the stream, and every byte on disk.
//! A logs directory that fills up is reported in the journal (needs root to mount a
//! small tmpfs; `FAULTLINE_REQUIRE_MOUNT=1` turns the skip into a failure).

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const TOTAL: u64 = 1 << 30;
const BIG_LINE: u64 = 8 * MIB;
/// Allowed growth of the faultline process over the stream.
const RSS_BUDGET: u64 = 32 * MIB;

/// Sizes each child writes, so the logs on disk can be checked byte for byte.
struct Volume {
    /// The service: two 8 MiB lines, a planted error, many short lines, `flood-done`.
    service: u64,
    /// The workload: three 8 MiB lines, then short lines up to the 1 GiB total.
    workload: u64,
}

const SERVICE_SHORT: u64 = 64 * MIB;
const DONE_LINE: &str = "flood-done\n";
/// Found by the swallowed-errors audit only if it reads past the huge lines.
const ERROR_LINE: &str = "flood: internal error after the huge lines\n";

fn volume() -> Volume {
    let service = 2 * (BIG_LINE + 1) + (ERROR_LINE.len() + DONE_LINE.len()) as u64 + SERVICE_SHORT;
    Volume {
        service,
        workload: TOTAL - service,
    }
}

/// `n` lines of 8 MiB, each written with no newline and then a newline.
fn big_lines(n: u32) -> String {
    format!("for _ in $(seq {n}); do head -c {BIG_LINE} /dev/zero | tr '\\0' x; echo; done")
}

fn scripts(dir: &Path, v: &Volume) {
    // Both children wait for `go` so the test can read faultline's RSS first.
    let service = format!(
        "while [ ! -e go ]; do sleep 0.02; done\n{}\nprintf '{ERROR_LINE}'\nyes 'service line of output' | head -c {SERVICE_SHORT}\nprintf '{DONE_LINE}'\ntouch flood-done\nexec sleep 120\n",
        big_lines(2)
    );
    let short = v.workload - 3 * (BIG_LINE + 1);
    let workload = format!(
        "touch ready\nwhile [ ! -e go ]; do sleep 0.02; done\n{}\nyes 'workload line of output' | head -c {short}\nwhile [ ! -e flood-done ]; do sleep 0.02; done\n",
        big_lines(3)
    );
    std::fs::write(dir.join("flood.sh"), service).expect("flood.sh");
    std::fs::write(dir.join("workload.sh"), workload).expect("workload.sh");
}

const PLAN: &str = "# Test Plan: output-volume

**Date:** 2026-12-01
**Plan mode:** project-wide
**SUT:** a shell that floods its output
**Plan author:** faultline tests
**Status:** reviewed

## 1b. Claims under test

| ID | Claim | Category | Source | Inferred? |
|---|---|---|---|---|
| C1 | The service answers every request. | liveness | test | no |

## 4. Failure hypotheses

- H1. **Floods** — the service writes gigabytes.
  - Could falsify: C1

## 7. Scenarios

### Scenario V1: flood_through_an_arm

- **Falsifies if it FAILs:** C1
- **Closes:** H1
- **Workload:** a shell writing 1 GiB.
- **Faults:** a no-op command fault whose victim-side signal is a log line after the flood.
- **Oracle:** the external checker over the JSONL history reports no anomaly.
- **Smoke budget:** 1 seed, 1 s per arm.
- **Hardening budget:** not applicable — test fixture.
- **Release budget:** not provided — test fixture. Revisit when: never.

#### §7.M.S
- **V1/flood** — the flooding surface.
";

/// The arm's landing signal watches the service log through the whole flood.
const SIDECAR: &str = r#"version: 1
scenarios:
  V1:
    arms:
      flood:
        cluster:
          services:
            - { name: flood, run: "exec sh ./flood.sh" }
        workload: { run: "sh ./workload.sh", deadline: 120s }
        faults:
          - id: watch-flood
            after: 0s
            duration: 1s
            command: { inject: "touch injected", heal: "true" }
            landing:
              - side: victim
                log: { service: flood, pattern: "^flood-done$" }
                within: 20s
        tiers: { smoke: { duration: 1s } }
"#;

/// A `kB` field of `/proc/<pid>/status`, in bytes.
fn status_field(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn wait_for(path: &Path, child: &mut std::process::Child, within: Duration) {
    let start = Instant::now();
    while !path.exists() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "faultline ended ({status}) before {} appeared",
                path.display()
            );
        }
        assert!(
            start.elapsed() < within,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn file_len(dir: &Path, name: &str) -> u64 {
    let found = walk(dir)
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == name))
        .unwrap_or_else(|| panic!("no {name} under {}", dir.display()));
    std::fs::metadata(found).expect("log metadata").len()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_gibibyte_of_output_with_huge_lines_keeps_rss_flat_and_lands_on_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let v = volume();
    scripts(root, &v);
    std::fs::write(root.join("plan.md"), PLAN).expect("plan");
    std::fs::write(root.join("plan.run.yaml"), SIDECAR).expect("sidecar");
    let out = root.join("sessions");
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["run", "plan.md", "--headless", "--yes", "--sut", "."])
        .arg("--out")
        .arg(&out)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(root.join("stdout.txt")).expect("stdout file"))
        .stderr(std::fs::File::create(root.join("stderr.txt")).expect("stderr file"))
        .spawn()
        .expect("faultline starts");
    let pid = child.id();
    // Faultline is idle once the workload waits for `go` and the fault is injected.
    wait_for(&root.join("ready"), &mut child, Duration::from_secs(60));
    wait_for(&root.join("injected"), &mut child, Duration::from_secs(30));
    let before = status_field(pid, "VmRSS:").expect("VmRSS before");
    // Reset the high-water mark to the current RSS, so the peak is the stream's own.
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("reset VmHWM");
    let started = Instant::now();
    std::fs::write(root.join("go"), "").expect("go");
    let mut peak = before;
    let status = loop {
        if let Some(hwm) = status_field(pid, "VmHWM:") {
            peak = peak.max(hwm);
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "faultline did not end"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let delta = peak.saturating_sub(before);
    eprintln!(
        "output volume: {TOTAL} bytes in {:.1} s; faultline VmRSS before {:.1} MiB, peak VmHWM {:.1} MiB, delta {:.1} MiB (budget {} MiB)",
        elapsed.as_secs_f64(),
        before as f64 / MIB as f64,
        peak as f64 / MIB as f64,
        delta as f64 / MIB as f64,
        RSS_BUDGET / MIB
    );
    let stdout = std::fs::read_to_string(root.join("stdout.txt")).unwrap_or_default();
    assert!(
        stdout
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("session: ")),
        "run did not finish ({status}):\n{stdout}\n{}",
        std::fs::read_to_string(root.join("stderr.txt")).unwrap_or_default()
    );
    assert!(
        delta <= RSS_BUDGET,
        "peak RSS grew {delta} bytes over the stream"
    );
    // Flat means no reader held a whole line either (they used to: +16 MiB here).
    assert!(
        delta < BIG_LINE,
        "peak RSS grew {delta} bytes: some reader buffers whole {BIG_LINE}-byte lines"
    );
    assert_eq!(file_len(&out, "flood.stdout.log"), v.service);
    assert_eq!(file_len(&out, "workload.stdout.log"), v.workload);
    assert!(
        stdout.contains("flood-done"),
        "the landing watch never read through the flood:\n{stdout}"
    );
    let audit = audit_item(&out, "gbb-7-swallowed-errors");
    assert!(
        audit["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("internal error after the huge lines")),
        "the swallowed-errors audit did not read past the huge lines: {audit}"
    );
}

/// The audit item `id` of the session's `verdicts.json`, wherever it sits.
fn audit_item(out: &Path, id: &str) -> serde_json::Value {
    fn find(v: &serde_json::Value, id: &str) -> Option<serde_json::Value> {
        match v {
            serde_json::Value::Object(m) if m.get("id").is_some_and(|i| i == id) => Some(v.clone()),
            serde_json::Value::Object(m) => m.values().find_map(|v| find(v, id)),
            serde_json::Value::Array(a) => a.iter().find_map(|v| find(v, id)),
            _ => None,
        }
    }
    let path = walk(out)
        .into_iter()
        .find(|p| p.ends_with("verdicts.json"))
        .expect("verdicts.json");
    let text = std::fs::read_to_string(path).expect("verdicts.json readable");
    let v: serde_json::Value = serde_json::from_str(&text).expect("verdicts.json is JSON");
    find(&v, id).unwrap_or_else(|| panic!("no audit item {id} in {text}"))
}

#[test]
fn lines_are_cut_at_the_limit_and_an_unfinished_one_is_carried() {
    use faultline::exec::{LINE_LIMIT, LineCap};
    let long = vec![b'x'; LINE_LIMIT * 3];
    let mut first = long.clone();
    first.extend_from_slice(b"\nshort\npart");
    let mut lines = LineCap::default();
    let mut seen = Vec::new();
    let (read, stopped) = lines
        .scan(&mut first.as_slice(), |l| {
            seen.push(l.to_vec());
            false
        })
        .expect("scan");
    assert_eq!((read, stopped), (first.len() as u64, false));
    assert_eq!(seen, vec![long[..LINE_LIMIT].to_vec(), b"short".to_vec()]);
    // The unfinished `part` continues in the next scan.
    let (_, stopped) = lines
        .scan(&mut &b"ial\nafter\n"[..], |l| l == b"partial")
        .expect("scan");
    assert!(stopped);
    assert!(lines.finish().is_empty());
}

/// Root can mount a small tmpfs; elsewhere the disk-full case is skipped, loudly.
fn can_mount() -> bool {
    if nix::unistd::Uid::effective().is_root() {
        return true;
    }
    let why = "not root: cannot mount a tmpfs to fill the logs directory";
    !common::skipped("MOUNT", Some(why.to_string()))
}

#[tokio::test]
async fn a_full_logs_filesystem_is_journaled() {
    if !can_mount() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    // The journal stays on the real disk; only the logs run out of space.
    let mount = faultline::nemesis::disk::Tmpfs::mount(&dir.path().join("logs"), "1M")
        .expect("mount a 1 MiB tmpfs on logs/");
    let yaml = r#"
workload: { run: "head -c 2097152 /dev/zero", deadline: 10s }
tiers: { smoke: { duration: 1s } }
"#;
    let (_, records) = common::run_inline(yaml, dir.path()).await;
    let full: Vec<_> = records.iter().filter(|r| r.kind == "logs-full").collect();
    mount.unmount().expect("unmount");
    assert_eq!(full.len(), 1, "one logs-full record: {records:#?}");
    assert_eq!(full[0].data["name"], "workload");
    let error = full[0].data["error"].as_str().unwrap_or_default();
    assert!(error.contains("no space left"), "{error}");
}
