//! The journal on real files: append-only, numbered, torn-tail tolerant.

use crate::common;
use crate::common::AppendKind;
use std::io::Write;

use faultline::session::journal::{self, Journal, JournalError, Scope};

fn scope(scenario: &str, arm: Option<&str>) -> Scope {
    Scope {
        scenario: Some(scenario.to_string()),
        arm: arm.map(str::to_string),
    }
}

#[test]
fn appends_are_numbered_scoped_and_survive_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    {
        let mut j = Journal::open(&path).expect("open");
        let a = j
            .append_kind(
                scope("S1", None),
                "fault-injected",
                &serde_json::json!({"fault": "kill-n1", "pid": 7}),
            )
            .expect("append");
        let b = j
            .append_kind(
                scope("S5", Some("S5/api")),
                "fault-healed",
                &serde_json::json!({}),
            )
            .expect("append");
        assert_eq!((a.seq, b.seq), (1, 2));
    }
    let mut j = Journal::open(&path).expect("reopen");
    let c = j
        .append_kind(Scope::default(), "session-ended", &"done")
        .expect("append");
    assert_eq!(c.seq, 3, "numbering continues after reopen");

    let contents = journal::read(&path).expect("read");
    assert!(contents.torn_tail.is_none());
    let kinds: Vec<&str> = contents.records.iter().map(|r| r.kind()).collect();
    assert_eq!(kinds, ["fault-injected", "fault-healed", "session-ended"]);
    assert_eq!(contents.records[1].scope.arm.as_deref(), Some("S5/api"));
    assert_eq!(contents.records[0].event.data()["fault"], "kill-n1");
    assert_eq!(contents.records[0].event.data()["pid"], 7);
}

#[test]
fn torn_last_line_is_reported_not_fatal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    let mut j = Journal::open(&path).expect("open");
    j.append_kind(scope("S1", None), "step", &1)
        .expect("append");
    drop(j);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open raw");
    f.write_all(b"{\"seq\":2,\"ts\":\"2026")
        .expect("write torn");
    drop(f);

    let contents = journal::read(&path).expect("read");
    assert_eq!(contents.records.len(), 1);
    assert!(
        contents
            .torn_tail
            .as_deref()
            .is_some_and(|t| t.starts_with("{\"seq\":2"))
    );
}

#[test]
fn a_corrupt_middle_line_is_skipped_and_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    let mut j = Journal::open(&path).expect("open");
    j.append_kind(Scope::default(), "a", &1).expect("append");
    drop(j);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open raw");
    f.write_all(b"garbage\n").expect("write");
    drop(f);
    let mut j = Journal::open(&path).expect("opens a damaged journal");
    j.append_kind(Scope::default(), "b", &2).expect("append");
    drop(j);
    // Read past, named by its line: healing needs every record around it.
    let contents = journal::read(&path).expect("reads past the damage");
    assert_eq!(contents.records.len(), 2, "both whole records are read");
    assert_eq!(contents.skipped.len(), 1);
    assert_eq!(contents.skipped[0].line, 2);
    assert!(
        contents.skipped[0]
            .to_string()
            .starts_with("line 2 skipped:"),
        "{}",
        contents.skipped[0]
    );
    // A writer opens it too, and numbers on after the last whole record.
    let mut reopened = Journal::open(&path).expect("opens a damaged journal");
    let next = reopened
        .append_kind(Scope::default(), "c", &3)
        .expect("appends");
    assert_eq!(next.seq, 3);
}

#[test]
fn a_second_writer_waits_for_the_first_then_is_refused_naming_the_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("journal.jsonl");
    let mut first = Journal::open(&path).expect("open");
    first
        .append_kind(Scope::default(), "a", &1)
        .expect("append");
    let wait = std::time::Duration::from_millis(300);
    let started = std::time::Instant::now();
    let second = Journal::open_waiting(&path, wait);
    assert!(started.elapsed() >= wait, "it must wait before refusing");
    let err = second.err().expect("refused while the first holds it");
    assert!(matches!(err, JournalError::Busy { .. }), "{err}");
    assert!(err.to_string().contains("journal.lock"), "{err}");
    drop(first);
    let mut second = Journal::open_waiting(&path, wait).expect("free once the first closes");
    let record = second
        .append_kind(Scope::default(), "b", &2)
        .expect("append");
    assert_eq!(
        record.seq, 2,
        "numbering continues after the first writer's"
    );
}

/// A written answer (a root cause over several lines) keeps its lines on screen, each
/// sanitized; an escape inside one is gone.
#[test]
fn a_multi_line_answer_keeps_its_lines_each_sanitized() {
    let answer = common::record(
        1,
        "2026-12-04T10:00:00Z",
        faultline::session::journal::Scope::default(),
        "operator-answer",
        serde_json::json!({
            "question": "D3.root-cause",
            "answer": "the primary acks first\n\u{1b}[31mthen replicates",
            "by": "tui",
        }),
    );
    let view = faultline::session::view::View::of(&[answer]);
    let row = view.answer_rows.first().expect("an answer row");
    assert_eq!(row.answer, "the primary acks first\nthen replicates");
}
