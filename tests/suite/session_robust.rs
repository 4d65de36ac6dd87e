//! The session's own robustness (issue: one session, many operators, item 6) and its
//! typed journal: old and unknown records load, no kind is spelled outside
//! `session/`, a damaged line does not stop `heal`, an answers file is checked before
//! anything starts, a full or read-only session root ends healed with exit 74.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use faultline::session::event::{self, Event, KINDS};
use faultline::session::journal::{self, Journal, Scope};

use crate::common;

fn faultline() -> Command {
    Command::new(env!("CARGO_BIN_EXE_faultline"))
}

#[test]
fn a_journal_from_before_typed_events_loads_every_record_as_its_kind() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/journal/demo.jsonl");
    let contents = journal::read(&path).expect("reads");
    assert!(contents.records.len() > 50, "{}", contents.records.len());
    assert!(contents.skipped.is_empty(), "{:?}", contents.skipped);
    for record in &contents.records {
        assert!(
            !matches!(record.event, Event::Unknown(_)),
            "#{} {} not read: {:?}",
            record.seq,
            record.kind(),
            record.event
        );
    }
    // Written back, every line is the JSON it was read from.
    let text = std::fs::read_to_string(&path).expect("text");
    for (line, record) in text.lines().zip(&contents.records) {
        let was: serde_json::Value = serde_json::from_str(line).expect("json");
        let now = serde_json::to_value(record).expect("serializes");
        for key in ["seq", "ts", "kind", "scenario", "arm"] {
            assert_eq!(was[key], now[key], "{key} of #{}", record.seq);
        }
        // Fields this build writes that an older one did not are the only difference.
        if let serde_json::Value::Object(fields) = &was["data"] {
            for (field, value) in fields {
                assert_eq!(
                    &now["data"][field],
                    value,
                    "#{} {} field {field}",
                    record.seq,
                    record.kind()
                );
            }
        }
    }
}

#[test]
fn an_unknown_kind_is_kept_verbatim_and_a_damaged_line_is_skipped_not_fatal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    {
        let mut journal = Journal::open(&path).expect("opens");
        journal
            .append(
                Scope::default(),
                Event::HealStarted(event::HealBy { by: "t".into() }),
            )
            .expect("appends");
    }
    let future = r#"{"seq":2,"ts":"x","scenario":"S1","arm":null,"kind":"from-the-future","data":{"n":[1,2]}}"#;
    let mut text = std::fs::read_to_string(&path).expect("text");
    text.push_str("\0\0\0 not json\n");
    text.push_str(future);
    text.push('\n');
    std::fs::write(&path, &text).expect("writes");
    let contents = journal::read(&path).expect("reads past the damage");
    assert_eq!(contents.skipped.len(), 1, "{:?}", contents.skipped);
    assert_eq!(contents.skipped[0].line, 2);
    let unknown = &contents.records[1];
    assert_eq!(unknown.kind(), "from-the-future");
    assert!(matches!(&unknown.event, Event::Unknown(u) if u.data["n"][1] == 2));
    let back = serde_json::to_string(unknown).expect("serializes");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&back).expect("json"),
        serde_json::from_str::<serde_json::Value>(future).expect("json")
    );
    // Numbering goes on after the last record read.
    let mut journal = Journal::open(&path).expect("opens again");
    let next = journal
        .append(
            Scope::default(),
            Event::HealStarted(event::HealBy { by: "t".into() }),
        )
        .expect("appends");
    assert_eq!(next.seq, 3);
}

