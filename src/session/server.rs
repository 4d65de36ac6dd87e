//! The session server: the process that owns a run listens on the session's Unix
//! socket, replays the journal to every client that attaches, streams what happens,
//! broadcasts each question and takes the first valid answer (tmux's model: the
//! server owns the session, clients come and go).
//!
//! Identity is the socket's peer credentials (the kernel's uid), never a claimed
//! name; the session's [`Roles`] decide what each may do. A client that goes away or
//! reads slowly never holds the run up: broadcasts never block, and a client that
//! fell behind is caught up from the journal file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use super::event::{self, Event, Participant, Role, Who};
use super::journal::{Journal, Record, Scope};
use super::roles::{Roles, user_name};
use super::wire::{ClientMsg, Ending, Hello, SERVER_FILE, SOCKET, ServerFile, ServerMsg, Status};
use crate::session::operator::{Answer, Operator, Question, Unanswered};

/// How many messages a client may fall behind before it is caught up from the file.
const BACKLOG: usize = 1024;
/// How long a client has to say hello.
const HELLO_WAIT: Duration = Duration::from_secs(10);
/// How long clients get to read `ended` before the server goes.
const GOODBYE_WAIT: Duration = Duration::from_secs(2);
/// Longest socket path the kernel takes (`sun_path`, less its NUL).
const SUN_PATH_MAX: usize = 107;

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
        }
    }

    fn participants_changed(&self) {
        let participants = self
            .state()
            .participants
            .iter()
            .map(|(_, p)| p.clone())
            .collect();
        self.send(ServerMsg::Participants { participants });
    }

    /// Takes `text` as the answer to `id` from `who`, or says why not.
    fn answer(&self, who: &Who, id: &str, text: &str) -> Result<(), String> {
        if who.role == Role::Viewer {
            let why = "viewers do not answer (attached with the viewer role)".to_string();
            self.journal(Event::AnswerRefused(event::AnswerRefused {
                question: id.into(),
                answer: text.into(),
                who: who.clone(),
                why: why.clone(),
            }));
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
                self.journal(Event::AnswerRefused(event::AnswerRefused {
                    question: id.into(),
                    answer: text.into(),
                    who: who.clone(),
                    why: why.clone(),
                }));
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

/// A running session server.
pub struct Server {
    shared: Arc<Shared>,
    socket: PathBuf,
    accept: tokio::task::JoinHandle<()>,
}

/// Why the server could not start listening.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on {path}: {source}")]
pub struct ListenError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl Server {
    /// Listens on the session's socket; `stop` is cancelled when an owner or approver
    /// asks the run to stop.
    pub fn start(
        dir: &Path,
        journal: &Journal,
        roles: Roles,
        plan: &str,
        stop: CancellationToken,
    ) -> Result<Server, ListenError> {
        let socket = socket_path(dir);
        let listen_err = |source| ListenError {
            path: socket.clone(),
            source,
        };
        if let Some(parent) = socket.parent() {
            std::fs::create_dir_all(parent).map_err(listen_err)?;
        }
        // A socket left by a killed server of this session is stale: nobody answers it.
        let _ = std::fs::remove_file(&socket);
        let listener = UnixListener::bind(&socket).map_err(listen_err)?;
        // The session directory was made private when it was created.
        super::roles::open_socket(&socket, &roles).map_err(listen_err)?;
        let started = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let file = ServerFile {
            pid: std::process::id(),
            socket: socket.display().to_string(),
            plan: plan.to_string(),
            started: started.clone(),
            owner: roles.owner.clone(),
        };
        let text = serde_json::to_string_pretty(&file).unwrap_or_default();
        std::fs::write(dir.join(SERVER_FILE), text).map_err(listen_err)?;
        let (tx, _) = broadcast::channel(BACKLOG);
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            journal: Mutex::new(Some(journal.share())),
            roles,
            plan: plan.to_string(),
            started,
            tx,
            state: Mutex::new(State::default()),
            stop,
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
            socket,
            accept,
        })
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
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_file(self.shared.dir.join(SERVER_FILE));
    }
}

