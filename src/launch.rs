//! `faultline run` and `faultline demo`: plan intake (hand-back before anything is
//! created), the scripted operator, signal handling, headless progress, exit codes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;

use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

use crate::engine::driver;
use crate::engine::request::Request;
use crate::exit::{Exit, Halt};
use crate::plan::{self, Plan};
use crate::runspec;
use crate::session::operator::{QuestionKind, Scripted, parse_answers_at};
use crate::verdict::Tier;

/// The demo plan and run spec, compiled in so `faultline demo` needs no checkout.
pub const DEMO_PLAN: &str = include_str!("../examples/demo/plan.md");
pub const DEMO_RUN_SPEC: &str = include_str!("../examples/demo/plan.run.yaml");

/// Options shared by `run` and `demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// The SUT repository commands run in (default: the current directory).
    #[arg(long)]
    pub sut: Option<PathBuf>,
    /// Session root; the session directory is `<out>/<plan_slug>/<timestamp>/`
    /// (default: `<sut>/test-sessions`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Budget tier to run (`run` defaults to smoke, `demo` to hardening).
    #[arg(long, value_enum)]
    pub tier: Option<Tier>,
    /// Comma-separated scenario or arm ids to run; the rest are NOT-RUN.
    #[arg(long, value_delimiter = ',')]
    pub only: Option<Vec<String>>,
    /// Answer every question with its default (never approves a machine change).
    #[arg(long)]
    pub yes: bool,
    /// YAML answers keyed by question id.
    #[arg(long)]
    pub answers: Option<PathBuf>,
    /// Approve the low-blast-radius installs faultline offers (one named system
    /// package, or a file in the session's own `bin/`); `--yes` never does.
    #[arg(long)]
    pub approve_installs: bool,
    /// Approve the privileged fault actions the run spec binds (iptables rules,
    /// tmpfs mounts, Docker engine actions), each healed when its fault ends;
    /// `--yes` never does.
    #[arg(long)]
    pub approve_privileged: bool,
    /// Print every question known before the run, with its default, as an answers
    /// file; start nothing.
    #[arg(long)]
    pub answers_template: bool,
    /// Plain progress lines instead of the terminal UI.
    #[arg(long)]
    pub headless: bool,
    /// Write the findings report here instead of `findings/report.md`.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Terminal UI theme: dark, light or high-contrast (`NO_COLOR` is honoured);
    /// default: the config file's, else dark.
    #[arg(long)]
    pub theme: Option<String>,
    /// The TUI config file (theme, mouse, key bindings); default:
    /// `$FAULTLINE_CONFIG`, else `$XDG_CONFIG_HOME/faultline/config.toml`.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Re-runs a reproducible FAIL's reduction may spend (0: no reduction).
    #[arg(long, default_value_t = 8)]
    pub reduce_runs: u32,
    /// Time a reproducible FAIL's reduction may spend (`90s`, `10m`).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    pub reduce_time: std::time::Duration,
    /// Author mode inside the run (also `DIST_TEST_AUTHOR_MODE=1`): after the
    /// preflight, write each scenario's skeleton to its target test file, stage it,
    /// build it, and let a complete authored test drive its scenario's workload.
    #[arg(long)]
    pub author: bool,
    /// Start the session without a UI and print its directory; the run goes on in
    /// the background and waits for `faultline attach` to answer its questions.
    #[arg(long)]
    pub detach: bool,
    /// A user who may attach and answer (installs and privileged actions included)
    /// and stop the run; repeatable. The owner (who starts it) always may.
    #[arg(long = "approver", value_name = "USER")]
    pub approvers: Vec<String>,
    /// A user who may attach and watch, never answer; repeatable.
    #[arg(long = "viewer", value_name = "USER")]
    pub viewers: Vec<String>,
    /// Internal: be the session's server process (started by `run` / `demo` /
    /// `resume` for the UI and `--detach`).
    #[arg(long, hide = true)]
    pub serve: bool,
}

/// Author mode is opt-in: the flag, or `DIST_TEST_AUTHOR_MODE=1` exactly.
fn author_mode(args: &RunArgs) -> bool {
    args.author || std::env::var("DIST_TEST_AUTHOR_MODE").is_ok_and(|v| v.trim() == "1")
}

fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    crate::runspec::duration::parse(text)
}

/// What `faultline resume` takes; the plan, SUT, tier and scenarios come from the
/// session itself.
#[derive(Debug, Clone, clap::Args)]
pub struct ResumeArgs {
    /// Answer every question with its default (an interrupted scenario is re-run).
    #[arg(long)]
    pub yes: bool,
    /// YAML answers keyed by question id (`resume.<id>: keep` keeps a scenario as it
    /// stood); they override the answers replayed from the journal.
    #[arg(long)]
    pub answers: Option<PathBuf>,
    /// Approve the low-blast-radius installs faultline offers.
    #[arg(long)]
    pub approve_installs: bool,
    /// Approve the privileged fault actions (asked again on resume, never replayed).
    #[arg(long)]
    pub approve_privileged: bool,
    /// Plain progress lines instead of the terminal UI.
    #[arg(long)]
    pub headless: bool,
    /// Terminal UI theme: dark, light or high-contrast.
    #[arg(long)]
    pub theme: Option<String>,
    /// The TUI config file.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Resume without a UI and print the session directory (see `run --detach`).
    #[arg(long)]
    pub detach: bool,
    /// A user who may attach and answer; repeatable.
    #[arg(long = "approver", value_name = "USER")]
    pub approvers: Vec<String>,
    /// A user who may attach and watch; repeatable.
    #[arg(long = "viewer", value_name = "USER")]
    pub viewers: Vec<String>,
    #[arg(long, hide = true)]
    pub serve: bool,
}

