//! `faultline check`: run one built-in checker on a history file, or on many
//! (files, directories, glob patterns) in one process, several at once.

use super::checker::{CheckerReport, Refusal, RunOptions, mismatch};
use super::final_state::{Dump, parse_dump};
use super::format::{Capped, Format, fold_history, read_history_file};
use super::history::History;
use super::jsonl_read::Header;
use super::linear::Linear;
use super::params::Params;
use super::registry::{self, Inputs, Needs};
use crate::exit::Exit;
use crate::term_out::wrap;
use crate::verdict::CheckerRun;
use clap::builder::PossibleValuesParser;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use std::io::{Read, Seek, Write};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What `faultline check --help` says after the options: many histories, the exit
/// code of several, and which checkers `--first` changes.
const AFTER_HELP: &str = "\
HISTORY may be given several times, as files, directories (every file directly in one, \
by name; subdirectories are not entered, a symbolic link in one is not followed) and \
glob patterns a shell did not expand (quote them: 'runs/*.edn'; `**` enters \
subdirectories, not a symbolic link to one). One file is checked \
and reported as always; more give each history's report when it is not valid, then a \
closing table (file, verdict, ops, time), or with --json one JSON object per line and \
history carrying \"file\" and \"valid\": true, false or null (unknown or unreadable). \
Histories are checked --jobs at a time, reported in the order given; one that cannot be \
read is a row with its reason, not the end of the run.

Exit code of several histories, the worst one's: 1 when any is invalid (an anomaly \
found is never outweighed), else 66 when any could not be read or parsed, else 3 when \
any is unknown, else 0; 64 on bad usage.

--first: linearizability-register and linearizability-kv stop every key's search as \
soon as one key is not linearizable and say how many keys were not searched; the \
other checkers find their anomalies in one pass over the history and ignore it. \
Without --first, the linearizability checkers print `first anomaly: ...` on stderr as \
soon as one is found (text output only), then search the rest within their budget.";

/// Check a recorded history with a built-in checker.
///
/// Exits 0 when the history is valid, 1 when the checker found anomalies, 3 when
/// it cannot tell (a field the checker needs is absent, its time / memory budget
/// ran out, or it does not match --model / --claim), 64 on bad usage, 66 when an
/// input cannot be read or parsed.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct CheckArgs {
    /// The checker.
    #[arg(long, value_parser = PossibleValuesParser::new(registry::names()))]
    pub checker: String,
    /// History format (default: `edn` for a `.edn` file, else `jsonl`).
    #[arg(long, value_parser = PossibleValuesParser::new(Format::NAMES))]
    pub format: Option<String>,
    /// History files, directories or glob patterns (none for `reconciliation`).
    #[arg(value_name = "HISTORY")]
    pub histories: Vec<PathBuf>,
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
    /// Print the result as JSON (one object per line and history when several).
    #[arg(long)]
    pub json: bool,
    /// Stop at the first anomaly (the linearizability checkers; see below).
    #[arg(long)]
    pub first: bool,
    /// Histories checked at once (default: the machine's cores; at most four per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<NonZeroUsize>,
}

