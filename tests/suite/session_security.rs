//! The runtime directory and the socket as a hostile local user meets them (issue
//! 29): a runtime directory someone else made, a fake server on the session's
//! socket, a client that never ends its line, thousands of connections, and who
//! may find which session.

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::support::sshd::{Sshd, keygen};
use crate::support::users::{UnixUser, can_make_users};

const EXE: &str = env!("CARGO_BIN_EXE_faultline");

/// A runtime base of this test's own (so what it plants touches no other test).
fn base(dir: &Path) -> PathBuf {
    let base = dir.join("run");
    std::fs::create_dir(&base).expect("base");
    // Like /tmp: anyone may make a directory in it, nobody may take another's.
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    base
}

fn faultline(base: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(EXE)
        .args(args)
        .env("FAULTLINE_RUNTIME_BASE", base)
        .current_dir(cwd)
        .output()
        .expect("faultline runs")
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A demo session started detached, waiting at its first question; its short name.
fn detached(base: &Path, cwd: &Path, extra: &[&str]) -> (PathBuf, String) {
    let mut args = vec!["demo", "--only", "D1", "--out", "out", "--detach"];
    args.extend_from_slice(extra);
    let out = faultline(base, cwd, &args);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let short = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("the run goes on in the background; attach with: faultline attach ")
        })
        .unwrap_or_else(|| panic!("no short name: {stdout}"))
        .to_string();
    (crate::common::session_of(&out), short)
}

fn stop(base: &Path, cwd: &Path, short: &str) {
    let out = faultline(base, cwd, &["stop", short]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("session verdict"),
        "{}",
        text(&out)
    );
}

/// The slot directory (socket and entry) of `short` in root's runtime directory.
fn slot(base: &Path, short: &str) -> PathBuf {
    let runtime = base.join(format!("faultline-{}", nix::unistd::getuid()));
    std::fs::read_dir(&runtime)
        .expect("runtime dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{short}.")))
        })
        .unwrap_or_else(|| panic!("no slot for {short} in {}", runtime.display()))
}

fn server_pid(slot: &Path) -> i32 {
    let entry: serde_json::Value =
        serde_json::from_slice(&std::fs::read(slot.join("session.json")).expect("entry"))
            .expect("entry is JSON");
    i32::try_from(entry["pid"].as_i64().expect("pid")).expect("pid")
}

/// The first line `child` prints (its welcome); the child is ended after it.
fn first_line(mut child: std::process::Child) -> String {
    let mut first = String::new();
    let mut stdout = child.stdout.take().expect("stdout");
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).is_ok_and(|n| n == 1) && byte[0] != b'\n' {
        first.push(char::from(byte[0]));
    }
    let _ = child.kill();
    let _ = child.wait();
    first
}