/// `<session>/control.sock`, or (when that path is too long for a socket) one under
/// the runtime directory named after the session.
pub fn socket_path(dir: &Path) -> PathBuf {
    let inside = dir.join(SOCKET);
    if inside.as_os_str().len() <= SUN_PATH_MAX {
        return inside;
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(dir.as_os_str().as_encoded_bytes());
    let name: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
        .join(format!("faultline-{}", nix::unistd::getuid()));
    base.join(format!("{name}.sock"))
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
                tokio::spawn(serve_client(stream, shared.clone()));
            }
            Err(e) => {
                // Out of descriptors and the like: back off rather than spin.
                tracing::warn!("session server: accept: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

/// Writes one message as a line; false when the client is gone.
async fn write(out: &mut tokio::net::unix::OwnedWriteHalf, msg: &ServerMsg) -> bool {
    let Ok(mut line) = serde_json::to_vec(msg) else {
        return true;
    };
    line.push(b'\n');
    out.write_all(&line).await.is_ok()
}

async fn serve_client(stream: UnixStream, shared: Arc<Shared>) {
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
    let mut lines = BufReader::new(read).lines();
    let hello: Hello = match tokio::time::timeout(HELLO_WAIT, lines.next_line()).await {
        Ok(Ok(Some(line))) => match serde_json::from_str::<ClientMsg>(&line) {
            Ok(ClientMsg::Hello(hello)) => hello,
            _ => {
                let why = "the first line must be a hello".to_string();
                write(&mut out, &ServerMsg::Bye { why }).await;
                return;
            }
        },
        _ => return,
    };
    let Some(listed) = shared.roles.role_of(uid, &user) else {
        let why = format!(
            "{user} (uid {uid}) is not on this session's list ({})",
            shared.roles.describe()
        );
        shared.journal(Event::ParticipantRefused(event::ParticipantRefused {
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
        label: hello.label.clone().filter(|l| !l.trim().is_empty()),
        pid: cred.pid(),
    };
    // Subscribed before the replay is read, so nothing falls between the two.
    let mut live = shared.tx.subscribe();
    let status = shared.status();
    if !write(
        &mut out,
        &ServerMsg::Welcome {
            who: who.clone(),
            status,
        },
    )
    .await
    {
        return;
    }
    if hello.client == "status" {
        return;
    }
    let participant = Participant {
        who: who.clone(),
        client: hello.client.clone(),
    };
    let id = {
        let mut state = shared.state();
        state.next_client += 1;
        let id = state.next_client;
        state.participants.push((id, participant.clone()));
        id
    };
    shared.journal(Event::ParticipantJoined(participant.clone()));
    shared.participants_changed();
    session(&shared, &who, hello.after, &mut live, &mut lines, &mut out).await;
    shared.state().participants.retain(|(i, _)| *i != id);
    shared.journal(Event::ParticipantLeft(participant));
    shared.participants_changed();
}

/// Replay, the live marker, the pending questions, then live traffic both ways until
/// the client goes or the run ends.
async fn session(
    shared: &Shared,
    who: &Who,
    after: u64,
    live: &mut broadcast::Receiver<Arc<ServerMsg>>,
    lines: &mut tokio::io::Lines<BufReader<tokio::net::unix::OwnedReadHalf>>,
    out: &mut tokio::net::unix::OwnedWriteHalf,
) {
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
            line = lines.next_line() => {
                let Ok(Some(line)) = line else {
                    return;
                };
                let reply = match serde_json::from_str::<ClientMsg>(&line) {
                    Ok(ClientMsg::Answer { id, text }) => match shared.answer(who, &id, &text) {
                        Ok(()) => None,
                        Err(why) => Some(ServerMsg::Refused { id: Some(id), why }),
                    },
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
