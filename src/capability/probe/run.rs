//! Running a probe's child: looked up and spawned on the probe PATH, stdin closed,
//! killed if it outlives a short deadline.

use std::process::Stdio;
use std::time::Duration;

use super::ProbeEnv;

/// How long any single probe command may take.
const DEADLINE: Duration = Duration::from_secs(10);

/// What a finished child printed.
pub(crate) struct Ran {
    pub ok: bool,
    /// stdout then stderr.
    pub output: String,
}

/// `program args…` as shown to the operator.
pub(crate) fn shown(program: &str, args: &[&str]) -> String {
    std::iter::once(program)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `program` is on the probe PATH.
pub(crate) fn found(program: &str, env: &ProbeEnv) -> bool {
    env.which(program).is_some()
}

/// Runs `program args…`; `Err` says why it could not run to the end.
pub(crate) async fn run(program: &str, args: &[&str], env: &ProbeEnv) -> Result<Ran, String> {
    let path = env
        .which(program)
        .ok_or_else(|| format!("`{program}` not found on PATH"))?;
    let mut cmd = tokio::process::Command::new(&path);
    cmd.args(args)
        .current_dir(&env.scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(p) = env.search_path() {
        cmd.env("PATH", p);
    }
    let out = tokio::time::timeout(DEADLINE, cmd.output())
        .await
        .map_err(|_| format!("`{}` took longer than {DEADLINE:?}", shown(program, args)))?
        .map_err(|e| format!("cannot run `{}`: {e}", shown(program, args)))?;
    let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok(Ran {
        ok: out.status.success(),
        output,
    })
}
