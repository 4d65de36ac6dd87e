//! The `Operator` seam: every decision the engine cannot make alone is a [`Question`]
//! with a stable id. The TUI answers interactively; [`Scripted`] answers headless runs
//! from `--yes` and an answers file (YAML keyed by question id).

use std::collections::BTreeMap;

use tokio::sync::oneshot;

/// The FAIL classification `--yes` gives (method §2.7).
pub const UNKNOWN_BLAME: &str = "unknown — pending re-run on alternative harness/host";

/// What kind of decision a question asks for; decides what `--yes` may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QuestionKind {
    /// Confirm a capability as the probes found it.
    #[default]
    ConfirmCapability,
    /// Classify a FAIL: blame class and bug type.
    ClassifyFailure,
    /// Approve a change to the machine (install, system setting). Never by `--yes`.
    ApproveChange,
    /// Approve the privileged fault actions of one scenario (iptables rules, tmpfs
    /// mounts, container actions), transient and healed. Never by `--yes`.
    ApprovePrivileged,
    /// Several lines of prose (a FAIL's hypothesised root cause, its next action).
    Describe,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Question {
    /// Stable id, e.g. `S3.classify` or `install.libfaketime`; keys the answers file.
    pub id: String,
    pub kind: QuestionKind,
    pub prompt: String,
    /// What `--yes` answers, when its policy allows an answer at all.
    pub default: String,
    /// Text the operator may edit and send back as `edit: <text>` (an install command).
    pub editable: Option<String>,
    /// Shown beside the prompt to help answer it (each blame class's tells).
    pub hints: Vec<String>,
}

/// The answer that sends back an edited [`Question::editable`]: `edit: <text>`.
pub fn edited(answer: &str) -> Option<&str> {
    let rest = answer.trim_start().strip_prefix("edit")?;
    let rest = rest.strip_prefix(':').unwrap_or(rest).trim();
    (!rest.is_empty()).then_some(rest)
}

/// An answer and who gave it (journaled with the question).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    pub by: String,
}

/// A question a headless run could not answer: the run stops and names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("question `{id}` needs an answer ({prompt}); give it in the answers file{hint}")]
pub struct Unanswered {
    pub id: String,
    pub prompt: String,
    pub hint: String,
}

pub trait Operator: Send {
    /// Asks `question`; the answer arrives on the returned channel, so an interactive
    /// operator can take its time without blocking the engine.
    fn ask(&mut self, question: &Question) -> oneshot::Receiver<Result<Answer, Unanswered>>;
}

/// Asks and waits; an operator that went away (closed channel) leaves it unanswered.
pub async fn answer(
    operator: &mut dyn Operator,
    question: &Question,
) -> Result<Answer, Unanswered> {
    match operator.ask(question).await {
        Ok(answer) => answer,
        Err(_) => Err(Unanswered {
            id: question.id.clone(),
            prompt: question.prompt.clone(),
            hint: " (the operator went away)".into(),
        }),
    }
}

