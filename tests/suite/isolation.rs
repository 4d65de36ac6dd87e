//! `isolate: netns` (issue 30): a run in a network namespace faultline makes for it is
//! left by no path with its namespace, its rules or its processes behind. The plan is
//! `faultline new`'s, filled for the demo store, with n3 on 127.0.0.3 — an address only
//! the run's namespace answers on without setup — and S2's pause made a partition of
//! n3 held for 6 s. Killed (SIGKILL) with the partition in place: the watchdog deletes
//! the namespace; with the watchdog off, `faultline heal` does; `faultline resume` then
//! runs on in a new namespace and deletes that one too.
//!
//! Needs root, iproute2 and iptables: with `FAULTLINE_REQUIRE_NETNS=1` (CI) a missing
//! one fails the test, otherwise it SKIPs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;

const EXE: &str = env!("CARGO_BIN_EXE_faultline");

fn missing() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root: a network namespace needs CAP_SYS_ADMIN".into());
    }
    for tool in ["ip", "iptables"] {
        let found = Command::new(tool)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if found.is_err() {
            return Some(format!(
                "`{tool}` is missing (apt-get install iproute2 iptables)"
            ));
        }
    }
    None
}

/// `faultline new iso` in `dir`, filled for the demo store, isolated, with S2's pause
/// made a 6 s partition of n3 (on 127.0.0.3). Returns the plan's path.
fn isolated_plan(dir: &Path) -> PathBuf {
    let out = Command::new(EXE)
        .args(["new", "iso"])
        .current_dir(dir)
        .output()
        .expect("faultline new");
    assert!(out.status.success(), "{out:?}");
    let plan = dir.join("docs/testing-plans/iso.md");
    let spec = dir.join("docs/testing-plans/iso.run.yaml");
    let text = std::fs::read_to_string(&plan).expect("plan");
    std::fs::write(&plan, crate::new_plan::plan_for_demo(&text)).expect("plan");
    let filled =
        crate::new_plan::filled_for_demo(&std::fs::read_to_string(&spec).expect("run spec"));
    let pause = "        process: { signal: SIGSTOP, target: { service: n3 } }\n";
    assert!(filled.contains(pause), "{filled}");
    let isolated = filled
        .replacen("version: 1\n", "version: 1\nisolate: netns\n", 1)
        .replace("127.0.0.1:${port:n3}", "127.0.0.3:${port:n3}")
        .replace("duration: 1500ms", "duration: 6s")
        .replace(
            pause,
            "        net: { drop: [ { destination: 127.0.0.3 } ] }\n",
        );
    std::fs::write(&spec, isolated).expect("run spec");
    plan
}

