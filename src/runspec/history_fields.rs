//! History fields a scenario says it records (its §7.M "Operation history") that
//! faultline's history reader would drop, for every scenario whose run spec has the
//! reader parse a JSONL history. A dropped field is silent until a checker needs it
//! and reports it missing after a whole cluster run; lint says so before.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::load::RunSpec;
use super::model::HistoryFormat;
use crate::oracle::history::{DEFAULT_FIELDS, parse_jsonl};
use crate::plan::lint::{Problem, Severity};
use crate::plan::{Plan, SevenM};

/// Field names as a plan writes them: in backticks, or listed in a parenthesised
/// tuple such as `(step_id, node_id, term)`.
static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"`([a-z][a-z0-9_]*)`").unwrap_or_else(|e| panic!("static regex: {e}"))
});
static TUPLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\(\s*([a-z][a-z0-9_]*(?:\s*,\s*[a-z][a-z0-9_]*)+)\s*\)")
        .unwrap_or_else(|e| panic!("static regex: {e}"))
});

/// The field names an "Operation history" text names, in the order written.
pub fn named_fields(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    };
    for c in BACKTICKED.captures_iter(text) {
        add(&c[1]);
    }
    for c in TUPLE.captures_iter(text) {
        for name in c[1].split(',') {
            add(name.trim());
        }
    }
    out
}

/// True when the JSONL reader drops `name`: asked of the reader itself, with one
/// record holding every field it reads plus `name`.
pub fn reader_drops(name: &str) -> bool {
    if DEFAULT_FIELDS.contains(&name) {
        return false;
    }
    let record = serde_json::json!({
        "op_id": "1", "process": 0, "invoke_ts": 1, "complete_ts": 2, "op_type": "write",
        "key": "k", "input": 1, "output": "ok", "error": null, "timeout": false,
        "node": "n1", "fault_epoch": 0, name: null,
    });
    parse_jsonl("probe", &format!("{record}\n")).is_ok_and(|h| !h.unknown_fields.is_empty())
}

/// One warning per history field a JSONL-reading scenario names that the reader drops.
pub fn dropped_fields(plan: &Plan, spec: &RunSpec) -> Vec<Problem> {
    let mut out = Vec::new();
    // An arm shares its scenario's §7.M block: each scenario is warned about once.
    let mut done: BTreeSet<&str> = BTreeSet::new();
    for (id, (binding, origin)) in &spec.bindings {
        let reads_jsonl = binding
            .history
            .as_ref()
            .is_some_and(|h| h.format == HistoryFormat::Jsonl)
            || binding.arms.values().any(|a| {
                a.history
                    .as_ref()
                    .is_some_and(|h| h.format == HistoryFormat::Jsonl)
            });
        let scenario_id = id.split('/').next().unwrap_or(id);
        if !reads_jsonl || !done.insert(scenario_id) {
            continue;
        }
        let Some(scenario) = plan.scenarios.iter().find(|s| s.id == scenario_id) else {
            continue;
        };
        let SevenM::Filled(block) = &scenario.seven_m else {
            continue;
        };
        let Some(history) = &block.history else {
            continue;
        };
        for name in named_fields(&history.text)
            .into_iter()
            .filter(|n| reader_drops(n))
        {
            out.push(Problem {
                line: history.line,
                column: 0,
                file: None,
                scenario: Some(scenario_id.to_string()),
                field: "§7.M Operation history".into(),
                message: format!(
                    "`{name}` is not a field faultline's history reader reads, so it would be \
                     dropped from the JSONL history the run spec binds ({}:{}); the reader \
                     reads {} (and `timeout_marker` for `timeout`)",
                    origin.file,
                    origin.line,
                    DEFAULT_FIELDS.join(", ")
                ),
                severity: Severity::Warning,
            });
        }
    }
    out
}

/// One warning per field a binding's `history.fields` maps that would be lost: a
/// reader field that does not exist (the value is read as an unknown field and
/// dropped), or any mapping on a history that is not JSONL (never applied).
pub fn dropped_mappings(spec: &RunSpec) -> Vec<Problem> {
    let mut out = Vec::new();
    for (id, (binding, origin)) in &spec.bindings {
        let histories = binding.history.iter().map(|h| (String::new(), h)).chain(
            binding
                .arms
                .iter()
                .filter_map(|(arm, a)| a.history.as_ref().map(|h| (format!("arms.{arm}."), h))),
        );
        for (prefix, history) in histories {
            for (to, from) in &history.fields {
                let message = if history.format != HistoryFormat::Jsonl {
                    format!(
                        "maps `{to}` from `{from}`, but only a JSONL history is renamed; this \
                         history is {:?}, so the mapping is never applied",
                        history.format
                    )
                } else if reader_drops(to) {
                    format!(
                        "maps `{from}` to `{to}`, which faultline's history reader does not \
                         read, so the value would be dropped; the reader reads {}",
                        DEFAULT_FIELDS.join(", ")
                    )
                } else {
                    continue;
                };
                out.push(Problem {
                    line: usize::try_from(origin.line).unwrap_or(usize::MAX),
                    column: 0,
                    file: Some(origin.file.clone()),
                    scenario: Some(id.clone()),
                    field: format!("run spec {prefix}history.fields.{to}"),
                    message,
                    severity: Severity::Warning,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_backticks_and_tuples() {
        assert_eq!(
            named_fields("Per-step records `(step_id, node_id, term)`; `op_id` and `node`"),
            vec!["op_id", "node", "step_id", "node_id", "term"]
        );
        assert!(named_fields("default 11 fields, in-process recorder.").is_empty());
    }

    #[test]
    fn the_reader_decides_what_it_drops() {
        assert!(reader_drops("process_id"));
        assert!(!reader_drops("process"));
        assert!(!reader_drops("timeout_marker"));
    }
}
