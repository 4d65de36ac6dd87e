//! The session server: the process that owns a run listens on the session's Unix
//! socket, replays the journal to every client that attaches, streams what happens,
//! broadcasts each question and takes the first valid answer, and journals the notes
//! operators leave on the run (tmux's model: the server owns the session, clients come
//! and go).
//!
//! Identity is the socket's peer credentials (the kernel's uid), never a claimed
//! name; the session's [`Roles`] decide what each may do. A client that goes away or
//! reads slowly never holds the run up: broadcasts never block, and a client that
//! fell behind is caught up from the journal file.
//!
//! A client of another protocol version ([`PROTOCOL_VERSION`]), or one that names
//! none, is told so in a `bye` naming both versions, and journaled as refused.
//!
//! Everything a client sends is bounded: a line is at most [`MAX_LINE`] bytes, before
//! hello as after it; a client has [`HELLO_WAIT`] to say hello; each user may hold
//! [`PER_USER`] connections and all together a quarter of the process's descriptor
//! limit (at most [`MAX_CLIENTS`]), so the run's own files and children never go
//! short. Joins and leaves are journaled in batches (a join always before anything
//! its participant sends), and clients get the participant list once (in `welcome`)
//! and then only its changes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{broadcast, oneshot};
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};
use tokio_util::sync::CancellationToken;

use super::event::{self, Event, Participant, Role, Who};
use super::journal::{Journal, Record, Scope};
use super::roles::Roles;
use super::runtime::{self, Slot};
use super::wire::{
    ClientMsg, Ending, Hello, PROTOCOL_VERSION, ServerMsg, Status, version_mismatch,
};
use crate::session::operator::{Answer, Operator, Question, Unanswered};
use crate::untrusted::user_name;

/// How many messages a client may fall behind before it is caught up from the file.
const BACKLOG: usize = 1024;
/// How long a client has to say hello.
const HELLO_WAIT: Duration = Duration::from_secs(10);
/// How long clients get to read `ended` before the server goes.
const GOODBYE_WAIT: Duration = Duration::from_secs(2);
/// The longest line a client may send (an answer is a few words).
pub const MAX_LINE: usize = 64 * 1024;
/// Connections one user may hold at once.
pub const PER_USER: usize = 32;
/// Connections all users together may hold, whatever the descriptor limit.
pub const MAX_CLIENTS: usize = 256;
/// How long a client may leave a message unread before it is let go.
const WRITE_WAIT: Duration = Duration::from_secs(10);
/// The longest `--as` label or client kind a hello may carry (both are journaled
/// with every join and leave).
const HELLO_FIELD_MAX: usize = 64;
/// How often batched joins and leaves reach the journal.
const JOURNAL_EVERY: Duration = Duration::from_millis(500);
/// Refused answers journaled per user; beyond them only a count.
const REFUSALS_JOURNALED: u64 = 16;
/// Bytes of a refused answer's text kept in the journal.
const REFUSED_TEXT_MAX: usize = 256;
/// Notes one user may leave on a session (each at most
/// [`event::NOTE_MAX_BYTES`]): nobody attached can grow the owner's journal at will.
pub const NOTES_PER_USER: u64 = 500;

/// A question waiting for its first valid answer.
struct Pending {
    question: Question,
    give: oneshot::Sender<Answer>,
}

#[derive(Default)]
struct State {
    pending: BTreeMap<String, Pending>,
    /// Who took each question already answered (for "already answered by").
    answered: BTreeMap<String, String>,
    participants: Vec<(u64, Participant)>,
    next_client: u64,
    ending: Option<Ending>,
    stopping: bool,
    /// Open connections per uid (hello said or not).
    connections: BTreeMap<u32, usize>,
    /// Connections refused per uid and why, beyond the first (journaled at the end).
    refused: BTreeMap<(u32, String), u64>,
    /// Answers refused per uid (the first few journaled, the rest counted).
    refused_answers: BTreeMap<u32, u64>,
    /// Notes journaled per uid.
    notes: BTreeMap<u32, u64>,
    /// Joins and leaves waiting for the next batch.
    later: Vec<Event>,
}

