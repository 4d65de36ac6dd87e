//! Capability registry, probes (PATH shims and the real machine), install plans, and
//! the references/capabilities.md headings.

use crate::common;

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use faultline::capability::{
    Blast, Capability, Need, NeedSource, PackageManager, ProbeEnv, display, from_technique,
    install_plan, normalise, probe, qdisc_kinds,
};
use faultline::plan::model::Requirement;
use semver::Version;

fn v(major: u64, minor: u64, patch: u64) -> Option<Version> {
    Some(Version::new(major, minor, patch))
}

/// A row and the capabilities (with floors) it should yield.
type Case = (&'static str, Vec<(Capability, Option<Version>)>);

#[test]
fn normalise_example_rows() {
    use Capability::*;
    let cases: Vec<Case> = vec![
        (
            "docker + docker compose 2.20+",
            vec![(Docker, None), (DockerCompose, v(2, 20, 0))],
        ),
        (
            "iptables (needs CAP_NET_ADMIN)",
            vec![(Iptables, None), (CapNetAdmin, None)],
        ),
        ("Go 1.21+", vec![(Go, v(1, 21, 0))]),
        ("Postgres 14+", vec![(Postgres, v(14, 0, 0))]),
        ("tc/netem", vec![(Tc, None), (TcNetem, None)]),
        ("libfaketime", vec![(Libfaketime, None)]),
        ("Linux network namespaces", vec![(NetNamespaces, None)]),
        ("toxiproxy 2.5", vec![(Toxiproxy, v(2, 5, 0))]),
        ("cgroups v2 for IO throttling", vec![(CgroupIo, None)]),
    ];
    for (raw, mut want) in cases {
        let mut got = normalise(raw);
        got.sort();
        want.sort();
        assert_eq!(got, want, "row {raw:?}");
    }
    assert!(normalise("a friendly SRE on call").is_empty());
}

#[test]
fn plan_rows_become_needs() {
    let row = |requirement: &str, version_floor: &str| Requirement {
        requirement: requirement.into(),
        version_floor: version_floor.into(),
        used_by: "S1, S3".into(),
        line: 42,
        ..Requirement::default()
    };
    let go = Need::from_requirement(&row("Go toolchain", "1.21"));
    assert_eq!(go.len(), 1);
    assert_eq!(go[0].capability, Some(Capability::Go));
    assert_eq!(go[0].floor, v(1, 21, 0));
    assert_eq!(go[0].used_by, ["S1", "S3"]);
    assert_eq!(go[0].source, NeedSource::PlanRow { line: 42 });
    let odd = Need::from_requirement(&row("a quantum entangler", ""));
    assert_eq!(odd.len(), 1);
    assert_eq!(odd[0].capability, None);
    assert_eq!(odd[0].raw, "a quantum entangler");
    assert_eq!(
        Capability::Endpoint("db:5432".into()).to_string(),
        "endpoint:db:5432"
    );
}

#[test]
fn techniques_map_to_fault_tools() {
    use Capability::*;
    let partition = from_technique("asymmetric network partition of the leader");
    for c in [Iptables, NetNamespaces, CapNetAdmin] {
        assert!(partition.contains(&c), "{partition:?}");
    }
    assert!(from_technique("inject 200ms latency").contains(&TcNetem));
    assert_eq!(from_technique("clock skew of +5s"), vec![Libfaketime]);
    assert_eq!(from_technique("disk fault on fsync"), vec![DmFlakey]);
    assert!(from_technique("restart a container").contains(&Docker));
    assert!(from_technique("SIGKILL the follower").is_empty());
    // Isolating a node is a cut; a transaction isolation level is not.
    for cut in [
        "isolate the leader",
        "network isolation of n2",
        "isolation of the primary",
    ] {
        assert!(from_technique(cut).contains(&Iptables), "{cut}");
    }
    for level in [
        "list-append at the repeatable read isolation level",
        "snapshot isolation, serializable isolation",
    ] {
        assert!(from_technique(level).is_empty(), "{level}");
    }
}

/// Writes an executable shim that logs its argv and prints `output`.
fn shim(dir: &Path, name: &str, log: &Path, output: &str) {
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\necho \"{name} $*\" >> '{}'\necho '{output}'\n",
        log.display()
    );
    std::fs::write(&path, script).expect("write shim");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod shim");
}

