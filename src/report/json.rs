//! `verdicts.json`: the machine-readable verdicts, reasons and evidence of a session.

use serde_json::{Value, json};

use crate::session::outcome::{OracleEvidence, RunOutcome, ScenarioOutcome, SessionOutcome};

/// The session's verdicts as JSON; verdict strings as in the method (`PASS-smoke`).
pub fn verdicts_json(outcome: &SessionOutcome) -> Value {
    json!({
        "session_verdict": outcome.verdict,
        "tier": outcome.tier,
        "interrupted": outcome.interrupted,
        "started": outcome.started,
        "finished": outcome.finished,
        "scenarios": outcome.scenarios.iter().map(scenario).collect::<Vec<_>>(),
    })
}

fn scenario(s: &ScenarioOutcome) -> Value {
    json!({
        "id": s.id,
        "name": s.name,
        "phase": s.phase,
        "verdict": s.verdict,
        "tier_met": s.tier_met,
        "reasons": s.reasons,
        "runs": s.runs.iter().map(run).collect::<Vec<_>>(),
        "finding": s.finding,
    })
}

fn run(r: &RunOutcome) -> Value {
    let landing: Vec<Value> = r
        .seeds
        .iter()
        .flat_map(|seed| {
            seed.landing
                .iter()
                .map(move |l| json!({ "seed": seed.seed, "evidence": l }))
        })
        .collect();
    json!({
        "id": r.id,
        "verdict": r.decision.as_ref().map(|d| d.verdict),
        "tier_met": r.decision.as_ref().and_then(|d| d.tier_met),
        "reasons": r.decision.as_ref().map_or(&[][..], |d| &d.reasons[..]),
        "landing": landing,
        "oracle": oracle(r),
        "audits": r.audits,
        "seeds": r.seeds,
        "rerun": r.rerun,
        "artifacts": r.artifacts,
    })
}

/// The checker's work summed over seeds (`null` when it never ran).
fn oracle(r: &RunOutcome) -> Value {
    let seen: Vec<&OracleEvidence> = r.seeds.iter().filter_map(|s| s.oracle.as_ref()).collect();
    let Some(first) = seen.first() else {
        return Value::Null;
    };
    json!({
        "checker": first.checker,
        "ops_checked": seen.iter().map(|o| o.ops_checked).sum::<u64>(),
        "ops_produced": seen.iter().map(|o| o.ops_produced).sum::<u64>(),
        "anomalies": seen.iter().map(|o| o.anomalies).sum::<u64>(),
        "cites": seen.iter().flat_map(|o| o.cites.iter().copied()).collect::<Vec<u64>>(),
    })
}
