//! A verdict's reason said as one sentence a person reads ("admin arm has no run
//! binding"), for the report, the findings and the headless output. The decision
//! tree records question / answer pairs for auditors; this picks the step that decided
//! the verdict and says it in words.

use super::model::{ReasonStep, Verdict};

/// Steps the tree adds after the deciding one: notes, not the reason.
const NOTES: [&str; 3] = [
    "did a step deadline expire?",
    "release annotation",
    super::tree::SERVICES_NOTE,
];

/// One sentence for `id`'s `verdict` and the reason chain behind it, e.g.
/// `admin arm has no run binding` or `D3 failed: the checker reported 26 anomalies,
/// and a re-run with the same seed reproduced it`.
pub fn sentence(id: &str, verdict: Verdict, reasons: &[ReasonStep]) -> String {
    let who = subject(id);
    let Some(step) = deciding(reasons) else {
        return format!("{who}: {}", fallback(verdict));
    };
    let detail = detail(&step.answer);
    let q = step.question.as_str();
    match verdict {
        Verdict::NotRun => not_run(&who, detail),
        Verdict::InconclusiveEnv if q.contains("capabilities") => {
            format!("{who} could not run here: {detail}")
        }
        Verdict::FailReproducible | Verdict::FailNondeterministic => failed(&who, verdict, reasons),
        _ if q.contains("arms aggregate") => format!("{who}'s arms: {detail}"),
        _ => format!("{who}: {}", gate(q, detail, verdict)),
    }
}

/// The scenario or arm as a sentence names it: `D3`, or `admin arm` for `D5/admin`.
fn subject(id: &str) -> String {
    match id.rsplit_once('/') {
        Some((_, arm)) if !arm.is_empty() => format!("{arm} arm"),
        _ => id.to_string(),
    }
}

/// The step that decided the verdict: the last one that is not a trailing note.
fn deciding(reasons: &[ReasonStep]) -> Option<&ReasonStep> {
    reasons
        .iter()
        .rev()
        .find(|r| !NOTES.contains(&r.question.as_str()))
}

/// An answer without its `yes: ` / `no: ` lead and its trailing `: VERDICT` (both
/// restate what the sentence already says).
fn detail(answer: &str) -> &str {
    let mut text = answer.trim();
    for lead in ["no: ", "yes: "] {
        if let Some(rest) = text.strip_prefix(lead) {
            text = rest;
        }
    }
    for sep in [": ", ", so "] {
        if let Some((head, tail)) = text.rsplit_once(sep)
            && Verdict::ALL.iter().any(|v| v.as_str() == tail.trim())
        {
            text = head;
        }
    }
    text
}

/// Why a scenario or arm was never reached.
fn not_run(who: &str, why: &str) -> String {
    if why == "no run spec binding" {
        return format!("{who} has no run binding in the run spec");
    }
    if why == "excluded by --only" {
        return format!("{who} was left out by --only");
    }
    if let Some(error) = why.strip_prefix("harness error: ") {
        return format!("{who} could not be started: {error}");
    }
    if let Some(question) = why
        .strip_prefix("stopped: question `")
        .and_then(|q| q.strip_suffix("` unanswered"))
    {
        return format!("{who} was not reached: question {question} went unanswered");
    }
    format!("{who} was not reached: {why}")
}

/// A FAIL: what the checker reported and what the same-seed re-run showed.
fn failed(who: &str, verdict: Verdict, reasons: &[ReasonStep]) -> String {
    let reported = reasons
        .iter()
        .find(|r| r.question == "FAIL registered?")
        .map(|r| match detail(&r.answer) {
            checker if checker.starts_with("checker ") => format!("the {checker}"),
            other => other.to_string(),
        })
        .unwrap_or_else(|| "a failure was registered".to_string());
    let rerun = match verdict {
        Verdict::FailReproducible => "and a re-run with the same seed reproduced it",
        _ if reasons.iter().any(|r| r.answer.starts_with("no re-run")) => {
            "and it was not re-run yet"
        }
        _ => "but a re-run with the same seed did not reproduce it",
    };
    format!("{who} failed: {reported}, {rerun}")
}

