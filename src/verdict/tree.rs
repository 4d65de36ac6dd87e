//! The run-end decision tree (method §3, policy §8 "Verdicts").
//!
//! [`decide`] is a pure function of the [`Evidence`]: it asks the tree's
//! questions in a fixed order, then applies the downgrade rules to any PASS,
//! recording every question and answer (with journal citations) on the way.

use super::model::{
    AuditItem, AuditStatus, CheckerRun, Decision, Evidence, ReasonStep, Tier, Verdict,
};

/// Collects the reason chain while the tree is walked.
struct Chain<'a> {
    e: &'a Evidence,
    steps: Vec<ReasonStep>,
}

impl<'a> Chain<'a> {
    fn new(e: &'a Evidence) -> Self {
        Chain {
            e,
            steps: Vec::new(),
        }
    }

    /// Record one question, its answer and the journal entries cited under `key`.
    fn ask(&mut self, key: &str, question: &str, answer: impl Into<String>) {
        let cites = self.e.cites.get(key).cloned().unwrap_or_default();
        self.steps.push(ReasonStep {
            question: question.to_string(),
            answer: answer.into(),
            cites,
        });
    }

    /// Record one question citing what is cited under each of `keys`.
    fn ask_keys(&mut self, keys: &[&str], question: &str, answer: impl Into<String>) {
        let cites = keys
            .iter()
            .flat_map(|k| self.e.cites.get(*k).cloned().unwrap_or_default())
            .collect();
        self.steps.push(ReasonStep {
            question: question.to_string(),
            answer: answer.into(),
            cites,
        });
    }

    /// Record one question whose citations are an audit item's own (plus the key's).
    fn ask_item(&mut self, key: &str, question: &str, answer: String, item: &AuditItem) {
        let mut cites = self.e.cites.get(key).cloned().unwrap_or_default();
        cites.extend(item.cites.iter().copied());
        self.steps.push(ReasonStep {
            question: question.to_string(),
            answer,
            cites,
        });
    }
}

/// The question a service's unexplained end decides a PASS by.
pub const SERVICES_QUESTION: &str =
    "did every service outlive the workload, or a fault explain its end?";
/// The note it adds to any other verdict (the env question names them itself).
pub const SERVICES_NOTE: &str = "did a service end with no fault to explain it?";

/// The services' unexplained ends in one answer: `n1 exited 3 at +0.1 s: …; n2 …`.
fn ends(e: &Evidence) -> String {
    e.services_ended.join("; ")
}

/// Compute the verdict for one scenario or arm, with the reason chain behind it.
pub fn decide(e: &Evidence) -> Decision {
    let mut chain = Chain::new(e);
    let verdict = walk(e, &mut chain);
    let said = chain.steps.iter().any(|s| s.question == SERVICES_QUESTION)
        || (verdict == Verdict::InconclusiveEnv && e.env_missing.is_some());
    if !e.services_ended.is_empty() && !said && verdict != Verdict::NotRun {
        chain.ask("ended", SERVICES_NOTE, format!("yes: {}", ends(e)));
    }
    if let Some(step) = &e.expired_step {
        chain.ask(
            "deadline",
            "did a step deadline expire?",
            format!("yes: step `{step}` expired; verdict taken from what was gathered"),
        );
    }
    if verdict == Verdict::PassHardening && e.tier_met == Some(Tier::Release) {
        chain.ask(
            "tier",
            "release annotation",
            "release tier met: PASS-hardening carries a release annotation",
        );
    }
    Decision {
        verdict,
        tier_met: e.tier_met,
        reasons: chain.steps,
    }
}

