//! A real terminal for the tests that drive the UI: a detached tmux session of the
//! test's own, on a tmux server of its own (`tmux -L <session name>`), killed on drop.
//! A server of its own: the tests share one process and run side by side, and the
//! default server is shared with every other tmux user of the machine (its environment
//! is that of whoever started it, and it exits when its last session ends).
//! CI installs tmux and sets FAULTLINE_REQUIRE_TMUX=1.

#![allow(dead_code)]

use std::process::Command;
use std::time::{Duration, Instant};

/// False (after printing `SKIP: …` naming `what`) when tmux is missing; a failure
/// instead when `FAULTLINE_REQUIRE_TMUX=1`.
pub fn available(what: &str) -> bool {
    if Command::new("tmux").arg("-V").output().is_ok() {
        return true;
    }
    let why = format!("tmux is not installed; {what} did not run");
    !crate::common::skipped("TMUX", Some(why))
}

/// One detached session, 120×36, running `command` in its only pane.
pub struct Tmux {
    name: String,
    /// The server's socket, which tmux leaves behind when the server exits.
    socket: String,
}

impl Tmux {
    /// Starts `command` in a new session named `<prefix>-<test pid>`, on the server of
    /// the same name.
    pub fn start(prefix: &str, command: &str) -> Tmux {
        Tmux::start_at(prefix, command, (120, 36))
    }

    /// [`Tmux::start`] in a window of `(columns, rows)`.
    pub fn start_at(prefix: &str, command: &str, (columns, rows): (u16, u16)) -> Tmux {
        let mut tmux = Tmux {
            name: format!("{prefix}-{}", std::process::id()),
            socket: String::new(),
        };
        let status = tmux
            .tmux()
            .args(["new-session", "-d", "-s", &tmux.name])
            .args(["-x", &columns.to_string(), "-y", &rows.to_string()])
            .arg(command)
            .status()
            .expect("tmux new-session");
        assert!(status.success(), "tmux new-session failed");
        tmux.socket = tmux.show("#{socket_path}");
        tmux
    }

    /// `tmux` talking to this session's own server.
    fn tmux(&self) -> Command {
        let mut tmux = Command::new("tmux");
        tmux.args(["-L", &self.name]);
        tmux
    }

    pub fn send(&self, keys: &[&str]) {
        let status = self
            .tmux()
            .args(["send-keys", "-t", &self.name])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    /// The pane's text as shown now.
    pub fn screen(&self) -> String {
        let out = self
            .tmux()
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A tmux format of the pane (`#{pane_pid}`, `#{alternate_on}`).
    pub fn show(&self, format: &str) -> String {
        let out = self
            .tmux()
            .args(["display-message", "-p", "-t", &self.name, format])
            .output()
            .expect("tmux display-message");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Waits until the screen shows `text`; panics with the screen otherwise.
    pub fn wait_for(&self, text: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "`{text}` never appeared:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self
            .tmux()
            .args(["kill-session", "-t", &self.name])
            .status();
        if !self.socket.is_empty() {
            let _ = std::fs::remove_file(&self.socket);
        }
    }
}
