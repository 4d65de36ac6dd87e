//! The Redis example (`examples/redis/`), run the way its README line runs it: a plain
//! `faultline run examples/redis/plan.md`, whose run spec says `isolate: netns`, so
//! faultline makes the run's network namespace, starts Debian's redis-server (a
//! primary, two replicas) and redis-sentinel (three) inside it, and deletes it after:
//! no namespace and no rule of the run is left in the host's.
//! Its verdicts are the example's point: no fault → PASS-smoke; a partition of the
//! primary that Sentinel fails over → FAIL-reproducible, the acknowledged writes Redis
//! drops named from the run's own history and dump; the same partition aimed at an
//! address nobody uses → INCONCLUSIVE-fault-not-proven.
//! Needs root, `ip netns`, iptables, python3, redis-server and redis-sentinel: with
//! `FAULTLINE_REQUIRE_REDIS=1` (CI) a missing one fails the test, otherwise it prints
//! `SKIP: <reason>` and returns.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The first of `program`'s paths on PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Why this machine cannot run the example, if it cannot.
fn missing() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root: the example needs a network namespace and iptables".into());
    }
    if let Some(p) = [
        "ip",
        "iptables",
        "python3",
        "redis-server",
        "redis-sentinel",
    ]
    .into_iter()
    .find(|p| on_path(p).is_none())
    {
        return Some(format!(
            "`{p}` is not on PATH (apt-get install redis-server redis-sentinel iproute2 \
             iptables python3)"
        ));
    }
    netns_probe().err()
}

/// `ip netns list`, sorted.
fn netns_list() -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .collect();
    names.sort();
    names
}

