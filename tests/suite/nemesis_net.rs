//! The net nemesis against real traffic between two network namespaces joined by a
//! veth pair: a partition lands (the client's own connects fail and the tagged rule's
//! counter rises), a mis-aimed twin does not, heal removes only faultline's own rule,
//! `faultline heal` removes a rule a killed session left, and the engine runs it all.
//! Needs root and `ip netns`: with `FAULTLINE_REQUIRE_NETNS=1` a missing capability
//! fails the test, otherwise the test prints `SKIP: <reason>` and returns.

use crate::common;
use crate::common::AppendKind;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use faultline::host::Host;
use faultline::nemesis::net::{self, add_argv};
use faultline::runspec::{NetFaultSpec, NetRule};

const PORT: u16 = 7411;
const ADDR_A: &str = "10.213.7.1";
const ADDR_B: &str = "10.213.7.2";

/// Runs a command; its stdout, or why it failed.
fn sh(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A namespace deleted on drop.
struct Netns(String);

impl Netns {
    fn create(role: &str) -> Result<Netns, String> {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "flt-{role}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        sh("ip", &["netns", "add", &name])?;
        let ns = Netns(name);
        ns.exec("ip", &["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    fn exec(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["netns", "exec", &self.0, program];
        all.extend_from_slice(args);
        sh("ip", &all)
    }

    fn rules(&self) -> String {
        self.exec("iptables", &["-S"]).unwrap_or_default()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = sh("ip", &["netns", "del", &self.0]);
    }
}

/// A process killed and reaped on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Prints "connect ok" / "connect failed" once per attempt, for `argv[3]` seconds.
const CLIENT: &str = r#"
import socket, sys, time
end = time.time() + float(sys.argv[3])
while time.time() < end:
    try:
        socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=0.3).close()
        print("connect ok", flush=True)
    except OSError as e:
        print("connect failed:", e, flush=True)
    time.sleep(0.05)
"#;

const SERVER: &str = r#"
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(128)
while True:
    s.accept()[0].close()
"#;

/// Two namespaces joined by a veth pair, a listener in B, python resolved.
struct Pair {
    a: Netns,
    b: Netns,
    python: String,
    _server: Proc,
}

fn require(reason: String) -> Option<Pair> {
    common::skipped("NETNS", Some(reason));
    None
}

fn capable() -> Result<(), String> {
    if !nix::unistd::geteuid().is_root() {
        return Err("not root".into());
    }
    sh("iptables", &["-V"]).map(|_| ())
}

fn pair() -> Option<Pair> {
    match capable().and_then(|()| build_pair()) {
        Ok(pair) => Some(pair),
        Err(reason) => require(reason),
    }
}

fn build_pair() -> Result<Pair, String> {
    let a = Netns::create("a")?;
    let b = Netns::create("b")?;
    a.exec(
        "ip",
        &[
            "link", "add", "va", "type", "veth", "peer", "name", "vb", "netns", &b.0,
        ],
    )?;
    a.exec("ip", &["addr", "add", &format!("{ADDR_A}/24"), "dev", "va"])?;
    b.exec("ip", &["addr", "add", &format!("{ADDR_B}/24"), "dev", "vb"])?;
    a.exec("ip", &["link", "set", "va", "up"])?;
    b.exec("ip", &["link", "set", "vb", "up"])?;
    // The real interpreter, not a shim, so killing the child kills python.
    let python = sh("python3", &["-c", "import sys; print(sys.executable)"])?
        .trim()
        .to_string();
    let server = Command::new("ip")
        .args(["netns", "exec", &b.0, &python, "-c", SERVER, ADDR_B])
        .arg(PORT.to_string())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("listener: {e}"))?;
    Ok(Pair {
        a,
        b,
        python,
        _server: Proc(server),
    })
}

impl Pair {
    /// The client command line inside A (for the engine, which runs it through sh).
    fn client_argv(&self, seconds: u32) -> Vec<String> {
        [
            "ip",
            "netns",
            "exec",
            &self.a.0,
            &self.python,
            "-c",
            CLIENT,
            ADDR_B,
            &PORT.to_string(),
            &seconds.to_string(),
        ]
        .map(String::from)
        .to_vec()
    }

    /// Starts the client writing to `out`, and waits for its first success.
    fn client(&self, out: &Path) -> Proc {
        let argv = self.client_argv(60);
        let file = std::fs::File::create(out).expect("client output");
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdout(file)
            .spawn()
            .expect("client starts");
        let proc = Proc(child);
        assert!(
            wait_for(Duration::from_secs(10), || count(out, "connect ok", 0) > 0),
            "the client never connected"
        );
        proc
    }

    fn drop_from_a(&self, dport: Option<u16>) -> NetFaultSpec {
        NetFaultSpec {
            netns: Some(self.b.0.clone()),
            node: None,
            drop: vec![NetRule {
                source: Some(ADDR_A.into()),
                dport,
                ..NetRule::default()
            }],
        }
    }
}

/// Lines of `path` after byte `from` that contain `needle`.
fn count(path: &Path, needle: &str, from: usize) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.get(from..)
        .unwrap_or("")
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

fn len(path: &Path) -> usize {
    std::fs::metadata(path).map_or(0, |m| m.len() as usize)
}

fn wait_for(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}

#[tokio::test]
async fn a_partition_lands_on_both_sides_and_heals() {
    let Some(pair) = pair() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("client.out");
    let _client = pair.client(&out);

    let injected = net::inject(Host::local(), &pair.drop_from_a(None), "cut")
        .await
        .expect("inject");
    let at = len(&out);
    let seen = injected.await_landing(Duration::from_secs(5)).await;
    assert!(seen.landed, "injector side: {}", seen.detail);
    assert!(seen.after.total_packets() > seen.before.total_packets());
    assert!(
        wait_for(Duration::from_secs(5), || count(&out, "connect failed", at)
            > 0),
        "victim side: the client kept connecting through the partition"
    );

    let tag = injected.tag.clone();
    injected.heal().await.expect("heal");
    let rules = pair.b.rules();
    assert!(!rules.contains("faultline:"), "{tag} left rules:\n{rules}");
    let at = len(&out);
    assert!(
        wait_for(Duration::from_secs(5), || count(&out, "connect ok", at) > 0),
        "connections did not recover after heal"
    );
}

#[tokio::test]
async fn a_mis_aimed_twin_does_not_land() {
    let Some(pair) = pair() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("client.out");
    let _client = pair.client(&out);

    let injected = net::inject(Host::local(), &pair.drop_from_a(Some(9)), "twin")
        .await
        .expect("inject");
    let at = len(&out);
    let seen = injected.await_landing(Duration::from_millis(1500)).await;
    assert!(!seen.landed, "a rule nobody hits landed: {}", seen.detail);
    assert_eq!(seen.before, seen.after);
    assert_eq!(count(&out, "connect failed", at), 0);
    assert!(
        count(&out, "connect ok", at) > 0,
        "client stopped succeeding"
    );
    injected.heal().await.expect("heal");
}

#[tokio::test]
async fn heal_and_drop_remove_only_their_own_rules() {
    if let Err(reason) = capable() {
        require(reason);
        return;
    }
    let b = match Netns::create("b") {
        Ok(b) => b,
        Err(reason) => {
            require(reason);
            return;
        }
    };
    b.exec(
        "iptables",
        &["-A", "INPUT", "-p", "udp", "--dport", "9", "-j", "DROP"],
    )
    .expect("untagged rule");
    let foreign = NetRule {
        dport: Some(10),
        ..NetRule::default()
    };
    let mut argv: Vec<String> = vec!["iptables".into()];
    argv.extend(add_argv(&foreign, "someone-else"));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    b.exec(argv[0], &argv[1..]).expect("foreign tagged rule");

    let spec = NetFaultSpec {
        netns: Some(b.0.clone()),
        node: None,
        drop: vec![
            NetRule {
                source: Some(ADDR_A.into()),
                ..NetRule::default()
            },
            NetRule {
                chain: faultline::runspec::Chain::Output,
                destination: Some(ADDR_A.into()),
                probability: Some(0.5),
                ..NetRule::default()
            },
        ],
    };
    let injected = net::inject(Host::local(), &spec, "mine")
        .await
        .expect("inject");
    let tag = format!("faultline:{}", injected.tag);
    assert_eq!(tagged_count(&b.rules(), &tag), 2);
    injected.heal().await.expect("heal");
    let rules = b.rules();
    assert_eq!(tagged_count(&rules, &tag), 0, "{rules}");
    assert!(
        rules.contains("--dport 9 -j DROP"),
        "untagged rule gone:\n{rules}"
    );
    assert!(
        rules.contains("faultline:someone-else"),
        "foreign rule gone:\n{rules}"
    );

    // Dropped unhealed: the handle heals itself.
    let injected = net::inject(Host::local(), &spec, "dropped")
        .await
        .expect("inject");
    let tag = format!("faultline:{}", injected.tag);
    drop(injected);
    let rules = b.rules();
    assert_eq!(tagged_count(&rules, &tag), 0, "{rules}");
    assert!(rules.contains("faultline:someone-else"));
}

/// Rules whose comment is exactly `tag` (`iptables -S` quotes comments).
fn tagged_count(rules: &str, tag: &str) -> usize {
    rules
        .lines()
        .filter(|l| l.contains(&format!("\"{tag}\"")))
        .count()
}

#[test]
fn faultline_heal_removes_a_rule_a_killed_session_left() {
    use faultline::session::journal::{Journal, Scope};
    if let Err(reason) = capable() {
        require(reason);
        return;
    }
    let b = match Netns::create("b") {
        Ok(b) => b,
        Err(reason) => {
            require(reason);
            return;
        }
    };
    let tag = format!("left-{}", std::process::id());
    let argv = add_argv(
        &NetRule {
            source: Some(ADDR_A.into()),
            ..NetRule::default()
        },
        &tag,
    );
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    b.exec("iptables", &args).expect("rule added");
    assert!(b.rules().contains(&format!("faultline:{tag}")));

    let dir = tempfile::tempdir().expect("tempdir");
    let mut journal = Journal::open(&dir.path().join("journal.jsonl")).expect("journal");
    let mut rule: Vec<String> = vec!["iptables".into()];
    rule.extend(argv);
    journal
        .append_kind(
            Scope {
                scenario: Some("X1".into()),
                arm: None,
            },
            "fault-injected",
            &serde_json::json!({"fault": "cut", "pid": null,
                "undo": {"net": {"netns": b.0, "tag": tag, "rules": [rule]}}}),
        )
        .expect("append");
    drop(journal);
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("heal")
        .arg(dir.path())
        .output()
        .expect("faultline heal runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 rule(s) tagged"), "{stdout}");
    let rules = b.rules();
    assert!(!rules.contains("faultline:"), "{rules}");
}