#[tokio::test]
async fn shims_on_probe_path_are_used() {
    let shims = tempfile::tempdir().expect("tempdir");
    let scratch = tempfile::tempdir().expect("tempdir");
    let log = scratch.path().join("calls.log");
    shim(shims.path(), "go", &log, "go version go1.20.3 linux/amd64");
    shim(
        shims.path(),
        "docker",
        &log,
        "Docker Compose version v2.24.1",
    );
    shim(shims.path(), "tc", &log, "tc utility, iproute2-6.1.0");
    let mut path = OsString::from(shims.path());
    path.push(":/bin:/usr/bin");
    let env = ProbeEnv {
        path: Some(path),
        scratch: scratch.path().to_path_buf(),
    };

    let go = probe(
        &Capability::Go,
        Version::parse("1.21.0").ok().as_ref(),
        &env,
    )
    .await;
    assert!(go.present, "{go:?}");
    assert_eq!(go.version.as_deref(), Some("1.20.3"));
    assert_eq!(go.meets_floor, Some(false));
    assert_eq!(go.command, "go version");
    assert_eq!(go.source, "probe");

    let compose = probe(&Capability::DockerCompose, v(2, 20, 0).as_ref(), &env).await;
    assert!(compose.present, "{compose:?}");
    assert_eq!(compose.version.as_deref(), Some("2.24.1"));
    assert_eq!(compose.meets_floor, Some(true));

    shim(shims.path(), "apk", &log, "apk-tools 2.14.0");
    let only_shims = ProbeEnv {
        path: Some(shims.path().as_os_str().to_owned()),
        ..env.clone()
    };
    assert_eq!(
        PackageManager::detect(&only_shims),
        Some(PackageManager::Apk)
    );

    let calls = std::fs::read_to_string(&log).expect("shim log");
    assert!(calls.contains("go version"), "{calls}");
    assert!(calls.contains("docker compose version"), "{calls}");
}

#[tokio::test]
async fn binary_missing_from_probe_path_is_absent_with_reason() {
    let empty = tempfile::tempdir().expect("tempdir");
    let env = ProbeEnv {
        path: Some(empty.path().as_os_str().to_owned()),
        scratch: empty.path().to_path_buf(),
    };
    let go = probe(&Capability::Go, None, &env).await;
    assert!(!go.present);
    assert!(go.saw.contains("not found"), "{go:?}");
    assert_eq!(PackageManager::detect(&env), None);
    let named = probe(&Capability::Binary("jepsen-helper".into()), None, &env).await;
    assert!(!named.present);
    assert!(named.saw.contains("jepsen-helper"), "{named:?}");
}

fn host_env(scratch: &Path) -> ProbeEnv {
    ProbeEnv {
        path: None,
        scratch: scratch.to_path_buf(),
    }
}

#[tokio::test]
async fn real_missing_tool_is_reported_missing() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let toxiproxy = probe(&Capability::Toxiproxy, None, &host_env(scratch.path())).await;
    assert!(!toxiproxy.present, "{toxiproxy:?}");
    assert!(toxiproxy.saw.contains("toxiproxy-server"), "{toxiproxy:?}");
    let closed = probe(
        &Capability::Endpoint("127.0.0.1:1".into()),
        None,
        &host_env(scratch.path()),
    )
    .await;
    assert!(!closed.present, "{closed:?}");
}

#[tokio::test]
async fn docker_engine_through_bollard() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let docker = probe(&Capability::Docker, None, &host_env(scratch.path())).await;
    if common::skipped(
        "DOCKER",
        (!docker.present).then(|| format!("no Docker engine reachable: {docker:?}")),
    ) {
        return;
    }
    let version = docker.version.as_deref().expect("engine version");
    assert!(
        Version::parse(version).is_ok() || version.split('.').count() == 2,
        "{docker:?}"
    );
    assert!(docker.saw.contains("engine"), "{docker:?}");
    eprintln!("docker: {}", docker.saw);
}

