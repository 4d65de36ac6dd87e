//! The operator's side of a served session: starting the server process and
//! attaching the UI to it (`run` / `demo` / `resume`), and `faultline attach`,
//! `faultline sessions`, `faultline stop`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::exit::{Exit, Halt};
use crate::session::client::{self, Link};
use crate::session::runtime::Found;
use crate::session::wire::{ClientMsg, Ending, Hello, PROTOCOL_VERSION, ServerMsg};
use crate::term_out::Clean;

/// How long a starting server may take to say where its session is.
const READY_WAIT: Duration = Duration::from_secs(60);

/// Prints one line through the terminal writer (sanitized), ignoring a stdout that
/// went away (a closed terminal or pipe must not turn leaving into a panic).
pub fn say(line: &str) {
    crate::say!("{line}");
}

/// The engine's lines for the operator: errors on stderr, the rest on stdout.
pub fn print_notes(notes: &[String]) {
    let _ = write_notes(std::io::stdout().lock(), std::io::stderr().lock(), notes);
}

/// [`print_notes`] to any pair of writers, each line sanitized: a note can quote a
/// plan, a child or the socket.
pub fn write_notes(out: impl Write, err: impl Write, notes: &[String]) -> std::io::Result<()> {
    let (mut out, mut err) = (Clean::new(out), Clean::new(err));
    for note in notes {
        if note.starts_with("faultline:") {
            writeln!(err, "{note}")?;
        } else {
            writeln!(out, "{note}")?;
        }
    }
    out.flush()?;
    err.flush()
}

/// How a run ended, as `faultline run` has always said it.
pub fn print_ending(ending: &Ending) {
    let _ = write_ending(std::io::stdout().lock(), std::io::stderr().lock(), ending);
}

/// [`print_ending`] to any pair of writers, each line sanitized: the ending comes
/// from the session's server over its socket.
pub fn write_ending(out: impl Write, err: impl Write, ending: &Ending) -> std::io::Result<()> {
    let (mut out, mut err) = (Clean::new(out), Clean::new(err));
    if let Some(question) = &ending.unanswered
        && ending.verdict.is_none()
    {
        writeln!(err, "faultline: {question}")?;
    }
    match (&ending.report, &ending.unwritten) {
        // report.html, the one to open in a browser, is written beside the report
        // (same stem) whenever the report is: named first, report.md after it.
        (Some(path), _) => match crate::report::html::html_path(Path::new(path)) {
            Some(html) => {
                writeln!(out, "report: {} (open it in a browser)", html.display())?;
                writeln!(out, "report (Markdown): {path}")?;
            }
            None => writeln!(out, "report: {path}")?,
        },
        (None, Some(text)) => writeln!(out, "{text}")?,
        (None, None) => {}
    }
    if let Some(verdict) = ending.verdict {
        writeln!(out, "session verdict: {verdict}")?;
    }
    if !ending.session.is_empty() {
        writeln!(out, "session: {}", ending.session)?;
    }
    out.flush()?;
    err.flush()
}

/// Starts this same command as the session's server (`--serve`, its own session,
/// no terminal), waits for it to say where the session is, then attaches the UI —
/// or, with no UI (`--detach`), prints the session directory and returns.
pub async fn start_and_attach(setup: Option<crate::tui::app::Setup>) -> Exit {
    let dir = match start_server().await {
        Ok(dir) => dir,
        Err(halt) => return halt.into(),
    };
    let found = match client::find(Some(&dir.display().to_string()), None, true) {
        Ok(found) => found,
        Err(e) => {
            crate::say_err!("faultline: {e}");
            say(&format!("session: {}", dir.display()));
            return refused_code(&e);
        }
    };
    let Some(setup) = setup else {
        say(&format!(
            "the run goes on in the background; attach with: faultline attach {}",
            found.entry.short
        ));
        say(&format!("session: {}", dir.display()));
        return Exit::OK;
    };
    attach_tui(&found, setup, Hello::default()).await
}