impl From<ResumeArgs> for RunArgs {
    fn from(args: ResumeArgs) -> RunArgs {
        RunArgs {
            sut: None,
            out: None,
            tier: None,
            only: None,
            yes: args.yes,
            answers: args.answers,
            approve_installs: args.approve_installs,
            approve_privileged: args.approve_privileged,
            answers_template: false,
            headless: args.headless,
            report: None,
            theme: args.theme,
            config: args.config,
            reduce_runs: 0,
            reduce_time: std::time::Duration::ZERO,
            author: false,
            detach: args.detach,
            approvers: args.approvers,
            viewers: args.viewers,
            serve: args.serve,
        }
    }
}

/// The plan to run when none was named: picked in the terminal from the SUT's plans;
/// without a terminal the candidates are listed and it is a usage error.
pub fn choose_plan(args: &RunArgs) -> Result<PathBuf, Halt> {
    use std::io::IsTerminal;
    let sut = args.sut.clone().unwrap_or_else(|| PathBuf::from("."));
    let found = crate::plan::discover::plans(&sut);
    if args.headless || !std::io::stdout().is_terminal() {
        crate::say_err!("faultline: name a PLAN to run (no terminal for the picker); found:");
        for f in &found {
            crate::say_err!("  {}  {}", f.path.display(), f.title);
        }
        if found.is_empty() {
            crate::say_err!(
                "  none under {}/docs/testing-plans/ and no markdown file titled \"Test Plan:\"",
                sut.display()
            );
        }
        return Err(Halt(Exit::USAGE));
    }
    let setup = ui_setup(args)?;
    crate::tui::picker::pick(&sut, found, &setup.theme, &setup.keymap).ok_or_else(|| {
        crate::say_err!("faultline: no plan picked; nothing was started");
        Halt(Exit::USAGE)
    })
}

/// Theme, keymap and mouse for the TUI: the flag, then the config file, then the
/// compiled-in defaults. A bad config file is a usage error naming file and line.
fn ui_setup(args: &RunArgs) -> Result<crate::tui::app::Setup, Halt> {
    crate::tui::app::setup_for(args.theme.as_deref(), args.config.as_deref())
}

pub use crate::session::resume::PlanInput;

/// Reads a plan file and its sidecar `<plan>.run.yaml` (if present).
pub fn read_plan(path: &Path) -> Result<PlanInput, Halt> {
    let plan_text = plan::read_text(path).map_err(|e| {
        crate::say_err!("faultline: cannot read plan {}: {e}", path.display());
        Halt(Exit::UNREADABLE)
    })?;
    let sidecar = runspec::sidecar_path(path);
    let spec = if sidecar.exists() {
        let text = plan::read_text(&sidecar).map_err(|e| {
            crate::say_err!("faultline: cannot read run spec {}: {e}", sidecar.display());
            Halt(Exit::UNREADABLE)
        })?;
        Some((sidecar.display().to_string(), text))
    } else {
        None
    };
    Ok(PlanInput {
        plan_label: path.to_path_buf(),
        plan_text,
        spec,
    })
}

/// Lints the plan and loads its run spec; any hand-back is printed and returns 65
/// before anything is created or started.
/// In a terminal (and not `--headless`), the hand-back is shown on the Plan screen first.
fn accept(input: &PlanInput, args: &RunArgs) -> Result<(Plan, runspec::RunSpec), Halt> {
    let source = input.plan_label.display().to_string();
    let parsed = plan::parse::parse_plan(&source, &input.plan_text);
    let problems = plan::lint::lint(&parsed);
    if plan::lint::hands_back(&problems) {
        use std::io::IsTerminal;
        if !args.headless && !args.answers_template && std::io::stdout().is_terminal() {
            let setup = ui_setup(args)?;
            crate::tui::app::hand_back(parsed.clone(), &setup);
        }
        crate::say_err!(raw "{}", plan::render::lint_text(&parsed, &problems));
        crate::say_err!("faultline: plan handed back; nothing was started");
        return Err(Halt(Exit::HANDED_BACK));
    }
    let sidecar = input.spec.as_ref().map(|(f, t)| (f.as_str(), t.as_str()));
    let spec = runspec::load(&parsed, sidecar).map_err(|errors| {
        for e in &errors {
            crate::say_err!("{e}");
        }
        crate::say_err!("faultline: run spec rejected; nothing was started");
        Halt(Exit::HANDED_BACK)
    })?;
    // What lint calls a trap would spend a cluster run on a verdict known now; only
    // the scenarios this run will run count (`--only`).
    let runs = |id: &str| {
        args.only.as_ref().is_none_or(|only| {
            let scenario = id.split('/').next().unwrap_or(id);
            only.iter()
                .any(|o| o == id || o == scenario || o.split('/').next() == Some(id))
        })
    };
    // Bindings this run skips are left out before a value several of them share is
    // merged into one problem.
    let traps = runspec::traps::traps_where(&spec, runs);
    // An answers template only lists questions: nothing runs that a trap would waste.
    if !traps.is_empty() && !args.answers_template {
        crate::say_err!(raw "{}", plan::render::lint_text(&parsed, &traps));
        crate::say_err!("faultline: run spec handed back; nothing was started");
        return Err(Halt(Exit::HANDED_BACK));
    }
    Ok((parsed, spec))
}

