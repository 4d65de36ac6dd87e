//! Run-spec loading: a complete spec, and errors that name file, line, column and field.

use std::time::Duration;

use faultline::nemesis::NemesisSpec;
use faultline::plan::{EmbeddedRunSpec, Plan};
use faultline::runspec::{self, TargetSpec};
use faultline::verdict::Tier;

const SIDECAR: &str = "\
version: 1
vars:
  rate: \"50\"
scenarios:
  D2:
    cluster:
      services:
        - name: n1
          run: demo node n1
      health:
        run: demo health
        deadline: 10s
    preconditions:
      - name: fault plane responsive
        run: kill -0 $$
    workload:
      run: demo client --seed ${seed}
      deadline: 60s
      expected_duration: 4s
    faults:
      - id: pause-n3
        after: 1s
        duration: 1500ms
        process:
          signal: SIGSTOP
          target:
            service: n3
        landing:
          - side: victim
            log:
              service: n1
              pattern: replication to n3 timed out
            within: 2s
    quiesce:
      run: demo quiet
      timeout: 20s
    history:
      path: history.jsonl
      format: jsonl
    checker:
      builtin: no-lost-ack
      final_state: demo dump
    tiers:
      smoke: { duration: 3s }
      hardening: { duration: 4s, seeds: 3, faults: 1 }
";

fn plan_with_block(line: usize, yaml: &str) -> Plan {
    Plan {
        source: "plan.md".into(),
        embedded_run_specs: vec![EmbeddedRunSpec {
            scenario_id: "D2".into(),
            line,
            yaml: yaml.into(),
        }],
        ..Plan::default()
    }
}

#[test]
fn a_complete_sidecar_loads() {
    let spec =
        runspec::load(&Plan::default(), Some(("plan.run.yaml", SIDECAR))).expect("valid spec");
    let (binding, origin) = &spec.bindings["D2"];
    assert_eq!(origin.file, "plan.run.yaml");
    assert_eq!(spec.vars["rate"], "50");
    let fault = &binding.faults[0].value;
    assert_eq!(fault.after.0, Duration::from_secs(1));
    assert_eq!(
        fault.duration.map(|d| d.0),
        Some(Duration::from_millis(1500))
    );
    let NemesisSpec::Process(process) = &fault.nemesis else {
        panic!("a process fault, got {:?}", fault.nemesis);
    };
    assert!(matches!(&process.target, TargetSpec::Service(s) if s == "n3"));
    assert_eq!(binding.tiers[&Tier::Hardening].seeds, 3);
    assert_eq!(binding.tiers[&Tier::Smoke].seeds, 1, "seeds default to one");
    assert_eq!(binding.faults[0].referenced.line(), 21);
}

#[test]
fn an_unknown_field_is_named_with_its_location() {
    let bad = SIDECAR.replace("    workload:", "    wrkload:");
    let errors = runspec::load(&Plan::default(), Some(("plan.run.yaml", &bad))).expect_err("typo");
    let text = errors[0].to_string();
    assert!(text.starts_with("plan.run.yaml:16:5:"), "{text}");
    assert_eq!(
        errors[0].field.as_deref(),
        Some("scenarios.D2.wrkload"),
        "{text}"
    );
    assert!(
        text.contains("allowed here: before, cluster, preconditions, workload"),
        "{text}"
    );
    assert!(!text.contains("at line"), "location said twice: {text}");
}

/// serde names the value it could not take (`true`); the error names the field path
/// it was at and what that field takes, in the sidecar and in an embedded block.
#[test]
fn a_wrong_type_names_the_field_path_and_what_is_allowed() {
    let bad = SIDECAR.replace("after: 1s", "after: true");
    let errors = runspec::load(&Plan::default(), Some(("plan.run.yaml", &bad))).expect_err("bool");
    assert_eq!(
        errors[0].field.as_deref(),
        Some("scenarios.D2.faults[0].after"),
        "{}",
        errors[0]
    );
    assert_eq!(
        errors[0].message,
        "expected a duration such as 300ms, 5s or 2m, got boolean `true`"
    );
    let plan = plan_with_block(40, "faults:\n  - id: x\n    repeat: -2\n");
    let errors = runspec::load(&plan, None).expect_err("negative repeat");
    assert_eq!(
        errors[0].field.as_deref(),
        Some("faults[0].repeat"),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].to_string().starts_with("plan.md:42:"),
        "{}",
        errors[0]
    );
    assert!(errors[0].message.ends_with("got `-2`"), "{}", errors[0]);
}