fn rss_kib(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .expect("status")
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[test]
fn a_runtime_directory_that_is_not_the_caller_s_own_is_refused_and_nothing_starts() {
    if !can_make_users() {
        return;
    }
    let mallory = UnixUser::create("flml");
    let work = tempfile::tempdir().expect("tempdir");
    let base = base(work.path());
    let runtime = base.join(format!("faultline-{}", nix::unistd::getuid()));
    let target = work.path().join("target-file");
    std::fs::write(&target, "root's\n").expect("target");
    type Plant<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let plant: [Plant; 3] = [
        (
            "owned by",
            Box::new(|| {
                let made = Command::new("runuser")
                    .args(["-u", &mallory.name, "--", "mkdir", "-m", "0700"])
                    .arg(&runtime)
                    .status()
                    .expect("mkdir as mallory");
                assert!(made.success());
            }),
        ),
        (
            "a symlink",
            Box::new(|| std::os::unix::fs::symlink(&target, &runtime).expect("symlink")),
        ),
        (
            "mode 0755",
            Box::new(|| {
                std::fs::create_dir(&runtime).expect("dir");
                std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }),
        ),
    ];
    for (why, plant) in plant {
        let _ = std::fs::remove_dir(&runtime);
        let _ = std::fs::remove_file(&runtime);
        plant();
        let before = std::fs::symlink_metadata(&runtime).expect("planted");
        let target_acl = getfacl(&target);
        let out = faultline(
            &base,
            work.path(),
            &[
                "demo",
                "--only",
                "D1",
                "--out",
                "out",
                "--yes",
                "--headless",
            ],
        );
        let said = text(&out);
        assert_eq!(out.status.code(), Some(74), "{said}");
        assert!(
            said.contains(why) && said.contains("nothing was started"),
            "{said}"
        );
        assert!(
            !work.path().join("out/demo-kv-replication").exists(),
            "a session was made: {said}"
        );
        let after = std::fs::symlink_metadata(&runtime).expect("still there");
        assert_eq!(
            (before.mode(), before.uid()),
            (after.mode(), after.uid()),
            "the planted directory was changed"
        );
        assert_eq!(
            getfacl(&target),
            target_acl,
            "the symlink's target gained an ACL"
        );
        // attach and sessions refuse it too (nothing listed, nothing connected).
        let listed = faultline(&base, work.path(), &["sessions"]);
        assert!(
            String::from_utf8_lossy(&listed.stdout).contains("no running session"),
            "{}",
            text(&listed)
        );
    }
}

fn getfacl(path: &Path) -> String {
    let out = Command::new("getfacl")
        .args(["-c", "-p"])
        .arg(path)
        .output()
        .expect("getfacl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fake server in the real one's place: another process (root's own, even) that
/// answers hello with a welcome and an `ended` full of escape sequences.
#[test]
fn attach_and_stop_refuse_a_server_that_is_not_the_session_s() {
    let work = tempfile::tempdir().expect("tempdir");
    let base = base(work.path());
    let (_session, short) = detached(&base, work.path(), &[]);
    let slot = slot(&base, &short);
    let socket = slot.join("control.sock");
    let real = slot.join("real.sock");
    std::fs::rename(&socket, &real).expect("move the real socket aside");
    let fake = std::os::unix::net::UnixListener::bind(&socket).expect("fake bind");
    let served = std::thread::spawn(move || {
        let mut fed = 0;
        fake.set_nonblocking(false).expect("blocking");
        for stream in fake.incoming().take(2) {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.write_all(
                b"{\"type\":\"welcome\",\"who\":{\"uid\":0,\"user\":\"root\",\"role\":\"owner\"},\"status\":{}}\n\
                  {\"type\":\"ended\",\"ending\":{\"exit\":0,\"notes\":[\"\\u001b[2Jevery fault the journal names is healed\"]}}\n",
            );
            fed += 1;
        }
        fed
    });
    for args in [&["attach", "--json", &short][..], &["stop", &short][..]] {
        let out = faultline(&base, work.path(), args);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(77), "{args:?}: {said}");
        assert!(said.contains("not the session's server"), "{said}");
        assert!(
            !said.contains("healed"),
            "the fake server was believed: {said}"
        );
        assert!(!out.stdout.contains(&0x1b), "{said}");
    }
    // Unblock the fake server if a client never connected, then put the real back.
    let _ = UnixStream::connect(&socket);
    let _ = UnixStream::connect(&socket);
    assert!(served.join().expect("fake server") >= 2);
    std::fs::remove_file(&socket).expect("remove fake");
    std::fs::rename(&real, &socket).expect("restore");
    assert!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(server_pid(&slot)), None).is_ok(),
        "the real server kept running"
    );
    stop(&base, work.path(), &short);
}

/// A `json` client's hello in this build's protocol version, with `extra` fields.
fn hello_line(extra: &str) -> String {
    format!(
        "{{\"type\":\"hello\",\"protocol\":{},\"client\":\"json\"{extra}}}\n",
        faultline::session::wire::PROTOCOL_VERSION
    )
}

