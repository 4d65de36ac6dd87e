//! The workload client: writes unique keys to the primary at a fixed rate and records
//! every operation with faultline's twelve history keys. A write that times out is
//! recorded with the timeout marker and no completion time: its effect is unknown.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;

use super::wire::{self, Request};

const OP_TIMEOUT: Duration = Duration::from_millis(500);

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
}

fn fault_epoch(path: Option<&PathBuf>) -> serde_json::Value {
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| t.trim().parse::<u64>().ok())
        .map_or(serde_json::Value::Null, serde_json::Value::from)
}

pub fn run(args: &ClientArgs) -> Result<(), String> {
    let mut out =
        std::fs::File::create(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let clock = Instant::now();
    let nanos =
        |at: Instant| u64::try_from(at.duration_since(clock).as_nanos()).unwrap_or(u64::MAX);
    let fraction = args.halt_at.unwrap_or(1.0).clamp(0.0, 1.0);
    let run_for = Duration::from_millis(args.duration_ms).mul_f64(fraction);
    let interval = Duration::from_secs(1) / args.rate.max(1);
    let mut n: u64 = 0;
    while clock.elapsed() < run_for {
        let started = Instant::now();
        let key = format!("k{}-{n}", args.seed);
        let value = format!("v{n}");
        let epoch = fault_epoch(args.fault_epoch_file.as_ref());
        let request = Request::Put {
            key: key.clone(),
            value: value.clone(),
        };
        let result = wire::call(args.target, &request, OP_TIMEOUT);
        let done = Instant::now();
        let (complete, output, error, timeout) = match result {
            Ok(reply) if reply.ok => (json!(nanos(done)), json!("ok"), json!(null), false),
            Ok(reply) => (json!(nanos(done)), json!(null), json!(reply.error), false),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                (json!(null), json!(null), json!(null), true)
            }
            Err(e) => (json!(nanos(done)), json!(null), json!(e.to_string()), false),
        };
        let record = json!({
            "op_id": format!("{}-{n}", args.seed),
            "process": 0,
            "invoke_ts": nanos(started),
            "complete_ts": complete,
            "op_type": "write",
            "key": key,
            "input": value,
            "output": output,
            "error": error,
            "timeout": timeout,
            "node": args.target.to_string(),
            "fault_epoch": epoch,
        });
        writeln!(out, "{record}").map_err(|e| format!("{}: {e}", args.out.display()))?;
        n += 1;
        if let Some(rest) = interval.checked_sub(started.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    out.sync_all()
        .map_err(|e| format!("{}: {e}", args.out.display()))
}
