//! What a session keeps about itself so it can be picked up after faultline was killed
//! (`faultline resume SESSION`) and its documents rebuilt (`faultline report SESSION`):
//! the plan and run-spec texts as read and the request, beside the journal (whose
//! outcome records the reducer folds into the outcome last published).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::outcome::SessionOutcome;
use crate::verdict::Tier;

/// Where the inputs live inside a session directory.
const INPUT_DIR: &str = "input";

/// A plan and its run-spec text, with the names to report them under.
pub struct PlanInput {
    pub plan_label: PathBuf,
    pub plan_text: String,
    pub spec: Option<(String, String)>,
}

/// The request as started, minus what is re-read from the saved texts.
#[derive(Debug, Serialize, Deserialize)]
pub struct SavedRequest {
    pub plan_label: PathBuf,
    pub spec_label: Option<String>,
    pub sut_dir: PathBuf,
    pub tier: Tier,
    pub only: Option<Vec<String>>,
    pub report_path: Option<PathBuf>,
    pub vars: BTreeMap<String, String>,
    pub rerun_command: String,
    #[serde(default)]
    pub reduce_runs: u32,
    #[serde(default)]
    pub reduce_time_ms: u64,
}

/// Everything a session needs to be picked up again.
pub struct Saved {
    pub input: PlanInput,
    pub request: SavedRequest,
    /// The outcome the journal's records add up to (`None`: none journaled yet).
    pub outcome: Option<SessionOutcome>,
    /// Answers the journal holds, by question id — except machine changes, which
    /// need a fresh approval.
    pub answers: BTreeMap<String, String>,
}

/// Where `save_inputs` keeps the plan text of the session in `session`: what the
/// session server sends an attaching client and a reproducer copies (neither holds
/// the text while the run goes).
pub fn plan_file(session: &Path) -> PathBuf {
    session.join(INPUT_DIR).join("plan.md")
}

/// Writes the plan text, the run-spec text (when the run has a sidecar) and the
/// request into `<session>/input/`.
pub fn save_inputs(
    session: &Path,
    plan_text: &str,
    spec: Option<&str>,
    saved: &SavedRequest,
) -> std::io::Result<()> {
    let dir = session.join(INPUT_DIR);
    std::fs::create_dir_all(&dir)?;
    crate::atomic::write(&plan_file(session), plan_text.as_bytes())?;
    if let Some(text) = spec {
        crate::atomic::write(&dir.join("plan.run.yaml"), text.as_bytes())?;
    }
    let json = serde_json::to_vec_pretty(saved).map_err(std::io::Error::other)?;
    crate::atomic::write(&dir.join("request.json"), &json)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads what `save_inputs` and the engine left in `session`.
pub fn load(session: &Path) -> Result<Saved, String> {
    let dir = session.join(INPUT_DIR);
    let request_path = dir.join("request.json");
    let request: SavedRequest = serde_json::from_str(&read(&request_path)?)
        .map_err(|e| format!("{}: {e}", request_path.display()))?;
    let plan_text = read(&plan_file(session))?;
    let spec = match &request.spec_label {
        Some(label) => Some((label.clone(), read(&dir.join("plan.run.yaml"))?)),
        None => None,
    };
    let journal =
        crate::session::journal::read(&session.join("journal.jsonl")).map_err(|e| e.to_string())?;
    let view = crate::session::view::View::of(&journal.records);
    let outcome = view.outcome();
    let answers = view
        .answers
        .into_iter()
        // Approvals are asked again: whoever resumes approves for themselves.
        .filter(|(id, _)| !(id.starts_with("install.") || id.starts_with("privileged.")))
        .map(|(id, answer)| (id, answer.answer))
        .collect();
    Ok(Saved {
        input: PlanInput {
            plan_label: request.plan_label.clone(),
            plan_text,
            spec,
        },
        request,
        outcome,
        answers,
    })
}