/// The tree proper, then the downgrades.
fn walk(e: &Evidence, c: &mut Chain<'_>) -> Verdict {
    if let Some(why) = &e.not_run {
        c.ask("not_run", "was the scenario reached?", format!("no: {why}"));
        return Verdict::NotRun;
    }
    c.ask("not_run", "was the scenario reached?", "yes");

    if let Some(why) = &e.env_missing {
        // A service that ended at start is why the cluster was not there: named here.
        let answer = if e.services_ended.is_empty() {
            format!("no: {why}")
        } else {
            format!("no: {why}: {}", ends(e))
        };
        c.ask_keys(
            &["env", "ended"],
            "were required capabilities and preconditions present?",
            answer,
        );
        return Verdict::InconclusiveEnv;
    }
    c.ask(
        "env",
        "were required capabilities and preconditions present?",
        "yes",
    );

    if let CheckerRun::Judged { anomalies, .. } = &e.checker
        && *anomalies > 0
    {
        c.ask(
            "fail",
            "FAIL registered?",
            format!(
                "yes: checker reported {anomalies} anomal{}",
                plural_y(*anomalies)
            ),
        );
        return match e.rerun_reproduced {
            Some(true) => {
                c.ask(
                    "rerun",
                    "did a re-run with the same seed reproduce it?",
                    "yes",
                );
                Verdict::FailReproducible
            }
            Some(false) => {
                c.ask(
                    "rerun",
                    "did a re-run with the same seed reproduce it?",
                    "no",
                );
                Verdict::FailNondeterministic
            }
            None => {
                c.ask(
                    "rerun",
                    "did a re-run with the same seed reproduce it?",
                    "no re-run yet: treated as nondeterministic",
                );
                Verdict::FailNondeterministic
            }
        };
    }
    c.ask("fail", "FAIL registered?", "no");

    if e.fault_planned {
        if !e.landing_proven {
            let answer = if e.never_injected.is_empty() {
                "no: declared landing signal absent or ambiguous".to_string()
            } else {
                format!("no: {NEVER_INJECTED}: {}", e.never_injected.join("; "))
            };
            c.ask(
                "landing",
                "a fault was planned: was its landing proven?",
                answer,
            );
            return Verdict::InconclusiveFaultNotProven;
        }
        c.ask(
            "landing",
            "a fault was planned: was its landing proven?",
            "yes",
        );
    }

    if let Some((question, answer)) = e.checker.too_weak() {
        c.ask("checker", "did the declared checker run?", "yes");
        c.ask("fields", question, answer);
        return Verdict::InconclusiveOracleTooWeak;
    }
    let CheckerRun::Judged {
        ops_checked: checked,
        ops_produced: produced,
        ..
    } = e.checker
    else {
        c.ask("checker", "did the declared checker run?", "no");
        return Verdict::PartialSurface;
    };
    c.ask("checker", "did the declared checker run?", "yes");
    c.ask(
        "fields",
        "does the history have the checker's required fields?",
        "yes",
    );

    if produced == 0 {
        c.ask(
            "coverage",
            "did the checker cover every op the scenario produced?",
            "no: the scenario produced no ops",
        );
        return Verdict::PartialModel;
    }
    if checked < produced {
        c.ask(
            "coverage",
            "did the checker cover every op the scenario produced?",
            format!(
                "no: {} of {produced} ops unchecked ({checked} checked)",
                produced - checked
            ),
        );
        return Verdict::PartialModel;
    }
    c.ask(
        "coverage",
        "did the checker cover every op the scenario produced?",
        format!("yes: {checked} of {produced} ops"),
    );

    let base = if e.fault_active {
        c.ask(
            "fault_active",
            "was a fault active during the checked window?",
            "yes: PASS-hardening",
        );
        Verdict::PassHardening
    } else {
        c.ask(
            "fault_active",
            "was a fault active during the checked window?",
            "no: PASS-smoke",
        );
        Verdict::PassSmoke
    };
    downgrade(e, base, c)
}

