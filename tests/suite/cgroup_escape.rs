//! A service that daemonizes — a `setsid` child that also clears its environment, so
//! neither its process group nor the session's mark leads to it — is ended with its
//! service: when the session ends, by `faultline heal` after faultline was SIGKILLed,
//! and by the watchdog after the same kill. Each time, every cgroup the journal names
//! is gone too.

use crate::common;
use crate::common::Line;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The demo plan's D1 with one service that daemonizes a shell loop (its pid in
/// `daemon.pid`; on SIGTERM it writes `daemon.term` and exits), one that stays in
/// the foreground, and a workload of `seconds`.
fn spec(seconds: u32) -> String {
    format!(
        r#"version: 1
scenarios:
  D1:
    cluster:
      services:
        - name: daemon
          run: "setsid env -i PATH=/usr/bin:/bin sh -c 'echo $$ > daemon.pid; trap \"echo graceful > daemon.term; exit 0\" TERM; while :; do sleep 0.1; done' >/dev/null 2>&1 &"
        - {{ name: plain, run: "exec sleep 600" }}
    workload: {{ run: "sleep {seconds}", deadline: 900s }}
    tiers:
      smoke: {{ duration: 1s }}
"#
    )
}

/// `faultline run` of D1 in `dir`; with `watchdog: false`, without its watchdog (so
/// what a killed faultline leaves stays until `faultline heal`).
fn start_run(dir: &Path, seconds: u32, watchdog: bool) -> Child {
    run_command(
        dir,
        seconds,
        watchdog,
        Command::new(env!("CARGO_BIN_EXE_faultline")),
    )
}

fn run_command(dir: &Path, seconds: u32, watchdog: bool, mut command: Command) -> Child {
    let plan = dir.join("plan.md");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/plan.md"),
        &plan,
    )
    .expect("plan copied");
    std::fs::write(dir.join("plan.run.yaml"), spec(seconds)).expect("sidecar");
    if !watchdog {
        command.env(faultline::session::watchdog::ENV_SWITCH, "off");
    }
    command
        .arg("run")
        .arg(&plan)
        .args(["--headless", "--yes", "--only", "D1", "--sut"])
        .arg(dir)
        .current_dir(dir)
        .stdout(std::fs::File::create(dir.join("run.out")).expect("run.out"))
        .stderr(std::fs::File::create(dir.join("run.err")).expect("run.err"))
        .spawn()
        .expect("faultline runs")
}

/// The newest session directory under `dir/test-sessions/<plan slug>/`.
fn session_in(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir.join("test-sessions"))
        .ok()?
        .flatten()
        .filter_map(|slug| std::fs::read_dir(slug.path()).ok())
        .flat_map(|sessions| sessions.flatten().map(|e| e.path()))
        .filter(|p| p.join("journal.jsonl").exists())
        .max()
}

fn said(dir: &Path) -> String {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    format!("{}{}", read("run.out"), read("run.err"))
}

/// Every cgroup path the journal says was made.
fn cgroups(records: &[Line]) -> Vec<PathBuf> {
    records
        .iter()
        .filter(|r| r.kind == "cgroup-created")
        .filter_map(|r| r.data["path"].as_str().map(PathBuf::from))
        .collect()
}

/// The daemon, started (through faultline) by this test, with its start time: killed
/// by its pid on drop should faultline have left it (never a process that reused it).
struct Daemon(i32, Option<u64>);

