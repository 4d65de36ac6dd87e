//! A plan asks for netem; the machine cannot give it. faultline offers its own TCP
//! fault proxy as a substitute, uses it only when the operator says so, and says in the
//! findings that the scenario ran on a degraded approximation. `tc` is a shim that
//! accepts every qdisc but netem, so the test does not depend on this kernel's qdiscs.

use crate::common;
use crate::common::Line;
use crate::support::tcp_echo;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tcp_echo::{CLIENT, ECHO};

const PLAN: &str = r#"# Test Plan: netem-or-proxy

## 1b. Claims under test

| ID | Claim | Category | Source | Inferred? |
|---|---|---|---|---|
| C1 | Clients notice a broken link. | liveness | test | no |

## 4. Failure hypotheses

- H1. **Slow link** — the link to the node degrades.
  - Could falsify: C1

## 6b. Environment requirements

| Requirement | Version floor | Used by scenarios | Install hint |
|---|---|---|---|
| tc/netem | — | N1 | apt |

## 7. Scenarios

### Scenario N1: clients_notice_a_broken_link

- **Falsifies if it FAILs:** C1
- **Closes:** H1
- **Workload:** a client pinging an echo server.
- **Faults:** netem on the node's link.
- **Oracle:** the external checker over the JSONL history reports no anomaly.
- **Smoke budget:** 1 seed, 3 s.
- **Hardening budget:** not applicable — test fixture.
- **Release budget:** not provided — test fixture. Revisit when: never.
"#;

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

struct Fixture {
    dir: tempfile::TempDir,
    _echo: Proc,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let (echo_port, listen) = (free_port(), free_port());
    let echo = Proc(
        Command::new("python3")
            .args(["-c", ECHO, &echo_port.to_string()])
            .stdout(Stdio::null())
            .spawn()
            .expect("echo server"),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", echo_port)).is_err() {
        assert!(Instant::now() < deadline, "echo server never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::write(dir.path().join("plan.md"), PLAN).expect("plan");
    std::fs::write(dir.path().join("client.py"), CLIENT).expect("client");
    let spec = format!(
        r#"version: 1
scenarios:
  N1:
    workload:
      run: >-
        python3 client.py {listen} 4;
        printf '%s\n' '{{"op_id":"1","process":"p","invoke_ts":1,"complete_ts":2,"op_type":"write","key":"k","input":1,"output":null,"error":null,"timeout":false,"node":"n","fault_epoch":null}}' > ${{artifacts}}/h.jsonl
      deadline: 30s
    faults:
      - id: degrade
        after: 1s
        duration: 1s
        command:
          inject: "tc qdisc add dev lo root netem delay 100ms"
          heal: "tc qdisc del dev lo root"
        substitute_proxy:
          listen: "127.0.0.1:{listen}"
          upstream: "127.0.0.1:{echo_port}"
          toxic: {{ reset: true }}
        landing:
          - side: victim
            log: {{ service: workload, pattern: "failed:" }}
            within: 3s
    history: {{ path: "${{artifacts}}/h.jsonl", format: jsonl }}
    checker:
      external: "echo '{{\"valid\": true, \"ops_checked\": 1, \"ops_total\": 1, \"anomalies\": []}}'"
    tiers: {{ smoke: {{ duration: 3s }} }}
"#
    );
    std::fs::write(dir.path().join("plan.run.yaml"), spec).expect("spec");
    let shims = dir.path().join("shims");
    std::fs::create_dir_all(&shims).expect("shims");
    let calls = dir.path().join("tc-calls.log");
    executable(
        &shims.join("tc"),
        &format!(
            "#!/bin/sh\necho \"tc $*\" >> {}\ncase \"$*\" in *netem*) \
             echo 'Error: Specified qdisc kind is unknown.' >&2; exit 2;; esac\nexit 0\n",
            calls.display()
        ),
    );
    Fixture { dir, _echo: echo }
}

impl Fixture {
    fn run(&self, answers: &str) -> Output {
        let file = self.dir.path().join("answers.yaml");
        std::fs::write(&file, answers).expect("answers");
        Command::new(env!("CARGO_BIN_EXE_faultline"))
            .args(["run", "plan.md", "--headless", "--yes", "--answers"])
            .arg(&file)
            .arg("--out")
            .arg(self.dir.path().join("sessions"))
            .current_dir(self.dir.path())
            .env(
                "PATH",
                format!(
                    "{}:/usr/bin:/bin:/usr/sbin:/sbin",
                    self.dir.path().join("shims").display()
                ),
            )
            .output()
            .expect("faultline runs")
    }

    fn tc_calls(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("tc-calls.log")).unwrap_or_default()
    }
}

fn journal(session: &Path) -> Vec<Line> {
    crate::common::lines(&session.join("journal.jsonl"))
}

#[test]
fn the_proxy_stands_in_for_netem_only_when_the_operator_says_so() {
    let f = fixture();
    let out = f.run("missing.tc-netem: substitute proxy\n");
    let session = common::session_of(&out);
    let records = journal(&session);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();

    let substituted = records
        .iter()
        .find(|r| r.kind == "capability-substituted")
        .unwrap_or_else(|| panic!("no substitution journaled:\n{said}"));
    assert_eq!(substituted.data["with"], "faultline proxy");
    assert_eq!(substituted.data["scenarios"][0], "N1");
    // The fault ran through the proxy, landed on both sides and was healed; tc was
    // only probed, never asked to add a qdisc.
    assert!(records.iter().any(|r| r.kind == "proxy-started"));
    let injected = records
        .iter()
        .find(|r| r.kind == "fault-injected")
        .expect("fault injected");
    assert!(injected.data["undo"]["proxy"].is_object(), "{injected:?}");
    let injector = records
        .iter()
        .find(|r| r.kind == "landing-injector")
        .expect("injector landing");
    assert_eq!(injector.data["landed"], true, "{injector:?}");
    assert!(
        records
            .iter()
            .any(|r| r.kind == "landing-declared" && r.data["seen"].is_string())
    );
    assert!(records.iter().any(|r| r.kind == "fault-healed"));
    assert!(
        !f.tc_calls().contains("netem delay 100ms"),
        "{}",
        f.tc_calls()
    );
    // The findings say the scenario ran on an approximation, and of what.
    let finding = std::fs::read_to_string(session.join("findings/N1.md")).expect("finding");
    assert!(finding.contains("Degraded approximation"), "{finding}");
    assert!(finding.contains("TCP fault proxy"), "{finding}");
    assert_ne!(common::verdict_of(&session, "N1"), "INCONCLUSIVE-env");
}

#[test]
fn without_that_answer_nothing_is_swapped_in() {
    let f = fixture();
    let out = f.run("missing.tc-netem: proceed\n");
    let session = common::session_of(&out);
    let records = journal(&session);
    let asked = records
        .iter()
        .find(|r| r.kind == "operator-answer" && r.data["question"] == "missing.tc-netem")
        .map(|r| r.data["prompt"].to_string())
        .unwrap_or_default();
    assert!(asked.contains("substitute proxy"), "the offer: {asked}");
    assert!(!records.iter().any(|r| r.kind == "capability-substituted"));
    assert!(!records.iter().any(|r| r.kind == "proxy-started"));
    assert_eq!(common::verdict_of(&session, "N1"), "INCONCLUSIVE-env");
}
