//! One session, many operators, for real: the run is its own process; clients (the
//! TUI in tmux, `attach --json`, over a real sshd, as real Unix users) come and go.
//! CI installs tmux and openssh-server and sets FAULTLINE_REQUIRE_TMUX=1 and
//! FAULTLINE_REQUIRE_USERS=1 / FAULTLINE_REQUIRE_SSHD=1.

use crate::common;
use crate::support::attach::JsonClient;
use crate::support::tmux;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const EXE: &str = env!("CARGO_BIN_EXE_faultline");

/// The child of `parent` (a pane's shell runs faultline as its only child).
fn child_of(parent: i32) -> Option<i32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (_, after) = stat.rsplit_once(") ")?;
            let ppid: i32 = after.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == parent).then_some(pid)
        })
}

fn wait(within: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// CPU time of `pid` so far, in clock ticks (utime + stime).
fn cpu_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after) = stat.rsplit_once(") ")?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Percent of one core each pid used over `window` (ticks are 1/100 s).
fn cpu_percent(pids: &[i32], window: Duration) -> Vec<(i32, f64)> {
    let before: Vec<Option<u64>> = pids.iter().map(|p| cpu_ticks(*p)).collect();
    std::thread::sleep(window);
    pids.iter()
        .zip(before)
        .filter_map(|(pid, before)| {
            let used = cpu_ticks(*pid)?.saturating_sub(before?);
            Some((*pid, used as f64 / window.as_secs_f64()))
        })
        .collect()
}

fn server_pid(session: &Path) -> i32 {
    let text = std::fs::read_to_string(session.join("server.json")).expect("server.json");
    let value: serde_json::Value = serde_json::from_str(&text).expect("server.json is JSON");
    i32::try_from(value["pid"].as_i64().expect("pid")).expect("pid fits")
}