impl Daemon {
    fn of(pid: i32) -> Daemon {
        Daemon(pid, faultline::exec::start_time(pid))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let ours = self.1.is_some() && faultline::exec::start_time(self.0) == self.1;
        if ours {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(self.0),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Waits until the daemon runs inside its service's journaled cgroup; checks it left
/// its service's process group and carries no session mark (so only the cgroup can
/// find it). Returns it and the session.
fn daemon_running(dir: &Path, run: &mut Child) -> (Daemon, PathBuf) {
    let end = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(
            run.try_wait().expect("try_wait").is_none(),
            "faultline ended before the daemon ran: {}",
            said(dir)
        );
        assert!(Instant::now() < end, "no daemon after 120 s: {}", said(dir));
        let pid = std::fs::read_to_string(dir.join("daemon.pid"))
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok());
        let session = session_in(dir);
        let cgroup = session.as_ref().and_then(|s| {
            common::records(s)
                .iter()
                .find(|r| r.kind == "cgroup-created" && r.data["service"] == "daemon")
                .and_then(|r| r.data["path"].as_str().map(PathBuf::from))
        });
        let (Some(pid), Some(session), Some(cgroup)) = (pid, session, cgroup) else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        // The daemon may write its pid before faultline journals the service's start
        // (the child runs while the parent is still returning from the spawn): not yet.
        let Some(service_pgid) = common::records(&session)
            .iter()
            .find(|r| r.kind == "command-started" && r.data["name"] == "daemon")
            .and_then(|r| r.data["pgid"].as_i64())
        else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        let daemon = Daemon::of(pid);
        let members = faultline::exec::cgroup::members(&cgroup);
        assert!(
            members.contains(&pid),
            "daemon {pid} is not in {}: {members:?}",
            cgroup.display()
        );
        let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("environ");
        assert!(
            !environ
                .split(|b| *b == 0)
                .any(|kv| kv.starts_with(b"FAULTLINE_SESSION=")),
            "the daemon still carries the session's mark: the test would prove nothing"
        );
        let pgid = nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(pid)))
            .expect("getpgid")
            .as_raw();
        assert_ne!(
            i64::from(pgid),
            service_pgid,
            "the daemon never left its group"
        );
        return (daemon, session);
    }
}

/// Nothing the session contained is left: the daemon is dead and every cgroup the
/// journal names is removed, each with a `cgroup-removed` record by `by`.
fn nothing_left(daemon: &Daemon, session: &Path, by: Option<&str>) {
    let end = Instant::now() + Duration::from_secs(10);
    while common::pid_alive(daemon.0) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!common::pid_alive(daemon.0), "daemon {} outlived", daemon.0);
    let all = common::records(session);
    let made = cgroups(&all);
    assert!(
        made.len() >= 2,
        "an iteration's cgroup and its services': {made:?}"
    );
    for path in &made {
        assert!(!path.exists(), "{} still exists", path.display());
        let removed = all
            .iter()
            .filter(|r| r.kind == "cgroup-removed" && r.data["path"] == path.display().to_string())
            .find(|r| r.data["by"].as_str() == by)
            .unwrap_or_else(|| panic!("no cgroup-removed by {by:?} for {}", path.display()));
        assert!(
            removed.data["result"]["Ok"].is_string(),
            "{:?}",
            removed.data
        );
    }
}

#[test]
fn a_daemon_of_a_service_ends_with_the_session() {
    if !common::can_contain() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut run = start_run(dir.path(), 3, true);
    let (daemon, session) = daemon_running(dir.path(), &mut run);
    let status = run.wait().expect("faultline ends");
    assert!(status.code().is_some(), "{}", said(dir.path()));
    nothing_left(&daemon, &session, None);
    // It was asked first: its SIGTERM came before the kill, with time to act on it.
    let term = std::fs::read_to_string(dir.path().join("daemon.term")).unwrap_or_default();
    assert_eq!(term.trim(), "graceful", "the daemon never got its SIGTERM");
}

#[test]
fn faultline_heal_ends_a_daemon_after_sigkill() {
    if !common::can_contain() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut run = start_run(dir.path(), 600, false);
    let (daemon, session) = daemon_running(dir.path(), &mut run);
    run.kill().expect("SIGKILL");
    run.wait().expect("reaped");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        common::pid_alive(daemon.0),
        "the daemon died with faultline: the test proves nothing"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("heal")
        .arg(&session)
        .output()
        .expect("faultline heal runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("cgroup"), "{text}");
    nothing_left(&daemon, &session, Some("faultline heal"));
}

#[test]
fn the_watchdog_ends_a_daemon_after_sigkill() {
    if !common::can_contain() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut run = start_run(dir.path(), 600, true);
    let (daemon, session) = daemon_running(dir.path(), &mut run);
    run.kill().expect("SIGKILL");
    run.wait().expect("reaped");
    common::await_watchdogs(&session, Duration::from_secs(60));
    nothing_left(
        &daemon,
        &session,
        Some(faultline::session::watchdog::HEALER),
    );
}

/// A journal naming a directory faultline does not make (damage, or the root
/// cgroup itself) never gets its processes killed or the directory removed.
#[test]
fn only_faultline_cgroups_are_ever_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stranger = dir.path().join("faultline-not-a-cgroup");
    std::fs::create_dir(&stranger).expect("dir");
    let refused = faultline::exec::cgroup::remove(&stranger).expect_err("refused");
    assert!(refused.contains("left alone"), "{refused}");
    assert!(stranger.exists());
    if let Ok(base) = faultline::exec::cgroup::base() {
        let refused = faultline::exec::cgroup::remove(base).expect_err("refused");
        assert!(refused.contains("left alone"), "{refused}");
        assert!(base.exists());
    }
}