struct Shared {
    dir: PathBuf,
    /// Let go when the run ends, so healing and whoever opens the journal next can
    /// take its lock.
    journal: Mutex<Option<Journal>>,
    roles: Roles,
    plan: String,
    started: String,
    tx: broadcast::Sender<Arc<ServerMsg>>,
    state: Mutex<State>,
    stop: CancellationToken,
    /// Cancelled when the server ends: every client task goes with it.
    closing: CancellationToken,
    /// Connections all clients together may hold.
    max_clients: usize,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Journals `event`; a journal that cannot be written is the engine's to report,
    /// so the server only logs it.
    fn journal(&self, event: Event) {
        let mut journal = self.journal.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(journal) = journal.as_mut() else {
            tracing::info!(
                "session server: after the run: {} not journaled",
                event.kind()
            );
            return;
        };
        if let Err(e) = journal.append(Scope::default(), event) {
            tracing::warn!("session server: journal: {e}");
        }
    }

    /// Journals `event` with the next batch.
    fn journal_later(&self, event: Event) {
        self.state().later.push(event);
    }

    /// Writes the batch waiting (one sync for all of it).
    fn flush(&self) {
        // The journal's lock before the batch is taken: a record appended by another
        // task once this returns lands after the batch, never between the take and
        // the write (lock order everywhere: journal, then state).
        let mut journal = self.journal.lock().unwrap_or_else(PoisonError::into_inner);
        let events = std::mem::take(&mut self.state().later);
        if events.is_empty() {
            return;
        }
        let Some(journal) = journal.as_mut() else {
            tracing::info!(
                "session server: after the run: {} joins / leaves not journaled",
                events.len()
            );
            return;
        };
        if let Err(e) = journal.append_all(Scope::default(), events) {
            tracing::warn!("session server: journal: {e}");
        }
    }

    /// Counts a connection from `uid` refused for `why`, of its `kind`; the first of
    /// each (uid, kind) is journaled with the next batch (saying `why`), the rest only
    /// counted (their sum journaled at the end, under `kind`), so nobody can grow the
    /// owner's journal by knocking, however they vary what they send.
    fn refuse(&self, uid: u32, kind: &str, why: &str) {
        let first = {
            let mut state = self.state();
            let count = state.refused.entry((uid, kind.to_string())).or_insert(0);
            *count += 1;
            *count == 1
        };
        if first {
            self.journal_later(Event::ParticipantRefused(event::ParticipantRefused {
                uid,
                user: user_name(uid),
                why: why.to_string(),
            }));
        }
    }

    /// Takes a connection from `uid`, or says why not (over a cap).
    fn admit(self: &Arc<Self>, uid: u32) -> Result<Ticket, String> {
        let mut state = self.state();
        let total: usize = state.connections.values().sum();
        let mine = state.connections.get(&uid).copied().unwrap_or(0);
        let why = if state.ending.is_some() {
            Some("the run has ended".to_string())
        } else if mine >= PER_USER {
            Some(format!(
                "{} already holds {PER_USER} connections to this session (the most one user may)",
                user_name(uid)
            ))
        } else if total >= self.max_clients {
            Some(format!(
                "the session already serves {} connections (the most it takes)",
                self.max_clients
            ))
        } else {
            None
        };
        if let Some(why) = why {
            drop(state);
            self.refuse(uid, &why, &why);
            return Err(why);
        }
        *state.connections.entry(uid).or_insert(0) += 1;
        Ok(Ticket {
            shared: self.clone(),
            uid,
        })
    }

    fn send(&self, msg: ServerMsg) {
        // No receiver (nobody attached) is not an error.
        let _ = self.tx.send(Arc::new(msg));
    }

    fn status(&self) -> Status {
        let state = self.state();
        let pending: Vec<String> = state.pending.keys().cloned().collect();
        Status {
            session: self.dir.display().to_string(),
            plan: self.plan.clone(),
            started: self.started.clone(),
            owner: self.roles.owner.clone(),
            state: if state.ending.is_some() {
                "ended".into()
            } else if state.stopping {
                "stopping".into()
            } else if pending.is_empty() {
                "running".into()
            } else {
                "waiting for an answer".into()
            },
            pending,
            participants: state.participants.iter().map(|(_, p)| p.clone()).collect(),
            refused: state.refused.values().sum(),
        }
    }

