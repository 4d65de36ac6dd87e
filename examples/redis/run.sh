#!/usr/bin/env bash
# Runs the Redis example: makes a network namespace of its own (loopback only), runs
# `faultline run examples/redis/plan.md` inside it — services, client and partition
# rules never touch the host's network — and deletes the namespace afterwards.
#
#   sudo examples/redis/run.sh [OUT] [more faultline run options…]
#
# OUT is the session root (default: $TMPDIR/faultline-redis). The faultline binary is
# $FAULTLINE, else target/debug/faultline (built by `cargo build`). Needs root,
# iproute2, iptables, python3, redis-server and redis-sentinel. Exits with faultline's
# exit code: 1 (FAIL) is the expected outcome, R2 finding the writes Redis loses.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
faultline=${FAULTLINE:-$here/../../target/debug/faultline}
out=${1:-${TMPDIR:-/tmp}/faultline-redis}
shift || true

if [ ! -x "$faultline" ]; then
  echo "run.sh: no faultline binary at $faultline (run \`cargo build\` or set FAULTLINE)" >&2
  exit 66
fi
ns=faultline-redis-$$
ip netns add "$ns"
trap 'ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true; ip netns del "$ns"' EXIT
ip -n "$ns" link set lo up

rc=0
ip netns exec "$ns" "$faultline" run "$here/plan.md" --sut "$here" --out "$out" \
  --headless --yes --approve-privileged "$@" || rc=$?
exit "$rc"