/// Where cgroup v2 is not usable (here: no cgroup2 mount in a mount namespace of the
/// test's own), the run says so once, as an absent capability, makes no cgroup, and
/// still ends the services it can reach: by their process groups.
#[test]
fn without_cgroup_v2_the_run_says_so_once_and_ends_groups() {
    let mounts: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .expect("mountinfo")
        .lines()
        .filter(|l| l.contains(" - cgroup2 "))
        .filter_map(|l| l.split_whitespace().nth(4).map(str::to_string))
        .collect();
    let probe = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "true"])
        .status();
    let broken = !probe.is_ok_and(|s| s.success());
    let why = "`unshare --mount` does not work here: no cgroup-less run";
    if common::skipped("CGROUP", broken.then(|| why.to_string())) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let mut command = Command::new("unshare");
    command
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"for m in $CGROUP2_MOUNTS; do umount -l "$m" || exit 97; done; exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_faultline"))
        .env("CGROUP2_MOUNTS", mounts.join(" "));
    let mut run = run_command(dir.path(), 2, true, command);
    let status = run.wait().expect("faultline ends");
    assert_ne!(
        status.code(),
        Some(97),
        "umount failed: {}",
        said(dir.path())
    );
    // The daemon escaped (nothing holds it here): the guard ends it.
    let daemon = std::fs::read_to_string(dir.path().join("daemon.pid"))
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .map(Daemon::of);
    assert!(
        daemon.is_some(),
        "the daemon never ran: {}",
        said(dir.path())
    );
    let session = session_in(dir.path()).expect("session");
    let all = common::records(&session);
    assert!(
        cgroups(&all).is_empty(),
        "a cgroup was made without cgroup v2"
    );
    let said_once: Vec<&Line> = all
        .iter()
        .filter(|r| r.kind == "capability" && r.data["capability"] == "cgroup-v2")
        .collect();
    assert_eq!(
        said_once.len(),
        1,
        "two services, one record: {said_once:?}"
    );
    assert_eq!(said_once[0].data["present"], false);
    assert!(
        said_once[0].data["saw"]
            .as_str()
            .is_some_and(|s| s.contains("no cgroup v2")),
        "{:?}",
        said_once[0].data
    );
    let plain = all
        .iter()
        .find(|r| r.kind == "command-started" && r.data["name"] == "plain")
        .and_then(|r| r.data["pgid"].as_i64())
        .and_then(|p| i32::try_from(p).ok())
        .expect("plain started");
    assert!(
        !common::group_alive(plain),
        "the plain service outlived the run"
    );
}

/// What an escaper run saw: the escaper, the session, the cgroups it wrote itself
/// into (none when refused), and its service cgroup's members while it ran.
struct Escape {
    escaper: Daemon,
    session: PathBuf,
    escaped: String,
    members: std::collections::BTreeSet<i32>,
    cgroup: PathBuf,
}

