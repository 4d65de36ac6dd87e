//! The demo system under test: a three-node primary/follower key-value store on
//! loopback, its workload client (which records faultline's JSONL history), and the
//! small admin commands a run spec needs (ready, dump). `--ack-before-replicate` plants
//! a real bug: the primary acknowledges writes before any follower holds them.
//!
//! It ships inside the faultline binary (hidden `demo-sut` subcommand) so the demo
//! needs nothing installed.

mod client;
mod node;
mod wire;

use std::net::SocketAddr;
use std::path::PathBuf;

/// Arguments of the hidden `demo-sut` subcommand.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: SutCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum SutCommand {
    /// Run one store node (a primary when it has followers).
    Node(node::NodeArgs),
    /// Run the workload and record its history.
    Client(client::ClientArgs),
    /// Exit 0 once every node answers a ping.
    Ready {
        #[arg(long, value_delimiter = ',')]
        targets: Vec<SocketAddr>,
        #[arg(long, default_value_t = 5000)]
        timeout_ms: u64,
    },
    /// Exit 0 when no reachable target holds acknowledged writes it has not shipped.
    Settled {
        #[arg(long, value_delimiter = ',')]
        targets: Vec<SocketAddr>,
    },
    /// Write a node's key-value state as one JSON object.
    Dump {
        #[arg(long)]
        target: SocketAddr,
        #[arg(long)]
        out: PathBuf,
    },
}

/// Entry point of `faultline demo-sut …`; returns the process exit code.
pub fn run(args: Args) -> std::process::ExitCode {
    let result = match args.command {
        SutCommand::Node(a) => node::run(&a),
        SutCommand::Client(a) => client::run(&a),
        SutCommand::Ready {
            targets,
            timeout_ms,
        } => wire::wait_ready(&targets, std::time::Duration::from_millis(timeout_ms)),
        SutCommand::Settled { targets } => wire::settled(&targets),
        SutCommand::Dump { target, out } => wire::dump(target, &out),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("demo-sut: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}
