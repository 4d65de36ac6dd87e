//! Every terminal writer sanitizes outside text: a plan title and a scenario name
//! (`lint`, `resume`), a `/proc` cmdline (`heal`), a history (`check`), a journal and a
//! session path (`resume`, `report`), a server's notes and ending (`attach`, `stop`,
//! `run`) carrying an OSC 0 title change, an OSC 52 clipboard write and a CSI 2J
//! screen clear reach stdout and stderr without one ESC or BEL byte.

use crate::common::AppendKind;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

use faultline::session::journal::{Journal, Scope};
use serde_json::json;

const TITLE_CHANGE: &str = "\x1b]0;pwned\x07";
const CLIPBOARD: &str = "\x1b]52;c;ZXZpbA==\x07";
const CLEAR: &str = "\x1b[2J";

/// `before`, the three sequences, `after`: shown on a terminal as `before` + `after`.
fn hostile(before: &str, after: &str) -> String {
    format!("{before}{TITLE_CHANGE}{CLIPBOARD}{CLEAR}{after}")
}

/// Neither stream holds an ESC or a BEL byte.
fn assert_clean(out: &Output) {
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !bytes.contains(&0x1b) && !bytes.contains(&0x07),
            "raw escape on {name}: {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
}

fn faultline(args: &[&std::ffi::OsStr], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(cwd)
        // Headless: no terminal here, and no UI for `resume`.
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the faultline binary runs")
}

fn both(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A plan whose title and scenario name carry the sequences; without an oracle, so
/// lint (and a resume's accept) hands it back quoting the scenario.
fn hostile_plan() -> String {
    format!(
        "# Test Plan: {}\n\n\
         **Date:** 2026-12-01\n**Plan mode:** change-scoped\n\n\
         ## 1b. Claims under test\n\n\
         | ID | Claim | Category | Source | Inferred? |\n|---|---|---|---|---|\n\
         | C1 | Acked writes survive a crash. | durability | store.rs | no |\n\n\
         ## 7. Scenarios\n\n\
         ### Scenario S1: {}\n\n\
         - **Falsifies if it FAILs:** C1\n\
         - **Workload:** one client writing unique keys for 5 s.\n\
         - **Faults:** SIGKILL the primary at 2 s.\n\
         - **Smoke budget:** 1 seed, 3 s.\n",
        hostile("tiny ", "store"),
        hostile("acked_", "writes")
    )
}

#[test]
fn lint_shows_a_hostile_title_and_scenario_name_without_escapes() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The plan's path is printed too (`file:line`, the sidecar it looked for).
    let plans = dir.path().join(hostile("plans-", "-here"));
    std::fs::create_dir(&plans).expect("plan dir");
    let plan = plans.join("plan.md");
    std::fs::write(&plan, hostile_plan()).expect("plan");

    let out = faultline(&["lint".as_ref(), plan.as_os_str()], dir.path());
    assert_eq!(out.status.code(), Some(65), "{}", both(&out));
    assert_clean(&out);
    let text = both(&out);
    assert!(text.contains("Plan: tiny store"), "{text}");
    assert!(text.contains("S1 acked_writes"), "{text}");
    assert!(text.contains("plans--here"), "{text}");
    // Multi-line output keeps its lines.
    assert!(text.lines().count() > 3, "{text}");

    // JSON escapes the sequences (`\u001b`), so the title arrives whole, never raw.
    let out = faultline(
        &["lint".as_ref(), plan.as_os_str(), "--json".as_ref()],
        dir.path(),
    );
    assert_clean(&out);
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("lint --json");
    assert_eq!(value["title"], json!(hostile("tiny ", "store")), "{value}");
}

#[test]
fn heal_names_a_hostile_proc_cmdline_without_escapes_and_ends_the_process() {
    let dir = tempfile::tempdir().expect("tempdir");
    drop(Journal::open(&dir.path().join("journal.jsonl")).expect("journal"));
    // A process bearing the session's mark whose argv (its `/proc` cmdline) carries
    // the sequences.
    let mut marked = Command::new("sleep")
        .arg0(hostile("sleep-", "-marked"))
        .arg("100")
        .env(
            faultline::exec::mark::VAR,
            faultline::exec::mark::value(dir.path()),
        )
        .spawn()
        .expect("sleep");

    let out = faultline(&["heal".as_ref(), dir.path().as_os_str()], dir.path());
    let status = marked.wait().expect("waits");
    assert_eq!(out.status.code(), Some(0), "{}", both(&out));
    assert_clean(&out);
    let text = both(&out);
    assert!(
        text.contains(&format!(
            "process {} (`sleep--marked 100`) bearing the session's mark ended",
            marked.id()
        )),
        "{text}"
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "the marked process was killed");
}

