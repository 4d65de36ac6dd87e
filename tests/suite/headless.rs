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

/// The records of a session whose reasons are longer than a narrow terminal: a
/// FAIL, a long word (a path) and an arm under its scenario.
fn long_reasons() -> Vec<Record> {
    let long = "the checker reported 25 anomalies, and a re-run with the same seed \
                reproduced it; the reduced reproducer is at \
                /var/tmp/sessions/demo-kv-replication/20261204T164749Z/findings/D3/reproducer.sh";
    vec![
        scoped(
            Some("D3"),
            None,
            verdict(
                "D3",
                Verdict::FailReproducible,
                vec![step("FAIL registered?", &format!("yes: {long}"))],
            ),
        ),
        scoped(
            Some("D4"),
            None,
            verdict(
                "D4",
                Verdict::InconclusiveFaultNotProven,
                vec![step(
                    "a fault was planned: was its landing proven?",
                    "no: declared landing signal absent or ambiguous",
                )],
            ),
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
                verdict: Some(SessionVerdict::Fail),
                ..SessionVerdictEvent::default()
            }),
        ),
    ]
}

/// `COLUMNS` as the closing table reads it: 80 when unset, not a number or 0; a
/// number kept within 40..=500.
#[test]
fn the_table_width_is_columns_within_reason() {
    use faultline::headless::width_of;
    assert_eq!(width_of(None), 80);
    assert_eq!(width_of(Some("")), 80);
    assert_eq!(width_of(Some("wide")), 80);
    assert_eq!(width_of(Some("-5")), 80);
    assert_eq!(width_of(Some("0")), 80);
    assert_eq!(width_of(Some(" 120 ")), 120);
    assert_eq!(width_of(Some("12")), 40);
    assert_eq!(width_of(Some("99999999999")), 500);
}

/// At any width the closing table fits: only the reason wraps, between words (a word
/// longer than the column is broken where the line ends), its continuation lines
/// under the reason column; ids and verdict names are whole, and every word of the
/// reason is kept. Too narrow for a reason column, each reason goes under its row.
#[test]
fn the_closing_table_wraps_the_reason_only_to_fit_the_width() {
    let records = long_reasons();
    let view = faultline::session::view::View::of(&records);
    let reasons = std::collections::BTreeMap::new();
    let wide = faultline::headless::table(&view, &reasons, false, 500);
    let reason_at = wide[0].find("REASON").expect("the header names the reason");
    let whole = |id: &str| -> String {
        let row = wide
            .iter()
            .find(|l| l.trim_start().starts_with(id))
            .unwrap_or_else(|| panic!("{id} in {wide:?}"));
        row[reason_at..].to_string()
    };
    for width in [40, 60, 80, 100] {
        let table = faultline::headless::table(&view, &reasons, false, width);
        // Wider than the width only where ids and verdicts alone are (a row's head at
        // 40 columns): never a line with reason words on it.
        for line in &table {
            assert!(
                line.chars().count() <= width || line.split_whitespace().count() <= 3,
                "{width}: {line:?} is wider than {width}\n{}",
                table.join("\n")
            );
        }
        for (id, verdict) in [
            ("D3", "FAIL-reproducible"),
            ("D4", "INCONCLUSIVE-fault-not-proven"),
            ("D5/admin", "NOT-RUN"),
            ("session", "FAIL"),
        ] {
            let row = table
                .iter()
                .find(|l| l.trim_start().starts_with(&format!("{id} ")))
                .unwrap_or_else(|| panic!("{id}'s row at {width}: {table:?}"));
            assert!(row.contains(&format!(" {verdict}")), "{width}: {row}");
        }
        // Every word of each reason, in order, across its lines.
        let text: String = table.join(" ");
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().concat();
        for id in ["D3", "D4", "  D5/admin"] {
            let reason = whole(id.trim());
            let joined = words(&text);
            assert!(
                joined.contains(&words(&reason)),
                "{width}: {id}'s reason {reason:?} is not whole in\n{}",
                table.join("\n")
            );
        }
    }
    // 80 columns leave the reason a column of its own: every line fits, and a
    // continuation line starts under the reason.
    let table = faultline::headless::table(&view, &reasons, false, 80);
    let at = table[0].find("REASON").expect("REASON at 80");
    assert!(table.iter().all(|l| l.chars().count() <= 80), "{table:#?}");
    let d3 = table
        .iter()
        .position(|l| l.starts_with("D3 "))
        .expect("D3's row");
    let next = &table[d3 + 1];
    assert!(
        next.chars().take(at).all(|c| c == ' ') && next.chars().nth(at) != Some(' '),
        "a continuation starts under REASON: {table:#?}"
    );
    // 40 columns cannot hold a reason column beside the verdicts: each reason goes
    // under its row, indented, and within the width.
    let table = faultline::headless::table(&view, &reasons, false, 40);
    assert!(!table[0].contains("REASON"), "{table:#?}");
    let under: Vec<&String> = table.iter().filter(|l| l.starts_with("    ")).collect();
    assert!(!under.is_empty(), "{table:#?}");
    assert!(under.iter().all(|l| l.chars().count() <= 40), "{table:#?}");
}

