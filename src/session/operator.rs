//! The `Operator` seam: every decision the engine cannot make alone is a [`Question`]
//! with a stable id. The TUI answers interactively; [`Scripted`] answers headless runs
//! from `--yes` and an answers file (YAML keyed by question id).

use std::collections::BTreeMap;

use tokio::sync::oneshot;

/// The FAIL classification `--yes` gives (method §2.7).
pub const UNKNOWN_BLAME: &str = "unknown — pending re-run on alternative harness/host";

/// What kind of decision a question asks for; decides what `--yes` may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuestionKind {
    /// Confirm a capability as the probes found it (or what to do while it is missing).
    #[default]
    ConfirmCapability,
    /// Classify a FAIL: blame class, bug type, tags, severity.
    ClassifyFailure,
    /// Approve a change to the machine (install, system setting). Never by `--yes`.
    ApproveChange,
    /// Approve the privileged fault actions of one scenario (iptables rules, tmpfs
    /// mounts, container actions), transient and healed. Never by `--yes`.
    ApprovePrivileged,
    /// Several lines of prose (a FAIL's hypothesised root cause, its next action).
    Describe,
    /// What to do with an existing file author mode would write.
    Overwrite,
    /// Re-run or keep a scenario a crash interrupted (`faultline resume`).
    Resume,
    /// Stop the running session (asked by the UI, never by the engine).
    Quit,
    /// Take back a `wait` for a missing capability: stop re-probing and be asked
    /// again. Open while the wait lasts, for an attached operator only: neither an
    /// answers file nor `--yes` answers it.
    StopWaiting,
}

/// One answer a question accepts.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Choice {
    /// What is sent (and journaled), e.g. `approve`.
    pub value: String,
    /// What choosing it does, shown beside it.
    pub meaning: String,
    /// Other spellings taken for it (`no` for `don't have`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// The choice carries text after its value (`substitute <with what>`,
    /// `edit: <command>`); this names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_text: Option<String>,
}

impl Choice {
    pub fn new(value: &str, meaning: &str) -> Choice {
        Choice {
            value: value.to_string(),
            meaning: meaning.to_string(),
            ..Choice::default()
        }
    }

    /// Also taken when spelled `alias`.
    pub fn alias(mut self, alias: &str) -> Choice {
        self.aliases.push(alias.to_string());
        self
    }

    /// Takes text after its value, named `what`.
    pub fn with_text(mut self, what: &str) -> Choice {
        self.with_text = Some(what.to_string());
        self
    }

    /// How the choice is written in a list: `substitute <with what>`.
    pub fn label(&self) -> String {
        match &self.with_text {
            Some(what) => format!("{} {what}", self.value),
            None => self.value.clone(),
        }
    }
}

/// Which text a question takes besides its choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FreeText {
    /// Only the choices.
    #[default]
    None,
    /// One line of anything.
    Line,
    /// Several lines of prose.
    Lines,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Question {
    /// Stable id, e.g. `S3.classify` or `install.libfaketime`; keys the answers file.
    pub id: String,
    pub kind: QuestionKind,
    pub prompt: String,
    /// The answers it accepts; with [`FreeText::None`], nothing else is taken.
    pub choices: Vec<Choice>,
    pub free_text: FreeText,
    /// What `--yes` (and an empty answer) gives; always one of the accepted answers.
    pub default: String,
    /// Text the operator may edit and send back as `edit: <text>` (an install command).
    pub editable: Option<String>,
    /// Shown beside the prompt to help answer it (each blame class's tells).
    pub hints: Vec<String>,
    /// Why the last answer was refused, when this is asked again.
    pub error: Option<String>,
}

impl Question {
    /// The answers allowed, as a person reads them: `approve, decline`.
    pub fn allowed(&self) -> String {
        let mut out: Vec<String> = self.choices.iter().map(Choice::label).collect();
        match self.free_text {
            FreeText::None => {}
            FreeText::Line => out.push("any one line".into()),
            FreeText::Lines => out.push("any text".into()),
        }
        out.join(", ")
    }

    /// `raw` as the answer it is (the choice's own spelling), or why it is none. An
    /// empty answer is the default.
    pub fn check(&self, raw: &str) -> Result<String, String> {
        let text = raw.trim();
        if text.is_empty() {
            return Ok(self.default.clone());
        }
        let lower = text.to_lowercase();
        for choice in &self.choices {
            let named = std::iter::once(&choice.value).chain(&choice.aliases);
            if named.clone().any(|n| n.to_lowercase() == lower) && choice.with_text.is_none() {
                return Ok(choice.value.clone());
            }
            if let Some(what) = &choice.with_text
                && let Some(rest) = lower.strip_prefix(&choice.value.to_lowercase())
            {
                let rest = rest.trim_start_matches(':').trim();
                return if rest.is_empty() {
                    Err(format!("`{}` needs {what} after it", choice.value))
                } else {
                    Ok(text.to_string())
                };
            }
        }
        match self.free_text {
            FreeText::Line if !text.contains('\n') => Ok(text.to_string()),
            FreeText::Lines => Ok(raw.trim_end().to_string()),
            _ => Err(format!(
                "`{}` is not an answer to {}; allowed: {}",
                crate::sanitize::line(text),
                self.id,
                self.allowed()
            )),
        }
    }
}

