#!/usr/bin/env bash
# Three test hosts for faultline's SSH cluster example, as network namespaces.
#
#   hosts.sh up DIR [PREFIX]    build them; DIR holds every file (keys, configs, logs)
#   hosts.sh down DIR           remove what `up DIR` built (safe to repeat)
#
# Layout (NET defaults to 10.88.0; set FL_SSH_NET=A.B.C to move the /24):
#
#   root namespace ── PREFIX-r (NET.1/24)
#                         │ veth
#   PREFIX-sw:  bridge br0 ── veth ── PREFIX-h1: eth0 NET.11/24, sshd on NET.11:22
#                          ── veth ── PREFIX-h2: eth0 NET.12/24, sshd on NET.12:22
#                          ── veth ── PREFIX-h3: eth0 NET.13/24, sshd on NET.13:22
#
# The bridge lives in a namespace of its own so host-to-host traffic never crosses the
# root namespace's netfilter (Docker's FORWARD policy DROP, br_netfilter). Addresses
# exist only inside the namespaces and on the one root veth. Each sshd has a fresh
# ed25519 host key and accepts only DIR/id_ed25519; DIR/known_hosts pins every host key
# and DIR/ssh_config names the hosts h1..h3 (`ssh -F DIR/ssh_config h1 true`).
#
# All namespaces share the filesystem and the pid namespace, so a binary path is the
# same on every host. Needs root, iproute2 and Debian's openssh-server / -client.
set -euo pipefail

usage() {
  echo "usage: hosts.sh up DIR [PREFIX] | hosts.sh down DIR" >&2
  exit 2
}

die() {
  echo "hosts.sh: $*" >&2
  exit 1
}

# Every namespace of the cluster whose prefix is $1.
namespaces() { echo "$1-h1 $1-h2 $1-h3 $1-sw"; }

ns_exists() { ip netns list | awk -v ns="$1" '$1 == ns { found = 1 } END { exit !found }'; }

down() {
  local dir=$1 prefix pid ns pids=() tries
  [ -f "$dir/prefix" ] || return 0
  prefix=$(cat "$dir/prefix")
  for h in h1 h2 h3; do
    pid=$(cat "$dir/$h/sshd.pid" 2>/dev/null || true)
    # Only a live sshd of ours: its pid file, and /proc says it is sshd.
    if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" = sshd ]; then
      kill "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  for ns in $(namespaces "$prefix"); do
    if ns_exists "$ns"; then
      # What is still inside: SSH sessions and whatever they started (the services
      # faultline ran there). They would keep the namespace alive after `del`.
      ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
      ip netns del "$ns" 2>/dev/null || true
    fi
  done
  ip link del "$prefix-r" 2>/dev/null || true
  # `down` returning means the sshds are gone (a zombie counts as gone).
  for pid in "${pids[@]}"; do
    tries=0
    while [ "$tries" -lt 50 ] && grep -qv '^[ZX]' <(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null); do
      tries=$((tries + 1))
      sleep 0.1
    done
  done
  rm -f "$dir/prefix"
}

