//! Helpers shared by the integration tests, declared once at the root of the one test
//! binary (`tests/suite/main.rs`); each module uses a subset.
//!
//! The README's test command is `cargo nextest run`: every test a process of its own,
//! the end-to-end ones a few at a time (the `end-to-end` and `demo-sessions` test
//! groups of `.config/nextest.toml`; `nextest_groups` checks every test it names exists).
//! [`demo_run`] is the one uninterrupted demo run the read-only tests share, once per
//! test run. Under plain `cargo test` the tests of all modules share one process and
//! nothing limits the end-to-end tests; [`in_own_process`] runs a test that changes
//! state nothing can reset (the session mark of `faultline::exec::mark`) in a process
//! of its own there.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use faultline::plan::{Plan, parse_plan};

/// Where the corpus plan sits, relative to the crate root.
const CORPUS_PLAN: &str = "../shared/corpus/plans/raft-cr-project-stability.md";

/// The real plan nobody here wrote, when `../shared` lies beside the clone (CI lays it
/// there). Without it, says so loudly and returns `None` so the test skips; fails
/// instead under `FAULTLINE_REQUIRE_CORPUS=1` (CI).
pub fn corpus_path() -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS_PLAN);
    if path.exists() {
        return Some(path);
    }
    let what = format!(
        "{} is a real-world plan (a Raft project's stability plan) the parser and linter \
         tests read; it is not part of this repository",
        path.display()
    );
    assert!(
        std::env::var("FAULTLINE_REQUIRE_CORPUS").as_deref() != Ok("1"),
        "FAULTLINE_REQUIRE_CORPUS=1 but ../shared/corpus is not beside the clone: {what}"
    );
    eprintln!("SKIP: ../shared/corpus not found beside the clone: {what}");
    None
}

/// True when a test cannot run here and must return: `missing` is why, said loudly
/// as `SKIP: <why>`; under `FAULTLINE_REQUIRE_<capability>=1` (CI) the test fails
/// with it instead.
pub fn skipped(capability: &str, missing: Option<String>) -> bool {
    let Some(reason) = missing else {
        return false;
    };
    let flag = format!("FAULTLINE_REQUIRE_{capability}");
    assert!(
        std::env::var(&flag).as_deref() != Ok("1"),
        "{flag}=1 but {reason}"
    );
    eprintln!("SKIP: {reason}");
    true
}

/// `faultline lint` of an example's plan: asserts it binds `bindings` (as lint lists
/// them, `P1, P2, P3`) and is runnable with no warning; returns what lint printed.
pub fn lint_example(plan: &Path, bindings: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("lint")
        .arg(plan)
        .output()
        .expect("faultline lint runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!("bindings: {bindings}")),
        "{stdout}"
    );
    assert!(
        stdout.contains("Result: runnable (0 warning(s))"),
        "{stdout}"
    );
    stdout
}

/// Parses a plan file given relative to the crate root, named by that relative path.
pub fn plan_at(relative: &str) -> Plan {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("plan {} unreadable: {e}", path.display()));
    parse_plan(relative, &text)
}

/// The corpus plan, parsed; `None` (the test skips, loudly) as [`corpus_path`] says.
pub fn corpus() -> Option<Plan> {
    corpus_path().map(|_| plan_at(CORPUS_PLAN))
}

pub fn fixture(name: &str) -> Plan {
    plan_at(&format!("tests/fixtures/plans/{name}"))
}

pub fn demo_plan() -> Plan {
    plan_at("examples/demo/plan.md")
}

/// Alive means present in /proc and not a zombie waiting to be reaped.
pub fn pid_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(") ")
            .next()
            .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
    })
}

/// Any live (non-zombie) process in /proc whose process group is `pgid`.
pub fn group_alive(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| {
            // Fields after the command name: state ppid pgrp …
            let mut rest = stat.rsplit(") ").next().unwrap_or("").split_whitespace();
            let state = rest.next().unwrap_or("Z");
            let pgrp = rest.nth(1).and_then(|p| p.parse::<i32>().ok());
            pgrp == Some(pgid) && state != "Z" && state != "X"
        })
    })
}

