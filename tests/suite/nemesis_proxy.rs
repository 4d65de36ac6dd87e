//! The proxy nemesis against real TCP traffic: a python echo server, a python client
//! that routes through faultline's fault proxy, a reset toxic that lands on both sides
//! (the proxy's own counters, the client's own errors) and heals (traffic flows again),
//! a mis-aimed twin whose client bypasses the proxy (not proven), and latency / stall /
//! slicing applied to real bytes through the proxy API.

use crate::common;
use crate::common::Line;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use faultline::engine::iteration::IterationFacts;
use faultline::nemesis::proxy::{Proxy, Toxic};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::tcp_echo;
use tcp_echo::{CLIENT, ECHO};

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A free port on loopback (bound, read, released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn echo_server(port: u16) -> Proc {
    let child = Command::new(python())
        .args(["-c", ECHO, &port.to_string()])
        .stdout(Stdio::null())
        .spawn()
        .expect("echo server");
    let end = Instant::now() + Duration::from_secs(5);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    Proc(child)
}

/// The client dials `dials`; the proxy listens on `listen` in front of `upstream`.
fn binding(dials: u16, listen: u16, upstream: u16) -> faultline::runspec::Binding {
    let client = format!(
        "'{}' -c '{}' {dials} 4",
        python(),
        CLIENT.replace('\'', r"'\''")
    );
    let yaml = format!(
        r#"
workload:
  run: {client:?}
  deadline: 30s
faults:
  - id: reset
    after: 1s
    duration: 1s
    proxy:
      listen: 127.0.0.1:{listen}
      upstream: 127.0.0.1:{upstream}
      toxic: {{ reset: true }}
    landing:
      - side: victim
        log: {{ service: workload, pattern: "failed" }}
        within: 2s
"#
    );
    serde_saphyr::from_str(&yaml).expect("binding")
}

async fn run(dir: &Path, binding: &faultline::runspec::Binding) -> (IterationFacts, Vec<Line>) {
    common::run_binding(binding, dir).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_toxic_lands_on_both_sides_and_heals() {
    let upstream = free_port();
    let _server = echo_server(upstream);
    let listen = free_port();
    let dir = tempfile::tempdir().expect("tempdir");
    let (facts, records) = run(dir.path(), &binding(listen, listen, upstream)).await;
    let fault = facts.faults.first().expect("one fault");
    assert!(fault.injected, "{:?}", fault.detail);
    assert!(fault.injector_landed, "{:?}", fault.detail);
    assert!(fault.victim_side_seen, "{:?}", fault.detail);
    assert!(fault.declared_landed, "{:?}", fault.detail);
    assert!(fault.healed, "{:?}", fault.detail);
    let landing = records
        .iter()
        .find(|r| r.kind == "landing-injector")
        .expect("landing-injector");
    assert!(landing.data["detail"]["after"]["toxic_resets"].as_u64() > Some(0));
    let declared = records
        .iter()
        .find(|r| r.kind == "landing-declared")
        .expect("landing-declared");
    assert!(
        declared.data["seen"]
            .as_str()
            .is_some_and(|l| l.starts_with("failed"))
    );
    // Healed: the client's own log shows it getting echoes again after its failures.
    let log =
        std::fs::read_to_string(dir.path().join("logs/workload.stderr.log")).expect("client log");
    let failed = log.rfind("failed").expect("the client saw the reset");
    assert!(
        log[failed..].contains("\nok"),
        "no traffic after heal:\n{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mis_aimed_twin_whose_client_bypasses_the_proxy_is_not_proven() {
    let upstream = free_port();
    let _server = echo_server(upstream);
    let listen = free_port();
    let dir = tempfile::tempdir().expect("tempdir");
    // Same spec and probes; only the client dials the node directly.
    let (facts, records) = run(dir.path(), &binding(upstream, listen, upstream)).await;
    let fault = facts.faults.first().expect("one fault");
    assert!(fault.injected, "{:?}", fault.detail);
    assert!(!fault.injector_landed, "{:?}", fault.detail);
    assert!(!fault.victim_side_seen, "{:?}", fault.detail);
    assert!(!fault.declared_landed, "{:?}", fault.detail);
    assert!(fault.healed, "{:?}", fault.detail);
    let landing = records
        .iter()
        .find(|r| r.kind == "landing-injector")
        .expect("landing-injector");
    assert_eq!(landing.data["landed"], false);
}

/// One echo round trip through `addr`, timed.
async fn round_trip(addr: std::net::SocketAddr, payload: &[u8]) -> (Duration, Vec<u8>) {
    let start = Instant::now();
    let mut c = tokio::net::TcpStream::connect(addr).await.expect("connect");
    c.write_all(payload).await.expect("write");
    let mut got = vec![0u8; payload.len()];
    c.read_exact(&mut got).await.expect("echo");
    (start.elapsed(), got)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_stall_and_slicing_act_on_real_bytes_and_heal() {
    let upstream = free_port();
    let _server = echo_server(upstream);
    let proxy = std::sync::Arc::new(
        Proxy::start("127.0.0.1:0", &format!("127.0.0.1:{upstream}"))
            .await
            .expect("proxy"),
    );
    let (clean, _) = round_trip(proxy.listen, b"hello").await;

    let slow = proxy.enable(Toxic {
        latency: Some(Duration::from_millis(300)),
        jitter: Some(Duration::from_millis(50)),
        ..Toxic::default()
    });
    let (took, got) = round_trip(proxy.listen, b"hello").await;
    assert_eq!(got, b"hello");
    assert!(
        took >= Duration::from_millis(600),
        "{took:?} (clean {clean:?})"
    );
    assert!(slow.await_landing(Duration::from_secs(1)).await.landed);
    slow.heal();
    let (took, _) = round_trip(proxy.listen, b"hello").await;
    assert!(
        took < Duration::from_millis(300),
        "latency outlived heal: {took:?}"
    );

    let sliced = proxy.enable(Toxic {
        slice: Some(3),
        bandwidth: Some(1000),
        ..Toxic::default()
    });
    let payload = vec![b'x'; 300];
    let (took, got) = round_trip(proxy.listen, &payload).await;
    assert_eq!(got, payload);
    // 300 bytes at 1000 B/s: at least 0.3 s in one direction alone.
    assert!(took >= Duration::from_millis(300), "{took:?}");
    sliced.heal();

    let stall = proxy.enable(Toxic {
        stall: true,
        ..Toxic::default()
    });
    let held = tokio::time::timeout(
        Duration::from_millis(500),
        round_trip(proxy.listen, b"held"),
    )
    .await;
    assert!(held.is_err(), "bytes passed a stall");
    let pending = tokio::spawn(round_trip(proxy.listen, b"held"));
    assert!(stall.await_landing(Duration::from_secs(2)).await.landed);
    // Dropped unhealed: the stall lifts and the held bytes flow.
    drop(stall);
    let (_, got) = tokio::time::timeout(Duration::from_secs(2), pending)
        .await
        .expect("held bytes released")
        .expect("task");
    assert_eq!(got, b"held");
}

#[test]
fn the_mis_aimed_twin_ends_inconclusive_fault_not_proven() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = common::run_scenario(&common::twins_plan(), "T3", dir.path());
    assert_eq!(
        run.verdict, "INCONCLUSIVE-fault-not-proven",
        "{}",
        run.stderr
    );
}
