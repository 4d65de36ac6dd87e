//! Arm aggregation and the session verdict (policy §8 "Verdicts").

use super::model::{SessionVerdict, Verdict};

/// Combine the verdicts of a scenario's arms into the scenario's verdict.
///
/// All arms equal → that verdict; else any FAIL-reproducible; else any
/// FAIL-nondeterministic; else any arm that is not a PASS → PARTIAL-surface;
/// else the weakest PASS (PASS-smoke is weaker). No arms → NOT-RUN.
pub fn aggregate_arms(arms: &[Verdict]) -> Verdict {
    let Some(first) = arms.first().copied() else {
        return Verdict::NotRun;
    };
    if arms.iter().all(|v| *v == first) {
        return first;
    }
    if arms.contains(&Verdict::FailReproducible) {
        return Verdict::FailReproducible;
    }
    if arms.contains(&Verdict::FailNondeterministic) {
        return Verdict::FailNondeterministic;
    }
    if arms.iter().any(|v| !v.is_pass()) {
        return Verdict::PartialSurface;
    }
    if arms.contains(&Verdict::PassSmoke) {
        Verdict::PassSmoke
    } else {
        Verdict::PassHardening
    }
}

/// The session verdict from every scenario verdict (by strongest evidence).
///
/// Any FAIL-* → FAIL; else ≥1 PASS and anything not PASS → DONE_WITH_CONCERNS;
/// all PASS → DONE; no PASS and something ran → INCONCLUSIVE; nothing ran
/// (no verdicts, or all NOT-RUN) → BLOCKED.
pub fn session_verdict(verdicts: &[Verdict]) -> SessionVerdict {
    if verdicts.iter().any(|v| v.is_fail()) {
        return SessionVerdict::Fail;
    }
    let passes = verdicts.iter().filter(|v| v.is_pass()).count();
    if passes > 0 {
        return if passes == verdicts.len() {
            SessionVerdict::Done
        } else {
            SessionVerdict::DoneWithConcerns
        };
    }
    if verdicts.iter().any(|v| *v != Verdict::NotRun) {
        SessionVerdict::Inconclusive
    } else {
        SessionVerdict::Blocked
    }
}