    /// Journals a refused answer: each user's first [`REFUSALS_JOURNALED`] with at
    /// most [`REFUSED_TEXT_MAX`] bytes of their text, the rest only counted (their sum
    /// journaled at the end), so nobody attached can grow the owner's journal at will.
    fn refuse_answer(&self, who: &Who, id: &str, text: &str, why: &str) {
        let journaled = {
            let mut state = self.state();
            let count = state.refused_answers.entry(who.uid).or_insert(0);
            *count += 1;
            *count <= REFUSALS_JOURNALED
        };
        if journaled {
            let mut end = text.len().min(REFUSED_TEXT_MAX);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let kept = if end < text.len() {
                format!("{}… ({} bytes in all)", &text[..end], text.len())
            } else {
                text.to_string()
            };
            self.journal(Event::AnswerRefused(event::AnswerRefused {
                question: crate::sanitize::line(id).chars().take(128).collect(),
                answer: kept,
                who: who.clone(),
                why: why.to_string(),
            }));
        }
    }

    /// Journals `text` as a note from `who` (attached through `client`), or says why
    /// not: a viewer's, one over [`event::NOTE_MAX_BYTES`] or blank, one over
    /// [`NOTES_PER_USER`], or one sent after the run let go of its journal. A refused
    /// note is not journaled.
    fn note(&self, who: &Who, client: &str, text: &str) -> Result<(), String> {
        if who.role == Role::Viewer {
            return Err("viewers do not leave notes (attached with the viewer role)".to_string());
        }
        let text = event::OperatorNote::checked(text)?;
        let written = self.state().notes.get(&who.uid).copied().unwrap_or(0);
        if written >= NOTES_PER_USER {
            return Err(format!(
                "{} has left {NOTES_PER_USER} notes on this session, the most one user may",
                who.user
            ));
        }
        let note = Event::OperatorNote(event::OperatorNote {
            text,
            who: who.clone(),
            client: client.to_string(),
        });
        {
            let mut journal = self.journal.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(journal) = journal.as_mut() else {
                return Err("the run has ended: notes are no longer journaled".to_string());
            };
            journal
                .append(Scope::default(), note)
                .map_err(|e| format!("the note could not be journaled: {e}"))?;
        }
        *self.state().notes.entry(who.uid).or_insert(0) += 1;
        Ok(())
    }

    /// Takes `text` as the answer to `id` from `who`, or says why not.
    fn answer(&self, who: &Who, id: &str, text: &str) -> Result<(), String> {
        if who.role == Role::Viewer {
            let why = "viewers do not answer (attached with the viewer role)".to_string();
            self.refuse_answer(who, id, text, &why);
            return Err(why);
        }
        let mut state = self.state();
        let Some(pending) = state.pending.remove(id) else {
            return Err(match state.answered.get(id) {
                Some(by) => format!("already answered by {by}"),
                None => format!("no question `{id}` is waiting"),
            });
        };
        let checked = match pending.question.check(text) {
            Ok(checked) => checked,
            Err(why) => {
                state.pending.insert(id.to_string(), pending);
                drop(state);
                self.refuse_answer(who, id, text, &why);
                return Err(why);
            }
        };
        let by = who.to_string();
        state.answered.insert(id.to_string(), by.clone());
        let answer = Answer {
            text: checked.clone(),
            by: by.clone(),
            who: Some(who.clone()),
        };
        if pending.give.send(answer).is_err() {
            return Err(format!("question `{id}` was withdrawn"));
        }
        drop(state);
        self.send(ServerMsg::Answered {
            id: id.into(),
            answer: checked,
            by,
        });
        Ok(())
    }
}

