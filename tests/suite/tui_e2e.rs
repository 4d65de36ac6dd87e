//! The real binary in a real terminal (tmux): the demo driven with keystrokes through
//! the checklist, an approval whose effect appears only after the keypress, the run, a
//! FAIL classification and the report; at 80x24, help opened from inside a question
//! and a refused answer. CI installs tmux and sets FAULTLINE_REQUIRE_TMUX=1.

use crate::common;
use crate::support::tmux;

use std::path::{Path, PathBuf};
use std::time::Duration;

fn session_dir(out: &Path) -> Option<PathBuf> {
    std::fs::read_dir(out.join("demo-kv-replication"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .next()
}

/// Inside the open question `id`: `?` opens the help over it and Esc closes it back
/// to the question; an answer it does not take is refused with the allowed ones and
/// the question stays open.
/// Answers a FAIL's classification questions as an operator types them: blame SUT,
/// the bug type and one tag typed in full (an answer typed replaces the preselected
/// default), the first severity Tab offers (P0), the root cause line by line.
fn classify(tmux: &tmux::Tmux, id: &str, (bug_type, tag): (&str, &str), cause: &[&str]) {
    let ask = |question: &str, wait: u64| {
        tmux.wait_for(
            &format!("Question {id}.{question}"),
            Duration::from_secs(wait),
        );
    };
    ask("blame", 120);
    tmux.send(&["SUT", "Enter"]);
    ask("bug-type", 10);
    tmux.send(&["-l", bug_type]);
    tmux.send(&["Enter"]);
    ask("tags", 10);
    tmux.send(&["-l", tag]);
    tmux.send(&["Enter"]);
    ask("severity", 10);
    tmux.send(&["Tab", "Enter"]);
    ask("root-cause", 10);
    for (n, line) in cause.iter().enumerate() {
        if n > 0 {
            tmux.send(&["Enter"]);
        }
        tmux.send(&["-l", line]);
    }
    tmux.send(&["C-s"]);
    ask("next-action", 10);
    tmux.send(&["C-s"]);
}

fn question_keys_at_80x24(tmux: &tmux::Tmux, id: &str) {
    let title = format!("Question {id}");
    tmux.send(&["?"]);
    let screen = tmux.wait_for("answering a question", Duration::from_secs(10));
    assert!(screen.contains("Keys (Esc closes)"), "{screen}");
    assert!(screen.contains("F1 / ?"), "{screen}");
    tmux.send(&["Escape"]);
    tmux.wait_for(&title, Duration::from_secs(10));
    assert!(!tmux.screen().contains("Keys (Esc closes)"));

    tmux.send(&["-l", "sometimes"]);
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("refused:", Duration::from_secs(10));
    assert!(
        screen.contains(&title),
        "the question stays open:\n{screen}"
    );
    assert!(screen.contains("is not an answer"), "{screen}");
    assert!(screen.contains("allowed:"), "{screen}");
    assert!(screen.contains("have"), "{screen}");
    assert!(
        screen.lines().count() <= 24 && screen.lines().all(|l| l.chars().count() <= 80),
        "{screen}"
    );
    // Esc clears the refused text; the default is picked again.
    tmux.send(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
}

#[test]
fn the_demo_driven_by_keystrokes_from_checklist_to_report() {
    if !tmux::available("the terminal end-to-end test") {
        return;
    }
    // The whole demo: not beside another module's demo (see `common::demo_lock`).
    let _one = common::demo_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let command = format!(
        "cd {} && LANG=C.UTF-8 {} demo --out {}; sleep 60",
        dir.path().display(),
        env!("CARGO_BIN_EXE_faultline"),
        out.display()
    );
    // The whole run in the smallest terminal the UI is made for.
    let tmux = tmux::Tmux::start_at("fl-e2e", &command, (80, 24));

    // The checklist: answered before any probe. The status line names the question
    // the run waits on; the global keys and a refused answer, inside the question.
    let screen = tmux.wait_for(
        "Question capability.binary:fl-client",
        Duration::from_secs(20),
    );
    let status = screen.lines().last().unwrap_or_default().to_string();
    assert!(
        status.contains("waiting for you: capability.binary:fl-client"),
        "status line: {status}\n{screen}"
    );
    question_keys_at_80x24(&tmux, "capability.binary:fl-client");
    tmux.wait_for(
        "Question capability.binary:fl-client",
        Duration::from_secs(10),
    );
    tmux.send(&["Enter"]);
    tmux.wait_for(
        "Question capability.binary:demo-skewd",
        Duration::from_secs(10),
    );
    tmux.send(&["Enter"]);

    // The approval: the install's file exists only after the keypress.
    tmux.wait_for("Question install.binary:fl-client", Duration::from_secs(20));
    let session = session_dir(&out).expect("session directory");
    let placed = session.join("bin/fl-client");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!placed.exists(), "installed before the operator approved");
    // Ctrl-E puts the offered command in the editor; sent as is, it runs as edited.
    tmux.send(&["C-e"]);
    std::thread::sleep(Duration::from_millis(500));
    tmux.send(&["Enter"]);
    tmux.wait_for(
        "Question missing.binary:demo-skewd",
        Duration::from_secs(20),
    );
    assert!(placed.exists(), "the approved install did not happen");
    tmux.send(&["Enter"]);

    // While D2's pause is held, the Run screen shows D2 and its fault, not D1's end;
    // the status line says the proof the `fault-proof` record holds.
    let screen = tmux.wait_for("D2: pause-n3 proven, held", Duration::from_secs(120));
    assert!(screen.contains("pause-n3: injected"), "{screen}");
    assert!(screen.contains("D2 fault"), "the pane tails D2:\n{screen}");
    assert!(!screen.contains("D1 done"), "{screen}");
    assert!(!screen.contains("no fault injected yet"), "{screen}");

    // The run, then the FAIL classification: D3, then D8 (n2's stale reads).
    classify(
        &tmux,
        "D3",
        ("crash-recovery", "durability"),
        &["acked before replicated", "on the old primary"],
    );
    classify(
        &tmux,
        "D8",
        ("ordering", "consistency"),
        &["n2 serves reads before the primary ships"],
    );

    // The report.
    let screen = tmux.wait_for("Result: FAIL", Duration::from_secs(120));
    assert!(screen.contains("Findings report"), "{screen}");

    let journal = std::fs::read_to_string(session.join("journal.jsonl")).expect("journal");
    let approved = journal
        .find("\"install-approved\"")
        .expect("approval journaled");
    let installed = journal
        .find("\"install-finished\"")
        .expect("install journaled");
    assert!(
        approved < installed,
        "the decision is journaled before the install"
    );
    assert!(
        journal.contains("\"edited\":true"),
        "the edited command is journaled as edited"
    );
    let records = crate::common::lines(&session.join("journal.jsonl"));
    let blame = records
        .iter()
        .find(|r| r.kind == "operator-answer" && r.data["question"] == "D3.blame")
        .expect("blame answered");
    assert_eq!(blame.data["answer"], "SUT");
    let answer = |id: &str| {
        records
            .iter()
            .find(|r| r.kind == "operator-answer" && r.data["question"] == id)
            .map(|r| r.data["answer"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(answer("D3.severity").as_deref(), Some("P0"));
    assert_eq!(answer("D8.bug-type").as_deref(), Some("ordering"));
    let install = answer("install.binary:fl-client").unwrap_or_default();
    assert!(install.starts_with("edit: cp -- "), "{install}");
    assert_eq!(
        answer("D3.root-cause").as_deref(),
        Some("acked before replicated\non the old primary")
    );
    let finding = std::fs::read_to_string(session.join("findings/D3.md")).expect("finding");
    assert!(finding.contains("> on the old primary"), "{finding}");
    // Who answered is who the kernel says is at the other end of the socket.
    let uid = nix::unistd::getuid().as_raw();
    assert_eq!(
        blame.data["who"]["uid"], uid,
        "operator identity: {}",
        blame.data
    );
    assert_eq!(
        blame.data["who"]["user"],
        faultline::untrusted::user_name(uid),
        "operator identity: {}",
        blame.data
    );
    assert_eq!(blame.data["who"]["role"], "owner", "{}", blame.data);
    tmux.send(&["q"]);
}
