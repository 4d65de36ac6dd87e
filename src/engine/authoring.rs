//! Author mode inside a run (method §2.5): after the preflight and before the first
//! scenario, the same authoring step as `faultline author` (same `author.<id>`
//! questions, confinement and staging), journaled in the session; the staged diff is
//! saved to `artifacts/author/staged.diff`; each complete candidate is built; and a
//! complete candidate faultline can run becomes its scenario's workload driver.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::request::Request;
use crate::author::build::{Recipe, recipe};
use crate::author::idiom::references;
use crate::author::{AuthorError, AuthorRequest, Authored};
use crate::exec::{self, CommandSpec, Outcome};
use crate::runspec::duration::Dur;
use crate::runspec::{Binding, Check};
use crate::session::event::{self, Event, millis};
use crate::session::journal::{Journal, JournalError, Scope};
use crate::session::operator::{Operator, Unanswered};

/// How long a build may take before it is stopped (and journaled as expired).
const BUILD_DEADLINE: Duration = Duration::from_secs(600);

/// Where the staged diff is saved, relative to the session directory.
pub const STAGED_DIFF: &str = "artifacts/author/staged.diff";

/// An authored test that drives its scenario in place of the run spec's workload.
#[derive(Debug, Clone)]
pub struct AuthoredDriver {
    /// The target, relative to the SUT root.
    pub file: String,
    pub build: String,
    pub run: String,
}

