//! `faultline check`: run one built-in checker on a history file.

use super::checker::CheckerReport;
use super::final_state::{Dump, parse_dump};
use super::format::{Format, read_history};
use super::params::Params;
use super::registry::{self, Inputs, Needs};
use crate::exit::Exit;
use crate::verdict::CheckerRun;
use clap::builder::PossibleValuesParser;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Check a recorded history with a built-in checker.
///
/// Exits 0 when the history is valid, 1 when the checker found anomalies, 3 when
/// it cannot tell (a field the checker needs is absent, its time / memory budget
/// ran out, or it does not match --model / --claim), 64 on bad usage, 66 when an
/// input cannot be read or parsed.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The checker.
    #[arg(long, value_parser = PossibleValuesParser::new(registry::names()))]
    pub checker: String,
    /// History format (default: `edn` for a `.edn` file, else `jsonl`).
    #[arg(long, value_parser = PossibleValuesParser::new(Format::NAMES))]
    pub format: Option<String>,
    /// The history file (not needed by `reconciliation`).
    pub history: Option<PathBuf>,
    /// Final-state dump, a JSON object (no-lost-ack, exactly-once, invariant).
    #[arg(long)]
    pub final_state: Option<PathBuf>,
    /// A replica's dump, a JSON object; repeat per replica (reconciliation, invariant).
    #[arg(long = "replica")]
    pub replicas: Vec<PathBuf>,
    /// Checker parameter NAME=VALUE, e.g. `window=2`, `p99_ms=200`; repeatable.
    #[arg(long = "param")]
    pub params: Vec<String>,
    /// The plan's model (register, map, queue, session, …): a misfit is "unknown".
    #[arg(long)]
    pub model: Option<String>,
    /// The claim category (safety, durability, …): a misfit is "unknown".
    #[arg(long)]
    pub claim: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Run the command; returns the exit code. A reader that goes away (`| head`)
/// cuts the output short, never the exit code.
pub fn run(args: &CheckArgs) -> Exit {
    match check(args) {
        Ok(report) => {
            let mut out = crate::term_out::Clean::new(std::io::stdout().lock());
            let written = if args.json {
                writeln!(out, "{}", to_json(&report))
            } else {
                print_text(&mut out, &report)
            };
            match written {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    crate::say_err!("faultline check: cannot write the result: {e}");
                    Exit::ENVIRONMENT
                }
                _ => exit_code(&report.run),
            }
        }
        Err((code, message)) => {
            crate::say_err!("faultline check: {message}");
            code
        }
    }
}

fn check(args: &CheckArgs) -> Result<CheckerReport, (Exit, String)> {
    let usage = |m: String| (Exit::USAGE, m);
    let params = Params::parse(&args.params).map_err(usage)?;
    let needs = registry::info(&args.checker)
        .map(|i| i.needs)
        .ok_or_else(|| usage(format!("unknown checker `{}`", args.checker)))?;
    let history = match &args.history {
        Some(path) => {
            let format = match &args.format {
                Some(name) => Format::from_name(name)
                    .ok_or_else(|| usage(format!("unknown format `{name}`")))?,
                None => Format::from_path(path),
            };
            let text = read(path)?;
            let source = path.display().to_string();
            Some(
                read_history(format, &source, &text)
                    .map_err(|e| (Exit::UNREADABLE, e.to_string()))?,
            )
        }
        None if matches!(needs, Needs::Replicas | Needs::FinalState) => None,
        None => {
            return Err(usage(format!(
                "checker `{}` needs a HISTORY file",
                args.checker
            )));
        }
    };
    let final_state = match &args.final_state {
        Some(path) => Some(serde_json::from_str::<Value>(&read(path)?).map_err(|e| {
            (
                Exit::UNREADABLE,
                format!("{}: invalid JSON: {e}", path.display()),
            )
        })?),
        None => None,
    };
    let replicas: Vec<Dump> = args
        .replicas
        .iter()
        .map(|p| {
            let name = p.display().to_string();
            let text = read(p)?;
            parse_dump(&name, &text)
                .map(|d| (name, d))
                .map_err(|e| (Exit::UNREADABLE, e))
        })
        .collect::<Result<_, _>>()?;
    let inputs = Inputs {
        history: history.as_ref(),
        final_state: final_state.as_ref(),
        replicas: &replicas,
        model: args.model.as_deref(),
        claim: args.claim.as_deref(),
    };
    let report = registry::run(&args.checker, &inputs, &params).map_err(usage)?;
    Ok(nothing_checked_is_unknown(report))
}

