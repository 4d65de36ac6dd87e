use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "faultline", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Internal: the embedded demo system under test.
    #[command(hide = true)]
    DemoSut(faultline::demo_sut::Args),
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::DemoSut(args) => faultline::demo_sut::run(args),
    };
    std::process::exit(code);
}
