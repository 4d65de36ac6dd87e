//! Headless progress: one line per journaled step and verdict, a heartbeat when
//! nothing was printed for a while (so a watcher over SSH knows the run is alive),
//! and, when the journal closes, each run's verdict as the session's reducer
//! ([`View`]) folded it.

use std::io::Write;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;

use crate::sanitize;
use crate::session::event::Event;
use crate::session::journal::Record;
use crate::session::view::{Badge, View};

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

/// The closing lines: one per scenario / arm the records named, with where it ended
/// (its verdict, or why it did not run, or the phase it was stopped in).
pub fn summary(view: &View) -> Vec<String> {
    let width = view
        .runs
        .iter()
        .map(|r| r.id.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    for row in view
        .runs
        .iter()
        .filter(|r| r.badge != Badge::Pending || r.not_run.is_some())
    {
        let stood = match row.badge {
            Badge::Pending => "not run",
            badge => badge.label(),
        };
        let mut text = format!("verdict {:<width$}  {stood}", row.id);
        if let Some(why) = &row.not_run {
            text.push_str(&format!(" — {why}"));
        }
        out.push(sanitize::line(&text));
    }
    if let Some(verdict) = &view.session_verdict {
        out.push(sanitize::line(&format!("verdict session  {verdict}")));
    }
    out
}

/// Prints every record as it arrives, plus a heartbeat after `every` of silence
/// ([`HEARTBEAT`] in real runs); when the journal closes, the [`summary`]. Returns
/// the writer.
pub async fn print<W: Write + Send>(
    mut rx: UnboundedReceiver<Record>,
    mut out: W,
    every: Duration,
) -> W {
    let started = tokio::time::Instant::now();
    let mut last = String::from("session starting");
    let mut view = View::default();
    loop {
        match tokio::time::timeout(every, rx.recv()).await {
            Ok(Some(record)) => {
                view.apply(&record);
                if record.event.restates_outcome() {
                    continue;
                }
                let text = line(&record);
                let _ = writeln!(out, "{text}");
                last = format!(
                    "{} {}",
                    record.kind(),
                    record.scope.scenario.as_deref().unwrap_or_default()
                );
            }
            Ok(None) => {
                for text in summary(&view) {
                    let _ = writeln!(out, "{text}");
                }
                let _ = out.flush();
                return out;
            }
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
