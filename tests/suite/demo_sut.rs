//! The embedded demo store under real faults: three processes on loopback, the real
//! workload client, the process nemesis, log-pattern landing and the no-lost-ack
//! checker. The planted bug must be found; without it the same run must be clean.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use faultline::exec::{self, CommandSpec, Outcome, Running};
use faultline::host::Host;
use faultline::nemesis::landing::LogWatch;
use faultline::nemesis::process::{self, Action, Target};
use faultline::oracle::{history, no_lost_ack};
use faultline::verdict::CheckerRun;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

fn sut(dir: &Path, name: &str, args: &str) -> CommandSpec {
    CommandSpec {
        name: name.to_string(),
        command: format!("exec '{}' demo-sut {args}", env!("CARGO_BIN_EXE_faultline")),
        cwd: dir.to_path_buf(),
        env: Vec::new(),
    }
}

struct Cluster {
    nodes: Vec<Running>,
    addrs: Vec<String>,
}

impl Cluster {
    async fn stop(mut self) {
        for node in &mut self.nodes {
            node.terminate().await.expect("terminate node");
        }
    }
}

async fn start_cluster(dir: &Path, buggy: bool) -> Cluster {
    let ports = [free_port(), free_port(), free_port()];
    let addrs: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let mut nodes = Vec::new();
    for (name, addr) in [("n2", &addrs[1]), ("n3", &addrs[2])] {
        let spec = sut(dir, name, &format!("node --name {name} --listen {addr}"));
        nodes.push(exec::spawn(&spec, dir).expect("follower starts"));
    }
    let bug = if buggy { " --ack-before-replicate" } else { "" };
    let primary = format!(
        "node --name n1 --listen {} --followers n2={},n3={}{bug}",
        addrs[0], addrs[1], addrs[2]
    );
    nodes.insert(
        0,
        exec::spawn(&sut(dir, "n1", &primary), dir).expect("primary starts"),
    );
    let mut ready = exec::spawn(
        &sut(
            dir,
            "ready",
            &format!("ready --targets {}", addrs.join(",")),
        ),
        dir,
    )
    .expect("ready starts");
    assert_eq!(
        ready.wait(Duration::from_secs(10)).await.expect("ready"),
        Outcome::Exited(0)
    );
    Cluster { nodes, addrs }
}

/// Runs the workload for 2 s with a SIGKILL of the primary at 1 s; returns the
/// no-lost-ack result against follower n2's dump.
async fn kill_primary_run(buggy: bool) -> (CheckerRun, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = start_cluster(dir.path(), buggy).await;
    let client_args = format!(
        "client --target {} --seed 7 --duration-ms 2000 --rate 100 --out history.jsonl",
        cluster.addrs[0]
    );
    let mut client =
        exec::spawn(&sut(dir.path(), "client", &client_args), dir.path()).expect("client");
    let silence = LogWatch::begin(
        &dir.path().join("n2.stderr.log"),
        regex::Regex::new("no contact from primary").expect("regex"),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let fault = process::inject(
        Host::local(),
        &Target::Pid(cluster.nodes[0].pgid),
        Action::Kill,
    )
    .await
    .expect("kill n1");
    assert!(
        fault.await_landing(Duration::from_secs(2)).await.landed,
        "injector side"
    );
    let victim = silence
        .await_match(Duration::from_secs(3))
        .await
        .expect("read n2 log");
    assert!(
        victim.is_some(),
        "victim side: n2 never noticed the primary's death"
    );
    assert_eq!(
        client.wait(Duration::from_secs(20)).await.expect("client"),
        Outcome::Exited(0)
    );

    let mut dump = exec::spawn(
        &sut(
            dir.path(),
            "dump",
            &format!("dump --target {} --out n2.json", cluster.addrs[1]),
        ),
        dir.path(),
    )
    .expect("dump");
    assert_eq!(
        dump.wait(Duration::from_secs(10)).await.expect("dump"),
        Outcome::Exited(0)
    );
    let text = std::fs::read_to_string(dir.path().join("history.jsonl")).expect("history");
    let hist = history::parse_jsonl("history.jsonl", &text).expect("history parses");
    let state: BTreeMap<String, serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("n2.json")).expect("dump file"),
    )
    .expect("dump is a JSON object");
    let report = no_lost_ack::check(&hist, &state);
    cluster.stop().await;
    (report.run, report.anomalies.len())
}

#[tokio::test]
async fn the_planted_bug_loses_acked_writes_when_the_primary_dies() {
    let (run, anomalies) = kill_primary_run(true).await;
    assert!(
        matches!(run, CheckerRun::Judged { anomalies: n, .. } if n > 0),
        "no lost ack found with the bug planted: {run:?}"
    );
    assert!(anomalies > 0);
}

#[tokio::test]
async fn without_the_bug_no_acked_write_is_lost() {
    let (run, _) = kill_primary_run(false).await;
    match run {
        CheckerRun::Judged {
            anomalies,
            ops_checked,
            ops_produced,
        } => {
            assert_eq!(anomalies, 0);
            assert!(ops_checked > 50, "only {ops_checked} ops checked");
            assert_eq!(ops_checked, ops_produced);
        }
        other => panic!("checker did not judge: {other:?}"),
    }
}

#[tokio::test]
async fn pausing_a_follower_is_seen_by_the_primary_and_the_victim() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = start_cluster(dir.path(), false).await;
    let client_args = format!(
        "client --target {} --seed 1 --duration-ms 2500 --rate 50 --out h.jsonl",
        cluster.addrs[0]
    );
    let mut client =
        exec::spawn(&sut(dir.path(), "client", &client_args), dir.path()).expect("client");
    let primary_saw = LogWatch::begin(
        &dir.path().join("n1.stderr.log"),
        regex::Regex::new("replication to n3 timed out").expect("regex"),
    );
    let victim_saw = LogWatch::begin(
        &dir.path().join("n3.stderr.log"),
        regex::Regex::new("tick gap").expect("regex"),
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let fault = process::inject(
        Host::local(),
        &Target::Pid(cluster.nodes[2].pgid),
        Action::Pause,
    )
    .await
    .expect("pause n3");
    assert!(fault.await_landing(Duration::from_secs(1)).await.landed);
    assert!(
        primary_saw
            .await_match(Duration::from_secs(3))
            .await
            .expect("n1 log")
            .is_some()
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    fault.heal().await.expect("SIGCONT");
    assert!(
        victim_saw
            .await_match(Duration::from_secs(3))
            .await
            .expect("n3 log")
            .is_some()
    );
    assert_eq!(
        client.wait(Duration::from_secs(20)).await.expect("client"),
        Outcome::Exited(0)
    );
    cluster.stop().await;
}
