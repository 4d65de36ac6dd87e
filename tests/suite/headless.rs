//! Headless progress: a readable line per record that matters, child text sanitized,
//! a heartbeat in silence, a closing verdict table, colour only when asked for, and a
//! closed stdout that ends the output but never the run.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use faultline::session::event::{Event, FaultInjected, Reason, SessionVerdictEvent, VerdictEvent};
use faultline::session::journal::{Record, Scope};
use faultline::verdict::{ReasonStep, SessionVerdict, Verdict};
use tokio::sync::mpsc::unbounded_channel;

use crate::common;

fn scoped(scenario: Option<&str>, arm: Option<&str>, event: Event) -> Record {
    Record {
        seq: 7,
        ts: "2026-12-01T03:04:05.678Z".into(),
        scope: Scope {
            scenario: scenario.map(str::to_string),
            arm: arm.map(str::to_string),
        },
        event,
    }
}

fn in_d2(event: Event) -> Record {
    scoped(Some("D2"), None, event)
}

fn verdict(id: &str, verdict: Verdict, reasons: Vec<ReasonStep>) -> Event {
    Event::Verdict(VerdictEvent {
        id: id.into(),
        verdict: Some(verdict),
        reasons,
        ..VerdictEvent::default()
    })
}

fn step(question: &str, answer: &str) -> ReasonStep {
    ReasonStep {
        question: question.into(),
        answer: answer.into(),
        cites: vec![3],
    }
}

/// The records of a small session: D1 passes, D5's admin arm has no binding.
fn session() -> Vec<Record> {
    vec![
        scoped(
            Some("D1"),
            None,
            verdict(
                "D1",
                Verdict::PassSmoke,
                vec![step("did the weak-oracle audit hold?", "yes")],
            ),
        ),
        scoped(
            Some("D5"),
            Some("D5/admin"),
            Event::NotRun(Reason {
                reason: "no run spec binding".into(),
            }),
        ),
        scoped(
            Some("D5"),
            Some("D5/admin"),
            verdict(
                "D5/admin",
                Verdict::NotRun,
                vec![step("was the scenario reached?", "no: no run spec binding")],
            ),
        ),
        scoped(
            None,
            None,
            Event::SessionVerdict(SessionVerdictEvent {
                verdict: Some(SessionVerdict::DoneWithConcerns),
                ..SessionVerdictEvent::default()
            }),
        ),
    ]
}

/// Runs the printer over `records` to the journal's end; its output.
async fn printed(records: Vec<Record>, colour: bool) -> String {
    let (tx, rx) = unbounded_channel();
    let printer = tokio::spawn(faultline::headless::print(
        rx,
        Vec::new(),
        Duration::from_secs(30),
        colour,
    ));
    for record in records {
        tx.send(record).expect("send");
    }
    drop(tx);
    String::from_utf8(printer.await.expect("printer ends")).expect("utf-8")
}

#[test]
fn records_that_matter_become_one_readable_sanitized_line() {
    let injected = faultline::headless::line(
        &in_d2(Event::FaultInjected(FaultInjected {
            fault: "pause-n3".into(),
            ..FaultInjected::default()
        })),
        false,
    );
    assert_eq!(
        injected.as_deref(),
        Some("03:04:05 D2        fault pause-n3 injected")
    );

    let landed = faultline::headless::line(
        &in_d2(Event::from_parts(
            "landing-declared".into(),
            serde_json::json!({
                "fault": "pause-n3",
                "pattern": "timed out",
                "seen": "n1 \u{1b}[31mWARN\u{1b}[0m replication\nto n3 timed out",
            }),
        )),
        false,
    )
    .expect("a landing is worth a line");
    assert!(
        landed.starts_with("03:04:05 D2        fault pause-n3 landed: declared signal seen: n1"),
        "{landed}"
    );
    assert!(
        !landed.contains('\u{1b}') && !landed.contains('\n'),
        "{landed:?}"
    );

    // Neither Debug output nor JSON: a command's exit is not news.
    let exited = in_d2(Event::from_parts(
        "command-exited".into(),
        serde_json::json!({"name": "workload", "outcome": "Exited(0)", "elapsed_ms": 5}),
    ));
    assert_eq!(faultline::headless::line(&exited, false), None);
}