/// Whether the group a `command-started` record names still has a live member. The
/// suite starts thousands of processes with pids wrapping at 32,768: a pid used as a
/// pgid stays taken while any member of that group lives, so when the process with
/// the group's number is alive but started at another time than the record's
/// leader, the old group is gone and the number belongs to someone else.
pub fn journaled_group_alive(started: &Line) -> bool {
    let Some(pgid) = started.data["pgid"]
        .as_i64()
        .and_then(|p| i32::try_from(p).ok())
    else {
        return false;
    };
    let reused = match (
        started.data["started"].as_u64(),
        faultline::exec::start_time(pgid),
    ) {
        (Some(then), Some(now)) => then != now,
        _ => false,
    };
    !reused && group_alive(pgid)
}

/// `pid: command line` of each live member of group `pgid`, to say in a failure
/// whose processes they are.
pub fn group_members(pgid: i32) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let mut rest = stat.rsplit(") ").next().unwrap_or("").split_whitespace();
                rest.nth(2).and_then(|p| p.parse::<i32>().ok()) == Some(pgid)
            })
        })
        .map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            format!("{pid}: {}", cmdline.trim())
        })
        .collect()
}

/// Live `faultline watchdog SESSION` processes watching `session`.
pub fn watchdogs_of(session: &Path) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let want = session.as_os_str().as_encoded_bytes();
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            // A zombie's cmdline is empty, so only live watchdogs match.
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmd| {
                let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
                args.windows(2).any(|w| w[0] == b"watchdog" && w[1] == want)
            })
        })
        .collect()
}

/// Waits until no watchdog watches `session` (it healed, or stood down); panics after
/// `limit`.
pub fn await_watchdogs(session: &Path, limit: std::time::Duration) {
    let end = std::time::Instant::now() + limit;
    loop {
        let left = watchdogs_of(session);
        if left.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < end,
            "watchdog(s) {left:?} of {} still running after {limit:?}",
            session.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether this process may mount a tmpfs (root); says so loudly when not, and fails
/// instead under `FAULTLINE_REQUIRE_MOUNT=1` (CI).
pub fn can_mount() -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    assert!(
        std::env::var("FAULTLINE_REQUIRE_MOUNT").as_deref() != Ok("1"),
        "FAULTLINE_REQUIRE_MOUNT=1 but not root: cannot mount a tmpfs"
    );
    eprintln!("SKIP: not root: cannot mount a tmpfs");
    false
}

/// Whether faultline can hold services in cgroups here (cgroup v2 mounted, its own
/// cgroup writable); says so loudly when not, and fails instead under
/// `FAULTLINE_REQUIRE_CGROUP=1` (CI).
pub fn can_contain() -> bool {
    match faultline::exec::cgroup::base() {
        Ok(_) => true,
        Err(why) => {
            assert!(
                std::env::var("FAULTLINE_REQUIRE_CGROUP").as_deref() != Ok("1"),
                "FAULTLINE_REQUIRE_CGROUP=1 but cgroup v2 is not usable: {why}"
            );
            eprintln!("SKIP: cgroup v2 not usable: {why}");
            false
        }
    }
}

/// The session directory named by the `session: <path>` line a run ends with.
pub fn session_of(out: &std::process::Output) -> PathBuf {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let path = last
        .strip_prefix("session: ")
        .unwrap_or_else(|| panic!("last line is not `session: …`: {last:?}\n{stdout}"));
    PathBuf::from(path)
}

/// Runs a binding written inline, with no cluster, in `dir`.
pub async fn run_inline(
    yaml: &str,
    dir: &Path,
) -> (faultline::engine::iteration::IterationFacts, Vec<Line>) {
    let binding: faultline::runspec::Binding = serde_saphyr::from_str(yaml).expect("binding");
    run_binding(&binding, dir).await
}

/// One iteration of `binding` in `dir` (scenario X1, seed 1, 1 s): its facts and the
/// journal it wrote. Its privileged fault actions, if any, are approved by the test in
/// a journaled `privileged-approved` record first, as the preflight would.
pub async fn run_binding(
    binding: &faultline::runspec::Binding,
    dir: &Path,
) -> (faultline::engine::iteration::IterationFacts, Vec<Line>) {
    run_binding_approved(binding, dir, true).await
}

/// [`run_binding`], with the privileged actions approved or not.
pub async fn run_binding_approved(
    binding: &faultline::runspec::Binding,
    dir: &Path,
    approve: bool,
) -> (faultline::engine::iteration::IterationFacts, Vec<Line>) {
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).expect("logs dir");
    let mut journal =
        faultline::session::journal::Journal::open(&dir.join("journal.jsonl")).expect("journal");
    let actions = faultline::engine::privileged::actions(binding);
    let privileged = (approve && !actions.is_empty()).then(|| {
        let record = journal
            .append_kind(
                faultline::session::journal::Scope::default(),
                "privileged-approved",
                &serde_json::json!({"scenario": "X1", "actions": actions, "by": "the test"}),
            )
            .expect("approval journaled");
        faultline::engine::privileged::Approval { seq: record.seq }
    });
    let mut ctx = faultline::engine::iteration::IterationCtx {
        id: "X1".into(),
        scope: faultline::session::journal::Scope {
            scenario: Some("X1".into()),
            arm: None,
        },
        cwd: dir.to_path_buf(),
        logs,
        artifacts: dir.join("artifacts"),
        vars: faultline::runspec::vars::Vars::default(),
        seed: 1,
        duration: std::time::Duration::from_secs(1),
        cancel: Default::default(),
        privileged,
        hosts: Default::default(),
    };
    let facts = faultline::engine::iteration::run(binding, &mut ctx, &mut journal)
        .await
        .expect("iteration runs");
    let records = lines(&dir.join("journal.jsonl"));
    (facts, records)
}