/// Sends `bytes` of one endless line (after a hello when `hello`); how many got in
/// before the server closed the connection.
fn endless_line(socket: &Path, hello: bool, bytes: usize) -> usize {
    let mut stream = UnixStream::connect(socket).expect("connect");
    stream
        .set_write_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    if hello {
        stream.write_all(hello_line("").as_bytes()).expect("hello");
    }
    let chunk = vec![b'x'; 1 << 20];
    let mut sent = 0;
    while sent < bytes {
        match stream.write(&chunk) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    sent
}

#[test]
fn a_line_without_end_is_cut_at_the_frame_limit_before_and_after_hello() {
    let work = tempfile::tempdir().expect("tempdir");
    let base = base(work.path());
    let (_session, short) = detached(&base, work.path(), &[]);
    let slot = slot(&base, &short);
    let socket = slot.join("control.sock");
    let pid = server_pid(&slot);
    let before = rss_kib(pid);
    for hello in [false, true] {
        let sent = endless_line(&socket, hello, 100 << 20);
        assert!(
            sent < 100 << 20,
            "the server read 100 MB of one line (hello: {hello})"
        );
    }
    let grown = rss_kib(pid).saturating_sub(before);
    assert!(grown < 64 * 1024, "the server grew by {grown} KiB");

    stop(&base, work.path(), &short);
}

/// Opens `n` connections to `socket` and sorts them: refused with a `bye` naming
/// the cap, or held (taken, waiting for a hello).
fn flood(socket: &Path, n: usize) -> (Vec<UnixStream>, usize) {
    let mut clients = Vec::new();
    for _ in 0..n {
        clients.push(UnixStream::connect(socket).expect("connect"));
    }
    let mut refused = 0;
    let mut held = Vec::new();
    for mut client in clients {
        client
            .set_read_timeout(Some(Duration::from_millis(100)))
            .expect("timeout");
        let mut buf = [0u8; 512];
        match client.read(&mut buf) {
            Ok(n) if n > 0 => {
                let line = String::from_utf8_lossy(&buf[..n]);
                assert!(
                    line.contains("\"bye\"") && line.contains("connections"),
                    "{line}"
                );
                refused += 1;
            }
            Err(_) => held.push(client),
            Ok(_) => refused += 1,
        }
    }
    (held, refused)
}

/// 2,000 connections from one uid against a run whose descriptor limit is 256: the
/// per-user cap takes 32, the rest are told and closed, and the run's verdict is
/// what it is without them.
#[test]
fn a_flood_of_connections_is_capped_and_the_run_s_verdict_is_unchanged() {
    let work = tempfile::tempdir().expect("tempdir");
    let base = base(work.path());
    let (_, hard) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).expect("rlimit");
    nix::sys::resource::setrlimit(
        nix::sys::resource::Resource::RLIMIT_NOFILE,
        hard.min(8192),
        hard,
    )
    .expect("raise the test's own descriptor limit");
    let mut run = Command::new("prlimit")
        .args([
            "--nofile=256:256",
            "--",
            EXE,
            "demo",
            "--only",
            "D1",
            "--out",
            "out",
            "--yes",
            "--headless",
        ])
        .env("FAULTLINE_RUNTIME_BASE", &base)
        .current_dir(work.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the run starts");
    let runtime = base.join(format!("faultline-{}", nix::unistd::getuid()));
    let started = Instant::now();
    let socket = loop {
        let found = std::fs::read_dir(&runtime).ok().and_then(|d| {
            d.flatten()
                .map(|e| e.path().join("control.sock"))
                .find(|p| p.exists())
        });
        if let Some(socket) = found {
            break socket;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no socket appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let (held, refused) = flood(&socket, 2000);
    // At most the per-user cap is held (a connection of the run's own start may
    // hold one of them for a moment); every other one is told.
    assert!((1..=32).contains(&held.len()), "{} held", held.len());
    assert_eq!(refused + held.len(), 2000);
    let status = run.wait().expect("the run ends");
    let mut stdout = String::new();
    run.stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("stdout");
    drop(held);
    // D1 alone ends DONE_WITH_CONCERNS (exit 2) whatever the clients do.
    assert_eq!(status.code(), Some(2), "{stdout}");
    let session = work.path().join(crate::common::session_of(&Output {
        status,
        stdout: stdout.clone().into_bytes(),
        stderr: Vec::new(),
    }));
    let verdicts = crate::common::verdicts_by_id(&session);
    assert_eq!(verdicts["D1"], "PASS-smoke", "{stdout}");
    // The refusals are counted in the journal, not one record each.
    let journal = std::fs::read_to_string(session.join("journal.jsonl")).expect("journal");
    let refusals: Vec<&str> = journal
        .lines()
        .filter(|l| l.contains("participant-refused"))
        .collect();
    assert!(
        (1..=2).contains(&refusals.len())
            && refusals.iter().any(|l| l.contains("refused 1968 times")),
        "{refusals:?}"
    );
}

#[test]
fn sessions_are_found_from_any_directory_by_those_listed_and_by_nobody_else() {
    if !can_make_users() {
        return;
    }
    let approver = UnixUser::create("flsa");
    let stranger = UnixUser::create("flss");
    let work = tempfile::tempdir().expect("tempdir");
    let base = base(work.path());
    let started_in = work.path().join("here");
    std::fs::create_dir(&started_in).expect("dir");
    let (session, short) = detached(&base, &started_in, &["--approver", &approver.name]);
    let elsewhere = work.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("dir");
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o777)).expect("chmod");

    let as_user = |user: &UnixUser, args: &[&str]| {
        Command::new("runuser")
            .args(["-u", &user.name, "--", EXE])
            .args(args)
            .env("FAULTLINE_RUNTIME_BASE", &base)
            .current_dir(&elsewhere)
            .output()
            .expect("runuser")
    };
    let mine = faultline(&base, &elsewhere, &["sessions"]);
    let said = text(&mine);
    assert!(
        said.contains(&short) && said.contains(session.to_str().expect("utf-8")),
        "{said}"
    );
    let theirs = as_user(&approver, &["sessions"]);
    let said = text(&theirs);
    assert!(
        said.contains(&short) && said.contains("owner root"),
        "{said}"
    );
    // The approver over the real sshd, logged in as herself with her own key.
    let keys = work.path().join("sshd");
    std::fs::create_dir(&keys).expect("sshd dir");
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    keygen(&keys.join("approver"));
    approver.may_log_in();
    let public = std::fs::read_to_string(keys.join("approver.pub")).expect("pub key");
    if let Some(sshd) = Sshd::start(&keys, &public, "listing sessions over a real sshd") {
        let login = sshd.ssh_as(&keys.join("approver"), &approver.name);
        let remote = format!("FAULTLINE_RUNTIME_BASE={} {EXE} sessions", base.display());
        let over = Command::new(&login[0])
            .args(&login[1..])
            .arg(remote)
            .output()
            .expect("ssh");
        let said = text(&over);
        assert!(
            said.contains(&short) && said.contains("owner root"),
            "{said}\nsshd:\n{}",
            sshd.log()
        );
    }
    let nobody = as_user(&stranger, &["sessions"]);
    let said = text(&nobody);
    assert!(
        said.contains("no running session") && !said.contains(&short),
        "{said}"
    );

    // The approver attaches by the short name and is welcomed as an approver.
    let attach = Command::new("runuser")
        .args(["-u", &approver.name, "--", EXE, "attach", "--json", &short])
        .env("FAULTLINE_RUNTIME_BASE", &base)
        .current_dir(&elsewhere)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("attach");
    let first = first_line(attach);
    let welcome: serde_json::Value = serde_json::from_str(&first).expect("a JSON welcome");
    assert_eq!(welcome["type"], "welcome", "{first}");
    assert_eq!(welcome["who"]["role"], "approver", "{first}");
    assert_eq!(welcome["who"]["user"], approver.name.as_str(), "{first}");

    // Stale entries go: a slot whose server is dead is removed by the owner's look.
    let slot = slot(&base, &short);
    stop(&base, &elsewhere, &short);
    let started = Instant::now();
    while slot.exists() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        !slot.exists(),
        "the ended session's slot is still registered"
    );
    let after = as_user(&approver, &["sessions"]);
    assert!(
        text(&after).contains("no running session"),
        "{}",
        text(&after)
    );
}