/// A reduction candidate's line says what it kept (faults, halved timings, the
/// workload's length) and whether the seed still failed, all from its record.
#[test]
fn a_reduction_candidate_says_what_it_kept_and_whether_it_still_failed() {
    let candidate = |data: serde_json::Value| {
        faultline::headless::line(
            &in_d2(Event::from_parts("reduction-candidate".into(), data)),
            false,
        )
        .expect("a candidate is worth a line")
    };
    assert_eq!(
        candidate(serde_json::json!({
            "run": 1, "faults": ["pause-spare"], "timing": [], "duration_ms": 4000, "failed": false
        })),
        "03:04:05 D2        reduction run 1 kept fault pause-spare (workload 4 s): no longer failed"
    );
    assert_eq!(
        candidate(serde_json::json!({
            "run": 3, "faults": [], "timing": [], "duration_ms": 4000, "failed": false
        })),
        "03:04:05 D2        reduction run 3 kept no fault (workload 4 s): no longer failed"
    );
    assert_eq!(
        candidate(serde_json::json!({
            "run": 5, "faults": ["kill-primary"], "duration_ms": 2000, "failed": true,
            "timing": [{"fault": "kill-primary", "field": "after", "from_ms": 2000, "to_ms": 1000}]
        })),
        "03:04:05 D2        reduction run 5 kept fault kill-primary (start 2 s → 1 s; workload 2 s): \
         still failed"
    );
    assert_eq!(
        candidate(serde_json::json!({
            "run": 2, "faults": ["pause-n3", "kill-n1"], "duration_ms": 4000, "failed": true,
            "timing": [{"fault": "pause-n3", "field": "duration", "from_ms": 1500, "to_ms": 750}]
        })),
        "03:04:05 D2        reduction run 2 kept faults pause-n3, kill-n1 (pause-n3 hold 1.5 s → \
         750 ms; workload 4 s): still failed"
    );
}

/// The shared demo run (`COLUMNS=80`, as the acceptance's `--only D4,D5` run sets
/// it; this one holds D4 and D5 and the longer reasons of D3, D6 and D8): its closing
/// table fits 80 columns, verdict names and ids whole; D3's reduction said each
/// candidate as its record has it; the last lines name report.html and report.md.
#[test]
fn the_demo_s_closing_table_fits_80_columns() {
    let run = common::demo_run();
    let out = String::from_utf8_lossy(&run.out.stdout);
    let lines: Vec<&str> = out.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("ID "))
        .unwrap_or_else(|| panic!("no closing table:\n{out}"));
    let end = lines
        .iter()
        .position(|l| l.starts_with("session "))
        .unwrap_or_else(|| panic!("no session row:\n{out}"));
    let table = &lines[start..=end];
    for line in table {
        assert!(
            line.chars().count() <= 80,
            "{} characters: {line}\n{}",
            line.chars().count(),
            table.join("\n")
        );
    }
    let session = common::session_of(&run.out);
    let shown = table.join("\n");
    for (id, verdict) in common::verdicts_by_id(&session) {
        assert!(
            table
                .iter()
                .any(|l| l.starts_with(&format!("{id} ")) && l.contains(&format!(" {verdict} "))),
            "{id} {verdict} is not whole in\n{shown}"
        );
    }
    // The reason column: wrapped lines start under REASON.
    let at = table[0].find("REASON").expect("REASON");
    for line in &table[1..] {
        if line.starts_with(' ') && !line.trim_start().starts_with("D5/") {
            assert_eq!(
                line.len() - line.trim_start().len(),
                at,
                "a continuation off the reason column: {line}\n{shown}"
            );
        }
    }

    // D3's reduction: a line per candidate, saying what its record says.
    let journal = common::records(&session);
    let candidates: Vec<&common::Line> = journal
        .iter()
        .filter(|l| l.kind == "reduction-candidate")
        .collect();
    assert!(!candidates.is_empty(), "D3 is reduced");
    for c in candidates {
        let run = c.data["run"].as_u64().expect("run");
        let said = lines
            .iter()
            .find(|l| l.contains(&format!("reduction run {run} kept ")))
            .unwrap_or_else(|| panic!("no line for reduction run {run}:\n{out}"));
        let failed = c.data["failed"].as_bool().expect("failed");
        assert!(
            said.ends_with(if failed {
                ": still failed"
            } else {
                ": no longer failed"
            }),
            "{said} for {}",
            c.data
        );
        for fault in c.data["faults"].as_array().expect("faults") {
            assert!(said.contains(fault.as_str().expect("fault")), "{said}");
        }
    }

    // The last lines: report.html to open, report.md beside it, the verdict, the session.
    let tail = &lines[end + 1..];
    let html = tail
        .iter()
        .find_map(|l| l.strip_prefix("report: "))
        .and_then(|l| l.strip_suffix(" (open it in a browser)"))
        .unwrap_or_else(|| panic!("no report.html line:\n{}", tail.join("\n")));
    assert_eq!(Path::new(html), session.join("findings/report.html"));
    assert!(Path::new(html).is_file(), "{html}");
    let md = tail
        .iter()
        .find_map(|l| l.strip_prefix("report (Markdown): "))
        .unwrap_or_else(|| panic!("no report.md line:\n{}", tail.join("\n")));
    assert_eq!(Path::new(md), session.join("findings/report.md"));
    assert!(
        tail.last().is_some_and(|l| l.starts_with("session: ")),
        "{}",
        tail.join("\n")
    );
}

/// The printer's view folds the same rows as the full reducer's, without the verdict
/// history or the outcomes a long session would otherwise hold a second time.
#[test]
fn the_printer_s_view_folds_the_same_rows_and_keeps_no_history() {
    use faultline::session::view::View;
    let records = session();
    let full = View::of(&records);
    let mut lean = View::rows_only();
    for record in &records {
        lean.apply(record);
    }
    assert_eq!(lean.runs, full.runs);
    assert_eq!(lean.session_verdict, full.session_verdict);
    assert_eq!(lean.seq, full.seq);
    assert!(!full.verdicts.is_empty());
    assert!(lean.verdicts.is_empty());
    assert!(lean.outcome().is_none());
}