async fn start_server() -> Result<PathBuf, Halt> {
    let exe = std::env::current_exe().map_err(|e| {
        crate::say_err!("faultline: cannot find its own executable: {e}");
        Halt(Exit::ENVIRONMENT)
    })?;
    let mut child = tokio::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .arg("--serve")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            crate::say_err!("faultline: cannot start the session server: {e}");
            Halt(Exit::ENVIRONMENT)
        })?;
    let stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let mut first = String::new();
    if let Some(stdout) = stdout {
        let mut lines = BufReader::new(stdout);
        let _ = tokio::time::timeout(READY_WAIT, lines.read_line(&mut first)).await;
    }
    let dir = first
        .trim_end()
        .strip_prefix("ready ")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    match dir {
        Some(dir) => Ok(dir),
        None => {
            // It stopped before its session existed: what it said is why.
            let mut said = String::new();
            if let Some(stderr) = stderr.as_mut() {
                let _ =
                    tokio::time::timeout(Duration::from_secs(5), stderr.read_to_string(&mut said))
                        .await;
            }
            crate::say_err!(raw "{said}");
            let code = match tokio::time::timeout(Duration::from_secs(30), child.wait()).await {
                Ok(Ok(status)) => status.code().map_or(Exit::FAILED, Exit::relayed),
                _ => Exit::FAILED,
            };
            if code == Exit::OK {
                crate::say_err!("faultline: the session server ended before its session started");
                return Err(Halt(Exit::FAILED));
            }
            Err(Halt(code))
        }
    }
}

/// Cancels the token on SIGHUP / SIGTERM / SIGINT: a client that is told to go goes,
/// the run does not notice.
fn leave_on_signals() -> CancellationToken {
    use tokio::signal::unix::{SignalKind, signal};
    let token = CancellationToken::new();
    for kind in [
        SignalKind::hangup(),
        SignalKind::terminate(),
        SignalKind::interrupt(),
    ] {
        if let Ok(mut stream) = signal(kind) {
            let token = token.clone();
            tokio::spawn(async move {
                if stream.recv().await.is_some() {
                    token.cancel();
                }
            });
        }
    }
    token
}

async fn attach_tui(found: &Found, setup: crate::tui::app::Setup, hello: Hello) -> Exit {
    let link = match client::connect(
        found,
        Hello {
            client: "tui".into(),
            ..hello
        },
    )
    .await
    {
        Ok(link) => link,
        Err(e) => {
            crate::say_err!("faultline: {e}");
            return refused_code(&e);
        }
    };
    let plan = crate::plan::parse::parse_plan(&found.entry.plan, &link.plan_text);
    let leave = leave_on_signals();
    match crate::tui::app::attach(link, plan, setup, leave).await {
        crate::tui::app::Left::Detached => {
            say(&format!(
                "detached; the run goes on: faultline attach {}",
                found.entry.short
            ));
            Exit::OK
        }
        crate::tui::app::Left::Ended(ending) => {
            print_notes(&ending.notes);
            print_ending(&ending);
            Exit::relayed(ending.exit)
        }
        crate::tui::app::Left::Lost(why) => {
            crate::say_err!("faultline: {why}");
            Exit::REFUSED
        }
    }
}

fn refused_code(e: &client::AttachError) -> Exit {
    match e {
        client::AttachError::Denied { .. }
        | client::AttachError::Version { .. }
        | client::AttachError::Impostor { .. }
        | client::AttachError::Unsafe(_) => Exit::REFUSED,
        _ => Exit::UNREADABLE,
    }
}

