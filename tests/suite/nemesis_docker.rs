//! The docker nemesis against a real multi-container fixture (the demo store as four
//! containers on an internal network, image built locally): each action family lands
//! on both sides — the engine's event stream and inspect state from the injector, the
//! primary's own log from the victim side — and heals; a pause aimed at the node that
//! carries no traffic ends INCONCLUSIVE-fault-not-proven; and after faultline is
//! SIGKILLed mid-pause, `faultline heal SESSION` unpauses the container. A pause done
//! through the same engine reached over SSH (`engine: ssh://…`, a real sshd on
//! loopback) lands and heals, and is refused when the sshd's host key is not known.
//! Needs a Docker engine: with `FAULTLINE_REQUIRE_DOCKER=1` a missing engine fails the
//! test, otherwise the test prints `SKIP: <reason>` and returns.

use crate::support::docker_fixture as fixture;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::Line;
use faultline::engine::iteration::{self, IterationCtx, IterationFacts};
use faultline::engine::privileged::Approval;
use faultline::session::journal::{Journal, Scope};
use fixture::Fixture;

fn scope(id: &str) -> Scope {
    Scope {
        scenario: Some(id.into()),
        arm: None,
    }
}

/// The fixture, or `None` after a printed skip.
fn fixture(test: &str, shared: &Path) -> Option<Fixture> {
    if !fixture::require_docker() {
        return None;
    }
    Some(fixture::build(test, shared).unwrap_or_else(|e| panic!("fixture: {e}")))
}

/// A binding: n1's output streamed as service `n1`, the client inside n1 for
/// `seconds`, and the given `faults:` YAML (indented by four spaces).
fn binding_yaml(fx: &Fixture, seconds: u32, faults: &str) -> String {
    format!(
        r#"
cluster:
  services:
    - {{ name: n1, run: {n1:?} }}
workload:
  run: {client:?}
  deadline: 60s
faults:
{faults}
"#,
        n1 = fx.log_stream("n1"),
        client = fx.client(seconds),
    )
}

struct Ran {
    facts: IterationFacts,
    records: Vec<Line>,
    logs: PathBuf,
}

async fn run_iteration(yaml: &str, dir: &Path) -> Ran {
    let binding: faultline::runspec::Binding =
        serde_saphyr::from_str(yaml).unwrap_or_else(|e| panic!("binding: {e}\n{yaml}"));
    let logs = dir.join("logs");
    let artifacts = dir.join("artifacts");
    std::fs::create_dir_all(&logs).expect("logs");
    std::fs::create_dir_all(&artifacts).expect("artifacts");
    let journal_path = dir.join("journal.jsonl");
    let mut journal = Journal::open(&journal_path).expect("journal");
    let mut ctx = IterationCtx {
        id: "X1".into(),
        scope: scope("X1"),
        cwd: dir.to_path_buf(),
        logs: logs.clone(),
        artifacts,
        vars: Default::default(),
        seed: 1,
        duration: Duration::from_secs(1),
        cancel: Default::default(),
        // The test stands in for the operator who approved these container actions.
        privileged: Some(Approval { seq: 0 }),
        hosts: Default::default(),
    };
    let facts = iteration::run(&binding, &mut ctx, &mut journal)
        .await
        .expect("iteration runs");
    let records = crate::common::lines(&journal_path);
    Ran {
        facts,
        records,
        logs,
    }
}

/// The records of `kind` about fault `fault`.
fn about<'a>(records: &'a [Line], kind: &str, fault: &str) -> Vec<&'a Line> {
    records
        .iter()
        .filter(|r| r.kind == kind && r.data["fault"] == fault)
        .collect()
}

