#!/usr/bin/env python3
"""The PostgreSQL example's helper: a private server, its health check, a list-append workload.

Needs psycopg2 (Debian: python3-psycopg2, for /usr/bin/python3) and the PostgreSQL
server binaries (Debian: postgresql). Subcommands:

  check     exit 0 when psycopg2 imports and initdb / postgres are found, else say
            what is missing (the run spec's `before` step)
  node      initdb a throwaway cluster and run postgres on 127.0.0.1:PORT until
            SIGTERM / SIGINT; then stop it and delete its data directory
  ready     exit 0 once the server answers SELECT 1
  client    the workload: N threads of random list-append transactions at one
            isolation level, recorded as faultline JSONL history (one line per txn)
"""

import argparse
import glob
import itertools
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

# The superuser initdb creates and every client logs in as (trust auth, loopback only).
DB_USER = "faultline"
DB_NAME = "postgres"
ISOLATION = {
    "read-committed": "READ COMMITTED",
    "repeatable-read": "REPEATABLE READ",
    "serializable": "SERIALIZABLE",
}
# The SQLSTATEs of a transaction the server aborted: it did not commit, and the client
# may retry it (as a new transaction with fresh values).
RETRYABLE = {"40001": "serialization failure", "40P01": "deadlock detected"}
# How long the node waits for postgres to stop after a fast shutdown request before
# asking for an immediate one; faultline SIGKILLs the service 2 s after its SIGTERM.
FAST_STOP_S = 1.2


def log(msg):
    print(f"pg_append: {msg}", file=sys.stderr, flush=True)


# --- locating PostgreSQL ---------------------------------------------------------------


def version_key(path):
    """/usr/lib/postgresql/15/bin → (15,): the newest installed major version first."""
    return tuple(int(n) for n in re.findall(r"\d+", path))


def server_bindir():
    """The directory holding initdb and postgres, or None.

    `pg_config --bindir` when it names one with the server in it (Debian's pg_config
    comes with libpq-dev and may be absent), else the newest /usr/lib/postgresql/*/bin,
    else PATH (a source build or another distribution).
    """
    candidates = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=5, check=False
            )
            candidates.append(out.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version_key, reverse=True)
    for on_path in (shutil.which("postgres"), shutil.which("initdb")):
        if on_path:
            candidates.append(os.path.dirname(os.path.realpath(on_path)))
    for d in candidates:
        if d and all(os.access(os.path.join(d, p), os.X_OK) for p in ("initdb", "postgres")):
            return d
    return None


def cmd_check(_args):
    missing = []
    try:
        import psycopg2  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError as e:
        missing.append(
            f"psycopg2 for {sys.executable} ({e}; Debian: apt-get install python3-psycopg2)"
        )
    bindir = server_bindir()
    if bindir is None:
        missing.append(
            "the PostgreSQL server (initdb and postgres not found via pg_config, "
            "/usr/lib/postgresql/*/bin or PATH; Debian: apt-get install postgresql)"
        )
    if os.geteuid() == 0:
        try:
            import pwd  # pylint: disable=import-outside-toplevel

            pwd.getpwnam("postgres")
        except KeyError:
            missing.append("a `postgres` user (PostgreSQL refuses to run as root)")
    if missing:
        for m in missing:
            print(f"missing: {m}", file=sys.stderr)
        return 1
    print(f"ok: {sys.executable} has psycopg2; server binaries in {bindir}")
    return 0


# --- node ------------------------------------------------------------------------------


