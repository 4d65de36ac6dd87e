//! A checker's anomalies told with the ops they involve, read back from the history:
//! what a FAIL's finding lists (op ids, keys, values, the fault window of each).

use std::collections::HashMap;

use crate::oracle::checker::CheckerReport;
use crate::oracle::history::{History, Op};
use crate::session::outcome::{ANOMALIES_LISTED, AnomalyNote, OPS_LISTED, OpNote};

use super::iteration::FaultFacts;

/// The first [`ANOMALIES_LISTED`] anomalies of `report`, each with its first
/// [`OPS_LISTED`] ops. An op id the history does not hold is listed by id alone.
pub fn notes(
    report: &CheckerReport,
    history: Option<&History>,
    faults: &[FaultFacts],
) -> Vec<AnomalyNote> {
    let by_id: HashMap<&str, &Op> = history
        .map(|h| h.ops.iter().map(|o| (o.op_id.as_str(), o)).collect())
        .unwrap_or_default();
    let first = history
        .and_then(|h| h.ops.iter().map(|o| o.invoke_ts).min())
        .unwrap_or(0);
    let fault_of = |epoch: u64| -> String {
        faults
            .iter()
            .find(|f| f.epoch == Some(epoch))
            .map_or_else(|| format!("fault epoch {epoch}"), |f| f.id.clone())
    };
    report
        .anomalies
        .iter()
        .take(ANOMALIES_LISTED)
        .map(|a| AnomalyNote {
            why: a.why.clone(),
            ops: a
                .ops
                .iter()
                .take(OPS_LISTED)
                .map(|id| match by_id.get(id.as_str()) {
                    Some(op) => OpNote {
                        op_id: op.op_id.to_string(),
                        process: op.process.to_string(),
                        op_type: op.op_type.to_string(),
                        key: op.key.as_deref().map(str::to_string),
                        input: op.input.clone(),
                        output: op.output.clone(),
                        ended: if op.is_acked() {
                            "ok".to_string()
                        } else if let Some(error) = op.error.as_deref().filter(|_| !op.timeout) {
                            format!("failed: {error}")
                        } else {
                            "timed out".to_string()
                        },
                        invoked_ms: Some((op.invoke_ts - first) / 1_000_000),
                        fault: op.fault_epoch.map(fault_of),
                    },
                    None => OpNote {
                        op_id: id.clone(),
                        process: String::new(),
                        op_type: String::new(),
                        key: None,
                        input: serde_json::Value::Null,
                        output: serde_json::Value::Null,
                        ended: String::new(),
                        invoked_ms: None,
                        fault: None,
                    },
                })
                .collect(),
            more_ops: a.ops.len().saturating_sub(OPS_LISTED),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::checker::Anomaly;
    use crate::verdict::CheckerRun;

    fn op(id: u64, at_ms: u64, epoch: Option<u64>) -> String {
        serde_json::json!({
            "op_id": id, "process": 2, "invoke_ts": 1_000_000_000 + at_ms * 1_000_000,
            "complete_ts": 1_000_000_000 + at_ms * 1_000_000 + 5, "op_type": "write",
            "key": format!("k{id}"), "input": format!("v{id}"), "output": "ok",
            "error": null, "timeout": false, "node": "n1", "fault_epoch": epoch
        })
        .to_string()
    }

    #[test]
    fn each_op_is_told_with_its_key_value_time_and_fault_window() {
        let text = [op(1, 0, None), op(2, 1500, Some(1)), op(3, 2500, Some(7))].join("\n");
        let history = crate::oracle::history::parse_jsonl("h", &text).expect("history");
        let faults = vec![FaultFacts {
            id: "pause-n3".into(),
            epoch: Some(1),
            ..FaultFacts::default()
        }];
        let anomaly = |ops: Vec<String>| Anomaly {
            counterexample: None,
            ops,
            why: "lost".into(),
        };
        let mut anomalies = vec![anomaly(vec!["2".into(), "3".into(), "99".into()])];
        anomalies.extend((0..30).map(|_| anomaly((1..=9).map(|_| "1".into()).collect())));
        let report = CheckerReport {
            checker: "no-lost-ack".into(),
            run: CheckerRun::NotRun,
            anomalies,
            scope: String::new(),
            evidence: String::new(),
        };
        let notes = notes(&report, Some(&history), &faults);
        assert_eq!(notes.len(), ANOMALIES_LISTED);
        assert_eq!(
            notes[0].describe(),
            "lost: op 2 (process 2) write k2 \u{2190} \"v2\" \u{2192} \"ok\", ok, invoked +1.50 s, \
             during pause-n3; op 3 (process 2) write k3 \u{2190} \"v3\" \u{2192} \"ok\", ok, \
             invoked +2.50 s, during fault epoch 7; op 99 (not in the history)"
        );
        assert_eq!(notes[1].ops.len(), OPS_LISTED);
        assert_eq!(notes[1].more_ops, 9 - OPS_LISTED);
        assert!(notes[1].describe().contains("outside every fault window"));
        assert!(notes[1].describe().ends_with("; and 3 more op(s)"));
    }
}