#[test]
fn a_bad_duration_is_located() {
    let bad = SIDECAR.replace("duration: 1500ms", "duration: 1500 parsecs");
    let errors =
        runspec::load(&Plan::default(), Some(("plan.run.yaml", &bad))).expect_err("bad duration");
    let text = errors[0].to_string();
    assert!(text.starts_with("plan.run.yaml:23:"), "{text}");
    assert!(text.contains("parsecs"), "{text}");
}

#[test]
fn a_fault_needs_exactly_one_mechanism() {
    let bad = SIDECAR.replace(
        "        process:\n          signal: SIGSTOP\n          target:\n            service: n3\n",
        "",
    );
    let errors =
        runspec::load(&Plan::default(), Some(("plan.run.yaml", &bad))).expect_err("no mechanism");
    let text = errors[0].to_string();
    assert!(text.starts_with("plan.run.yaml:21:"), "{text}");
    assert!(text.contains("pause-n3"), "{text}");
}

#[test]
fn embedded_errors_count_lines_from_the_plan() {
    let plan = plan_with_block(40, "workload:\n  run: x\n  deadline: soon\n");
    let errors = runspec::load(&plan, None).expect_err("bad deadline");
    assert!(
        errors[0].to_string().starts_with("plan.md:42:"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_scenario_bound_in_both_places_is_an_error_naming_both() {
    let plan = plan_with_block(40, "workload:\n  run: x\n");
    let errors =
        runspec::load(&plan, Some(("plan.run.yaml", SIDECAR))).expect_err("double binding");
    let text = errors[0].to_string();
    assert!(
        text.starts_with("plan.run.yaml:6:") && text.contains("plan.md:40"),
        "{text}"
    );
}

/// The nemesis is one key of the step: two kinds, or a key that is none, are refused
/// at the step, naming what was seen and what is allowed.
#[test]
fn a_fault_naming_two_kinds_or_an_unknown_key_is_refused() {
    let two = SIDECAR.replace(
        "        process:\n",
        "        disk: { path: /tmp }\n        process:\n",
    );
    let errors = runspec::load(&Plan::default(), Some(("plan.run.yaml", &two))).expect_err("two");
    let text = errors[0].to_string();
    assert!(text.starts_with("plan.run.yaml:21:"), "{text}");
    assert!(
        text.contains("fault `pause-n3` of D2 names `disk` and `process`"),
        "{text}"
    );
    assert!(
        text.contains("`process`, `command`, `net`, `disk`"),
        "{text}"
    );

    let typo = SIDECAR.replace("        process:\n", "        proces:\n");
    let errors = runspec::load(&Plan::default(), Some(("plan.run.yaml", &typo))).expect_err("typo");
    let text = errors[0].to_string();
    assert_eq!(
        errors[0].field.as_deref(),
        Some("scenarios.D2.faults[0].proces"),
        "{text}"
    );
    assert!(text.contains("unknown field `proces`"), "{text}");
    assert!(
        text.contains("landing, substitute_proxy, process, command"),
        "{text}"
    );
}

fn two_blocks(first: &str, second: &str) -> Plan {
    Plan {
        source: "plan.md".into(),
        embedded_run_specs: vec![
            EmbeddedRunSpec {
                scenario_id: "S1".into(),
                line: 10,
                yaml: first.into(),
            },
            EmbeddedRunSpec {
                scenario_id: "S2".into(),
                line: 40,
                yaml: second.into(),
            },
        ],
        ..Plan::default()
    }
}

#[test]
fn embedded_blocks_declare_nodes_and_isolation_for_the_whole_run() {
    let first =
        "nodes:\n  n1: { ssh: root@10.0.0.1, port: 2222 }\nworkload: { run: w, node: n1 }\n";
    // The second block uses the first block's node without declaring it.
    let second = "workload: { run: w, node: n1 }\n";
    let spec = runspec::load(&two_blocks(first, second), None).expect("nodes from a block");
    let (node, origin) = &spec.nodes["n1"];
    assert_eq!(node.port, Some(2222));
    assert_eq!((origin.file.as_str(), origin.line), ("plan.md", 11));
    assert!(
        spec.bindings["S2"].0.nodes.is_empty(),
        "taken out of the binding"
    );
    assert!(!spec.isolated());

    // A name no block declares is named with the declared ones.
    let errors = runspec::load(&two_blocks(first, "workload: { run: w, node: n9 }\n"), None)
        .expect_err("n9 undeclared");
    let text = errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains("node `n9` is not declared under `nodes:` (declared: n1)"),
        "{text}"
    );
    assert!(
        text.starts_with("plan.md:40:"),
        "at the block using it: {text}"
    );

    // Declared twice, differently: both places named.
    let other = "nodes:\n  n1: { ssh: root@10.0.0.2 }\nworkload: { run: w }\n";
    let errors = runspec::load(&two_blocks(first, other), None).expect_err("two n1");
    let text = errors[0].to_string();
    assert!(text.starts_with("plan.md:41:7:"), "{text}");
    assert!(
        text.contains("declared twice, differently: here and at plan.md:11"),
        "{text}"
    );

    // `isolate: netns` in a block holds for the run; with an ssh node it is refused.
    let isolated = "isolate: netns\nworkload: { run: w }\n";
    let spec =
        runspec::load(&two_blocks(isolated, "workload: { run: w }\n"), None).expect("isolated");
    assert!(spec.isolated());
    let errors = runspec::load(&two_blocks(first, isolated), None).expect_err("ssh + netns");
    let text = errors[0].to_string();
    assert!(text.starts_with("plan.md:40:"), "{text}");
    assert!(
        text.contains("ssh node(s) n1 could not be reached"),
        "{text}"
    );
}

#[test]
fn run_wide_fields_are_refused_where_they_cannot_hold() {
    // In a sidecar's scenario: they belong at its top level.
    let sidecar = "version: 1\nscenarios:\n  S1:\n    isolate: netns\n    workload: { run: w }\n";
    let errors = runspec::load(&Plan::default(), Some(("p.run.yaml", sidecar))).expect_err("");
    let text = errors[0].to_string();
    assert!(text.starts_with("p.run.yaml:4:"), "{text}");
    assert!(
        text.contains("`isolate:` holds for the whole run"),
        "{text}"
    );
    // In an arm of an embedded block.
    let block = "workload: { run: w }\narms:\n  api:\n    nodes:\n      n1: { local: true }\n    workload: { run: w }\n";
    let errors = runspec::load(&plan_with_block(20, block), None).expect_err("arm nodes");
    let text = errors[0].to_string();
    assert!(text.starts_with("plan.md:24:11:"), "{text}");
    assert!(
        text.contains("field `arms.api.nodes`") && text.contains("(D2/api)"),
        "{text}"
    );
    // At a sidecar's top level, both load; an unknown value is named with the allowed.
    let top = "version: 1\nisolate: netns\nscenarios:\n  S1:\n    workload: { run: w }\n";
    assert!(
        runspec::load(&Plan::default(), Some(("p.run.yaml", top)))
            .expect("top")
            .isolated()
    );
    let bad = top.replace("netns", "container");
    let errors = runspec::load(&Plan::default(), Some(("p.run.yaml", &bad))).expect_err("bad");
    let text = errors[0].to_string();
    assert!(text.starts_with("p.run.yaml:2:10:"), "{text}");
    assert!(text.contains("none") && text.contains("netns"), "{text}");
}

/// A sidecar with one `net` fault whose first rule's `dport` is `port` (YAML text).
fn net_sidecar(port: &str) -> String {
    format!(
        "version: 1\nvars: {{ member: \"${{port:n3}}\", word: \"seven\", deep: \"${{word}}\" }}\n\
         scenarios:\n  S7:\n    faults:\n      - id: cut-n3\n        \
         net: {{ drop: [ {{ destination: 127.0.0.3, dport: {port} }} ] }}\n"
    )
}

fn net_rule(spec: &runspec::RunSpec) -> runspec::NetRule {
    let (binding, _) = &spec.bindings["S7"];
    match &binding.faults[0].value.nemesis {
        NemesisSpec::Net(net) => net.drop[0].clone(),
        other => panic!("not a net fault: {other:?}"),
    }
}

/// A `net` rule's port may be a member's port (`${port:n3}`) or a `${var}` that gives
/// one, read at injection like the addresses; a number as before, quoted or not.
#[test]
fn a_net_port_takes_a_members_port_or_a_var() {
    for (written, number, template) in [
        ("7000", Some(7000), None),
        ("\"7000\"", Some(7000), None),
        ("\"${port:n3}\"", None, Some("${port:n3}")),
        ("'${member}'", None, Some("${member}")),
        ("\"1${seed}\"", None, Some("1${seed}")),
    ] {
        let spec = runspec::load(
            &Plan::default(),
            Some(("plan.run.yaml", &net_sidecar(written))),
        )
        .unwrap_or_else(|e| panic!("{written}: {e:?}"));
        let rule = net_rule(&spec);
        assert_eq!(rule.dport, number, "{written}");
        assert_eq!(rule.dport_template.as_deref(), template, "{written}");
        // The approval shows the port as written until the run knows it.
        let shown = faultline::nemesis::net::add_argv(&rule, "t").join(" ");
        let port = number.map_or(template.unwrap_or_default().to_string(), |n| n.to_string());
        assert!(shown.contains(&format!("-p tcp --dport {port}")), "{shown}");
    }
}

/// What is not a port is refused at its own text, naming the file, line, column, the
/// field and what it takes, the value whole (`}` and quotes included); a `${var}` that
/// gives no port is refused once the run spec's `vars` are substituted.
#[test]
fn a_net_port_that_is_not_one_is_refused_where_it_is_written() {
    for (written, found) in [
        (
            "\"${port:n3\"",
            "`${port:n3`: its `${` is never closed by `}`",
        ),
        ("seventy", "got `seventy`"),
        ("70000", "70000"),
        ("-1", "-1"),
        (
            "\"${word}\"",
            "`${word}` gives `seven`, which is not a port",
        ),
        (
            "\"${deep}\"",
            "`${deep}` gives `seven`, which is not a port",
        ),
    ] {
        let text = net_sidecar(written);
        let errors =
            runspec::load(&Plan::default(), Some(("plan.run.yaml", &text))).expect_err(written);
        let shown = errors[0].to_string();
        let column = text
            .lines()
            .nth(6)
            .and_then(|l| l.find("dport: "))
            .expect("dport")
            + 8;
        assert!(
            shown.starts_with(&format!("plan.run.yaml:7:{column}: run spec field ")),
            "{written}: {shown}"
        );
        assert_eq!(
            errors[0].field.as_deref(),
            Some("scenarios.S7.faults[0].net.drop[0].dport"),
            "{written}: {shown}"
        );
        assert!(shown.contains(found), "{written}: {shown}");
        assert!(
            shown.contains("a whole number from 0 to 65535")
                && shown.contains("`${port:NAME}` / `${var}` substitution"),
            "{written}: {shown}"
        );
    }
}

/// Another whole-number field quoted in the document is shown whole in its error:
/// the `}` inside the quotes does not cut it.
#[test]
fn a_quoted_value_is_shown_whole_in_its_error() {
    let text = "version: 1\nscenarios:\n  S1:\n    faults:\n      - { id: x, process: { signal: SIGSTOP, target: { service: n1 } }, repeat: \"${n}\" }\n";
    let errors =
        runspec::load(&Plan::default(), Some(("plan.run.yaml", text))).expect_err("quoted");
    let shown = errors[0].to_string();
    assert!(shown.contains("got `\"${n}\"`"), "{shown}");
}