#[test]
fn check_shows_hostile_history_values_without_escapes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let history = |name: &str, ops: &[serde_json::Value]| {
        let path = dir.path().join(name);
        let text: String = ops.iter().map(|op| format!("{op}\n")).collect();
        std::fs::write(&path, text).expect("history");
        path
    };
    let check = |path: &Path, json: bool| {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "check".as_ref(),
            "--checker".as_ref(),
            "list-append".as_ref(),
            "--format".as_ref(),
            "txn-jsonl".as_ref(),
            path.as_os_str(),
        ];
        if json {
            args.push("--json".as_ref());
        }
        faultline(&args, dir.path())
    };
    // A key in the report (stdout), as text and as JSON.
    let key = hostile("k-", "-1");
    let aborted = history(
        "aborted.jsonl",
        &[
            json!({"op_id": 0, "process": 0, "invoke_ts": 0, "complete_ts": 1,
                "type": "fail", "value": [["append", key, 1]]}),
            json!({"op_id": 1, "process": 1, "invoke_ts": 2, "complete_ts": 3,
                "type": "ok", "value": [["r", key, [1]]]}),
        ],
    );
    for json in [false, true] {
        let out = check(&aborted, json);
        assert_eq!(out.status.code(), Some(1), "{}", both(&out));
        assert_clean(&out);
    }
    assert!(both(&check(&aborted, false)).contains("k--1"));
    // A value the parser quotes in its refusal (stderr).
    let refused = history(
        "refused.jsonl",
        &[
            json!({"op_id": 0, "process": 0, "invoke_ts": 0, "complete_ts": 1,
            "type": hostile("bogus-", "-type"), "value": [["append", "k", 1]]}),
        ],
    );
    let out = check(&refused, false);
    assert_eq!(out.status.code(), Some(66), "{}", both(&out));
    assert_clean(&out);
    assert!(both(&out).contains("bogus--type"), "{}", both(&out));
}

/// A killed session whose saved plan, plan label, journal and directory name carry
/// the sequences: its journal holds a command fault still to heal, and no outcome.
fn hostile_session(root: &Path) -> std::path::PathBuf {
    let session = root.join(hostile("session-", "-1"));
    let input = session.join("input");
    std::fs::create_dir_all(&input).expect("input dir");
    std::fs::write(input.join("plan.md"), hostile_plan()).expect("plan");
    let request = json!({
        "plan_label": hostile("label-", "-plan.md"),
        "spec_label": null,
        "sut_dir": root.display().to_string(),
        "tier": "smoke",
        "only": null,
        "report_path": null,
        "vars": {},
        "rerun_command": "faultline run plan.md",
    });
    std::fs::write(input.join("request.json"), request.to_string()).expect("request");
    let mut journal = Journal::open(&session.join("journal.jsonl")).expect("journal");
    journal
        .append_kind(
            Scope {
                scenario: Some("S1".into()),
                arm: None,
            },
            "fault-injected",
            &json!({"fault": hostile("fault-", "-flag"), "pid": null,
                "undo": {"heal": "true", "cwd": root.display().to_string()}}),
        )
        .expect("append");
    session
}

#[test]
fn resume_and_report_show_a_hostile_session_without_escapes() {
    let root = tempfile::tempdir().expect("tempdir");
    let session = hostile_session(root.path());

    // Heals the journaled fault, then hands the saved plan back before running it.
    let out = faultline(
        &[
            "resume".as_ref(),
            session.as_os_str(),
            "--headless".as_ref(),
        ],
        root.path(),
    );
    assert_eq!(out.status.code(), Some(65), "{}", both(&out));
    assert_clean(&out);
    let text = both(&out);
    assert!(text.contains("fault--flag"), "{text}");
    assert!(text.contains("Plan: tiny store (label--plan.md)"), "{text}");
    assert!(text.contains("S1 acked_writes"), "{text}");

    let out = faultline(&["report".as_ref(), session.as_os_str()], root.path());
    assert_eq!(out.status.code(), Some(66), "{}", both(&out));
    assert_clean(&out);
    assert!(both(&out).contains("session--1"), "{}", both(&out));
}

/// What a server sends at the end (`attach`, `stop`, `run` print it after the UI
/// has left the screen): notes, report path, unwritten report, session, question.
#[test]
fn a_servers_notes_and_ending_are_written_without_escapes() {
    let ending = faultline::session::wire::Ending {
        session: hostile("/sessions/", "/s1"),
        verdict: None,
        exit: 3,
        report: None,
        unwritten: Some(hostile("report not written: ", "disk full\nsecond line")),
        unanswered: Some(hostile("classify.", "S1")),
        notes: vec![
            hostile("faultline: heal ", "failed"),
            hostile("healed: ", "fault n1"),
        ],
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    faultline::attach::write_notes(&mut out, &mut err, &ending.notes).expect("writes");
    faultline::attach::write_ending(&mut out, &mut err, &ending).expect("writes");
    let out = String::from_utf8(out).expect("utf-8");
    let err = String::from_utf8(err).expect("utf-8");
    assert_eq!(
        out,
        "healed: fault n1\nreport not written: disk full\nsecond line\nsession: /sessions//s1\n"
    );
    assert_eq!(err, "faultline: heal failed\nfaultline: classify.S1\n");

    // `attach --json` writes serde_json's line as it is: control characters are
    // escaped (`\u001b`, `\u0007`), so the ending arrives whole and never raw.
    let line = serde_json::to_string(&faultline::session::wire::ServerMsg::Ended {
        ending: ending.clone(),
    })
    .expect("encodes");
    assert!(!line.contains(['\x1b', '\x07']), "{line}");
    assert!(line.contains(r"\u001b]0;pwned\u0007"), "{line}");

    let report = faultline::session::wire::Ending {
        report: Some(hostile("/r/", "report.html")),
        ..ending
    };
    let mut out = Vec::new();
    faultline::attach::write_ending(&mut out, std::io::sink(), &report).expect("writes");
    assert!(out.starts_with(b"report: /r/report.html\n"));
}