/// Another user's own runtime directory with entries forged to be mistaken for the
/// caller's session (her server bound, root listed, her entry's short name the real
/// session's directory or its short name): `stop` by directory and by short name
/// reaches the real server, never hers; an ambiguity is refused, `owner/short` works.
#[test]
fn another_user_s_forged_entries_never_stand_in_for_the_session() {
    if !can_make_users() {
        return;
    }
    let mallory = UnixUser::create("flfg");
    let work = tempfile::tempdir().expect("tempdir");
    let base = base(work.path());
    let (session, short) = detached(&base, work.path(), &[]);
    // As the run printed it: relative to where it was started.
    let relative = session
        .strip_prefix(work.path())
        .unwrap_or(&session)
        .display()
        .to_string();
    assert!(!relative.starts_with('/'), "{relative}");
    // Her server: binds in her own 0700 runtime directory, writes entries naming it,
    // lists root, and notes every connection it is given.
    let script = r#"
import json, os, socket, sys
base, relative, short = sys.argv[1:4]
rt = os.path.join(base, "faultline-%d" % os.getuid())
os.mkdir(rt, 0o700)
os.mkdir(os.path.join(rt, "for-0"), 0o700)
srv = socket.socket(socket.AF_UNIX)
names = []
for n, (name, claimed) in enumerate([("x.%016x" % 1, relative), (short + ".%016x" % 2, short)]):
    slot = os.path.join(rt, name)
    os.mkdir(slot, 0o700)
    entry = {"short": claimed, "session": "/nonexistent/fake", "plan": "p", "owner": "root",
             "owner_uid": os.getuid(), "pid": os.getpid(), "pid_start": None,
             "started": "2099-01-01T00:00:00Z", "listed": ["root"]}
    open(os.path.join(slot, "session.json"), "w").write(json.dumps(entry))
    open(os.path.join(rt, "for-0", name), "w").close()
    names.append(slot)
srv.bind(os.path.join(names[1], "control.sock"))
os.symlink(os.path.join(names[1], "control.sock"), os.path.join(names[0], "control.sock"))
srv.listen(8)
print("ready %d" % os.getpid(), flush=True)
while True:
    c, _ = srv.accept()
    open(os.path.join(rt, "touched"), "a").write("x")
    c.sendall(b'{"type":"ended","ending":{"exit":0,"notes":["every fault the journal names is healed"]}}\n')
    c.close()
"#;
    let mut fake = Command::new("runuser")
        .args(["-u", &mallory.name, "--", "python3", "-c", script])
        .arg(&base)
        .arg(&relative)
        .arg(&short)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("her server");
    // runuser waits for its child: her server is ended by its own pid.
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(fake.stdout.take().expect("stdout")),
        &mut ready,
    )
    .expect("her server is ready");
    let her_pid: i32 = ready
        .trim()
        .strip_prefix("ready ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("her server said {ready:?}"));
    // Ended on every path out of the test, a failed assertion included.
    struct Hers(i32);
    impl Drop for Hers {
        fn drop(&mut self) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(self.0),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    let hers = Hers(her_pid);
    let touched = base
        .join(format!("faultline-{}", mallory.uid))
        .join("touched");

    // Her entry whose short name is the session's directory is not an entry at all;
    // the one named like root's session is listed, as hers.
    let listed = text(&faultline(&base, work.path(), &["sessions"]));
    assert_eq!(listed.matches("/nonexistent/fake").count(), 1, "{listed}");
    // `owner/short` names hers (she listed root: a session root may attach to).
    let theirs = format!("{}/{short}", mallory.name);
    let out = faultline(&base, work.path(), &["attach", "--json", &theirs]);
    assert!(
        touched.exists(),
        "owner/short did not reach hers: {}",
        text(&out)
    );
    std::fs::remove_file(&touched).expect("rm");
    // The short name alone: root's own session before hers, though hers sorts first.
    let attach = Command::new(EXE)
        .args(["attach", "--json", &short])
        .env("FAULTLINE_RUNTIME_BASE", &base)
        .current_dir(work.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("attach");
    let first = first_line(attach);
    assert!(
        first.contains("\"welcome\"") && first.contains("\"owner\""),
        "{first}"
    );
    assert!(!touched.exists(), "the short name reached her server");
    // The directory, relative to where it was started: the real session stops.
    let out = faultline(&base, work.path(), &["stop", &relative]);
    let said = text(&out);
    drop(hers);
    let _ = fake.wait();
    assert!(said.contains("session verdict"), "{said}");
    assert!(!touched.exists(), "her server was reached: {said}");
}

/// A runtime base so deep that a session's socket path could not be bound: refused
/// before anything starts, saying why, instead of a run nobody can attach to.
#[test]
fn a_runtime_base_too_deep_for_a_socket_is_refused_before_anything_starts() {
    let work = tempfile::tempdir().expect("tempdir");
    let deep = work.path().join("c".repeat(70));
    std::fs::create_dir(&deep).expect("dir");
    let base = base(&deep);
    let out = faultline(
        &base,
        work.path(),
        &["demo", "--only", "D1", "--out", "out", "--detach"],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(74), "{said}");
    assert!(
        said.contains("longer than a socket path may be") && said.contains("nothing was started"),
        "{said}"
    );
    assert!(
        !work.path().join("out/demo-kv-replication").exists(),
        "a session directory was made: {said}"
    );
}

/// A viewer sending refused answers as fast as it can: the journal keeps the first
/// few, each cut short, and a count of the rest — never a copy of everything sent.
#[test]
fn refused_answers_cannot_grow_the_journal_at_will() {
    let work = tempfile::tempdir().expect("tempdir");
    let base = base(work.path());
    let (session, short) = detached(&base, work.path(), &[]);
    let journal = work.path().join(&session).join("journal.jsonl");
    let before = std::fs::metadata(&journal).expect("journal").len();
    let socket = slot(&base, &short).join("control.sock");
    let mut stream = UnixStream::connect(&socket).expect("connect");
    stream
        .write_all(hello_line(",\"viewer\":true").as_bytes())
        .expect("hello");
    let answer = format!(
        "{{\"type\":\"answer\",\"id\":\"q\",\"text\":\"{}\"}}\n",
        "A".repeat(60_000)
    );
    let mut sent = 0;
    for _ in 0..200 {
        if stream.write_all(answer.as_bytes()).is_err() {
            break;
        }
        sent += 1;
    }
    assert!(sent > 16, "only {sent} answers went out");
    drop(stream);
    stop(&base, work.path(), &short);
    let records = crate::common::lines(&journal);
    let refused: Vec<_> = records
        .iter()
        .filter(|l| l.kind == "answer-refused")
        .collect();
    assert!(
        !refused.is_empty() && refused.len() <= 16,
        "{} refused answers journaled",
        refused.len()
    );
    assert!(
        refused
            .iter()
            .all(|l| l.data["answer"].as_str().is_some_and(|a| a.len() < 400)),
        "an answer kept whole"
    );
    assert!(
        records.iter().any(|l| l.kind == "participant-refused"
            && l.data["why"]
                .as_str()
                .is_some_and(|w| w.contains("answers refused in all"))),
        "no count of the rest"
    );
    let grown = std::fs::metadata(&journal).expect("journal").len() - before;
    assert!(
        grown < 1 << 20,
        "the journal grew {grown} bytes for {sent} answers"
    );
}

/// What a session's server says to a raw client whose first line is `hello`, up to
/// the connection's close.
fn said_to(socket: &Path, hello: &str) -> String {
    let mut stream = UnixStream::connect(socket).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    stream.write_all(hello.as_bytes()).expect("hello");
    let mut said = String::new();
    let _ = stream.read_to_string(&mut said);
    said
}

/// A client of another attach protocol version (newer, its hello shaped otherwise,
/// or an old one naming none) gets one plain `bye` naming both versions and what to
/// do; the refusal is journaled once, and the run goes on to its end.
#[test]
fn a_client_of_another_protocol_version_is_refused_plainly_and_the_run_goes_on() {
    let work = tempfile::tempdir().expect("tempdir");
    let base = base(work.path());
    let (session, short) = detached(&base, work.path(), &[]);
    let slot = slot(&base, &short);
    let socket = slot.join("control.sock");
    let ours = faultline::session::wire::PROTOCOL_VERSION;
    let theirs = ours + 1;
    let newer = said_to(
        &socket,
        &format!(
            "{{\"type\":\"hello\",\"protocol\":{theirs},\"client\":[\"shaped otherwise\"]}}\n"
        ),
    );
    assert_eq!(newer.lines().count(), 1, "more than a bye: {newer}");
    let bye: serde_json::Value = serde_json::from_str(newer.trim_end()).expect("JSON");
    assert_eq!(bye["type"], "bye", "{newer}");
    let why = bye["why"].as_str().expect("why");
    assert!(
        why.contains(&format!(
            "the client speaks attach protocol version {theirs}"
        )) && why.contains(&format!("speaks version {ours}")),
        "{why}"
    );
    assert!(why.contains("same faultline binary"), "{why}");
    for _ in 0..3 {
        let older = said_to(&socket, "{\"type\":\"hello\",\"client\":\"json\"}\n");
        assert!(
            older.contains("\"bye\"") && older.contains("no attach protocol version"),
            "{older}"
        );
        assert!(older.contains("same faultline binary"), "{older}");
    }

    // Unharmed: the server runs on, and this build's client attaches and stops it.
    assert!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(server_pid(&slot)), None).is_ok(),
        "the server went with the refusal"
    );
    stop(&base, work.path(), &short);
    let records = crate::common::records(&work.path().join(&session));
    let refused: Vec<&str> = records
        .iter()
        .filter(|l| l.kind == "participant-refused")
        .filter_map(|l| l.data["why"].as_str())
        .filter(|w| w.contains("protocol version"))
        .collect();
    assert!(
        refused
            .iter()
            .any(|w| w.contains(&format!("version {theirs}"))),
        "{refused:?}"
    );
    // Knocking again, with whatever version, is counted, not journaled again.
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(
        refused.iter().any(|w| w.contains("refused 4 times")),
        "{refused:?}"
    );
}

