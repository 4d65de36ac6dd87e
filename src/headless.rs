//! Headless progress: one line per journaled step and verdict, and a heartbeat when
//! nothing was printed for a while, so a watcher over SSH knows the run is alive.

use std::io::Write;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;

use crate::journal::Record;
use crate::sanitize;

/// Silence longer than this prints a heartbeat (the policy asks for ≤ 60 s).
pub const HEARTBEAT: Duration = Duration::from_secs(30);

/// One progress line for a record: time, scope, event, and the salient data.
pub fn line(record: &Record) -> String {
    let time = record.ts.get(11..19).unwrap_or(&record.ts);
    let scope = match (&record.scope.scenario, &record.scope.arm) {
        (_, Some(arm)) => arm.clone(),
        (Some(s), None) => s.clone(),
        (None, None) => "session".to_string(),
    };
    let data = &record.data;
    let get = |k: &str| {
        data.get(k).map(|v| match v.as_str() {
            Some(s) => s.to_string(),
            None => v.to_string(),
        })
    };
    let detail = match record.kind.as_str() {
        "verdict" => format!(
            "{} (tier met: {})",
            get("verdict").unwrap_or_default(),
            get("tier_met").unwrap_or_default()
        ),
        "command-started" | "command-exited" => {
            let mut d = get("name").unwrap_or_default();
            if let Some(outcome) = get("outcome") {
                d.push_str(&format!(" {outcome}"));
            }
            d
        }
        _ => {
            let mut parts = Vec::new();
            if let Some(obj) = data.as_object() {
                for (k, v) in obj.iter().take(4) {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    parts.push(format!("{k}={v}"));
                }
            }
            parts.join(" ")
        }
    };
    let text = format!("{time} [{scope}] {} {detail}", record.kind);
    let mut clean = sanitize::line(&text);
    if clean.chars().count() > 200 {
        clean = clean.chars().take(199).collect::<String>() + "…";
    }
    clean
}

/// Prints every record as it arrives, plus a heartbeat after `every` of silence
/// ([`HEARTBEAT`] in real runs). Returns the writer once the journal closes.
pub async fn print<W: Write + Send>(
    mut rx: UnboundedReceiver<Record>,
    mut out: W,
    every: Duration,
) -> W {
    let started = tokio::time::Instant::now();
    let mut last = String::from("session starting");
    loop {
        match tokio::time::timeout(every, rx.recv()).await {
            Ok(Some(record)) => {
                let text = line(&record);
                let _ = writeln!(out, "{text}");
                last = format!(
                    "{} {}",
                    record.kind,
                    record.scope.scenario.unwrap_or_default()
                );
            }
            Ok(None) => return out,
            Err(_) => {
                let _ = writeln!(
                    out,
                    "heartbeat: still running after {} s (last event: {last})",
                    started.elapsed().as_secs()
                );
            }
        }
        let _ = out.flush();
    }
}