/// Run the command; returns the exit code. A reader that goes away (`| head`)
/// cuts the output short, never the exit code.
pub fn run(args: &CheckArgs) -> Exit {
    let histories = match expand(&args.histories) {
        Ok(Histories::One(path)) => Some(path),
        Ok(Histories::None) => None,
        Ok(Histories::Many(items)) => return many(args, items),
        Err(message) => {
            crate::say_err!("faultline check: {message}");
            return Exit::USAGE;
        }
    };
    match check(args, histories.as_deref()) {
        Ok(report) => {
            let mut out = crate::term_out::Clean::new(std::io::stdout().lock());
            let written = if args.json {
                writeln!(
                    out,
                    "{}",
                    crate::sanitize::json(&to_json(&report).to_string())
                )
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

/// The format `--format` names, or the one `path`'s name suggests.
fn format_of(args: &CheckArgs, path: &Path) -> Result<Format, (Exit, String)> {
    match &args.format {
        Some(name) => {
            Format::from_name(name).ok_or_else(|| (Exit::USAGE, format!("unknown format `{name}`")))
        }
        None => Ok(Format::from_path(path)),
    }
}

/// A history as `check` read it: whole, or folded by its checker while read.
enum HistoryRead {
    Whole(History),
    Folded(Box<Linear>, Header),
}

impl HistoryRead {
    fn ops(&self) -> u64 {
        match self {
            HistoryRead::Whole(h) => h.ops.len() as u64,
            HistoryRead::Folded(_, header) => header.ops,
        }
    }
}

/// The history in `file`: the one place `check` reads a history, whichever way it
/// was opened. A history for a checker that folds ops ([`Linear`]) is judged
/// while it is read, no `History` built (txn-jsonl excepted); for any other
/// checker its `History` is built from the same stream. At most
/// [`crate::untrusted::READ_LIMIT`] bytes: a larger file is refused, not cut.
fn read_history_at(
    args: &CheckArgs,
    params: &Params,
    format: Format,
    path: &Path,
    file: std::fs::File,
) -> Result<HistoryRead, String> {
    let shown = shown(path);
    let limit = crate::untrusted::READ_LIMIT;
    if file.metadata().is_ok_and(|m| m.len() > limit) {
        return Err(format!(
            "{shown}: larger than {limit} bytes: refused, not cut short"
        ));
    }
    // A regular file can be read again from its start (a fold reads EDN twice); a
    // pipe cannot.
    let again = file
        .metadata()
        .is_ok_and(|m| m.is_file())
        .then(|| file.try_clone())
        .and_then(Result::ok)
        .map(|mut file| {
            move || {
                file.seek(std::io::SeekFrom::Start(0))?;
                Ok(std::io::BufReader::with_capacity(
                    1 << 16,
                    Capped { file, left: limit },
                ))
            }
        });
    // A pipe has no length: past the limit, the read fails instead of stopping short.
    let reader = std::io::BufReader::with_capacity(1 << 16, Capped { file, left: limit });
    let source = path.display().to_string();
    let misfit = || registry::misfit(&args.checker, args.model.as_deref(), args.claim.as_deref());
    if format != Format::TxnJsonl
        && let Some(mut fold) = Linear::new(&args.checker, params, misfit())
    {
        let header =
            fold_history(format, &source, reader, again, &mut fold).map_err(|e| e.to_string())?;
        return Ok(HistoryRead::Folded(Box::new(fold), header));
    }
    read_history_file(format, &source, reader)
        .map(HistoryRead::Whole)
        .map_err(|e| e.to_string())
}

/// Options for one check: `--first`, and (text output, no `--first`) the first
/// anomaly told on stderr as soon as it is found.
fn options<'a>(
    args: &CheckArgs,
    tell: &'a (dyn Fn(&str) + Sync),
    threads: usize,
) -> RunOptions<'a> {
    RunOptions {
        first: args.first,
        on_first_anomaly: (!args.json && !args.first).then_some(tell),
        threads,
    }
}

/// `first anomaly: <what> after <time>` on stderr, `shown` naming the history when
/// there are several.
fn first_anomaly_line(shown: Option<&str>, what: &str, after: Duration) {
    let whose = shown.map(|s| format!("{s}: ")).unwrap_or_default();
    crate::say_err!("first anomaly: {whose}{what} after {}", time_words(after));
}

fn check(args: &CheckArgs, history: Option<&Path>) -> Result<CheckerReport, (Exit, String)> {
    let usage = |m: String| (Exit::USAGE, m);
    let started = Instant::now();
    let params = Params::parse(&args.params).map_err(usage)?;
    let needs = registry::info(&args.checker)
        .map(|i| i.needs)
        .ok_or_else(|| usage(format!("unknown checker `{}`", args.checker)))?;
    let history = match history {
        Some(path) => {
            let format = format_of(args, path)?;
            let shown = shown(path);
            let open = || {
                std::fs::File::open(path).map_err(|e| (Exit::UNREADABLE, format!("{shown}: {e}")))
            };
            if let Some(report) = streamed_txn(args, &params, format, path, open) {
                return report.map(nothing_checked_is_unknown);
            }
            let read = read_history_at(args, &params, format, path, open()?);
            Some(read.map_err(|e| (Exit::UNREADABLE, e))?)
        }
        None if matches!(needs, Needs::Replicas | Needs::FinalState) => None,
        None => {
            return Err(usage(format!(
                "checker `{}` needs a HISTORY file",
                args.checker
            )));
        }
    };
    // The dump's text, read once. A fold reads the text itself and only has it
    // checked here; any other checker gets it parsed once into a tree. Either way a
    // dump that is not JSON is refused before any checking, naming its file.
    let dump_text = args.final_state.as_deref().map(read).transpose()?;
    let dump_shown = args.final_state.as_deref().map(shown).unwrap_or_default();
    let invalid_dump =
        |e: serde_json::Error| (Exit::UNREADABLE, format!("{dump_shown}: invalid JSON: {e}"));
    let folded = matches!(history, Some(HistoryRead::Folded(..)));
    let dump_tree: Option<Value> = match &dump_text {
        Some(text) if folded => {
            serde_json::from_str::<IgnoredAny>(text).map_err(invalid_dump)?;
            None
        }
        Some(text) => Some(serde_json::from_str::<Value>(text).map_err(invalid_dump)?),
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
    let history = match history {
        Some(HistoryRead::Folded(fold, header)) => {
            let report =
                fold.finish(&header, dump_text.as_deref())
                    .map_err(|refusal| match refusal {
                        Refusal::Usage(m) => usage(m),
                        // The dump's own fault: named, and malformed input's exit.
                        Refusal::Dump(m) => (Exit::UNREADABLE, format!("{dump_shown}: {m}")),
                        Refusal::History(m) => (Exit::UNREADABLE, m),
                    })?;
            return Ok(nothing_checked_is_unknown(report));
        }
        Some(HistoryRead::Whole(history)) => Some(history),
        None => None,
    };
    let inputs = Inputs {
        history: history.as_ref(),
        final_state: dump_tree.as_ref(),
        replicas: &replicas,
        model: args.model.as_deref(),
        claim: args.claim.as_deref(),
    };
    let tell = |what: &str| first_anomaly_line(None, what, started.elapsed());
    let options = options(args, &tell, 0);
    let report = registry::run_with(&args.checker, &inputs, &params, &options).map_err(usage)?;
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

/// A path as the operator is shown it: its text, cleaned for the terminal.
fn shown(path: &Path) -> String {
    crate::sanitize::line(&path.display().to_string())
}

/// A history or dump, whole, through its name as given (a symlink named on the
/// command line is followed; a pipe such as `<(cmd)` is read). At most
/// [`crate::untrusted::READ_LIMIT`] bytes: a larger file is refused, not cut.
fn read(path: &Path) -> Result<String, (Exit, String)> {
    let shown = shown(path);
    let file =
        std::fs::File::open(path).map_err(|e| (Exit::UNREADABLE, format!("{shown}: {e}")))?;
    read_text(file, &shown).map_err(|e| (Exit::UNREADABLE, e))
}

/// What `file` holds, as UTF-8 text, at most [`crate::untrusted::READ_LIMIT`] bytes.
/// Bytes that are not UTF-8 are refused with where they are (line, column, byte
/// offset), so the operator can find them.
fn read_text(file: std::fs::File, shown: &str) -> Result<String, String> {
    let limit = crate::untrusted::READ_LIMIT;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{shown}: larger than {limit} bytes: refused, not cut short"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let good = &e.as_bytes()[..at];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        let column = at - good.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1) + 1;
        format!(
            "{shown}: not UTF-8 at line {line}, column {column} (byte {at}); a history \
             and a dump are UTF-8 text"
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

// ---------------------------------------------------------------------------
// Many histories in one process.

/// The HISTORY arguments, expanded.
enum Histories {
    /// None given (`reconciliation`, `invariant`).
    None,
    /// One file named as it is: checked and reported as always.
    One(PathBuf),
    /// Several, or a directory / pattern: a row each, in the order given.
    Many(Vec<Item>),
}

/// One history to check among many.
struct Item {
    path: PathBuf,
    how: Source,
}

enum Source {
    /// Named on the command line: opened through its name as given.
    Named,
    /// Found in a directory given (its descriptor, the entry's name): opened without
    /// following a symlink, a regular file only.
    InDir(std::sync::Arc<std::os::fd::OwnedFd>, std::ffi::OsString),
    /// Matched by a pattern: opened without following a symlink as the last
    /// component, a regular file only.
    Matched,
    /// Known unreadable before opening it (why).
    Refused(String),
}

/// Characters that make an argument a glob pattern when no file has its name.
const GLOB_CHARS: [char; 3] = ['*', '?', '['];

fn is_pattern(arg: &Path) -> bool {
    arg.to_str().is_some_and(|s| s.contains(GLOB_CHARS))
}

/// The arguments as histories: a file named as it is, every entry of a directory
/// (sorted by name; not recursive: a subdirectory is skipped, a symlink listed and
/// refused), and the files a glob pattern matches (when no file has the
/// argument's own name). `Err` is a usage problem (a pattern that is not one).
fn expand(args: &[PathBuf]) -> Result<Histories, String> {
    match args {
        [] => return Ok(Histories::None),
        [one]
            if !std::fs::metadata(one).is_ok_and(|m| m.is_dir())
                && (std::fs::symlink_metadata(one).is_ok() || !is_pattern(one)) =>
        {
            return Ok(Histories::One(one.clone()));
        }
        _ => {}
    }
    let mut items = Vec::new();
    for arg in args {
        if std::fs::metadata(arg).is_ok_and(|m| m.is_dir()) {
            items.extend(directory(arg));
        } else if std::fs::symlink_metadata(arg).is_err() && is_pattern(arg) {
            items.extend(pattern(arg)?);
        } else {
            items.push(Item {
                path: arg.clone(),
                how: Source::Named,
            });
        }
    }
    Ok(Histories::Many(items))
}

/// Every entry directly in `dir`, by name: subdirectories skipped, symlinks listed
/// and refused (never followed out of the directory), the rest read through the
/// directory's descriptor. A directory that cannot be listed is one refused row.
fn directory(dir: &Path) -> Vec<Item> {
    use nix::fcntl::OFlag;
    use std::os::fd::AsRawFd;
    let refused = |why: String| {
        vec![Item {
            path: dir.to_path_buf(),
            how: Source::Refused(why),
        }]
    };
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let fd = match nix::fcntl::open(dir, flags, nix::sys::stat::Mode::empty()) {
        Ok(fd) => std::sync::Arc::new(fd),
        Err(e) => return refused(format!("cannot open the directory: {e}")),
    };
    // Listed through the descriptor: the directory read is the one opened.
    let listing = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
    let entries = match std::fs::read_dir(&listing).or_else(|_| std::fs::read_dir(dir)) {
        Ok(entries) => entries,
        Err(e) => return refused(format!("cannot list the directory: {e}")),
    };
    let mut found: Vec<(std::ffi::OsString, Option<std::fs::FileType>)> = entries
        .filter_map(Result::ok)
        .map(|e| (e.file_name(), e.file_type().ok()))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
        .into_iter()
        .filter(|(_, kind)| !kind.is_some_and(|k| k.is_dir()))
        .map(|(name, kind)| Item {
            path: dir.join(&name),
            how: if kind.is_some_and(|k| k.is_symlink()) {
                Source::Refused("a symbolic link: not followed out of the directory".into())
            } else {
                Source::InDir(fd.clone(), name)
            },
        })
        .collect()
}

/// The paths `arg` matches as a glob pattern, in the pattern's order (a `*` does not
/// match a leading dot, as in a shell); directories are skipped. A pattern that
/// matches nothing is one refused row.
fn pattern(arg: &Path) -> Result<Vec<Item>, String> {
    let text = arg
        .to_str()
        .ok_or_else(|| format!("{}: a pattern must be UTF-8", arg.display()))?;
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let matches = glob::glob_with(text, options)
        .map_err(|e| format!("`{}`: not a glob pattern: {e}", crate::sanitize::line(text)))?;
    // The directories the pattern names literally, before its first wildcard: a
    // symbolic link there is the operator's; one a wildcard went through is not.
    let literal: std::path::PathBuf = arg
        .components()
        .take_while(|c| !c.as_os_str().to_string_lossy().contains(GLOB_CHARS))
        .collect();
    let mut items = Vec::new();
    for found in matches {
        match found {
            Ok(path) if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) => {}
            Ok(path) if through_symlink(&literal, &path) => items.push(Item {
                how: Source::Refused(
                    "reached through a symbolic link to a directory: not followed".into(),
                ),
                path,
            }),
            Ok(path) => items.push(Item {
                path,
                how: Source::Matched,
            }),
            Err(e) => items.push(Item {
                path: e.path().to_path_buf(),
                how: Source::Refused(format!("cannot read it: {}", e.error())),
            }),
        }
    }
    if items.is_empty() {
        items.push(Item {
            path: arg.to_path_buf(),
            how: Source::Refused("no file matches this pattern".into()),
        });
    }
    Ok(items)
}

/// A directory between `literal` and the file `path` (which the pattern's
/// wildcards matched: `**` walks into linked directories) is a symbolic link.
fn through_symlink(literal: &Path, path: &Path) -> bool {
    path.ancestors()
        .skip(1)
        .take_while(|dir| *dir != literal && dir.starts_with(literal))
        .any(|dir| std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()))
}

/// An [`Item`] opened as its [`Source`] says.
fn open_item(item: &Item, shown: &str) -> Result<std::fs::File, String> {
    use nix::fcntl::OFlag;
    // O_NONBLOCK: a fifo planted under the name does not hang the open.
    let untrusted = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let mode = nix::sys::stat::Mode::empty();
    let opened = |fd: nix::Result<std::os::fd::OwnedFd>| -> Result<std::fs::File, String> {
        let file = std::fs::File::from(fd.map_err(|e| match e {
            nix::errno::Errno::ELOOP => {
                format!("{shown}: a symbolic link: not followed")
            }
            e => format!("{shown}: {e}"),
        })?);
        match file.metadata() {
            Ok(m) if m.is_file() => Ok(file),
            Ok(_) => Err(format!("{shown}: not a regular file")),
            Err(e) => Err(format!("{shown}: {e}")),
        }
    };
    let file = match &item.how {
        Source::Named => std::fs::File::open(&item.path).map_err(|e| format!("{shown}: {e}"))?,
        Source::InDir(dir, name) => opened(nix::fcntl::openat(
            dir.as_ref(),
            name.as_os_str(),
            untrusted,
            mode,
        ))?,
        Source::Matched => opened(nix::fcntl::open(&item.path, untrusted, mode))?,
        Source::Refused(why) => return Err(format!("{shown}: {why}")),
    };
    Ok(file)
}

/// `list-append` and `rw-register` over a txn-jsonl history read the file as a
/// stream straight into compact transactions (no parsed `History`: a million
/// transactions in seconds and bounded memory, references/checkers.md). `None` for
/// every other checker or format. A file over [`crate::untrusted::READ_LIMIT`] is
/// refused, as `read` refuses it.
fn streamed_txn(
    args: &CheckArgs,
    params: &Params,
    format: Format,
    path: &Path,
    open: impl FnOnce() -> Result<std::fs::File, (Exit, String)>,
) -> Option<Result<CheckerReport, (Exit, String)>> {
    use super::txn::{self, FileError};
    let streamed = [txn::list_append::NAME, txn::rw_register::NAME];
    if format != Format::TxnJsonl || !streamed.contains(&args.checker.as_str()) {
        return None;
    }
    if let Some(reason) =
        registry::misfit(&args.checker, args.model.as_deref(), args.claim.as_deref())
    {
        return Some(Ok(mismatch(&args.checker, "", reason)));
    }
    let shown = shown(path);
    let file = match open() {
        Ok(file) => file,
        Err(e) => return Some(Err(e)),
    };
    let limit = crate::untrusted::READ_LIMIT;
    if file.metadata().is_ok_and(|m| m.len() > limit) {
        return Some(Err((
            Exit::UNREADABLE,
            format!("{shown}: larger than {limit} bytes: refused"),
        )));
    }
    // A pipe has no length: past the limit, the read fails instead of stopping short.
    let reader = std::io::BufReader::with_capacity(1 << 16, Capped { file, left: limit });
    let source = path.display().to_string();
    Some(
        txn::check_txn_jsonl(&args.checker, &source, reader, params).map_err(|e| match e {
            FileError::Usage(m) => (Exit::USAGE, m),
            FileError::Unreadable(m) => (Exit::UNREADABLE, m),
        }),
    )
}

/// How one of many histories came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Valid,
    Unknown,
    Unreadable,
    Invalid,
}

impl Verdict {
    fn of(run: &CheckerRun) -> Verdict {
        match exit_code(run) {
            Exit::CHECK_VALID => Verdict::Valid,
            Exit::CHECK_INVALID => Verdict::Invalid,
            _ => Verdict::Unknown,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Invalid => "INVALID",
            Verdict::Unknown => "unknown",
            Verdict::Unreadable => "unreadable",
        }
    }

    /// The exit code of a run whose worst history is this (see [`AFTER_HELP`]).
    fn exit(self) -> Exit {
        match self {
            Verdict::Valid => Exit::CHECK_VALID,
            Verdict::Invalid => Exit::CHECK_INVALID,
            Verdict::Unknown => Exit::CHECK_UNKNOWN,
            Verdict::Unreadable => Exit::UNREADABLE,
        }
    }
}

/// One history's row.
struct Row {
    /// The path as shown (sanitized).
    shown: String,
    path: String,
    verdict: Verdict,
    /// Ops in the history (none when it could not be read).
    ops: Option<u64>,
    time: Duration,
    /// The report, or why there is none (unreadable).
    report: Result<CheckerReport, String>,
}

/// Checks one of many histories; `Err` is a usage problem (the same for each).
fn check_item(
    args: &CheckArgs,
    params: &Params,
    item: &Item,
    threads: usize,
) -> Result<Row, String> {
    let started = Instant::now();
    let path = item.path.display().to_string();
    let shown = crate::sanitize::line(&path);
    let row = |verdict, ops, report| Row {
        shown: shown.clone(),
        path: path.clone(),
        verdict,
        ops,
        time: started.elapsed(),
        report,
    };
    let format = format_of(args, &item.path).map_err(|(_, m)| m)?;
    let open = || open_item(item, &shown).map_err(|m| (Exit::UNREADABLE, m));
    match streamed_txn(args, params, format, &item.path, open) {
        Some(Ok(report)) => {
            let report = nothing_checked_is_unknown(report);
            let ops = match report.run {
                CheckerRun::Judged { ops_produced, .. } => Some(ops_produced),
                _ => None,
            };
            return Ok(row(Verdict::of(&report.run), ops, Ok(report)));
        }
        Some(Err((Exit::USAGE, why))) => return Err(why),
        Some(Err((_, why))) => return Ok(row(Verdict::Unreadable, None, Err(why))),
        None => {}
    }
    let history = match open_item(item, &shown)
        .and_then(|file| read_history_at(args, params, format, &item.path, file))
    {
        Ok(history) => history,
        Err(why) => return Ok(row(Verdict::Unreadable, None, Err(why))),
    };
    let ops = history.ops();
    let history = match history {
        HistoryRead::Folded(fold, header) => {
            let report =
                nothing_checked_is_unknown(fold.finish(&header, None).map_err(|e| e.to_string())?);
            return Ok(row(Verdict::of(&report.run), Some(ops), Ok(report)));
        }
        HistoryRead::Whole(history) => history,
    };
    let inputs = Inputs {
        history: Some(&history),
        model: args.model.as_deref(),
        claim: args.claim.as_deref(),
        ..Inputs::default()
    };
    let tell = |what: &str| first_anomaly_line(Some(&shown), what, started.elapsed());
    let options = options(args, &tell, threads);
    let report = registry::run_with(&args.checker, &inputs, params, &options)?;
    let report = nothing_checked_is_unknown(report);
    drop(history);
    Ok(row(Verdict::of(&report.run), Some(ops), Ok(report)))
}

/// The row of a history whose check panicked: unknown, saying so.
fn panicked(checker: &str, item: &Item) -> Row {
    let path = item.path.display().to_string();
    let reason = "the checker failed (panicked) on this history".to_string();
    Row {
        shown: crate::sanitize::line(&path),
        path,
        verdict: Verdict::Unknown,
        ops: None,
        time: Duration::ZERO,
        report: Ok(super::checker::unknown(checker, "", reason)),
    }
}

/// The most threads `--jobs` gets per core: checks read files and search; beyond a
/// few per core they only wait on each other.
const MAX_JOBS_PER_CORE: usize = 4;

/// `faultline check` over several histories: checked `--jobs` at a time, each
/// reported as soon as those before it are, then the closing table.
fn many(args: &CheckArgs, items: Vec<Item>) -> Exit {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let usage = |m: &str| {
        crate::say_err!("faultline check: {m}");
        Exit::USAGE
    };
    if args.final_state.is_some() || !args.replicas.is_empty() {
        return usage("--final-state and --replica go with one history, not several");
    }
    if let Some(info) = registry::info(&args.checker)
        && matches!(info.needs, Needs::HistoryAndFinalState | Needs::FinalState)
    {
        return usage(&format!(
            "checker `{}` needs a final-state dump: give it one history",
            args.checker
        ));
    }
    let params = match Params::parse(&args.params) {
        Ok(p) => p,
        Err(m) => return usage(&m),
    };
    if items.is_empty() {
        crate::say_err!("faultline check: no history file in what was given");
        return Exit::UNREADABLE;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // More threads than a few per core only wait: --jobs 100000 is not 100000 threads.
    let jobs = args
        .jobs
        .map_or(cores, NonZeroUsize::get)
        .min(MAX_JOBS_PER_CORE * cores)
        .min(items.len())
        .max(1);
    // Each check's own search threads share the cores with the other jobs.
    let threads = (cores / jobs).max(1);
    let next = AtomicUsize::new(0);
    let quit = AtomicBool::new(false);
    let mut printer = Printer::new(args.json);
    let mut usage_error = None;
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        let (next, quit, items, params) = (&next, &quit, &items, &params);
        let work = move |tx: std::sync::mpsc::Sender<_>| {
            while !quit.load(Ordering::Relaxed) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                // A checker that panics is that history's unknown, not the run's end.
                let row = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    check_item(args, params, item, threads)
                }))
                .unwrap_or_else(|_| Ok(panicked(&args.checker, item)));
                if tx.send((i, row)).is_err() {
                    break;
                }
            }
        };
        // Where threads cannot be had (a process limit), fewer check; with none,
        // this thread checks them all before it prints.
        let mut started = 0;
        for _ in 0..jobs {
            let tx = tx.clone();
            match std::thread::Builder::new().spawn_scoped(scope, move || work(tx)) {
                Ok(_) => started += 1,
                Err(e) => {
                    crate::say_err!(
                        "faultline check: only {started} of {jobs} threads could be started \
                         ({e}); checking with {}",
                        if started == 0 { "this one" } else { "those" }
                    );
                    break;
                }
            }
        }
        if started == 0 {
            work(tx.clone());
        }
        drop(tx);
        // Rows in the order given, each as soon as those before it are in.
        let mut waiting = std::collections::BTreeMap::new();
        let mut due = 0;
        for (i, row) in rx {
            waiting.insert(i, row);
            while let Some(row) = waiting.remove(&due) {
                due += 1;
                match row {
                    Ok(row) => {
                        if printer.row(row).is_err() {
                            quit.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(m) => {
                        usage_error.get_or_insert(m);
                        quit.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    });
    if let Some(m) = usage_error {
        return usage(&m);
    }
    printer.finish()
}

/// One history's line in the closing table.
struct Summary {
    /// The path as shown (sanitized).
    file: String,
    verdict: Verdict,
    ops: Option<u64>,
    time: Duration,
    /// Why it could not be read.
    reason: Option<String>,
}

/// Writes the rows of many histories as they come, then the closing table.
struct Printer {
    json: bool,
    out: crate::term_out::Clean<std::io::Stdout>,
    /// The reader went away (`| head`): nothing more is written, the checks go on.
    gone: bool,
    /// The output could not be written (other than a reader gone): the run ends.
    failed: bool,
    rows: Vec<Summary>,
    worst: Verdict,
}

impl Printer {
    fn new(json: bool) -> Printer {
        Printer {
            json,
            out: crate::term_out::Clean::new(std::io::stdout()),
            gone: false,
            failed: false,
            rows: Vec::new(),
            worst: Verdict::Valid,
        }
    }

    /// One history's result; `Err` when the output cannot be written (other than a
    /// reader gone), which ends the run.
    fn row(&mut self, row: Row) -> Result<(), ()> {
        self.worst = self.worst.max(row.verdict);
        self.rows.push(Summary {
            file: row.shown.clone(),
            verdict: row.verdict,
            ops: row.ops,
            time: row.time,
            reason: row.report.as_ref().err().cloned(),
        });
        let written = if self.gone {
            Ok(())
        } else if self.json {
            writeln!(
                self.out,
                "{}",
                crate::sanitize::json(&row_json(&row).to_string())
            )
        } else {
            match &row.report {
                Ok(report) if row.verdict != Verdict::Valid => writeln!(self.out, "{}", row.shown)
                    .and_then(|()| print_text(&mut self.out, report))
                    .and_then(|()| writeln!(self.out)),
                _ => Ok(()),
            }
        };
        self.result(written)
    }

    fn result(&mut self, written: std::io::Result<()>) -> Result<(), ()> {
        match written.and_then(|()| self.out.flush()) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.gone = true;
                Ok(())
            }
            Err(e) => {
                crate::say_err!("faultline check: cannot write the result: {e}");
                self.failed = true;
                Err(())
            }
        }
    }

    /// The closing table (text output) and the exit code.
    fn finish(mut self) -> Exit {
        if self.failed {
            return Exit::ENVIRONMENT;
        }
        if !self.json && !self.gone {
            let lines = table(&self.rows, table_width());
            let written = lines
                .iter()
                .try_for_each(|line| writeln!(self.out, "{line}"));
            if self.result(written).is_err() {
                return Exit::ENVIRONMENT;
            }
        }
        self.worst.exit()
    }
}

/// One history as a JSON line: the `--json` result of one history (without the
/// single history's `"unknown"`: `valid` is true, false or null) with its `file`,
/// `verdict`, `ops` and `time_ms`; an unreadable one has its `reason`.
fn row_json(row: &Row) -> Value {
    let mut out = match &row.report {
        Ok(report) => to_json(report),
        Err(why) => json!({ "reason": why }),
    };
    out["file"] = json!(row.path);
    out["valid"] = match row.verdict {
        Verdict::Valid => json!(true),
        Verdict::Invalid => json!(false),
        Verdict::Unknown | Verdict::Unreadable => Value::Null,
    };
    out["verdict"] = json!(row.verdict.word().to_lowercase());
    out["ops"] = json!(row.ops);
    out["time_ms"] = json!(row.time.as_secs_f64() * 1e3);
    out
}

/// The width the closing table fits: `COLUMNS` when it holds a number (within
/// 40..=500), else 80.
fn table_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|w| *w > 0)
        .map_or(80, |w| w.clamp(40, 500))
}