/// "Valid" over nothing judged (a register history given to list-append, an empty
/// history) would be a green nobody proved: it is unknown, saying why.
fn nothing_checked_is_unknown(mut report: CheckerReport) -> CheckerReport {
    if let CheckerRun::Judged {
        anomalies: 0,
        ops_checked: 0,
        ops_produced,
    } = report.run
    {
        report.run = CheckerRun::Unknown {
            reason: format!(
                "checked 0 of {ops_produced} ops: nothing in the history is an op `{}` judges",
                report.checker
            ),
        };
        report.evidence = format!("{} (nothing judged)", report.evidence);
    }
    report
}

/// A history or dump, whole. Bytes that are not UTF-8 are refused with where they
/// are (line, column, byte offset), so the operator can find them.
fn read(path: &Path) -> Result<String, (Exit, String)> {
    let shown = crate::sanitize::line(&path.display().to_string());
    let bytes = std::fs::read(path).map_err(|e| (Exit::UNREADABLE, format!("{shown}: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let good = &e.as_bytes()[..at];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        let column = at - good.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1) + 1;
        (
            Exit::UNREADABLE,
            format!(
                "{shown}: not UTF-8 at line {line}, column {column} (byte {at}); a history \
                 and a dump are UTF-8 text"
            ),
        )
    })
}

/// 0 valid, 1 invalid, 3 unknown.
pub fn exit_code(run: &CheckerRun) -> Exit {
    match run {
        CheckerRun::Judged { anomalies: 0, .. } => Exit::CHECK_VALID,
        CheckerRun::Judged { .. } => Exit::CHECK_INVALID,
        _ => Exit::CHECK_UNKNOWN,
    }
}

/// The `--json` result: `valid` is true, false or "unknown".
pub fn to_json(report: &CheckerReport) -> Value {
    let (valid, checked, produced) = match &report.run {
        CheckerRun::Judged {
            anomalies,
            ops_checked,
            ops_produced,
        } => (json!(*anomalies == 0), *ops_checked, *ops_produced),
        _ => (json!("unknown"), 0, 0),
    };
    let coverage = if produced == 0 {
        0.0
    } else {
        checked as f64 / produced as f64
    };
    let mut out = json!({
        "checker": report.checker,
        "valid": valid,
        "ops_checked": checked,
        "ops_produced": produced,
        "coverage": coverage,
        "anomalies": report.anomalies.iter().map(|a| json!({"ops": a.ops, "why": a.why})).collect::<Vec<_>>(),
        "evidence": report.evidence,
        "scope": report.scope,
    });
    match &report.run {
        CheckerRun::MissingFields { fields } => out["missing_fields"] = json!(fields),
        CheckerRun::Unknown { reason } | CheckerRun::Mismatch { reason } => {
            out["reason"] = json!(reason)
        }
        _ => {}
    }
    out
}

/// The report as text; everything taken from the history (op ids, values in the
/// explanations) is sanitized: a history is outside input.
fn print_text(out: &mut impl Write, report: &CheckerReport) -> std::io::Result<()> {
    let verdict = match exit_code(&report.run) {
        Exit::CHECK_VALID => "valid",
        Exit::CHECK_INVALID => "INVALID",
        _ => "unknown",
    };
    let line = crate::sanitize::line;
    writeln!(
        out,
        "{}: {verdict} — {}",
        line(&report.checker),
        line(&report.evidence)
    )?;
    for a in &report.anomalies {
        if a.ops.is_empty() {
            writeln!(out, "  anomaly: {}", line(&a.why))?;
        } else {
            writeln!(
                out,
                "  anomaly (ops {}): {}",
                line(&a.ops.join(", ")),
                line(&a.why)
            )?;
        }
    }
    if !report.scope.is_empty() {
        writeln!(out, "scope: {}", line(&report.scope))?;
    }
    Ok(())
}
