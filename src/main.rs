use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use faultline::exit::{Exit, Halt};
use faultline::verdict::Tier;
use faultline::{plan, say, say_err};

/// Executes distributed-system test plans for real.
#[derive(Parser)]
#[command(name = "faultline", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load and lint a plan: print its structure and every problem with file:line.
    ///
    /// Exits 0 when the plan is runnable, 65 when it is handed back to plan design
    /// (missing or non-machine-checkable oracle, missing budget tiers, gated claim
    /// without a filled §7.M block), 66 when the file cannot be read.
    Lint {
        /// Path to the markdown test plan.
        plan: PathBuf,
        /// Print the parsed structure and problems as JSON.
        #[arg(long)]
        json: bool,
        /// The SUT repository whose toolbox the run spec should reuse (default: the
        /// current directory); bindings that re-implement a discovered driver are warned.
        #[arg(long)]
        sut: Option<PathBuf>,
    },
    /// Write a minimal plan and run spec for a system of your own: three members, a
    /// smoke scenario and one proven pause, every value only you know marked FILL IN.
    /// `faultline lint` accepts them as written; references/getting-started.md goes on
    /// from there.
    ///
    /// Exits 0, 64 for a name that cannot be a file name, 73 when a file exists
    /// (nothing is overwritten) or cannot be created.
    New {
        /// The system's name (1–64 ASCII letters, digits, `.`, `_`, `-`): the plan is
        /// `<name>.md`.
        system: String,
        /// Where to write (default: `docs/testing-plans`, where `faultline run` without
        /// a plan looks).
        #[arg(long, default_value = "docs/testing-plans")]
        dir: PathBuf,
    },
    /// Discover the SUT repository's own toolbox: cluster, workload, chaos and smoke
    /// drivers in its scripts, Makefile / justfile / xtask targets and CI definitions.
    Toolbox {
        /// The SUT repository.
        dir: PathBuf,
        /// Print the items as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a plan: every scenario and arm, verdicts by the decision tree, the report.
    ///
    /// Exits 0 DONE, 1 FAIL, 2 DONE_WITH_CONCERNS, 3 INCONCLUSIVE, 4 BLOCKED, 65 when
    /// the plan or its run spec is handed back (nothing is started), 66 when input
    /// cannot be read, 128+N when stopped by signal N (after healing every fault).
    Run {
        /// Path to the markdown test plan (its run spec: fenced blocks or `<plan>.run.yaml`).
        /// Without it, a picker lists the SUT's plans (`docs/testing-plans/`, and
        /// markdown files titled "Test Plan:").
        plan: Option<PathBuf>,
        #[command(flatten)]
        args: faultline::launch::RunArgs,
    },
    /// Run the embedded demo plan against the embedded three-node store.
    Demo {
        #[command(flatten)]
        args: faultline::launch::RunArgs,
    },
    /// Attach to a running session: the full UI on it (answer its questions, detach
    /// with `q`), or `--json` for JSON lines. Works over SSH: `ssh -t host faultline
    /// attach`. Who you are is what the kernel says (the socket's peer credentials);
    /// the session's owner, `--approver` and `--viewer` users may attach.
    ///
    /// Exits like `run` when the run ends while attached, 0 when you detach, 77 when
    /// the session refuses you, 66 when there is no such running session.
    Attach(faultline::attach::AttachArgs),
    /// List the running sessions you may attach to, from any directory: your own
    /// and those whose owner listed you; short name, directory, plan, owner, state,
    /// the questions waiting and who is attached.
    Sessions(faultline::attach::SessionsArgs),
    /// Stop a running session as `q` → stop does: heal, write the documents, end.
    ///
    /// Exits like `run`; 77 when you may not stop it (a viewer).
    Stop {
        /// The session's short name (`faultline sessions`) or directory; without
        /// it, the running session you may attach to when there is only one (with
        /// several, stop names them and stops none).
        session: Option<String>,
        /// Only sessions under this session root.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Heal what a killed session left behind: every fault its journal shows injected
    /// but not healed, and every process group it started that is still alive.
    ///
    /// Exits 0 when everything was healed, 1 when an action failed, 66 when the
    /// session's journal cannot be read.
    Heal {
        /// The session directory (holding `journal.jsonl`).
        session: PathBuf,
    },
    /// Continue a session that was killed: heal what it left, end the process groups
    /// its journal recorded, then run on from its first unfinished scenario. A
    /// scenario caught part-way is re-run, or kept as it stood (`resume.<id>`: keep);
    /// every journal line and finished verdict is kept.
    ///
    /// Exits like `run`.
    Resume {
        /// The session directory (holding `journal.jsonl` and `input/`).
        session: PathBuf,
        #[command(flatten)]
        args: faultline::launch::ResumeArgs,
    },
    /// Rewrite a session's session log, findings, verdicts.json and report from its
    /// journal and saved outcome; the same session always gives the same files.
    Report {
        /// The session directory.
        session: PathBuf,
    },
    /// Play a session's journal back in the terminal UI, as it happened: step by
    /// record (`.` `,`), by fault injected, held or healed (`]` `[`) and by scenario
    /// (`}` `{`), or play at 1× to 16× (space, `+` `-`); every screen shows the
    /// session as it stood at that moment. Reads the session, never writes it.
    ///
    /// Exits 0, 64 without a terminal, or 66 when the session cannot be read.
    Replay {
        /// The session directory (holding `journal.jsonl` and `input/`).
        session: PathBuf,
        /// Terminal UI theme.
        #[arg(long)]
        theme: Option<String>,
        /// The TUI config file.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Author mode without running anything: write each scenario's skeleton to its
    /// `Target test file` inside the SUT (provenance header, TODO regions filled from
    /// the run spec, the SUT's formatter), stage the files with git, never commit.
    /// Absolute paths, `..` and symlinks are refused; an existing target is skipped
    /// unless `author.<id>` says overwrite or sibling (`<name>.new.<ext>`).
    ///
    /// Exits 0, or 1 when a scenario was refused (each named with its reason).
    Author {
        /// Path to the markdown test plan.
        plan: PathBuf,
        #[command(flatten)]
        args: faultline::launch::AuthorArgs,
    },
    /// Check a recorded history with a built-in checker (exits 0 valid, 1 invalid,
    /// 3 unknown).
    Check(faultline::oracle::cli::CheckArgs),
    /// Internal: the embedded demo system under test.
    #[command(hide = true)]
    DemoSut(faultline::demo_sut::Args),
    /// Internal: heals SESSION if the faultline that started this ends without saying
    /// it is done (started by `run`, `demo` and `resume`; see `FAULTLINE_WATCHDOG`).
    #[command(hide = true)]
    Watchdog {
        session: PathBuf,
        /// What to journal first if it heals: the death of the watchdog it replaces.
        #[arg(long)]
        after: Option<String>,
    },
}

fn main() -> ExitCode {
    // `faultline --version` alone needs none of the command tree clap builds and then
    // drops (every subcommand, argument and help text): a quarter of the instructions
    // of its start-up (references/development.md, "Start-up").
    let mut args = std::env::args_os().skip(1);
    if let (Some(only), None) = (args.next(), args.next())
        && (only == "--version" || only == "-V")
    {
        say!("faultline {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    // A panic restores the terminal and prints a readable report (color-eyre).
    let _ = color_eyre::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                Exit::USAGE
            } else {
                Exit::OK
            };
            // Printing clap's own message can only fail if stderr is gone.
            let _ = without_hidden(err).print();
            return code.into();
        }
    };
    // `check` runs its histories on threads that allocate at once: one arena
    // would have them queue on its lock (--jobs 2 took twice --jobs 1's time).
    if !matches!(cli.command, Command::Check(_)) {
        one_malloc_arena();
    }
    let code = match cli.command {
        Command::Lint { plan, json, sut } => lint(&plan, json, sut.as_deref()),
        Command::New { system, dir } => new(&system, &dir),
        Command::Toolbox { dir, json } => toolbox(&dir, json),
        Command::Run { plan, args } => run(plan, args).unwrap_or_else(Exit::from),
        Command::Demo { args } => block_on(faultline::launch::demo(args)),
        Command::Attach(args) => block_on(faultline::attach::attach(args)),
        Command::Sessions(args) => block_on(faultline::attach::sessions(args)),
        Command::Stop { session, out } => block_on(faultline::attach::stop(session, out)),
        Command::Heal { session } => heal(&session),
        Command::Resume { session, args } => {
            let args = args.into();
            match faultline::launch::isolate_resume(&session, &args) {
                Ok(()) => block_on(faultline::launch::resume(&session, args)),
                Err(halt) => halt.into(),
            }
        }
        Command::Report { session } => faultline::launch::report(&session),
        Command::Replay {
            session,
            theme,
            config,
        } => match faultline::tui::app::setup_for(theme.as_deref(), config.as_deref()) {
            Ok(setup) => faultline::tui::replay::run(&session, setup),
            Err(halt) => halt.0,
        },
        Command::Author { plan, args } => block_on(faultline::launch::author(&plan, args)),
        Command::Check(args) => faultline::oracle::cli::run(&args),
        // The demo system under test is a program of its own: std's codes, and no
        // namespace to leave.
        Command::DemoSut(args) => return faultline::demo_sut::run(args),
        Command::Watchdog { session, after } => {
            faultline::session::watchdog::watch(&session, after.as_deref())
        }
    };
    faultline::launch::leave_netns();
    code.into()
}

/// `err` without the hidden subcommands (`demo-sut`, `watchdog`) among its
/// did-you-mean suggestions: clap offers every subcommand it knows, and those two
/// are for faultline's own use. With none left, no suggestion is made.
fn without_hidden(err: clap::Error) -> clap::Error {
    use clap::CommandFactory;
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::Strings(offered)) = err.get(ContextKind::SuggestedSubcommand) else {
        return err;
    };
    let cli = Cli::command();
    let hidden: Vec<&str> = cli
        .get_subcommands()
        .filter(|c| c.is_hide_set())
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
        .collect();
    let kept: Vec<String> = offered
        .iter()
        .filter(|name| !hidden.contains(&name.as_str()))
        .cloned()
        .collect();
    if kept.len() == offered.len() {
        return err;
    }
    // The same error again, every context but the suggestion carried over.
    let mut clean = clap::Error::new(err.kind()).with_cmd(&cli);
    for (kind, value) in err.context() {
        if kind != ContextKind::SuggestedSubcommand {
            clean.insert(kind, value.clone());
        }
    }
    if !kept.is_empty() {
        clean.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(kept),
        );
    }
    clean
}

