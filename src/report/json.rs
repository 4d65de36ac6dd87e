//! `verdicts.json`: the machine-readable verdicts, reasons and evidence of a session.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Value, json};

use crate::session::outcome::{OracleEvidence, RunOutcome, ScenarioOutcome, SessionOutcome};

/// The session's verdicts as JSON; verdict strings as in the method (`PASS-smoke`).
/// Serialized one scenario at a time: the JSON value of a long session's every
/// scenario at once was part of its peak (issue 33).
pub fn verdicts_json(outcome: &SessionOutcome) -> VerdictsJson<'_> {
    VerdictsJson(outcome)
}

/// [`verdicts_json`]'s document, written as it is serialized.
pub struct VerdictsJson<'a>(&'a SessionOutcome);

impl Serialize for VerdictsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let outcome = self.0;
        // The session's fields in the order a JSON map keeps its keys, `scenarios`
        // among them; that one written scenario by scenario.
        let head = json!({
            "session_verdict": outcome.verdict,
            "tier": outcome.tier,
            "interrupted": outcome.interrupted,
            "started": outcome.started,
            "finished": outcome.finished,
            "scenarios": Value::Null,
        });
        let Value::Object(head) = head else {
            return serializer.serialize_unit();
        };
        let mut map = serializer.serialize_map(Some(head.len()))?;
        for (key, value) in &head {
            if key == "scenarios" {
                map.serialize_entry(key, &Scenarios(&outcome.scenarios))?;
            } else {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

struct Scenarios<'a>(&'a [ScenarioOutcome]);

impl Serialize for Scenarios<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for s in self.0 {
            seq.serialize_element(&scenario(s))?;
        }
        seq.end()
    }
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
