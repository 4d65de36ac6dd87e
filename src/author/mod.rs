//! Author mode (method §2.5): each scenario's skeleton written to its declared target
//! test file in the SUT repository, with a provenance header, the TODO regions filled
//! from its run-spec binding, the SUT's formatter run over it, and the files staged
//! with git — never committed. Opt-in only; nothing is written outside declared
//! targets, and an existing file is never overwritten without the operator saying so.

pub mod build;
pub mod comment;
pub mod confine;
pub mod fill;
pub mod idiom;
pub mod tools;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::plan::{Plan, Scenario};
use crate::runspec::RunSpec;
use crate::session::operator::{Choice, Operator, Question, QuestionKind, Unanswered, answer};

/// What author mode is asked to do.
pub struct AuthorRequest<'a> {
    /// The plan file as given (for the provenance header).
    pub plan_label: &'a Path,
    /// The plan's bytes as read (their sha-256 goes into the header).
    pub plan_text: &'a str,
    pub plan: &'a Plan,
    pub spec: &'a RunSpec,
    /// The SUT repository root: every target is relative to it.
    pub sut: &'a Path,
    pub only: Option<&'a [String]>,
}

/// What happened to one scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authored {
    /// Written (and staged when the SUT is a git repository).
    Written {
        path: PathBuf,
        /// Regions whose TODO stays: the file is a candidate, incomplete.
        missing: Vec<&'static str>,
        /// What the formatter did, or that there was none.
        formatted: String,
        /// The nearest existing test beside it, for the reviewer to compare idioms.
        sibling: Option<PathBuf>,
        lang: idiom::Lang,
        /// Its workload region runs the bound workload command as code.
        workload_code: bool,
    },
    /// The target exists and the operator chose to leave it.
    Skipped(PathBuf),
    /// Nothing written, and why.
    Refused(String),
    /// No target or no skeleton: the run uses the ephemeral harness for it.
    Ephemeral(String),
}

