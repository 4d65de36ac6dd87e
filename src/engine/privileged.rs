//! Fault actions that need root and reach beyond faultline's own children: iptables
//! rules, tmpfs mounts and Docker engine actions. None runs without an approval the
//! journal recorded first, with who gave it (policy: `--yes` never approves one).
//! Process signals to the session's own services, libfaketime clocks, the built-in
//! proxy and a filler file in an existing directory are not privileged; a `command`
//! fault is the run spec author's own command, run as written.

use crate::runspec::{Binding, FaultStep};

use crate::session::operator::{Question, QuestionKind};

/// A recorded approval: the seq of the journal record that granted it (the record
/// names who gave it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub seq: u64,
}

/// What `step` does with privilege, in words an operator can approve, if anything.
/// `${var}`s are shown as written: the values are only known inside the iteration.
pub fn step_action(step: &FaultStep) -> Option<String> {
    step.nemesis.privileged(&step.id)
}

/// [`step_action`] for a run that goes in a network namespace of its own when
/// `isolated` (`isolate: netns`): a `net` rule without `netns:` is said to go there.
pub fn step_action_in(step: &FaultStep, isolated: bool) -> Option<String> {
    match &step.nemesis {
        crate::nemesis::NemesisSpec::Net(net) => Some(net.privileged_in(&step.id, isolated)),
        _ => step_action(step),
    }
}

/// Every privileged action of a scenario's binding and its arms, arm ids prefixed.
pub fn actions(binding: &Binding) -> Vec<String> {
    actions_in(binding, false)
}

/// [`actions`] of a run in a network namespace of its own when `isolated`.
pub fn actions_in(binding: &Binding, isolated: bool) -> Vec<String> {
    let own = binding
        .faults
        .iter()
        .filter_map(|f| step_action_in(&f.value, isolated));
    let arms = binding.arms.iter().flat_map(|(arm, b)| {
        b.faults
            .iter()
            .filter_map(|f| step_action_in(&f.value, isolated))
            .map(move |a| format!("arm {arm}: {a}"))
    });
    own.chain(arms).collect()
}

/// Run-spec key (scenario or arm id) → its privileged actions, for the bindings that
/// take any: what the preflight asks about, `--answers-template` and `lint` list.
pub fn by_binding(
    spec: &crate::runspec::RunSpec,
) -> std::collections::BTreeMap<String, Vec<String>> {
    spec.bindings
        .iter()
        .map(|(key, (binding, _))| (key.clone(), actions_in(binding, spec.isolated())))
        .filter(|(_, actions)| !actions.is_empty())
        .collect()
}

/// The question that approves scenario `id`'s privileged actions.
pub fn question(id: &str, actions: &[String]) -> Question {
    Question {
        id: format!("privileged.{id}"),
        kind: QuestionKind::ApprovePrivileged,
        prompt: format!(
            "{id} takes privileged actions, each healed when its fault ends: {}. \
             approve / decline (declined: {id} is INCONCLUSIVE-env)",
            actions.join(" | ")
        ),
        choices: crate::session::operator::approve_decline("every action listed"),
        default: "decline".to_string(),
        ..Question::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(yaml: &str) -> FaultStep {
        serde_saphyr::from_str(yaml).expect("a fault step")
    }

    #[test]
    fn net_mounts_and_docker_are_privileged_the_rest_is_not() {
        let net = step("id: cut\nnet: { netns: b, drop: [ { source: 10.0.0.1, dport: 7000 } ] }\n");
        let text = step_action(&net).expect("privileged");
        assert!(text.contains("network namespace `b`"), "{text}");
        assert!(text.contains("-s 10.0.0.1"), "{text}");
        assert!(text.contains("--dport 7000"), "{text}");
        assert!(!text.contains("comment"), "{text}");
        let mount = step("id: full\ndisk: { path: data, size: 1M }\n");
        assert!(
            step_action(&mount)
                .expect("privileged")
                .contains("1M tmpfs")
        );
        let docker = step("id: p\ndocker: { container: kv-n3, action: pause }\n");
        assert!(
            step_action(&docker)
                .expect("privileged")
                .contains("docker pause of container `kv-n3`")
        );
        for plain in [
            "id: f\ndisk: { path: data }\n",
            "id: s\nprocess: { signal: SIGSTOP, target: { service: n3 } }\n",
            "id: c\ncommand: { inject: 'true', heal: 'true' }\n",
        ] {
            assert_eq!(step_action(&step(plain)), None, "{plain}");
        }
    }

    /// Under `isolate: netns` a rule without `netns:` goes in the run's own
    /// namespace, and the approval says so; one naming its namespace keeps it.
    #[test]
    fn an_isolated_run_puts_its_rules_in_its_own_namespace() {
        let cut = step("id: cut\nnet: { drop: [ { dport: 7000 } ] }\n");
        let plain = step_action_in(&cut, false).expect("privileged");
        assert!(
            plain.contains("in the current network namespace"),
            "{plain}"
        );
        let own = step_action_in(&cut, true).expect("privileged");
        assert!(own.contains("the run's own network namespace"), "{own}");
        assert!(!own.contains("current"), "{own}");
        let named = step("id: cut\nnet: { netns: b, drop: [ { dport: 7000 } ] }\n");
        let text = step_action_in(&named, true).expect("privileged");
        assert!(text.contains("network namespace `b`"), "{text}");
    }

    #[test]
    fn the_question_lists_the_actions_and_declines_by_default() {
        let q = question("D2", &["a: one".into(), "b: two".into()]);
        assert_eq!(q.id, "privileged.D2");
        assert_eq!(q.kind, QuestionKind::ApprovePrivileged);
        assert_eq!(q.default, "decline");
        assert!(q.prompt.contains("a: one | b: two"), "{}", q.prompt);
    }
}
