#!/usr/bin/env python3
"""The Redis example's helper: starts a node, checks the cluster, drives the workload.

Standard library only; it speaks RESP over a raw socket. Subcommands:

  node      write a node's config into the run's artifacts and exec redis-server /
            redis-sentinel on it (same pid, so faultline's signals reach Redis itself)
  ready     exit 0 once the primary streams to both replicas and every Sentinel
            knows the primary, both replicas and the two other Sentinels
  settled   exit 0 once every Sentinel names the same primary and every other node
            is its replica, linked and caught up (the quiesce condition)
  client    the workload: unique-key SETs against one node, recorded as faultline
            JSONL history
  dump      write the current primary's keys (asked of the Sentinels) as final.json
"""

import argparse
import json
import os
import socket
import sys
import time

MASTER_NAME = "mymaster"
# One op waits at most this long for its reply before it is recorded as timed out.
OP_TIMEOUT_S = 1.0
# Control commands (ready / settled / dump) give up on a node after this long.
CONTROL_TIMEOUT_S = 2.0


class RedisError(Exception):
    """An error reply (`-ERR …`, `-READONLY …`) from the server."""


class Conn:
    """One RESP connection."""

    def __init__(self, addr, timeout, source=None):
        host, port = split_addr(addr)
        self.sock = socket.create_connection(
            (host, port), timeout=timeout, source_address=(source, 0) if source else None
        )
        self.sock.settimeout(timeout)
        self.reader = self.sock.makefile("rb")

    def close(self):
        try:
            self.reader.close()
        finally:
            self.sock.close()

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.sendall(b"".join(out))
        return self.reply()

    def line(self):
        line = self.reader.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("connection closed mid-reply")
        return line[:-2]

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RedisError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            if size < 0:
                return None
            data = self.reader.read(size + 2)
            if len(data) != size + 2:
                raise ConnectionError("connection closed mid-reply")
            return data[:-2].decode(errors="replace")
        if kind == b"*":
            size = int(rest)
            return None if size < 0 else [self.reply() for _ in range(size)]
        raise ConnectionError(f"not a RESP reply: {line[:40]!r}")


def split_addr(addr):
    host, _, port = addr.rpartition(":")
    return host, int(port)


def once(addr, *args, timeout=CONTROL_TIMEOUT_S):
    """One command on a fresh connection."""
    conn = Conn(addr, timeout)
    try:
        return conn.call(*args)
    finally:
        conn.close()


def info(addr, section):
    """`INFO section` as a dict of its `field:value` lines."""
    text = once(addr, "INFO", section) or ""
    return dict(
        line.split(":", 1) for line in text.splitlines() if ":" in line and not line.startswith("#")
    )


def pairs(flat):
    """A flat [field, value, field, value …] reply as a dict."""
    return dict(zip(flat[0::2], flat[1::2]))


def addrs(text):
    return [a for a in text.split(",") if a]


# --- node ----------------------------------------------------------------------------


