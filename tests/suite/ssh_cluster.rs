//! The SSH cluster example (`examples/ssh-cluster/`): three hosts built as network
//! namespaces, each with its own sshd, the demo store started on them over SSH, the
//! faults acting on the hosts themselves (iptables on n2, a SIGSTOP on n3) with their
//! landing read over SSH, the mis-aimed twins INCONCLUSIVE; docker pauses on n2 and n3
//! done through each node's docker socket forwarded over its own SSH connection (n2's
//! healed by the run); after a SIGKILL of faultline with the other faults held,
//! `faultline heal` restores every node over SSH; a service on a node that daemonizes
//! out of its process group is ended with its cgroup there, by the run's end and by
//! `faultline heal` after a SIGKILL; an untrusted
//! host key stops the run before anything starts; an unreachable node ends its
//! scenarios INCONCLUSIVE-env naming it.
//!
//! Needs root, `ip netns`, iptables and Debian's openssh-server: with
//! `FAULTLINE_REQUIRE_SSH=1` (CI) a missing one fails the test, otherwise it SKIPs. The
//! docker pauses need a Docker engine too (the hosts share this machine's filesystem,
//! so each node's /var/run/docker.sock is this machine's engine): without one they are
//! left out after a SKIP line, or fail under `FAULTLINE_REQUIRE_DOCKER=1`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use crate::support::docker_fixture::{self, Sleepers};
use crate::support::ssh_hosts::SshHosts;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ssh-cluster")
}

fn faultline(plan: &Path, sut: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_faultline"));
    cmd.arg("run")
        .arg(plan)
        .arg("--sut")
        .arg(sut)
        .arg("--out")
        .arg(out)
        .args(["--headless", "--yes", "--approve-privileged"])
        .args(extra);
    cmd
}