#[tokio::test]
async fn the_engine_injects_observes_holds_and_heals_a_net_fault() {
    let Some(pair) = pair() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let client: Vec<String> = pair
        .client_argv(5)
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect();
    let yaml = format!(
        r#"
workload:
  run: {run:?}
  deadline: 30s
faults:
  - id: cut
    after: 1500ms
    duration: 1s
    net:
      netns: {ns}
      drop:
        - source: {ADDR_A}
    landing:
      - side: victim
        log: {{service: workload, pattern: "connect failed"}}
        within: 4s
"#,
        run = format!("{} 1>&2", client.join(" ")),
        ns = pair.b.0,
    );
    let (facts, records) = common::run_inline(&yaml, dir.path()).await;
    let fault = facts.faults.first().expect("one fault");
    assert!(fault.injected, "{:?}", fault.detail);
    assert!(fault.injector_landed, "{:?}", fault.detail);
    assert!(fault.victim_side_seen, "{:?}", fault.detail);
    assert!(fault.healed, "{:?}", fault.detail);
    let kinds: Vec<&str> = records.iter().map(|r| r.kind.as_str()).collect();
    let injected = kinds.iter().position(|k| *k == "fault-injected");
    let healed = kinds.iter().position(|k| *k == "fault-healed");
    assert!(
        matches!((injected, healed), (Some(i), Some(h)) if i < h),
        "{kinds:?}"
    );
    let undo = &records[injected.unwrap_or(0)].data["undo"]["net"];
    assert_eq!(undo["netns"], pair.b.0.as_str());
    assert_eq!(undo["rules"][0][0], "iptables");
    let landing = records
        .iter()
        .find(|r| r.kind == "landing-injector")
        .expect("landing-injector record");
    assert!(landing.data["detail"]["after"]["packets"][0].as_u64() > Some(0));
    assert!(!pair.b.rules().contains("faultline:"));
}