/// Runs `ip args…` and says whether it succeeded.
fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[tokio::test]
async fn kernel_features_in_scratch_namespace() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let env = host_env(scratch.path());
    let netns = probe(&Capability::NetNamespaces, None, &env).await;
    if common::skipped(
        "NETNS",
        (!netns.present).then(|| format!("network namespaces unusable here: {netns:?}")),
    ) {
        return;
    }
    let iptables = probe(&Capability::Iptables, None, &env).await;
    assert!(iptables.present, "{iptables:?}");
    eprintln!("iptables: {}", iptables.saw);

    let kinds = qdisc_kinds(&env).await.expect("qdisc kinds");
    assert!(kinds.iter().any(|k| k == "pfifo"), "{kinds:?}");
    let tc = probe(&Capability::Tc, None, &env).await;
    assert!(tc.present && tc.saw.contains("pfifo"), "{tc:?}");
    eprintln!("tc: {}", tc.saw);
    let netem = probe(&Capability::TcNetem, None, &env).await;
    assert_eq!(
        netem.present,
        kinds.iter().any(|k| k == "netem"),
        "{netem:?}"
    );

    // Cross-check against tc run by hand in a namespace of our own.
    let ns = format!("fl-xcheck-{}", std::process::id());
    assert!(ip(&["netns", "add", &ns]));
    let _ = ip(&["-n", &ns, "link", "set", "lo", "up"]);
    for kind in [&["pfifo"][..], &["netem", "delay", "1ms"][..]] {
        let mut args = vec![
            "netns", "exec", &ns, "tc", "qdisc", "add", "dev", "lo", "root",
        ];
        args.extend_from_slice(kind);
        let by_hand = ip(&args);
        let _ = ip(&[
            "netns", "exec", &ns, "tc", "qdisc", "del", "dev", "lo", "root",
        ]);
        assert_eq!(
            by_hand,
            kinds.iter().any(|k| k == kind[0]),
            "{kind:?} vs {kinds:?}"
        );
    }
    let _ = ip(&["netns", "delete", &ns]);

    let list = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    let list = String::from_utf8_lossy(&list.stdout);
    // The probes above are this process's: `fl-probe-<pid>-<n>`. In the one test
    // binary, `faultline` children of other tests may be probing right now, each in a
    // scratch namespace named by its own pid.
    let mine = format!("fl-probe-{}-", std::process::id());
    assert!(!list.contains(&mine), "left behind: {list}");
}

#[test]
fn install_plans() {
    let plan = install_plan(&Capability::Iptables, PackageManager::AptGet).expect("iptables plan");
    assert_eq!(plan.command, ["apt-get", "install", "-y", "iptables"]);
    assert_eq!(display(&plan), "apt-get install -y iptables");
    assert_eq!(plan.blast, Blast::Low);
    let flakey = install_plan(&Capability::DmFlakey, PackageManager::AptGet);
    assert!(flakey.is_none_or(|p| p.blast != Blast::Low));
    assert!(install_plan(&Capability::Toxiproxy, PackageManager::AptGet).is_none());
    for kernel in [
        Capability::TcNetem,
        Capability::NetNamespaces,
        Capability::CgroupIo,
        Capability::CapNetAdmin,
    ] {
        assert!(
            install_plan(&kernel, PackageManager::AptGet).is_none(),
            "{kernel}"
        );
    }
    assert_eq!(
        install_plan(&Capability::Redis, PackageManager::Dnf)
            .map(|p| display(&p))
            .as_deref(),
        Some("dnf install -y redis")
    );
}

#[test]
fn references_headings_equal_capability_names() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/references/capabilities.md"
    ))
    .expect("references/capabilities.md");
    let headings: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(str::trim)
        .collect();
    let mut want: Vec<String> = Capability::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .collect();
    want.push("binary:<name>".into());
    want.push("endpoint:<host:port>".into());
    assert_eq!(headings, want);
}