/// The host namespace's iptables rules (`iptables -S`).
/// The root namespace's iptables rules that faultline tags as its own
/// (`faultline:<tag>` comments): Docker's own rules come and go with the tests that
/// make networks meanwhile.
fn root_rules() -> String {
    let out = Command::new("iptables")
        .args(["-w", "-S"])
        .output()
        .expect("iptables -S");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("faultline:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Makes a namespace, lists iptables rules inside it, and deletes it again.
fn netns_probe() -> Result<(), String> {
    let ns = format!("flt-redis-probe-{}", std::process::id());
    let run = |args: &[&str]| {
        let out = Command::new("ip")
            .args(args)
            .output()
            .map_err(|e| format!("ip: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "ip {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    run(&["netns", "add", &ns])?;
    let inside = run(&["netns", "exec", &ns, "iptables", "-S"]);
    let deleted = run(&["netns", "del", &ns]);
    inside.and(deleted)
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} unreadable: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The ops of a JSONL history (the trailer left out).
fn history(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} unreadable: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("history line is JSON"))
        .filter(|op| op.get("op_id").is_some())
        .collect()
}

/// The acknowledged writes of `seed_dir`'s history whose key is not in its final.json
/// with the written value — what no-lost-ack counts, recomputed by the test.
fn lost_writes(seed_dir: &Path) -> Vec<Value> {
    let state: BTreeMap<String, Value> =
        serde_json::from_value(json(&seed_dir.join("final.json"))).expect("final.json object");
    history(&seed_dir.join("history.jsonl"))
        .into_iter()
        .filter(|op| op["output"] == "OK" && op["error"].is_null() && op["timeout"] == false)
        .filter(|op| {
            let key = op["key"].as_str().expect("key");
            state.get(key) != Some(&op["input"])
        })
        .collect()
}

/// The scenario entry `id` of a session's verdicts.json.
fn scenario<'a>(verdicts: &'a Value, id: &str) -> &'a Value {
    verdicts["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no scenario {id} in verdicts.json"))
}

/// The landing evidence of a scenario's first seed and of its re-run, if any (a seed
/// lists `{seed, evidence}` entries, a re-run the evidence itself).
fn landings(entry: &Value) -> Vec<&Value> {
    let run = &entry["runs"][0];
    let mut out: Vec<&Value> = run["landing"]
        .as_array()
        .expect("landing")
        .iter()
        .map(|l| &l["evidence"])
        .collect();
    if let Some(rerun) = run["rerun"]["landing"].as_array() {
        out.extend(rerun);
    }
    out
}

/// Runs anywhere (no Redis needed): the example's plan and run spec lint clean, with
/// both partitions listed as privileged actions.
#[test]
fn redis_example_plan_lints_clean() {
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/redis/plan.md");
    let stdout = common::lint_example(&plan, "R1, R2, R3");
    for twin in [
        "-s 127.0.1.1 -d 127.0.2.0/24",
        "-s 127.0.9.1 -d 127.0.2.0/24",
    ] {
        assert!(stdout.contains(twin), "{twin} missing: {stdout}");
    }
}

#[test]
fn redis_failover_example_gives_its_three_verdicts() {
    if common::skipped("REDIS", missing()) {
        return;
    }
    let out = tempfile::tempdir().expect("tempdir");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/redis");
    let namespaces_before = netns_list();
    let rules_before = root_rules();
    let run = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("run")
        .arg(example.join("plan.md"))
        .arg("--sut")
        .arg(&example)
        .arg("--out")
        .arg(out.path())
        .args(["--headless", "--yes", "--approve-privileged"])
        .output()
        .expect("faultline runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    let stdout = String::from_utf8_lossy(&run.stdout);
    // Exit 1: the session verdict is FAIL, as R2 must make it.
    assert_eq!(
        run.status.code(),
        Some(1),
        "faultline run: {stdout}\n{stderr}"
    );
    let session = common::session_of(&run);

    let by_id = common::verdicts_by_id(&session);
    let expected: BTreeMap<String, String> = [
        ("R1", "PASS-smoke"),
        ("R2", "FAIL-reproducible"),
        ("R3", "INCONCLUSIVE-fault-not-proven"),
    ]
    .map(|(id, v)| (id.to_string(), v.to_string()))
    .into();
    assert_eq!(by_id, expected, "session {}", session.display());
    // Every artifact says so, R2's and R3's fault proofs and R2's classifier with it.
    let agreed = crate::agreement::artifacts_agree(&session);
    assert!(agreed.proofs >= 3 && agreed.not_proven >= 1, "{agreed:?}");
    assert_eq!(agreed.classified, 1, "{agreed:?}");

    let verdicts = json(&session.join("verdicts.json"));

    // The run's own namespace: journaled with its inode, said on the headless output,
    // deleted at the end, held by no process once faultline is gone; the host's
    // namespace list and iptables rules are as they were.
    let journal = common::journal_values(&session);
    let made: Vec<&Value> = journal
        .iter()
        .filter(|r| r["kind"] == "netns-created")
        .collect();
    assert_eq!(made.len(), 1, "one namespace for the run: {made:?}");
    let name = made[0]["data"]["name"]
        .as_str()
        .expect("its name")
        .to_string();
    let inode = made[0]["data"]["inode"].as_u64().expect("its inode");
    assert!(
        stdout.contains(&format!("namespace {name} of the run's own")),
        "{stdout}"
    );
    let removed: Vec<&Value> = journal
        .iter()
        .filter(|r| r["kind"] == "netns-removed")
        .collect();
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(
        removed[0]["data"]["result"]["Ok"].as_str(),
        Some(format!("network namespace {name} deleted").as_str()),
        "{removed:?}"
    );
    // Other tests make namespaces of their own meanwhile: none of this run's (named
    // `faultline-<its pid>-…`) is left, and none that was there went.
    let run_prefix = name.rsplit_once('-').map_or(name.as_str(), |(p, _)| p);
    let after = netns_list();
    assert!(
        !after.iter().any(|n| n.starts_with(run_prefix)),
        "ip netns list after the run still has {run_prefix}-…: {after:?}"
    );
    assert!(
        namespaces_before
            .iter()
            .filter(|n| !n.starts_with("faultline-") && !n.starts_with("fl"))
            .all(|n| after.contains(n)),
        "a namespace the run did not make went: before {namespaces_before:?}, after {after:?}"
    );
    // The watchdogs stand down and exit a moment after faultline does.
    common::await_watchdogs(&session, std::time::Duration::from_secs(10));
    assert_eq!(
        common::netns_holders(inode),
        Vec::<String>::new(),
        "processes still in {name}"
    );
    assert_eq!(
        root_rules(),
        rules_before,
        "the host's iptables rules after the run"
    );
    // The partition's rules went into the run's namespace, by its name.
    let injected: Vec<&Value> = journal
        .iter()
        .filter(|r| r["kind"] == "fault-injected")
        .collect();
    assert!(!injected.is_empty());
    for record in injected {
        assert_eq!(
            record["data"]["undo"]["net"]["netns"],
            name.as_str(),
            "{record}"
        );
    }

    // R2's partition landed on both sides, in the failing seed and in its re-run: the
    // tagged rules dropped packets, and the Sentinels logged the primary down and
    // failed over away from it.
    let r2 = scenario(&verdicts, "R2");
    let r2_landings = landings(r2);
    assert_eq!(
        r2_landings.len(),
        2,
        "seed 1 and its re-run: {r2_landings:?}"
    );
    for evidence in &r2_landings {
        assert_eq!(evidence["injector_side"], true, "{evidence}");
        assert_eq!(evidence["victim_side"], true, "{evidence}");
        assert_eq!(evidence["healed"], true, "{evidence}");
        let detail = evidence["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains("+switch-master mymaster 127.0.1.1 7001"),
            "{detail}"
        );
    }

    // The lost writes: acknowledged by the partitioned primary, absent from the new
    // primary's data set once the old one rejoined as its replica.
    let seed_dir = session.join("artifacts/R2/seed-1");
    let lost = lost_writes(&seed_dir);
    assert!(!lost.is_empty(), "R2 lost no acknowledged write");
    assert_eq!(
        r2["runs"][0]["oracle"]["anomalies"].as_u64(),
        Some(lost.len() as u64),
        "no-lost-ack's count against the writes the test finds missing"
    );
    assert!(
        lost.iter().any(|op| op["fault_epoch"] == 1),
        "some lost writes were acknowledged while the partition was in place"
    );
    // None from well before it: a write acknowledged a second before the rules went in
    // had long reached the replicas (a few in flight at that moment may not have).
    let ops = history(&seed_dir.join("history.jsonl"));
    let fault_began = ops
        .iter()
        .find(|op| op["fault_epoch"] == 1)
        .and_then(|op| op["invoke_ts"].as_u64())
        .expect("the history covers the partition");
    let early: Vec<&Value> = lost
        .iter()
        .filter(|op| op["invoke_ts"].as_u64().unwrap_or(0) + 1_000_000_000 < fault_began)
        .collect();
    assert!(early.is_empty(), "lost before the partition: {early:?}");
    let demoted = ["s1", "s2", "s3"].iter().any(|s| {
        let log = session.join(format!("logs/R2/seed-1/{s}.stderr.log"));
        std::fs::read_to_string(log)
            .is_ok_and(|t| t.contains("+convert-to-slave slave 127.0.1.1:7001"))
    });
    assert!(demoted, "no Sentinel demoted the old primary to a replica");
    let finding = &r2["finding"];
    assert_eq!(finding["reproduced"], true, "{finding}");
    // The reproducer carries the approval this run was given (the partition needs it).
    assert!(
        finding["reproducer"]
            .as_str()
            .is_some_and(|r| r.contains("--approve-privileged --only R2")),
        "{finding}"
    );
    assert!(
        finding["what_happened"]
            .as_str()
            .is_some_and(|t| t.contains(&format!("{} anomalies", lost.len()))),
        "the finding counts the lost writes: {finding}"
    );
    // The finding lists the lost keys: the first 20, each with its op id, the value
    // written, and the fault window it was acknowledged in; the total is all of them.
    assert_eq!(
        finding["anomalies_total"].as_u64(),
        Some(lost.len() as u64),
        "{finding}"
    );
    let listed: Vec<&str> = finding["anomalies"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(listed.len(), lost.len().min(20), "{finding}");
    for line in &listed {
        let found = lost.iter().find(|op| {
            let (key, id) = (op["key"].as_str().unwrap_or("?"), op["op_id"].to_string());
            let id = id.trim_matches('"');
            line.contains(&format!("`{key}`")) && line.contains(&format!("op {id} ("))
        });
        let op = found.unwrap_or_else(|| panic!("{line} names no lost write"));
        assert!(line.contains(&op["input"].to_string()), "{line}: its value");
        assert!(
            line.contains("outside every fault window") || line.contains("during "),
            "{line}: its fault window"
        );
    }

    // R1 and R3 lose nothing, by the test's own count too.
    for id in ["R1", "R3"] {
        let seed_dir = session.join(format!("artifacts/{id}/seed-1"));
        assert_eq!(lost_writes(&seed_dir), Vec::<Value>::new(), "{id}");
        assert_eq!(
            scenario(&verdicts, id)["runs"][0]["oracle"]["anomalies"],
            0,
            "{id}"
        );
    }

    // R3's rules matched nothing and no Sentinel lost the primary.
    let r3_landings = landings(scenario(&verdicts, "R3"));
    assert_eq!(r3_landings.len(), 1, "{r3_landings:?}");
    let evidence = r3_landings[0];
    assert_eq!(evidence["injected"], true, "{evidence}");
    assert_eq!(evidence["injector_side"], false, "{evidence}");
    assert_eq!(evidence["victim_side"], false, "{evidence}");
}
