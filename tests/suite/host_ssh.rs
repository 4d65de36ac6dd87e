//! The `Host` seam over a real sshd (a test host of examples/ssh-cluster): commands,
//! file reads and writes, a service whose output streams back and whose process group
//! is signalled on the node; a lost master connection is reconnected for a repeatable
//! command and reported, never repeated, for a command run once; an unknown host key
//! and an unreachable node are told apart.
//!
//! Needs root, `ip netns` and Debian's openssh-server (`FAULTLINE_REQUIRE_SSH=1` in CI).

use std::sync::Arc;
use std::time::Duration;

use faultline::host::ssh::{ConnectError, SshHost, close_master};
use faultline::host::{Host, HostError, NodeSpec};
use nix::sys::signal::Signal;

use crate::support::ssh_hosts::SshHosts;

fn node(hosts: &SshHosts, i: usize, known: &std::path::Path) -> NodeSpec {
    NodeSpec {
        ssh: Some(format!("root@{}", hosts.address(i))),
        key: Some(hosts.key().display().to_string()),
        known_hosts: Some(known.display().to_string()),
        ..NodeSpec::default()
    }
}

fn state(stat: &str) -> char {
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next())
        .unwrap_or('?')
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_over_ssh_runs_streams_signals_and_survives_a_lost_connection() {
    let Some(hosts) = SshHosts::up("host_ssh") else {
        return;
    };
    let known = hosts.known_hosts();
    let ssh = SshHost::connect("h1", node(&hosts, 1, &known))
        .await
        .expect("connects");
    assert_eq!(ssh.resolved.hostname, hosts.address(1));
    assert!(
        ssh.fingerprints
            .iter()
            .any(|f| f.contains(hosts.fingerprint(1))),
        "{:?} lacks {}",
        ssh.fingerprints,
        hosts.fingerprint(1)
    );
    let control = ssh.control.clone();
    let host: Arc<Host> = Arc::new(ssh);

    // A command runs on the node (its own address), with its exit code and streams.
    let out = host
        .run(
            "ip -4 -o addr show; echo err >&2; exit 3",
            Duration::from_secs(10),
        )
        .await
        .expect("runs");
    assert_eq!(out.code, Some(3));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&hosts.address(1)));
    assert_eq!(out.stderr, b"err\n");
    let file = hosts.dir().join("put-by-host");
    let path = file.display().to_string();
    host.put_file(&path, b"a\x00b").await.expect("puts");
    assert_eq!(host.read_file(&path).await.expect("reads"), b"a\x00b");

    // A service: its group on the node, its output here, stopped and resumed there.
    let logs = tempfile::tempdir().expect("logs");
    let spec = faultline::exec::CommandSpec {
        name: "svc".into(),
        command: "echo started; while true; do echo tick; sleep 0.1; done".into(),
        cwd: logs.path().into(),
        env: Vec::new(),
    };
    let mut running = faultline::exec::spawn_remote(host.clone(), &spec, logs.path())
        .await
        .expect("starts");
    assert_eq!(running.node(), Some("h1"));
    let pgid = running.pgid;
    host.signal_group(pgid, Signal::SIGSTOP)
        .await
        .expect("stop");
    let stat = host.proc_stat(pgid).await.expect("stat");
    assert_eq!(state(&stat), 'T', "{stat}");
    host.signal_group(pgid, Signal::SIGCONT)
        .await
        .expect("cont");
    tokio::time::sleep(Duration::from_millis(400)).await;
    running.terminate().await.expect("terminates");
    assert_eq!(
        host.proc_stat(pgid).await,
        None,
        "the group is gone on the node"
    );
    let log = std::fs::read_to_string(logs.path().join("svc.stdout.log")).expect("log");
    assert!(log.starts_with("started\ntick\n"), "{log:?}");

    // The master connection dies: a repeatable command reconnects; one run once
    // reports the transport error and is not repeated.
    assert!(
        close_master(&control),
        "the master answered at {}",
        control.display()
    );
    let marker = hosts.dir().join("ran-once");
    let once = host
        .run_once(
            &format!("echo x >> {}", marker.display()),
            Duration::from_secs(10),
        )
        .await;
    match once {
        Err(HostError::Transport { message, .. }) => {
            assert!(message.contains("not repeated"), "{message}")
        }
        other => panic!("a command run once over a dead master: {other:?}"),
    }
    let again = host.run("echo back", Duration::from_secs(10)).await;
    assert_eq!(again.expect("reconnected").stdout, b"back\n");

    // An unknown key names the node and the key it presents; a closed port is
    // unreachable.
    let empty = hosts.dir().join("empty_known_hosts");
    std::fs::write(&empty, "").expect("empty known_hosts");
    match SshHost::connect("h2", node(&hosts, 2, &empty)).await {
        Err(ConnectError::HostKey { presented, .. }) => assert!(
            presented.iter().any(|p| p.contains(hosts.fingerprint(2))),
            "{presented:?}"
        ),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("connected with an unknown host key"),
    }
    let mut closed = node(&hosts, 3, &known);
    closed.port = Some(2);
    match SshHost::connect("h3", closed).await {
        Err(ConnectError::Unreachable { message, .. }) => {
            assert!(message.contains("refused"), "{message}")
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("connected to a closed port"),
    }
}