/// A fake server of the session's own uid and pid (this test process) in a slot of
/// the test's own: it takes one client, hands the client's hello to `hello`, and
/// sends `lines` as they are, then holds the connection open.
async fn fake_server(
    dir: &Path,
    lines: Vec<Vec<u8>>,
) -> (
    faultline::session::runtime::Found,
    tokio::sync::oneshot::Receiver<String>,
) {
    use std::os::unix::fs::DirBuilderExt;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    // A runtime directory and a slot in it, both 0700, as the client wants them.
    let slot = dir.join("run").join("slot");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(&slot)
        .expect("slot");
    std::fs::set_permissions(dir.join("run"), std::fs::Permissions::from_mode(0o700))
        .expect("chmod");
    let found = faultline::session::runtime::Found {
        entry: faultline::session::runtime::Entry {
            owner_uid: nix::unistd::getuid().as_raw(),
            pid: std::process::id(),
            ..Default::default()
        },
        slot: slot.clone(),
    };
    let listener = tokio::net::UnixListener::bind(found.socket()).expect("bind");
    let (hello_tx, hello) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let (read, mut write) = stream.into_split();
        let mut read = tokio::io::BufReader::new(read);
        let mut line = String::new();
        let _ = read.read_line(&mut line).await;
        let _ = hello_tx.send(line);
        for line in lines {
            if write.write_all(&line).await.is_err() {
                return;
            }
        }
        std::future::pending::<()>().await;
    });
    (found, hello)
}

