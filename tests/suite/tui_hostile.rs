//! Hostile child output under the real TUI in a real pty: title (OSC 0/2), clipboard
//! (OSC 52), DCS, cursor movement, a 256-colour SGR and the 8-bit C1 CSI byte 0x9b are
//! written by a workload; the raw bytes faultline writes to the pty carry none of them,
//! while the log on disk holds exactly what the child wrote (same sha-256).

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

const PLAN: &str = r#"# Test Plan: hostile

## 1b. Claims under test

| ID | Claim | Category | Source | Inferred? |
|---|---|---|---|---|
| C1 | The tool answers. | liveness | test | no |

## 7. Scenarios

### Scenario P1: hostile_output

- **Falsifies if it FAILs:** C1
- **Workload:** prints hostile escape sequences.
- **Faults:** none.
- **Oracle:** the external checker over the JSONL history reports no anomaly.
- **Smoke budget:** 1 seed, 1 s.
- **Hardening budget:** not applicable — no fault.
- **Release budget:** not provided — test fixture. Revisit when: never.

```faultline
workload: { run: "printf '%b' \"$(cat payload.txt)\" >&2; sleep 4", deadline: 20s }
tiers: { smoke: { duration: 1s } }
```
"#;

/// What the child writes: each hostile form, around a visible marker.
const PAYLOAD: &str = r"\033]0;pwned-title\007\033]2;pwned-title2\007\033]52;c;cHduZWQ=\007\033P1$qpwned-dcs\033\\\0233[7777;7777H\033[7777;7777H\033[38;5;201mHOSTILE-MARK\033[2J\n";

#[test]
fn hostile_sequences_never_reach_the_terminal_and_the_disk_copy_is_exact() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("plan.md"), PLAN).expect("plan");
    std::fs::write(dir.path().join("payload.txt"), PAYLOAD).expect("payload");
    // The exact bytes the child writes, produced the same way in the same directory.
    let expected = Command::new("sh")
        .args(["-c", "printf '%b' \"$(cat payload.txt)\""])
        .current_dir(dir.path())
        .output()
        .expect("printf")
        .stdout;
    assert!(expected.contains(&0x9b) && expected.windows(3).any(|w| w == b"\x1b]0"));

    let winsize = nix::pty::Winsize {
        ws_row: 36,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = nix::pty::openpty(Some(&winsize), None).expect("openpty");
    // openpty(3) leaves both ends inheritable. Tests of other modules share this
    // process and start children at any moment; one that inherited the slave would hold
    // the pty open (the reader below waits for its close), so neither end may leak.
    for end in [&pty.master, &pty.slave] {
        nix::fcntl::fcntl(
            end,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
        )
        .expect("FD_CLOEXEC");
    }
    let slave: OwnedFd = pty.slave;
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["run", "plan.md", "--out", "sessions"])
        .current_dir(dir.path())
        .env("LANG", "C.UTF-8")
        .env("TERM", "xterm-256color")
        .stdin(Stdio::from(slave.try_clone().expect("dup")))
        .stdout(Stdio::from(slave.try_clone().expect("dup")))
        .stderr(Stdio::null())
        .spawn()
        .expect("faultline starts");
    drop(slave);
    let master = std::fs::File::from(pty.master);
    // Read what the TUI writes, in the background, until the pty closes.
    let reader = {
        let mut master = master.try_clone().expect("dup master");
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.extend_from_slice(&buf[..n]);
            }
            seen
        })
    };
    // Let the scenario run and finish, then quit from the report screen.
    let deadline = Instant::now() + Duration::from_secs(40);
    let verdicts = loop {
        let found = std::fs::read_dir(dir.path().join("sessions/hostile"))
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .map(|e| e.path().join("verdicts.json"));
        if let Some(path) = found.filter(|p| p.exists()) {
            break path;
        }
        assert!(Instant::now() < deadline, "the session never finished");
        std::thread::sleep(Duration::from_millis(200));
    };
    std::thread::sleep(Duration::from_millis(500));
    use std::io::Write;
    (&master).write_all(b"q").expect("send q");
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().expect("wait").is_none() {
        assert!(Instant::now() < deadline, "faultline did not quit on q");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(master);
    let screen = reader.join().expect("reader");

    let session = verdicts.parent().expect("session dir");
    let log = session.join("logs/P1/seed-1/workload.stderr.log");
    let on_disk = std::fs::read(&log).expect("workload log");
    assert_eq!(
        Sha256::digest(&on_disk),
        Sha256::digest(&expected),
        "the disk copy differs from what the child wrote"
    );
    let text = String::from_utf8_lossy(&screen);
    assert!(
        text.contains("HOSTILE-MARK"),
        "the pane never showed the line"
    );
    // The TUI sets its own window title (issue 17: "faultline", or which question
    // waits); those are dropped before looking for anything the child sent.
    let own = regex::bytes::Regex::new(r"\x1b\]0;faultline[^\x07\x1b]*\x07").expect("regex");
    let screen = own.replace_all(&screen, b"".as_slice()).into_owned();
    for (what, needle) in [
        ("OSC 0 title", b"\x1b]0;".as_slice()),
        ("OSC 2 title", b"\x1b]2;"),
        ("OSC 52 clipboard", b"\x1b]52;"),
        ("DCS", b"\x1bP"),
        ("C1 CSI 0x9b", b"\x9b"),
        ("cursor move", b"\x1b[7777;7777H"),
        ("256-colour SGR", b"38;5;201m"),
        ("title text", b"pwned"),
    ] {
        assert!(
            !screen.windows(needle.len()).any(|w| w == needle),
            "{what} reached the terminal"
        );
    }
}
