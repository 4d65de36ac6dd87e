//! Child processes for real: process groups, logs on disk, deadlines that end the group.

use std::path::Path;
use std::time::Duration;

use crate::common;

use common::pid_alive;
use faultline::exec::{self, CommandSpec, Outcome};

fn spec(name: &str, command: &str, cwd: &Path) -> CommandSpec {
    CommandSpec {
        name: name.to_string(),
        command: command.to_string(),
        cwd: cwd.to_path_buf(),
        env: vec![("FAULTLINE_TEST_VAR".into(), "seen".into())],
    }
}

async fn eventually_dead(pid: i32) -> bool {
    for _ in 0..50 {
        if !pid_alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn output_goes_to_files_and_exit_code_is_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut run = exec::spawn(
        &spec(
            "w",
            "echo out-$FAULTLINE_TEST_VAR; echo err >&2; exit 3",
            dir.path(),
        ),
        dir.path(),
    )
    .expect("spawn");
    assert_eq!(
        run.wait(Duration::from_secs(10)).await.expect("wait"),
        Outcome::Exited(3)
    );
    let out = std::fs::read_to_string(&run.stdout_log).expect("stdout log");
    let err = std::fs::read_to_string(&run.stderr_log).expect("stderr log");
    assert_eq!(out, "out-seen\n");
    assert_eq!(err, "err\n");
}

#[tokio::test]
async fn a_child_runs_in_its_own_process_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut run =
        exec::spawn(&spec("g", "ps -o pgid= -p $$", dir.path()), dir.path()).expect("spawn");
    run.wait(Duration::from_secs(10)).await.expect("wait");
    let pgid: i32 = std::fs::read_to_string(&run.stdout_log)
        .expect("log")
        .trim()
        .parse()
        .expect("pgid printed");
    assert_eq!(pgid, run.pgid);
    assert_ne!(
        pgid,
        nix::unistd::getpgrp().as_raw(),
        "child shares the test's group"
    );
}

#[tokio::test]
async fn an_expired_deadline_ends_the_whole_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = "sleep 30 & echo $! > bg.pid; trap '' TERM; sleep 30";
    let mut run = exec::spawn(&spec("slow", command, dir.path()), dir.path()).expect("spawn");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let bg: i32 = std::fs::read_to_string(dir.path().join("bg.pid"))
        .expect("bg pid")
        .trim()
        .parse()
        .expect("pid");
    assert!(pid_alive(bg));
    let outcome = run.wait(Duration::from_millis(300)).await.expect("wait");
    assert_eq!(outcome, Outcome::DeadlineExpired);
    assert!(
        eventually_dead(bg).await,
        "background member {bg} outlived the group"
    );
    assert!(!pid_alive(run.pgid), "leader outlived its deadline");
}

#[tokio::test]
async fn signalling_a_vanished_group_is_not_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut run = exec::spawn(&spec("q", "true", dir.path()), dir.path()).expect("spawn");
    run.wait(Duration::from_secs(5)).await.expect("wait");
    assert!(exec::signal_group(run.pgid, nix::sys::signal::Signal::SIGKILL).is_ok());
}

/// A grandchild that leaves its process group still carries the session's mark, so
/// healing finds it by the mark alone.
///
/// `mark_children` marks every child this process starts from then on, and nothing
/// unmarks (one session per process): in the one test binary, the children other tests
/// start meanwhile would carry this session's mark and be ended below with the
/// grandchild. So the body runs in a process of its own.
#[tokio::test]
async fn children_carry_the_session_mark_even_out_of_their_group() {
    if !common::in_own_process("exec::children_carry_the_session_mark_even_out_of_their_group") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let session = dir.path().join("session");
    std::fs::create_dir(&session).expect("session dir");
    assert!(exec::mark::marked(&session).is_empty());
    exec::mark::mark_children(&session);
    // setsid: the grandchild escapes the group faultline would end. It writes its pid
    // only after setsid(2), so the group kill below cannot race the escape.
    let mut run = exec::spawn(
        &spec(
            "escape",
            "setsid sh -c 'echo $$ > escaped.pid.tmp; mv escaped.pid.tmp escaped.pid; exec sleep 30' & wait",
            dir.path(),
        ),
        dir.path(),
    )
    .expect("spawn");
    let pidfile = dir.path().join("escaped.pid");
    let mut escaped = None;
    for _ in 0..100 {
        escaped = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok());
        if escaped.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let escaped = escaped.expect("the grandchild's pid");
    exec::signal_group(run.pgid, nix::sys::signal::Signal::SIGKILL).expect("group ended");
    let _ = run.wait(Duration::from_secs(5)).await;
    assert!(pid_alive(escaped), "setsid took it out of the group");
    // Polled: while `sh` execs `sleep`, /proc shows neither command line yet.
    let mut found = Vec::new();
    for _ in 0..100 {
        found = exec::mark::marked(&session);
        if found
            .iter()
            .any(|m| m.pid == escaped && m.command.contains("sleep 30"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        found
            .iter()
            .any(|m| m.pid == escaped && m.command.contains("sleep 30")),
        "{found:?}"
    );
    // Another session's mark does not match.
    assert!(exec::mark::marked(dir.path()).is_empty());
    for process in &found {
        exec::mark::end(process).expect("ended");
    }
    assert!(
        eventually_dead(escaped).await,
        "the marked grandchild survived"
    );
}
