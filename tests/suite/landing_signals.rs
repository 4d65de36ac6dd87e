//! Declared landing signals beyond a log line, each read from a real source: a counter
//! a command prints, a field of an HTTP JSON status page and a Prometheus metric (both
//! served by a real HTTP server on loopback), and the workload's own history. The
//! mis-aimed twin changes only where the fault writes; none of its signals may land.

use crate::common;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A static HTTP server over `dir` on loopback; stopped (by its pid) on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path) -> Option<Server> {
    let port = TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let child = Command::new("python3")
        .args([
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let server = Server { child, port };
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(server)
}

/// The binding: a workload that records timed-out ops while `flag` exists, and a command
/// fault writing under `aim` (the served `www` or a folder nobody reads).
fn binding(port: u16, aim: &str) -> String {
    format!(
        r#"
workload:
  run: "for i in $(seq 1 40); do if [ -e www/isolated ]; then echo '{{\"op_type\":\"write\",\"timeout\":true,\"error\":null}}' >> history.jsonl; else echo '{{\"op_type\":\"write\",\"timeout\":false,\"error\":null}}' >> history.jsonl; fi; sleep 0.05; done"
  deadline: 20s
faults:
  - id: isolate-n2
    after: 300ms
    duration: 1s
    command:
      inject: "echo '{{\"role\":\"isolated\"}}' > {aim}/status.json && echo 'elections_total{{node=\"n2\"}} 5' > {aim}/metrics.txt && echo drop >> {aim}/drops && touch {aim}/isolated"
      heal: "echo '{{\"role\":\"follower\"}}' > {aim}/status.json && rm -f {aim}/isolated"
    landing:
      - side: injector
        counter: {{ run: "wc -l < www/drops" }}
        within: 3s
      - side: victim
        http: {{ url: "http://127.0.0.1:{port}/status.json", pointer: /role, equals: isolated }}
        within: 3s
      - side: victim
        prometheus: {{ url: "http://127.0.0.1:{port}/metrics.txt", metric: 'elections_total{{node="n2"}}' }}
        within: 3s
      - side: victim
        history: {{ path: history.jsonl }}
        within: 3s
"#
    )
}

fn fixture(dir: &Path) {
    for folder in ["www", "elsewhere"] {
        let d = dir.join(folder);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(d.join("status.json"), r#"{"role":"follower"}"#).expect("status");
        std::fs::write(
            d.join("metrics.txt"),
            "# TYPE elections_total counter\nelections_total{node=\"n2\"} 4\n",
        )
        .expect("metrics");
        std::fs::write(d.join("drops"), "start\n").expect("drops");
    }
}

fn python_or_skip() -> bool {
    let found = Command::new("python3").arg("--version").output().is_ok();
    let why = "python3 is not installed; the HTTP landing signals were not tested";
    common::skipped("PYTHON", (!found).then(|| why.to_string()));
    found
}

#[tokio::test]
async fn every_signal_kind_lands_when_the_fault_is_on_the_data_path() {
    if !python_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let server = serve(&dir.path().join("www")).expect("http server");
    let (facts, records) = common::run_inline(&binding(server.port, "www"), dir.path()).await;
    let fault = &facts.faults[0];
    assert!(fault.injected && fault.healed, "{fault:?}");
    let declared: Vec<_> = records
        .iter()
        .filter(|r| r.kind == "landing-declared")
        .collect();
    assert_eq!(declared.len(), 4, "{declared:?}");
    for r in &declared {
        assert!(r.data["seen"].is_string(), "signal not seen: {}", r.data);
    }
    let seen: Vec<String> = declared
        .iter()
        .map(|r| r.data["seen"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(seen[0].contains("rose from 1 to 2"), "{seen:?}");
    assert!(seen[1].contains("/role = \"isolated\""), "{seen:?}");
    assert!(seen[2].contains("rose from 4 to 5"), "{seen:?}");
    assert!(seen[3].contains("\"timeout\":true"), "{seen:?}");
    assert!(fault.declared_landed && fault.victim_side_seen, "{fault:?}");
    // Healed: the status page says follower again.
    let status = std::fs::read_to_string(dir.path().join("www/status.json")).expect("status");
    assert!(status.contains("follower"), "{status}");
}

#[tokio::test]
async fn the_misaimed_twin_lands_no_signal() {
    if !python_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    fixture(dir.path());
    let server = serve(&dir.path().join("www")).expect("http server");
    let (facts, records) = common::run_inline(&binding(server.port, "elsewhere"), dir.path()).await;
    let fault = &facts.faults[0];
    assert!(fault.injected, "{fault:?}");
    let declared: Vec<_> = records
        .iter()
        .filter(|r| r.kind == "landing-declared")
        .collect();
    assert_eq!(declared.len(), 4, "{declared:?}");
    for r in &declared {
        assert!(
            r.data["seen"].is_null(),
            "landed off the data path: {}",
            r.data
        );
    }
    assert!(!fault.declared_landed, "{fault:?}");
}

#[test]
fn a_landing_entry_naming_two_signals_is_rejected_with_its_line() {
    let plan = common::demo_plan();
    let yaml = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/plan.run.yaml"),
    )
    .expect("spec");
    let broken = yaml.replacen(
        "landing:\n",
        "landing:\n          - side: victim\n            history: { path: h.jsonl }\n            counter: { run: \"echo 1\" }\n",
        1,
    );
    assert_ne!(broken, yaml, "the demo spec has a landing block");
    let errors = faultline::runspec::load(&plan, Some(("plan.run.yaml", &broken)))
        .expect_err("two signals in one entry");
    let text = errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains("needs exactly one of `log`, `counter`, `http`, `prometheus` or `history`"),
        "{text}"
    );
    assert!(text.contains("plan.run.yaml:"), "{text}");
}

#[test]
fn lint_warns_when_a_probe_does_not_watch_the_signal_section_7m_declares() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        root.join("examples/demo/plan.md"),
        dir.path().join("plan.md"),
    )
    .expect("plan");
    let yaml = std::fs::read_to_string(root.join("examples/demo/plan.run.yaml")).expect("spec");
    let lint = |yaml: &str| {
        std::fs::write(dir.path().join("plan.run.yaml"), yaml).expect("spec");
        let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
            .args(["lint", "plan.md"])
            .current_dir(dir.path())
            .output()
            .expect("lint runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(
        !lint(&yaml).contains("none of its"),
        "the demo's probes match"
    );
    // D2's §7.M names `replication to n3 timed out`; aim its probe at another line.
    let misaimed = yaml.replacen("replication to n3 timed out", "snapshot installed", 1);
    assert_ne!(misaimed, yaml);
    let out = lint(&misaimed);
    assert!(
        out.contains("D2 §7.M declares landing by")
            && out.contains("none of its 1 landing probe(s) watches that signal"),
        "{out}"
    );
}

#[test]
fn a_command_fault_aimed_at_a_bystander_ends_fault_not_proven() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = common::run_scenario(&common::twins_plan(), "T4", dir.path());
    assert_eq!(
        run.verdict, "INCONCLUSIVE-fault-not-proven",
        "{}",
        run.stderr
    );
    // The bystander was paused and continued: the journal shows both.
    let journal = std::fs::read_to_string(run.session.join("journal.jsonl")).expect("journal");
    assert!(journal.contains("\"fault-injected\"") && journal.contains("\"fault-healed\""));
    assert!(
        !journal.contains("\"fault-inject-failed\""),
        "the bystander must really be paused: not proven for the right reason"
    );
}