/// Every question a run of `plan` can ask that is known before it starts: the
/// preflight's, each scenario's FAIL classification, resume's, author mode's.
pub fn known_questions(
    plan: &Plan,
    spec: &runspec::RunSpec,
    toolbox: Option<&crate::toolbox::Toolbox>,
) -> Vec<crate::session::operator::Question> {
    let mut out = crate::engine::preflight::questions(plan, spec, toolbox);
    for s in &plan.scenarios {
        out.extend(crate::engine::driver::classification_questions(&s.id, true));
    }
    out
}

/// Refuses an answers file that gives a question an answer it does not take, before
/// anything starts: every such entry, with its line and the allowed answers.
fn check_answers(
    op: &Scripted,
    args: &RunArgs,
    known: &[crate::session::operator::Question],
) -> Result<(), Halt> {
    let Some(path) = &args.answers else {
        return Ok(());
    };
    let bad = crate::session::operator::check_answers(
        &path.display().to_string(),
        &op.answers,
        &op.answer_lines,
        known,
    );
    if bad.is_empty() {
        return Ok(());
    }
    for b in &bad {
        crate::say_err!("faultline: {b}");
    }
    crate::say_err!("faultline: answers file refused; nothing was started");
    Err(Halt(Exit::USAGE))
}

fn operator(args: &RunArgs) -> Result<Scripted, Halt> {
    let mut op = Scripted {
        yes: args.yes,
        approve_installs: args.approve_installs,
        approve_privileged: args.approve_privileged,
        answers: BTreeMap::new(),
        answer_lines: BTreeMap::new(),
        source: if args.yes {
            "--yes".into()
        } else {
            "headless".into()
        },
    };
    if let Some(path) = &args.answers {
        let text = std::fs::read_to_string(path).map_err(|e| {
            crate::say_err!(
                "faultline: cannot read answers file {}: {e}",
                path.display()
            );
            Halt(Exit::UNREADABLE)
        })?;
        let parsed = parse_answers_at(&path.display().to_string(), &text).map_err(|e| {
            crate::say_err!("faultline: {e}");
            Halt(Exit::USAGE)
        })?;
        for (id, (answer, line)) in parsed {
            op.answer_lines.insert(id.clone(), line);
            op.answers.insert(id, answer);
        }
        op.source = format!("answers file {}", path.display());
    }
    Ok(op)
}

/// Cancels `token` on SIGINT / SIGTERM / SIGHUP and remembers which signal came first.
fn watch_signals(token: CancellationToken) -> Arc<OnceLock<nix::sys::signal::Signal>> {
    use nix::sys::signal::Signal;
    use tokio::signal::unix::{SignalKind, signal};
    let caught = Arc::new(OnceLock::new());
    for (kind, caught_as) in [
        (SignalKind::interrupt(), Signal::SIGINT),
        (SignalKind::terminate(), Signal::SIGTERM),
        (SignalKind::hangup(), Signal::SIGHUP),
    ] {
        let Ok(mut stream) = signal(kind) else {
            tracing::warn!("cannot listen for signal {}", caught_as as i32);
            continue;
        };
        let token = token.clone();
        let caught = caught.clone();
        tokio::spawn(async move {
            if stream.recv().await.is_some() {
                let _ = caught.set(caught_as);
                token.cancel();
            }
        });
    }
    caught
}

/// Every question known before the run, as an answers file holding the defaults.
pub fn answers_template(
    plan: &Plan,
    spec: &runspec::RunSpec,
    toolbox: Option<&crate::toolbox::Toolbox>,
) -> String {
    let mut out = String::from(
        "# faultline answers file: question id → answer. Delete a line to be asked.\n",
    );
    let mut line = |id: &str, prompt: &str, default: &str| {
        out.push_str(&format!(
            "# {}\n{id}: {}\n",
            prompt.replace('\n', " "),
            yaml_string(default)
        ));
    };
    for q in known_questions(plan, spec, toolbox) {
        let prompt = match q.kind {
            QuestionKind::ClassifyFailure | QuestionKind::Describe => {
                format!("asked on a FAIL: {}", q.prompt)
            }
            _ => q.prompt.clone(),
        };
        line(&q.id, &format!("{prompt} [{}]", q.allowed()), &q.default);
    }
    out
}

fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
}

/// Runs an accepted plan to its session verdict; returns the process exit code.
/// `rerun_command` is how a reproducer re-runs it (`faultline run PLAN`).
pub async fn run(
    input: PlanInput,
    args: RunArgs,
    default_tier: Tier,
    rerun_command: String,
) -> Exit {
    let (plan, spec) = match accept(&input, &args) {
        Ok(accepted) => accepted,
        Err(halt) => return halt.into(),
    };
    if args.answers_template {
        let sut = args.sut.clone().unwrap_or_else(|| PathBuf::from("."));
        let found = crate::toolbox::discover(&sut).ok();
        crate::say!(raw "{}", answers_template(&plan, &spec, found.as_ref()));
        if author_mode(&args) {
            for q in crate::author::questions(&plan, &sut, args.only.as_deref()) {
                crate::say!("# {}\n{}: {}", q.prompt, q.id, yaml_string(&q.default));
            }
        }
        return Exit::OK;
    }
    let operator = match operator(&args) {
        Ok(op) => op,
        Err(halt) => return halt.into(),
    };
    if let Err(halt) = check_answers(&operator, &args, &known_questions(&plan, &spec, None)) {
        return halt.into();
    }
    // Absolute: commands run with the SUT directory as their working directory, so a
    // relative `--sut dir` would make `${sut}/x` point at dir/dir/x.
    let sut_dir = match args
        .sut
        .clone()
        .map_or_else(std::env::current_dir, std::path::absolute)
    {
        Ok(dir) => dir,
        Err(e) => {
            crate::say_err!("faultline: cannot resolve the SUT directory: {e}");
            return Exit::UNREADABLE;
        }
    };
    let out_root = args
        .out
        .clone()
        .unwrap_or_else(|| sut_dir.join("test-sessions"));
    let _log_guard = crate::logging::to_file(&out_root);
    let exe = std::env::current_exe()
        .map_or_else(|_| "faultline".to_string(), |p| p.display().to_string());
    // A reproducer runs from any directory: it names the SUT and the session root.
    let absolute = |p: &Path| {
        let p = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let text = p.display().to_string();
        shlex::try_quote(&text).map_or(text.clone(), |q| q.into_owned())
    };
    // The standing approvals the operator gave this run go with it, so the reproducer
    // meets the same answers (a headless re-run cannot ask for them).
    let approvals: String = [
        (args.approve_privileged, " --approve-privileged"),
        (args.approve_installs, " --approve-installs"),
    ]
    .iter()
    .filter(|(given, _)| *given)
    .map(|(_, flag)| *flag)
    .collect();
    let rerun_command = format!(
        "{rerun_command} --sut {} --out {}{approvals}",
        absolute(&sut_dir),
        absolute(&out_root)
    );
    let request = Request {
        plan: std::sync::Arc::new(plan),
        plan_path: input.plan_label.clone(),
        spec,
        sut_dir: sut_dir.clone(),
        out_root,
        tier: args.tier.unwrap_or(default_tier),
        only: args.only.clone(),
        report_path: args.report.clone(),
        vars: BTreeMap::from([
            ("faultline".to_string(), exe),
            ("sut".to_string(), sut_dir.display().to_string()),
        ]),
        started_by: operator.source.clone(),
        rerun_command,
        // Moved, not copied: the text grows with the plan.
        plan_text: input.plan_text,
        spec_source: input.spec,
        resume: None,
        reduce: crate::engine::request::ReduceBudget {
            runs: args.reduce_runs,
            time: args.reduce_time,
        },
        watchdog: true,
        author: author_mode(&args),
    };
    execute(request, &args, operator).await
}

/// Enters the run's own network namespace when its run spec says `isolate: netns`
/// and this process runs the engine (headless, or the session server; a UI client
/// that hands the run to a server stays where it is). Called before the async
/// runtime starts, so every thread made after it is in the namespace. A plan or run
/// spec that does not load is left for `run` to hand back. Exit 74 when the
/// namespace cannot be made: nothing was started.
pub fn isolate(input: &PlanInput, args: &RunArgs) -> Result<(), Halt> {
    if args.answers_template || spawns_server(args) {
        return Ok(());
    }
    let parsed = plan::parse::parse_plan(&input.plan_label.display().to_string(), &input.plan_text);
    if plan::lint::hands_back(&plan::lint::lint(&parsed)) {
        return Ok(());
    }
    let sidecar = input.spec.as_ref().map(|(f, t)| (f.as_str(), t.as_str()));
    match runspec::load(&parsed, sidecar) {
        Ok(spec) if spec.isolated() => crate::host::netns::enter().map(|_| ()).map_err(|why| {
            // `why` says the cause (no `ip`, every name taken, `ip`'s own words).
            let root = if nix::unistd::geteuid().is_root() {
                ""
            } else {
                " (a namespace of the run's own needs root)"
            };
            crate::say_err!("faultline: `isolate: netns`: {why}; nothing was started{root}");
            Halt(Exit::ENVIRONMENT)
        }),
        _ => Ok(()),
    }
}