/// Apply the downgrade rules (a)–(d) to a PASS, in order.
fn downgrade(e: &Evidence, base: Verdict, c: &mut Chain<'_>) -> Verdict {
    // A member that ended on its own: the history is of a cluster the plan did not
    // describe, whatever the checker said of it.
    if !e.services_ended.is_empty() {
        c.ask(
            "ended",
            SERVICES_QUESTION,
            format!("no: {}: {}", ends(e), Verdict::PartialSurface),
        );
        return Verdict::PartialSurface;
    }
    // (a) green-but-broken checks.
    // A failed fault check (3–4) outranks the others: the fault itself is unproven.
    let bad: Vec<&AuditItem> = e
        .green_but_broken
        .iter()
        .filter(|i| matches!(i.status, AuditStatus::Failed | AuditStatus::Unchecked))
        .collect();
    if let Some(item) = bad
        .iter()
        .find(|i| is_fault_check(i))
        .or_else(|| bad.first())
    {
        let fault_check = is_fault_check(item);
        let v = if fault_check {
            Verdict::InconclusiveFaultNotProven
        } else {
            Verdict::PartialSurface
        };
        c.ask_item(
            "gbb",
            "did every green-but-broken check pass?",
            format!(
                "no: `{}` {} ({}): {v}",
                item.id,
                status_word(item.status),
                item.evidence
            ),
            item,
        );
        return v;
    }
    c.ask("gbb", "did every green-but-broken check pass?", "yes");

    // (b) budget tier gating.
    let mut v = base;
    match e.tier_met {
        None => {
            c.ask(
                "tier",
                "which budget tier was met?",
                "no budget tier met: PARTIAL-surface",
            );
            return Verdict::PartialSurface;
        }
        Some(Tier::Smoke) if v == Verdict::PassHardening => {
            c.ask(
                "tier",
                "which budget tier was met?",
                "smoke only: capped at PASS-smoke",
            );
            v = Verdict::PassSmoke;
        }
        Some(t) => c.ask("tier", "which budget tier was met?", t.as_str()),
    }

    // (c) weak-oracle audit.
    if let Some(item) = e
        .weak_oracle
        .iter()
        .find(|i| i.status == AuditStatus::Unchecked)
    {
        c.ask_item(
            "weak",
            "was every weak-oracle audit item checked?",
            format!("no: `{}` unchecked: PARTIAL-surface", item.id),
            item,
        );
        return Verdict::PartialSurface;
    }
    if v == Verdict::PassHardening && e.serious {
        let failed: Vec<&AuditItem> = e
            .weak_oracle
            .iter()
            .filter(|i| i.status == AuditStatus::Failed)
            .collect();
        if let Some(item) = failed
            .iter()
            .find(|i| i.id != "weak-seeds")
            .or_else(|| failed.first())
        {
            let to = if item.id == "weak-seeds" {
                Verdict::PartialModel
            } else {
                Verdict::PartialSurface
            };
            c.ask_item(
                "weak",
                "serious scenario: did every weak-oracle audit item pass?",
                format!("no: `{}` failed ({}): {to}", item.id, item.evidence),
                item,
            );
            return to;
        }
    }
    c.ask("weak", "did the weak-oracle audit hold?", "yes");

    // (d) seeds.
    if v == Verdict::PassHardening {
        if e.seeds_agreeing < 3 {
            c.ask(
                "seeds",
                "did at least three PRNG seeds agree?",
                format!("no: {} agreeing: PARTIAL-model", e.seeds_agreeing),
            );
            return Verdict::PartialModel;
        }
        c.ask(
            "seeds",
            "did at least three PRNG seeds agree?",
            format!("yes: {}", e.seeds_agreeing),
        );
    }
    v
}

/// How the landing question's answer starts for a fault whose injection failed.
pub const NEVER_INJECTED: &str = "the fault was never injected";

/// Green-but-broken checks 3 (fault injected) and 4 (fault not a silent no-op).
fn is_fault_check(item: &AuditItem) -> bool {
    item.id.starts_with("gbb-3") || item.id.starts_with("gbb-4")
}

fn status_word(s: AuditStatus) -> &'static str {
    match s {
        AuditStatus::Passed => "passed",
        AuditStatus::Failed => "failed",
        AuditStatus::NotApplicable => "not applicable",
        AuditStatus::Unchecked => "unchecked",
    }
}

fn plural_y(n: u64) -> &'static str {
    if n == 1 { "y" } else { "ies" }
}