/// id → verdict, from a headless session's `verdicts.json`.
pub fn verdict_of(session: &Path, id: &str) -> String {
    verdicts_by_id(session).remove(id).unwrap_or_default()
}

/// The scenarios of a session's verdicts.json.
pub fn verdict_scenarios(session: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts.json");
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("json");
    match v["scenarios"].take() {
        serde_json::Value::Array(scenarios) => scenarios,
        other => panic!("verdicts.json: scenarios is {other}"),
    }
}

fn text_of(v: &serde_json::Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// Each scenario's verdict by id.
pub fn verdicts_by_id(session: &Path) -> std::collections::BTreeMap<String, String> {
    verdict_scenarios(session)
        .iter()
        .map(|s| (text_of(&s["id"]), text_of(&s["verdict"])))
        .collect()
}

/// Each scenario's verdict with the decision tree's reasons (as one JSON text).
pub fn verdict_reasons(session: &Path) -> std::collections::BTreeMap<String, (String, String)> {
    verdict_scenarios(session)
        .iter()
        .map(|s| {
            let verdict = text_of(&s["verdict"]);
            (text_of(&s["id"]), (verdict, s["reasons"].to_string()))
        })
        .collect()
}

/// A headless run of one scenario of a plan: its session and the scenario's verdict.
pub struct OneScenario {
    pub session: PathBuf,
    pub verdict: String,
    pub stderr: String,
}

/// Runs scenario `id` of `plan` headless with `dir` as SUT and working directory.
pub fn run_scenario(plan: &Path, id: &str, dir: &Path) -> OneScenario {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(plan)
        .args(["--headless", "--approve-privileged", "--only", id, "--sut"])
        .arg(dir)
        .current_dir(dir)
        .output()
        .expect("faultline runs");
    let session = session_of(&out);
    OneScenario {
        verdict: verdict_of(&session, id),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        session,
    }
}

/// The plan of deliberately mis-aimed twins, one scenario per nemesis kind.
pub fn twins_plan() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/nemesis-twins.md")
}

/// Every file under `root` except those under `skip`, with sizes.
pub fn tree(root: &Path, skip: &Path) -> BTreeSet<(PathBuf, u64)> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir").flatten() {
            let path = entry.path();
            if path.starts_with(skip) {
                continue;
            }
            let meta = entry.metadata().expect("metadata");
            if meta.is_dir() {
                stack.push(path);
            } else {
                out.insert((path, meta.len()));
            }
        }
    }
    out
}

/// One uninterrupted `COLUMNS=80 faultline demo --headless --yes --out ROOT`, run in
/// `work` (which holds a `README` the demo must not touch, and `ROOT`).
pub struct DemoRun {
    pub work: PathBuf,
    pub root: PathBuf,
    /// [`tree`] of `work` outside `root`, taken just before the run.
    pub before: BTreeSet<(PathBuf, u64)>,
    pub out: Output,
    pub took: Duration,
}