/// [`isolate`] for `faultline resume SESSION`: the session's saved plan and run spec.
pub fn isolate_resume(session: &Path, args: &RunArgs) -> Result<(), Halt> {
    match crate::session::resume::load(session) {
        Ok(saved) => isolate(&saved.input, args),
        // `resume` says why it cannot.
        Err(_) => Ok(()),
    }
}

/// Deletes the run's namespace if it is still there: the engine deletes (and journals)
/// it at the end of a session; this covers a run that ended before its journal did.
pub fn leave_netns() {
    if let Some(isolated) = crate::host::netns::entered() {
        let _ = crate::host::netns::delete(&isolated.name, isolated.inode);
    }
}

/// Whether this invocation hands the run to a session server process of its own
/// (the UI and `--detach` do; `--headless` runs in this process).
fn spawns_server(args: &RunArgs) -> bool {
    use std::io::IsTerminal;
    !args.serve && (args.detach || (!args.headless && std::io::stdout().is_terminal()))
}

/// Runs a request to its session verdict: as the session server (`--serve`), by
/// starting one and attaching the UI (or detaching), or headless in this process.
/// Returns the exit code (128 + N when signal N stopped it, after healing).
async fn execute(request: Request, args: &RunArgs, operator: Scripted) -> Exit {
    use std::io::IsTerminal;
    for user in args.approvers.iter().chain(&args.viewers) {
        if let Err(why) = crate::session::roles::check_user(user) {
            crate::say_err!("faultline: --approver / --viewer: {why}; nothing was started");
            return Exit::USAGE;
        }
    }
    if args.serve {
        return serve(request, args, operator).await;
    }
    if spawns_server(args) {
        let setup = if args.detach {
            None
        } else {
            match ui_setup(args) {
                Ok(setup) => Some(setup),
                Err(halt) => return halt.into(),
            }
        };
        return crate::attach::start_and_attach(setup).await;
    }
    if !args.headless && !std::io::stdout().is_terminal() {
        crate::say_err!("faultline: stdout is not a terminal; running headless");
    }
    let cancel = CancellationToken::new();
    let caught = watch_signals(cancel.clone());
    let (tx, rx) = unbounded_channel();
    let printer = tokio::spawn(crate::headless::print(
        rx,
        std::io::stdout(),
        crate::headless::HEARTBEAT,
        crate::headless::colour_for_stdout(),
    ));
    let roles = crate::session::roles::Roles::started_here(&args.approvers, &args.viewers);
    let mut operator = operator;
    let result = served(
        &request,
        roles,
        &mut operator,
        None,
        cancel,
        Some(tx),
        &caught,
    )
    .await;
    let _ = printer.await;
    let ending = result.ending;
    crate::attach::print_notes(&ending.notes);
    if let Some(question) = &ending.unanswered {
        crate::say_err!("faultline: {question}");
    }
    crate::attach::print_ending(&ending);
    Exit::relayed(ending.exit)
}

/// The session server (`--serve`): its own session (no controlling terminal, so a
/// closing terminal's hang-up never reaches it), says `ready <dir>` on stdout once it
/// listens, then lets go of the starter's pipes and runs to the end. Questions the
/// answers file does not answer wait for an attached operator.
async fn serve(request: Request, args: &RunArgs, operator: Scripted) -> Exit {
    // Fails only when already a group leader; then it has no terminal to lose either.
    let _ = nix::unistd::setsid();
    let cancel = CancellationToken::new();
    let caught = watch_signals(cancel.clone());
    let roles = crate::session::roles::Roles::started_here(&args.approvers, &args.viewers);
    let mut scripted = Scripted {
        yes: args.yes,
        ..operator
    };
    let served = served(
        &request,
        roles,
        &mut scripted,
        Some(announce_ready),
        cancel,
        None,
        &caught,
    )
    .await;
    Exit::relayed(served.ending.exit)
}

/// Tells the starter where the session is, then points stdout and stderr at
/// /dev/null: the starter stops reading, and nothing may write into a closed pipe.
fn announce_ready(dir: &Path) {
    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = writeln!(out, "ready {}", dir.display());
    let _ = out.flush();
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
}

/// What a served run came to.
struct Served {
    ending: crate::session::wire::Ending,
}

