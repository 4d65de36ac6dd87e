//! Headless progress: one line per journaled step and verdict, and a heartbeat when
//! nothing was printed for a while, so a watcher over SSH knows the run is alive.

use std::io::Write;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;

use crate::sanitize;
use crate::session::event::Event;
use crate::session::journal::Record;

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
    let detail = match &record.event {
        Event::Verdict(v) => format!(
            "{} (tier met: {})",
            v.verdict.map(|v| v.to_string()).unwrap_or_default(),
            v.tier_met
                .map(|t| t.to_string())
                .unwrap_or_else(|| "none".into())
        ),
        Event::CommandStarted(c) => c.name.clone(),
        Event::CommandExited(c) => format!("{} {}", c.name, c.outcome),
        other => {
            let data = other.data();
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
    let text = format!("{time} [{scope}] {} {detail}", record.kind());
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
                    record.kind(),
                    record.scope.scenario.as_deref().unwrap_or_default()
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
