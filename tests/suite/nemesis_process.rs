//! The process nemesis against real victims, with landing read from /proc.

use std::process::{Child, Command};
use std::time::Duration;

use faultline::host::Host;
use faultline::nemesis::process::{self, Action, ProcState, Target};

/// The state `/proc` shows for `pid` on this machine.
fn proc_state(pid: i32) -> ProcState {
    process::state_of(
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .as_deref(),
    )
}

struct Victim(Child);

impl Victim {
    fn start(script: &str) -> Victim {
        Victim(
            Command::new("sh")
                .args(["-c", script])
                .spawn()
                .expect("victim starts"),
        )
    }

    fn pid(&self) -> i32 {
        i32::try_from(self.0.id()).expect("pid fits")
    }
}

impl Drop for Victim {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn pause_lands_and_heals() {
    let victim = Victim::start("exec sleep 30");
    let fault = process::inject(Host::local(), &Target::Pid(victim.pid()), Action::Pause)
        .await
        .expect("inject");
    let seen = fault.await_landing(Duration::from_secs(2)).await;
    assert!(seen.landed, "{}", seen.detail);
    assert_eq!(seen.state, ProcState::Stopped);
    fault.heal().await.expect("heal");
    assert_eq!(proc_state(victim.pid()), ProcState::Running);
}

#[tokio::test]
async fn an_unhealed_pause_is_healed_on_drop() {
    let victim = Victim::start("exec sleep 30");
    {
        let fault = process::inject(Host::local(), &Target::Pid(victim.pid()), Action::Pause)
            .await
            .expect("inject");
        assert!(fault.await_landing(Duration::from_secs(2)).await.landed);
    }
    assert_eq!(proc_state(victim.pid()), ProcState::Running);
}

#[tokio::test]
async fn kill_by_pidfile_lands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let victim = Victim::start("exec sleep 30");
    let pidfile = dir.path().join("n1.pid");
    std::fs::write(&pidfile, format!("{}\n", victim.pid())).expect("pidfile");
    let fault = process::inject(Host::local(), &Target::Pidfile(pidfile), Action::Kill)
        .await
        .expect("inject");
    let seen = fault.await_landing(Duration::from_secs(2)).await;
    assert!(seen.landed, "{}", seen.detail);
}

#[tokio::test]
async fn term_ignored_escalates_to_kill_on_heal() {
    let victim = Victim::start("trap '' TERM; while :; do sleep 0.05; done");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let fault = process::inject(
        Host::local(),
        &Target::Pid(victim.pid()),
        Action::Term {
            grace: Duration::from_millis(300),
        },
    )
    .await
    .expect("inject");
    assert!(!fault.observe().await.landed, "the victim ignores SIGTERM");
    let pid = fault.pid;
    let healed = fault.heal().await.expect("heal");
    assert!(healed.contains("SIGKILL"), "{healed}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(matches!(
        proc_state(pid),
        ProcState::Zombie | ProcState::Gone
    ));
}

#[tokio::test]
async fn a_bad_pidfile_names_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("bad.pid");
    std::fs::write(&pidfile, "not-a-pid\n").expect("write");
    let err = process::inject(Host::local(), &Target::Pidfile(pidfile), Action::Kill)
        .await
        .expect_err("must refuse");
    let text = err.to_string();
    assert!(
        text.contains("bad.pid") && text.contains("line 1"),
        "{text}"
    );
}

#[tokio::test]
async fn a_dead_target_is_refused_not_reported_as_injected() {
    let mut child = Command::new("true").spawn().expect("spawn");
    let pid = i32::try_from(child.id()).expect("pid");
    child.wait().expect("reap");
    assert!(
        process::inject(Host::local(), &Target::Pid(pid), Action::Kill)
            .await
            .is_err()
    );
}
