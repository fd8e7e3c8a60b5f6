#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job on a small built-in example: build cuzk, start cuzk-daemon on a free loopback
# port with its built-in example key (--example: the proving key of the chain circuit,
# tests/data/circuits/chain), prove a batch
# with cuzk-bench (mixed priorities), check every proof against the circuit's verification
# key, print the per-proof timings and the timing table, stop the daemon. Exits non-zero when
# any job fails or any proof does not verify.
#   COUNT=N CONCURRENCY=N   batch size and concurrent clients (default 20 and 4)
#   BUILD_DIR=DIR           build directory (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-20}
CONCURRENCY=${CONCURRENCY:-4}
C=tests/data/circuits/chain
B=${BUILD_DIR:-build}

bash scripts/deps.sh
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$B" -j"$(nproc)" --target cuzk-daemon cuzk-bench

batch=(batch -c "$COUNT" -j "$CONCURRENCY" --witness "$C/witness.wtns"
       --verify-with "$C/verification_key.json" --priority mixed)
. bench/lib-daemon.sh
LOG=$B/demo-daemon.log
: >"$LOG"
trap 'cuzk_daemon_stop || true' EXIT
if ! cuzk_daemon_start "$B" "$LOG" --example; then
    echo "demo: cuzk-daemon did not start (log: $LOG)" >&2
    exit 1
fi
echo "demo: cuzk-daemon (pid $CUZK_DAEMON_PID) on $CUZK_ADDR, log in $LOG"
rc=0
"$B/cuzk-bench" "${batch[@]}" --addr "$CUZK_ADDR" --key example || rc=$?
stop_rc=0
cuzk_daemon_stop || stop_rc=$?
trap - EXIT
if [ $stop_rc -ne 0 ]; then
    echo "demo: cuzk-daemon exited with status $stop_rc after SIGTERM (log: $LOG)" >&2
    [ $rc -ne 0 ] || rc=1
fi
if [ $rc -eq 0 ]; then
    echo "demo: OK: $COUNT jobs proved by cuzk-daemon, every proof verified"
else
    echo "demo: FAILED (cuzk-bench exit $rc; daemon log: $LOG)" >&2
fi
exit $rc