#[test]
fn a_verdict_line_says_its_reason_in_words_and_is_never_cut() {
    let long = "x".repeat(400);
    let record = scoped(
        Some("D5"),
        Some("D5/admin"),
        verdict(
            "D5/admin",
            Verdict::NotRun,
            vec![step(
                "was the scenario reached?",
                &format!("no: harness error: {long}"),
            )],
        ),
    );
    let line = faultline::headless::line(&record, false).expect("a verdict line");
    assert!(
        line.starts_with("03:04:05 D5/admin  NOT-RUN — admin arm could not be started: xxx"),
        "{line}"
    );
    assert!(line.ends_with(&long), "the verdict line was cut: {line}");
    assert!(!line.contains('…'), "{line}");
}

#[tokio::test]
async fn silence_prints_a_heartbeat_naming_the_last_line() {
    let (tx, rx) = unbounded_channel();
    let printer = tokio::spawn(faultline::headless::print(
        rx,
        Vec::new(),
        Duration::from_millis(100),
        false,
    ));
    tx.send(in_d2(Event::FaultInjected(FaultInjected {
        fault: "pause-n3".into(),
        ..FaultInjected::default()
    })))
    .expect("send");
    tokio::time::sleep(Duration::from_millis(350)).await;
    drop(tx);
    let out = String::from_utf8(printer.await.expect("printer ends")).expect("utf-8");
    let beats: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("heartbeat:"))
        .collect();
    assert!(
        beats.len() >= 2,
        "expected heartbeats in 350 ms of silence: {out}"
    );
    assert!(
        beats[0].ends_with("(last: fault pause-n3 injected (D2))"),
        "{out}"
    );
}

/// When the journal closes: one aligned row per run (an arm under its scenario),
/// with its verdict, the seeds that ran and the reason in words, then the session.
#[tokio::test]
async fn the_journal_closing_prints_an_aligned_verdict_table() {
    let out = printed(session(), false).await;
    let table: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("ID ")).collect();
    assert_eq!(table.len(), 4, "{out}");
    let column = |line: &str, word: &str| {
        line.find(word)
            .unwrap_or_else(|| panic!("{word} in {line}"))
    };
    let at = column(table[0], "VERDICT");
    assert_eq!(column(table[1], "PASS-smoke"), at, "{out}");
    assert_eq!(column(table[2], "NOT-RUN"), at, "{out}");
    assert!(table[1].starts_with("D1 "), "{out}");
    assert!(
        table[1].ends_with("0  D1: passed; every audit held"),
        "{out}"
    );
    assert!(table[2].starts_with("  D5/admin "), "{out}");
    assert!(
        table[2].ends_with("0  admin arm has no run binding in the run spec"),
        "{out}"
    );
    assert!(table[3].starts_with("session "), "{out}");
    assert_eq!(column(table[3], "DONE_WITH_CONCERNS"), at, "{out}");
    assert!(!out.contains('\u{1b}'), "no colour was asked for: {out:?}");
}

#[tokio::test]
async fn colour_marks_only_the_verdicts_when_asked_for() {
    let out = printed(session(), true).await;
    let pass = out
        .lines()
        .find(|l| l.contains("D1: passed"))
        .expect("D1's verdict line");
    assert!(pass.contains("\u{1b}[32mPASS-smoke\u{1b}[0m"), "{pass:?}");
    let not_run = out
        .lines()
        .find(|l| l.contains("no run binding"))
        .expect("the admin arm's line");
    assert!(
        not_run.contains("\u{1b}[33mNOT-RUN\u{1b}[0m"),
        "{not_run:?}"
    );
    assert!(
        out.contains("\u{1b}[33mDONE_WITH_CONCERNS\u{1b}[0m"),
        "{out:?}"
    );
}

/// A writer whose reader went away after `left` lines; counts writes tried after the
/// first that failed.
struct ClosesAfter {
    left: usize,
    failed: bool,
    tried_after: usize,
}