/// What `faultline attach` takes.
#[derive(Debug, Clone, clap::Args)]
pub struct AttachArgs {
    /// The session's short name (`faultline sessions`) or directory (default: the
    /// newest running session you may attach to).
    pub session: Option<String>,
    /// JSON lines instead of the UI: every message from the session on stdout, and
    /// client messages (`{"type":"answer","id":…,"text":…}`,
    /// `{"type":"note","text":…}`, `{"type":"stop"}`) read from stdin.
    #[arg(long)]
    pub json: bool,
    /// A name for this operator, for a key-bound identity (an authorized_keys
    /// `command="faultline attach --as alice"` entry); journaled as asserted by key,
    /// beside the user the kernel names.
    #[arg(long = "as", value_name = "NAME")]
    pub label: Option<String>,
    /// `viewer`: watch only, never answer, whatever the session's list allows.
    #[arg(long, value_parser = ["viewer"])]
    pub role: Option<String>,
    /// Only sessions under this session root.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Terminal UI theme.
    #[arg(long)]
    pub theme: Option<String>,
    /// The TUI config file.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// `faultline attach [SESSION]`.
pub async fn attach(args: AttachArgs) -> Exit {
    let found = match client::find(args.session.as_deref(), args.out.as_deref(), false) {
        Ok(found) => found,
        Err(e) => {
            crate::say_err!("faultline: {e}");
            return refused_code(&e);
        }
    };
    let hello = Hello {
        after: 0,
        label: args.label.clone(),
        viewer: args.role.as_deref() == Some("viewer"),
        client: if args.json { "json" } else { "tui" }.into(),
        ..Hello::default()
    };
    if args.json {
        return attach_json(&found, hello).await;
    }
    let setup = match crate::tui::app::setup_for(args.theme.as_deref(), args.config.as_deref()) {
        Ok(setup) => setup,
        Err(halt) => return halt.into(),
    };
    attach_tui(&found, setup, hello).await
}

/// `faultline attach --json`: the session's messages as JSON lines; stdin's lines
/// are sent as client messages. Ends with the run (its exit code), when the server
/// goes, or when stdout is closed.
async fn attach_json(found: &Found, hello: Hello) -> Exit {
    let Link {
        mut rx,
        tx,
        who,
        status,
        plan_text,
    } = match client::connect(found, hello).await {
        Ok(link) => link,
        Err(e) => {
            crate::say_err!("faultline: {e}");
            return refused_code(&e);
        }
    };
    // The welcome first, as the server sent it (a JSON reader sees every message).
    let welcome = ServerMsg::Welcome {
        protocol: PROTOCOL_VERSION,
        who,
        status,
        plan_text,
    };
    let mut out = std::io::stdout();
    if let Ok(line) = serde_json::to_string(&welcome)
        && writeln!(out, "{}", crate::sanitize::json(&line))
            .and_then(|()| out.flush())
            .is_err()
    {
        return Exit::OK;
    }
    // Stdin is read on a thread of its own, not the runtime's blocking pool: a read
    // that never returns (a script holding stdin open) must not keep this process
    // once the run has ended.
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().split(b'\n') {
            let Ok(line) = line else { break };
            // A line that is not UTF-8 is refused like any other bad line; the
            // lines after it are still read.
            let Ok(line) = String::from_utf8(line) else {
                crate::say_err!("faultline: stdin: a line that is not UTF-8 was skipped");
                continue;
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<ClientMsg>(&line) {
                // Refused here as the server would, rather than sent: a note far over
                // the bound could be over the server's line limit, which ends the link.
                Ok(ClientMsg::Note { text })
                    if text.len() > crate::session::event::NOTE_MAX_BYTES =>
                {
                    if let Err(why) = crate::session::event::OperatorNote::checked(&text) {
                        crate::say_err!("faultline: note refused: {why}");
                        // On stdout too, the line the server refuses a note with
                        // (a blank one): a JSON reader sees every refusal alike.
                        let refused = ServerMsg::Refused { id: None, why };
                        if let Ok(line) = serde_json::to_string(&refused) {
                            let mut out = std::io::stdout().lock();
                            let _ = writeln!(out, "{}", crate::sanitize::json(&line))
                                .and_then(|()| out.flush());
                        }
                    }
                }
                Ok(msg) => {
                    if tx.send(msg).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    crate::say_err!(
                        "faultline: stdin: not a client message ({e}); expected {{\"type\":\"answer\",\"id\":…,\"text\":…}}, {{\"type\":\"note\",\"text\":…}} or {{\"type\":\"stop\"}}"
                    );
                }
            }
        }
        // Stdin closed: keep watching (the link ends when its sender goes, so it
        // lives on in this parked thread until the process exits).
        loop {
            std::thread::park();
        }
    });
    let leave = leave_on_signals();
    loop {
        let msg = tokio::select! {
            msg = rx.recv() => msg,
            () = leave.cancelled() => return Exit::OK,
        };
        let Some(msg) = msg else {
            crate::say_err!("faultline: the session's server went away");
            return Exit::UNREADABLE;
        };
        let Ok(line) = serde_json::to_string(&msg) else {
            continue;
        };
        if writeln!(out, "{}", crate::sanitize::json(&line))
            .and_then(|()| out.flush())
            .is_err()
        {
            // Whoever read us is gone; the run is not ours to stop.
            return Exit::OK;
        }
        match msg {
            ServerMsg::Ended { ending } => return Exit::relayed(ending.exit),
            ServerMsg::Bye { .. } => return Exit::REFUSED,
            _ => {}
        }
    }
}

/// What `faultline sessions` takes.
#[derive(Debug, Clone, clap::Args)]
pub struct SessionsArgs {
    /// Only sessions under this session root.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// One JSON object per session.
    #[arg(long)]
    pub json: bool,
}