/// Asserts both landing signals and the heal of `fault` are in the journal.
fn assert_landed_and_healed(ran: &Ran, fault: &str, event: &str) {
    let facts = ran
        .facts
        .faults
        .iter()
        .find(|f| f.id == fault)
        .unwrap_or_else(|| panic!("no facts for {fault}"));
    assert!(facts.injected, "{fault}: {:?}", facts.detail);
    assert!(facts.injector_landed, "{fault}: {:?}", facts.detail);
    assert!(facts.victim_side_seen, "{fault}: {:?}", facts.detail);
    assert!(facts.healed, "{fault}: {:?}", facts.detail);
    let injector = about(&ran.records, "landing-injector", fault);
    let injector = injector.first().expect("landing-injector record");
    assert_eq!(injector.data["landed"], true, "{:?}", injector.data);
    let events = injector.data["detail"]["events"].to_string();
    assert!(events.contains(event), "{fault}: events {events}");
    assert!(
        injector.data["detail"]["state"].is_object(),
        "{:?}",
        injector.data
    );
    let victim = about(&ran.records, "landing-declared", fault);
    let victim = victim.first().expect("landing-declared record");
    assert_eq!(victim.data["side"], "victim");
    assert!(victim.data["seen"].is_string(), "{:?}", victim.data);
    let healed = about(&ran.records, "fault-healed", fault);
    let healed = healed.first().expect("fault-healed record");
    assert!(healed.data["result"]["Ok"].is_string(), "{:?}", healed.data);
    let injected = about(&ran.records, "fault-injected", fault);
    assert!(
        injected[0].data["undo"]["docker"]["container"].is_string(),
        "{:?}",
        injected[0].data
    );
}

/// Lines of the primary's own output (streamed into the engine's service log).
fn primary_log(ran: &Ran) -> String {
    std::fs::read_to_string(ran.logs.join("n1.stderr.log")).unwrap_or_default()
}

fn fault_yaml(id: &str, after: &str, docker: &str, victim: &str) -> String {
    format!(
        r#"  - id: {id}
    after: {after}
    duration: 1s
    docker: {docker}
    landing:
      - side: victim
        log: {{ service: n1, pattern: "replication to {victim}" }}
        within: 4s
"#
    )
}

#[tokio::test]
async fn kill_stop_and_restart_land_and_heal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(fx) = fixture("ksr", dir.path()) else {
        return;
    };
    let faults = [
        fault_yaml(
            "kill-n3",
            "1s",
            &format!("{{ container: {}, action: kill }}", fx.name("n3")),
            "n3",
        ),
        fault_yaml(
            "stop-n2",
            "5s",
            &format!(
                "{{ container: {}, action: stop, grace: 1s }}",
                fx.name("n2")
            ),
            "n2",
        ),
        fault_yaml(
            "restart-n3",
            "9s",
            &format!(
                "{{ container: {}, action: restart, grace: 1s }}",
                fx.name("n3")
            ),
            "n3",
        ),
    ]
    .concat();
    let ran = run_iteration(&binding_yaml(&fx, 14, &faults), dir.path()).await;
    assert_landed_and_healed(&ran, "kill-n3", "container die");
    assert_landed_and_healed(&ran, "stop-n2", "container die");
    assert_landed_and_healed(&ran, "restart-n3", "container restart");
    for node in ["n2", "n3"] {
        assert_eq!(fx.status(node), "running", "{node}");
    }
    // The victim side of the heal: the primary brought both followers back.
    let log = primary_log(&ran);
    assert!(log.contains("n3 back in sync"), "{log}");
    assert!(log.contains("n2 back in sync"), "{log}");
    // The container's own output of the fault window was collected into logs/.
    let saved = ran.logs.join(format!("docker-{}.log", fx.name("n3")));
    let saved = std::fs::read_to_string(&saved).unwrap_or_default();
    assert!(saved.contains("listening on"), "{saved}");
}

#[tokio::test]
async fn a_pause_lands_and_heals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(fx) = fixture("pause", dir.path()) else {
        return;
    };
    let faults = fault_yaml(
        "pause-n3",
        "1s",
        &format!("{{ container: {}, action: pause }}", fx.name("n3")),
        "n3 timed out",
    );
    let ran = run_iteration(&binding_yaml(&fx, 5, &faults), dir.path()).await;
    assert_landed_and_healed(&ran, "pause-n3", "container pause");
    let injector = about(&ran.records, "landing-injector", "pause-n3");
    assert_eq!(injector[0].data["detail"]["state"]["paused"], true);
    assert_eq!(fx.status("n3"), "running");
    assert!(primary_log(&ran).contains("n3 back in sync"));
}

#[tokio::test]
async fn a_network_disconnect_lands_and_reconnects_with_its_address() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(fx) = fixture("disc", dir.path()) else {
        return;
    };
    let faults = fault_yaml(
        "cut-n3",
        "1s",
        &format!(
            "{{ container: {}, action: disconnect, network: {} }}",
            fx.name("n3"),
            fx.network
        ),
        "n3",
    );
    let ran = run_iteration(&binding_yaml(&fx, 6, &faults), dir.path()).await;
    assert_landed_and_healed(&ran, "cut-n3", "network disconnect");
    let injector = about(&ran.records, "landing-injector", "cut-n3");
    let networks = injector[0].data["detail"]["state"]["networks"].to_string();
    assert!(!networks.contains(&fx.network), "{networks}");
    assert_eq!(fx.net_ip("n3"), fx.ip("n3"), "reconnected elsewhere");
    assert!(primary_log(&ran).contains("n3 back in sync"));
}