impl Write for ClosesAfter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.failed {
            self.tried_after += 1;
        }
        if self.left == 0 {
            self.failed = true;
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        self.left -= buf.iter().filter(|b| **b == b'\n').count().min(self.left);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_closed_output_stops_the_printing_but_not_the_draining() {
    let (tx, rx) = unbounded_channel();
    let printer = tokio::spawn(faultline::headless::print(
        rx,
        ClosesAfter {
            left: 1,
            failed: false,
            tried_after: 0,
        },
        Duration::from_secs(30),
        false,
    ));
    let mut records = session();
    records.extend(session());
    for record in records {
        tx.send(record).expect("the printer keeps taking records");
    }
    drop(tx);
    let out = printer.await.expect("the printer ends without a panic");
    assert!(out.failed, "the pipe was never found closed");
    assert_eq!(out.tried_after, 0, "writes went on after the pipe closed");
}

/// The session directory under `root` (`ROOT/<plan>/<timestamp>`).
fn session_under(root: &Path) -> Option<PathBuf> {
    let plan = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .find(|e| e.path().is_dir())?;
    let session = std::fs::read_dir(plan.path())
        .ok()?
        .flatten()
        .find(|e| e.path().is_dir())?;
    Some(session.path())
}

/// `faultline demo --headless --yes --only D1,D2 | head -n 5`: the output ends after
/// five lines, the run does not: no panic, a fault injected and healed after the
/// pipe closed, and the session still writes its verdicts.
#[test]
fn a_closed_stdout_ends_the_output_never_the_run() {
    let _one = common::demo_lock();
    let work = tempfile::tempdir().expect("tempdir");
    let root = work.path().join("sessions");
    let stderr = std::fs::File::create(work.path().join("stderr")).expect("stderr file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["demo", "--headless", "--yes", "--only", "D1,D2", "--out"])
        .arg(&root)
        .current_dir(work.path())
        .env_remove("NO_COLOR")
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("faultline starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let head: Vec<String> = BufReader::new(stdout)
        .lines()
        .take(5)
        .collect::<Result<_, _>>()
        .expect("five lines");
    // The reader is dropped here: the pipe is closed, as `head -n 5` closes it.
    let status = child.wait().expect("faultline ends");
    let stderr = std::fs::read_to_string(work.path().join("stderr")).expect("stderr");
    assert_eq!(head.len(), 5);
    assert!(
        head.iter().all(|l| !l.contains('\u{1b}')),
        "colour in a pipe: {head:?}"
    );
    assert!(head[0].contains("session started"), "{head:?}");
    assert!(
        status.code().is_some(),
        "ended by a signal: {status:?}\n{stderr}"
    );
    assert_ne!(status.code(), Some(101), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let session = session_under(&root).expect("a session directory");
    let text = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts.json");
    let verdicts: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let scenarios = verdicts["scenarios"].as_array().expect("scenarios");
    assert!(!scenarios.is_empty(), "{text}");
    assert!(
        scenarios.iter().all(|s| s["verdict"].is_string()),
        "every scenario has a verdict: {text}"
    );
    assert!(verdicts["session_verdict"].is_string(), "{text}");
    // D2's pause came well after the fifth line: injected and healed all the same.
    let journal = common::records(&session);
    let count = |kind: &str| journal.iter().filter(|r| r.kind == kind).count();
    let kinds: Vec<&str> = journal.iter().map(|r| r.kind.as_str()).collect();
    assert!(count("fault-injected") >= 1, "{kinds:?}");
    assert_eq!(count("fault-injected"), count("fault-healed"), "{kinds:?}");
}

/// A FAIL's same-seed re-run and the reduction's candidates are not seeds that ran:
/// one seed, re-run and reduced, is one seed, in the table and on the Run screen.
#[tokio::test]
async fn seed_counts_match_the_seeds_that_ran() {
    let iteration = |label: &str| {
        in_d2(Event::from_parts(
            "iteration-started".into(),
            serde_json::json!({"seed": 1, "label": label, "duration_ms": 4000}),
        ))
    };
    let checked = || {
        in_d2(Event::from_parts(
            "oracle-result".into(),
            serde_json::json!({"checker": "no-lost-ack", "evidence": "checked 9 ops, 1 anomaly"}),
        ))
    };
    let mut records = Vec::new();
    for label in [
        "seed-1",
        "seed-1-rerun",
        "seed-1-reduce-1",
        "seed-1-reduce-2",
    ] {
        records.push(iteration(label));
        records.push(checked());
    }
    records.push(in_d2(verdict(
        "D2",
        Verdict::FailReproducible,
        vec![step("FAIL registered?", "yes: checker reported 1 anomaly")],
    )));
    let view = faultline::session::view::View::of(&records);
    let row = &view.runs[0];
    assert_eq!((row.seeds_started, row.seeds_done), (1, 1), "{row:?}");
    let out = printed(records, false).await;
    let d2 = out
        .lines()
        .rfind(|l| l.starts_with("D2 "))
        .expect("D2's row");
    assert!(d2.contains("FAIL-reproducible      1  D2 failed"), "{out}");
}