/// Opens the session, starts its server, runs the engine, tells the clients how it
/// ended. With `ready`, questions go to attached operators (after the answers file);
/// without, the scripted operator answers alone (headless) and clients only watch.
async fn served(
    request: &Request,
    roles: crate::session::roles::Roles,
    scripted: &mut Scripted,
    ready: Option<fn(&Path)>,
    cancel: CancellationToken,
    printer: Option<tokio::sync::mpsc::UnboundedSender<crate::session::journal::Record>>,
    caught: &OnceLock<nix::sys::signal::Signal>,
) -> Served {
    // A runtime directory that is not safely ours stops everything before anything
    // is made: a session nobody could attach to safely is not started.
    if let Err(e) = crate::session::runtime::RuntimeDir::own().and_then(|r| r.fits_sockets()) {
        if let Some(ready) = ready {
            crate::say_err!("faultline: {e}; nothing was started");
            ready(Path::new(""));
        }
        return Served {
            ending: crate::session::wire::Ending {
                exit: Exit::ENVIRONMENT.into(),
                notes: vec![format!("faultline: {e}; nothing was started")],
                ..Default::default()
            },
        };
    }
    let opened = match driver::open(request, &roles) {
        Ok(opened) => opened,
        Err(e) => {
            if let Some(ready) = ready {
                // Said on stderr before the pipes go: the starter relays it.
                crate::say_err!("faultline: {e}");
                ready(Path::new(""));
            }
            let (code, notes) = stopped(&e);
            return Served {
                ending: crate::session::wire::Ending {
                    exit: code.into(),
                    notes,
                    ..Default::default()
                },
            };
        }
    };
    let dir = opened.dir.path.clone();
    let plan = request.plan_path.display().to_string();
    let server = match crate::session::server::Server::start(
        &dir,
        &opened.journal,
        roles,
        &plan,
        cancel.clone(),
    ) {
        Ok(server) => Some(server),
        Err(e) => {
            // The session directory is as private as ever; only attaching is lost.
            tracing::warn!("no session server: {e}");
            // The directory was made private when it was created: only attaching is lost.
            crate::say_err!(
                "faultline: {e}: attach is unavailable for this session; its directory is \
                 private all the same"
            );
            None
        }
    };
    if let Some(ready) = ready {
        ready(&dir);
    }
    let (tap, mut taps) = unbounded_channel::<crate::session::journal::Record>();
    let (to_server, from_tap) = unbounded_channel();
    if let Some(server) = &server {
        server.follow(from_tap);
    }
    let fan_out = tokio::spawn(async move {
        while let Some(record) = taps.recv().await {
            if let Some(printer) = &printer {
                let _ = printer.send(record.clone());
            }
            let _ = to_server.send(record);
        }
    });
    let result = match (&server, ready) {
        (Some(server), Some(_)) => {
            let mut operator = crate::session::operator::Layered {
                scripted: std::mem::take(scripted),
                interactive: server.operator(),
            };
            driver::run(request, opened, &mut operator, cancel, Some(tap)).await
        }
        _ => driver::run(request, opened, scripted, cancel, Some(tap)).await,
    };
    if let Some(server) = &server {
        server.release_journal();
    }
    let _ = fan_out.await;
    let ending = match result {
        Ok(ended) => {
            // Every fault is healed and every child ended: the watchdog may stand down.
            crate::session::watchdog::disarm();
            let verdict = ended
                .outcome
                .verdict
                .unwrap_or(crate::verdict::SessionVerdict::Blocked);
            let (report, unwritten) = match ended.report {
                Ok(path) => (Some(path.display().to_string()), None),
                Err(text) => (None, Some(text)),
            };
            // A stop during a reduction keeps the FAIL: say how to finish the reduction.
            let notes = ended
                .outcome
                .scenarios
                .iter()
                .filter(|s| s.cut_short())
                .map(|s| {
                    format!(
                        "{}: {}",
                        s.id,
                        driver::cut_short_sentence(&ended.outcome.session_dir)
                    )
                })
                .collect();
            crate::session::wire::Ending {
                session: ended.outcome.session_dir.clone(),
                verdict: Some(verdict),
                exit: match caught.get() {
                    None => verdict.exit(),
                    // A FAIL found before the signal stands: its code, not the signal's.
                    Some(_) if verdict == crate::verdict::SessionVerdict::Fail => verdict.exit(),
                    Some(signal) => Exit::signal(*signal),
                }
                .into(),
                report,
                unwritten,
                unanswered: ended.unanswered.map(|q| q.to_string()),
                notes,
            }
        }
        Err(e) => {
            let (code, notes) = stopped(&e);
            crate::session::wire::Ending {
                session: dir.display().to_string(),
                exit: code.into(),
                notes,
                ..Default::default()
            }
        }
    };
    if let Some(server) = server {
        server.end(ending.clone()).await;
    }
    Served { ending }
}

