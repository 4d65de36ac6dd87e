//! Scratch: the Host seam against the loopback sshd in /tmp/sshd1 (to be moved onto
//! the netns fixture).

use std::sync::Arc;
use std::time::Duration;

use faultline::host::ssh::{ConnectError, SshHost};
use faultline::host::{Host, NodeSpec};

fn spec(known: &str) -> NodeSpec {
    NodeSpec {
        ssh: Some("root@127.0.0.1".into()),
        port: Some(2299),
        key: Some("/tmp/sshd1/id".into()),
        known_hosts: Some(known.into()),
        ..NodeSpec::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scratch_host_over_ssh() {
    if !std::path::Path::new("/tmp/sshd1/sshd.pid").exists() {
        eprintln!("SKIP: scratch");
        return;
    }
    let host = SshHost::connect("n1", spec("/tmp/sshd1/known_hosts"))
        .await
        .expect("connects");
    eprintln!(
        "fingerprints {:?} resolved {:?}",
        host.fingerprints, host.resolved
    );
    let host = Arc::new(Host::Ssh(Box::new(host)));
    let out = host
        .run("echo hello; echo err >&2; exit 3", Duration::from_secs(5))
        .await
        .expect("runs");
    assert_eq!(out.code, Some(3));
    assert_eq!(out.stdout, b"hello\n");
    host.put_file("/tmp/sshd1/put", b"abc").await.expect("puts");
    assert_eq!(
        host.read_file("/tmp/sshd1/put").await.expect("reads"),
        b"abc"
    );
    let dir = tempfile::tempdir().expect("tmp");
    let cmd = faultline::exec::CommandSpec {
        name: "svc".into(),
        command: "echo started; while true; do echo tick; sleep 0.2; done".into(),
        cwd: dir.path().into(),
        env: vec![],
    };
    let mut running = faultline::exec::spawn_remote(host.clone(), &cmd, dir.path())
        .await
        .expect("spawns");
    eprintln!("pgid {}", running.pgid);
    tokio::time::sleep(Duration::from_millis(700)).await;
    host.signal_group(running.pgid, nix::sys::signal::Signal::SIGSTOP)
        .await
        .expect("stop");
    let stat = host.proc_stat(running.pgid).await.expect("stat");
    eprintln!("stat {stat}");
    host.signal_group(running.pgid, nix::sys::signal::Signal::SIGCONT)
        .await
        .expect("cont");
    running.terminate().await.expect("terminates");
    let log = std::fs::read_to_string(dir.path().join("svc.stdout.log")).expect("log");
    eprintln!("log {log:?}");
    assert!(log.starts_with("started\ntick"), "{log}");
    assert!(host.proc_stat(running.pgid).await.is_none());
    std::fs::write("/tmp/sshd1/empty_known", "").expect("w");
    match SshHost::connect("n2", spec("/tmp/sshd1/empty_known")).await {
        Err(e @ ConnectError::HostKey { .. }) => eprintln!("{e}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("connected with an unknown key"),
    }
    let mut s = spec("/tmp/sshd1/known_hosts");
    s.port = Some(2298);
    match SshHost::connect("n3", s).await {
        Err(e @ ConnectError::Unreachable { .. }) => eprintln!("{e}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("connected"),
    }
}