/// Starts `faultline <args> --detach`; the session directory it prints.
fn detached(dir: &Path, args: &[&str]) -> PathBuf {
    let out = Command::new(EXE)
        .args(args)
        .arg("--detach")
        .current_dir(dir)
        .output()
        .expect("faultline --detach runs");
    assert!(
        out.status.success(),
        "--detach failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    common::session_of(&out)
}

/// The demo plan beside a run spec whose D2 holds its pause for `pause`.
fn demo_files(dir: &Path, pause: &str) {
    std::fs::write(dir.join("plan.md"), faultline::launch::DEMO_PLAN).expect("plan");
    let spec =
        faultline::launch::DEMO_RUN_SPEC.replace("duration: 1500ms", &format!("duration: {pause}"));
    assert_ne!(spec, faultline::launch::DEMO_RUN_SPEC);
    std::fs::write(dir.join("plan.run.yaml"), spec).expect("spec");
}

/// The TUI attached in a tmux pane until `ready` says so, then the pane is killed
/// (what a dropped SSH link does). Within 5 s the client is gone, the run's server
/// lives on, and neither it nor its watchdog uses more than 2 % of a core.
fn hang_up(session: &Path, name: &str, ready: impl Fn(&tmux::Tmux) -> bool, keys: &[&str]) {
    let command = format!("LANG=C.UTF-8 {EXE} attach {}; sleep 60", session.display());
    let pane = tmux::Tmux::start(name, &command);
    assert!(
        wait(Duration::from_secs(30), || ready(&pane)),
        "{name}: the attached UI never showed what was waited for:\n{}",
        pane.screen()
    );
    if !keys.is_empty() {
        pane.send(keys);
        std::thread::sleep(Duration::from_millis(300));
    }
    let shell: i32 = pane.show("#{pane_pid}").parse().expect("pane pid");
    let client = child_of(shell).expect("faultline attach runs in the pane");
    let server = server_pid(session);
    drop(pane);
    let hung_up = Instant::now();
    assert!(
        wait(Duration::from_secs(5), || !common::pid_alive(client)),
        "{name}: the attached client outlived its terminal"
    );
    assert!(
        common::pid_alive(server),
        "{name}: the run's server died with a client's terminal"
    );
    let mut watched = vec![server];
    watched.extend(common::watchdogs_of(session));
    std::thread::sleep(Duration::from_secs(2).saturating_sub(hung_up.elapsed()));
    for (pid, percent) in cpu_percent(&watched, Duration::from_secs(2)) {
        assert!(
            percent <= 2.0,
            "{name}: faultline pid {pid} uses {percent:.1}% of a core after the hang-up"
        );
    }
}

#[allow(dead_code)]
/// Answers every question the JSON client sees with its default until `stop` says
/// the one just seen is for later; returns that question.
fn answer_defaults_until(
    client: &mut JsonClient,
    stop: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    loop {
        let question = client
            .question(Duration::from_secs(120))
            .expect("the run asks its next question");
        if stop(&question) {
            return question;
        }
        let id = question["id"].as_str().expect("id").to_string();
        let default = question["default"].as_str().unwrap_or_default().to_string();
        client.answer(&id, &default);
        assert!(
            client
                .wait(Duration::from_secs(20), |m| m["type"] == "answered"
                    && m["id"] == id.as_str())
                .is_some(),
            "the answer to {id} was not taken"
        );
    }
}

fn screen_has(text: &'static str) -> impl Fn(&tmux::Tmux) -> bool {
    move |pane| pane.screen().contains(text)
}

#[test]
fn hanging_up_at_each_question_and_during_a_fault_leaves_the_run_to_the_next_operator() {
    if !tmux::available("the hang-up test") {
        return;
    }
    let _one = common::demo_lock();
    let dir = tempfile::tempdir().expect("tempdir");
    demo_files(dir.path(), "6s");
    // The same plan uninterrupted, every question at its default: the reference.
    let reference = Command::new(EXE)
        .args([
            "run",
            "plan.md",
            "--only",
            "D2,D3",
            "--headless",
            "--yes",
            "--out",
        ])
        .arg(dir.path().join("ref"))
        .current_dir(dir.path())
        .output()
        .expect("reference run");
    let expected = common::verdicts_by_id(&common::session_of(&reference));

    let out = dir.path().join("out");
    let out = out.to_str().expect("utf-8 path");
    let session = detached(
        dir.path(),
        &["run", "plan.md", "--only", "D2,D3", "--out", out],
    );
    let mut client = JsonClient::start(&session, &[], &[]);
    let mut kinds = std::collections::BTreeSet::new();
    let mut answered = std::collections::BTreeSet::new();
    let mut fault = false;
    let mut hang_ups = 0;
    // Every question is hung up on in the UI once, then answered with its default by
    // the next operator (here a JSON client); D2's fault is hung up on with the quit
    // question open.
    let ended = loop {
        let msg = client
            .next(Duration::from_secs(180))
            .expect("the run goes on to its end");
        match msg["type"].as_str() {
            Some("question") => {
                let question = &msg["question"];
                let id = question["id"].as_str().expect("id").to_string();
                if !answered.insert(id.clone()) {
                    continue;
                }
                let kind = question["kind"].as_str().unwrap_or_default().to_string();
                if kinds.insert(kind) {
                    hang_ups += 1;
                    let on_screen = format!("Question {id}");
                    hang_up(
                        &session,
                        &format!("fl-hq{hang_ups}"),
                        move |pane| pane.screen().contains(&on_screen),
                        &[],
                    );
                }
                client.answer(&id, question["default"].as_str().unwrap_or_default());
            }
            Some("record") if msg["record"]["kind"] == "fault-injected" && !fault => {
                fault = true;
                hang_ups += 1;
                hang_up(&session, "fl-hfault", screen_has("D2"), &["q"]);
                assert!(
                    common::lines(&session.join("journal.jsonl"))
                        .iter()
                        .all(|l| l.kind != "stop-asked"),
                    "a hang-up with the quit question open stopped the run"
                );
            }
            Some("ended") => break msg,
            _ => {}
        }
    };
    assert_eq!(common::verdicts_by_id(&session), expected, "{ended}");
    assert!(fault, "no hang-up during a fault");
    for kind in [
        "confirm-capability",
        "approve-change",
        "classify-failure",
        "describe",
    ] {
        assert!(
            kinds.contains(kind),
            "no hang-up at a {kind} question: {kinds:?}"
        );
    }
    // Every hang-up is in the journal as a client that joined and left.
    let lines = common::lines(&session.join("journal.jsonl"));
    let left = lines
        .iter()
        .filter(|l| l.kind == "participant-left")
        .count();
    assert!(left >= hang_ups, "{left} left for {hang_ups} hang-ups");
    assert_eq!(ended["ending"]["exit"], 1, "D3 fails: {ended}");
}