impl AuthoredDriver {
    /// `binding` with the authored test as its workload driver: its build becomes the
    /// first precondition (a failed build makes the scenario INCONCLUSIVE-env through
    /// the decision tree, naming it) and its run command replaces the workload command.
    /// Services, faults, landing, quiesce and the oracle stay the run spec's.
    pub fn drive(&self, binding: &Binding) -> Binding {
        let mut driven = binding.clone();
        // The name is also a log file name: the file's name, not its path.
        let name = Path::new(&self.file)
            .file_name()
            .map_or_else(|| self.file.clone(), |n| n.to_string_lossy().into_owned());
        driven.preconditions.insert(
            0,
            Check {
                name: format!("authored test {name} builds"),
                run: self.build.clone(),
                deadline: Some(Dur(BUILD_DEADLINE)),
                node: None,
            },
        );
        if let Some(workload) = driven.workload.as_mut() {
            workload.run = self.run.clone();
        }
        driven
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InRunError {
    #[error(transparent)]
    Unanswered(#[from] Unanswered),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("author mode interrupted by the operator")]
    Interrupted,
}

/// What the step needs of the session.
pub struct Ctx<'a> {
    pub req: &'a Request,
    pub session: &'a Path,
    pub cancel: CancellationToken,
}

fn scope(id: &str) -> Scope {
    Scope {
        scenario: Some(id.to_string()),
        arm: None,
    }
}

fn sha256_file(path: &Path) -> String {
    std::fs::read(path).map_or_else(|e| format!("unreadable: {e}"), crate::author::sha256_hex)
}

/// Authors, journals, stages, builds; returns the drivers by scenario id.
pub async fn run(
    ctx: &Ctx<'_>,
    journal: &mut Journal,
    operator: &mut dyn Operator,
) -> Result<BTreeMap<String, AuthoredDriver>, InRunError> {
    let req = ctx.req;
    journal.append(
        Scope::default(),
        Event::AuthorStarted(event::AuthorStarted {
            sut: req.sut_dir.display().to_string(),
            by: "--author or DIST_TEST_AUTHOR_MODE=1".into(),
        }),
    )?;
    let areq = AuthorRequest {
        plan_label: &req.plan_path,
        plan_text: &req.plan_text,
        plan: &req.plan,
        spec: &req.spec,
        sut: &req.sut_dir,
        only: req.only.as_deref(),
    };
    let results = match crate::author::author(&areq, operator).await {
        Ok(results) => results,
        Err(AuthorError::Unanswered(q)) => return Err(q.into()),
        Err(e @ AuthorError::Io { .. }) => {
            journal.append(
                Scope::default(),
                Event::AuthorFailed(event::AuthorFailed {
                    error: e.to_string(),
                    then: "the run spec's workloads run every scenario".into(),
                }),
            )?;
            return Ok(BTreeMap::new());
        }
    };
    let root = req.sut_dir.canonicalize().unwrap_or(req.sut_dir.clone());
    let relative = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();
    let mut written = Vec::new();
    for (id, result) in &results {
        match result {
            Authored::Written {
                path,
                missing,
                formatted,
                lang,
                ..
            } => {
                journal.append(
                    scope(id),
                    Event::AuthorWritten(event::AuthorWritten {
                        path: relative(path),
                        scenario: id.clone(),
                        sha256: sha256_file(path),
                        incomplete: !missing.is_empty(),
                        todo_kept: missing.iter().map(ToString::to_string).collect(),
                        language: lang.name().to_string(),
                        formatter: formatted.to_string(),
                    }),
                )?;
                written.push(path.clone());
            }
            Authored::Skipped(path) => {
                journal.append(
                    scope(id),
                    Event::AuthorSkipped(event::AuthorSkipped {
                        path: relative(path),
                        scenario: id.clone(),
                        reason: "the target exists and the operator kept it".into(),
                    }),
                )?;
            }
            Authored::Refused(why) => {
                journal.append(
                    scope(id),
                    Event::AuthorRefused(event::AuthorReason {
                        scenario: id.clone(),
                        reason: why.to_string(),
                    }),
                )?;
            }
            Authored::Ephemeral(why) => {
                journal.append(
                    scope(id),
                    Event::AuthorEphemeral(event::AuthorReason {
                        scenario: id.clone(),
                        reason: why.to_string(),
                    }),
                )?;
            }
        }
    }
    let scratch = ctx.session.join("artifacts/author");
    save_diff(ctx.session, &req.sut_dir, &written, journal)?;
    let scratch = std::fs::create_dir_all(&scratch)
        .and_then(|()| scratch.canonicalize())
        .unwrap_or(scratch);
    let mut drivers = BTreeMap::new();
    for (id, result) in &results {
        let Authored::Written {
            path,
            missing,
            lang,
            workload_code,
            ..
        } = result
        else {
            continue;
        };
        if !missing.is_empty() {
            journal.append(
                scope(id),
                Event::AuthorDriver(event::AuthorDriver {
                    scenario: id.clone(),
                    driver: false,
                    reason: Some(format!(
                        "the candidate is incomplete ({} TODO kept): it is never built or run \
                         as the driver; the run spec's workload runs {id}",
                        missing.join(", ")
                    )),
                    ..event::AuthorDriver::default()
                }),
            )?;
            continue;
        }
        let binding = req.spec.bindings.get(id).map(|(b, _)| b);
        let vars = binding
            .and_then(|b| b.workload.as_ref())
            .map(|w| references(&w.run))
            .unwrap_or_default();
        let recipe = recipe(lang, &root, path, &scratch, &vars);
        let built = build(ctx, id, &recipe, journal).await?;
        let file = relative(path);
        let has_arms = req
            .plan
            .scenarios
            .iter()
            .any(|s| s.id == *id && !s.arms.is_empty());
        let refusal = if has_arms {
            Some("the scenario runs per-surface arms, each with its own workload".to_string())
        } else if binding.and_then(|b| b.workload.as_ref()).is_none() {
            Some("the run spec binds no workload command for it".to_string())
        } else if !workload_code {
            Some(format!(
                "its workload region is comments only ({} targets, or a `${{…}}` the shell cannot read from the environment)",
                lang.name()
            ))
        } else {
            recipe.run.as_ref().err().cloned()
        };
        match (refusal, &recipe.build, &recipe.run) {
            (None, Ok(build), Ok(run)) => {
                journal.append(
                    scope(id),
                    Event::AuthorDriver(event::AuthorDriver {
                        scenario: id.clone(),
                        driver: true,
                        reason: None,
                        command: Some(run.clone()),
                        file: Some(file.clone()),
                        built,
                        replaces: binding
                            .and_then(|b| b.workload.as_ref())
                            .map(|w| w.run.clone()),
                    }),
                )?;
                drivers.insert(
                    id.clone(),
                    AuthoredDriver {
                        file,
                        build: build.clone(),
                        run: run.clone(),
                    },
                );
            }
            (refusal, build, _) => {
                let reason = refusal
                    .or_else(|| build.as_ref().err().cloned())
                    .unwrap_or_default();
                journal.append(
                    scope(id),
                    Event::AuthorDriver(event::AuthorDriver {
                        scenario: id.clone(),
                        driver: false,
                        reason: Some(format!(
                            "not run as the driver: {reason}; the run spec's workload runs {id}"
                        )),
                        ..event::AuthorDriver::default()
                    }),
                )?;
            }
        }
    }
    Ok(drivers)
}

/// Writes the staged diff of `written` into the session and journals where it is.
fn save_diff(
    session: &Path,
    sut: &Path,
    written: &[PathBuf],
    journal: &mut Journal,
) -> Result<(), InRunError> {
    let paths: Vec<&Path> = written.iter().map(PathBuf::as_path).collect();
    let diff = if paths.is_empty() {
        String::new()
    } else {
        crate::author::tools::staged_diff(sut, &paths)
    };
    let target = session.join(STAGED_DIFF);
    let saved = target
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&target, &diff));
    let note = if !written.is_empty() && diff.is_empty() {
        "nothing staged: the SUT is not a git work tree (or git add failed)"
    } else {
        "staged with git add, never committed"
    };
    journal.append(
        Scope::default(),
        Event::AuthorStaged(event::AuthorStaged {
            files: written.len(),
            diff: STAGED_DIFF.to_string(),
            bytes: diff.len(),
            saved: saved
                .as_ref()
                .map_or_else(|e| e.to_string(), |()| "yes".into()),
            note: note.to_string(),
        }),
    )?;
    Ok(())
}