/// `faultline run [PLAN]`: the plan named or picked, read, and the network namespace
/// entered (before the async runtime starts), then the run.
fn run(plan: Option<PathBuf>, args: faultline::launch::RunArgs) -> Result<Exit, Halt> {
    let plan = match plan {
        Some(plan) => plan,
        None => faultline::launch::choose_plan(&args)?,
    };
    let input = faultline::launch::read_plan(&plan)?;
    faultline::launch::isolate(&input, &args)?;
    // Absolute, so the reproducer built on it runs from anywhere.
    let again = format!(
        "faultline run {}",
        std::path::absolute(&plan).unwrap_or(plan.clone()).display()
    );
    Ok(block_on(faultline::launch::run(
        input,
        args,
        Tier::Smoke,
        again,
    )))
}

/// glibc gives each thread that allocates under contention an arena of its own
/// (up to 8 per core), and memory freed to one arena serves only its threads: a
/// long session's documents, built on the runtime's worker threads in turn, left
/// that much more resident (issue 33: peak RSS 20–30% lower with one arena). The
/// session allocates little concurrently, so one arena costs it no measurable time;
/// `faultline check`'s jobs do, and keep glibc's arenas.
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of the allocator; it is called before any
    // other thread exists.
    unsafe {
        nix::libc::mallopt(nix::libc::M_ARENA_MAX, 1);
    }
}