/// The one session directory under `out`, once it has a journal.
fn session_under(out: &Path) -> Option<PathBuf> {
    let mut stack = vec![out.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            if path.join("journal.jsonl").is_file() {
                return Some(path);
            }
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    None
}

fn netns_names() -> String {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Starts S2 headless and SIGKILLs faultline once the partition is in; returns the
/// session and the namespace's (name, inode).
fn killed_with_the_partition_held(
    plan: &Path,
    out: &Path,
    watchdog: bool,
) -> (PathBuf, String, u64) {
    let mut cmd = Command::new(EXE);
    cmd.arg("run")
        .arg(plan)
        .arg("--out")
        .arg(out)
        .args([
            "--headless",
            "--yes",
            "--approve-privileged",
            "--only",
            "S2",
        ])
        .current_dir(plan.parent().expect("plan dir"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if !watchdog {
        cmd.env("FAULTLINE_WATCHDOG", "off");
    }
    let mut child = cmd.spawn().expect("faultline run");
    let end = Instant::now() + Duration::from_secs(60);
    let session = loop {
        let injected = session_under(out).filter(|s| {
            !common::journal_of_kind(&common::journal_values(s), "fault-injected").is_empty()
        });
        if let Some(session) = injected {
            break session;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("faultline ended before the partition went in: {status}");
        }
        assert!(Instant::now() < end, "no fault-injected within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    };
    let journal = common::journal_values(&session);
    let made = common::journal_of_kind(&journal, "netns-created");
    assert_eq!(made.len(), 1, "{made:?}");
    let name = made[0]["data"]["name"].as_str().expect("name").to_string();
    let inode = made[0]["data"]["inode"].as_u64().expect("inode");
    assert!(netns_names().contains(&name), "{name} while the run goes");
    // The rule is in the run's namespace, by name, and not in the host's.
    let rules = Command::new("ip")
        .args(["netns", "exec", &name, "iptables", "-w", "-S"])
        .output()
        .expect("iptables in the run's namespace");
    let inside = String::from_utf8_lossy(&rules.stdout).into_owned();
    assert!(inside.contains("-d 127.0.0.3/32"), "{inside}");
    let host = Command::new("iptables")
        .args(["-w", "-S"])
        .output()
        .expect("iptables");
    assert!(
        !String::from_utf8_lossy(&host.stdout).contains("127.0.0.3"),
        "a rule of the run in the host's namespace"
    );
    child.kill().expect("SIGKILL faultline");
    let _ = child.wait();
    (session, name, inode)
}

/// The namespace is gone and nothing of the run is in it or its place.
fn assert_gone(session: &Path, name: &str, inode: u64, by: &str) {
    let removed: Vec<Value> =
        common::journal_of_kind(&common::journal_values(session), "netns-removed")
            .into_iter()
            .filter(|r| r["data"]["name"] == name)
            .collect();
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(removed[0]["data"]["by"], by, "{removed:?}");
    assert_eq!(
        removed[0]["data"]["result"]["Ok"],
        format!("network namespace {name} deleted"),
        "{removed:?}"
    );
    assert!(!netns_names().contains(name), "{name} still listed");
    let end = Instant::now() + Duration::from_secs(10);
    while !common::netns_holders(inode).is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        common::netns_holders(inode),
        Vec::<String>::new(),
        "still in {name}"
    );
}

fn said(out: &Output) -> String {
    format!(
        "{}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn an_isolated_run_leaves_no_namespace_by_any_way_out() {
    if common::skipped("NETNS", missing()) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = isolated_plan(dir.path());

    // Killed with the watchdog on: the watchdog deletes the namespace.
    let out = dir.path().join("watched");
    let (session, name, inode) = killed_with_the_partition_held(&plan, &out, true);
    common::await_watchdogs(&session, Duration::from_secs(20));
    assert_gone(&session, &name, inode, "faultline watchdog");

    // Killed with the watchdog off: the namespace (and its rule) stays until
    // `faultline heal`, which deletes it.
    let out = dir.path().join("unwatched");
    let (session, name, inode) = killed_with_the_partition_held(&plan, &out, false);
    std::thread::sleep(Duration::from_millis(300));
    assert!(netns_names().contains(&name), "nobody healed yet");
    let heal = Command::new(EXE)
        .arg("heal")
        .arg(&session)
        .output()
        .expect("heal");
    assert!(heal.status.success(), "{}", said(&heal));
    assert!(
        String::from_utf8_lossy(&heal.stdout)
            .contains(&format!("network namespace {name} deleted")),
        "{}",
        said(&heal)
    );
    // The services (in the namespace) ended with their groups: nothing holds it.
    assert_gone(&session, &name, inode, "faultline heal");

    // Resumed: it runs on in a namespace of its own, deleted at its end.
    let resume = Command::new(EXE)
        .arg("resume")
        .arg(&session)
        .args(["--headless", "--yes", "--approve-privileged"])
        .current_dir(dir.path())
        .output()
        .expect("resume");
    assert!(
        matches!(resume.status.code(), Some(0..=3)),
        "{}",
        said(&resume)
    );
    let made = common::journal_of_kind(&common::journal_values(&session), "netns-created");
    assert_eq!(
        made.len(),
        2,
        "one namespace per process that ran: {made:?}"
    );
    let again = made[1]["data"]["name"].as_str().expect("name").to_string();
    assert_ne!(again, name);
    let inode = made[1]["data"]["inode"].as_u64().expect("inode");
    let removed = common::journal_of_kind(&common::journal_values(&session), "netns-removed");
    let last = removed.last().expect("removed");
    assert_eq!(last["data"]["name"], again.as_str());
    assert!(last["data"]["by"].is_null(), "the run's own end: {last}");
    assert!(!netns_names().contains(&again));
    common::await_watchdogs(&session, Duration::from_secs(10));
    assert_eq!(common::netns_holders(inode), Vec::<String>::new());
}
