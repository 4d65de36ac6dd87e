//! A stop while the demo's reproducible FAIL (D3) is being reduced keeps the FAIL: the
//! session ends FAIL with FAIL's exit code, the reduction is journaled as cut short,
//! and the report and the headless output name `faultline resume <session>`. That
//! resume then runs the reduction to its end: the report shows the reduced reproducer.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The session directory under `root` once its journal holds `marker`.
fn journaled(root: &Path, marker: &str, child: &mut std::process::Child) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let found = std::fs::read_dir(root.join("demo-kv-replication"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path());
        if let Some(session) = found
            && std::fs::read_to_string(session.join("journal.jsonl"))
                .is_ok_and(|t| t.contains(marker))
        {
            return session;
        }
        if Instant::now() >= deadline || child.try_wait().ok().flatten().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{marker} not journaled");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_stop_during_reduction_keeps_the_fail_and_resume_finishes_the_reduction() {
    let work = tempfile::tempdir().expect("tempdir");
    let root = work.path().join("sessions");
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args([
            "demo",
            "--headless",
            "--yes",
            "--only",
            "D3",
            "--out",
            root.to_str().expect("utf-8"),
        ])
        .current_dir(work.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("faultline starts");
    let session = journaled(&root, "\"reduction-started\"", &mut child);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("SIGINT");
    let out = child.wait_with_output().expect("faultline exits");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(i32::from(faultline::verdict::SessionVerdict::Fail.exit())),
        "{stdout}"
    );
    assert_eq!(common::verdict_of(&session, "D3"), "FAIL-reproducible");
    let all = common::records(&session);
    assert!(all.iter().any(|r| r.kind == "interrupted"), "{stdout}");
    let cut = all
        .iter()
        .find(|r| r.kind == "reduction-result")
        .expect("the reduction's result is journaled");
    assert_eq!(cut.data["cut_short"], true, "{:?}", cut.data);
    let verdict = all
        .iter()
        .rfind(|r| r.kind == "session-verdict")
        .expect("a session verdict");
    assert_eq!(verdict.data["verdict"], "FAIL");
    // The stop kept no reduced spec: the FAIL's reproducer is the unreduced one.
    assert!(!session.join("artifacts/D3/reduced/plan.md").exists());
    let sentence = format!(
        "reduction cut short — `faultline resume {}` finishes it",
        session.display()
    );
    assert!(stdout.contains(&sentence), "headless output:\n{stdout}");
    let report = std::fs::read_to_string(session.join("findings/report.md")).expect("report");
    assert!(report.contains(&sentence), "{report}");
    assert!(
        report.contains("--only D3"),
        "the unreduced reproducer: {report}"
    );

    let resumed = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args([
            "resume",
            session.to_str().expect("utf-8"),
            "--headless",
            "--yes",
        ])
        .current_dir(work.path())
        .output()
        .expect("resume runs");
    let resumed_out = String::from_utf8_lossy(&resumed.stdout);
    assert_eq!(
        resumed.status.code(),
        Some(i32::from(faultline::verdict::SessionVerdict::Fail.exit())),
        "{resumed_out}"
    );
    let all = common::records(&session);
    let finished = all
        .iter()
        .rfind(|r| r.kind == "reduction-result")
        .expect("a reduction result");
    assert_ne!(finished.data["cut_short"], true, "{:?}", finished.data);
    assert_eq!(finished.data["faults"], serde_json::json!(["kill-primary"]));
    assert_eq!(common::verdict_of(&session, "D3"), "FAIL-reproducible");
    let report = std::fs::read_to_string(session.join("findings/report.md")).expect("report");
    assert!(!report.contains("reduction cut short"), "{report}");
    assert!(report.contains("reduced from 2 events to 1"), "{report}");
    assert!(report.contains("reduced reproducer:"), "{report}");
    assert!(session.join("artifacts/D3/reduced/plan.md").is_file());
    assert!(
        !resumed_out.contains("reduction cut short"),
        "{resumed_out}"
    );
}