fn block_on(fut: impl std::future::Future<Output = Exit>) -> Exit {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(fut),
        Err(e) => {
            say_err!("faultline: cannot start the async runtime: {e}");
            Exit::FAILED
        }
    }
}

fn heal(session: &std::path::Path) -> Exit {
    match faultline::session::heal::heal_session(session) {
        Ok(healed) => {
            for skipped in &healed.skipped {
                say!("journal {skipped}; healed from the records around it");
            }
            for line in &healed.actions {
                say!("healed: {line}");
            }
            for line in &healed.failures {
                say!("FAILED: {line}");
            }
            if healed.failures.is_empty() {
                Exit::OK
            } else {
                Exit::FAILED
            }
        }
        Err(e) => {
            say_err!("faultline: {e}");
            Exit::UNREADABLE
        }
    }
}

fn toolbox(dir: &std::path::Path, json: bool) -> Exit {
    let found = match faultline::toolbox::discover(dir) {
        Ok(found) => found,
        Err(err) => {
            say_err!("faultline: {err}");
            return Exit::UNREADABLE;
        }
    };
    if json {
        match serde_json::to_string_pretty(&found) {
            Ok(out) => say!("{}", faultline::sanitize::json(&out)),
            Err(err) => {
                say_err!("faultline: cannot encode the toolbox: {err}");
                return Exit::FAILED;
            }
        }
    } else {
        say!(raw "{}", faultline::toolbox::render_text(&found));
    }
    Exit::OK
}