/// One scenario with a checker, run through the engine's binding runner; its verdict.
async fn verdict_of(fx: &Fixture, dir: &Path, target: &str) -> faultline::verdict::Verdict {
    use faultline::engine::scenario::BindingRun;
    let yaml = format!(
        r#"
cluster:
  services:
    - {{ name: n1, run: {n1:?} }}
workload: {{ run: {client:?}, deadline: 60s }}
faults:
  - id: pause
    after: 1s
    duration: 1500ms
    docker: {{ container: {target}, action: pause }}
    landing:
      - side: victim
        log: {{ service: n1, pattern: "replication to n[0-9] timed out" }}
        within: 2s
quiesce: {{ run: {quiesce:?}, timeout: 20s }}
history: {{ path: "${{artifacts}}/history.jsonl", format: jsonl }}
checker:
  builtin: no-lost-ack
  final_state: {dump:?}
tiers:
  smoke: {{ duration: 4s }}
declare:
  gbb-9-baseline: "n/a: the scenario judges correctness, not speed"
  weak-retries-visible: "n/a: the demo client never retries"
  weak-fault-variant: "n/a: one follower pause is the whole fault space here"
"#,
        n1 = fx.log_stream("n1"),
        client = fx.client(4),
        quiesce = format!(
            "docker exec {} /faultline demo-sut ready --targets {}",
            fx.name("n1"),
            fx.addr("n2")
        ),
        dump = format!(
            "docker exec {} /faultline demo-sut dump --target {} --out ${{artifacts}}/final.json",
            fx.name("n1"),
            fx.addr("n2")
        ),
    );
    let binding: faultline::runspec::Binding =
        serde_saphyr::from_str(&yaml).unwrap_or_else(|e| panic!("binding: {e}\n{yaml}"));
    let journal_path = dir.join("journal.jsonl");
    let mut journal = Journal::open(&journal_path).expect("journal");
    let run = BindingRun {
        id: "T1".into(),
        scope: scope("T1"),
        binding: &binding,
        requested: faultline::verdict::Tier::Smoke,
        serious: false,
        statistical: false,
        any_size: false,
        cwd: dir.to_path_buf(),
        logs: dir.join("logs"),
        artifacts: dir.join("artifacts"),
        vars: Default::default(),
        cancel: Default::default(),
        reduce: Default::default(),
        privileged: Some(Approval { seq: 0 }),
        hosts: Default::default(),
    };
    let result = run.run(&mut journal).await.expect("binding runs");
    result
        .outcome
        .decision
        .map(|d| d.verdict)
        .expect("a decision")
}

#[tokio::test]
async fn a_pause_of_the_node_without_traffic_is_not_proven() {
    use faultline::verdict::Verdict;
    let aimed = tempfile::tempdir().expect("tempdir");
    let twin = tempfile::tempdir().expect("tempdir");
    let Some(fx) = fixture("twin", twin.path()) else {
        return;
    };
    // Identical spec and probes; only the aim differs: n4 is no follower of n1.
    let verdict = verdict_of(&fx, twin.path(), &fx.name("n4")).await;
    assert_eq!(verdict, Verdict::InconclusiveFaultNotProven);
    assert_eq!(fx.status("n4"), "running", "the twin's pause was healed");
    drop(fx);
    let Some(fx) = fixture("aimed", aimed.path()) else {
        return;
    };
    let verdict = verdict_of(&fx, aimed.path(), &fx.name("n3")).await;
    assert_eq!(verdict, Verdict::PassSmoke, "the correctly aimed sibling");
    assert_eq!(fx.status("n3"), "running");
}

/// The newest session directory under `dir/test-sessions/<plan slug>/`.
fn session_in(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir.join("test-sessions"))
        .ok()?
        .flatten()
        .filter_map(|slug| std::fs::read_dir(slug.path()).ok())
        .flat_map(|sessions| sessions.flatten().map(|e| e.path()))
        .filter(|p| p.join("journal.jsonl").exists())
        .max()
}

