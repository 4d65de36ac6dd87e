//! Headless progress: a line per record, child text sanitized, a heartbeat in silence.

use std::time::Duration;

use faultline::session::journal::{Record, Scope};
use tokio::sync::mpsc::unbounded_channel;

fn record(kind: &str, data: serde_json::Value) -> Record {
    Record {
        seq: 7,
        ts: "2026-12-01T03:04:05.678Z".into(),
        scope: Scope {
            scenario: Some("D2".into()),
            arm: None,
        },
        event: faultline::session::event::Event::from_parts(kind.into(), data),
    }
}

#[test]
fn a_record_becomes_one_sanitized_line_with_time_scope_and_kind() {
    let line = faultline::headless::line(&record(
        "landing-declared",
        serde_json::json!({"seen": "n1 \u{1b}[31mWARN\u{1b}[0m replication\nto n3 timed out"}),
    ));
    assert!(
        line.starts_with("03:04:05 [D2] landing-declared "),
        "{line}"
    );
    assert!(!line.contains('\u{1b}') && !line.contains('\n'), "{line:?}");
    assert!(line.contains("WARN"), "{line}");
}

#[tokio::test]
async fn silence_prints_a_heartbeat_and_records_print_lines() {
    let (tx, rx) = unbounded_channel();
    let printer = tokio::spawn(faultline::headless::print(
        rx,
        Vec::new(),
        Duration::from_millis(100),
    ));
    tx.send(record(
        "fault-injected",
        serde_json::json!({"fault": "pause-n3"}),
    ))
    .expect("send");
    tokio::time::sleep(Duration::from_millis(350)).await;
    drop(tx);
    let out = String::from_utf8(printer.await.expect("printer ends")).expect("utf-8");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("fault-injected fault=pause-n3"), "{out}");
    let beats = lines.iter().filter(|l| l.starts_with("heartbeat:")).count();
    assert!(
        beats >= 2,
        "expected heartbeats in 350 ms of silence: {out}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("last event: fault-injected D2")),
        "{out}"
    );
}

/// When the journal closes, the printer says where each run ended, from the reducer's
/// fold of the same records: a verdict, or why it did not run.
#[tokio::test]
async fn the_journal_closing_prints_each_run_s_verdict() {
    use faultline::session::event::{Event, Reason, SessionVerdictEvent, VerdictEvent};
    use faultline::verdict::{SessionVerdict, Verdict};
    let scoped = |scenario: &str, event: Event| Record {
        seq: 1,
        ts: "2026-12-01T03:04:05.678Z".into(),
        scope: Scope {
            scenario: Some(scenario.into()),
            arm: None,
        },
        event,
    };
    let (tx, rx) = unbounded_channel();
    let printer = tokio::spawn(faultline::headless::print(
        rx,
        Vec::new(),
        Duration::from_secs(30),
    ));
    let sent = [
        scoped(
            "D1",
            Event::Verdict(VerdictEvent {
                id: "D1".into(),
                verdict: Some(Verdict::FailReproducible),
                ..VerdictEvent::default()
            }),
        ),
        scoped(
            "D7",
            Event::NotRun(Reason {
                reason: "no run spec binding".into(),
            }),
        ),
        Record {
            scope: Scope::default(),
            ..scoped(
                "",
                Event::SessionVerdict(SessionVerdictEvent {
                    verdict: Some(SessionVerdict::Blocked),
                    ..SessionVerdictEvent::default()
                }),
            )
        },
    ];
    for record in sent {
        tx.send(record).expect("send");
    }
    drop(tx);
    let out = String::from_utf8(printer.await.expect("printer ends")).expect("utf-8");
    let tail: Vec<&str> = out.lines().rev().take(3).collect();
    assert_eq!(
        tail[2],
        format!("verdict D1  {}", Verdict::FailReproducible.as_str()),
        "{out}"
    );
    assert_eq!(
        tail[1], "verdict D7  not run — no run spec binding",
        "{out}"
    );
    assert_eq!(
        tail[0],
        format!("verdict session  {}", SessionVerdict::Blocked),
        "{out}"
    );
}