/// A session that could not go on: heals what its journal names (best-effort: a full
/// disk may have kept the last records from being written), says what became of its
/// documents, and names the path when the session root is the cause. Returns the
/// exit code and the lines for the operator.
fn stopped(error: &driver::DriverError) -> (Exit, Vec<String>) {
    let mut notes = Vec::new();
    if let driver::DriverError::Stopped { dir, report, .. } = error {
        match crate::session::heal::heal_session_as(dir, "faultline (stopping on an error)") {
            Ok(healed) => {
                for line in healed.actions.iter().chain(&healed.failures) {
                    notes.push(format!("healed: {line}"));
                }
                notes.push("every fault the journal names is healed".into());
                // Healed here: the watchdog has nothing left to do.
                crate::session::watchdog::disarm();
            }
            Err(e) => notes.push(format!(
                "healing from the journal failed: {e}; the watchdog heals"
            )),
        }
        match report {
            Ok(path) => notes.push(format!("report: {}", path.display())),
            Err(unwritten) => notes.push(unwritten.clone()),
        }
        notes.push(format!("session: {}", dir.display()));
    }
    let code = match error.storage() {
        Some((path, io)) => {
            use std::io::ErrorKind;
            let (what, fix) = match io.kind() {
                ErrorKind::StorageFull | ErrorKind::QuotaExceeded => {
                    ("is full", "free space there or ")
                }
                ErrorKind::ReadOnlyFilesystem => ("is read-only", ""),
                ErrorKind::PermissionDenied => ("is not writable", "fix its permissions or "),
                _ => ("cannot be written", ""),
            };
            notes.push(format!(
                "faultline: the session root {what}: {} ({io}); {fix}choose another with --out",
                path.display()
            ));
            Exit::ENVIRONMENT
        }
        // Not the session's fault: the machine's trust in a node.
        None if error.host_key() => {
            notes.push(format!("faultline: {error}"));
            Exit::ENVIRONMENT
        }
        None => {
            notes.push(format!("faultline: {error}"));
            Exit::UNREADABLE
        }
    };
    (code, notes)
}

/// `faultline resume SESSION`: heals what the killed session left, then continues it
/// from its first unfinished scenario with the plan, run spec and settings it was
/// started with. Earlier answers are replayed from its journal (machine changes
/// excepted); `args` adds new answers and the UI / headless choice.
pub async fn resume(session: &Path, args: RunArgs) -> Exit {
    let saved = match crate::session::resume::load(session) {
        Ok(saved) => saved,
        Err(e) => {
            crate::say_err!("faultline: cannot resume {}: {e}", session.display());
            return Exit::UNREADABLE;
        }
    };
    // The UI and --detach hand the whole resume (healing included) to a server
    // process of its own, as `run` does.
    if spawns_server(&args) {
        let setup = if args.detach {
            None
        } else {
            match ui_setup(&args) {
                Ok(setup) => Some(setup),
                Err(halt) => return halt.into(),
            }
        };
        return crate::attach::start_and_attach(setup).await;
    }
    // Armed before healing: a resume killed mid-heal is healed all the same.
    let _ = crate::session::watchdog::arm(session);
    match crate::session::heal::heal_session(session) {
        Ok(healed) => {
            for skipped in &healed.skipped {
                crate::say!("journal {skipped}; healed from the records around it");
            }
            for line in healed.actions.iter().chain(&healed.failures) {
                crate::say!("healed: {line}");
            }
        }
        Err(e) => {
            crate::say_err!("faultline: cannot heal {}: {e}", session.display());
            return Exit::UNREADABLE;
        }
    }
    // Healed: should the resume stop here, its watchdog has nothing to do.
    let (plan, spec) = match accept(&saved.input, &args) {
        Ok(accepted) => accepted,
        Err(halt) => {
            crate::session::watchdog::disarm();
            return halt.into();
        }
    };
    let mut operator = match operator(&args) {
        Ok(op) => op,
        Err(halt) => {
            crate::session::watchdog::disarm();
            return halt.into();
        }
    };
    for (id, answer) in saved.answers {
        operator.answers.entry(id).or_insert(answer);
    }
    let _log_guard = crate::logging::to_file(session);
    let request = Request {
        plan: std::sync::Arc::new(plan),
        plan_path: saved.request.plan_label,
        spec,
        sut_dir: saved.request.sut_dir,
        out_root: session.to_path_buf(),
        tier: saved.request.tier,
        only: saved.request.only,
        report_path: saved.request.report_path,
        vars: saved.request.vars,
        started_by: format!("{} (resumed)", operator.source),
        rerun_command: saved.request.rerun_command,
        plan_text: saved.input.plan_text,
        spec_source: saved.input.spec,
        resume: Some(crate::engine::request::ResumeFrom {
            dir: session.to_path_buf(),
        }),
        reduce: crate::engine::request::ReduceBudget {
            runs: saved.request.reduce_runs,
            time: std::time::Duration::from_millis(saved.request.reduce_time_ms),
        },
        watchdog: true,
        // What was authored is staged in the SUT already; a resumed run does not author again.
        author: false,
    };
    execute(request, &args, operator).await
}

