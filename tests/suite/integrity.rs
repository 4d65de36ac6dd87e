//! faultline's own integrity under faults of its own (issue 29, item 8): a full disk
//! during the final documents leaves their previous versions, and faultline killed at
//! the same instant as one of its watchdogs still leaves nothing running.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The demo plan run with `sidecar` as its run spec, headless, `--only only`, the SUT
/// and the session root in `dir`.
fn start(dir: &Path, sidecar: &str, only: &str) -> Child {
    let plan = dir.join("plan.md");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/plan.md"),
        &plan,
    )
    .expect("plan copied");
    std::fs::write(dir.join("plan.run.yaml"), sidecar).expect("sidecar");
    Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(&plan)
        .args(["--headless", "--yes", "--only", only, "--sut"])
        .arg(dir)
        .current_dir(dir)
        .stdout(std::fs::File::create(dir.join("run.out")).expect("run.out"))
        .stderr(std::fs::File::create(dir.join("run.err")).expect("run.err"))
        .spawn()
        .expect("faultline runs")
}

fn said(dir: &Path) -> String {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    format!("{}{}", read("run.out"), read("run.err"))
}

/// The newest session under `dir/test-sessions/<plan slug>/`.
fn session_in(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir.join("test-sessions"))
        .ok()?
        .flatten()
        .filter_map(|slug| std::fs::read_dir(slug.path()).ok())
        .flat_map(|sessions| sessions.flatten().map(|e| e.path()))
        .filter(|p| p.join("journal.jsonl").exists())
        .max()
}

/// A tmpfs of `size` mounted at `path`, unmounted on drop.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(path: PathBuf, size: &str) -> Tmpfs {
        std::fs::create_dir_all(&path).expect("mount point");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .status()
            .expect("mount runs");
        assert!(status.success(), "mount tmpfs at {}", path.display());
        Tmpfs(path)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system holding `dir` until a write fails with ENOSPC.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut filler = std::fs::File::create(dir.join("filler")).expect("filler");
    let block = vec![0u8; 64 * 1024];
    for size in [block.len(), 4096, 1] {
        while filler.write_all(&block[..size]).is_ok() {}
    }
    let (free, _) = faultline::nemesis::disk::space(dir).expect("statfs");
    assert_eq!(free, 0, "the tmpfs still has room");
}

