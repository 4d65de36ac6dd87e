//! The real binary in a real terminal (tmux): the demo driven with keystrokes through
//! the checklist, an approval whose effect appears only after the keypress, the run, a
//! FAIL classification and the report; at 80x24, help opened from inside a question,
//! a refused answer, `q` `d` detaching without Enter, a question that opens while `s`
//! is being pressed, a prefix and a digit picking choices. CI installs tmux and sets
//! FAULTLINE_REQUIRE_TMUX=1.

use crate::support::tmux;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a question's answer box says while the keys typed just before it appeared
/// are being dropped.
const SETTLING: &str = "ready in a moment";

/// How long a question drops keys after it is shown, with a margin.
const GRACE_PASSED: Duration =
    faultline::tui::app::GRACE.saturating_add(Duration::from_millis(200));

/// Waits for `text` (a question's title), then until its answer box takes keys:
/// the box says so, and the grace has passed on the clock since the title showed. A
/// frame reaches the terminal in pieces, and a capture between them (seen once on a
/// loaded CI machine) had the new title over the last question's box, which never
/// said "ready in a moment": the keys sent then were dropped.
fn ready(tmux: &tmux::Tmux, text: &str, within: Duration) -> String {
    tmux.wait_for(text, within);
    let shown = Instant::now();
    let deadline = shown + Duration::from_secs(10);
    loop {
        let screen = tmux.screen();
        if !screen.contains(SETTLING) && shown.elapsed() >= GRACE_PASSED {
            return screen;
        }
        assert!(Instant::now() < deadline, "never ready:\n{screen}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The text in the answer box (the line under its title), if one is drawn.
fn answer_box(screen: &str) -> Option<String> {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let (row, col) = lines.iter().enumerate().find_map(|(i, l)| {
        let at = l.iter().collect::<String>().find("╭ answer")?;
        Some((i, screen.lines().nth(i)?[..at].chars().count()))
    })?;
    let inside: String = lines
        .get(row + 1)?
        .iter()
        .skip(col + 1)
        .take_while(|c| **c != '│')
        .collect();
    Some(inside.trim().to_string())
}

fn session_dir(out: &Path) -> Option<PathBuf> {
    std::fs::read_dir(out.join("demo-kv-replication"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .next()
}

/// Presses `s` (the Run screen's log key) every 100 ms until the question `title`
/// shows, and three times more at once: the question must take none of them (keys
/// typed within its first half second are dropped). Then its answer box is empty.
fn hammer_s_until(tmux: &tmux::Tmux, title: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while !tmux.screen().contains(title) {
        assert!(Instant::now() < deadline, "`{title}` never appeared");
        tmux.send(&["s"]);
        std::thread::sleep(Duration::from_millis(100));
    }
    tmux.send(&["s", "s", "s"]);
    let screen = ready(tmux, title, Duration::from_secs(10));
    assert_eq!(
        answer_box(&screen).as_deref(),
        Some(""),
        "the question took keys typed for the screen beneath:\n{screen}"
    );
}

/// Answers a FAIL's classification questions as an operator types them: blame SUT,
/// the bug type by a prefix of it (Enter sends the choice it highlights) and one tag
/// typed in full, severity by its number (`1`: P0), the root cause line by line.
/// D3's blame opens while `s` is being pressed on the Run screen.
fn classify(tmux: &tmux::Tmux, id: &str, (bug_type, tag): (&str, &str), cause: &[&str]) {
    let ask = |question: &str, wait: u64| {
        ready(
            tmux,
            &format!("Question {id}.{question}"),
            Duration::from_secs(wait),
        );
    };
    if id == "D3" {
        hammer_s_until(tmux, "Question D3.blame", Duration::from_secs(120));
    } else {
        ask("blame", 120);
    }
    tmux.send(&["SUT", "Enter"]);
    ask("bug-type", 10);
    tmux.send(&["-l", bug_type]);
    tmux.send(&["Enter"]);
    ask("tags", 10);
    tmux.send(&["-l", tag]);
    tmux.send(&["Enter"]);
    ask("severity", 10);
    tmux.send(&["1", "Enter"]);
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

/// Inside the open question `id`: `?` opens the help over it and Esc closes it back
/// to the question; an answer it does not take is refused with the allowed ones and
/// the question stays open.
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
    // The whole demo: in the `end-to-end` test group (.config/nextest.toml).
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    // Detached (`q` `d`), the run goes on and the same terminal attaches again.
    let detached = dir.path().join("detached");
    let command = format!(
        "cd {dir} && LANG=C.UTF-8 {exe} demo --out {out}; echo $? > {detached}; \
         LANG=C.UTF-8 {exe} attach {out}/demo-kv-replication/*; sleep 60",
        dir = dir.path().display(),
        exe = env!("CARGO_BIN_EXE_faultline"),
        out = out.display(),
        detached = detached.display(),
    );
    // The whole run in the smallest terminal the UI is made for.
    let tmux = tmux::Tmux::start_at("fl-e2e", &command, (80, 24));

    // The checklist: answered before any probe. The status line names the question
    // the run waits on; the global keys and a refused answer, inside the question.
    let screen = ready(
        &tmux,
        "Question capability.binary:fl-client",
        Duration::from_secs(20),
    );
    let status = screen.lines().last().unwrap_or_default().to_string();
    assert!(
        status.contains("waiting for you: capability.binary:fl-client"),
        "status line: {status}\n{screen}"
    );
    question_keys_at_80x24(&tmux, "capability.binary:fl-client");
    // `q` asks; `d` alone detaches (no Enter): the UI exits 0, the run goes on, and
    // the question waits for the UI attached again.
    tmux.send(&["q"]);
    tmux.wait_for("Question quit", Duration::from_secs(10));
    tmux.send(&["d"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !detached.exists() {
        assert!(
            Instant::now() < deadline,
            "`d` did not detach:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let code = std::fs::read_to_string(&detached).unwrap_or_default();
    assert_eq!(code.trim(), "0", "detaching exits 0");
    ready(
        &tmux,
        "Question capability.binary:fl-client",
        Duration::from_secs(20),
    );
    tmux.send(&["Enter"]);
    ready(
        &tmux,
        "Question capability.binary:demo-skewd",
        Duration::from_secs(10),
    );
    tmux.send(&["Enter"]);

    // The approval: the install's file exists only after the keypress.
    ready(
        &tmux,
        "Question install.binary:fl-client",
        Duration::from_secs(20),
    );
    let session = session_dir(&out).expect("session directory");
    let placed = session.join("bin/fl-client");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!placed.exists(), "installed before the operator approved");
    // Ctrl-E puts the offered command in the editor; sent as is, it runs as edited.
    tmux.send(&["C-e"]);
    std::thread::sleep(Duration::from_millis(500));
    tmux.send(&["Enter"]);
    ready(
        &tmux,
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
    // A note on the run: `m` opens the editor, Ctrl-J starts a line, Enter sends it; a
    // question asked meanwhile waits for it to close.
    tmux.send(&["m"]);
    let screen = tmux.wait_for("Note on the run", Duration::from_secs(10));
    assert!(screen.contains("Esc cancel"), "{screen}");
    tmux.send(&["-l", "n3 paused as planned"]);
    tmux.send(&["C-j"]);
    tmux.send(&["-l", "the client retried"]);
    tmux.send(&["Enter"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while tmux.screen().contains("Note on the run") {
        assert!(
            Instant::now() < deadline,
            "Enter did not send the note:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // The run, then the FAIL classification: D3, then D8 (n2's stale reads).
    classify(
        &tmux,
        "D3",
        ("crash", "durability"),
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
    assert_eq!(answer("D3.severity").as_deref(), Some("P0"), "`1` picks P0");
    assert_eq!(
        answer("D3.bug-type").as_deref(),
        Some("crash-recovery"),
        "`crash` then Enter sends the choice it highlights"
    );
    assert!(
        records.iter().all(|r| r.kind != "stop-asked"),
        "detaching stopped the run"
    );
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
    // The note, journaled with its lines and who wrote it.
    let note = records
        .iter()
        .find(|r| r.kind == "operator-note")
        .expect("the note journaled");
    assert_eq!(
        note.data["text"], "n3 paused as planned\nthe client retried",
        "{}",
        note.data
    );
    assert_eq!(note.data["who"]["uid"], uid, "{}", note.data);
    assert_eq!(note.data["who"]["role"], "owner", "{}", note.data);
    // Whatever the `s` presses left open on the Run screen closes first.
    tmux.send(&["Escape"]);
    tmux.send(&["q"]);
}