/// The twin at verdict level: the same client and probes, the rule aimed at port 9
/// (nothing listens there), run through the real CLI.
#[test]
fn the_mis_aimed_twin_ends_inconclusive_fault_not_proven() {
    let Some(pair) = pair() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("plan.md");
    std::fs::copy(common::twins_plan(), &plan).expect("plan copied");
    let client: Vec<String> = pair
        .client_argv(4)
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect();
    let sidecar = serde_json::json!({
        "version": 1,
        "vars": {"net_client": client.join(" "), "net_ns_b": pair.b.0, "net_addr_a": ADDR_A},
        "scenarios": {},
    });
    std::fs::write(dir.path().join("plan.run.yaml"), sidecar.to_string()).expect("sidecar");
    let run = common::run_scenario(&plan, "T5", dir.path());
    assert_eq!(
        run.verdict, "INCONCLUSIVE-fault-not-proven",
        "{}",
        run.stderr
    );
    let journal = std::fs::read_to_string(run.session.join("journal.jsonl")).expect("journal");
    assert!(journal.contains("\"fault-healed\""), "{journal}");
    assert!(!pair.b.rules().contains("faultline:"));
}

#[test]
fn a_net_fault_needs_a_rule_and_a_probability_in_range() {
    let spec = "\
version: 1
scenarios:
  N1:
    workload:
      run: client
    faults:
      - id: none
        after: 1s
        net:
          drop: []
      - id: odd
        after: 1s
        net:
          netns: b
          drop:
            - source: 10.0.0.1
              probability: 1.5
      - id: fine
        after: 1s
        net:
          drop:
            - {chain: OUTPUT, destination: 10.0.0.2, dport: 80, probability: 0.25}
";
    let errors = faultline::runspec::load(
        &faultline::plan::Plan::default(),
        Some(("plan.run.yaml", spec)),
    )
    .expect_err("two bad net faults");
    let found: Vec<(u64, Option<&str>)> = errors
        .iter()
        .map(|e| (e.line, e.field.as_deref()))
        .collect();
    assert_eq!(
        found,
        [(7, Some("net.drop")), (11, Some("net.drop.probability"))],
        "{errors:?}"
    );
    assert!(
        errors[1].to_string().starts_with("plan.run.yaml:11:"),
        "{}",
        errors[1]
    );
}