/// One open connection, counted against its user's and the total cap until dropped.
struct Ticket {
    shared: Arc<Shared>,
    uid: u32,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.shared.state();
        if let Some(n) = state.connections.get_mut(&self.uid) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                state.connections.remove(&self.uid);
            }
        }
    }
}

/// A running session server.
pub struct Server {
    shared: Arc<Shared>,
    /// The session's place in the runtime registry; dropping it unregisters.
    slot: Slot,
    accept: tokio::task::JoinHandle<()>,
}

/// Why the server could not start listening.
#[derive(Debug, thiserror::Error)]
#[error("the session cannot be attached to: {0}")]
pub struct ListenError(#[from] pub runtime::RuntimeError);

/// How many connections the clients may hold together: a quarter of the descriptor
/// limit, so the run keeps three quarters for its own files and children.
fn client_cap() -> usize {
    let soft = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft);
    usize::try_from(soft / 4)
        .unwrap_or(MAX_CLIENTS)
        .clamp(4, MAX_CLIENTS)
}

impl Server {
    /// Registers the session in the caller's runtime directory and listens on its
    /// socket there; `stop` is cancelled when an owner or approver asks the run to
    /// stop.
    pub fn start(
        dir: &Path,
        journal: &Journal,
        roles: Roles,
        plan: &str,
        stop: CancellationToken,
    ) -> Result<Server, ListenError> {
        let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let (slot, listener) = runtime::register(&absolute, plan, &roles)?;
        let listener =
            UnixListener::from_std(listener).map_err(|source| runtime::RuntimeError::Io {
                path: slot.socket.clone(),
                source,
            })?;
        let (tx, _) = broadcast::channel(BACKLOG);
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            journal: Mutex::new(Some(journal.share())),
            roles,
            plan: plan.to_string(),
            started: slot.entry.started.clone(),
            tx,
            state: Mutex::new(State::default()),
            stop,
            closing: CancellationToken::new(),
            max_clients: client_cap(),
        });
        let listed: Vec<&String> = shared.roles.listed().collect();
        shared.journal(Event::SessionRoles(event::SessionRoles {
            owner: shared.roles.owner.clone(),
            owner_uid: shared.roles.owner_uid,
            approvers: shared.roles.approvers.clone(),
            viewers: shared.roles.viewers.clone(),
            socket: slot.socket.display().to_string(),
            access: if listed.is_empty() {
                format!(
                    "socket mode 0600 in a 0700 slot of {}: the owner only",
                    runtime::base().display()
                )
            } else {
                format!(
                    "socket mode 0600 in a 0700 slot, ACL entries for {} (short name {})",
                    listed
                        .iter()
                        .map(|u| u.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    slot.entry.short
                )
            },
        }));
        let flusher = shared.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = tokio::time::sleep(JOURNAL_EVERY) => flusher.flush(),
                    () = flusher.closing.cancelled() => return,
                }
            }
        });
        // Stopping (a client's stop, a signal): every waiting question is withdrawn,
        // so the engine, which is waiting on one, sees it unanswered and winds down.
        let withdraw = shared.clone();
        tokio::spawn(async move {
            withdraw.stop.cancelled().await;
            let ids: Vec<String> = {
                let mut state = withdraw.state();
                state.stopping = true;
                std::mem::take(&mut state.pending).into_keys().collect()
            };
            for id in ids {
                let why = "the run is stopping".to_string();
                withdraw.journal(Event::QuestionWithdrawn(event::QuestionWithdrawn {
                    question: id.clone(),
                    why: why.clone(),
                }));
                withdraw.send(ServerMsg::Withdrawn { id, why });
            }
        });
        let accept = tokio::spawn(accept_loop(listener, shared.clone()));
        Ok(Server {
            shared,
            slot,
            accept,
        })
    }

    /// The name `attach` and `stop` take for this session.
    pub fn short_name(&self) -> &str {
        &self.slot.entry.short
    }

    /// The operator that asks the attached clients.
    pub fn operator(&self) -> Broadcast {
        Broadcast {
            shared: self.shared.clone(),
        }
    }

    /// Feeds journal records (the engine's tap) to the clients.
    pub fn follow(&self, mut records: tokio::sync::mpsc::UnboundedReceiver<Record>) {
        let shared = self.shared.clone();
        tokio::spawn(async move {
            while let Some(record) = records.recv().await {
                shared.send(ServerMsg::Record { record });
            }
        });
    }

    /// The run is over: lets go of the journal (its lock, and the tap the engine's
    /// records came through).
    pub fn release_journal(&self) {
        // Refusals beyond each user's first were only counted: their sums now.
        let refused: Vec<((u32, String), u64)> = self
            .shared
            .state()
            .refused
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(k, n)| (k.clone(), *n))
            .collect();
        let answers: Vec<(u32, u64)> = self
            .shared
            .state()
            .refused_answers
            .iter()
            .filter(|(_, n)| **n > REFUSALS_JOURNALED)
            .map(|(uid, n)| (*uid, *n))
            .collect();
        for (uid, n) in answers {
            self.shared
                .journal_later(Event::ParticipantRefused(event::ParticipantRefused {
                    uid,
                    user: user_name(uid),
                    why: format!(
                        "{n} answers refused in all; the first {REFUSALS_JOURNALED} are journaled"
                    ),
                }));
        }
        for ((uid, why), n) in refused {
            self.shared
                .journal_later(Event::ParticipantRefused(event::ParticipantRefused {
                    uid,
                    user: user_name(uid),
                    why: format!("{why} (refused {n} times in all)"),
                }));
        }
        self.shared.flush();
        let journal = self
            .shared
            .journal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(journal);
    }

    /// Tells every client how the run ended, gives them a moment to read it, then
    /// stops listening and removes the socket.
    pub async fn end(self, ending: Ending) {
        self.shared.state().ending = Some(ending.clone());
        self.shared.send(ServerMsg::Ended { ending });
        let deadline = tokio::time::Instant::now() + GOODBYE_WAIT;
        while tokio::time::Instant::now() < deadline && !self.shared.state().participants.is_empty()
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.accept.abort();
        // Whoever is still connected (a client that never read `ended`, one that
        // never said hello) goes now, with the registry entry.
        self.shared.closing.cancel();
        drop(self.slot);
    }
}

