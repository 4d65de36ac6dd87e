//! What a real cluster's run spec needs beyond services, workload and one checker
//! (issue 16, item 5), each on real processes: a step before the cluster starts, a
//! fault aimed at whatever a command names at injection time, a landing line on any of
//! several services' stdout, `${logs}`, a teardown step, and the artifacts cap.

use crate::common;

/// Member `a` beats a heartbeat file; member `b` prints on its stdout when the beat
/// stops. The fault pauses whichever member `leader` names (here `a`), and the landing
/// line may come from either member's log.
const CLUSTER: &str = r#"
before:
  - name: data directories
    run: "mkdir -p ${artifacts}/data && head -c 65536 /dev/zero > ${artifacts}/data/blob"
cluster:
  services:
    - name: a
      run: "exec sh -c 'while true; do date +%s%N > ${artifacts}/beat; sleep 0.05; done'"
    - name: b
      run: >-
        exec sh -c 'while true; do
        now=$(date +%s%N); beat=$(cat ${artifacts}/beat 2>/dev/null || echo $now);
        if [ $((now - beat)) -gt 400000000 ]; then echo "peer a silent"; fi;
        sleep 0.1; done'
workload:
  run: "ls ${logs} > ${artifacts}/logs.txt; echo '{}' > ${artifacts}/history.jsonl; sleep 3"
  deadline: 20s
history: { path: "${artifacts}/history.jsonl", format: jsonl }
faults:
  - id: pause-leader
    after: 500ms
    duration: 1500ms
    process: { signal: SIGSTOP, target: { command: "echo ignored; echo a" } }
    landing:
      - side: victim
        log: { services: [a, b], pattern: "peer a silent" }
        within: 1500ms
teardown:
  - name: mark
    run: "touch ${artifacts}/../torn-down"
artifacts_cap: 16KiB
"#;

#[tokio::test]
async fn a_cluster_with_steps_before_and_after_a_leader_named_at_injection_and_a_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (facts, lines) = common::run_inline(CLUSTER, dir.path()).await;
    let fault = &facts.faults[0];
    assert!(
        fault.injected && fault.injector_landed && fault.declared_landed && fault.healed,
        "{fault:?}"
    );
    // The member the command named is the one paused.
    let started = lines
        .iter()
        .find(|l| l.kind == "service-stopped" && l.data["name"] == "a")
        .map(|l| l.data["pgid"].clone())
        .expect("a stopped");
    let injected = lines
        .iter()
        .find(|l| l.kind == "fault-injected")
        .expect("fault-injected");
    assert_eq!(injected.data["pid"], started, "paused the member `a`");
    assert!(
        lines
            .iter()
            .any(|l| l.kind == "command-exited" && l.data["name"] == "pause-leader-target"),
        "the target command is journaled"
    );
    // The landing line came from b's stdout, named as such.
    let landed = lines
        .iter()
        .find(|l| l.kind == "landing-declared")
        .expect("landing-declared");
    assert_eq!(landed.data["seen"], "b: peer a silent", "{:?}", landed.data);
    let artifacts = dir.path().join("artifacts");
    let logs = std::fs::read_to_string(artifacts.join("logs.txt")).expect("logs.txt");
    assert!(
        logs.contains("a.stdout.log"),
        "${{logs}} lists the logs: {logs}"
    );
    assert!(dir.path().join("torn-down").exists(), "teardown ran");
    // The 64 KiB data directory went; the history stayed.
    let pruned = lines
        .iter()
        .find(|l| l.kind == "artifacts-pruned")
        .expect("artifacts-pruned journaled");
    assert_eq!(
        pruned.data["removed"][0]["path"], "data",
        "{:?}",
        pruned.data
    );
    assert!(pruned.data["left_bytes"].as_u64() <= pruned.data["cap_bytes"].as_u64());
    assert!(!artifacts.join("data").exists());
    assert!(artifacts.join("history.jsonl").exists());
}

#[tokio::test]
async fn a_target_command_naming_no_member_fails_the_injection_saying_what_it_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = CLUSTER.replace("echo ignored; echo a", "echo nobody");
    let (facts, lines) = common::run_inline(&yaml, dir.path()).await;
    assert!(!facts.faults[0].injected);
    let failed = lines
        .iter()
        .find(|l| l.kind == "fault-inject-failed")
        .expect("fault-inject-failed");
    let error = failed.data["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("printed `nobody`: neither a service of the cluster (a, b) nor a pid"),
        "{error}"
    );
}