/// Every journal kind is spelled once, in `src/session/`; the same words elsewhere are
/// other things (a command's name, a JSON field of `verdicts.json`, a subcommand).
#[test]
fn no_journal_kind_is_spelled_outside_the_session_module() {
    let allowed: &[(&str, &str)] = &[
        // The quiesce step's command name (its role), not the event.
        ("src/session/label.rs", "quiesce"),
        // `faultline watchdog SESSION`, the subcommand.
        ("src/session/watchdog.rs", "watchdog"),
        // The plan's budget-tier section label.
        ("src/plan/builder.rs", "budget"),
        // Fields of verdicts.json.
        ("src/report/json.rs", "interrupted"),
        ("src/report/json.rs", "verdict"),
        // A property of junit.xml's testsuite.
        ("src/report/junit.rs", "interrupted"),
        // report.md's column header the Report screen squeezes last.
        ("src/tui/view/markdown.rs", "verdict"),
        // A field of `faultline check --json`'s line per history.
        ("src/oracle/cli.rs", "verdict"),
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")))
                .expect("under the crate")
                .display()
                .to_string();
            if rel.starts_with("src/session/event.rs") || !rel.ends_with(".rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source");
            for kind in KINDS {
                if text.contains(&format!("\"{kind}\"")) && !allowed.contains(&(rel.as_str(), kind))
                {
                    found.push(format!("{rel}: \"{kind}\""));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "journal kinds spelled outside session/event.rs: {found:?}"
    );
}

/// A killed session whose journal has a damaged line between the records that name
/// a paused process and its group: `faultline heal` resumes and ends them all and
/// says which line it skipped.
#[test]
fn heal_goes_past_a_nul_byte_in_the_middle_of_the_journal() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let dir = tempfile::tempdir().expect("tempdir");
    let session = dir.path().to_path_buf();
    // A real victim in a group of its own, paused as a process fault would.
    let mut child = Command::new("setsid")
        .args(["sleep", "300"])
        .spawn()
        .expect("sleep starts");
    let pid = i32::try_from(child.id()).expect("pid");
    let started = Instant::now();
    while faultline::exec::start_time(pid).is_none() && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    // setsid(1) execs in place when it may: the child is the group leader.
    std::thread::sleep(Duration::from_millis(100));
    kill(Pid::from_raw(pid), Signal::SIGSTOP).expect("stops");
    let scope = Scope {
        scenario: Some("S1".into()),
        arm: None,
    };
    {
        let mut journal = Journal::open(&session.join("journal.jsonl")).expect("opens");
        journal
            .append(
                scope.clone(),
                Event::CommandStarted(event::CommandStarted {
                    name: "victim".into(),
                    command: "sleep 300".into(),
                    pgid: pid,
                    started: faultline::exec::start_time(pid),
                    log: String::new(),
                    node: None,
                }),
            )
            .expect("appends");
        journal
            .append(
                scope.clone(),
                Event::Precondition(event::Precondition {
                    name: "damaged below".into(),
                    ok: true,
                    cites: vec![1],
                }),
            )
            .expect("appends");
        journal
            .append(
                scope.clone(),
                Event::FaultInjected(event::FaultInjected {
                    fault: "pause-victim".into(),
                    pid: Some(pid),
                    undo: Some(event::Undo::Process(event::ProcessUndo {
                        pid,
                        action: faultline::nemesis::process::UndoAction::Pause,
                        started: faultline::exec::start_time(pid),
                        node: None,
                    })),
                    approved: None,
                }),
            )
            .expect("appends");
    }
    // A NUL-filled block over the middle record, as a torn disk write leaves it.
    let path = session.join("journal.jsonl");
    let text = std::fs::read_to_string(&path).expect("text");
    let lines: Vec<&str> = text.lines().collect();
    let damaged = format!(
        "{}\n{}\n{}\n",
        lines[0],
        "\0".repeat(lines[1].len()),
        lines[2]
    );
    std::fs::write(&path, damaged).expect("damages");
    let out = faultline()
        .arg("heal")
        .arg(&session)
        .output()
        .expect("heal runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("journal line 2 skipped"), "{stdout}");
    assert!(stdout.contains("pause-victim: SIGCONT sent"), "{stdout}");
    assert!(stdout.contains(&format!("process group {pid}")), "{stdout}");
    let status = child.wait().expect("reaped");
    assert!(!status.success(), "the group was ended: {status:?}");
    let healed = journal::read(&path).expect("reads");
    assert!(
        healed.records.iter().any(|r| matches!(
            &r.event,
            Event::HealFinished(h) if h.skipped_lines == vec![2]
        )),
        "heal-finished names the skipped line"
    );
}

fn demo_with_answers(answers: &str) -> (std::process::Output, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("answers.yaml");
    std::fs::write(&file, answers).expect("writes");
    let root = dir.path().join("sessions");
    let out = faultline()
        .args(["demo", "--headless", "--answers"])
        .arg(&file)
        .arg("--out")
        .arg(&root)
        .output()
        .expect("runs");
    (out, root, dir)
}

#[test]
fn an_answers_file_a_question_does_not_take_stops_before_anything_starts() {
    let (out, root, _dir) = demo_with_answers(
        "# the checklist\ncapability.binary:fl-client: maybe\nD3.severity: P9\nD3.blame: SUT\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{stderr}");
    assert!(
        stderr.contains(
            "answers.yaml:2: answers file: `capability.binary:fl-client`: `maybe` is not an answer"
        ) && stderr
            .contains("allowed: as probed, have, don't have, skip, substitute <with what>, defer"),
        "{stderr}"
    );
    assert!(
        stderr.contains("answers.yaml:3:") && stderr.contains("allowed: P0, P1, P2, P3, unrated"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("D3.blame"),
        "a good answer is not named: {stderr}"
    );
    assert!(!root.exists(), "nothing was started: {}", root.display());
}

#[test]
fn every_question_accepts_its_default_and_refuses_what_it_does_not_offer() {
    let plan = common::demo_plan();
    let spec = faultline::runspec::load(
        &plan,
        Some((
            "examples/demo/plan.run.yaml",
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/plan.run.yaml"),
            )
            .expect("sidecar"),
        )),
    )
    .expect("demo spec loads");
    let questions = faultline::launch::known_questions(&plan, &spec, None);
    assert!(questions.len() > 20, "{}", questions.len());
    for q in &questions {
        assert_eq!(
            q.check(&q.default).as_deref(),
            Ok(q.default.as_str()),
            "{}",
            q.id
        );
        assert_eq!(q.check("").as_deref(), Ok(q.default.as_str()), "{}", q.id);
        if q.free_text == faultline::session::operator::FreeText::None {
            assert!(!q.choices.is_empty(), "{} offers nothing", q.id);
            let refused = q.check("maybe").expect_err(&q.id);
            assert!(refused.contains(&q.allowed()), "{}: {refused}", q.id);
        }
    }
}

/// `faultline demo --headless --yes` with its session root on a fresh tmpfs mounted
/// with `options` (left mounted: the caller looks, then unmounts).
fn demo_on_tmpfs(options: &str) -> (std::process::Output, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    std::fs::create_dir(&root).expect("mkdir");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", options, "tmpfs"])
        .arg(&root)
        .status()
        .expect("mount runs");
    assert!(mounted.success(), "tmpfs mounted");
    let out = faultline()
        .args(["demo", "--headless", "--yes", "--out"])
        .arg(&root)
        .output()
        .expect("runs");
    (out, root, dir)
}

/// A session root that fills up mid-run: the faults are healed, what can be written
/// is, the exit code is 74 and the message names the full root; no panic.
#[test]
fn a_full_session_root_ends_healed_with_exit_74() {
    if !common::can_mount() {
        return;
    }
    let (out, root, _dir) = demo_on_tmpfs("size=600k");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let session = stdout
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("session: "))
        .map(PathBuf::from);
    // Nothing of the session is left running (by its mark).
    let left = session
        .as_deref()
        .map(faultline::exec::mark::marked)
        .unwrap_or_default();
    let _ = Command::new("umount").arg(&root).status();
    assert_eq!(out.status.code(), Some(74), "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("the session root is full:") && stderr.contains("No space left"),
        "{stderr}"
    );
    assert!(
        stdout.contains("every fault the journal names is healed"),
        "{stdout}"
    );
    assert!(session.is_some(), "the session is named: {stdout}");
    assert!(left.is_empty(), "still running: {left:?}");
}

#[test]
fn a_read_only_session_root_is_an_environment_failure_not_a_panic() {
    if !common::can_mount() {
        return;
    }
    let (out, root, _dir) = demo_on_tmpfs("size=1m,ro");
    let _ = Command::new("umount").arg(&root).status();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{stderr}");
    assert!(
        stderr.contains("the session root is read-only:"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// kill -9 the watchdog, 3 s later kill -9 faultline: the journal shows the
/// watchdog's death, and 5 s later nothing of the session is left running.
#[test]
fn a_killed_watchdog_is_journaled_and_replaced() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("sessions");
    let mut run = faultline()
        .args(["demo", "--headless", "--yes", "--out"])
        .arg(&root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("demo starts");
    let session = wait_for(Duration::from_secs(30), || {
        let parent = root.join("demo-kv-replication");
        let session = std::fs::read_dir(parent).ok()?.flatten().next()?.path();
        let text = std::fs::read_to_string(session.join("journal.jsonl")).ok()?;
        text.contains("\"kind\":\"iteration-started\"")
            .then_some(session)
    })
    .expect("the demo reaches its first scenario");
    let first = common::watchdogs_of(&session);
    assert_eq!(first.len(), 2, "two watchdogs: {first:?}");
    kill(Pid::from_raw(first[0]), Signal::SIGKILL).expect("kills the watchdog");
    std::thread::sleep(Duration::from_secs(3));
    let second = common::watchdogs_of(&session);
    assert_eq!(second.len(), 2, "re-armed: {second:?}");
    assert!(!second.contains(&first[0]), "{second:?}");
    assert!(second.contains(&first[1]), "{second:?}");
    let pid = i32::try_from(run.id()).expect("pid");
    kill(Pid::from_raw(pid), Signal::SIGKILL).expect("kills faultline");
    let _ = run.wait();
    std::thread::sleep(Duration::from_secs(5));
    let left = faultline::exec::mark::marked(&session);
    assert!(left.is_empty(), "left running: {left:?}");
    assert!(
        common::watchdogs_of(&session).is_empty(),
        "the watchdog ended"
    );
    let records = journal::read(&session.join("journal.jsonl"))
        .expect("reads")
        .records;
    let died = format!("the watchdog (pid {}) died", first[0]);
    assert!(
        records.iter().any(|r| matches!(&r.event,
            Event::Watchdog(w) if !w.armed && w.why.as_deref().is_some_and(|y| y.starts_with(&died)))),
        "the journal shows {died}"
    );
    assert!(
        records
            .iter()
            .any(|r| matches!(&r.event, Event::HealFinished(h) if h.by == "faultline watchdog")),
        "the replacement healed"
    );
}

fn wait_for<T>(within: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some(found) = probe() {
            return Some(found);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}