class Node:
    """One throwaway PostgreSQL: initdb, postgres in the foreground, cleanup on a signal."""

    def __init__(self, args):
        self.args = args
        self.child = None
        self.stopping = False
        self.as_root = os.geteuid() == 0
        # The directory the node made (under the seed's artifacts) and deletes when it
        # stops.
        self.home = None

    def on_signal(self, signum, _frame):
        log(f"got {signal.Signals(signum).name}: stopping postgres")
        self.stopping = True
        if self.child is not None and self.child.poll() is None:
            # SIGINT is PostgreSQL's fast shutdown (and makes initdb clean up and exit).
            self.child.send_signal(signal.SIGINT)

    def popen(self, argv):
        # PostgreSQL refuses to run as root: as root, initdb and postgres run as the
        # `postgres` user the Debian package creates.
        extra = {"user": "postgres", "group": "postgres", "extra_groups": []} if self.as_root else {}
        # stdout → stderr: faultline's service log and landing signals read stderr.
        return subprocess.Popen(argv, stdout=2, stderr=2, **extra)

    def run(self):
        bindir = server_bindir()
        if bindir is None:
            log("no PostgreSQL server binaries found (see `pg_append.py check`)")
            return 69
        os.makedirs(self.args.artifacts, exist_ok=True)
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, self.on_signal)
        self.home = os.path.join(self.args.artifacts, "pg")
        shutil.rmtree(self.home, ignore_errors=True)
        os.makedirs(self.home)
        if self.as_root:
            # initdb and postgres run as the postgres user: the directory is theirs.
            shutil.chown(self.home, "postgres", "postgres")
        data = os.path.join(self.home, "data")
        note = os.path.join(self.args.artifacts, "pg-node.json")
        try:
            return self.serve(bindir, data, note)
        finally:
            if self.child is not None and self.child.poll() is None:
                # Leaving by an exception: never leave a server behind.
                self.child.kill()
                self.child.wait()
            if self.home is not None:
                shutil.rmtree(self.home, ignore_errors=True)
                log(f"removed {self.home}")

    def serve(self, bindir, data, note):
        if self.stopping:
            return 0
        started = time.monotonic()
        # Trust auth on loopback only (listen_addresses below is 127.0.0.1): a
        # throwaway server reachable from this machine alone. --no-sync: the data
        # directory is deleted when the node stops, so nothing needs to be durable.
        self.child = self.popen(
            [
                os.path.join(bindir, "initdb"),
                "-D", data,
                "-U", DB_USER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            ]
        )  # fmt: skip
        rc = self.wait_child()
        if self.stopping:
            return 0
        if rc != 0:
            log(f"initdb exited {rc}")
            return 1
        log(f"initdb took {time.monotonic() - started:.1f} s")
        # The Unix socket goes into the data directory (never /var/run/postgresql,
        # which a package may not have made); a path longer than the 107 bytes a
        # socket address holds gets none — every client here connects over TCP.
        sockets = data if len(os.path.join(data, ".s.PGSQL.65535")) < 100 else ""
        argv = [
            os.path.join(bindir, "postgres"),
            "-D", data,
            "-p", str(self.args.port),
            "-k", sockets,
            "-c", "listen_addresses=127.0.0.1",
            # Throwaway data: no fsync, no waiting for the WAL flush at commit. Neither
            # changes what a transaction sees, only what survives a crash.
            "-c", "fsync=off",
            "-c", "synchronous_commit=off",
            "-c", "full_page_writes=off",
            "-c", "shared_buffers=32MB",
            # Two txns appending to two keys in opposite orders deadlock; find that in
            # 20 ms instead of the default 1 s, so a deadlock costs a retry, not a stall.
            "-c", "deadlock_timeout=20ms",
            # Serialization failures are the point of P2 and P3: log them without the
            # statement text (thousands of lines otherwise).
            "-c", "log_min_error_statement=fatal",
        ]  # fmt: skip
        self.child = self.popen(argv)
        with open(note + ".tmp", "w", encoding="utf-8") as f:
            json.dump(
                {
                    "data_dir": data,
                    "node_dir": self.home,
                    "postmaster_pid": self.child.pid,
                    "node_pid": os.getpid(),
                    "port": self.args.port,
                    "bindir": bindir,
                    "user": "postgres" if self.as_root else None,
                },
                f,
            )
        os.replace(note + ".tmp", note)
        log(f"postgres pid {self.child.pid} on 127.0.0.1:{self.args.port}, data in {data}")
        rc = self.wait_child()
        if not self.stopping:
            log(f"postgres exited {rc} on its own")
            return 1
        return 0

    def wait_child(self):
        """The child's exit code. Once a signal asked the node to stop, the child gets
        FAST_STOP_S for a fast shutdown, then an immediate one (SIGQUIT), then SIGKILL:
        the node must be done, data directory removed, inside faultline's 2 s grace."""
        child = self.child
        escalation = [
            (0.0, signal.SIGINT),
            (FAST_STOP_S, signal.SIGQUIT),
            (FAST_STOP_S + 0.4, signal.SIGKILL),
        ]
        asked = None
        while True:
            try:
                return child.wait(0.05)
            except subprocess.TimeoutExpired:
                pass
            if not self.stopping:
                continue
            asked = asked or time.monotonic()
            if escalation and time.monotonic() - asked >= escalation[0][0]:
                sig = escalation.pop(0)[1]
                if sig != signal.SIGINT:
                    log(f"{os.path.basename(child.args[0])} still running: {sig.name}")
                child.send_signal(sig)


