//! One session, many operators, for real: the run is its own process; clients (the
//! TUI in tmux, `attach --json`, over a real sshd, as real Unix users) come and go.
//! CI installs tmux and openssh-server and sets FAULTLINE_REQUIRE_TMUX=1 and
//! FAULTLINE_REQUIRE_USERS=1 / FAULTLINE_REQUIRE_SSHD=1.

use crate::common;
use crate::support::attach::JsonClient;
use crate::support::sshd::{Sshd, keygen};
use crate::support::tmux;
use crate::support::users::{UnixUser, can_make_users};

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

/// The server's pid and socket, as the session's registry entry names them.
fn served_by(session: &Path) -> (i32, PathBuf) {
    let out = Command::new(EXE)
        .args(["sessions", "--json"])
        .output()
        .expect("faultline sessions runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let entry: serde_json::Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["session"].as_str() == Some(session.to_str().expect("utf-8")))
        .unwrap_or_else(|| {
            panic!(
                "{} is not among the running sessions:\n{text}",
                session.display()
            )
        });
    let pid = i32::try_from(entry["pid"].as_i64().expect("pid")).expect("pid fits");
    let socket = entry["socket"].as_str().expect("socket").into();
    (pid, socket)
}

fn server_pid(session: &Path) -> i32 {
    served_by(session).0
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

fn screen_has(text: &'static str) -> impl Fn(&tmux::Tmux) -> bool {
    move |pane| pane.screen().contains(text)
}

#[test]
fn hanging_up_at_each_question_and_during_a_fault_leaves_the_run_to_the_next_operator() {
    if !tmux::available("the hang-up test") {
        return;
    }
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
    let reference = common::session_of(&reference);

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
    same_verdicts_but_for_timing(
        &common::verdict_reasons(&session),
        &common::verdict_reasons(&reference),
        &ended,
    );
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

/// Audit items that measure the run's own timing: the workload's rate and length,
/// recovery within its timeout. On a loaded machine one of two runs of the same plan
/// may fall short of them (and be PARTIAL-surface, as the method says it must).
const TIMING: [&str; 3] = [
    "`gbb-1-workload-rate` failed",
    "`gbb-6-duration` failed",
    "`gbb-8-recovery` failed",
];

/// The hang-ups changed no verdict: every scenario's verdict is the reference's,
/// unless the two differ because one run fell short of a timing measurement (its
/// reasons say which), which a hang-up cannot cause and a busy machine can.
fn same_verdicts_but_for_timing(
    got: &std::collections::BTreeMap<String, (String, String)>,
    want: &std::collections::BTreeMap<String, (String, String)>,
    ended: &serde_json::Value,
) {
    let ids: std::collections::BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    for id in ids {
        let (g, w) = (got.get(id), want.get(id));
        if g.map(|x| &x.0) == w.map(|x| &x.0) {
            continue;
        }
        let timing = |r: Option<&(String, String)>| {
            r.is_some_and(|(_, reasons)| TIMING.iter().any(|t| reasons.contains(t)))
        };
        assert!(
            timing(g) || timing(w),
            "{id}: this run {g:?}, the reference {w:?}, and neither fell short of a \
             timing measurement: {ended}"
        );
        eprintln!("{id}: verdicts differ on timing alone: this run {g:?}, the reference {w:?}");
    }
}

fn refusals(client: &JsonClient, id: &str) -> Vec<String> {
    client
        .seen
        .iter()
        .filter(|m| m["type"] == "refused" && m["id"] == id)
        .map(|m| m["why"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn who_may_answer_is_the_kernel_s_word_and_the_first_answer_wins() {
    if !can_make_users() {
        return;
    }
    let approver = UnixUser::create("flap");
    let viewer = UnixUser::create("flvw");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let session = detached(
        dir.path(),
        &[
            "demo",
            "--only",
            "D1",
            "--out",
            out.to_str().expect("utf-8"),
            "--approver",
            &approver.name,
            "--viewer",
            &viewer.name,
        ],
    );
    use std::os::unix::fs::PermissionsExt;
    let mode_of = |path: &Path| {
        std::fs::metadata(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .permissions()
            .mode()
    };
    // Others may traverse the session directory (to reach artifacts/), never list it;
    // the journal and the private directories are closed to them.
    let mode = mode_of(&session);
    assert_eq!(
        mode & 0o007,
        0o001,
        "the session directory is open to others: {mode:o}"
    );
    for private in ["journal.jsonl", "input", "findings", "logs", "metrics"] {
        let mode = mode_of(&session.join(private));
        assert_eq!(mode & 0o007, 0, "{private} is open to others: {mode:o}");
    }
    // Named users in the ACLs: exactly the two listed (the group bits show its mask).
    let mut listed = vec![approver.name.clone(), viewer.name.clone()];
    listed.sort();
    for path in [session.clone(), session.join("journal.jsonl")] {
        let acl = exacl::getfacl(&path, None).expect("the ACL");
        let mut named: Vec<String> = acl
            .iter()
            .filter(|e| e.kind == exacl::AclEntryKind::User && !e.name.is_empty())
            .filter(|e| !e.flags.contains(exacl::Flag::DEFAULT))
            .map(|e| e.name.clone())
            .collect();
        named.sort();
        assert_eq!(named, listed, "{}", path.display());
    }
    let socket_mode = std::fs::metadata(served_by(&session).1)
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(
        socket_mode & 0o007,
        0,
        "the socket is open to others: {socket_mode:o}"
    );

    // Not on the list: the file system keeps them out, and does not even tell them
    // the session exists (the same words as for a session that never was).
    let nobody = ["runuser", "-u", "nobody", "--"];
    let mut stranger = JsonClient::start(&session, &nobody, &[]);
    assert_eq!(stranger.exit(Duration::from_secs(20)), Some(66));
    let said = stranger.stderr();
    assert!(
        said.contains("no running session you may attach to"),
        "{said}"
    );
    let mut ghost = JsonClient::start(&session.with_file_name("19700101T000000Z"), &nobody, &[]);
    assert_eq!(ghost.exit(Duration::from_secs(20)), Some(66));
    assert_eq!(
        ghost.stderr().replace("19700101T000000Z", "X"),
        said.replace(
            session.file_name().and_then(|n| n.to_str()).expect("name"),
            "X"
        ),
        "an unlisted user tells a hidden session from a missing one"
    );

    // The viewer sees the question; its answer is refused and journaled as refused.
    let wrap = viewer.runuser();
    let wrap: Vec<&str> = wrap.iter().map(String::as_str).collect();
    let mut watching = JsonClient::start(&session, &wrap, &[]);
    let question = watching
        .question(Duration::from_secs(30))
        .expect("the viewer sees the question");
    let id = question["id"].as_str().expect("id").to_string();
    watching.answer(&id, question["default"].as_str().unwrap_or_default());
    assert!(
        watching
            .wait(Duration::from_secs(10), |m| m["type"] == "refused"
                && m["id"] == id.as_str())
            .is_some_and(|m| m["why"]
                .as_str()
                .is_some_and(|w| w.contains("viewers do not answer"))),
        "{:?}",
        watching.seen
    );
    // The viewer's own terminal (the UI knows its role from the server's welcome):
    // told it watches, shown the question, offered no answer box and no keys to
    // answer with.
    if tmux::available("the viewer's terminal") {
        let command = format!(
            "LANG=C.UTF-8 runuser -u {} -- {EXE} attach {}; sleep 60",
            viewer.name,
            session.display()
        );
        let pane = tmux::Tmux::start("fl-viewer", &command);
        let screen = pane.wait_for(&format!("Question {id}"), Duration::from_secs(30));
        let status = screen.lines().last().unwrap_or_default();
        assert!(status.contains("watching (viewer)"), "{screen}");
        assert!(
            screen.contains("watching (viewer): the owner or an approver answers"),
            "{screen}"
        );
        for invite in ["╭ answer", "Enter send", "↑↓", "waiting for you"] {
            assert!(
                !screen.contains(invite),
                "{invite} shown to a viewer:\n{screen}"
            );
        }
    }

    // The approver's answer is taken and journaled with its uid and user name.
    let wrap = approver.runuser();
    let wrap: Vec<&str> = wrap.iter().map(String::as_str).collect();
    let mut approving = JsonClient::start(&session, &wrap, &[]);
    let asked = approving
        .question(Duration::from_secs(30))
        .expect("the approver sees it");
    assert_eq!(asked["id"], id.as_str());
    approving.answer(&id, asked["default"].as_str().unwrap_or_default());
    assert!(
        approving
            .wait(Duration::from_secs(10), |m| m["type"] == "answered"
                && m["id"] == id.as_str())
            .is_some()
    );
    // `answered` goes out when the engine is handed the answer; the engine journals
    // it right after, so the record may trail the message by a moment.
    let journal = session.join("journal.jsonl");
    let taken_in = |lines: &[common::Line]| {
        lines
            .iter()
            .find(|l| l.kind == "operator-answer" && l.data["question"] == id.as_str())
            .cloned()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut lines = common::lines(&journal);
    while taken_in(&lines).is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        lines = common::lines(&journal);
    }
    let taken = taken_in(&lines).expect("the approver's answer is journaled");
    assert_eq!(taken.data["who"]["uid"], approver.uid);
    assert_eq!(taken.data["who"]["user"], approver.name.as_str());
    assert_eq!(taken.data["who"]["role"], "approver");
    // Notes (issue 32): the approver's is journaled with the kernel's word for who
    // wrote it; the viewer's is refused like its answer, and journaled nowhere.
    watching.send(&serde_json::json!({"type": "note", "text": "the viewer's note"}));
    assert!(
        watching
            .wait(Duration::from_secs(10), |m| m["type"] == "refused"
                && m["id"].is_null()
                && m["why"]
                    .as_str()
                    .is_some_and(|w| w.contains("viewers do not leave notes")))
            .is_some(),
        "{:?}",
        watching.seen
    );
    approving.send(&serde_json::json!({"type": "note", "text": "seen from the approver's seat"}));
    assert!(
        approving
            .wait(Duration::from_secs(10), |m| m["type"] == "record"
                && m["record"]["kind"] == "operator-note"
                && m["record"]["data"]["who"]["uid"] == approver.uid)
            .is_some(),
        "{:?}",
        approving.seen
    );
    let refused = lines
        .iter()
        .find(|l| l.kind == "answer-refused")
        .expect("the viewer's refusal is journaled");
    assert_eq!(refused.data["who"]["uid"], viewer.uid);
    // Joins are journaled in batches, every half second.
    let joined = |lines: &[common::Line]| {
        lines.iter().any(|l| {
            l.kind == "participant-joined"
                && l.data["who"]["user"] == viewer.name.as_str()
                && l.data["who"]["role"] == "viewer"
        })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !joined(&lines) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        lines = common::lines(&journal);
    }
    assert!(joined(&lines), "the viewer's join is journaled");

    // 200 answers to the next question from two clients at once: one is taken,
    // every other is told who won.
    let mut owner = JsonClient::start(&session, &[], &[]);
    let next = owner
        .question(Duration::from_secs(60))
        .expect("a second question");
    let next_id = next["id"].as_str().expect("id").to_string();
    assert!(
        approving
            .wait(Duration::from_secs(10), |m| m["type"] == "question"
                && m["question"]["id"] == next_id.as_str())
            .is_some()
    );
    let text = next["default"].as_str().unwrap_or_default().to_string();
    let burst = |id: &str| -> String {
        (0..100)
            .map(|_| {
                serde_json::json!({"type": "answer", "id": id, "text": text}).to_string() + "\n"
            })
            .collect()
    };
    let (one, two) = (burst(&next_id), burst(&next_id));
    std::thread::scope(|s| {
        s.spawn(|| owner.send_raw(&one));
        s.spawn(|| approving.send_raw(&two));
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while refusals(&owner, &next_id).len() + refusals(&approving, &next_id).len() < 199
        && Instant::now() < deadline
    {
        owner.wait(Duration::from_millis(200), |_| false);
        approving.wait(Duration::from_millis(200), |_| false);
    }
    let all: Vec<String> = refusals(&owner, &next_id)
        .into_iter()
        .chain(refusals(&approving, &next_id))
        .collect();
    assert_eq!(all.len(), 199, "every answer but one is refused");
    let winner = owner
        .seen
        .iter()
        .find(|m| m["type"] == "answered" && m["id"] == next_id.as_str())
        .expect("the owner is told it was answered")["by"]
        .as_str()
        .expect("by")
        .to_string();
    assert!(
        all.iter()
            .all(|why| *why == format!("already answered by {winner}")),
        "{all:?}"
    );
    let journaled = || -> Vec<common::Line> {
        common::lines(&journal)
            .into_iter()
            .filter(|l| l.kind == "operator-answer" && l.data["question"] == next_id.as_str())
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut taken = journaled();
    while taken.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        taken = journaled();
    }
    assert_eq!(taken.len(), 1, "exactly one answer is journaled");

    // The viewer may not stop the run; the owner may.
    let stop = |wrap: &[&str]| {
        let mut command = match wrap.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(EXE);
                c
            }
            None => Command::new(EXE),
        };
        command
            .arg("stop")
            .arg(&session)
            .output()
            .expect("faultline stop")
    };
    let wrap = viewer.runuser();
    let wrap: Vec<&str> = wrap.iter().map(String::as_str).collect();
    let refused = stop(&wrap);
    let (said, why) = (
        String::from_utf8_lossy(&refused.stdout),
        String::from_utf8_lossy(&refused.stderr),
    );
    assert_eq!(refused.status.code(), Some(77), "{said}\n{why}");
    // The viewer's stop prints only the refusal: nothing reads as done ("stopping
    // …: healing and writing the documents" never appears).
    assert_eq!(said, "", "a refused stop prints nothing on stdout: {said}");
    let lines: Vec<&str> = why.lines().collect();
    assert_eq!(lines.len(), 1, "only the refusal: {why}");
    assert!(
        lines[0].starts_with("faultline: ") && lines[0].contains("viewers cannot stop the run"),
        "{why}"
    );
    assert!(!why.contains("stopping"), "{why}");
    let stopped = stop(&[]);
    assert!(
        String::from_utf8_lossy(&stopped.stdout).contains("session verdict:"),
        "{}",
        String::from_utf8_lossy(&stopped.stdout)
    );
    let stops: Vec<common::Line> = common::lines(&journal)
        .into_iter()
        .filter(|l| l.kind == "stop-asked")
        .collect();
    assert!(
        stops.iter().all(|l| l.data["who"]["role"] == "owner") && !stops.is_empty(),
        "only the owner's stop is journaled: {stops:?}"
    );
    // The approver's note is in report.md with its author; the viewer's is nowhere.
    let report =
        std::fs::read_to_string(session.join("findings").join("report.md")).expect("report.md");
    assert!(
        report.contains(&format!(
            "**Note 1** by {} (uid {}, approver), ",
            approver.name, approver.uid
        )) && report.contains("\n```\nseen from the approver's seat\n```\n"),
        "{report}"
    );
    assert!(!report.contains("the viewer's note"), "{report}");
    let notes: Vec<common::Line> = common::lines(&journal)
        .into_iter()
        .filter(|l| l.kind == "operator-note")
        .collect();
    assert!(
        notes.len() == 1 && notes[0].data["who"]["uid"] == approver.uid,
        "{notes:?}"
    );
}

#[test]
fn attach_over_a_real_sshd_with_a_key_bound_name_and_as_json() {
    if !tmux::available("the SSH attach test") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let session = detached(
        dir.path(),
        &[
            "demo",
            "--only",
            "D1",
            "--out",
            out.to_str().expect("utf-8"),
        ],
    );
    let keys = dir.path().join("keys");
    std::fs::create_dir(&keys).expect("keys dir");
    keygen(&keys.join("alice"));
    keygen(&keys.join("script"));
    let public =
        |name: &str| std::fs::read_to_string(keys.join(format!("{name}.pub"))).expect("pub key");
    // Alice's key may only attach, under her name; the script's key runs what it asks.
    let authorized = format!(
        "command=\"{EXE} attach --as alice {}\",no-port-forwarding,no-agent-forwarding {}{}",
        session.display(),
        public("alice"),
        public("script")
    );
    let Some(sshd) = Sshd::start(&keys, &authorized, "the SSH attach test") else {
        return;
    };

    // JSON lines over SSH: the replay from the first record, the live marker, live events.
    let wrap = sshd.ssh(&keys.join("script"));
    let wrap: Vec<&str> = wrap.iter().map(String::as_str).collect();
    // Found over SSH from the login's own directory, by the registry.
    let listed = Command::new(wrap[0])
        .args(&wrap[1..])
        .args([EXE, "sessions"])
        .output()
        .expect("faultline sessions over ssh");
    let said = String::from_utf8_lossy(&listed.stdout);
    assert!(
        said.contains(session.to_str().expect("utf-8")) && said.contains("demo-kv-replication-"),
        "{said}\n{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let mut script = JsonClient::start(&session, &wrap, &[]);
    let question = script
        .question(Duration::from_secs(30))
        .expect("the question over SSH");
    let first = script
        .seen
        .iter()
        .find(|m| m["type"] == "record")
        .expect("replayed records");
    assert_eq!(
        first["record"]["seq"], 1,
        "the replay starts at the first record"
    );
    assert!(
        script
            .seen
            .iter()
            .any(|m| m["type"] == "record" && m["record"]["kind"] == "session-started")
    );
    assert!(script.seen.iter().any(|m| m["type"] == "live"));

    // The full UI over `ssh -tt`, driven through tmux: Alice answers with Enter.
    let ssh = sshd.ssh(&keys.join("alice"));
    let command = format!("LANG=C.UTF-8 {} -tt; sleep 60", ssh.join(" "));
    let pane = tmux::Tmux::start("fl-ssh", &command);
    let id = question["id"].as_str().expect("id").to_string();
    pane.wait_for(&format!("Question {id}"), Duration::from_secs(30));
    // Keys in a question's first half second are dropped (typed for the screen
    // beneath); Alice answers after it.
    std::thread::sleep(Duration::from_millis(800));
    pane.send(&["Enter"]);
    let answered = script
        .wait(Duration::from_secs(20), |m| {
            m["type"] == "answered" && m["id"] == id.as_str()
        })
        .expect("Alice's answer reaches the other client live");
    assert!(
        answered["by"].as_str().is_some_and(|b| b.contains("alice")),
        "{answered}"
    );
    // The engine journals the answer once it has it: a moment after the broadcast.
    let journal = session.join("journal.jsonl");
    let taken = || {
        common::lines(&journal)
            .into_iter()
            .find(|l| l.kind == "operator-answer" && l.data["question"] == id.as_str())
    };
    assert!(
        wait(Duration::from_secs(10), || taken().is_some()),
        "journaled"
    );
    let taken = taken().expect("journaled");
    assert_eq!(taken.data["who"]["label"], "alice");
    assert_eq!(taken.data["who"]["user"], "root");

    // Killing the ssh clients leaves the run unharmed.
    let server = server_pid(&session);
    let ssh_pid = i32::try_from(script.pid()).expect("pid");
    drop(pane);
    drop(script);
    assert!(wait(Duration::from_secs(5), || !common::pid_alive(ssh_pid)));
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        common::pid_alive(server),
        "the run died with its SSH clients"
    );
    let mut again = JsonClient::start(&session, &[], &[]);
    assert!(
        again.question(Duration::from_secs(60)).is_some(),
        "the run goes on to its next question"
    );
    let stopped = Command::new(EXE)
        .arg("stop")
        .arg(&session)
        .output()
        .expect("stop");
    assert!(String::from_utf8_lossy(&stopped.stdout).contains("session verdict:"));
}

/// Issue 32's acceptance for notes, needing no other user: a note sent through
/// `attach --json` to a running session is journaled with who wrote it (the kernel's
/// word) and appears in report.md with its author and its lines; a viewer's (`--role
/// viewer`), a blank one and one over 4096 bytes are refused, and none of them is
/// journaled.
#[test]
fn a_note_over_attach_json_reaches_report_md_with_its_author() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let session = detached(
        dir.path(),
        &[
            "demo",
            "--only",
            "D1",
            "--out",
            out.to_str().expect("utf-8"),
        ],
    );
    let mut owner = JsonClient::start(&session, &[], &[]);
    let welcome = owner
        .wait(Duration::from_secs(20), |m| m["type"] == "welcome")
        .expect("welcomed");
    let (user, uid) = (
        welcome["who"]["user"].as_str().expect("user").to_string(),
        welcome["who"]["uid"].as_u64().expect("uid"),
    );
    let text = "D1 has not started.\n\n# not a heading\n<b>bold?</b>";
    owner.send(&serde_json::json!({"type": "note", "text": text}));
    let record = owner
        .wait(Duration::from_secs(20), |m| {
            m["type"] == "record" && m["record"]["kind"] == "operator-note"
        })
        .unwrap_or_else(|| panic!("the note never came back as a record: {:?}", owner.seen));
    assert_eq!(record["record"]["data"]["text"], text);
    assert_eq!(record["record"]["data"]["who"]["uid"], uid);
    assert_eq!(record["record"]["data"]["who"]["role"], "owner");
    // Refused, with a plain reason: a blank note (by the server) and one over the
    // bound (by the client, before it is sent: said on stderr).
    owner.send(&serde_json::json!({"type": "note", "text": " \n \t"}));
    assert!(
        owner
            .wait(Duration::from_secs(10), |m| m["type"] == "refused"
                && m["why"] == "a note needs some text")
            .is_some(),
        "{:?}",
        owner.seen
    );
    owner.send(&serde_json::json!({"type": "note", "text": "x".repeat(5000)}));
    // Refused by the client, as the same JSON line on stdout (and said on stderr).
    assert!(
        owner
            .wait(Duration::from_secs(10), |m| m["type"] == "refused"
                && m["why"].as_str().is_some_and(
                    |w| w.starts_with("a note is at most 4096 bytes")
                ))
            .is_some(),
        "{:?}",
        owner.seen
    );
    let mut viewer = JsonClient::start(&session, &[], &["--role", "viewer"]);
    viewer.send(&serde_json::json!({"type": "note", "text": "a viewer's note"}));
    assert!(
        viewer
            .wait(Duration::from_secs(20), |m| m["type"] == "refused"
                && m["why"].as_str().is_some_and(
                    |w| w.starts_with("viewers do not leave notes")
                ))
            .is_some(),
        "{:?}",
        viewer.seen
    );

    let stopped = Command::new(EXE)
        .arg("stop")
        .arg(&session)
        .output()
        .expect("faultline stop");
    assert!(
        String::from_utf8_lossy(&stopped.stdout).contains("session verdict:"),
        "{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
    assert!(
        owner.exit(Duration::from_secs(20)).is_some(),
        "the client outlived the run"
    );
    let said = owner.stderr();
    assert!(
        said.contains("note refused: a note is at most 4096 bytes and this one has 5000"),
        "{said}"
    );
    let notes: Vec<common::Line> = common::records(&session)
        .into_iter()
        .filter(|l| l.kind == "operator-note")
        .collect();
    assert_eq!(
        notes.len(),
        1,
        "only the owner's note is journaled: {notes:?}"
    );
    // Sent at once after the welcome, before the batch of joins was due: the
    // author's join is still journaled first.
    let records = common::records(&session);
    let joined = records
        .iter()
        .find(|l| l.kind == "participant-joined" && l.data["who"] == notes[0].data["who"])
        .unwrap_or_else(|| panic!("the author's join is journaled: {records:?}"));
    assert!(
        joined.seq < notes[0].seq,
        "join {} after the note {}",
        joined.seq,
        notes[0].seq
    );
    let report =
        std::fs::read_to_string(session.join("findings").join("report.md")).expect("report.md");
    let section = &report[report
        .find("\n## Notes\n")
        .expect("a Notes section in report.md")..];
    assert!(
        section.contains(&format!(
            "**Note 1** by {user} (uid {uid}, owner), {}, outside any scenario's run",
            notes[0].ts
        )),
        "{section}"
    );
    assert!(
        section.contains(&format!("\n```\n{text}\n```\n")),
        "{section}"
    );
    let html =
        std::fs::read_to_string(session.join("findings").join("report.html")).expect("report.html");
    assert!(
        html.contains("&lt;b&gt;bold?&lt;/b&gt;") && !html.contains("<b>bold?"),
        "{html}"
    );
}