/// Choices for approving something: approve / decline.
pub fn approve_decline(what: &str) -> Vec<Choice> {
    vec![
        Choice::new(
            "approve",
            &format!("{what} goes ahead, journaled with who approved"),
        ),
        Choice::new("decline", "nothing is changed").alias("no"),
    ]
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
    /// The attached operator, when one answered (their uid, user name and role).
    pub who: Option<crate::session::event::Who>,
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

/// Asks and waits for an answer the question accepts: one it does not is refused and
/// the question asked again with why. An operator that went away (closed channel)
/// leaves it unanswered.
pub async fn answer(
    operator: &mut dyn Operator,
    question: &Question,
) -> Result<Answer, Unanswered> {
    let mut asking = question.clone();
    loop {
        let given = match operator.ask(&asking).await {
            Ok(answer) => answer?,
            Err(_) => {
                return Err(Unanswered {
                    id: question.id.clone(),
                    prompt: question.prompt.clone(),
                    hint: " (the operator went away)".into(),
                });
            }
        };
        match question.check(&given.text) {
            Ok(text) => {
                return Ok(Answer { text, ..given });
            }
            Err(why) => asking.error = Some(why),
        }
    }
}

/// An answers file's entry a question does not take: file, line, question, allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: answers file: `{id}`: {why}")]
pub struct BadAnswer {
    pub file: String,
    pub line: u64,
    pub id: String,
    pub why: String,
}

/// Checks every answer in `answers` whose question is among `known` (before anything
/// starts); `lines` gives each id's line in the file.
pub fn check_answers(
    file: &str,
    answers: &BTreeMap<String, String>,
    lines: &BTreeMap<String, u64>,
    known: &[Question],
) -> Vec<BadAnswer> {
    answers
        .iter()
        .filter_map(|(id, text)| {
            let question = known.iter().find(|q| q.id == *id)?;
            let why = question.check(text).err()?;
            Some(BadAnswer {
                file: file.to_string(),
                line: lines.get(id).copied().unwrap_or(0),
                id: id.clone(),
                why,
            })
        })
        .collect()
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
    /// The line of each answer in its file (for errors).
    pub answer_lines: BTreeMap<String, u64>,
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
    Ok(parse_answers_at(file, text)?
        .into_iter()
        .map(|(id, (answer, _))| (id, answer))
        .collect())
}

/// [`parse_answers`], with the line each answer is on.
pub fn parse_answers_at(
    file: &str,
    text: &str,
) -> Result<BTreeMap<String, (String, u64)>, AnswersError> {
    let parsed = serde_saphyr::from_str::<BTreeMap<String, serde_saphyr::Spanned<String>>>(text)
        .map_err(|err| {
            let (line, column, message) = crate::runspec::load::yaml_message(&err);
            AnswersError {
                file: file.to_string(),
                line,
                column,
                message,
            }
        })?;
    Ok(parsed
        .into_iter()
        .map(|(id, answer)| {
            let line = answer.referenced.line();
            (id, (answer.value, line))
        })
        .collect())
}

impl Scripted {
    fn decide(&self, question: &Question) -> Result<Answer, Unanswered> {
        if question.kind == QuestionKind::StopWaiting {
            return Err(Unanswered {
                id: question.id.clone(),
                prompt: question.prompt.clone(),
                hint: " (only an attached operator takes a wait back)".into(),
            });
        }
        if let Some(text) = self.answers.get(&question.id) {
            // Checked here as well as before the run: an answer never reaches the
            // engine unless the question accepts it.
            return match question.check(text) {
                Ok(text) => Ok(Answer {
                    text,
                    by: self.source.clone(),
                    who: None,
                }),
                Err(why) => Err(Unanswered {
                    id: question.id.clone(),
                    prompt: question.prompt.clone(),
                    hint: format!(" ({} gives an answer it does not take: {why})", self.source),
                }),
            };
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
                who: None,
            });
        }
        if self.yes && approval {
            // --yes keeps the run going but never changes the machine.
            return Ok(Answer {
                text: "decline".to_string(),
                by: format!("--yes (never approves {what})"),
                who: None,
            });
        }
        if self.yes {
            return Ok(Answer {
                text: question.default.clone(),
                by: "--yes".to_string(),
                who: None,
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
            answer_lines: BTreeMap::new(),
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

/// The journal record of `answer`, given to `question`.
pub fn answered(question: &Question, answer: &Answer) -> super::event::Event {
    super::event::Event::OperatorAnswer(super::event::OperatorAnswer {
        question: question.id.clone(),
        prompt: Some(question.prompt.clone()),
        answer: answer.text.clone(),
        by: answer.by.clone(),
        who: answer.who.clone(),
    })
}
