//! The attach protocol: JSON lines over the session's Unix socket.
//!
//! A client says `hello` with the last seq it has; the server answers `welcome`
//! (who the kernel says the client is, and its role), replays the journal from there,
//! marks `live`, then sends every new record, every question asked, answered or
//! withdrawn, and `ended` when the run is over. A client may `answer` a question
//! (the first valid answer wins; a later one is told who won), leave a `note` on the
//! run (journaled, so every client sees it as a record) or ask to `stop`.
//!
//! Both ends name the protocol they speak, [`PROTOCOL_VERSION`], in `hello` and in
//! `welcome` (tmux's model: bumped on any change to these messages). A server and a
//! client of different versions do not talk: the server answers `bye` naming both
//! versions, and a client that is welcomed in another version lets go, saying the
//! same. A hello with no version (a faultline from before versions) is refused
//! likewise. Either end reads a line of at most a fixed length (the server
//! [`super::server::MAX_LINE`], the client [`super::client::MAX_LINE`]) and cuts
//! the connection at a longer one.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::event::{Participant, Who};
use super::journal::Record;
use crate::session::operator::Question;

/// The version of the messages below. Bump it on any change to them (a field added,
/// renamed or read differently): a client and a server of different versions refuse
/// each other plainly instead of misreading each other. (2: a client's `note`.)
pub const PROTOCOL_VERSION: u32 = 2;

/// What a server or client says to the other end speaking protocol `theirs` (0: no
/// version, a faultline from before versions), naming both versions and what to do;
/// `binary` is the session server's executable, when this end knows it.
pub fn version_mismatch(me: &str, them: &str, theirs: u64, binary: Option<&Path>) -> String {
    let theirs = if theirs == 0 {
        "no attach protocol version (a faultline from before versions)".to_string()
    } else {
        format!("attach protocol version {theirs}")
    };
    let binary = binary.map_or_else(String::new, |b| format!(" ({})", b.display()));
    format!(
        "the {them} speaks {theirs}; this {me} speaks version {PROTOCOL_VERSION} \
         (faultline {}): attach with the same faultline binary that runs the session{binary}",
        env!("CARGO_PKG_VERSION")
    )
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ClientMsg {
    Hello(Hello),
    Answer {
        id: String,
        text: String,
    },
    /// Leave a note on the run (owner and approvers only): journaled as
    /// `operator-note` with who wrote it, at most
    /// [`NOTE_MAX_BYTES`](super::event::NOTE_MAX_BYTES) bytes of text (a longer one
    /// is refused, not cut), line breaks kept.
    Note {
        text: String,
    },
    /// Stop the run: heal, write the documents, end (owner and approvers only).
    Stop,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Hello {
    /// The client's [`PROTOCOL_VERSION`] (0 when it sent none: refused).
    #[serde(default)]
    pub protocol: u32,
    /// The last seq the client already has (0: everything).
    pub after: u64,
    /// `--as NAME`, asserted by the client (an SSH key's forced command).
    pub label: Option<String>,
    /// `--role viewer`: never answer, whatever the list allows.
    pub viewer: bool,
    /// `tui`, `json`, `stop` or `status` (a status query is not journaled as a join).
    pub client: String,
}

/// What a session is doing, for `faultline sessions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Status {
    pub session: String,
    pub plan: String,
    pub started: String,
    pub owner: String,
    /// `running`, `waiting for an answer`, `stopping`, `ended`.
    pub state: String,
    pub pending: Vec<String>,
    pub participants: Vec<Participant>,
    /// Connections refused so far (over a cap, not on the list, another protocol
    /// version).
    pub refused: u64,
}

/// How the run ended, as the engine reported it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Ending {
    pub session: String,
    pub verdict: Option<crate::verdict::SessionVerdict>,
    /// The exit code `faultline run` gives this ending.
    pub exit: i32,
    pub report: Option<String>,
    /// Why the report could not be written, when it could not.
    pub unwritten: Option<String>,
    /// A question nobody answered that stopped the run.
    pub unanswered: Option<String>,
    /// Lines the engine had for the operator (healing on an error, a full disk).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum ServerMsg {
    Welcome {
        /// The server's [`PROTOCOL_VERSION`] (0 when it sent none).
        #[serde(default)]
        protocol: u32,
        who: Who,
        status: Status,
        /// The plan as the run read it (so a client need not read the session
        /// directory); empty for a status query.
        #[serde(default)]
        plan_text: String,
    },
    /// A journal record (replayed or live), in the journal's own line shape.
    Record {
        record: Record,
    },
    /// Everything before this was replay; what follows happens now.
    Live {
        seq: u64,
    },
    Question {
        question: Question,
    },
    Answered {
        id: String,
        answer: String,
        by: String,
    },
    Withdrawn {
        id: String,
        why: String,
    },
    /// This client's answer (or note, or stop) was not taken, and why (`id`: the
    /// question's, for an answer).
    Refused {
        id: Option<String>,
        why: String,
    },
    /// Someone attached (the list itself came with `welcome`).
    Joined {
        participant: Participant,
    },
    /// Someone left.
    Left {
        participant: Participant,
    },
    Ended {
        ending: Ending,
    },
    /// The server closes this connection (not on the list, a bad hello, another
    /// protocol version); a client that cuts a line over its limit ends its link
    /// with one of its own.
    Bye {
        why: String,
    },
}