/// The plan's run spec (embedded blocks and sidecar), or the hand-back problems of
/// one that does not load: `run` refuses it, so lint hands the plan back for it.
fn load_spec(
    parsed: &plan::Plan,
    input: &faultline::launch::PlanInput,
) -> Result<faultline::runspec::RunSpec, Vec<plan::lint::Problem>> {
    let sidecar = input.spec.as_ref().map(|(f, t)| (f.as_str(), t.as_str()));
    faultline::runspec::load(parsed, sidecar).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| plan::lint::Problem {
                line: usize::try_from(e.line).unwrap_or(0),
                column: usize::try_from(e.column).unwrap_or(0),
                // The sidecar's lines are its own, not the plan's.
                file: Some(e.file.clone()),
                // `scenarios.S1.faults[0].after` belongs to S1.
                scenario: e
                    .field
                    .as_deref()
                    .and_then(|f| f.strip_prefix("scenarios."))
                    .and_then(|f| f.split(['.', '[']).next())
                    .map(str::to_string),
                field: match &e.field {
                    Some(f) => format!("run spec field `{f}`"),
                    None => "run spec".into(),
                },
                message: e.message,
                severity: plan::lint::Severity::HandBack,
            })
            .collect()
    })
}

/// Warnings for run-spec bindings that re-implement a driver the SUT already has, and
/// for landing probes that do not watch the signal a scenario's §7.M block declares.
fn toolbox_problems(
    parsed: &plan::Plan,
    spec: &faultline::runspec::RunSpec,
    sut: Option<&std::path::Path>,
) -> Vec<plan::lint::Problem> {
    let here = std::path::PathBuf::from(".");
    let Ok(found) = faultline::toolbox::discover(sut.unwrap_or(&here)) else {
        return Vec::new();
    };
    let mut problems: Vec<plan::lint::Problem> = spec
        .bindings
        .iter()
        .flat_map(|(id, (binding, origin))| {
            let line = usize::try_from(origin.line).unwrap_or(0);
            // The binding's line is in the file it came from (the sidecar, or the plan
            // for an embedded block), never a plan line by default.
            faultline::toolbox::reimplemented(&found, id, binding, line)
                .into_iter()
                .map(|p| plan::lint::Problem {
                    file: Some(origin.file.clone()),
                    ..p
                })
        })
        .collect();
    problems.extend(faultline::runspec::landing_lint::landing_mismatches(
        parsed, spec,
    ));
    problems
}