def cmd_node(args):
    return Node(args).run()


# --- ready -----------------------------------------------------------------------------


def connect(port, timeout_s=5):
    import psycopg2  # pylint: disable=import-outside-toplevel

    conn = psycopg2.connect(
        host="127.0.0.1",
        port=port,
        user=DB_USER,
        dbname=DB_NAME,
        connect_timeout=timeout_s,
        # A statement stuck for 5 s is an unknown outcome, not a hung workload.
        options="-c statement_timeout=5000",
    )
    conn.autocommit = True
    return conn


def cmd_ready(args):
    import psycopg2  # pylint: disable=import-outside-toplevel

    try:
        conn = connect(args.port, timeout_s=2)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT 1")
                one = cur.fetchone()
        finally:
            conn.close()
    except psycopg2.Error as e:
        print(f"not yet: {type(e).__name__}: {str(e).strip()}", file=sys.stderr)
        return 1
    if one != (1,):
        print(f"not yet: SELECT 1 returned {one}", file=sys.stderr)
        return 1
    print("ok")
    return 0


# --- client ----------------------------------------------------------------------------


def fault_epoch(path):
    """The epoch faultline wrote while a fault is active, else None."""
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


class Keys:
    """A sliding window of `window` keys: each takes `per_key` appends, then a fresh key
    replaces it, so lists stay short and every key is contended while it lives."""

    def __init__(self, window, per_key):
        self.lock = threading.Lock()
        self.per_key = per_key
        self.next_key = window
        self.live = list(range(window))
        self.appends = dict.fromkeys(self.live, 0)

    def pick(self, rng, n, appending):
        """`n` distinct live keys; `appending[i]` marks the ones the txn appends to."""
        with self.lock:
            keys = rng.sample(self.live, n)
            for k, a in zip(keys, appending):
                if not a:
                    continue
                self.appends[k] += 1
                if self.appends[k] >= self.per_key:
                    slot = self.live.index(k)
                    self.live[slot] = self.next_key
                    self.appends[self.next_key] = 0
                    self.next_key += 1
            return keys


class Shared:
    """What the client threads share: ids, values, the history file."""

    def __init__(self, args, out):
        self.args = args
        self.out = out
        self.lock = threading.Lock()
        self.op_ids = itertools.count(1)
        # One counter for every appended value: unique per key across the whole
        # history (failed and unknown txns included), as list-append requires.
        self.values = itertools.count(1)
        self.processes = itertools.count(args.threads)
        self.written = 0
        self.start = time.monotonic_ns()

    def now(self):
        return time.monotonic_ns() - self.start

    def next(self, counter):
        with self.lock:
            return next(counter)

    def record(self, rec):
        line = json.dumps(rec) + "\n"
        with self.lock:
            self.out.write(line)
            self.written += 1


def run_txn(conn, level, mops, pause_ms, rng):
    """Run one transaction; the micro-ops as completed (reads filled in)."""
    done = []
    with conn.cursor() as cur:
        cur.execute(f"BEGIN ISOLATION LEVEL {level}")
        for i, (f, k, v) in enumerate(mops):
            if i > 0 and pause_ms > 0:
                # Up to a couple of milliseconds between statements: other txns
                # commit in between (read skew, overlapping write skew). The
                # anomalies come without it too; it halves the txn rate and so
                # keeps the example light on a shared machine (README: Pauses).
                time.sleep(rng.uniform(0, pause_ms) / 1000.0)
            if f == "r":
                cur.execute("SELECT v FROM lists WHERE k = %s", (k,))
                row = cur.fetchone()
                got = [int(x) for x in row[0].split()] if row else []
                done.append(["r", k, got])
            else:
                cur.execute(
                    "INSERT INTO lists (k, v) VALUES (%s, %s) "
                    "ON CONFLICT (k) DO UPDATE SET v = lists.v || ' ' || EXCLUDED.v",
                    (k, str(v)),
                )
                done.append(["append", k, v])
        cur.execute("COMMIT")
    return done


