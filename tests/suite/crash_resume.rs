//! faultline is SIGKILLed again and again through the demo and resumed each time: at
//! least once after every kind of journal event the demo writes, during a heal, while
//! the report is being written, and once with a torn last journal line. After every
//! kill, before anyone resumes, its watchdog has healed every fault, ended every
//! process group the journal recorded and removed every cgroup it made. At the end no
//! fault is left injected, no process group it started is alive, no cgroup of it
//! remains, every journal byte written before each kill is still there, and the
//! verdicts equal an uninterrupted run's. Each kill point is the first record matching
//! it that the newly started process appends, so every cycle moves the demo forward.
//!
//! The kill points are cut into chains ([`CHAINS`]), a test each: each chain is a demo
//! session of its own, killed at its points only, and asserts all of the above for its
//! kills, so nextest runs the chains side by side instead of 48 cycles one after
//! another. Together the chains kill at every point, and every chain's session ends
//! with the uninterrupted run's verdicts.

use crate::common;
use crate::common::Line;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where faultline is killed: the first new record of `kind` (in `scenario`, when given).
struct KillPoint {
    kind: &'static str,
    scenario: Option<&'static str>,
}

const fn at(kind: &'static str) -> KillPoint {
    KillPoint {
        kind,
        scenario: None,
    }
}

const fn at_in(kind: &'static str, scenario: &'static str) -> KillPoint {
    KillPoint {
        kind,
        scenario: Some(scenario),
    }
}

/// In demo order. The first only happens in a fresh run; `session-resumed` and
/// `heal-started` only in a resumed one (the latter: killed during its heal).
static KILL_POINTS: [KillPoint; 48] = [
    at("session-started"),
    // The session server's first record: the first of a resumed run after its heal.
    at("session-roles"),
    at("watchdog"),
    at("session-resumed"),
    at("heal-started"),
    at("operator-answer"),
    at("checklist-complete"),
    at("capability"),
    at("install-declined"),
    at("install-not-offered"),
    at("capability-matrix"),
    // The outcome's session part, journaled again once the preflight settled the
    // capabilities (a resumed run journaled its scenarios at its start); then D1's
    // outcome as it gets under way.
    at("outcome-session"),
    at("outcome-scenario"),
    at("budget"),
    at("audit-declared"),
    at("iteration-started"),
    // Only where cgroup v2 is usable (see `kill_points`).
    at("cgroup-created"),
    at("command-started"),
    at("precondition"),
    // Where the workload's history grows (the live chart's), before the workload starts.
    at("history-live"),
    at("checkpoint-start"),
    at("command-exited"),
    at("checkpoint-end"),
    at("quiesce"),
    at("oracle-result"),
    at("service-stopped"),
    at("cgroup-removed"),
    at_in("verdict", "D1"),
    at_in("fault-intent", "D2"),
    at_in("fault-injected", "D2"),
    at_in("landing-injector", "D2"),
    at_in("landing-declared", "D2"),
    // The one proof decision of the fault, after its signals were looked for.
    at_in("fault-proof", "D2"),
    at_in("fault-healed", "D2"),
    at_in("verdict", "D2"),
    // The primary's end, explained by its kill fault.
    at_in("service-exited", "D3"),
    at_in("rerun-result", "D3"),
    at_in("reduction-started", "D3"),
    at_in("reduction-candidate", "D3"),
    at_in("reduction-result", "D3"),
    at_in("operator-answer", "D3"),
    at_in("fault-injected", "D4"),
    at_in("seeds-stopped", "D4"),
    at_in("not-run", "D5"),
    at_in("arms-aggregated", "D5"),
    at_in("env-missing", "D6"),
    at_in("env-missing", "D7"),
    at("session-verdict"),
];

/// The kill points this machine reaches: the cgroup kinds only where faultline can
/// hold services in cgroups (elsewhere it says so once and never writes them).
fn kill_points() -> Vec<&'static KillPoint> {
    let contained = faultline::exec::cgroup::base().is_ok();
    KILL_POINTS
        .iter()
        .filter(|p| contained || !p.kind.starts_with("cgroup-"))
        .collect()
}