/// `faultline sessions`: every running session the caller may attach to, newest
/// first, with its short name, directory, plan, owner, state, pending questions and
/// attached operators.
pub async fn sessions(args: SessionsArgs) -> Exit {
    let root = args
        .out
        .as_deref()
        .map(|r| std::path::absolute(r).unwrap_or_else(|_| r.to_path_buf()));
    let visible: Vec<Found> = crate::session::runtime::visible()
        .into_iter()
        .filter(|f| {
            root.as_ref()
                .is_none_or(|r| Path::new(&f.entry.session).starts_with(r))
        })
        .collect();
    if visible.is_empty() {
        say(&match &root {
            Some(root) => format!(
                "no running session you may attach to under {}",
                root.display()
            ),
            None => "no running session you may attach to".to_string(),
        });
        return Exit::OK;
    }
    for found in visible {
        let status = status(&found).await;
        let entry = &found.entry;
        if args.json {
            let value = serde_json::json!({
                "short": entry.short,
                "session": entry.session,
                "socket": found.socket().display().to_string(),
                "pid": entry.pid,
                "plan": entry.plan,
                "started": entry.started,
                "owner": entry.owner,
                "status": status.as_ref().ok(),
                "error": status.as_ref().err(),
            });
            say(&crate::sanitize::json(&value.to_string()));
            continue;
        }
        let clean = crate::sanitize::line;
        say(&format!(
            "{}  {}",
            clean(&entry.short),
            clean(&entry.session)
        ));
        say(&format!(
            "  plan {}  started {}  owner {}  pid {}",
            clean(&entry.plan),
            clean(&entry.started),
            clean(&entry.owner),
            entry.pid
        ));
        match status {
            Ok(status) => {
                let pending = if status.pending.is_empty() {
                    String::new()
                } else {
                    format!(": {}", status.pending.join(", "))
                };
                let who: Vec<String> = status
                    .participants
                    .iter()
                    .map(|p| p.who.to_string())
                    .collect();
                say(&clean(&format!("  state: {}{pending}", status.state)));
                say(&clean(&format!(
                    "  attached: {}",
                    if who.is_empty() {
                        "nobody".to_string()
                    } else {
                        who.join("; ")
                    }
                )));
            }
            Err(why) => say(&clean(&format!("  state: unknown ({why})"))),
        }
    }
    Exit::OK
}

async fn status(found: &Found) -> Result<crate::session::wire::Status, String> {
    let hello = Hello {
        client: "status".into(),
        ..Hello::default()
    };
    client::connect_within(found, hello, Duration::from_secs(2))
        .await
        .map(|link| link.status)
        .map_err(|e| e.to_string())
}

/// `faultline stop [SESSION]`: stops a running session as `q` → stop does (heal,
/// write the documents, end), waits for the end and exits like `run`.
pub async fn stop(session: Option<String>, out: Option<PathBuf>) -> Exit {
    let found = match client::find_only(session.as_deref(), out.as_deref()) {
        Ok(found) => found,
        Err(e) => {
            crate::say_err!("faultline: {e}");
            return refused_code(&e);
        }
    };
    let hello = Hello {
        client: "stop".into(),
        ..Hello::default()
    };
    let mut link = match client::connect(&found, hello).await {
        Ok(link) => link,
        Err(e) => {
            crate::say_err!("faultline: {e}");
            return refused_code(&e);
        }
    };
    // The server refuses a viewer's stop too; said here before anything reads as done.
    if link.who.role == crate::session::event::Role::Viewer {
        crate::say_err!(
            "faultline: you are attached as a viewer of {}'s session {}: viewers cannot stop the run",
            crate::sanitize::line(&found.entry.owner),
            crate::sanitize::line(&found.entry.short)
        );
        return Exit::REFUSED;
    }
    let _ = link.tx.send(ClientMsg::Stop);
    let whose = if found.entry.owner_uid == nix::unistd::getuid().as_raw() {
        String::new()
    } else {
        format!("{}'s session ", crate::sanitize::line(&found.entry.owner))
    };
    say(&format!(
        "stopping {whose}{} ({}): healing and writing the documents",
        crate::sanitize::line(&found.entry.short),
        crate::sanitize::line(&found.entry.session)
    ));
    while let Some(msg) = link.rx.recv().await {
        match msg {
            ServerMsg::Ended { ending } => {
                print_notes(&ending.notes);
                print_ending(&ending);
                return Exit::relayed(ending.exit);
            }
            ServerMsg::Refused { id: None, why } | ServerMsg::Bye { why } => {
                crate::say_err!("faultline: {}", crate::sanitize::line(&why));
                return Exit::REFUSED;
            }
            _ => {}
        }
    }
    crate::say_err!("faultline: the session's server went away before it said how the run ended");
    Exit::UNREADABLE
}