fn welcome_line(protocol: Option<u32>) -> Vec<u8> {
    let protocol = protocol.map_or_else(String::new, |p| format!("\"protocol\":{p},"));
    format!(
        "{{\"type\":\"welcome\",{protocol}\"who\":{{\"uid\":{},\"user\":\"me\",\"role\":\"owner\"}},\"status\":{{}}}}\n",
        nix::unistd::getuid().as_raw()
    )
    .into_bytes()
}

/// The client says its version in hello, and lets go of a server that welcomes it
/// in another (or in none), saying both versions and what to do.
#[tokio::test]
async fn a_client_refuses_a_server_of_another_protocol_version() {
    use faultline::session::client::{self, AttachError};
    use faultline::session::wire::{Hello, PROTOCOL_VERSION};
    for (theirs, said) in [
        (
            Some(PROTOCOL_VERSION + 1),
            format!("attach protocol version {}", PROTOCOL_VERSION + 1),
        ),
        (None, "no attach protocol version".to_string()),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (found, hello) = fake_server(dir.path(), vec![welcome_line(theirs)]).await;
        let link = client::connect_within(&found, Hello::default(), Duration::from_secs(20)).await;
        let hello = tokio::time::timeout(Duration::from_secs(20), hello)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "the client never reached the server: {:?}",
                    link.as_ref().err()
                )
            })
            .expect("the client said hello");
        let hello: serde_json::Value = serde_json::from_str(&hello).expect("hello is JSON");
        assert_eq!(hello["protocol"], PROTOCOL_VERSION, "{hello}");
        let Err(e) = link else {
            panic!("welcomed by a server of version {theirs:?}");
        };
        assert!(matches!(e, AttachError::Version { .. }), "{e}");
        let e = e.to_string();
        assert!(
            e.contains(&format!("the session's server speaks {said}")),
            "{e}"
        );
        assert!(
            e.contains(&format!("this client speaks version {PROTOCOL_VERSION}")),
            "{e}"
        );
        assert!(e.contains("same faultline binary"), "{e}");
    }
}