/// cgroups the journal says were made that still exist (each name is used once).
fn left_cgroups(records: &[Line]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r.kind == "cgroup-created")
        .filter_map(|r| r.data["path"].as_str())
        .filter(|p| Path::new(p).exists())
        .map(str::to_string)
        .collect()
}

/// After this kill point, half a record is appended, as a crash mid-write leaves it.
const TORN_AFTER: &str = "capability-matrix";

/// Starts faultline; with `crash`, it SIGKILLs itself right after that record is on
/// disk (`FAULTLINE_CRASH_AFTER`), an exact kill point instead of a race with it.
fn faultline(args: &[&str], cwd: &Path, crash: Option<&KillPoint>) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_faultline"));
    if let Some(point) = crash {
        let at = match point.scenario {
            Some(id) => format!("{}@{id}", point.kind),
            None => point.kind.to_string(),
        };
        command.env(faultline::session::journal::CRASH_AFTER, at);
    }
    command
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("faultline starts")
}

/// The session directory under `root` (the demo makes exactly one).
fn session_in(root: &Path) -> Option<PathBuf> {
    std::fs::read_dir(root.join("demo-kv-replication"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("journal.jsonl").exists())
}

/// Waits for `child` to end; true when it was SIGKILLed (its crash point came), false
/// when it ended by itself first.
fn crashed(child: &mut Child) -> bool {
    use std::os::unix::process::ExitStatusExt;
    let deadline = Instant::now() + Duration::from_secs(240);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return status.signal() == Some(9);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// Process groups the journal recorded that are still alive.
fn alive_groups(records: &[Line]) -> Vec<i32> {
    records
        .iter()
        .filter(|r| r.kind == "command-started" && common::journaled_group_alive(r))
        .filter_map(|r| r.data["pgid"].as_i64())
        .filter_map(|p| i32::try_from(p).ok())
        .collect()
}

/// Every `fault-injected` has a later `fault-healed` for the same scope and fault.
fn unhealed(records: &[Line]) -> Vec<String> {
    let mut open: Vec<&Line> = Vec::new();
    for r in records {
        match r.kind.as_str() {
            "fault-injected" => open.push(r),
            "fault-healed" => {
                open.retain(|o| !(o.scope == r.scope && o.data["fault"] == r.data["fault"]))
            }
            _ => {}
        }
    }
    open.iter()
        .map(|r| format!("{:?} {}", r.scope, r.data["fault"]))
        .collect()
}

/// Where each chain of kills starts in [`KILL_POINTS`]: each chain is a session of its
/// own through the whole demo, killed at the points from its start to the next chain's
/// (a test each, so nextest runs them side by side). A chain starts at a point a fresh
/// run reaches; the torn last line is in the first. Cut where the chains cost about the
/// same: every chain runs the whole demo once, and a kill inside a scenario repeats
/// that scenario up to the kill (D3, with its rerun and reduction, is half the demo).
const CHAINS: [usize; 5] = [0, 28, 35, 39, 41];

/// The kill points of chain `n` this machine reaches, in demo order.
fn chain(n: usize) -> Vec<&'static KillPoint> {
    let end = CHAINS.get(n + 1).copied().unwrap_or(KILL_POINTS.len());
    let reached = kill_points();
    KILL_POINTS[CHAINS[n]..end]
        .iter()
        .filter(|p| reached.iter().any(|r| std::ptr::eq(*r, *p)))
        .collect()
}

fn label(point: &KillPoint) -> String {
    format!(
        "{}{}",
        point.kind,
        point.scenario.map(|s| format!("@{s}")).unwrap_or_default()
    )
}

#[test]
fn the_chains_cover_every_kill_point_once_in_demo_order() {
    let chained: Vec<String> = (0..CHAINS.len()).flat_map(chain).map(label).collect();
    let all: Vec<String> = kill_points().into_iter().map(label).collect();
    assert_eq!(chained, all);
    assert!(chain(0).iter().any(|p| p.kind == TORN_AFTER));
    for n in 0..CHAINS.len() {
        // Only a resumed run writes these: a fresh demo would never be killed there.
        let first = chain(n)[0];
        assert!(
            !["session-resumed", "heal-started"].contains(&first.kind),
            "chain {n} starts at {}",
            label(first)
        );
    }
}

#[test]
fn killed_anywhere_in_the_preflight_and_the_first_scenario_the_demo_ends_as_if_never_killed() {
    let kills = killed_and_resumed(&chain(0));
    // "After every kind of journal event the demo writes" holds as the demo grows.
    let baseline_session = common::session_of(&common::demo_run().out);
    let uncovered: std::collections::BTreeSet<String> = common::records(&baseline_session)
        .into_iter()
        .map(|r| r.kind)
        .filter(|kind| !kill_points().iter().any(|p| p.kind == kind))
        .collect();
    assert!(
        uncovered.is_empty(),
        "journal kinds with no kill point: {uncovered:?} (this chain: {kills:?})"
    );
}

#[test]
fn killed_anywhere_in_a_fault_s_life_the_demo_ends_as_if_never_killed() {
    killed_and_resumed(&chain(1));
}

#[test]
fn killed_anywhere_in_a_failing_run_and_its_rerun_the_demo_ends_as_if_never_killed() {
    killed_and_resumed(&chain(2));
}

#[test]
fn killed_at_the_reduction_s_result_and_its_question_the_demo_ends_as_if_never_killed() {
    killed_and_resumed(&chain(3));
}

#[test]
fn killed_anywhere_in_the_last_scenarios_the_demo_ends_as_if_never_killed() {
    killed_and_resumed(&chain(4));
}

/// Runs the demo in a session of its own, SIGKILLs faultline at each of `points` in
/// turn and resumes it, and asserts what the file header says; returns the kills made.
fn killed_and_resumed(points: &[&KillPoint]) -> Vec<String> {
    let work = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let root = work.path().join("crashed");
    let mut child = faultline(
        &[
            "demo",
            "--headless",
            "--yes",
            "--out",
            root.to_str().expect("utf-8"),
        ],
        work.path(),
        points.first().copied(),
    );
    let mut kept_bytes: Vec<u8> = Vec::new();
    let mut kills = Vec::new();
    for (i, point) in points.iter().enumerate() {
        assert!(
            crashed(&mut child),
            "faultline ended before kill point {} {:?} (kills so far: {kills:?})",
            point.kind,
            point.scenario
        );
        kills.push(label(point));
        eprintln!("killed at {} after {:?}", label(point), started.elapsed());
        let session = session_in(&root).expect("session");
        let journal = session.join("journal.jsonl");
        // Children never outlive faultline: its watchdog cleans up before any resume.
        common::await_watchdogs(&session, Duration::from_secs(60));
        let now = common::records(&session);
        assert!(
            unhealed(&now).is_empty(),
            "the watchdog left injected after {kills:?}: {:?}",
            unhealed(&now)
        );
        let alive = alive_groups(&now);
        let members: Vec<String> = alive
            .iter()
            .flat_map(|&g| common::group_members(g))
            .collect();
        assert!(
            alive.is_empty(),
            "process groups outlived faultline after {kills:?}: {alive:?}: {members:?}"
        );
        let cgroups = left_cgroups(&now);
        assert!(
            cgroups.is_empty(),
            "cgroups outlived faultline after {kills:?}: {cgroups:?}"
        );
        let marked = faultline::exec::mark::marked(&session);
        assert!(
            marked.is_empty(),
            "processes with the session's mark outlived faultline after {kills:?}: {marked:?}"
        );
        let bytes = std::fs::read(&journal).expect("journal");
        assert!(
            bytes.starts_with(&kept_bytes),
            "journal lines written before an earlier kill are gone (after {kills:?})"
        );
        kept_bytes = bytes;
        if point.kind == TORN_AFTER {
            let mut torn = kept_bytes.clone();
            torn.extend_from_slice(
                br#"{"seq":99999,"ts":"2026-12-01T00:00:00.000Z","scenario":nu"#,
            );
            std::fs::write(&journal, &torn).expect("torn tail");
        }
        child = faultline(
            &[
                "resume",
                session.to_str().expect("utf-8"),
                "--headless",
                "--yes",
            ],
            work.path(),
            points.get(i + 1).copied(),
        );
    }
    let status = child.wait().expect("last resume ends");
    assert!(status.code().is_some(), "the last resume ran to its end");
    eprintln!("the last resume ended after {:?}", started.elapsed());

    let session = session_in(&root).expect("session");
    let journal = session.join("journal.jsonl");
    let bytes = std::fs::read(&journal).expect("journal");
    assert!(
        bytes.starts_with(&kept_bytes),
        "journal prefix kept to the end"
    );
    let all = common::records(&session);
    assert!(
        unhealed(&all).is_empty(),
        "left injected: {:?}",
        unhealed(&all)
    );
    assert!(all.iter().any(|r| r.kind == "command-started"));
    let alive = alive_groups(&all);
    assert!(
        alive.is_empty(),
        "process groups outlived the session: {alive:?}"
    );
    let cgroups = left_cgroups(&all);
    assert!(
        cgroups.is_empty(),
        "cgroups outlived the session: {cgroups:?}"
    );
    if points.iter().any(|p| p.kind == TORN_AFTER) {
        let torn = std::fs::read_to_string(session.join("journal.torn")).expect("journal.torn");
        assert!(torn.contains(r#""seq":99999"#), "{torn}");
        assert!(all.iter().any(|r| r.kind == "journal-torn-tail"));
    }
    // The uninterrupted baseline is the demo run the whole binary shares: the same
    // `faultline demo --headless --yes --out ROOT`, only read here, once the kills are
    // done (the first test to ask runs it; waiting for it first would hold this chain).
    let expected = common::verdicts_by_id(&common::session_of(&common::demo_run().out));
    assert_eq!(
        common::verdicts_by_id(&session),
        expected,
        "kill points: {kills:?}"
    );
    eprintln!("{} kill points, each resumed: {kills:?}", kills.len());
    kills
}

#[test]
fn a_scenario_caught_part_way_can_be_kept_as_it_stood() {
    let work = tempfile::tempdir().expect("tempdir");
    let root = work.path().join("sessions");
    let mut child = faultline(
        &[
            "demo",
            "--headless",
            "--yes",
            "--only",
            "D5",
            "--out",
            root.to_str().expect("utf-8"),
        ],
        work.path(),
        Some(&at_in("verdict", "D5")),
    );
    // Killed once the first of D5's two arms has its verdict.
    assert!(crashed(&mut child));
    let session = session_in(&root).expect("session");
    let decided: Vec<String> = common::records(&session)
        .iter()
        .filter(|r| r.kind == "verdict" && r.scope.scenario.as_deref() == Some("D5"))
        .filter_map(|r| r.data["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(decided.len(), 1, "{decided:?}");
    std::fs::write(work.path().join("answers.yaml"), "resume.D5: keep\n").expect("answers");
    let status = faultline(
        &[
            "resume",
            session.to_str().expect("utf-8"),
            "--headless",
            "--yes",
            "--answers",
            "answers.yaml",
        ],
        work.path(),
        None,
    )
    .wait()
    .expect("resume ends");
    assert!(status.code().is_some());
    let all = common::records(&session);
    let asked = all
        .iter()
        .find(|r| r.kind == "operator-answer" && r.data["question"] == "resume.D5")
        .expect("the operator was asked about D5");
    assert_eq!(asked.data["answer"], "keep");
    // The finished arm stands as it was decided; the other was never reached.
    let arm_verdicts: Vec<(String, String)> = all
        .iter()
        .filter(|r| r.kind == "verdict" && r.scope.scenario.as_deref() == Some("D5"))
        .filter_map(|r| {
            Some((
                r.data["id"].as_str()?.to_string(),
                r.data["verdict"].as_str()?.to_string(),
            ))
        })
        .collect();
    assert_eq!(arm_verdicts.len(), 2, "{arm_verdicts:?}");
    assert_eq!(arm_verdicts[0].0, decided[0]);
    assert_ne!(arm_verdicts[0].1, "NOT-RUN");
    assert_eq!(arm_verdicts[1].1, "NOT-RUN", "{arm_verdicts:?}");
    let not_run = all
        .iter()
        .find(|r| r.kind == "not-run" && r.scope.scenario.as_deref() == Some("D5"))
        .expect("not-run record");
    assert!(
        not_run.data["reason"]
            .as_str()
            .is_some_and(|t| t.contains("interrupted")),
        "{:?}",
        not_run.data
    );
}