/// A gate of the tree (or a downgrade rule) that stopped short of a PASS, or the
/// PASS itself.
/// Anything else is said by its answer alone.
fn gate(question: &str, detail: &str, verdict: Verdict) -> String {
    let q = question;
    if verdict.is_pass() {
        return passed(verdict, q, detail);
    }
    if q.contains("landing") {
        if detail.starts_with(super::tree::NEVER_INJECTED) {
            return detail.to_string();
        }
        return format!("the fault's landing was not proven ({detail})");
    }
    if q == "did the declared checker run?" {
        return "the declared checker did not run".to_string();
    }
    if q.contains("required fields") {
        return format!("the history lacks fields the checker needs ({detail})");
    }
    if q.contains("tell PASS from FAIL") {
        return format!("the checker could not tell PASS from FAIL ({detail})");
    }
    if q.contains("match the model") {
        return format!("the checker does not fit the model and claim ({detail})");
    }
    if q.contains("cover every op") {
        return format!("the checker did not cover every op ({detail})");
    }
    if q == super::tree::SERVICES_QUESTION {
        return format!("a service ended with no fault to explain it: {detail}");
    }
    if q.contains("green-but-broken") {
        return format!("a green-but-broken check did not pass: {detail}");
    }
    if q.contains("budget tier") {
        return "no budget tier was fully met".to_string();
    }
    if q.contains("weak-oracle") {
        return format!("the weak-oracle audit did not hold: {detail}");
    }
    if q.contains("seeds agree") {
        return format!("only {detail} seed(s) agreed where three are needed");
    }
    detail.to_string()
}

/// A PASS: what the last gate it went through said.
fn passed(verdict: Verdict, question: &str, detail: &str) -> String {
    let how = if verdict == Verdict::PassHardening {
        "passed with a fault active"
    } else {
        "passed"
    };
    if question.contains("seeds agree") {
        match detail.parse::<u32>() {
            Ok(n) => format!("{how}; {n} seeds agreed"),
            Err(_) => format!("{how}; {detail}"),
        }
    } else if question.contains("budget tier") || question.contains("weak-oracle") {
        format!("{how}; every audit held")
    } else {
        how.to_string()
    }
}