/// A duration as people read it: `0.4 ms`, `12 ms`, `1.25 s`.
fn time_words(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1e3)
    }
}

/// The closing table: a row per history (file, verdict, ops, time), an unreadable
/// one's reason on lines of its own under it, then a count per verdict and the
/// exit code. Every line within `width`: a file name too long for its column goes
/// on a line of its own (whole, broken only where a line ends), its row under it.
fn table(rows: &[Summary], width: usize) -> Vec<String> {
    use super::checker::thousands;
    let cells: Vec<(String, &str, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r.file.clone(),
                r.verdict.word(),
                r.ops.map_or_else(|| "-".to_string(), thousands),
                time_words(r.time),
            )
        })
        .collect();
    let widest = |f: fn(&(String, &str, String, String)) -> usize, head: &str| {
        cells
            .iter()
            .map(f)
            .max()
            .unwrap_or(0)
            .max(head.chars().count())
    };
    let verdict_w = widest(|c| c.1.len(), "verdict");
    let ops_w = widest(|c| c.2.chars().count(), "ops");
    let time_w = widest(|c| c.3.chars().count(), "time");
    let rest = 2 + verdict_w + 2 + ops_w + 2 + time_w;
    let file_w = widest(|c| c.0.chars().count(), "file")
        .min(width.saturating_sub(rest))
        .max(4);
    let line = |file: &str, verdict: &str, ops: &str, time: &str| {
        let pad = file_w.saturating_sub(file.chars().count());
        format!(
            "{file}{:pad$}  {verdict:<verdict_w$}  {ops:>ops_w$}  {time:>time_w$}",
            ""
        )
        .trim_end()
        .to_string()
    };
    let mut out = vec![line("file", "verdict", "ops", "time")];
    for ((file, verdict, ops, time), Summary { reason, .. }) in cells.iter().zip(rows) {
        if file.chars().count() > file_w {
            out.extend(wrap(file, width));
            out.push(line("", verdict, ops, time));
        } else {
            out.push(line(file, verdict, ops, time));
        }
        if let Some(reason) = reason {
            out.extend(
                wrap(&crate::sanitize::line(reason), width.saturating_sub(4))
                    .into_iter()
                    .map(|l| format!("    {l}")),
            );
        }
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let counts: Vec<String> = [
        Verdict::Valid,
        Verdict::Invalid,
        Verdict::Unknown,
        Verdict::Unreadable,
    ]
    .into_iter()
    .filter(|v| count(*v) > 0)
    .map(|v| format!("{} {}", count(v), v.word()))
    .collect();
    let worst = rows
        .iter()
        .map(|r| r.verdict)
        .max()
        .unwrap_or(Verdict::Valid);
    let summary = format!(
        "{} {}: {}; exit {}",
        rows.len(),
        super::checker::plural(rows.len() as u64, "history", "histories"),
        counts.join(", "),
        i32::from(worst.exit())
    );
    out.extend(wrap(&summary, width));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(files: &[(&str, Verdict)]) -> Vec<Summary> {
        files
            .iter()
            .map(|(f, v)| Summary {
                file: f.to_string(),
                verdict: *v,
                ops: Some(1_800),
                time: Duration::from_millis(12),
                reason: (*v == Verdict::Unreadable).then(|| {
                    format!(
                        "{f}:2: field `:f`: expected a keyword naming the op, a long reason \
                         that must wrap"
                    )
                }),
            })
            .collect()
    }

    #[test]
    fn the_table_fits_its_width_and_never_cuts_a_file_name() {
        let long = format!("runs/{}/h.edn", "x".repeat(90));
        let rows = rows(&[
            ("runs/a.edn", Verdict::Valid),
            ("runs/b.edn", Verdict::Invalid),
            (&long, Verdict::Unreadable),
        ]);
        for width in [40, 80, 200] {
            let lines = table(&rows, width);
            for l in &lines {
                assert!(l.chars().count() <= width, "{width}: {l:?}\n{lines:#?}");
            }
            // The long name is whole once its pieces are put back together.
            let joined: String = lines.iter().map(|l| l.trim()).collect();
            assert!(joined.contains(&long), "{width}: {lines:#?}");
            assert!(lines[0].starts_with("file"), "{lines:#?}");
            assert!(
                lines
                    .iter()
                    .any(|l| l.contains("INVALID") && l.contains("1,800")),
                "{lines:#?}"
            );
            let last = lines.last().expect("a summary");
            assert!(
                lines
                    .join(" ")
                    .contains("3 histories: 1 valid, 1 INVALID, 1 unreadable; exit 1"),
                "{last}"
            );
        }
    }

    #[test]
    fn an_anomaly_outranks_an_unreadable_file_which_outranks_unknown() {
        assert!(Verdict::Invalid > Verdict::Unreadable);
        assert!(Verdict::Unreadable > Verdict::Unknown);
        assert!(Verdict::Unknown > Verdict::Valid);
        assert_eq!(Verdict::Unreadable.exit(), Exit::UNREADABLE);
    }
}