/// Runs D1 with one root service whose `setsid` child writes its pid into every
/// ancestor cgroup's `cgroup.procs` — faultline's own cgroup and the root of the
/// cgroup v2 mount — then sleeps; with `clear_env`, it also drops the session's mark.
fn escape_run(dir: &Path, clear_env: bool) -> Escape {
    let base = faultline::exec::cgroup::base().expect("cgroup v2 usable");
    let mount = std::fs::read_to_string("/proc/self/mountinfo")
        .expect("mountinfo")
        .lines()
        .find(|l| l.contains(" - cgroup2 "))
        .and_then(|l| l.split_whitespace().nth(4).map(PathBuf::from))
        .expect("a cgroup2 mount");
    let env = if clear_env {
        "env -i PATH=/usr/bin:/bin "
    } else {
        ""
    };
    let escaper = format!(
        "setsid {env}sh -c 'echo $$ > escaper.pid; for c in {} {}; do \
         echo $$ > $c/cgroup.procs 2>/dev/null && echo $c >> escaped; done; \
         echo tried > escape.tried; exec sleep 600' >/dev/null 2>&1 &",
        base.display(),
        mount.display()
    );
    let spec = format!(
        r#"version: 1
scenarios:
  D1:
    cluster:
      services:
        - name: escaper
          run: "{}"
    workload: {{ run: "sleep 3", deadline: 900s }}
    tiers:
      smoke: {{ duration: 1s }}
"#,
        escaper.replace('"', "\\\"")
    );
    let plan = dir.join("plan.md");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/plan.md"),
        &plan,
    )
    .expect("plan copied");
    std::fs::write(dir.join("plan.run.yaml"), spec).expect("sidecar");
    let mut run = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(&plan)
        .args(["--headless", "--yes", "--only", "D1", "--sut"])
        .arg(dir)
        .current_dir(dir)
        .stdout(std::fs::File::create(dir.join("run.out")).expect("run.out"))
        .stderr(std::fs::File::create(dir.join("run.err")).expect("run.err"))
        .spawn()
        .expect("faultline runs");
    let end = Instant::now() + Duration::from_secs(60);
    while !dir.join("escape.tried").exists() {
        assert!(
            Instant::now() < end && run.try_wait().expect("try_wait").is_none(),
            "the escaper never tried: {}",
            said(dir)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = std::fs::read_to_string(dir.join("escaper.pid"))
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .expect("escaper.pid");
    let escaper = Daemon::of(pid);
    let escaped = std::fs::read_to_string(dir.join("escaped")).unwrap_or_default();
    let session = session_in(dir).expect("session");
    let cgroup = common::records(&session)
        .iter()
        .find(|r| r.kind == "cgroup-created" && r.data["service"] == "escaper")
        .and_then(|r| r.data["path"].as_str().map(PathBuf::from))
        .expect("the escaper's cgroup");
    let members = faultline::exec::cgroup::members(&cgroup);
    run.wait().expect("faultline ends");
    Escape {
        escaper,
        session,
        escaped,
        members,
        cgroup,
    }
}

/// A root service that writes itself into an ancestor cgroup's `cgroup.procs` but
/// keeps the session's mark is ended at the clean end wherever it went: held in its
/// cgroup (its cgroup namespace refuses the move where cgroup v2 is mounted with
/// `nsdelegate`), or else found by the clean end's session-mark sweep, journaled.
#[test]
fn a_service_writing_into_an_ancestor_cgroup_is_ended_with_the_session() {
    if !common::can_contain() || !nix::unistd::geteuid().is_root() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let run = escape_run(dir.path(), false);
    let pid = run.escaper.0;
    let end = Instant::now() + Duration::from_secs(5);
    while common::pid_alive(pid) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !common::pid_alive(pid),
        "escaper {pid} outlived the session"
    );
    if run.escaped.is_empty() {
        assert!(run.members.contains(&pid), "{:?}", run.members);
    } else {
        assert!(
            !run.members.contains(&pid),
            "it did leave {}",
            run.cgroup.display()
        );
        let swept = common::records(&run.session)
            .into_iter()
            .find(|r| r.kind == "marked-ended" && r.data["pid"] == pid)
            .expect("the clean end's sweep journaled the escaper");
        assert_eq!(swept.data["by"], "faultline (clean end)");
    }
}

/// The same escaper without the session's mark: only the cgroup can hold it. It
/// stays in its service's cgroup (each write is refused: its cgroup namespace is
/// rooted at that cgroup) and is ended with the session. The kernel enforces that
/// boundary only where cgroup v2 is mounted with `nsdelegate` (systemd's default);
/// elsewhere the test says so and skips.
#[test]
fn an_unmarked_service_writing_into_an_ancestor_cgroup_stays_contained() {
    if !common::can_contain() || !nix::unistd::geteuid().is_root() {
        return;
    }
    let unbound = "cgroup v2 is not mounted with nsdelegate: the kernel lets a root \
                   process leave its cgroup namespace's root cgroup";
    if common::skipped(
        "NSDELEGATE",
        (!faultline::exec::cgroup::namespaces_bound_services()).then(|| unbound.to_string()),
    ) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let run = escape_run(dir.path(), true);
    let pid = run.escaper.0;
    assert!(run.escaped.is_empty(), "moved itself into {}", run.escaped);
    assert!(
        run.members.contains(&pid),
        "escaper {pid} left {}: {:?}",
        run.cgroup.display(),
        run.members
    );
    nothing_left(&run.escaper, &run.session, None);
}