/// The operator of a served session: each question goes to every attached client
/// (and waits for one, however long: a detached session waits for the next
/// operator); the first valid answer is the engine's.
pub struct Broadcast {
    shared: Arc<Shared>,
}

impl Operator for Broadcast {
    fn ask(&mut self, question: &Question) -> oneshot::Receiver<Result<Answer, Unanswered>> {
        let (reply, rx) = oneshot::channel();
        let (give, take) = oneshot::channel();
        {
            let mut state = self.shared.state();
            if state.stopping {
                // Nobody is asked any more: dropping `reply` leaves it unanswered.
                return rx;
            }
            state.answered.remove(&question.id);
            state.pending.insert(
                question.id.clone(),
                Pending {
                    question: question.clone(),
                    give,
                },
            );
        }
        self.shared
            .journal(Event::QuestionAsked(event::QuestionAsked {
                question: question.clone(),
            }));
        self.shared.send(ServerMsg::Question {
            question: question.clone(),
        });
        let shared = self.shared.clone();
        let id = question.id.clone();
        tokio::spawn(async move {
            let mut reply = reply;
            tokio::select! {
                answer = take => {
                    if let Ok(answer) = answer {
                        let _ = reply.send(Ok(answer));
                    }
                }
                // The engine stopped waiting (the run is stopping): withdrawn.
                () = reply.closed() => {
                    let removed = shared.state().pending.remove(&id).is_some();
                    if removed {
                        let why = "the run stopped waiting for it".to_string();
                        shared.journal(Event::QuestionWithdrawn(event::QuestionWithdrawn {
                            question: id.clone(),
                            why: why.clone(),
                        }));
                        shared.send(ServerMsg::Withdrawn { id, why });
                    }
                }
            }
        });
        rx
    }
}