/// Runs the recipe's build from the SUT root, output to `logs/author/`; journals the
/// command and its exit. `Some(true)` when it exited 0, `None` when none is known.
async fn build(
    ctx: &Ctx<'_>,
    id: &str,
    recipe: &Recipe,
    journal: &mut Journal,
) -> Result<Option<bool>, InRunError> {
    let command = match &recipe.build {
        Ok(command) => command,
        Err(why) => {
            journal.append(
                scope(id),
                Event::AuthorBuild(event::AuthorBuild {
                    scenario: id.to_string(),
                    reason: Some(why.to_string()),
                    ..event::AuthorBuild::default()
                }),
            )?;
            return Ok(None);
        }
    };
    let logs = ctx.session.join("logs/author");
    let name = format!("{}-build", crate::session::dir::file_stem_for_id(id));
    let spec = CommandSpec {
        name: name.clone(),
        command: command.clone(),
        cwd: ctx.req.sut_dir.clone(),
        env: Vec::new(),
    };
    let started = std::fs::create_dir_all(&logs)
        .map_err(|e| e.to_string())
        .and_then(|()| exec::spawn(&spec, &logs).map_err(|e| e.to_string()));
    let mut running = match started {
        Ok(running) => running,
        Err(error) => {
            journal.append(
                scope(id),
                Event::AuthorBuild(event::AuthorBuild {
                    scenario: id.to_string(),
                    command: Some(command.clone()),
                    error: Some(error),
                    ..event::AuthorBuild::default()
                }),
            )?;
            return Ok(Some(false));
        }
    };
    journal.append(
        scope(id),
        Event::AuthorBuildStarted(event::AuthorBuildStarted {
            scenario: id.to_string(),
            command: command.clone(),
            log: running.stderr_log.display().to_string(),
        }),
    )?;
    let outcome = tokio::select! {
        out = running.wait(BUILD_DEADLINE) => out.map_err(|e| e.to_string()),
        () = ctx.cancel.cancelled() => {
            let _ = running.terminate().await;
            return Err(InRunError::Interrupted);
        }
    };
    let exit_code = match outcome {
        Ok(Outcome::Exited(code)) => Some(code),
        _ => None,
    };
    journal.append(
        scope(id),
        Event::AuthorBuild(event::AuthorBuild {
            scenario: id.to_string(),
            command: Some(command.clone()),
            exit_code,
            outcome: Some(
                outcome
                    .as_ref()
                    .map_or_else(Clone::clone, |o| format!("{o:?}")),
            ),
            elapsed_ms: Some(millis(running.started.elapsed())),
            log: Some(running.stderr_log.display().to_string()),
            ..event::AuthorBuild::default()
        }),
    )?;
    Ok(Some(exit_code == Some(0)))
}