/// A named network namespace, deleted on drop.
struct Netns(String);

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = fixture::sh("ip", &["netns", "del", &self.0]);
    }
}

impl Netns {
    /// Rules in it carrying faultline's tag.
    fn tagged_rules(&self) -> usize {
        fixture::sh("ip", &["netns", "exec", &self.0, "iptables", "-S"])
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("faultline:"))
            .count()
    }
}

/// `faultline run` of the demo plan in `dir` with `spec` as its sidecar (D2 only), not
/// started yet.
fn faultline_run(dir: &Path, spec: &str) -> Command {
    let plan = dir.join("plan.md");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/plan.md"),
        &plan,
    )
    .expect("plan copied");
    std::fs::write(dir.join("plan.run.yaml"), spec).expect("sidecar");
    // Without its watchdog: the test looks at what a killed faultline leaves.
    let mut command = Command::new(env!("CARGO_BIN_EXE_faultline"));
    command
        .env(faultline::session::watchdog::ENV_SWITCH, "off")
        .arg("run")
        .arg(&plan)
        .args([
            "--headless",
            "--yes",
            "--approve-privileged",
            "--only",
            "D2",
            "--sut",
        ])
        .arg(dir)
        .current_dir(dir)
        .stdout(std::fs::File::create(dir.join("run.out")).expect("run.out"))
        .stderr(std::fs::File::create(dir.join("run.err")).expect("run.err"));
    command
}

/// The journal of the newest session in `dir` ("" before there is one).
fn journal_text(dir: &Path) -> String {
    session_in(dir)
        .and_then(|s| std::fs::read_to_string(s.join("journal.jsonl")).ok())
        .unwrap_or_default()
}