/// The demo run once per test run (about 50 s) and shared by every test that only
/// reads the session it leaves. Such a test may add a session of its own under `root`
/// (a rerun) but must change nothing the run wrote.
///
/// Under cargo-nextest every test is a process of its own, so "once" is per run, not
/// per process: the first test to take the lock on `target/tmp/demo-run-<run>.lock`
/// runs the demo and leaves what it printed in `demo-run-<run>.json` beside its tree; the
/// others wait on the lock and read it. `<run>` is nextest's run id (the test binary's
/// pid under `cargo test`). Runs older than a day are removed.
pub fn demo_run() -> &'static DemoRun {
    static RUN: OnceLock<DemoRun> = OnceLock::new();
    RUN.get_or_init(shared_demo_run)
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SharedRun {
    before: BTreeSet<(PathBuf, u64)>,
    status: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    took_ms: u64,
}

fn shared_demo_run() -> DemoRun {
    use nix::fcntl::{Flock, FlockArg};
    use std::os::unix::process::ExitStatusExt;
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(tmp).expect("target/tmp");
    let run =
        std::env::var("NEXTEST_RUN_ID").unwrap_or_else(|_| format!("pid{}", std::process::id()));
    let run: String = run
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(tmp.join(format!("demo-run-{run}.lock")))
        .expect("the demo run's lock file");
    let _held = Flock::lock(lock, FlockArg::LockExclusive)
        .map_err(|(_, e)| e)
        .expect("flock");
    let work = tmp.join(format!("demo-run-{run}"));
    // Beside the tree, not in it: the tests compare the tree outside `root` before
    // and after.
    let recorded = tmp.join(format!("demo-run-{run}.json"));
    let root = work.join("sessions");
    if let Ok(text) = std::fs::read(&recorded) {
        let shared: SharedRun = serde_json::from_slice(&text).expect("outcome.json");
        return DemoRun {
            work,
            root,
            before: shared.before,
            out: Output {
                status: std::process::ExitStatus::from_raw(shared.status),
                stdout: shared.stdout,
                stderr: shared.stderr,
            },
            took: Duration::from_millis(shared.took_ms),
        };
    }
    remove_old_demo_runs(tmp);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("the demo run's directory");
    std::fs::write(work.join("README"), "a tree the demo must not touch\n").expect("seed");
    let before = tree(&work, &root);
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["demo", "--headless", "--yes", "--out"])
        .arg(&root)
        .current_dir(&work)
        // The closing table fits it (headless::the_demo_s_closing_table_fits_80_columns).
        .env("COLUMNS", "80")
        .output()
        .expect("faultline runs");
    let took = started.elapsed();
    let shared = SharedRun {
        before: before.clone(),
        status: out.status.into_raw(),
        stdout: out.stdout.clone(),
        stderr: out.stderr.clone(),
        took_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
    };
    // Written last, and only here: a test that finds it finds the run finished.
    std::fs::write(&recorded, serde_json::to_vec(&shared).expect("json")).expect("outcome.json");
    DemoRun {
        work,
        root,
        before,
        out,
        took,
    }
}

/// Removes the demo runs (and their locks) of test runs more than a day old.
fn remove_old_demo_runs(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(24 * 3600));
        let ours = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with("demo-run-"));
        if old && ours {
            let path = entry.path();
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
}

/// For a test that changes process-wide state nothing resets, which other tests of
/// this binary would see: runs `test` (its full name, `module::function`) again alone,
/// in a fresh process of this test binary, and asserts it passed there. True in that
/// process, where the test's body runs; false in the caller, which then returns.
pub fn in_own_process(test: &str) -> bool {
    const VAR: &str = "FAULTLINE_TEST_OWN_PROCESS";
    // cargo-nextest (the README's test command) gives every test a process already.
    let nextest = std::env::var("NEXTEST_EXECUTION_MODE").as_deref() == Ok("process-per-test");
    if nextest || std::env::var(VAR).as_deref() == Ok(test) {
        return true;
    }
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(VAR, test)
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{test} failed in its own process:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "{test} did not run in its own process:\n{stdout}\n{stderr}"
    );
    false
}

