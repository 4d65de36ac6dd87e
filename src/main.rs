use std::path::PathBuf;

use clap::{Parser, Subcommand};
use faultline::verdict::Tier;
use faultline::{exit, plan};

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
    },
    /// Run a plan: every scenario and arm, verdicts by the decision tree, the report.
    ///
    /// Exits 0 DONE, 1 FAIL, 2 DONE_WITH_CONCERNS, 3 INCONCLUSIVE, 4 BLOCKED, 65 when
    /// the plan or its run spec is handed back (nothing is started), 66 when input
    /// cannot be read, 128+N when stopped by signal N (after healing every fault).
    Run {
        /// Path to the markdown test plan (its run spec: fenced blocks or `<plan>.run.yaml`).
        plan: PathBuf,
        #[command(flatten)]
        args: faultline::launch::RunArgs,
    },
    /// Run the embedded demo plan against the embedded three-node store.
    Demo {
        #[command(flatten)]
        args: faultline::launch::RunArgs,
    },
    /// Internal: the embedded demo system under test.
    #[command(hide = true)]
    DemoSut(faultline::demo_sut::Args),
}

fn main() {
    // A panic restores the terminal and prints a readable report (color-eyre).
    let _ = color_eyre::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            // Printing clap's own message can only fail if stderr is gone.
            let _ = err.print();
            std::process::exit(code);
        }
    };
    let code = match cli.command {
        Command::Lint { plan, json } => lint(&plan, json),
        Command::Run { plan, args } => match faultline::launch::read_plan(&plan) {
            Ok(input) => {
                let again = format!("faultline run {}", plan.display());
                block_on(faultline::launch::run(input, args, Tier::Smoke, again))
            }
            Err(code) => code,
        },
        Command::Demo { args } => block_on(faultline::launch::demo(args)),
        Command::DemoSut(args) => faultline::demo_sut::run(args),
    };
    std::process::exit(code);
}

fn block_on(fut: impl std::future::Future<Output = i32>) -> i32 {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(fut),
        Err(e) => {
            eprintln!("faultline: cannot start the async runtime: {e}");
            1
        }
    }
}

fn lint(path: &std::path::Path, json: bool) -> i32 {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("faultline: cannot read plan {}: {err}", path.display());
            return exit::UNREADABLE;
        }
    };
    let source = path.display().to_string();
    let parsed = plan::parse::parse_plan(&source, &text);
    let problems = plan::lint::lint(&parsed);
    if json {
        let value = plan::render::lint_json(&parsed, &problems);
        match serde_json::to_string_pretty(&value) {
            Ok(out) => println!("{out}"),
            Err(err) => {
                eprintln!("faultline: cannot encode lint result: {err}");
                return 1;
            }
        }
    } else {
        print!("{}", plan::render::lint_text(&parsed, &problems));
    }
    if plan::lint::hands_back(&problems) {
        exit::HANDED_BACK
    } else {
        exit::OK
    }
}