fn heal(dir: &Path) -> String {
    let said = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let session = session_in(dir)
        .unwrap_or_else(|| panic!("no session: {}{}", said("run.out"), said("run.err")));
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("heal")
        .arg(&session)
        .output()
        .expect("faultline heal runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A process of the test's own, outside faultline's process groups: a fault's victim
/// that survives faultline's death. Killed (by its pid) on drop.
struct Bystander(std::process::Child);

impl Drop for Bystander {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Bystander {
    /// The state letter of /proc/PID/stat (`T` when stopped).
    fn state(&self) -> String {
        std::fs::read_to_string(format!("/proc/{}/stat", self.0.id()))
            .ok()
            .and_then(|stat| {
                let (_, after) = stat.rsplit_once(") ")?;
                after.split_whitespace().next().map(str::to_string)
            })
            .unwrap_or_default()
    }
}

#[test]
fn faultline_heal_restores_a_pause_and_a_partition_after_sigkill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(fx) = fixture("sigkill", dir.path()) else {
        return;
    };
    let stopped = Bystander(
        Command::new("sleep")
            .arg("300")
            .spawn()
            .expect("sleep starts"),
    );
    let pidfile = dir.path().join("bystander.pid");
    std::fs::write(&pidfile, stopped.0.id().to_string()).expect("pidfile");
    // A partition inside a namespace this test creates (root only).
    let netns = nix::unistd::geteuid()
        .is_root()
        .then(|| format!("{}-ns", fx.prefix))
        .filter(|ns| fixture::sh("ip", &["netns", "add", ns]).is_ok())
        .map(Netns);
    if netns.is_none() {
        eprintln!("no network namespace here (not root or no `ip netns`): no partition");
    }
    let cut = netns.as_ref().map_or(String::new(), |ns| {
        format!(
            r#"
      - id: long-cut
        after: 500ms
        duration: 60s
        net: {{ netns: {ns}, drop: [ {{ source: 10.254.0.1 }}, {{ chain: OUTPUT, destination: 10.254.0.1 }} ] }}"#,
            ns = ns.0
        )
    });
    // One session, three faults held at once: a docker pause, a SIGSTOP, a partition.
    let spec = format!(
        r#"version: 1
scenarios:
  D2:
    cluster:
      services:
        - {{ name: n1, run: {n1:?} }}
    workload: {{ run: {client:?}, deadline: 120s }}
    faults:
      - id: long-pause
        after: 1s
        duration: 60s
        docker: {{ container: {n3}, action: pause }}
        landing:
          - side: victim
            log: {{ service: n1, pattern: "replication to n3 timed out" }}
            within: 3s
      - id: long-stop
        after: 200ms
        duration: 60s
        process: {{ signal: SIGSTOP, target: {{ pidfile: {pidfile:?} }} }}{cut}
    tiers:
      smoke: {{ duration: 30s }}
"#,
        n1 = fx.log_stream("n1"),
        client = fx.client(30),
        n3 = fx.name("n3"),
        pidfile = pidfile.display().to_string(),
    );
    let mut run = faultline_run(dir.path(), &spec)
        .spawn()
        .expect("faultline runs");
    let faults = if netns.is_some() { 3 } else { 2 };
    // Every fault active (seen by the journal and by the fixture), then SIGKILL.
    let end = Instant::now() + Duration::from_secs(60);
    while Instant::now() < end {
        let journal = journal_text(dir.path());
        let active = journal.matches("\"fault-injected\"").count() == faults
            && journal.contains("\"landing-injector\"")
            && fx.status("n3") == "paused"
            && stopped.state() == "T"
            && netns.as_ref().is_none_or(|ns| ns.tagged_rules() == 2);
        if active {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = run.kill();
    let _ = run.wait();
    assert!(
        !journal_text(dir.path()).contains("\"fault-healed\""),
        "faultline healed something before it was killed: the test proves nothing"
    );
    assert_eq!(fx.status("n3"), "paused", "the pause outlived faultline");
    assert_eq!(stopped.state(), "T", "the SIGSTOP outlived faultline");
    if let Some(ns) = &netns {
        assert_eq!(ns.tagged_rules(), 2, "the partition outlived faultline");
    }

    let healed = heal(dir.path());
    assert!(healed.contains("unpaused"), "{healed}");
    assert_eq!(fx.status("n3"), "running");
    fx.ready(Duration::from_secs(5))
        .expect("every node answers after heal");
    assert_eq!(
        stopped.state(),
        "S",
        "the stopped process runs again: {healed}"
    );
    if let Some(ns) = &netns {
        assert!(healed.contains("2 rule(s) tagged"), "{healed}");
        assert_eq!(ns.tagged_rules(), 0);
    }
}

#[test]
fn a_docker_fault_names_a_network_exactly_when_it_disconnects() {
    let spec = "\
version: 1
scenarios:
  K1:
    workload:
      run: client
    faults:
      - id: loose
        after: 1s
        docker: { container: n3, action: disconnect }
      - id: odd
        after: 1s
        docker: { container: n3, action: pause, network: kv }
      - id: fine
        after: 1s
        docker: { container: n3, action: disconnect, network: kv }
      - id: two
        after: 1s
        docker: { container: n3, action: kill }
        command: { inject: a, heal: b }
";
    let errors = faultline::runspec::load(
        &faultline::plan::Plan::default(),
        Some(("plan.run.yaml", spec)),
    )
    .expect_err("three bad docker faults");
    let found: Vec<(u64, Option<&str>)> = errors
        .iter()
        .map(|e| (e.line, e.field.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            (7, Some("docker.network")),
            (10, Some("docker.network")),
            (16, Some("process|command|net|disk|clock|proxy|docker"))
        ],
        "{errors:?}"
    );
}

/// A directory whose `ssh` is the system one reading `config` first: what a user's
/// `~/.ssh/config` does, for a test that must not touch root's. (ssh takes its home
/// from the password database, not $HOME, and bollard's connector runs `ssh` by name.)
fn ssh_wrapper(dir: &Path, config: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let file = dir.join("ssh_config");
    std::fs::write(&file, config).expect("ssh_config");
    let ssh = bin.join("ssh");
    std::fs::write(
        &ssh,
        format!(
            "#!/bin/sh\nexec /usr/bin/ssh -F {} \"$@\"\n",
            file.display()
        ),
    )
    .expect("ssh wrapper");
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

/// The D2 sidecar: a pause of n3 done through the engine at `ssh://root@{alias}`, the
/// alias given as `${engine_host}` (expanded like the container's name).
fn ssh_engine_spec(fx: &Fixture, alias: &str) -> String {
    format!(
        r#"version: 1
vars:
  engine_host: "{alias}"
scenarios:
  D2:
    cluster:
      services:
        - {{ name: n1, run: {n1:?} }}
    workload: {{ run: {client:?}, deadline: 60s }}
    faults:
      - id: ssh-pause
        after: 1s
        duration: 1500ms
        docker: {{ engine: "ssh://root@${{engine_host}}", container: {n3}, action: pause }}
        landing:
          - side: victim
            log: {{ service: n1, pattern: "replication to n3 timed out" }}
            within: 3s
    tiers:
      smoke: {{ duration: 5s }}
"#,
        n1 = fx.log_stream("n1"),
        client = fx.client(5),
        n3 = fx.name("n3"),
    )
}

/// `faultline run` in `dir` to its end with `bin` first in PATH; the journal's records.
fn run_to_end(dir: &Path, spec: &str, bin: &Path) -> Vec<Line> {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut run = faultline_run(dir, spec)
        .env("PATH", path)
        .spawn()
        .expect("faultline runs");
    let end = Instant::now() + Duration::from_secs(120);
    let ended = loop {
        if run.try_wait().expect("wait").is_some() {
            break true;
        }
        if Instant::now() > end {
            let _ = run.kill();
            let _ = run.wait();
            break false;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let said = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    assert!(
        ended,
        "the run did not end: {}{}",
        said("run.out"),
        said("run.err")
    );
    let session = session_in(dir)
        .unwrap_or_else(|| panic!("no session: {}{}", said("run.out"), said("run.err")));
    crate::common::lines(&session.join("journal.jsonl"))
}

#[tokio::test]
async fn a_pause_through_an_engine_reached_over_ssh_lands_and_heals() {
    use crate::support::sshd::{Sshd, keygen};
    let dir = tempfile::tempdir().expect("tempdir");
    let Some(fx) = fixture("sshengine", dir.path()) else {
        return;
    };
    let keys = dir.path().join("keys");
    std::fs::create_dir(&keys).expect("keys dir");
    keygen(&keys.join("client"));
    let public = std::fs::read_to_string(keys.join("client.pub")).expect("client key");
    let Some(sshd) = Sshd::start(&keys, &public, "the docker-over-SSH test") else {
        return;
    };
    // A Host alias carries the port (bollard's connector cannot take one in the URL).
    let alias = format!("fl-engine-{}", sshd.port);
    let engine = format!("ssh://root@{alias}");
    let config = |known: &Path| {
        format!(
            "Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  UserKnownHostsFile {known}\n  \
             GlobalKnownHostsFile /dev/null\n  IdentityFile {key}\n  IdentitiesOnly yes\n",
            port = sshd.port,
            known = known.display(),
            key = keys.join("client").display(),
        )
    };
    let spec = ssh_engine_spec(&fx, &alias);

    // The same engine named by its socket (`unix://`).
    let local = faultline::nemesis::docker::connect(Some("unix:///var/run/docker.sock"), None)
        .await
        .expect("the local engine by its socket");
    let n3 = local
        .inspect_container(&fx.name("n3"), None)
        .await
        .expect("n3 inspected through unix://");
    assert_eq!(n3.state.and_then(|s| s.running), Some(true));

    // The host key is checked strictly: with a known_hosts that lacks this fresh key
    // the fault is refused, and bollard's connector never gets to add the key.
    let stranger = dir.path().join("stranger");
    std::fs::create_dir(&stranger).expect("stranger dir");
    let empty = stranger.join("known_hosts");
    std::fs::write(&empty, "").expect("empty known_hosts");
    let records = run_to_end(&stranger, &spec, &ssh_wrapper(&stranger, &config(&empty)));
    let failed = about(&records, "fault-inject-failed", "ssh-pause");
    let failed = failed.first().expect("the fault was refused");
    let error = failed.data["error"].as_str().unwrap_or_default();
    assert!(error.contains(&engine), "{error}");
    assert!(error.contains("Host key verification failed"), "{error}");
    assert_eq!(std::fs::read_to_string(&empty).unwrap_or_default(), "");
    assert_eq!(fx.status("n3"), "running");

    // The run's ssh knows the host key and the client key, as a user's config would.
    let records = run_to_end(
        dir.path(),
        &spec,
        &ssh_wrapper(dir.path(), &config(&sshd.known_hosts())),
    );
    let injected = about(&records, "fault-injected", "ssh-pause");
    let injected = injected.first().unwrap_or_else(|| {
        let tried: Vec<_> = records
            .iter()
            .filter(|r| r.data["fault"] == "ssh-pause")
            .map(|r| (&r.kind, &r.data))
            .collect();
        panic!("not injected: {tried:?}\n{}", sshd.log())
    });
    assert_eq!(
        injected.data["undo"]["docker"]["engine"],
        engine.as_str(),
        "{:?}",
        injected.data
    );
    // Proven from the engine's side: its event stream and inspect, read over SSH.
    let injector = about(&records, "landing-injector", "ssh-pause");
    let injector = injector.first().expect("landing-injector record");
    assert_eq!(injector.data["landed"], true, "{:?}", injector.data);
    let events = injector.data["detail"]["events"].to_string();
    assert!(events.contains("container pause"), "events {events}");
    assert_eq!(injector.data["detail"]["state"]["paused"], true);
    let healed = about(&records, "fault-healed", "ssh-pause");
    let healed = healed.first().expect("fault-healed record");
    let result = healed.data["result"]["Ok"].as_str().unwrap_or_default();
    assert!(result.contains("unpaused"), "{:?}", healed.data);
    assert_eq!(fx.status("n3"), "running");
}

/// A docker fault's `node:` is one of `nodes:`; with it, `engine:` can only be a socket
/// path on that node, and `tls` has no place.
#[test]
fn a_docker_fault_on_a_node_names_a_declared_node_and_a_socket_there() {
    let spec = r#"
version: 1
nodes:
  n2: { ssh: root@10.0.0.2 }
scenarios:
  K1:
    workload:
      run: client
    faults:
      - id: tcp
        after: 1s
        docker: { node: n2, engine: "tcp://10.0.0.2:2375", container: c, action: pause }
      - id: tls
        after: 1s
        docker: { node: n2, engine: "unix:///run/docker.sock", container: c, action: pause, tls: { ca: a, cert: b, key: k } }
      - id: fine
        after: 1s
        docker: { node: n2, engine: "unix:///run/docker.sock", container: c, action: pause }
      - id: stranger
        after: 1s
        docker: { node: n9, container: c, action: pause }
"#;
    let errors = faultline::runspec::load(
        &faultline::plan::Plan::default(),
        Some(("plan.run.yaml", spec)),
    )
    .expect_err("three bad docker faults");
    let fields: Vec<&str> = errors.iter().filter_map(|e| e.field.as_deref()).collect();
    assert_eq!(
        fields,
        // In file order: the two bad engines come before the stranger node.
        [
            "docker.engine",
            "docker.tls",
            "scenarios.K1.faults[3].docker.node",
        ],
        "{errors:?}"
    );
    let text = format!("{errors:?}");
    assert!(text.contains("docker socket on that node"), "{text}");
    assert!(text.contains("node `n9` is not declared"), "{text}");
}

/// A docker fault on a node whose host key is not in the node's `known_hosts` is
/// refused: the run stops before anything starts, naming the node (no Docker needed).
#[test]
fn a_docker_fault_on_a_node_with_an_untrusted_host_key_is_refused() {
    use crate::support::sshd::{Sshd, keygen};
    let dir = tempfile::tempdir().expect("tempdir");
    let keys = dir.path().join("keys");
    std::fs::create_dir(&keys).expect("keys dir");
    keygen(&keys.join("client"));
    let public = std::fs::read_to_string(keys.join("client.pub")).expect("client key");
    let Some(sshd) = Sshd::start(&keys, &public, "the untrusted docker node test") else {
        return;
    };
    let empty = dir.path().join("known_hosts");
    std::fs::write(&empty, "").expect("empty known_hosts");
    let spec = format!(
        r#"version: 1
nodes:
  d: {{ ssh: root@127.0.0.1, port: {port}, key: "{key}", known_hosts: "{known}" }}
scenarios:
  D2:
    workload: {{ run: "sleep 1", deadline: 30s }}
    faults:
      - id: node-pause
        after: 500ms
        duration: 1s
        docker: {{ node: d, container: anything, action: pause }}
    tiers:
      smoke: {{ duration: 2s }}
"#,
        port = sshd.port,
        key = keys.join("client").display(),
        known = empty.display(),
    );
    let status = faultline_run(dir.path(), &spec)
        .status()
        .expect("faultline runs");
    let said = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap_or_default();
    let text = format!("{}{}", said("run.out"), said("run.err"));
    assert_eq!(status.code(), Some(74), "{text}");
    assert!(text.contains("node d"), "{text}");
    assert!(text.contains("host key not trusted"), "{text}");
    assert!(
        !journal_text(dir.path()).contains("fault-injected"),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(&empty).unwrap_or_default(), "");
}