fn said(out: &Output) -> String {
    format!(
        "{}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The records of a session's journal.
fn journal(session: &Path) -> Vec<Value> {
    std::fs::read_to_string(session.join("journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn of_kind<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["kind"] == kind).collect()
}

/// The one session directory under `out`.
fn session_in(out: &Path) -> Option<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            if path.join("journal.jsonl").is_file() {
                found.push(path);
            } else if path.is_dir() {
                stack.push(path);
            }
        }
    }
    found.pop()
}

/// Tagged faultline rules in host `i`'s own iptables.
fn tagged_rules(hosts: &SshHosts, i: usize) -> usize {
    let out = hosts.ssh(i, "iptables -w -S");
    assert!(out.status.success(), "iptables -S on h{i}: {}", said(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("faultline:"))
        .count()
}

/// The state letter of `pid` on host `i` (`None`: gone).
fn state_on(hosts: &SshHosts, i: usize, pid: i64) -> Option<char> {
    let out = hosts.ssh(i, &format!("cat /proc/{pid}/stat"));
    let stat = String::from_utf8_lossy(&out.stdout).into_owned();
    out.status
        .success()
        .then(|| stat.rsplit_once(") ")?.1.chars().next())
        .flatten()
}

/// A service for node n1 that daemonizes out of its process group (`setsid`, its
/// leader exiting at once) and appends the escaped pid to `pids`.
fn escapee(pids: &Path) -> String {
    format!(
        "- {{ name: escapee, node: n1, run: \"setsid sleep 1000 & echo $! >> {}; echo started\" }}",
        pids.display()
    )
}

/// The escaped daemons recorded in `pids`: each pid with whether it still runs `sleep
/// 1000` (the hosts share this machine's pid namespace). Dropping it kills the ones
/// still running, so a failing test leaves none behind.
struct Escaped(PathBuf);

impl Escaped {
    fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Those still alive, after up to 3 s for the killed ones to be reaped.
    fn alive(&self) -> Vec<i32> {
        let end = Instant::now() + Duration::from_secs(3);
        loop {
            let alive: Vec<i32> = self.pids().into_iter().filter(|p| sleeping(*p)).collect();
            if alive.is_empty() || Instant::now() >= end {
                return alive;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Escaped {
    fn drop(&mut self) {
        for pid in self.pids().into_iter().filter(|p| sleeping(*p)) {
            let _ =
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
        }
    }
}

/// Whether `pid` is a live (not zombie) `sleep 1000`.
fn sleeping(pid: i32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    cmdline == b"sleep\x001000\x00" && state.is_some_and(|s| s != 'Z')
}

/// Whether the hosts can contain commands in cgroups: if not, a loud SKIP of those
/// checks (a failure under `FAULTLINE_REQUIRE_SSH=1`).
fn contained(hosts: &SshHosts) -> bool {
    let why = hosts.cgroups().err().map(|why| {
        format!("no cgroup v2 on the SSH test hosts ({why}): daemon containment unchecked")
    });
    !common::skipped("SSH", why)
}

/// Cgroups the session made on its nodes still in the cgroup tree (the hosts share
/// this machine's): named `faultline-<session>-r<hash>-…` (hash of the session's path
/// and this machine's name).
fn node_cgroups_left(session: &Path) -> Vec<PathBuf> {
    let prefix = faultline::host::ssh::cgroup_prefix(&faultline::exec::mark::value(session));
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::from("/sys/fs/cgroup")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if entry.file_name().to_string_lossy().starts_with(&prefix) {
                found.push(entry.path());
            } else {
                stack.push(entry.path());
            }
        }
    }
    found
}

#[test]
fn ssh_cluster_example_gives_its_four_verdicts_over_ssh() {
    let Some(hosts) = SshHosts::up("ssh_cluster") else {
        return;
    };
    let out = tempfile::tempdir().expect("tempdir");
    // The example as it is, and one more service on n1 that daemonizes out of its
    // group: the run's end must take it down with its cgroup on the node.
    let escaped = Escaped(out.path().join("escaped.pids"));
    let plan = out.path().join("plan.md");
    std::fs::copy(example().join("plan.md"), &plan).expect("plan copied");
    let spec = std::fs::read_to_string(example().join("plan.run.yaml")).expect("run spec");
    let anchor = "    cluster: &cluster\n      services:\n";
    assert!(spec.contains(anchor), "the example's cluster anchor moved");
    let spec = spec.replacen(
        anchor,
        &format!("{anchor}        {}\n", escapee(&escaped.0)),
        1,
    );
    std::fs::write(out.path().join("plan.run.yaml"), spec).expect("spec");
    let sessions = out.path().join("out");
    let run = faultline(&plan, hosts.dir(), &sessions, &[])
        .output()
        .expect("faultline runs");
    let session = session_in(&sessions).unwrap_or_else(|| panic!("no session: {}", said(&run)));
    let by_id = common::verdicts_by_id(&session);
    let expected: std::collections::BTreeMap<String, String> = [
        ("S1", "PASS-smoke"),
        ("S2", "PASS-smoke"),
        ("S3", "INCONCLUSIVE-fault-not-proven"),
        ("S4", "INCONCLUSIVE-fault-not-proven"),
    ]
    .map(|(id, v)| (id.to_string(), v.to_string()))
    .into();
    assert_eq!(
        by_id,
        expected,
        "{}\nsession {}",
        said(&run),
        session.display()
    );
    // Every artifact says so: S1's and S2's faults proven, S3's and S4's not.
    let agreed = crate::agreement::artifacts_agree(&session);
    assert!(agreed.proofs >= 4 && agreed.not_proven >= 2, "{agreed:?}");

    let records = journal(&session);
    // Each node reached with its host key checked against the pinned known_hosts.
    let connected = of_kind(&records, "node-connected");
    for i in 1..=3 {
        let node = format!("n{i}");
        let seen = connected
            .iter()
            .find(|r| r["data"]["node"] == node.as_str())
            .unwrap_or_else(|| panic!("{node} never connected"));
        let prints = seen["data"]["fingerprints"].to_string();
        assert!(prints.contains(hosts.fingerprint(i)), "{node}: {prints}");
        assert_eq!(seen["data"]["hostname"], hosts.address(i).as_str());
    }
    // The nodes ran on their hosts: started over SSH, their logs streamed here.
    let remote: Vec<&Value> = of_kind(&records, "command-started")
        .into_iter()
        .filter(|r| r["data"]["node"].is_string())
        .collect();
    assert!(remote.len() >= 16, "4 services x 4 scenarios: {remote:?}");
    let n1_log = remote
        .iter()
        .find(|r| r["data"]["name"] == "n1")
        .map(|r| PathBuf::from(r["data"]["log"].as_str().unwrap_or_default()))
        .expect("n1 started");
    let n1_stderr = std::fs::read_to_string(&n1_log).unwrap_or_default();
    assert!(
        n1_stderr.contains("replication to n2 timed out"),
        "n1's log streamed back over SSH: {n1_stderr}"
    );
    // S1: the rules on n2 counted packets (read on n2 over SSH); S2: /proc on n3 said
    // the victim stopped; S3's rules counted none.
    let injector = |scenario: &str| -> Vec<Value> {
        of_kind(&records, "landing-injector")
            .into_iter()
            .filter(|r| r["scenario"] == scenario)
            .map(|r| r["data"].clone())
            .collect()
    };
    let packets = |counters: &Value| -> u64 {
        counters["packets"]
            .as_array()
            .map_or(0, |p| p.iter().filter_map(Value::as_u64).sum())
    };
    let s1 = injector("S1");
    assert!(
        s1.iter().any(|d| d["landed"] == true
            && packets(&d["detail"]["after"]) > packets(&d["detail"]["before"])),
        "S1 counters: {s1:?}"
    );
    let s2 = injector("S2");
    assert!(
        s2.iter()
            .any(|d| d["landed"] == true && d["detail"]["state"] == "Stopped"),
        "S2 /proc state: {s2:?}"
    );
    let s3 = injector("S3");
    assert!(s3.iter().all(|d| d["landed"] == false), "S3: {s3:?}");
    // Nothing is left on the hosts.
    for i in 1..=3 {
        assert_eq!(tagged_rules(&hosts, i), 0, "h{i} keeps a tagged rule");
    }
    // One daemon escaped its group in each scenario; each was ended with its cgroup
    // on n1 when the scenario's cluster came down (a process group alone misses it).
    assert_eq!(escaped.pids().len(), 4, "one escapee per scenario");
    if contained(&hosts) {
        assert_eq!(
            escaped.alive(),
            Vec::<i32>::new(),
            "escaped daemons outlived the run"
        );
        assert_eq!(node_cgroups_left(&session), Vec::<PathBuf>::new());
    }
    // The documents list the nodes with their host keys and logs.
    let log = std::fs::read_to_string(session.join("session-log.md")).expect("session log");
    for i in 1..=3 {
        assert!(
            log.contains(&format!("| n{i} | root@{}:22 |", hosts.address(i))),
            "{log}"
        );
    }
    assert!(log.contains("| node n2: iptables |"), "{log}");
    // What each node's services start was looked for on that node.
    assert!(log.contains("| node n1: binary:faultline |"), "{log}");
    let report = std::fs::read_to_string(session.join("findings/report.md")).expect("report");
    assert!(report.contains("### Nodes"), "{report}");
    let link = report
        .split("](../")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("a log link in the report");
    assert!(session.join(link).is_file(), "{link} is not a file");
}

/// The example's plan with one binding: n1–n2 cut and n3 paused for a minute, both;
/// with `containers`, a docker pause of the first through node n2's socket for a
/// second and one of the second through node n3's for a minute; and [`escapee`] on n1.
fn held_spec(dir: &Path, containers: Option<(&str, &str)>, escaped: &Path) -> PathBuf {
    let plan = dir.join("plan.md");
    std::fs::copy(example().join("plan.md"), &plan).expect("plan copied");
    let spec = std::fs::read_to_string(example().join("plan.run.yaml")).expect("run spec");
    let head = spec.split("scenarios:").next().expect("head");
    let held = r#"scenarios:
  S1:
    cluster:
      services:
        ESCAPEE
        - { name: n2, node: n2, run: "exec ${store} node --name n2 --listen ${node:n2}:7001" }
        - { name: n3, node: n3, run: "exec ${store} node --name n3 --listen ${node:n3}:7001" }
        - { name: n1, node: n1, run: "exec ${store} node --name n1 --listen ${node:n1}:7001 --followers ${followers}" }
      health: { run: "${store} ready --targets ${node:n1}:7001,${node:n2}:7001,${node:n3}:7001", node: here, deadline: 10s }
    workload: { run: "${client}", node: here, deadline: 120s }
    faults:
      - id: long-cut
        after: 500ms
        duration: 60s
        net:
          node: n2
          drop:
            - { chain: INPUT, source: "${node:n1}" }
            - { chain: OUTPUT, destination: "${node:n1}" }
      - id: long-pause
        after: 500ms
        duration: 60s
        process: { signal: SIGSTOP, target: { service: n3 } }
"#;
    let docker = containers.map_or(String::new(), |(short, long)| {
        format!(
            r#"      - id: dock-n2
        after: 500ms
        duration: 1s
        docker: {{ node: n2, container: {short}, action: pause }}
      - id: dock-n3
        after: 500ms
        duration: 60s
        docker: {{ node: n3, engine: "unix:///var/run/docker.sock", container: {long}, action: pause }}
"#
        )
    });
    let held = held.replacen("ESCAPEE", &escapee(escaped), 1);
    let tiers = "    tiers:\n      smoke: { duration: 60s }\n";
    std::fs::write(
        dir.join("plan.run.yaml"),
        format!("{head}{held}{docker}{tiers}"),
    )
    .expect("spec");
    plan
}

/// The forwarded-socket directories faultline process `pid` has under the temp dir.
fn forward_dirs(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("fl-fwd-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn faultline_heal_restores_every_node_over_ssh_after_sigkill() {
    let Some(hosts) = SshHosts::up("ssh_heal") else {
        return;
    };
    let sleepers = match docker_fixture::unavailable() {
        Some(why) if common::skipped("DOCKER", Some(format!("{why}: no docker faults"))) => None,
        _ => Some(Sleepers::start("sshdock", 2).unwrap_or_else(|e| panic!("containers: {e}"))),
    };
    let containers = sleepers
        .as_ref()
        .map(|s| (s.names[0].as_str(), s.names[1].as_str()));
    let faults = if containers.is_some() { 4 } else { 2 };
    let dir = tempfile::tempdir().expect("tempdir");
    let escaped = Escaped(dir.path().join("escaped.pids"));
    let plan = held_spec(dir.path(), containers, &escaped.0);
    let out = dir.path().join("out");
    // Without its watchdog: the test looks at what a killed faultline leaves.
    let mut run = faultline(&plan, hosts.dir(), &out, &["--only", "S1"])
        .env(faultline::session::watchdog::ENV_SWITCH, "off")
        .stdout(std::fs::File::create(dir.path().join("run.out")).expect("run.out"))
        .stderr(std::fs::File::create(dir.path().join("run.err")).expect("run.err"))
        .spawn()
        .expect("faultline starts");
    let end = Instant::now() + Duration::from_secs(90);
    let mut victim = None;
    while Instant::now() < end {
        if let Some(session) = session_in(&out) {
            let records = journal(&session);
            let injected = of_kind(&records, "fault-injected");
            victim = injected.iter().find_map(|r| r["data"]["pid"].as_i64());
            // The short docker pause is healed by the run itself first.
            let short_healed = containers.is_none()
                || of_kind(&records, "fault-healed")
                    .iter()
                    .any(|r| r["data"]["fault"] == "dock-n2");
            if injected.len() == faults
                && of_kind(&records, "landing-injector").len() == faults
                && short_healed
                && tagged_rules(&hosts, 2) == 2
            {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let run_pid = run.id();
    let _ = run.kill();
    let _ = run.wait();
    let session = session_in(&out).expect("a session");
    let records = journal(&session);
    let healed_in_run: Vec<&Value> = of_kind(&records, "fault-healed");
    assert!(
        healed_in_run
            .iter()
            .all(|r| r["data"]["fault"] == "dock-n2"),
        "healed before the kill: the test proves nothing: {healed_in_run:?}"
    );
    if let Some((short, long)) = containers {
        docker_landed_over_each_nodes_ssh(&records, short, long);
        // The run's heal ended n2's forward; n3's is held by the killed faultline's
        // master (gone with `faultline heal` below), its directory left for the test.
        let left = forward_dirs(run_pid);
        assert_eq!(left.len(), 1, "forwarded-socket dirs left: {left:?}");
        for dir in left {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    let victim = victim.expect("the pause names its victim");
    assert_eq!(tagged_rules(&hosts, 2), 2, "the cut outlived faultline");
    assert_eq!(
        state_on(&hosts, 3, victim),
        Some('T'),
        "the pause outlived faultline"
    );
    let daemons = escaped.pids();
    assert_eq!(daemons.len(), 1, "the escapee ran once");
    assert_eq!(
        escaped.alive(),
        daemons,
        "the escaped daemon outlived faultline"
    );
    let contained = contained(&hosts);
    let groups: Vec<(String, i64)> = of_kind(&records, "command-started")
        .iter()
        .filter_map(|r| {
            Some((
                r["data"]["node"].as_str()?.to_string(),
                r["data"]["pgid"].as_i64()?,
            ))
        })
        .collect();
    assert_eq!(groups.len(), 4, "{groups:?}");

    let heal = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("heal")
        .arg(&session)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("faultline heal runs");
    let heal_pid = heal.id();
    let healed = heal.wait_with_output().expect("faultline heal ends");
    let text = said(&healed);
    assert!(healed.status.success(), "{text}");
    assert!(text.contains("2 rule(s) tagged"), "{text}");
    assert!(text.contains("SIGCONT"), "{text}");
    assert_eq!(tagged_rules(&hosts, 2), 0, "{text}");
    if let Some((_, long)) = containers {
        // Through n3's socket forwarded over a connection of its own, then closed.
        assert!(
            text.contains(&format!("dock-n3: container {long} unpaused")),
            "{text}"
        );
        assert!(
            text.contains("on node n3's docker socket over ssh (/var/run/docker.sock)"),
            "{text}"
        );
        assert_eq!(Sleepers::status(long), "running", "{text}");
        assert_eq!(forward_dirs(heal_pid), Vec::<PathBuf>::new(), "{text}");
    }
    // The daemon that left its group was ended with its cgroup on the nodes (the
    // hosts share one cgroup tree: n1, swept first, finds every one of them).
    if contained {
        assert!(
            text.contains("on node n1: 1 process(es) killed, cgroup removed"),
            "{text}"
        );
        assert_eq!(escaped.alive(), Vec::<i32>::new(), "{text}");
        assert_eq!(node_cgroups_left(&session), Vec::<PathBuf>::new(), "{text}");
    }
    // Every group it started on a node is gone from that node (the victim resumed
    // first, then ended with its group).
    for (node, pgid) in groups {
        let i: usize = node.trim_start_matches('n').parse().expect("node number");
        assert_eq!(
            state_on(&hosts, i, pgid),
            None,
            "{node}: {pgid} left: {text}"
        );
    }
}

/// The docker pauses of [`held_spec`], before the kill: each done through its node's
/// socket over the node's ssh (the node's own key and known_hosts, neither in ~/.ssh),
/// proven from the engine's events and state; n2's healed (running again), n3's held.
fn docker_landed_over_each_nodes_ssh(records: &[Value], short: &str, long: &str) {
    let about = |kind: &str, fault: &str| -> Value {
        of_kind(records, kind)
            .into_iter()
            .find(|r| r["data"]["fault"] == fault)
            .map(|r| r["data"].clone())
            .unwrap_or_else(|| panic!("no {kind} of {fault}"))
    };
    for (fault, node) in [("dock-n2", "n2"), ("dock-n3", "n3")] {
        let injected = about("fault-injected", fault);
        assert_eq!(injected["undo"]["docker"]["node"], node, "{injected}");
        let landing = about("landing-injector", fault);
        assert_eq!(landing["landed"], true, "{landing}");
        assert_eq!(landing["detail"]["state"]["paused"], true, "{landing}");
        let words = format!("on node {node}'s docker socket over ssh (/var/run/docker.sock)");
        assert!(landing.to_string().contains(&words), "{landing}");
    }
    let healed = about("fault-healed", "dock-n2");
    let line = healed["result"]["Ok"].as_str().unwrap_or_default();
    assert!(
        line.contains(&format!("container {short} unpaused")),
        "{healed}"
    );
    assert!(
        line.contains("on node n2's docker socket over ssh"),
        "{healed}"
    );
    assert_eq!(Sleepers::status(short), "running");
    assert_eq!(Sleepers::status(long), "paused");
}

/// A known_hosts without h3's key: the run stops before anything starts, naming the
/// node and the fingerprint h3 presents. With h3's sshd gone: its scenarios end
/// INCONCLUSIVE-env naming it.
#[test]
fn an_untrusted_key_stops_the_run_and_an_unreachable_node_blocks_its_scenarios() {
    let Some(hosts) = SshHosts::up("ssh_trust") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let sut = dir.path().join("hosts");
    std::fs::create_dir_all(&sut).expect("sut");
    std::fs::copy(hosts.key(), sut.join("id_ed25519")).expect("key");
    let known = std::fs::read_to_string(hosts.known_hosts()).expect("known_hosts");
    let without_h3: String = known
        .lines()
        .filter(|l| !l.starts_with(&hosts.address(3)))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(sut.join("known_hosts"), without_h3).expect("known_hosts");
    let out = dir.path().join("out");
    let run = faultline(&example().join("plan.md"), &sut, &out, &[])
        .output()
        .expect("faultline runs");
    let text = said(&run);
    assert_eq!(run.status.code(), Some(74), "{text}");
    assert!(text.contains("node n3"), "{text}");
    assert!(text.contains(hosts.fingerprint(3)), "{text}");
    if let Some(session) = session_in(&out) {
        assert!(
            of_kind(&journal(&session), "command-started").is_empty(),
            "something started"
        );
    }

    // h3 answers no more: S2 and S4 use it (n3, n4 run there); every scenario uses it.
    std::fs::copy(hosts.known_hosts(), sut.join("known_hosts")).expect("known_hosts");
    let pid = std::fs::read_to_string(hosts.sshd_pidfile(3)).expect("sshd pid");
    let pid: i32 = pid.trim().parse().expect("pid");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGTERM)
        .expect("sshd of h3 stops");
    let out = dir.path().join("out2");
    let run = faultline(&example().join("plan.md"), &sut, &out, &["--only", "S1"])
        .output()
        .expect("faultline runs");
    let session = session_in(&out).unwrap_or_else(|| panic!("no session: {}", said(&run)));
    let by_id = common::verdicts_by_id(&session);
    assert_eq!(
        by_id.get("S1").map(String::as_str),
        Some("INCONCLUSIVE-env"),
        "{}",
        said(&run)
    );
    let verdicts = std::fs::read_to_string(session.join("verdicts.json")).expect("verdicts");
    assert!(verdicts.contains("node n3 unreachable"), "{verdicts}");
    // Its artifacts agree on it too: four runs listed (S1 and the three left out),
    // no seed ran.
    let agreed = crate::agreement::artifacts_agree(&session);
    assert_eq!((agreed.runs, agreed.seeds), (4, 0), "{agreed:?}");
}

/// Runs anywhere (no hosts needed): the example lints clean, its nodes known, and the
/// partitions are listed as privileged actions on node n2; a `node:` nobody declared
/// is handed back with its field and the declared names.
#[test]
fn ssh_cluster_example_lints_clean_and_an_undeclared_node_is_refused() {
    let lint = |plan: &Path| {
        Command::new(env!("CARGO_BIN_EXE_faultline"))
            .arg("lint")
            .arg(plan)
            .output()
            .expect("faultline lint runs")
    };
    let out = lint(&example().join("plan.md"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", said(&out));
    assert!(
        stdout.contains("Result: runnable (0 warning(s))"),
        "{stdout}"
    );
    assert!(
        stdout.contains("in the current network namespace of node `n2` (over SSH)"),
        "{stdout}"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.md");
    std::fs::copy(example().join("plan.md"), &plan).expect("plan");
    let spec = std::fs::read_to_string(example().join("plan.run.yaml")).expect("spec");
    let wrong = spec.replacen("node: n2, drop:", "node: n9, drop:", 1);
    let wrong = wrong.replacen("net:\n          node: n2", "net:\n          node: n9", 1);
    assert_ne!(wrong, spec, "the test changed nothing");
    std::fs::write(dir.path().join("plan.run.yaml"), wrong).expect("spec");
    let out = lint(&plan);
    let text = said(&out);
    assert_eq!(out.status.code(), Some(65), "{text}");
    assert!(
        text.contains("node `n9` is not declared under `nodes:`"),
        "{text}"
    );
    assert!(text.contains("declared: here, n1, n2, n3"), "{text}");
    assert!(text.contains("faults[0].net.node"), "{text}");
}
