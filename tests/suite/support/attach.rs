//! `faultline attach --json` as a test drives it: a real client process whose
//! messages arrive on a channel, answers written to its stdin.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

pub struct JsonClient {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    /// Every message seen so far, in order.
    pub seen: Vec<Value>,
}

impl JsonClient {
    /// `faultline attach --json SESSION` with `extra` arguments, run through
    /// `wrapper` (e.g. `runuser -u bob --`) when given.
    pub fn start(session: &Path, wrapper: &[&str], extra: &[&str]) -> JsonClient {
        let exe = env!("CARGO_BIN_EXE_faultline");
        let mut command = match wrapper.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        let mut child = command
            .args(["attach", "--json"])
            .arg(session)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("faultline attach --json starts");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(value) = serde_json::from_str::<Value>(&line) else {
                    panic!("attach --json printed a line that is not JSON: {line}");
                };
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        JsonClient {
            child,
            stdin,
            rx,
            seen: Vec::new(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one client message.
    pub fn send(&mut self, msg: &Value) {
        if let Some(stdin) = self.stdin.as_mut() {
            let _ = writeln!(stdin, "{msg}");
            let _ = stdin.flush();
        }
    }

    /// Writes `text` to the client's stdin as it is (many messages in one write).
    pub fn send_raw(&mut self, text: &str) {
        if let Some(stdin) = self.stdin.as_mut() {
            let _ = stdin.write_all(text.as_bytes());
            let _ = stdin.flush();
        }
    }

    pub fn answer(&mut self, id: &str, text: &str) {
        self.send(&serde_json::json!({"type": "answer", "id": id, "text": text}));
    }

    /// The next message not seen before (it is added to `seen`).
    pub fn next(&mut self, within: Duration) -> Option<Value> {
        let value = self.rx.recv_timeout(within).ok()?;
        self.seen.push(value.clone());
        Some(value)
    }

    /// The next message matching `want` (earlier ones are kept in `seen`).
    pub fn wait(&mut self, within: Duration, want: impl Fn(&Value) -> bool) -> Option<Value> {
        if let Some(found) = self.seen.iter().find(|v| want(v)) {
            return Some(found.clone());
        }
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.rx.recv_timeout(left) {
                Ok(value) => {
                    self.seen.push(value.clone());
                    if want(&value) {
                        return Some(value);
                    }
                }
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The next question asked (one not yet answered or withdrawn as seen here).
    pub fn question(&mut self, within: Duration) -> Option<Value> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let open = |seen: &[Value]| {
                seen.iter()
                    .filter(|m| m["type"] == "question")
                    .find(|q| {
                        let id = &q["question"]["id"];
                        !seen.iter().any(|m| {
                            (m["type"] == "answered" || m["type"] == "withdrawn") && m["id"] == *id
                        })
                    })
                    .cloned()
            };
            if let Some(q) = open(&self.seen) {
                return Some(q["question"].clone());
            }
            match self.rx.recv_timeout(left) {
                Ok(value) => self.seen.push(value),
                Err(_) => return None,
            }
        }
    }

    /// Waits for the client to exit; its exit code.
    pub fn exit(&mut self, within: Duration) -> Option<i32> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What the client said on stderr (after it exited).
    pub fn stderr(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut err, &mut text);
        }
        text
    }
}

impl Drop for JsonClient {
    fn drop(&mut self) {
        // Only this client's own process, by pid.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