def await_ping(addr, deadline_s):
    """Waits until `addr` answers PING; exits non-zero after `deadline_s`."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            if once(addr, "PING", timeout=0.5) == "PONG":
                return
        except (OSError, RedisError):
            pass
        if time.monotonic() >= end:
            sys.exit(f"{addr} did not answer PING within {deadline_s:.0f} s")
        time.sleep(0.05)


def cmd_node(args):
    data = os.path.join(args.dir, args.name)
    os.makedirs(data, exist_ok=True)
    host, port = split_addr(args.addr)
    lines = [
        f"bind {host}",
        # Outgoing links (replica → primary, Sentinel → anyone) leave from the node's
        # own address, so a partition can be written as rules on addresses.
        f"bind-source-addr {host}",
        f"port {port}",
        "protected-mode no",
        "daemonize no",
        'logfile ""',
        f"dir {data}",
    ]
    if args.role == "sentinel":
        primary_host, primary_port = split_addr(args.primary)
        lines += [
            f"sentinel announce-ip {host}",
            f"sentinel monitor {MASTER_NAME} {primary_host} {primary_port} 2",
            # Short timers so a partition of a few seconds ends in a failover.
            f"sentinel down-after-milliseconds {MASTER_NAME} {args.down_after_ms}",
            f"sentinel failover-timeout {MASTER_NAME} {args.failover_timeout_ms}",
            f"sentinel parallel-syncs {MASTER_NAME} 2",
        ]
        # Named up front: otherwise a Sentinel finds a replica only in the primary's
        # INFO, polled every 10 s, and the cluster is ready 10 s later.
        lines += [
            f"sentinel known-replica {MASTER_NAME} {h} {p}"
            for h, p in map(split_addr, addrs(args.replicas or ""))
        ]
        program = "redis-sentinel"
        # A Sentinel that starts before its primary listens marks it down a second
        # later; with the other Sentinels doing the same that could start a failover
        # before the workload does. So it starts only once the primary answers.
        await_ping(args.primary, deadline_s=10.0)
    else:
        # No snapshots, no AOF, no wait before streaming a snapshot to a replica, and
        # no wait for lagging replicas when faultline stops the node (SIGTERM).
        lines += ['save ""', "appendonly no", "repl-diskless-sync-delay 0", "shutdown-timeout 0"]
        if args.role == "replica":
            primary_host, primary_port = split_addr(args.primary)
            lines.append(f"replicaof {primary_host} {primary_port}")
        program = "redis-server"
    conf = os.path.join(args.dir, f"{args.name}.conf")
    with open(conf, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    # Redis logs to stdout when logfile is ""; faultline's log signals read a
    # service's stderr log, so both streams go there.
    sys.stdout.flush()
    os.dup2(2, 1)
    os.execvp(program, [program, conf])


# --- ready / settled -------------------------------------------------------------------


def cluster_ready(args):
    """Why the cluster is not ready yet, or None."""
    repl = info(args.primary, "replication")
    online = [k for k, v in repl.items() if k.startswith("slave") and "state=online" in v]
    if repl.get("role") != "master" or len(online) < args.replicas:
        return f"{args.primary}: role {repl.get('role')}, {len(online)} replica(s) online"
    for sentinel in addrs(args.sentinels):
        master = pairs(once(sentinel, "SENTINEL", "MASTER", MASTER_NAME))
        want = {
            "flags": "master",
            "num-slaves": str(args.replicas),
            "num-other-sentinels": str(len(addrs(args.sentinels)) - 1),
        }
        seen = {k: master.get(k) for k in want}
        if seen != want:
            return f"sentinel {sentinel}: {seen}"
    return None


def primary_by_sentinels(sentinels):
    """The primary every Sentinel names, or an error naming the disagreement."""
    named = {}
    for sentinel in addrs(sentinels):
        host, port = once(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
        named[sentinel] = f"{host}:{port}"
    if len(set(named.values())) != 1:
        raise RuntimeError(f"the Sentinels disagree on the primary: {named}")
    return next(iter(named.values()))


def cluster_settled(args):
    """Why the cluster has not settled yet, or None."""
    primary = primary_by_sentinels(args.sentinels)
    repl = info(primary, "replication")
    if repl.get("role") != "master":
        return f"{primary}, named primary by the Sentinels, reports role {repl.get('role')}"
    offset = repl.get("master_repl_offset")
    host, port = split_addr(primary)
    for node in addrs(args.nodes):
        if node == primary:
            continue
        r = info(node, "replication")
        got = (r.get("role"), r.get("master_host"), r.get("master_port"))
        if got != ("slave", host, str(port)) or r.get("master_link_status") != "up":
            return f"{node}: role {got}, link {r.get('master_link_status')}"
        if r.get("slave_repl_offset") != offset:
            return f"{node}: offset {r.get('slave_repl_offset')} behind {primary}'s {offset}"
    return None


def check(condition, args):
    try:
        why = condition(args)
    except (OSError, RedisError, RuntimeError, ValueError, TypeError) as e:
        why = f"{type(e).__name__}: {e}"
    if why:
        print(f"not yet: {why}", file=sys.stderr)
        return 1
    print("ok")
    return 0


# --- client ----------------------------------------------------------------------------


def fault_epoch(path):
    """The epoch faultline wrote while a fault is active, else None."""
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def cmd_client(args):
    start = time.monotonic_ns()
    interval = 1.0 / args.rate
    end = time.monotonic() + args.duration_ms / 1000.0
    conn = None
    # A process whose op's effect is unknown is never reused: that op may still land.
    process = 0
    n = 0
    with open(args.out, "w", encoding="utf-8") as out:
        while time.monotonic() < end:
            began = time.monotonic()
            key, value = f"k{args.seed}-{n}", f"v{n}"
            epoch = fault_epoch(args.fault_epoch_file)
            invoke = time.monotonic_ns() - start
            output, error, unknown = None, None, False
            sent = False
            try:
                if conn is None:
                    conn = Conn(args.target, OP_TIMEOUT_S, args.source)
                sent = True
                output = conn.call("SET", key, value)
            except RedisError as e:
                # A refusal such as READONLY: the write was not applied.
                error = str(e)
            except OSError as e:
                if sent:
                    # Sent, never answered (timeout, reset): it may have been applied.
                    unknown = True
                else:
                    error = f"connect: {type(e).__name__}: {e}"
                if conn is not None:
                    conn.close()
                conn = None
            complete = None if unknown else time.monotonic_ns() - start
            record = {
                "op_id": f"{args.seed}-{n}",
                "process": process,
                "invoke_ts": invoke,
                "complete_ts": complete,
                "op_type": "write",
                "key": key,
                "input": value,
                "output": output,
                "error": error,
                "timeout": unknown,
                "node": args.target,
                "fault_epoch": epoch,
            }
            out.write(json.dumps(record) + "\n")
            out.flush()
            process += 1 if unknown else 0
            n += 1
            rest = interval - (time.monotonic() - began)
            if rest > 0:
                time.sleep(rest)
        # The trailer lets the checker tell a truncated history from a short one.
        out.write(json.dumps({"ops_total": n}) + "\n")
    if conn is not None:
        conn.close()
    return 0


# --- dump ------------------------------------------------------------------------------


def cmd_dump(args):
    primary = primary_by_sentinels(args.sentinels)
    conn = Conn(primary, CONTROL_TIMEOUT_S)
    try:
        if conn.call("ROLE")[0] != "master":
            raise RuntimeError(f"{primary}, named primary by the Sentinels, is not a master")
        keys, cursor = [], "0"
        while True:
            cursor, batch = conn.call("SCAN", cursor, "COUNT", 1000)
            keys += batch
            if cursor == "0":
                break
        state = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            state.update(zip(chunk, conn.call("MGET", *chunk)))
    finally:
        conn.close()
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({k: v for k, v in state.items() if v is not None}, f, sort_keys=True)
    os.replace(tmp, args.out)
    print(f"{len(state)} keys from {primary} into {args.out}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    node = sub.add_parser("node", help="write a node's config and exec Redis on it")
    node.add_argument("role", choices=["primary", "replica", "sentinel"])
    node.add_argument("--name", required=True)
    node.add_argument("--addr", required=True, help="HOST:PORT the node listens on")
    node.add_argument("--dir", required=True, help="where configs and data go")
    node.add_argument("--primary", help="HOST:PORT of the primary (replica, sentinel)")
    node.add_argument("--replicas", help="HOST:PORT,… of the replicas (sentinel)")
    node.add_argument("--down-after-ms", type=int, default=1000, help="sentinel")
    node.add_argument("--failover-timeout-ms", type=int, default=2000, help="sentinel")

    ready = sub.add_parser("ready", help="exit 0 once replication and Sentinels are up")
    ready.add_argument("--primary", required=True)
    ready.add_argument("--replicas", type=int, required=True)
    ready.add_argument("--sentinels", required=True, help="HOST:PORT,…")

    settled = sub.add_parser("settled", help="exit 0 once one primary leads every node")
    settled.add_argument("--sentinels", required=True)
    settled.add_argument("--nodes", required=True, help="every data node, HOST:PORT,…")

    client = sub.add_parser("client", help="the workload")
    client.add_argument("--target", required=True)
    client.add_argument("--source", help="local address the client connects from")
    client.add_argument("--seed", type=int, required=True)
    client.add_argument("--duration-ms", type=int, required=True)
    client.add_argument("--rate", type=float, default=100.0)
    client.add_argument("--out", required=True)
    client.add_argument("--fault-epoch-file", required=True)

    dump = sub.add_parser("dump", help="the primary's keys as final.json")
    dump.add_argument("--sentinels", required=True)
    dump.add_argument("--out", required=True)

    args = parser.parse_args()
    if args.command == "node":
        if args.role != "primary" and not args.primary:
            parser.error(f"node {args.role} needs --primary")
        return cmd_node(args)
    if args.command == "ready":
        return check(cluster_ready, args)
    if args.command == "settled":
        return check(cluster_settled, args)
    if args.command == "client":
        return cmd_client(args)
    try:
        return cmd_dump(args)
    except (OSError, RedisError, RuntimeError, ValueError, TypeError) as e:
        print(f"dump: {type(e).__name__}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
