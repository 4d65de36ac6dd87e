//! Declared landing signals other than a log line: a number a command prints, a field
//! of an HTTP JSON endpoint (a node's status page), a Prometheus metric, and the
//! history itself (an indeterminate or failed op recorded inside the fault window).
//! Each takes its baseline when the window opens, so what was true before the fault
//! proves nothing.

use std::time::Duration;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::landing::LogWatch;

/// How long one HTTP request or counter command may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// How often a signal is polled inside the window.
const EVERY: Duration = Duration::from_millis(100);

/// One declared signal, with its window open.
#[derive(Debug)]
pub enum Watch {
    /// A line matching the pattern in any of these files (a service's stdout and
    /// stderr, or several services' logs), each with the name its evidence is given
    /// under when the signal watches several services.
    Log(Vec<(Option<String>, LogWatch)>),
    /// A number the command prints must rise by `rises_by` over its value at the start.
    Counter {
        spec: CounterSignal,
        cwd: std::path::PathBuf,
        baseline: Option<f64>,
    },
    /// A JSON field must equal a value, or change from what it was at the start.
    Http {
        spec: HttpSignal,
        baseline: Option<Value>,
    },
    /// A sample must rise by `rises_by` over its value at the start.
    Prometheus {
        spec: PromSignal,
        baseline: Option<f64>,
    },
}

/// The first number in `text` (a counter command's output).
fn first_number(text: &str) -> Option<f64> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .find_map(|w| w.parse::<f64>().ok())
}

/// Runs a counter command (shell, in the SUT's directory) and reads its number.
async fn count(command: &str, cwd: &std::path::Path) -> Result<f64, String> {
    let run = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(PROBE_TIMEOUT, run)
        .await
        .map_err(|_| format!("`{command}` took longer than {PROBE_TIMEOUT:?}"))?
        .map_err(|e| format!("`{command}`: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    first_number(&text).ok_or_else(|| {
        format!(
            "`{command}` printed no number: {}",
            crate::sanitize::line(text.trim())
        )
    })
}

/// One HTTP agent for every probe, so polls reuse its connections.
static AGENT: std::sync::LazyLock<ureq::Agent> = std::sync::LazyLock::new(|| {
    ureq::Agent::config_builder()
        .timeout_global(Some(PROBE_TIMEOUT))
        .build()
        .into()
});

/// GETs `url` (loopback or a test network) and returns the body.
async fn fetch(url: &str) -> Result<String, String> {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || {
        AGENT
            .get(&url)
            .call()
            .map_err(|e| format!("GET {url}: {e}"))?
            .body_mut()
            .read_to_string()
            .map_err(|e| format!("GET {url}: {e}"))
    })
    .await
    .map_err(|e| e.to_string())?
}

async fn json_field(spec: &HttpSignal) -> Result<Value, String> {
    let body = fetch(&spec.url).await?;
    let doc: Value =
        serde_json::from_str(&body).map_err(|e| format!("{}: not JSON: {e}", spec.url))?;
    doc.pointer(&spec.pointer)
        .cloned()
        .ok_or_else(|| format!("{}: no field at {}", spec.url, spec.pointer))
}

/// The value of the first sample of `metric` (name, then `{k="v",…}` labels that must
/// all be present) in a Prometheus text exposition.
pub fn prometheus_sample(exposition: &str, metric: &str) -> Option<f64> {
    let (name, labels) = match metric.split_once('{') {
        Some((name, rest)) => (name.trim(), rest.trim_end_matches('}')),
        None => (metric.trim(), ""),
    };
    let wanted: Vec<&str> = labels
        .split(',')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    exposition
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|line| {
            let rest = line.strip_prefix(name)?;
            let (sample_labels, value) = match rest.strip_prefix('{') {
                Some(r) => r.split_once('}')?,
                None if rest.starts_with(char::is_whitespace) => ("", rest),
                None => return None,
            };
            let have: Vec<&str> = sample_labels.split(',').map(str::trim).collect();
            if !wanted.iter().all(|w| have.contains(w)) {
                return None;
            }
            value.split_whitespace().next()?.parse::<f64>().ok()
        })
}

async fn prom_sample(spec: &PromSignal) -> Result<f64, String> {
    let body = fetch(&spec.url).await?;
    prometheus_sample(&body, &spec.metric)
        .ok_or_else(|| format!("{}: no sample of {}", spec.url, spec.metric))
}