/// A journal line as the file holds it: the kind and its JSON payload, the wire
/// format other tools read (and these tests pin), whatever type the engine gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub seq: u64,
    pub ts: String,
    pub scope: faultline::session::journal::Scope,
    pub kind: String,
    pub data: serde_json::Value,
}

impl From<&faultline::session::journal::Record> for Line {
    fn from(record: &faultline::session::journal::Record) -> Line {
        Line {
            seq: record.seq,
            ts: record.ts.clone(),
            scope: record.scope.clone(),
            kind: record.kind().to_string(),
            data: record.event.data(),
        }
    }
}

/// Every record of the journal at `path`, as [`Line`]s.
pub fn lines(path: &Path) -> Vec<Line> {
    faultline::session::journal::read(path)
        .unwrap_or_else(|e| panic!("journal {}: {e}", path.display()))
        .records
        .iter()
        .map(Line::from)
        .collect()
}

/// Every record of `session`'s journal, as [`Line`]s (the journal must be readable).
pub fn records(session: &Path) -> Vec<Line> {
    lines(&session.join("journal.jsonl"))
}

/// [`records`], asserting the journal ends on a whole line (no torn tail): for a run
/// that ended as it should.
pub fn whole_records(session: &Path) -> Vec<Line> {
    let contents =
        faultline::session::journal::read(&session.join("journal.jsonl")).expect("journal");
    assert!(contents.torn_tail.is_none(), "journal has a torn tail");
    contents.records.iter().map(Line::from).collect()
}

/// A record of `kind` carrying `data`, typed the way the journal reads that line.
pub fn record(
    seq: u64,
    ts: &str,
    scope: faultline::session::journal::Scope,
    kind: &str,
    data: serde_json::Value,
) -> faultline::session::journal::Record {
    faultline::session::journal::Record {
        seq,
        ts: ts.to_string(),
        scope,
        event: faultline::session::event::Event::from_parts(kind.to_string(), data),
    }
}

/// Appending a record given as kind + payload (what a test writes by hand).
pub trait AppendKind {
    fn append_kind<T: serde::Serialize>(
        &mut self,
        scope: faultline::session::journal::Scope,
        kind: &str,
        data: &T,
    ) -> Result<faultline::session::journal::Record, faultline::session::journal::JournalError>;
}

impl AppendKind for faultline::session::journal::Journal {
    fn append_kind<T: serde::Serialize>(
        &mut self,
        scope: faultline::session::journal::Scope,
        kind: &str,
        data: &T,
    ) -> Result<faultline::session::journal::Record, faultline::session::journal::JournalError>
    {
        let data = serde_json::to_value(data).expect("a test payload serializes");
        self.append(
            scope,
            faultline::session::event::Event::from_parts(kind.to_string(), data),
        )
    }
}

/// A real demo D3 seed with two faults: the spare paused (proven), then the primary
/// killed (not proven) — what the chart and figure tests draw.
pub const D3_HISTORY: &str = "tests/fixtures/histories/demo-d3-two-faults.jsonl";

/// The fault marks of [`D3_HISTORY`]'s two windows.
pub fn d3_marks() -> Vec<faultline::oracle::series::FaultMark> {
    use faultline::oracle::series::FaultMark;
    vec![
        FaultMark {
            epoch: 1,
            fault: "pause-spare".into(),
            proven: Some(true),
        },
        FaultMark {
            epoch: 2,
            fault: "kill-primary".into(),
            proven: Some(false),
        },
    ]
}

/// Processes whose network namespace is `inode` (pid and command line).
pub fn netns_holders(inode: u64) -> Vec<String> {
    let wanted = format!("net:[{inode}]");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/ns/net"))
                .is_ok_and(|l| l.as_os_str() == wanted.as_str())
        })
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            format!("{pid} {}", String::from_utf8_lossy(&cmd).replace('\0', " "))
        })
        .collect()
}

/// A session's journal records as JSON (unreadable lines left out).
pub fn journal_values(session: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(session.join("journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The records of one kind.
pub fn journal_of_kind(records: &[serde_json::Value], kind: &str) -> Vec<serde_json::Value> {
    records
        .iter()
        .filter(|r| r["kind"] == kind)
        .cloned()
        .collect()
}
