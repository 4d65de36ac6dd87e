//! `faultline heal` from a journal alone: a paused process it recorded is resumed, a
//! recorded command fault's heal command runs, a group it started is ended, and a pid
//! whose start time does not match the record (a reused pid) is left alone.

use crate::common;
use crate::common::AppendKind;

use std::os::unix::process::CommandExt;
use std::process::Command;

use faultline::session::journal::{Journal, Scope};
use serde_json::json;

fn state(pid: u32) -> char {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(") ").next().and_then(|r| r.chars().next()))
        .unwrap_or('?')
}

#[test]
fn heal_resumes_runs_heal_commands_ends_groups_and_spares_strangers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let paused = Command::new("sleep").arg("100").spawn().expect("sleep");
    let mut group = Command::new("sleep")
        .arg("100")
        .process_group(0)
        .spawn()
        .expect("sleep");
    let stranger = Command::new("sleep").arg("100").spawn().expect("sleep");
    let paused_pid = paused.id() as i32;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(paused_pid),
        nix::sys::signal::Signal::SIGSTOP,
    )
    .expect("SIGSTOP");
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(state(paused.id()), 'T');

    let scope = Scope {
        scenario: Some("X1".into()),
        arm: None,
    };
    let mut journal = Journal::open(&dir.path().join("journal.jsonl")).expect("journal");
    let started = |pid: u32| faultline::exec::start_time(pid as i32);
    journal
        .append_kind(
            scope.clone(),
            "fault-injected",
            &json!({"fault": "pause", "pid": paused_pid,
            "undo": {"pid": paused_pid, "action": "Pause", "started": started(paused.id())}}),
        )
        .expect("append");
    journal
        .append_kind(
            scope.clone(),
            "fault-injected",
            &json!({"fault": "flag", "pid": null,
            "undo": {"heal": "touch healed-by-command", "cwd": dir.path().display().to_string()}}),
        )
        .expect("append");
    journal
        .append_kind(
            scope.clone(),
            "command-started",
            &json!({"name": "svc", "pgid": group.id(),
            "started": started(group.id())}),
        )
        .expect("append");
    // A record whose start time does not match: a pid reused by someone else.
    journal
        .append_kind(
            scope,
            "command-started",
            &json!({"name": "old", "pgid": stranger.id(),
            "started": started(stranger.id()).map(|t| t + 1)}),
        )
        .expect("append");
    drop(journal);

    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("heal")
        .arg(dir.path())
        .output()
        .expect("faultline heal");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_ne!(state(paused.id()), 'T', "still paused: {text}");
    assert!(dir.path().join("healed-by-command").exists(), "{text}");
    let _ = group.wait();
    assert!(!common::group_alive(group.id() as i32), "{text}");
    assert!(
        common::pid_alive(stranger.id() as i32),
        "a stranger was killed"
    );

    let records = crate::common::lines(&dir.path().join("journal.jsonl"));
    let healed = records.iter().filter(|r| r.kind == "fault-healed").count();
    assert_eq!(healed, 2);
    for mut child in [paused, stranger] {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A journal whose last record lost its newline (the `fault-injected` undo record of
/// the second fault): the next writer (here a resume's first record) puts the newline
/// back before its own, so `faultline heal` still finds and heals both faults and no
/// line of the journal is damaged.
#[test]
fn a_journal_missing_its_last_newline_heals_every_fault() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    let scope = Scope {
        scenario: Some("X1".into()),
        arm: None,
    };
    let mut journal = Journal::open(&path).expect("journal");
    for flag in ["first-healed", "second-healed"] {
        journal
            .append_kind(
                scope.clone(),
                "fault-injected",
                &json!({"fault": flag, "pid": null,
                "undo": {"heal": format!("touch {flag}"), "cwd": dir.path().display().to_string()}}),
            )
            .expect("append");
    }
    drop(journal);
    let bytes = std::fs::read(&path).expect("journal bytes");
    assert_eq!(bytes.last(), Some(&b'\n'));
    std::fs::write(&path, &bytes[..bytes.len() - 1]).expect("newline cut");

    let mut journal = Journal::open(&path).expect("reopened");
    journal
        .append_kind(scope, "step", &json!({"what": "resumed"}))
        .expect("append");
    drop(journal);
    let contents = faultline::session::journal::read(&path).expect("read");
    assert!(contents.skipped.is_empty(), "{:?}", contents.skipped);
    assert_eq!(contents.records.len(), 3);

    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("heal")
        .arg(dir.path())
        .output()
        .expect("faultline heal");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for flag in ["first-healed", "second-healed"] {
        assert!(dir.path().join(flag).exists(), "{flag} never ran: {text}");
    }
    let records = common::lines(&path);
    let healed = records.iter().filter(|r| r.kind == "fault-healed").count();
    assert_eq!(healed, 2, "{text}");
}
