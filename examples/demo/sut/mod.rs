//! The demo system under test: a tiny replicated key-value store (filled in later).

/// Arguments of the hidden `demo-sut` subcommand.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[arg(trailing_var_arg = true)]
    pub rest: Vec<String>,
}

/// Entry point of `faultline demo-sut …`; returns the process exit code.
pub fn run(_args: Args) -> i32 {
    2
}