fn new(system: &str, dir: &std::path::Path) -> Exit {
    if let Err(why) = plan::scaffold::check_name(system) {
        say_err!("faultline new: {why}");
        return Exit::USAGE;
    }
    let today = chrono::Local::now().format("%Y-%m-%d").to_string();
    match plan::scaffold::write(system, dir, &today) {
        Ok(written) => {
            say!(
                "wrote {} and {}\nnext: replace each FILL IN (the run spec's vars, the landing \
                 pattern, the plan's header), then\n  faultline lint {}\n  faultline run {} --only S1\n\
                 references/getting-started.md walks through it",
                written.plan.display(),
                written.run_spec.display(),
                written.plan.display(),
                written.plan.display()
            );
            Exit::OK
        }
        Err(why) => {
            say_err!("faultline new: {why}");
            Exit::CANT_CREATE
        }
    }
}

fn lint(path: &std::path::Path, json: bool, sut: Option<&std::path::Path>) -> Exit {
    // The same reader `run` uses: a plan or a sidecar that is there but unreadable (or
    // not UTF-8) is an error naming it, never a missing sidecar.
    let input = match faultline::launch::read_plan(path) {
        Ok(input) => input,
        Err(halt) => return halt.into(),
    };
    let parsed = plan::parse::parse_plan(&path.display().to_string(), &input.plan_text);
    let mut problems = plan::lint::lint(&parsed);
    let spec = load_spec(&parsed, &input);
    let sidecar = faultline::runspec::sidecar_path(path);
    let bindings: Option<Vec<&str>> = spec
        .as_ref()
        .ok()
        .map(|spec| spec.bindings.keys().map(String::as_str).collect());
    let privileged = match &spec {
        Ok(spec) => {
            problems.extend(faultline::runspec::traps::traps(spec));
            problems.extend(faultline::runspec::history_fields::dropped_fields(
                &parsed, spec,
            ));
            problems.extend(faultline::runspec::history_fields::dropped_mappings(spec));
            problems.extend(toolbox_problems(&parsed, spec, sut));
            faultline::engine::privileged::by_binding(spec)
        }
        Err(refused) => {
            problems.extend(refused.iter().cloned());
            BTreeMap::new()
        }
    };
    if json {
        let mut value = plan::render::lint_json(&parsed, &problems);
        value["privileged"] = serde_json::json!(privileged);
        value["run_spec"] = match &bindings {
            Some(ids) => serde_json::json!({
                "sidecar": sidecar.display().to_string(),
                "sidecar_found": input.spec.is_some(),
                "embedded_blocks": parsed.embedded_run_specs.len(),
                "bindings": ids,
            }),
            None => serde_json::Value::Null,
        };
        match serde_json::to_string_pretty(&value) {
            Ok(out) => say!("{}", faultline::sanitize::json(&out)),
            Err(err) => {
                say_err!("faultline: cannot encode lint result: {err}");
                return Exit::FAILED;
            }
        }
    } else {
        // Which run spec lint read, and what it binds: a missing sidecar is said, not
        // guessed at.
        match &bindings {
            Some(ids) => say!(
                "Run spec: {} ({}), {} block(s) in the plan; bindings: {}",
                sidecar.display(),
                if input.spec.is_some() {
                    "read"
                } else {
                    "none found"
                },
                parsed.embedded_run_specs.len(),
                if ids.is_empty() {
                    "none".to_string()
                } else {
                    ids.join(", ")
                }
            ),
            None => say!(
                "Run spec: {} did not load (its problems are listed below)",
                sidecar.display()
            ),
        }
        say!(raw "{}", plan::render::lint_text(&parsed, &problems));
        if !privileged.is_empty() {
            say!(
                "\nPrivileged fault actions (each asked as privileged.<id> before the run; \
                 --approve-privileged approves them, --yes declines):"
            );
            for (id, actions) in &privileged {
                say!("  {id}: {}", actions.join(" | "));
            }
        }
    }
    if plan::lint::hands_back(&problems) {
        Exit::HANDED_BACK
    } else {
        Exit::OK
    }
}
