//! A dropped SSH link, for real: the TUI runs in a tmux pane with a fault held (a long
//! SIGSTOP of the demo's n3); the faultline process gets SIGHUP. It must heal the
//! fault, end every process group it started, leave the alternate screen and exit
//! with 128 + SIGHUP. CI installs tmux and sets FAULTLINE_REQUIRE_TMUX=1.

use crate::common;
use crate::support::tmux;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The child of `parent` (the pane's shell runs faultline as its only child).
fn child_of(parent: i32) -> Option<i32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (_, after) = stat.rsplit_once(") ")?;
            let ppid: i32 = after.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == parent).then_some(pid)
        })
}

fn journal(root: &Path) -> Option<PathBuf> {
    std::fs::read_dir(root.join("demo-kv-replication"))
        .ok()?
        .flatten()
        .map(|e| e.path().join("journal.jsonl"))
        .find(|p| p.exists())
}

fn wait(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

#[test]
fn sighup_with_a_fault_active_heals_ends_children_and_restores_the_terminal() {
    if !tmux::available("the hang-up test") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.md");
    std::fs::write(&plan, faultline::launch::DEMO_PLAN).expect("plan");
    let spec = faultline::launch::DEMO_RUN_SPEC.replace("duration: 1500ms", "duration: 8s");
    assert_ne!(spec, faultline::launch::DEMO_RUN_SPEC);
    std::fs::write(dir.path().join("plan.run.yaml"), spec).expect("spec");
    // The checklist is answered by file, so the UI goes straight to the run.
    std::fs::write(
        dir.path().join("answers.yaml"),
        "capability.binary:fl-client: as probed\ncapability.binary:demo-skewd: as probed\n\
         install.binary:fl-client: decline\nmissing.binary:fl-client: proceed\n\
         missing.binary:demo-skewd: proceed\n",
    )
    .expect("answers");
    let root = dir.path().join("out");
    let command = format!(
        "cd {dir} && export LANG=C.UTF-8; {exe} run plan.md --only D2 --answers answers.yaml \
         --out {root}; echo \"faultline exited $?\"; read go; \
         {exe} resume {root}/demo-kv-replication/* --answers answers.yaml; \
         echo \"resume exited $?\"; sleep 60",
        dir = dir.path().display(),
        exe = env!("CARGO_BIN_EXE_faultline"),
        root = root.display()
    );
    let pane = tmux::Tmux::start("fl-hup", &command);
    let shell: i32 = pane.show("#{pane_pid}").parse().expect("pane pid");

    let injected = wait(Duration::from_secs(60), || {
        journal(&root)
            .and_then(|j| std::fs::read_to_string(j).ok())
            .is_some_and(|t| t.contains("\"fault-injected\""))
    });
    assert!(injected, "no fault injected:\n{}", pane.screen());
    assert_eq!(pane.show("#{alternate_on}"), "1", "the UI is on screen");
    let faultline = child_of(shell).expect("faultline runs in the pane");
    let path = journal(&root).expect("journal");
    let before = crate::common::lines(&path);
    let victim = before
        .iter()
        .find(|r| r.kind == "fault-injected")
        .and_then(|r| r.data["pid"].as_i64())
        .and_then(|p| i32::try_from(p).ok())
        .expect("victim pid");
    assert_eq!(
        faultline::nemesis::process::proc_state(victim),
        faultline::nemesis::process::ProcState::Stopped
    );

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(faultline),
        nix::sys::signal::Signal::SIGHUP,
    )
    .expect("SIGHUP sent");
    let exited = wait(Duration::from_secs(30), || {
        pane.screen().contains("faultline exited")
    });
    assert!(exited, "faultline did not exit:\n{}", pane.screen());
    let screen = pane.screen();
    assert!(screen.contains("faultline exited 129"), "{screen}");
    assert_eq!(pane.show("#{alternate_on}"), "0", "alternate screen left");

    let records = crate::common::lines(&path);
    let injected_at = records.iter().position(|r| r.kind == "fault-injected");
    let healed_at = records.iter().position(|r| r.kind == "fault-healed");
    assert!(
        matches!((injected_at, healed_at), (Some(i), Some(h)) if i < h),
        "the fault was not healed"
    );
    let alive: Vec<i64> = records
        .iter()
        .filter(|r| r.kind == "command-started")
        .filter_map(|r| r.data["pgid"].as_i64())
        .filter(|g| i32::try_from(*g).is_ok_and(common::group_alive))
        .collect();
    assert!(
        alive.is_empty(),
        "process groups outlived faultline: {alive:?}"
    );

    // Back on the link: the same session resumed in the UI runs D2 again to a verdict.
    pane.send(&["Enter"]);
    let decided = wait(Duration::from_secs(90), || {
        faultline::session::journal::read(&path).is_ok_and(|c| {
            c.records
                .iter()
                .skip_while(|r| r.kind() != "session-resumed")
                .any(|r| r.kind() == "session-verdict")
        })
    });
    assert!(
        decided,
        "the resumed session never ended:\n{}",
        pane.screen()
    );
    let resumed = crate::common::lines(&path);
    assert!(resumed.iter().any(|r| r.kind == "session-resumed"));
    assert!(
        resumed
            .iter()
            .any(|r| r.kind == "verdict" && r.data["id"] == "D2" && r.data["verdict"] != "NOT-RUN"),
        "D2 ran again after the resume"
    );
    // `q` ends the UI at once only after the engine ended (the Report screen).
    let reported = wait(Duration::from_secs(30), || {
        pane.screen().contains("Tab: report text")
    });
    assert!(reported, "no report screen:\n{}", pane.screen());
    pane.send(&["q"]);
    let ended = wait(Duration::from_secs(20), || {
        pane.screen().contains("resume exited")
    });
    assert!(ended, "the resumed UI did not quit:\n{}", pane.screen());
}