/// A server line over the client's limit is cut: the link ends with a `bye` saying
/// why, and nothing after the line is read as if the line had not been there.
#[tokio::test]
async fn a_server_line_beyond_the_limit_is_cut_by_the_client() {
    use faultline::session::client::{self, MAX_LINE};
    use faultline::session::wire::{Hello, PROTOCOL_VERSION, ServerMsg};
    let dir = tempfile::tempdir().expect("tempdir");
    let mut endless = vec![b'x'; MAX_LINE + 1];
    endless.push(b'\n');
    let (found, _hello) = fake_server(
        dir.path(),
        vec![
            welcome_line(Some(PROTOCOL_VERSION)),
            b"{\"type\":\"live\",\"seq\":0}\n".to_vec(),
            endless,
            b"{\"type\":\"live\",\"seq\":7}\n".to_vec(),
        ],
    )
    .await;
    let mut link = client::connect_within(&found, Hello::default(), Duration::from_secs(20))
        .await
        .expect("welcomed");
    assert_eq!(next(&mut link.rx).await, Some(ServerMsg::Live { seq: 0 }));
    match next(&mut link.rx).await {
        Some(ServerMsg::Bye { why }) => {
            assert!(why.contains("longer than 16 MiB"), "{why}");
        }
        other => panic!("not cut: {other:?}"),
    }
    assert_eq!(next(&mut link.rx).await, None, "read on past the cut");
}

/// The next message a link has for its user, within a minute.
async fn next(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<faultline::session::wire::ServerMsg>,
) -> Option<faultline::session::wire::ServerMsg> {
    tokio::time::timeout(Duration::from_secs(60), rx.recv())
        .await
        .expect("the client said something in time")
}
