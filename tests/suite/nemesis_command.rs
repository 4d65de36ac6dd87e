//! The command nemesis with real shell commands.

use std::time::Duration;

use faultline::nemesis::command::CommandFault;

fn fault(dir: &std::path::Path, inject: &str) -> CommandFault {
    CommandFault {
        id: "f1".into(),
        inject: inject.into(),
        heal: "rm -f active".into(),
        cwd: dir.to_path_buf(),
        deadline: Duration::from_secs(5),
    }
}

#[tokio::test]
async fn inject_then_heal_runs_both_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let injected = fault(dir.path(), "touch active; echo injected")
        .inject(dir.path())
        .await
        .expect("inject");
    assert!(dir.path().join("active").exists());
    injected.heal().await.expect("heal");
    assert!(!dir.path().join("active").exists());
    let log = std::fs::read_to_string(dir.path().join("fault-f1-inject.stdout.log")).expect("log");
    assert_eq!(log, "injected\n");
}

#[tokio::test]
async fn a_dropped_fault_is_healed() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let _injected = fault(dir.path(), "touch active")
            .inject(dir.path())
            .await
            .expect("inject");
    }
    assert!(!dir.path().join("active").exists(), "fault left behind");
}

#[tokio::test]
async fn a_failing_inject_is_an_error_and_still_healed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = fault(dir.path(), "touch active; exit 7")
        .inject(dir.path())
        .await
        .expect_err("exit 7 is a failure");
    assert!(err.to_string().contains("Exited(7)"), "{err}");
    assert!(
        !dir.path().join("active").exists(),
        "half-applied fault left behind"
    );
}