/// A finished session on a small tmpfs; the disk is then filled and its documents
/// rebuilt (`faultline report SESSION`, the engine's final write): every write fails
/// with ENOSPC, `verdicts.json` keeps its previous content byte for byte, no temporary
/// file is left, and the error names the file.
#[test]
fn enospc_during_the_final_write_keeps_the_previous_verdicts() {
    if !common::can_mount() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let disk = Tmpfs::mount(dir.path().join("disk"), "16m");
    let sidecar = r#"version: 1
scenarios:
  D1:
    cluster:
      services:
        - { name: plain, run: "exec sleep 600" }
    workload: { run: "true", deadline: 60s }
    tiers:
      smoke: { duration: 1s }
"#;
    let status = start(&disk.0, sidecar, "D1")
        .wait()
        .expect("faultline ends");
    assert!(status.code().is_some(), "{}", said(&disk.0));
    let session = session_in(&disk.0).expect("a session");
    let verdicts = session.join("verdicts.json");
    let before = std::fs::read(&verdicts).expect("verdicts.json");
    assert!(!before.is_empty());

    fill(&disk.0);
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("report")
        .arg(&session)
        .output()
        .expect("faultline report runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "a full disk went unnoticed");
    let named = format!("{} could not be written", verdicts.display());
    assert!(stderr.contains(&named), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(
        std::fs::read(&verdicts).expect("verdicts.json"),
        before,
        "verdicts.json lost its previous content"
    );
    for doc in [
        "findings/report.md",
        "findings/junit.xml",
        "findings/report.html",
    ] {
        let len = std::fs::metadata(session.join(doc)).map_or(0, |m| m.len());
        assert!(len > 0, "{doc} was left empty");
    }
    let temps: Vec<PathBuf> = common::tree(&session, &session.join("logs"))
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p.extension().is_some_and(|e| e == "tmp"))
        .collect();
    assert!(temps.is_empty(), "temporary files left: {temps:?}");
    drop(disk);
}

/// Pids of the armed watchdogs the journal names.
fn armed_watchdogs(session: &Path) -> Vec<i32> {
    common::lines(&session.join("journal.jsonl"))
        .iter()
        .filter(|r| r.kind == "watchdog" && r.data["armed"] == true)
        .filter_map(|r| r.data["pid"].as_i64().and_then(|p| i32::try_from(p).ok()))
        .collect()
}

/// faultline and its (first) watchdog SIGKILLed at the same instant, a fault (a
/// SIGSTOPped service) injected and a `setsid` daemon running: within 5 s the fault is
/// healed, no process bearing the session's mark is left, the daemon is gone and so
/// are the watchdogs.
#[test]
fn faultline_and_its_watchdog_killed_together_leave_nothing() {
    killed_with(true);
}

/// faultline alone SIGKILLed, both watchdogs alive: the same, and the session is
/// healed once (one watchdog heals, the other finds the journal healed and leaves it).
#[test]
fn faultline_killed_alone_is_healed_once() {
    let Some((_dir, session)) = killed_with(false) else {
        return;
    };
    let records = common::lines(&session.join("journal.jsonl"));
    let heals: Vec<_> = records
        .iter()
        .filter(|r| r.kind == "heal-started" || r.kind == "heal-finished")
        .map(|r| (r.kind.clone(), r.data["by"].clone()))
        .collect();
    let by = serde_json::json!(faultline::session::watchdog::HEALER);
    assert_eq!(
        heals,
        vec![
            ("heal-started".to_string(), by.clone()),
            ("heal-finished".to_string(), by)
        ]
    );
}

/// Runs D2 with a paused service and a `setsid` daemon, SIGKILLs faultline (and, with
/// `watchdog_too`, its first watchdog at the same instant), asserts nothing is left
/// within 5 s; the session (and the directory holding it), or `None` when cgroups are
/// not usable here.
fn killed_with(watchdog_too: bool) -> Option<(tempfile::TempDir, PathBuf)> {
    if !common::can_contain() {
        return None;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let sidecar = r#"version: 1
scenarios:
  D2:
    cluster:
      services:
        - { name: victim, run: "exec sleep 600" }
        - name: daemon
          run: "setsid sh -c 'echo $$ > daemon.pid; while :; do sleep 0.1; done' >/dev/null 2>&1 &"
    workload: { run: "sleep 600", deadline: 900s }
    faults:
      - id: pause-victim
        after: 0s
        duration: 600s
        process: { signal: SIGSTOP, target: { service: victim } }
    tiers:
      smoke: { duration: 1s }
"#;
    let mut run = start(dir.path(), sidecar, "D2");
    let end = Instant::now() + Duration::from_secs(120);
    let (session, daemon) = loop {
        assert!(
            Instant::now() < end,
            "no fault after 120 s: {}",
            said(dir.path())
        );
        assert!(
            run.try_wait().expect("try_wait").is_none(),
            "faultline ended early: {}",
            said(dir.path())
        );
        let daemon = std::fs::read_to_string(dir.path().join("daemon.pid"))
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok());
        let session = session_in(dir.path()).filter(|s| {
            common::lines(&s.join("journal.jsonl"))
                .iter()
                .any(|r| r.kind == "fault-injected")
        });
        if let (Some(session), Some(daemon)) = (session, daemon) {
            break (session, daemon);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let watchdogs = armed_watchdogs(&session);
    assert_eq!(watchdogs.len(), faultline::session::watchdog::WATCHDOGS);
    let faultline = Pid::from_raw(i32::try_from(run.id()).expect("pid"));
    let killed = Instant::now();
    kill(faultline, Signal::SIGKILL).expect("SIGKILL faultline");
    if watchdog_too {
        kill(Pid::from_raw(watchdogs[0]), Signal::SIGKILL).expect("SIGKILL its watchdog");
    }
    let _ = run.wait();

    let within = Duration::from_secs(5);
    let healed = |s: &Path| {
        common::lines(&s.join("journal.jsonl"))
            .iter()
            .any(|r| r.kind == "fault-healed" && r.data["fault"] == "pause-victim")
    };
    while Instant::now() < killed + within
        && !(healed(&session)
            && faultline::exec::mark::marked(&session).is_empty()
            && !common::pid_alive(daemon)
            && common::watchdogs_of(&session).is_empty())
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("everything ended {:?} after the kill", killed.elapsed());
    let left = faultline::exec::mark::marked(&session);
    let daemon_left = common::pid_alive(daemon);
    if daemon_left {
        let _ = kill(Pid::from_raw(daemon), Signal::SIGKILL);
    }
    assert!(
        !daemon_left,
        "the setsid daemon {daemon} outlived {within:?}"
    );
    assert!(
        healed(&session),
        "the fault was not healed within {within:?}"
    );
    assert!(left.is_empty(), "left running after {within:?}: {left:?}");
    assert!(
        common::watchdogs_of(&session).is_empty(),
        "a watchdog outlived its heal"
    );
    Some((dir, session))
}

/// A run as a real unprivileged user (no cgroup v2 delegated to it): a service's
/// `setsid` child, out of its service's process group and in no cgroup, is ended at
/// the clean end by the session-mark sweep, which the journal records; the run's
/// capability records say which containment it got.
#[test]
fn an_unprivileged_run_s_setsid_child_is_gone_at_the_clean_end() {
    use crate::support::users::{UnixUser, can_make_users};
    use std::os::unix::fs::PermissionsExt;
    if !can_make_users() {
        return;
    }
    let user = UnixUser::create("flint");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let sidecar = r#"version: 1
scenarios:
  D1:
    cluster:
      services:
        - name: daemon
          run: "setsid sh -c 'echo $$ > daemon.pid; while :; do sleep 0.1; done' >/dev/null 2>&1 &"
        - { name: plain, run: "exec sleep 600" }
    workload: { run: "sleep 2", deadline: 60s }
    tiers:
      smoke: { duration: 1s }
"#;
    let plan = dir.path().join("plan.md");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/plan.md"),
        &plan,
    )
    .expect("plan copied");
    std::fs::write(dir.path().join("plan.run.yaml"), sidecar).expect("sidecar");
    let runuser = user.runuser();
    let status = Command::new(&runuser[0])
        .args(&runuser[1..])
        .arg(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(&plan)
        .args(["--headless", "--yes", "--only", "D1", "--sut"])
        .arg(dir.path())
        .current_dir(dir.path())
        .stdout(std::fs::File::create(dir.path().join("run.out")).expect("run.out"))
        .stderr(std::fs::File::create(dir.path().join("run.err")).expect("run.err"))
        .status()
        .expect("faultline runs as the user");
    assert!(status.code().is_some(), "{}", said(dir.path()));
    let pid = std::fs::read_to_string(dir.path().join("daemon.pid"))
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .unwrap_or_else(|| panic!("the daemon never ran: {}", said(dir.path())));
    let left = common::pid_alive(pid);
    if left {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    assert!(!left, "the setsid child {pid} outlived the clean end");
    let session = session_in(dir.path()).expect("session");
    let records = common::lines(&session.join("journal.jsonl"));
    let containment = records
        .iter()
        .find(|r| r.kind == "capability" && r.data["capability"] == "containment")
        .expect("the run says which containment it got");
    assert!(
        containment.data["saw"]
            .as_str()
            .is_some_and(|s| s.starts_with("session-mark sweep")),
        "{:?}",
        containment.data
    );
    // And the capability matrix of its session log and report.
    let log = std::fs::read_to_string(session.join("session-log.md")).expect("session log");
    assert!(
        log.lines()
            .any(|l| l.starts_with("| containment (") && l.contains("session-mark sweep")),
        "{log}"
    );
    let swept = records
        .iter()
        .find(|r| r.kind == "marked-ended" && r.data["pid"] == pid)
        .expect("the sweep journaled ending the setsid child");
    assert_eq!(swept.data["by"], "faultline (clean end)");
    drop(user);
}