/// The history signal: an op of faultline's JSONL history recorded as timed out
/// (`"timeout": true`, or its alias `timeout_marker`) or failed (`error` not null).
pub fn history_pattern() -> Regex {
    Regex::new(r#""(?:timeout|timeout_marker)"\s*:\s*true|"error"\s*:\s*[^n\s]"#)
        .expect("a fixed, valid pattern")
}

impl Watch {
    /// Opens a counter window: the command's current value is the baseline.
    pub async fn counter(spec: CounterSignal, cwd: &std::path::Path) -> Watch {
        let baseline = count(&spec.run, cwd).await.ok();
        Watch::Counter {
            spec,
            cwd: cwd.to_path_buf(),
            baseline,
        }
    }

    /// Opens an HTTP window: the field's current value is the baseline for `changes`.
    pub async fn http(spec: HttpSignal) -> Watch {
        let baseline = json_field(&spec).await.ok();
        Watch::Http { spec, baseline }
    }

    /// Opens a Prometheus window: the sample's current value is the baseline.
    pub async fn prometheus(spec: PromSignal) -> Watch {
        let baseline = prom_sample(&spec).await.ok();
        Watch::Prometheus { spec, baseline }
    }

    /// What this watch looks for, as the journal names it.
    pub fn describe(&self) -> String {
        match self {
            Watch::Log(w) => w
                .first()
                .map(|(_, w)| w.pattern.as_str().to_string())
                .unwrap_or_default(),
            Watch::Counter { spec, .. } => format!("`{}` rises by {}", spec.run, spec.rises_by),
            Watch::Http { spec, .. } => match &spec.equals {
                Some(v) => format!("{} {} == {v}", spec.url, spec.pointer),
                None => format!("{} {} changes", spec.url, spec.pointer),
            },
            Watch::Prometheus { spec, .. } => {
                format!("{} {} rises by {}", spec.url, spec.metric, spec.rises_by)
            }
        }
    }

    /// One observation: `Some(what was seen)` once the signal holds.
    pub async fn poll(&self) -> std::io::Result<Option<String>> {
        let seen = match self {
            Watch::Log(files) => {
                for (label, w) in files {
                    if let Some(line) = w.poll()? {
                        return Ok(Some(match label {
                            Some(label) => format!("{label}: {line}"),
                            None => line,
                        }));
                    }
                }
                None
            }
            Watch::Counter {
                spec,
                cwd,
                baseline,
            } => match (count(&spec.run, cwd).await, baseline) {
                (Ok(now), Some(base)) if now - base >= spec.rises_by => {
                    Some(format!("{} rose from {base} to {now}", spec.run))
                }
                _ => None,
            },
            Watch::Http { spec, baseline } => match (json_field(spec).await, &spec.equals) {
                (Ok(now), Some(want)) if &now == want => {
                    Some(format!("{} {} = {now}", spec.url, spec.pointer))
                }
                (Ok(now), None) if baseline.as_ref().is_some_and(|b| *b != now) => Some(format!(
                    "{} {} changed from {} to {now}",
                    spec.url,
                    spec.pointer,
                    baseline.as_ref().map_or(Value::Null, Clone::clone)
                )),
                _ => None,
            },
            Watch::Prometheus { spec, baseline } => match (prom_sample(spec).await, baseline) {
                (Ok(now), Some(base)) if now - base >= spec.rises_by => {
                    Some(format!("{} rose from {base} to {now}", spec.metric))
                }
                _ => None,
            },
        };
        Ok(seen.map(|s| crate::sanitize::line(&s)))
    }

    /// Polls until the signal holds or `within` passes.
    pub async fn await_match(&self, within: Duration) -> std::io::Result<Option<String>> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let seen = self.poll().await?;
            if seen.is_some() || tokio::time::Instant::now() >= deadline {
                return Ok(seen);
            }
            tokio::time::sleep(EVERY).await;
        }
    }
}
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CounterSignal {
    /// Shell command, run in the SUT directory; its first number is the counter.
    pub run: String,
    #[serde(default = "one_unit")]
    pub rises_by: f64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSignal {
    pub url: String,
    /// JSON pointer to the field, e.g. `/role`.
    pub pointer: String,
    /// Landed when the field equals this; without it, when the field changes.
    pub equals: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PromSignal {
    pub url: String,
    /// Metric name with optional labels: `raft_elections_total{node="n2"}`.
    pub metric: String,
    #[serde(default = "one_unit")]
    pub rises_by: f64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySignal {
    /// The JSONL history the workload is writing (`${artifacts}/history.jsonl`).
    pub path: String,
}

fn one_unit() -> f64 {
    1.0
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LogSignal {
    /// A service whose stdout or stderr log is watched…
    pub service: Option<String>,
    /// …or any of several services' logs (the line may appear on whichever of them
    /// is the leader, say)…
    #[serde(default)]
    pub services: Vec<String>,
    /// …or a file (relative paths are the SUT's).
    pub file: Option<String>,
    pub pattern: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_samples_match_name_and_every_label() {
        let text = "# HELP x\nraft_elections_total{node=\"n1\"} 3\n\
                    raft_elections_total{node=\"n2\",dc=\"a\"} 7\nraft_elections 9\n";
        assert_eq!(
            prometheus_sample(text, "raft_elections_total{node=\"n2\"}"),
            Some(7.0)
        );
        assert_eq!(prometheus_sample(text, "raft_elections"), Some(9.0));
        assert_eq!(
            prometheus_sample(text, "raft_elections_total{node=\"n3\"}"),
            None
        );
    }

    #[test]
    fn the_history_pattern_finds_indeterminate_and_failed_ops_only() {
        let p = history_pattern();
        assert!(p.is_match(r#"{"op_id": 3, "timeout": true, "error": null}"#));
        assert!(p.is_match(r#"{"timeout_marker":true}"#));
        assert!(p.is_match(r#"{"timeout": false, "error": "connection refused"}"#));
        assert!(p.is_match(r#"{"error": {"code": 5}}"#));
        assert!(!p.is_match(r#"{"op_id": 4, "timeout": false, "error": null}"#));
        assert!(!p.is_match(r#"{"timeout":false,"error":   null}"#));
        // Jepsen's `type` is not a field of faultline's JSONL schema.
        assert!(!p.is_match(r#"{"type": "info", "f": "write"}"#));
    }

    #[test]
    fn counters_read_the_first_number() {
        assert_eq!(first_number("pkts 42 bytes 9"), Some(42.0));
        assert_eq!(first_number("none"), None);
    }
}
