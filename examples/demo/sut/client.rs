//! The workload client: writes unique keys to the primary at a fixed rate and records
//! every operation with faultline's twelve history keys. A write that times out is
//! recorded with the timeout marker and no completion time: its effect is unknown.
//! With `--read-from`, it works one register instead: each round writes the key's
//! next value on the primary, then reads the key back from the given node, so a
//! linearizability checker can tell whether that node serves the latest write.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::wire::{self, Reply, Request};

const OP_TIMEOUT: Duration = Duration::from_millis(500);
/// The one key register mode writes and reads.
const REGISTER: &str = "r";

#[derive(Debug, clap::Args)]
pub struct ClientArgs {
    #[arg(long)]
    pub target: SocketAddr,
    #[arg(long)]
    pub seed: u64,
    #[arg(long)]
    pub duration_ms: u64,
    /// Operations per second.
    #[arg(long, default_value_t = 50)]
    pub rate: u32,
    #[arg(long)]
    pub out: PathBuf,
    /// Stop early after this fraction of the duration (to test that faultline notices).
    #[arg(long)]
    pub halt_at: Option<f64>,
    /// File holding the current fault epoch (written by faultline), if any.
    #[arg(long)]
    pub fault_epoch_file: Option<PathBuf>,
    /// Register mode: after each write to the target, read the register back from
    /// this node (recorded as process 1; the writes as process 0).
    #[arg(long)]
    pub read_from: Option<SocketAddr>,
}

fn fault_epoch(path: Option<&PathBuf>) -> Value {
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| t.trim().parse::<u64>().ok())
        .map_or(Value::Null, Value::from)
}

/// One op about to be sent: who sends it, what it is, where to.
struct Call<'a> {
    op_id: String,
    process: u32,
    op_type: &'static str,
    key: &'a str,
    input: Value,
    node: SocketAddr,
    request: Request,
}

/// The history's clock: ns since the client started.
struct Recorder<'a> {
    clock: Instant,
    out: std::fs::File,
    path: &'a std::path::Path,
    epoch_file: Option<&'a PathBuf>,
}

impl Recorder<'_> {
    fn nanos(&self, at: Instant) -> u64 {
        u64::try_from(at.duration_since(self.clock).as_nanos()).unwrap_or(u64::MAX)
    }

    /// Sends `call` and records it; `output` reads an acknowledged op's output
    /// from its reply.
    fn op(&mut self, call: Call, output: impl Fn(&Reply) -> Value) -> Result<(), String> {
        let started = Instant::now();
        let epoch = fault_epoch(self.epoch_file);
        let result = wire::call(call.node, &call.request, OP_TIMEOUT);
        let done = self.nanos(Instant::now());
        let (complete, output, error, timeout) = match result {
            Ok(reply) if reply.ok => (json!(done), output(&reply), json!(null), false),
            Ok(reply) => (json!(done), json!(null), json!(reply.error), false),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                (json!(null), json!(null), json!(null), true)
            }
            Err(e) => (json!(done), json!(null), json!(e.to_string()), false),
        };
        let record = json!({
            "op_id": call.op_id,
            "process": call.process,
            "invoke_ts": self.nanos(started),
            "complete_ts": complete,
            "op_type": call.op_type,
            "key": call.key,
            "input": call.input,
            "output": output,
            "error": error,
            "timeout": timeout,
            "node": call.node.to_string(),
            "fault_epoch": epoch,
        });
        writeln!(self.out, "{record}").map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

pub fn run(args: &ClientArgs) -> Result<(), String> {
    let out =
        std::fs::File::create(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let mut recorder = Recorder {
        clock: Instant::now(),
        out,
        path: &args.out,
        epoch_file: args.fault_epoch_file.as_ref(),
    };
    let fraction = args.halt_at.unwrap_or(1.0).clamp(0.0, 1.0);
    let run_for = Duration::from_millis(args.duration_ms).mul_f64(fraction);
    let interval = Duration::from_secs(1) / args.rate.max(1);
    let mut n: u64 = 0;
    while recorder.clock.elapsed() < run_for {
        let started = Instant::now();
        let key = match args.read_from {
            Some(_) => REGISTER.to_string(),
            None => format!("k{}-{n}", args.seed),
        };
        let value = format!("v{n}");
        let write = Call {
            op_id: format!("{}-{n}", args.seed),
            process: 0,
            op_type: "write",
            key: &key,
            input: json!(value),
            node: args.target,
            request: Request::Put {
                key: key.clone(),
                value,
            },
        };
        recorder.op(write, |_| json!("ok"))?;
        if let Some(node) = args.read_from {
            let read = Call {
                op_id: format!("{}-{n}-read", args.seed),
                process: 1,
                op_type: "read",
                key: &key,
                input: json!(null),
                node,
                request: Request::Get { key: key.clone() },
            };
            recorder.op(read, |reply| json!(reply.value))?;
        }
        n += 1;
        if let Some(rest) = interval.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    recorder
        .out
        .sync_all()
        .map_err(|e| format!("{}: {e}", args.out.display()))
}