#[tokio::test]
async fn a_failing_before_step_ends_the_seed_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = CLUSTER.replace("mkdir -p ${artifacts}/data &&", "false &&");
    let (facts, lines) = common::run_inline(&yaml, dir.path()).await;
    assert_eq!(
        facts.env_missing.as_ref().map(|m| m.0.as_str()),
        Some("data directories")
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.kind == "command-started" && l.data["name"] == "a"),
        "no service starts after a failed before step"
    );
}

#[test]
fn uid_owner_is_refused_off_the_output_chain_and_becomes_an_owner_match() {
    let spec = "version: 1\nscenarios:\n  S1:\n    faults:\n      - id: cut\n        net:\n          drop:\n            - { uid_owner: member-a, destination: 127.0.0.9 }\n";
    let errors = faultline::runspec::load(
        &faultline::plan::Plan::default(),
        Some(("plan.run.yaml", spec)),
    )
    .expect_err("refused");
    let message = errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        message.contains("plan.run.yaml:5:")
            && message.contains("net.drop.uid_owner")
            && message.contains("OUTPUT"),
        "{message}"
    );
    let rule = faultline::runspec::model::NetRule {
        chain: faultline::runspec::model::Chain::Output,
        uid_owner: Some("member-a".into()),
        ..Default::default()
    };
    let argv = faultline::nemesis::net::add_argv(&rule, "t").join(" ");
    assert!(
        argv.contains("-I OUTPUT 1 -m owner --uid-owner member-a"),
        "{argv}"
    );
}

/// A member run as its own Unix user: it runs as that user, inside its cgroup, and
/// `${<name>_uid}` is its uid (what a `net` rule's `uid_owner` takes).
#[tokio::test]
async fn a_service_runs_as_the_user_the_run_spec_names() {
    if !crate::support::users::can_make_users() {
        return;
    }
    let user = crate::support::users::UnixUser::create("flsvc");
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = format!(
        r#"
cluster:
  services:
    - {{ name: m1, user: {user}, run: "exec sh -c 'id -un; id -u; sleep 30'" }}
  health: {{ run: "grep -q '^[0-9]' ${{logs}}/m1.stdout.log", deadline: 5s }}
workload: {{ run: "echo ${{m1_uid}} > ${{artifacts}}/uid", deadline: 5s }}
"#,
        user = user.name
    );
    let (facts, _) = common::run_inline(&yaml, dir.path()).await;
    assert!(facts.env_missing.is_none(), "{:?}", facts.env_missing);
    let said = std::fs::read_to_string(dir.path().join("logs/m1.stdout.log")).expect("log");
    assert_eq!(said, format!("{}\n{}\n", user.name, user.uid));
    let uid = std::fs::read_to_string(dir.path().join("artifacts/uid")).expect("uid");
    assert_eq!(uid.trim(), user.uid.to_string());

    // A user that does not exist ends the seed before anything starts, naming it.
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = yaml.replace(&format!("user: {}", user.name), "user: fl-nobody-here");
    let (facts, _) = common::run_inline(&yaml, dir.path()).await;
    let missing = facts.env_missing.map(|m| m.0).unwrap_or_default();
    assert!(
        missing.contains("service m1 runs as its user: no user `fl-nobody-here`"),
        "{missing}"
    );
}

/// A `net` port written as a substitution is read at injection; one that gives no
/// port (`${duration_ms}00` is 100000 here) fails the injection naming the field and
/// the value, before any rule is added.
#[tokio::test]
async fn a_net_port_that_expands_to_no_port_fails_its_injection_in_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = r#"
workload:
  run: "sleep 2"
  deadline: 20s
faults:
  - id: cut
    after: 200ms
    duration: 500ms
    net: { netns: fl-never-made, drop: [ { destination: 127.0.0.1, dport: "${duration_ms}00" } ] }
"#;
    let (facts, lines) = common::run_inline(yaml, dir.path()).await;
    assert!(!facts.faults[0].injected, "{:?}", facts.faults[0]);
    let said = serde_json::to_string(&lines.iter().map(|l| &l.data).collect::<Vec<_>>())
        .expect("journal as text");
    assert!(
        said.contains("net.drop[0].dport")
            && said.contains("`${duration_ms}00` gives `100000`, which is not a port"),
        "{said}"
    );
}
