//! Results of an external checker command: the last non-empty stdout line is a
//! JSON object `{"valid", "ops_checked", "ops_total", "anomalies",
//! "missing_fields", "reason"}`.

use super::checker::{Anomaly, CheckerReport, evidence_line};
use crate::verdict::CheckerRun;
use serde_json::Value;

/// Parse an external checker's stdout into a report.
pub fn parse_external_result(name: &str, stdout: &str) -> Result<CheckerReport, String> {
    let line = stdout
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .ok_or_else(|| format!("checker `{name}`: empty stdout, expected a JSON result line"))?;
    let obj = match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err(format!("checker `{name}`: last line is not a JSON object")),
        Err(e) => return Err(format!("checker `{name}`: last line is not JSON: {e}")),
    };
    let count = |field: &str| -> Result<u64, String> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v.as_u64().ok_or_else(|| {
                format!("checker `{name}`: `{field}` must be a non-negative integer")
            }),
        }
    };
    let ops_checked = count("ops_checked")?;
    let ops_total = count("ops_total")?;
    let reason = obj
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let scope = format!("external checker `{name}`: scope as documented by the checker");

    let missing: Vec<String> = match obj.get("missing_fields") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("checker `{name}`: `missing_fields` must hold strings"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(format!(
                "checker `{name}`: `missing_fields` must be an array"
            ));
        }
    };
    if !missing.is_empty() {
        return Ok(CheckerReport {
            checker: name.into(),
            evidence: format!("refused: history lacks field(s) {}", missing.join(", ")),
            run: CheckerRun::MissingFields { fields: missing },
            anomalies: Vec::new(),
            scope,
        });
    }

    let valid = match obj.get("valid") {
        Some(Value::Bool(b)) => Some(*b),
        Some(Value::String(s)) if s == "unknown" => None,
        _ => {
            return Err(format!(
                "checker `{name}`: `valid` must be true, false or \"unknown\""
            ));
        }
    };
    let Some(valid) = valid else {
        let reason = if reason.is_empty() {
            "checker answered unknown".to_string()
        } else {
            reason
        };
        return Ok(CheckerReport {
            checker: name.into(),
            evidence: format!("unknown: {reason}"),
            run: CheckerRun::Unknown { reason },
            anomalies: Vec::new(),
            scope,
        });
    };

    let mut anomalies = Vec::new();
    if let Some(list) = obj.get("anomalies") {
        let arr = list
            .as_array()
            .ok_or_else(|| format!("checker `{name}`: `anomalies` must be an array"))?;
        for a in arr {
            let ops = a
                .get("ops")
                .and_then(Value::as_array)
                .map(|ops| {
                    ops.iter()
                        .map(|o| match o {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let why = a
                .get("why")
                .and_then(Value::as_str)
                .unwrap_or("(no reason given)")
                .to_string();
            anomalies.push(Anomaly {
                ops,
                why,
                counterexample: None,
            });
        }
    }
    if !valid && anomalies.is_empty() {
        anomalies.push(Anomaly {
            counterexample: None,
            ops: Vec::new(),
            why: if reason.is_empty() {
                "checker reported invalid without listing anomalies".into()
            } else {
                reason
            },
        });
    }
    Ok(CheckerReport {
        checker: name.into(),
        evidence: evidence_line(ops_checked, ops_total, anomalies.len()),
        run: CheckerRun::Judged {
            anomalies: anomalies.len() as u64,
            ops_checked,
            ops_produced: ops_total,
        },
        anomalies,
        scope,
    })
}