async fn accept_loop(listener: UnixListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let uid = match stream.peer_cred() {
                    Ok(cred) => cred.uid(),
                    Err(e) => {
                        tracing::warn!("session server: no peer credentials: {e}");
                        continue;
                    }
                };
                match shared.admit(uid) {
                    Ok(ticket) => {
                        tokio::spawn(serve_client(stream, shared.clone(), ticket));
                    }
                    // Said without waiting (a fresh socket's buffer is empty), then closed:
                    // a refused client never holds a descriptor.
                    Err(why) => {
                        if let Ok(mut line) = serde_json::to_vec(&ServerMsg::Bye { why }) {
                            line.push(b'\n');
                            let _ = stream.try_write(&line);
                        }
                    }
                }
            }
            Err(e) => {
                // Out of descriptors and the like: back off rather than spin.
                tracing::warn!("session server: accept: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Writes one message as a line; false when the client is gone, or has not read
/// for [`WRITE_WAIT`] (it is let go: the journal has what it missed).
async fn write(out: &mut tokio::net::unix::OwnedWriteHalf, msg: &ServerMsg) -> bool {
    let Ok(mut line) = serde_json::to_vec(msg) else {
        return true;
    };
    line.push(b'\n');
    matches!(
        tokio::time::timeout(WRITE_WAIT, out.write_all(&line)).await,
        Ok(Ok(()))
    )
}

type Lines = FramedRead<tokio::net::unix::OwnedReadHalf, LinesCodec>;

/// The next line from the client: `Err` with what to tell it when the line is over
/// the limit, `Ok(None)` when it is gone.
async fn next_line(lines: &mut Lines) -> Result<Option<String>, String> {
    match lines.next().await {
        Some(Ok(line)) => Ok(Some(line)),
        Some(Err(LinesCodecError::MaxLineLengthExceeded)) => Err(format!(
            "a line longer than {MAX_LINE} bytes: this server reads no such message"
        )),
        Some(Err(LinesCodecError::Io(_))) | None => Ok(None),
    }
}

/// How refusals for another protocol version are counted (whatever version each
/// claimed).
const VERSION_REFUSED: &str = "a client of another attach protocol version";

/// Why a first line is not taken as a hello.
enum Unwelcome {
    /// Another protocol version (or none): journaled as a refused connection.
    Version(String),
    /// Not a hello, or one over its limits.
    Bad(String),
}

/// The client's hello from its first line. The version is read first, from any JSON
/// object of type `hello`: a client of another version may shape the rest otherwise,
/// and is told so rather than that its line is no hello.
fn read_hello(line: &str) -> Result<Hello, Unwelcome> {
    let theirs = serde_json::from_str::<serde_json::Value>(line)
        .ok()
        .filter(|v| v["type"] == "hello")
        .map(|v| v["protocol"].as_u64().unwrap_or(0));
    if let Some(theirs) = theirs
        && theirs != u64::from(PROTOCOL_VERSION)
    {
        let binary = std::env::current_exe().ok();
        return Err(Unwelcome::Version(version_mismatch(
            "session's server",
            "client",
            theirs,
            binary.as_deref(),
        )));
    }
    match serde_json::from_str::<ClientMsg>(line) {
        Ok(ClientMsg::Hello(hello))
            if hello.client.len() <= HELLO_FIELD_MAX
                && hello
                    .label
                    .as_ref()
                    .is_none_or(|l| l.len() <= HELLO_FIELD_MAX) =>
        {
            Ok(hello)
        }
        Ok(ClientMsg::Hello(_)) => Err(Unwelcome::Bad(format!(
            "a hello's label and client are at most {HELLO_FIELD_MAX} bytes"
        ))),
        _ => Err(Unwelcome::Bad("the first line must be a hello".to_string())),
    }
}

/// The plan text as the session saved it (read per client: the server holds no copy
/// of a text that grows with the plan); empty, and logged, when it cannot be read.
async fn saved_plan(session: &Path) -> String {
    let path = super::resume::plan_file(session);
    tokio::fs::read_to_string(&path).await.unwrap_or_else(|e| {
        tracing::warn!("session server: {}: {e}", path.display());
        String::new()
    })
}

async fn serve_client(stream: UnixStream, shared: Arc<Shared>, ticket: Ticket) {
    let closing = shared.closing.clone();
    tokio::select! {
        () = client(stream, shared) => {}
        () = closing.cancelled() => {}
    }
    drop(ticket);
}

async fn client(stream: UnixStream, shared: Arc<Shared>) {
    let cred = match stream.peer_cred() {
        Ok(cred) => cred,
        Err(e) => {
            tracing::warn!("session server: no peer credentials: {e}");
            return;
        }
    };
    let uid = cred.uid();
    let user = user_name(uid);
    let (read, mut out) = stream.into_split();
    let mut lines = FramedRead::new(read, LinesCodec::new_with_max_length(MAX_LINE));
    let hello: Hello = match tokio::time::timeout(HELLO_WAIT, next_line(&mut lines)).await {
        Ok(Ok(Some(line))) => match read_hello(&line) {
            Ok(hello) => hello,
            Err(Unwelcome::Version(why)) => {
                shared.refuse(uid, VERSION_REFUSED, &why);
                write(&mut out, &ServerMsg::Bye { why }).await;
                return;
            }
            Err(Unwelcome::Bad(why)) => {
                write(&mut out, &ServerMsg::Bye { why }).await;
                return;
            }
        },
        Ok(Err(why)) => {
            write(&mut out, &ServerMsg::Bye { why }).await;
            return;
        }
        _ => return,
    };
    let Some(listed) = shared.roles.role_of(uid, &user) else {
        let why = format!(
            "{user} (uid {uid}) is not on this session's list ({})",
            shared.roles.describe()
        );
        shared.journal_later(Event::ParticipantRefused(event::ParticipantRefused {
            uid,
            user,
            why: why.clone(),
        }));
        write(&mut out, &ServerMsg::Bye { why }).await;
        return;
    };
    let who = Who {
        uid,
        user,
        role: if hello.viewer { Role::Viewer } else { listed },
        label: hello
            .label
            .as_deref()
            .map(crate::sanitize::line)
            .filter(|l| !l.trim().is_empty()),
        pid: cred.pid(),
    };
    // Subscribed before the replay is read, so nothing falls between the two.
    let mut live = shared.tx.subscribe();
    let status = shared.status();
    let status_only = hello.client == "status";
    let welcome = ServerMsg::Welcome {
        protocol: PROTOCOL_VERSION,
        who: who.clone(),
        status,
        plan_text: if status_only {
            String::new()
        } else {
            saved_plan(&shared.dir).await
        },
    };
    if !write(&mut out, &welcome).await || status_only {
        return;
    }
    let participant = Participant {
        who: who.clone(),
        client: crate::sanitize::line(&hello.client),
    };
    let id = {
        let mut state = shared.state();
        state.next_client += 1;
        let id = state.next_client;
        state.participants.push((id, participant.clone()));
        id
    };
    shared.journal_later(Event::ParticipantJoined(participant.clone()));
    shared.send(ServerMsg::Joined {
        participant: participant.clone(),
    });
    session(
        &shared,
        &participant,
        hello.after,
        &mut live,
        &mut lines,
        &mut out,
    )
    .await;
    shared.state().participants.retain(|(i, _)| *i != id);
    shared.journal_later(Event::ParticipantLeft(participant.clone()));
    shared.send(ServerMsg::Left { participant });
}

/// Replay, the live marker, the pending questions, then live traffic both ways until
/// the client goes or the run ends.
async fn session(
    shared: &Shared,
    participant: &Participant,
    after: u64,
    live: &mut broadcast::Receiver<Arc<ServerMsg>>,
    lines: &mut Lines,
    out: &mut tokio::net::unix::OwnedWriteHalf,
) {
    let who = &participant.who;
    let Some(mut last) = catch_up(shared, after, out).await else {
        return;
    };
    if !write(out, &ServerMsg::Live { seq: last }).await || !resend_questions(shared, out).await {
        return;
    }
    loop {
        tokio::select! {
            msg = live.recv() => match msg {
                Ok(msg) => {
                    if let ServerMsg::Record { record } = msg.as_ref() {
                        if record.seq <= last {
                            continue;
                        }
                        // A gap: records journaled before the engine's tap was
                        // connected (the server's own, early in a run: a note, a
                        // join) never came live. They are in the file.
                        if record.seq > last + 1 {
                            match catch_up(shared, last, out).await {
                                Some(seq) => last = seq,
                                None => return,
                            }
                            if record.seq <= last {
                                continue;
                            }
                        }
                        last = record.seq;
                    }
                    if !write(out, &msg).await {
                        return;
                    }
                    if matches!(msg.as_ref(), ServerMsg::Ended { .. }) {
                        return;
                    }
                }
                // Fell behind: what it missed is in the journal file.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    match catch_up(shared, last, out).await {
                        Some(seq) => last = seq,
                        None => return,
                    }
                    if !resend_questions(shared, out).await {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            line = next_line(lines) => {
                let line = match line {
                    Ok(Some(line)) => line,
                    Ok(None) => return,
                    Err(why) => {
                        write(out, &ServerMsg::Bye { why }).await;
                        return;
                    }
                };
                let msg = serde_json::from_str::<ClientMsg>(&line);
                // Joins are batched: the sender's is written before anything they
                // send is journaled (a note, a refusal, their answer, a stop).
                if matches!(
                    msg,
                    Ok(ClientMsg::Answer { .. } | ClientMsg::Note { .. } | ClientMsg::Stop)
                ) {
                    shared.flush();
                }
                let reply = match msg {
                    Ok(ClientMsg::Answer { id, text }) => match shared.answer(who, &id, &text) {
                        Ok(()) => None,
                        Err(why) => Some(ServerMsg::Refused { id: Some(id), why }),
                    },
                    Ok(ClientMsg::Note { text }) => shared
                        .note(who, &participant.client, &text)
                        .err()
                        .map(|why| ServerMsg::Refused { id: None, why }),
                    Ok(ClientMsg::Stop) => stop(shared, who),
                    Ok(ClientMsg::Hello(_)) => None,
                    Err(e) => Some(ServerMsg::Refused {
                        id: None,
                        why: format!("not a message this server reads: {e}"),
                    }),
                };
                if let Some(reply) = reply
                    && !write(out, &reply).await
                {
                    return;
                }
            }
        }
    }
}

fn stop(shared: &Shared, who: &Who) -> Option<ServerMsg> {
    if who.role == Role::Viewer {
        return Some(ServerMsg::Refused {
            id: None,
            why: "viewers cannot stop the run".into(),
        });
    }
    let first = {
        let mut state = shared.state();
        !std::mem::replace(&mut state.stopping, true)
    };
    if first {
        shared.journal(Event::StopAsked(event::StopAsked { who: who.clone() }));
        shared.stop.cancel();
    }
    None
}

/// Sends the journal's records after `after` from the file; the last seq sent.
async fn catch_up(
    shared: &Shared,
    after: u64,
    out: &mut tokio::net::unix::OwnedWriteHalf,
) -> Option<u64> {
    let path = shared.dir.join("journal.jsonl");
    let records = tokio::task::spawn_blocking(move || super::journal::read(&path))
        .await
        .ok()
        .and_then(Result::ok)
        .map(|c| c.records)
        .unwrap_or_default();
    let mut last = after;
    for record in records.into_iter().filter(|r| r.seq > after) {
        last = record.seq;
        if !write(out, &ServerMsg::Record { record }).await {
            return None;
        }
    }
    Some(last)
}

async fn resend_questions(shared: &Shared, out: &mut tokio::net::unix::OwnedWriteHalf) -> bool {
    let (questions, ending) = {
        let state = shared.state();
        let questions: Vec<Question> = state.pending.values().map(|p| p.question.clone()).collect();
        (questions, state.ending.clone())
    };
    for question in questions {
        if !write(out, &ServerMsg::Question { question }).await {
            return false;
        }
    }
    if let Some(ending) = ending {
        write(out, &ServerMsg::Ended { ending }).await;
        return false;
    }
    true
}