#[derive(Debug, thiserror::Error)]
pub enum AuthorError {
    #[error(transparent)]
    Unanswered(#[from] Unanswered),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The first backticked path of a `Target test file` field, else its first word.
fn declared_target(field: &str) -> String {
    let mut parts = field.split('`');
    match (parts.next(), parts.next()) {
        (Some(_), Some(quoted)) if !quoted.trim().is_empty() => quoted.trim().to_string(),
        _ => field
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string(),
    }
}

/// `dir/name.new.ext` beside `path` (`name.new` without an extension).
pub fn sibling_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = match path.extension() {
        Some(ext) => format!("{stem}.new.{}", ext.to_string_lossy()),
        None => format!("{stem}.new"),
    };
    path.with_file_name(name)
}

/// Lower-case hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: impl AsRef<[u8]>) -> String {
    Sha256::digest(bytes.as_ref())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The provenance header, one comment line each.
fn header(req: &AuthorRequest<'_>, scenario: &Scenario, comment: &str, missing: &[&str]) -> String {
    let state = if missing.is_empty() {
        "candidate — review before committing".to_string()
    } else {
        format!(
            "candidate — incomplete: no run-spec binding for {} (TODO kept); never run as a PASS",
            missing.join(", ")
        )
    };
    format!(
        "{comment} Provenance: written by faultline author mode from {}, scenario {}\n\
         {comment} plan sha-256 at generation: {}\n{comment} {state}\n",
        req.plan_label.display(),
        scenario.id,
        sha256_hex(req.plan_text),
    )
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> AuthorError + '_ {
    move |source| AuthorError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What the operator is asked when `declared` (at `path`) exists already.
fn overwrite_question(id: &str, declared: &str, path: &Path) -> Question {
    Question {
        id: format!("author.{id}"),
        kind: QuestionKind::Overwrite,
        prompt: format!(
            "{declared} exists ({} bytes): overwrite / skip / sibling (write {})",
            std::fs::metadata(path).map_or(0, |m| m.len()),
            sibling_path(Path::new(declared)).display()
        ),
        choices: vec![
            Choice::new("overwrite", "replace it with the skeleton"),
            Choice::new("skip", "keep it as it is"),
            Choice::new("sibling", "write the skeleton beside it"),
        ],
        default: "skip".into(),
        ..Question::default()
    }
}

/// The `author.<id>` questions authoring `plan` in `sut` would ask now (targets that
/// exist already), for `--answers-template`.
pub fn questions(plan: &Plan, sut: &Path, only: Option<&[String]>) -> Vec<Question> {
    plan.scenarios
        .iter()
        .filter(|s| only.is_none_or(|only| only.contains(&s.id)))
        .filter(|s| s.skeleton.is_some())
        .filter_map(|s| {
            let declared = declared_target(&s.target_test_file.as_ref()?.text);
            let path = confine::confine(sut, &declared).ok()?;
            path.exists()
                .then(|| overwrite_question(&s.id, &declared, &path))
        })
        .collect()
}

/// Authors every scenario (or those in `only`), asking about existing targets.
pub async fn author(
    req: &AuthorRequest<'_>,
    operator: &mut dyn Operator,
) -> Result<Vec<(String, Authored)>, AuthorError> {
    let mut results = Vec::new();
    for scenario in &req.plan.scenarios {
        if req.only.is_some_and(|only| !only.contains(&scenario.id)) {
            continue;
        }
        let result = one(req, scenario, operator).await?;
        results.push((scenario.id.clone(), result));
    }
    let written: Vec<&Path> = results
        .iter()
        .filter_map(|(_, r)| match r {
            Authored::Written { path, .. } => Some(path.as_path()),
            _ => None,
        })
        .collect();
    tools::stage(req.sut, &written);
    Ok(results)
}

async fn one(
    req: &AuthorRequest<'_>,
    scenario: &Scenario,
    operator: &mut dyn Operator,
) -> Result<Authored, AuthorError> {
    let (Some(target), Some(skeleton)) = (&scenario.target_test_file, &scenario.skeleton) else {
        return Ok(Authored::Ephemeral(
            "no `Target test file` or no `Skeleton`: the ephemeral harness runs it".into(),
        ));
    };
    let marked = skeleton
        .text
        .lines()
        .take(5)
        .any(|l| l.contains("AUTO-GENERATED"));
    if !marked {
        return Ok(Authored::Refused(format!(
            "plan line {}: the skeleton's header does not say AUTO-GENERATED",
            skeleton.line
        )));
    }
    let declared = declared_target(&target.text);
    let mut path = match confine::confine(req.sut, &declared) {
        Ok(path) => path,
        Err(why) => {
            return Ok(Authored::Refused(format!(
                "plan line {}: {why}",
                target.line
            )));
        }
    };
    if path.exists() {
        let question = overwrite_question(&scenario.id, &declared, &path);
        let said = answer(operator, &question).await?;
        match said.text.trim().to_ascii_lowercase().as_str() {
            "overwrite" => {}
            "sibling" => {
                path = sibling_path(&path);
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Ok(Authored::Refused(format!(
                        "{} is a symlink; author mode writes only regular files",
                        path.display()
                    )));
                }
            }
            _ => return Ok(Authored::Skipped(path)),
        }
    }
    let language = scenario
        .skeleton_language
        .as_ref()
        .map(|l| l.text.clone())
        .or_else(|| path.extension().map(|e| e.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let comment = comment::prefix(&language);
    let binding = req.spec.bindings.get(&scenario.id).map(|(b, _)| b);
    let lang = idiom::Lang::of(&language);
    // `confine` made `path` absolute under the canonical root.
    let root = req.sut.canonicalize().map_err(io(req.sut))?;
    let idiom = idiom::idiom(&lang, &root, &path);
    let filled = fill::fill(&skeleton.text, binding, comment, &idiom);
    let text = header(req, scenario, comment, &filled.missing) + &filled.text;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    std::fs::write(&path, text).map_err(io(&path))?;
    Ok(Authored::Written {
        formatted: tools::format(&path),
        sibling: tools::nearest_sibling(&path),
        missing: filled.missing,
        lang,
        workload_code: filled.workload_code,
        path,
    })
}