/// What a verdict means when no reason was recorded.
fn fallback(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::PassSmoke | Verdict::PassHardening => "passed",
        Verdict::FailReproducible | Verdict::FailNondeterministic => "failed",
        Verdict::InconclusiveEnv => "could not run here",
        Verdict::InconclusiveOracleTooWeak => "the checker could not tell PASS from FAIL",
        Verdict::InconclusiveFaultNotProven => "the fault's landing was not proven",
        Verdict::PartialSurface | Verdict::PartialModel => "only partly checked",
        Verdict::NotRun => "was not reached",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{CheckerRun, Evidence, Tier, decide};

    fn evidence() -> Evidence {
        Evidence {
            tier_met: Some(Tier::Smoke),
            seeds_agreeing: 1,
            ..Evidence::empty()
        }
    }

    fn said(id: &str, e: &Evidence) -> String {
        let d = decide(e);
        sentence(id, d.verdict, &d.reasons)
    }

    #[test]
    fn an_arm_without_a_binding_is_said_plainly() {
        let e = Evidence {
            not_run: Some("no run spec binding".into()),
            ..evidence()
        };
        assert_eq!(
            said("D5/admin", &e),
            "admin arm has no run binding in the run spec"
        );
    }

    #[test]
    fn a_reproduced_fail_names_its_anomalies_and_the_rerun() {
        let e = Evidence {
            checker: CheckerRun::Judged {
                anomalies: 26,
                ops_checked: 199,
                ops_produced: 199,
            },
            rerun_reproduced: Some(true),
            ..evidence()
        };
        let text = said("D3", &e);
        assert_eq!(
            text,
            "D3 failed: the checker reported 26 anomalies, and a re-run with the same seed reproduced it"
        );
    }

    #[test]
    fn an_unproven_landing_and_a_missing_capability_are_said_without_codes() {
        let unproven = Evidence {
            fault_planned: true,
            ..evidence()
        };
        let text = said("D4", &unproven);
        assert!(
            text.starts_with("D4: the fault's landing was not proven"),
            "{text}"
        );
        assert!(!text.contains("no: "), "{text}");
        let env = Evidence {
            env_missing: Some("capability fl-client missing".into()),
            ..evidence()
        };
        assert_eq!(
            said("D6", &env),
            "D6 could not run here: capability fl-client missing"
        );
    }

    /// Issue 30 (2): a fault whose injection failed was never injected, and the
    /// sentence says so with what failed, not that a landing signal was missing.
    #[test]
    fn a_fault_never_injected_is_said_as_such() {
        let why = "target command `curl -s x | jq -r .leader; exit 1` failed (exited 1), \
                   printing `nobody-is-leader` on stdout";
        let e = Evidence {
            fault_planned: true,
            never_injected: vec![format!("kill-leader: {why}")],
            ..evidence()
        };
        let d = decide(&e);
        assert_eq!(d.verdict, Verdict::InconclusiveFaultNotProven);
        let text = sentence("S6", d.verdict, &d.reasons);
        assert_eq!(
            text,
            format!("S6: the fault was never injected: kill-leader: {why}")
        );
        assert!(!text.contains("landing signal"), "{text}");
    }

    #[test]
    fn a_service_that_ended_is_named_under_every_verdict() {
        let ended = vec!["n1 exited 3 at +0.1 s: permission denied".to_string()];
        let cites = std::collections::BTreeMap::from([("ended".to_string(), vec![12])]);
        let env = Evidence {
            env_missing: Some("precondition `cluster up and healthy` failed".into()),
            services_ended: ended.clone(),
            cites: cites.clone(),
            ..evidence()
        };
        let d = decide(&env);
        assert_eq!(d.verdict, Verdict::InconclusiveEnv);
        assert_eq!(
            sentence("K1", d.verdict, &d.reasons),
            "K1 could not run here: precondition `cluster up and healthy` failed: \
             n1 exited 3 at +0.1 s: permission denied"
        );
        assert!(d.reasons.iter().any(|r| r.cites.contains(&12)), "{d:?}");
        // Said once: the env answer names it, no note repeats it.
        let naming = d.reasons.iter().filter(|r| r.answer.contains("n1 exited"));
        assert_eq!(naming.count(), 1, "{d:?}");

        let judged = CheckerRun::Judged {
            anomalies: 0,
            ops_checked: 3,
            ops_produced: 3,
        };
        let pass = Evidence {
            checker: judged,
            services_ended: ended.clone(),
            cites: cites.clone(),
            ..evidence()
        };
        let d = decide(&pass);
        assert_eq!(d.verdict, Verdict::PartialSurface);
        assert_eq!(
            sentence("K2", d.verdict, &d.reasons),
            "K2: a service ended with no fault to explain it: n1 exited 3 at +0.1 s: \
             permission denied"
        );

        // Any other verdict keeps its reason; the end is a cited note after it.
        let fail = Evidence {
            checker: CheckerRun::Judged {
                anomalies: 2,
                ops_checked: 3,
                ops_produced: 3,
            },
            rerun_reproduced: Some(true),
            services_ended: ended,
            cites,
            ..evidence()
        };
        let d = decide(&fail);
        assert_eq!(d.verdict, Verdict::FailReproducible);
        let note = d.reasons.last().expect("a note");
        assert_eq!(note.question, crate::verdict::tree::SERVICES_NOTE);
        assert_eq!(note.cites, vec![12]);
        assert!(sentence("K3", d.verdict, &d.reasons).starts_with("K3 failed"));
    }

    #[test]
    fn a_downgrade_drops_the_verdict_it_restates() {
        let e = Evidence {
            checker: CheckerRun::Judged {
                anomalies: 0,
                ops_checked: 10,
                ops_produced: 10,
            },
            tier_met: None,
            ..evidence()
        };
        let d = decide(&e);
        assert_eq!(d.verdict, Verdict::PartialSurface);
        let text = sentence("D1", d.verdict, &d.reasons);
        assert_eq!(text, "D1: no budget tier was fully met");
    }

    #[test]
    fn a_pass_is_said_as_passed() {
        let e = Evidence {
            checker: CheckerRun::Judged {
                anomalies: 0,
                ops_checked: 10,
                ops_produced: 10,
            },
            ..evidence()
        };
        let d = decide(&e);
        assert_eq!(d.verdict, Verdict::PassSmoke);
        assert_eq!(
            sentence("D1", d.verdict, &d.reasons),
            "D1: passed; every audit held"
        );
    }
}