def client_thread(shared, index, end):
    import psycopg2  # pylint: disable=import-outside-toplevel

    args = shared.args
    level = ISOLATION[args.isolation]
    rng = random.Random(args.seed * 1000 + index)
    node = f"127.0.0.1:{args.port}"
    process = index
    conn = None
    retry = None  # (keys, shape) of an aborted txn to run again with fresh values
    while time.monotonic() < end:
        if retry is None:
            n = rng.randint(1, args.max_mops)
            appending = [rng.random() >= args.read_share for _ in range(n)]
            keys = args.keys.pick(rng, n, appending)
            shape = list(zip(keys, appending))
        else:
            shape = retry
            retry = None
        mops = [
            ["append", k, shared.next(shared.values)] if a else ["r", k, None] for k, a in shape
        ]
        op_id = shared.next(shared.op_ids)
        epoch = fault_epoch(args.fault_epoch_file)
        invoke = shared.now()
        output, error, unknown = None, None, False
        try:
            if conn is None:
                conn = connect(args.port)
            output = run_txn(conn, level, mops, args.pause_ms, rng)
        except psycopg2.Error as e:
            code = getattr(e, "pgcode", None)
            if code in RETRYABLE:
                # The server aborted it: it did not commit. Run the same shape again
                # as a new transaction (new op id, fresh values).
                first = (str(e).strip().splitlines() or [RETRYABLE[code]])[0]
                error = f"{code}: {first}"
                retry = shape
                try:
                    conn.cursor().execute("ROLLBACK")
                except psycopg2.Error:
                    conn.close()
                    conn = None
            else:
                # Lost connection, timeout, anything else: the outcome is unknown, and
                # this process is never used again (the txn may still commit).
                unknown = True
                log(f"process {process}: op {op_id} unknown: {type(e).__name__} {code}: {e}")
                if conn is not None:
                    conn.close()
                conn = None
        complete = None if unknown else shared.now()
        shared.record(
            {
                "op_id": op_id,
                "process": process,
                "invoke_ts": invoke,
                "complete_ts": complete,
                "op_type": "txn",
                "key": None,
                "input": mops,
                "output": output,
                "error": error,
                "timeout": unknown,
                "node": node,
                "fault_epoch": epoch,
            }
        )
        if unknown:
            process = shared.next(shared.processes)
    if conn is not None:
        conn.close()


def cmd_client(args):
    import psycopg2  # pylint: disable=import-outside-toplevel

    try:
        conn = connect(args.port)
        with conn.cursor() as cur:
            # A fresh table: keys and values restart at 1 with every client run.
            cur.execute("DROP TABLE IF EXISTS lists")
            cur.execute("CREATE TABLE lists (k integer PRIMARY KEY, v text NOT NULL)")
        conn.close()
    except psycopg2.Error as e:
        log(f"cannot create the table: {e}")
        return 1
    args.keys = Keys(args.key_window, args.appends_per_key)
    end = time.monotonic() + args.duration_ms / 1000.0
    with open(args.out, "w", encoding="utf-8") as out:
        shared = Shared(args, out)
        threads = [
            threading.Thread(target=client_thread, args=(shared, i, end), daemon=True)
            for i in range(args.threads)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # The trailer lets the checker tell a truncated history from a short one.
        out.write(json.dumps({"ops_total": shared.written}) + "\n")
    log(f"{shared.written} txns at {args.isolation} by {args.threads} threads")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("check", help="are psycopg2 and the server binaries here?")

    node = sub.add_parser("node", help="run a throwaway PostgreSQL until signalled")
    node.add_argument("--port", type=int, required=True)
    node.add_argument("--artifacts", required=True, help="where the node's note goes")

    ready = sub.add_parser("ready", help="exit 0 once SELECT 1 answers")
    ready.add_argument("--port", type=int, required=True)

    client = sub.add_parser("client", help="the list-append workload")
    client.add_argument("--port", type=int, required=True)
    client.add_argument("--isolation", choices=sorted(ISOLATION), required=True)
    client.add_argument("--seed", type=int, required=True)
    client.add_argument("--duration-ms", type=int, required=True)
    client.add_argument("--out", required=True)
    client.add_argument("--fault-epoch-file")
    client.add_argument("--threads", type=int, default=8)
    client.add_argument("--max-mops", type=int, default=4, help="micro-ops per txn, 1..N")
    client.add_argument("--read-share", type=float, default=0.5)
    client.add_argument("--key-window", type=int, default=8, help="keys live at once")
    client.add_argument("--appends-per-key", type=int, default=16)
    client.add_argument("--pause-ms", type=float, default=2.0, help="max pause between statements")

    args = parser.parse_args()
    if args.command == "client" and not 1 <= args.max_mops <= args.key_window:
        parser.error("--max-mops must be between 1 and --key-window")
    return {"check": cmd_check, "node": cmd_node, "ready": cmd_ready, "client": cmd_client}[
        args.command
    ](args)


if __name__ == "__main__":
    sys.exit(main())