/// Headless operator: the answers file first, then the `--yes` policy.
#[derive(Debug, Default)]
pub struct Scripted {
    pub yes: bool,
    /// `--approve-installs`: approves the low-blast-radius installs faultline offers.
    pub approve_installs: bool,
    /// `--approve-privileged`: approves the privileged fault actions the run spec binds.
    pub approve_privileged: bool,
    pub answers: BTreeMap<String, String>,
    /// Where the answers came from, for the journal (`answers file x.yaml`, `--yes`).
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: answers file: {message}")]
pub struct AnswersError {
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub message: String,
}

/// Parses an answers file: a YAML mapping from question id to answer text.
pub fn parse_answers(file: &str, text: &str) -> Result<BTreeMap<String, String>, AnswersError> {
    serde_saphyr::from_str::<BTreeMap<String, String>>(text).map_err(|err| {
        let (line, column, message) = crate::runspec::load::yaml_message(&err);
        AnswersError {
            file: file.to_string(),
            line,
            column,
            message,
        }
    })
}

impl Scripted {
    fn decide(&self, question: &Question) -> Result<Answer, Unanswered> {
        if let Some(text) = self.answers.get(&question.id) {
            return Ok(Answer {
                text: text.clone(),
                by: self.source.clone(),
            });
        }
        let approval = matches!(
            question.kind,
            QuestionKind::ApproveChange | QuestionKind::ApprovePrivileged
        );
        let flag = match question.kind {
            QuestionKind::ApprovePrivileged => self.approve_privileged,
            _ => self.approve_installs,
        };
        let (flag_name, what) = match question.kind {
            QuestionKind::ApprovePrivileged => ("--approve-privileged", "a privileged action"),
            _ => ("--approve-installs", "a change to the machine"),
        };
        if approval && flag {
            return Ok(Answer {
                text: "approve".to_string(),
                by: flag_name.to_string(),
            });
        }
        if self.yes && approval {
            // --yes keeps the run going but never changes the machine.
            return Ok(Answer {
                text: "decline".to_string(),
                by: format!("--yes (never approves {what})"),
            });
        }
        if self.yes {
            return Ok(Answer {
                text: question.default.clone(),
                by: "--yes".to_string(),
            });
        }
        let hint = if approval {
            format!(" or pass {flag_name}: --yes never approves {what}")
        } else {
            " or pass --yes".to_string()
        };
        Err(Unanswered {
            id: question.id.clone(),
            prompt: question.prompt.clone(),
            hint,
        })
    }
}

impl Operator for Scripted {
    fn ask(&mut self, question: &Question) -> oneshot::Receiver<Result<Answer, Unanswered>> {
        let (tx, rx) = oneshot::channel();
        // The receiver is returned below, so it is alive and the send cannot fail.
        let _ = tx.send(self.decide(question));
        rx
    }
}

/// Who is at the keyboard: `user@host on tty`, journaled with every interactive answer.
pub fn identity() -> String {
    let user = nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".to_string());
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "unknown-host".to_string());
    let tty = nix::unistd::ttyname(std::io::stdin())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "no tty".to_string());
    format!("{user}@{host} on {tty}")
}

/// A question in flight to an interactive operator, with where its answer goes.
pub struct Asked {
    pub question: Question,
    pub reply: oneshot::Sender<Result<Answer, Unanswered>>,
}

/// The operator behind a UI: questions go out on a channel, answers come back on
/// each question's own reply channel; the engine never waits on the UI's drawing.
pub struct Channel {
    pub tx: tokio::sync::mpsc::UnboundedSender<Asked>,
}

impl Operator for Channel {
    fn ask(&mut self, question: &Question) -> oneshot::Receiver<Result<Answer, Unanswered>> {
        let (reply, rx) = oneshot::channel();
        // If the UI is gone the reply sender is dropped with the message, and the
        // engine sees the closed channel as "the operator went away".
        let _ = self.tx.send(Asked {
            question: question.clone(),
            reply,
        });
        rx
    }
}

/// An answers file (and `--approve-installs`) in front of an interactive operator:
/// what the file answers is answered at once, everything else goes to the UI.
pub struct Layered<O: Operator> {
    pub scripted: Scripted,
    pub interactive: O,
}

impl<O: Operator> Operator for Layered<O> {
    fn ask(&mut self, question: &Question) -> oneshot::Receiver<Result<Answer, Unanswered>> {
        let scripted_only = Scripted {
            yes: false,
            approve_installs: self.scripted.approve_installs,
            approve_privileged: self.scripted.approve_privileged,
            answers: self.scripted.answers.clone(),
            source: self.scripted.source.clone(),
        };
        match scripted_only.decide(question) {
            Ok(answer) => {
                let (tx, rx) = oneshot::channel();
                let _ = tx.send(Ok(answer));
                rx
            }
            Err(_) => self.interactive.ask(question),
        }
    }
}
