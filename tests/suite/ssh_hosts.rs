//! The SSH test hosts of examples/ssh-cluster (support::ssh_hosts) are what they claim
//! to be: three hosts reached over SSH with pinned host keys, each with only its own
//! address, whose own iptables cut a peer off, and which leave nothing behind.
//!
//! Needs root, `ip netns` and Debian's openssh-server; with
//! `FAULTLINE_REQUIRE_SSH=1` (CI) a missing one fails the test instead of skipping it.

use std::process::{Command, Output};

use crate::common::pid_alive;
use crate::support::ssh_hosts::SshHosts;

fn text(out: &Output) -> String {
    format!(
        "{}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether host 1 opens a TCP connection to `addr`:22 within a second.
fn h1_reaches(hosts: &SshHosts, addr: &str) -> bool {
    hosts
        .ssh(1, &format!("timeout 1 bash -c '</dev/tcp/{addr}/22'"))
        .status
        .success()
}

/// [`h1_reaches`] tried up to five times: on a loaded machine one connect can miss
/// its one-second timeout (seen in CI before any rule, and after the delete). A
/// connect that must fail is tried once; the DROP rule's counter proves it.
fn h1_reaches_polled(hosts: &SshHosts, addr: &str) -> bool {
    (0..5).any(|_| h1_reaches(hosts, addr))
}

/// Packets counted by host 2's INPUT rule tagged `tag`, if it exists.
fn drop_counter(hosts: &SshHosts, tag: &str) -> Option<u64> {
    let out = hosts.ssh(2, "iptables -w -nvxL INPUT");
    assert!(out.status.success(), "iptables -L on h2: {}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|line| line.contains(&format!("/* {tag} */")))
        .and_then(|line| line.split_whitespace().next()?.parse().ok())
}

#[test]
fn three_hosts_over_ssh_with_their_own_addresses_and_firewalls() {
    let Some(mut hosts) = SshHosts::up("ssh_hosts") else {
        return;
    };

    // Every host answers a key login with its host key pinned, and holds only its own
    // address (besides loopback).
    for i in 1..=3 {
        let out = hosts.ssh(i, "ip -4 -o addr show");
        assert!(out.status.success(), "ssh h{i}: {}", text(&out));
        let addrs: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                words.find(|w| *w == "inet")?;
                Some(words.next()?.split('/').next()?.to_string())
            })
            .collect();
        assert_eq!(
            addrs,
            ["127.0.0.1".to_string(), hosts.address(i)],
            "h{i}'s IPv4 addresses"
        );
        assert!(hosts.fingerprint(i).starts_with("SHA256:"));
    }

    // The same login without the config file: the key and known_hosts alone suffice,
    // and an empty known_hosts is refused (strict checking, never trust on first use).
    let direct = |known_hosts: &std::path::Path| {
        Command::new("ssh")
            .arg("-F")
            .arg("/dev/null")
            .arg("-i")
            .arg(hosts.key())
            .arg("-o")
            .arg(format!("UserKnownHostsFile={}", known_hosts.display()))
            .args([
                "-o",
                "GlobalKnownHostsFile=/dev/null",
                "-o",
                "StrictHostKeyChecking=yes",
                "-o",
                "BatchMode=yes",
                "-o",
                "IdentitiesOnly=yes",
            ])
            .arg(format!("root@{}", hosts.address(3)))
            .arg("true")
            .output()
            .expect("ssh runs")
    };
    let pinned = direct(&hosts.known_hosts());
    assert!(pinned.status.success(), "pinned login: {}", text(&pinned));
    let empty = hosts.dir().join("empty_known_hosts");
    std::fs::write(&empty, "").expect("empty known_hosts");
    let unknown = direct(&empty);
    assert!(
        !unknown.status.success()
            && String::from_utf8_lossy(&unknown.stderr).contains("Host key verification failed"),
        "a host key missing from known_hosts must be refused: {}",
        text(&unknown)
    );
    let config = std::fs::read_to_string(hosts.ssh_config()).expect("ssh_config");
    assert!(config.contains("StrictHostKeyChecking yes"), "{config}");

    // h1 reaches h2's sshd; a DROP rule in h2's own iptables cuts it off (and counts
    // the packets it dropped); deleting the rule lets it through again.
    let (h1, h2) = (hosts.address(1), hosts.address(2));
    assert!(
        h1_reaches_polled(&hosts, &h2),
        "h1 cannot reach {h2}:22 before any rule (5 tries)"
    );
    let rule = format!("INPUT -s {h1} -p tcp --dport 22 -m comment --comment fl-test -j DROP");
    let add = hosts.ssh(2, &format!("iptables -w -I {rule}"));
    assert!(add.status.success(), "adding the rule: {}", text(&add));
    assert_eq!(drop_counter(&hosts, "fl-test"), Some(0), "a fresh rule");
    assert!(
        !h1_reaches(&hosts, &h2),
        "h1 still reaches {h2}:22 through the DROP rule"
    );
    let dropped = drop_counter(&hosts, "fl-test").expect("the rule is listed");
    assert!(dropped > 0, "the DROP rule counted no packet");
    // The rule lives in h2 only: h1 still reaches h3.
    assert!(
        h1_reaches_polled(&hosts, &hosts.address(3)),
        "h1 lost h3 too (5 tries)"
    );
    let del = hosts.ssh(2, &format!("iptables -w -D {rule}"));
    assert!(del.status.success(), "deleting the rule: {}", text(&del));
    assert_eq!(drop_counter(&hosts, "fl-test"), None, "the rule is gone");
    assert!(
        h1_reaches_polled(&hosts, &h2),
        "h1 cannot reach {h2}:22 after the rule went (5 tries)"
    );

    // Down leaves no sshd, no namespace and no root veth; a second down is harmless.
    let sshds: Vec<i32> = (1..=3)
        .map(|i| {
            std::fs::read_to_string(hosts.sshd_pidfile(i))
                .ok()
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or_else(|| panic!("h{i}'s sshd pid file"))
        })
        .collect();
    assert!(
        sshds.iter().all(|pid| pid_alive(*pid)),
        "sshds {sshds:?} up"
    );
    let down = hosts.down();
    assert!(down.status.success(), "hosts.sh down: {}", text(&down));
    let alive: Vec<&i32> = sshds.iter().filter(|pid| pid_alive(**pid)).collect();
    assert!(alive.is_empty(), "sshd(s) {alive:?} outlived down");
    let netns = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip");
    let left: Vec<String> = String::from_utf8_lossy(&netns.stdout)
        .lines()
        .filter(|l| l.starts_with(&format!("{}-", hosts.prefix())))
        .map(str::to_string)
        .collect();
    assert!(left.is_empty(), "namespaces left after down: {left:?}");
    let veth = Command::new("ip")
        .args(["link", "show", &format!("{}-r", hosts.prefix())])
        .output()
        .expect("ip");
    assert!(!veth.status.success(), "the root veth outlived down");
    let again = hosts.down();
    assert!(again.status.success(), "a second down: {}", text(&again));
}