up() {
  local dir=$1 prefix=$2 net=${FL_SSH_NET:-10.88.0}
  [[ "$prefix" =~ ^[a-z][a-z0-9-]{0,9}$ ]] ||
    die "PREFIX \`$prefix\` must be 1-10 of a-z, 0-9, - (it names interfaces of at most 15 chars)"
  [[ "$net" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] ||
    die "FL_SSH_NET \`$net\` must be the first three octets of a /24, such as 10.88.0"
  [ "$(id -u)" = 0 ] || die "needs root (it creates network namespaces)"
  for tool in ip ssh ssh-keygen /usr/sbin/sshd; do
    command -v "$tool" >/dev/null || die "$tool is missing (iproute2, openssh-client, openssh-server)"
  done
  ip netns list >/dev/null 2>&1 || die "\`ip netns\` does not work here"
  local used
  used=$(ip -4 route show "$net.0/24"; ip -4 addr show | grep -F " $net." || true)
  [ -z "$used" ] ||
    die "$net.0/24 is already in use here (a cluster left up? \`hosts.sh down DIR\`): $used"
  for ns in $(namespaces "$prefix"); do
    ! ns_exists "$ns" || die "namespace $ns exists already (\`hosts.sh down DIR\`)"
  done
  ! ip link show "$prefix-r" >/dev/null 2>&1 || die "interface $prefix-r exists already"

  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ ! -f "$dir/prefix" ] || die "$dir holds a cluster already (\`hosts.sh down $dir\`)"
  echo "$prefix" >"$dir/prefix"
  # From here on any failure (or an interrupt) removes what was made.
  made_it=0
  trap 'rc=$?; if [ "$made_it" != 1 ]; then echo "hosts.sh: up failed; removing what it made" >&2; down "$dir"; fi; exit "$rc"' EXIT
  trap 'exit 130' INT TERM

  local sw=$prefix-sw
  ip netns add "$sw"
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  # Bridged frames skip iptables in the switch namespace where the kernel lets us say so.
  ip netns exec "$sw" sysctl -qw net.bridge.bridge-nf-call-iptables=0 2>/dev/null || true
  ip link add "$prefix-r" type veth peer name root netns "$sw"
  ip -n "$sw" link set root master br0 up
  ip addr add "$net.1/24" dev "$prefix-r"
  ip link set "$prefix-r" up

  rm -f "$dir/id_ed25519" "$dir/id_ed25519.pub"
  ssh-keygen -q -t ed25519 -N '' -C "faultline-ssh-cluster" -f "$dir/id_ed25519"
  cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
  : >"$dir/known_hosts"
  : >"$dir/ssh_config"
  # sshd's privilege separation directory.
  mkdir -p /run/sshd

  local i h ns addr
  for i in 1 2 3; do
    h=h$i ns=$prefix-h$i addr=$net.1$i
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$sw" link add "$h" type veth peer name eth0 netns "$ns"
    ip -n "$sw" link set "$h" master br0 up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up

    mkdir -p "$dir/$h"
    rm -f "$dir/$h/ssh_host_ed25519_key" "$dir/$h/ssh_host_ed25519_key.pub"
    ssh-keygen -q -t ed25519 -N '' -C "$h" -f "$dir/$h/ssh_host_ed25519_key"
    cat >"$dir/$h/sshd_config" <<EOF
ListenAddress $addr
Port 22
HostKey $dir/$h/ssh_host_ed25519_key
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
UsePAM no
PidFile $dir/$h/sshd.pid
# Several faultline commands share one multiplexed connection.
MaxSessions 64
MaxStartups 64
EOF
    echo "$addr $(cut -d' ' -f1,2 "$dir/$h/ssh_host_ed25519_key.pub")" >>"$dir/known_hosts"
    cat >>"$dir/ssh_config" <<EOF
Host $h $addr
  HostName $addr
  Port 22
  User root
  IdentityFile $dir/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $dir/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 2

EOF
    ip netns exec "$ns" /usr/sbin/sshd -f "$dir/$h/sshd_config" -E "$dir/$h/sshd.log" ||
      die "sshd of $h did not start: $(tail -n 5 "$dir/$h/sshd.log" 2>/dev/null)"
  done

  # Every sshd must answer a key login within ten seconds.
  for i in 1 2 3; do
    h=h$i
    local tries=0
    until ssh -F "$dir/ssh_config" "$h" true 2>"$dir/$h/ssh-probe.err"; do
      tries=$((tries + 1))
      if [ "$tries" -ge 40 ]; then
        die "$h ($net.1$i) did not accept an SSH login within 10 s: $(tail -n 3 "$dir/$h/ssh-probe.err"); sshd log: $(tail -n 3 "$dir/$h/sshd.log" 2>/dev/null)"
      fi
      sleep 0.25
    done
    rm -f "$dir/$h/ssh-probe.err"
  done
  made_it=1
  for i in 1 2 3; do
    echo "h$i $net.1$i $(ssh-keygen -l -f "$dir/h$i/ssh_host_ed25519_key.pub" | cut -d' ' -f2)"
  done
}

[ $# -ge 2 ] || usage
case $1 in
  up)
    [ $# -le 3 ] || usage
    up "$2" "${3:-fl18}"
    ;;
  down)
    [ $# -eq 2 ] || usage
    down "$2"
    ;;
  *) usage ;;
esac