/// `faultline report SESSION`: rewrites the session log, findings, `verdicts.json` and
/// the report from the session's journal (its records and the outcome they add up
/// to). Running it twice writes the same bytes.
pub fn report(session: &Path) -> Exit {
    let saved = match crate::session::resume::load(session) {
        Ok(saved) => saved,
        Err(e) => {
            crate::say_err!("faultline: cannot read session {}: {e}", session.display());
            return Exit::UNREADABLE;
        }
    };
    let Some(outcome) = saved.outcome else {
        crate::say_err!(
            "faultline: {}: its journal holds no outcome yet (none is journaled before \
             the preflight ends, and journals older than format 3 hold none): nothing to report",
            session.display()
        );
        return Exit::UNREADABLE;
    };
    let source = saved.input.plan_label.display().to_string();
    let plan = plan::parse::parse_plan(&source, &saved.input.plan_text);
    let dir = crate::session::dir::SessionDir {
        path: session.to_path_buf(),
    };
    let outputs = crate::engine::outputs::Outputs::new(
        std::sync::Arc::new(plan),
        &dir,
        saved.request.report_path,
    );
    match outputs.finish(&outcome) {
        Ok(path) => {
            crate::say!("report: {}", path.display());
            Exit::OK
        }
        Err(why) => {
            crate::say_err!("faultline: {why}");
            Exit::FAILED
        }
    }
}

/// What `faultline author` takes.
#[derive(Debug, Clone, clap::Args)]
pub struct AuthorArgs {
    /// The SUT repository the targets are relative to (default: the current directory).
    #[arg(long)]
    pub sut: Option<PathBuf>,
    /// Comma-separated scenario ids to author; the rest are left alone.
    #[arg(long, value_delimiter = ',')]
    pub only: Option<Vec<String>>,
    /// Answer every question with its default (an existing target is skipped).
    #[arg(long)]
    pub yes: bool,
    /// YAML answers keyed by question id (`author.<id>: overwrite | skip | sibling`).
    #[arg(long)]
    pub answers: Option<PathBuf>,
}

/// `faultline author PLAN`: writes each scenario's skeleton to its target test file
/// (author mode, without running anything), stages the files, shows the staged diff.
/// Exits 0 when nothing was refused, 1 when a scenario was.
pub async fn author(path: &Path, args: AuthorArgs) -> Exit {
    let input = match read_plan(path) {
        Ok(input) => input,
        Err(halt) => return halt.into(),
    };
    let run_args = RunArgs {
        sut: args.sut.clone(),
        out: None,
        tier: None,
        only: args.only.clone(),
        yes: args.yes,
        answers: args.answers.clone(),
        approve_installs: false,
        approve_privileged: false,
        answers_template: false,
        headless: true,
        report: None,
        theme: None,
        config: None,
        reduce_runs: 0,
        reduce_time: std::time::Duration::ZERO,
        author: false,
        detach: false,
        approvers: Vec::new(),
        viewers: Vec::new(),
        serve: false,
    };
    let (plan, spec) = match accept(&input, &run_args) {
        Ok(accepted) => accepted,
        Err(halt) => return halt.into(),
    };
    let mut operator = match operator(&run_args) {
        Ok(op) => op,
        Err(halt) => return halt.into(),
    };
    let sut = args.sut.clone().unwrap_or_else(|| PathBuf::from("."));
    let req = crate::author::AuthorRequest {
        plan_label: &input.plan_label,
        plan_text: &input.plan_text,
        plan: &plan,
        spec: &spec,
        sut: &sut,
        only: args.only.as_deref(),
    };
    let results = match crate::author::author(&req, &mut operator).await {
        Ok(results) => results,
        Err(e) => {
            crate::say_err!("faultline: {e}");
            return Exit::FAILED;
        }
    };
    let mut refused = false;
    let mut written = Vec::new();
    for (id, result) in &results {
        use crate::author::Authored;
        match result {
            Authored::Written {
                path,
                missing,
                formatted,
                sibling,
                ..
            } => {
                let state = if missing.is_empty() {
                    "candidate".to_string()
                } else {
                    format!("candidate — incomplete ({} TODO kept)", missing.join(", "))
                };
                crate::say!("{id}: wrote {} — {state}; {formatted}", path.display());
                if let Some(sibling) = sibling {
                    crate::say!("{id}:   compare with its sibling {}", sibling.display());
                }
                written.push(path.clone());
            }
            Authored::Skipped(path) => crate::say!("{id}: skipped {} (exists)", path.display()),
            Authored::Refused(why) => {
                refused = true;
                crate::say!("{id}: refused: {why}");
            }
            Authored::Ephemeral(why) => crate::say!("{id}: {why}"),
        }
    }
    let paths: Vec<&Path> = written.iter().map(PathBuf::as_path).collect();
    let diff = crate::author::tools::staged_diff(&sut, &paths);
    if !diff.is_empty() {
        crate::say!("staged, not committed:");
        for line in diff.lines() {
            crate::say!("{line}");
        }
    }
    if refused { Exit::FAILED } else { Exit::OK }
}

/// `faultline demo`: the embedded plan and run spec against the embedded store.
pub async fn demo(args: RunArgs) -> Exit {
    let input = PlanInput {
        plan_label: PathBuf::from("examples/demo/plan.md"),
        plan_text: DEMO_PLAN.to_string(),
        spec: Some((
            "examples/demo/plan.run.yaml".to_string(),
            DEMO_RUN_SPEC.to_string(),
        )),
    };
    run(input, args, Tier::Hardening, "faultline demo".into()).await
}
