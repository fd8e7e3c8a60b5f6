#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cuzk-bench end to end on the chain fixture (tests/data/circuits/chain).
#   bench_client.sh inprocess   the library in the client's process, no daemon: through the
#                               engine (when src/engine exists) and directly (--direct)
#   bench_client.sh daemon      a cuzk-daemon on a free loopback port
# Checks: COUNT proofs, each checked against the fixture's verification key with 0 failures;
# the JSON report has the latency and throughput fields; a wrong verification key is caught
# (every proof counted as a failure, exit 1); clear errors for an unreachable daemon, an
# unknown key and a missing witness; status and metrics answer.
set -uo pipefail
MODE=${1:?usage: bench_client.sh inprocess|daemon}
BIN="${CUZK_BIN:?}"; SRC="${CUZK_SRC:?}"; DATA="${CUZK_TEST_DATA:?}/circuits"
C="$DATA/chain"; VK="$C/verification_key.json"; WRONG_VK="$DATA/multiplier/verification_key.json"
BENCH="$BIN/cuzk-bench"
T="$(mktemp -d)"
. "$SRC/bench/lib-daemon.sh"
cleanup() { cuzk_daemon_stop >/dev/null 2>&1; rm -rf "$T"; }
trap cleanup EXIT

pass=0; failed=0
ok()  { pass=$((pass + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
finish() { echo "$pass passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

# JSON checks with node (a dependency of the interop tests) or python3.
# json_check FILE EXPR: EXPR is a JavaScript expression over `r`, true when it holds.
json_check() {
    local f=$1 expr=$2
    if command -v node >/dev/null 2>&1; then
        node -e 'const fs=require("fs"); const r=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));
                 process.exit((function(){return eval(process.argv[2]);})() ? 0 : 1)' "$f" "$expr"
    else
        echo "SKIP: node is needed for the JSON checks (run scripts/deps.sh)"; exit 77
    fi
}
# expect_json FILE EXPR: records the check
expect_json() {
    if json_check "$1" "$2"; then ok; else bad "$(basename "$1"): $2 does not hold: $(head -c 600 "$1")"; fi
}

# The checks every mode passes: a batch of 10 jobs from 3 clients, every proof checked.
check_batch() {
    local label=$1; shift
    "$BENCH" batch -c 10 -j 3 --witness "$C/witness.wtns" --verify-with "$VK" --json "$@" \
        >"$T/$label.json" 2>"$T/$label.err"
    local rc=$?
    if [ $rc -eq 0 ]; then ok; else bad "$label: batch exit $rc: $(head -c 600 "$T/$label.err")"; return; fi
    expect_json "$T/$label.json" 'r.jobs === 10 && r.done === 10 && r.failed === 0'
    expect_json "$T/$label.json" 'r.proofs === 10 && r.verified === 10 && r.verify_failures === 0'
    expect_json "$T/$label.json" '["p50","p95","p99","mean","max"].every(k => typeof r.latency_ms[k] === "number" && r.latency_ms[k] > 0)'
    expect_json "$T/$label.json" 'r.latency_ms.p50 <= r.latency_ms.p95 && r.latency_ms.p95 <= r.latency_ms.p99 && r.latency_ms.p99 <= r.latency_ms.max'
    expect_json "$T/$label.json" 'r.throughput.proofs_per_min > 0 && r.throughput.s_per_proof > 0'
    expect_json "$T/$label.json" '["queue","srs","load","gpu","prove","finalize","verify","total"].every(k => r.stages_ms[k].n === 10)'
    expect_json "$T/$label.json" 'r.stages_ms.total.mean > 0 && r.job_results.length === 10 && r.job_results.every(j => j.state === "done" && j.proofs === 1)'

    # the human report: one timings line per job, the summary and the stage table
    "$BENCH" batch -c 4 -j 2 --witness "$C/witness.wtns" --verify-with "$VK" "$@" >"$T/$label.txt" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then ok; else bad "$label: human batch exit $rc: $(head -c 600 "$T/$label.txt")"; fi
    [ "$(grep -cE 'timings: total=[0-9.]+ ms \(queue=[0-9.]+ ms, srs=[0-9.]+ ms, load=[0-9.]+ ms, prove=[0-9.]+ ms, finalize=[0-9.]+ ms' "$T/$label.txt")" -eq 4 ] \
        && ok || bad "$label: expected 4 per-proof timings lines: $(head -c 800 "$T/$label.txt")"
    grep -qE 'throughput [0-9.]+ proofs/min, [0-9.]+ s/proof' "$T/$label.txt" && ok || bad "$label: no throughput line"
    grep -qE 'p50 [0-9.]+ ms, p95 [0-9.]+ ms, p99 [0-9.]+ ms' "$T/$label.txt" && ok || bad "$label: no latency line"
    grep -qE '4 ok, 0 FAILED' "$T/$label.txt" && ok || bad "$label: the check count is not in the report"

    # a verification key of another circuit: every proof must count as a failure, exit 1
    "$BENCH" batch -c 3 -j 2 --witness "$C/witness.wtns" --verify-with "$WRONG_VK" --json "$@" \
        >"$T/$label.wrong.json" 2>"$T/$label.wrong.err"
    rc=$?
    [ $rc -eq 1 ] && ok || bad "$label: wrong vk: exit $rc, wanted 1"
    expect_json "$T/$label.wrong.json" 'r.proofs === 3 && r.verify_failures === 3 && r.verified === 0'

    # a tampered vk of the right circuit (delta2 replaced by gamma2) must fail too
    node -e 'const fs=require("fs"); const v=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));
             v.vk_delta_2=v.vk_gamma_2; fs.writeFileSync(process.argv[2], JSON.stringify(v));' "$VK" "$T/tampered_vk.json"
    "$BENCH" batch -c 2 -j 1 --witness "$C/witness.wtns" --verify-with "$T/tampered_vk.json" --json "$@" \
        >"$T/$label.tamper.json" 2>"$T/$label.tamper.err"
    rc=$?
    [ $rc -eq 1 ] && ok || bad "$label: tampered vk: exit $rc, wanted 1"
    expect_json "$T/$label.tamper.json" 'r.verify_failures === 2'
    # jobs of 5 partitions (their proofs checked in parallel): every check counted, good and bad
    "$BENCH" batch -c 2 -j 2 --witness "$C/witness.wtns" --witness "$C/witness.wtns" --witness "$C/witness.wtns" \
        --witness "$C/witness.wtns" --witness "$C/witness.wtns" --verify-with "$T/tampered_vk.json" --json "$@" \
        >"$T/$label.tamper5.json" 2>"$T/$label.tamper5.err"
    rc=$?
    [ $rc -eq 1 ] && ok || bad "$label: tampered vk, 5 partitions: exit $rc, wanted 1"
    expect_json "$T/$label.tamper5.json" 'r.proofs === 10 && r.verify_failures === 10 && r.verified === 0'
    "$BENCH" batch -c 2 -j 2 --witness "$C/witness.wtns" --witness "$C/witness.wtns" --witness "$C/witness.wtns" \
        --witness "$C/witness.wtns" --witness "$C/witness.wtns" --verify-with "$VK" --json "$@" \
        >"$T/$label.good5.json" 2>"$T/$label.good5.err" && ok || bad "$label: 5 partitions: $(head -c 400 "$T/$label.good5.err")"
    expect_json "$T/$label.good5.json" 'r.proofs === 10 && r.verify_failures === 0 && r.verified === 10'

    # a missing witness: the job fails with a reason naming the file; exit 1
    "$BENCH" single --witness "$T/nonexistent.wtns" --json "$@" >"$T/$label.miss.json" 2>"$T/$label.miss.err"
    rc=$?
    [ $rc -eq 1 ] && ok || bad "$label: missing witness: exit $rc, wanted 1: $(head -c 400 "$T/$label.miss.json")"
    expect_json "$T/$label.miss.json" 'r.failed === 1 && /nonexistent\.wtns/.test(r.job_results[0].error)'

    # single with two partitions writes proofs that `cuzk verify` (and snarkjs, if present) accept
    mkdir -p "$T/$label.out"
    "$BENCH" single --witness "$C/witness.wtns" --witness "$C/witness.wtns" --verify-with "$VK" \
        --out-dir "$T/$label.out" "$@" >"$T/$label.single.txt" 2>&1 && ok || bad "$label: single: $(head -c 400 "$T/$label.single.txt")"
    for i in 0 1; do
        if [ -x "$BIN/cuzk" ]; then
            "$BIN/cuzk" verify "$VK" "$T/$label.out/public_$i.json" "$T/$label.out/proof_$i.json" >/dev/null 2>&1 \
                && ok || bad "$label: cuzk verify rejects proof_$i.json from single --out-dir"
        fi
        if [ -x "$SRC/tests/js/node_modules/.bin/snarkjs" ]; then
            "$SRC/tests/js/node_modules/.bin/snarkjs" groth16 verify "$VK" "$T/$label.out/public_$i.json" \
                "$T/$label.out/proof_$i.json" 2>&1 | grep -q OK && ok || bad "$label: snarkjs rejects proof_$i.json"
        fi
    done
    cmp -s "$T/$label.out/public_0.json" "$C/public.json" && ok || bad "$label: public_0.json differs from the fixture's public.json"
}

case "$MODE" in
inprocess)
    if [ -f "$SRC/src/engine/engine.c" ]; then
        check_batch inproc --in-process --zkey "$C/circuit.zkey"
    fi
    check_batch direct --direct --zkey "$C/circuit.zkey"
    # usage errors are exit 2 with a message
    "$BENCH" batch --in-process --witness "$C/witness.wtns" >/dev/null 2>"$T/u.err"
    [ $? -eq 2 ] && grep -q -- "--zkey" "$T/u.err" && ok || bad "in-process without --zkey: $(cat "$T/u.err")"
    "$BENCH" batch --in-process --zkey "$T/missing.zkey" --witness "$C/witness.wtns" >/dev/null 2>"$T/u.err"
    [ $? -eq 2 ] && grep -q "missing.zkey" "$T/u.err" && ok || bad "in-process, missing key: $(cat "$T/u.err")"
    ;;
daemon)
    if [ ! -f "$SRC/tools/cuzk-daemon/main.c" ]; then
        echo "SKIP: tools/cuzk-daemon/main.c does not exist yet, so there is no daemon to benchmark"; exit 77
    fi
    if [ ! -x "$BIN/cuzk-daemon" ]; then
        bad "$BIN/cuzk-daemon was not built (cmake --build with the cuzk-daemon target)"; finish
    fi
    # nothing listens: a clear error naming the address, exit 2
    port=$(cuzk_free_port)
    "$BENCH" batch --addr "127.0.0.1:$port" --key chain --witness "$C/witness.wtns" >/dev/null 2>"$T/unreach.err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "127.0.0.1:$port" "$T/unreach.err" && ok \
        || bad "unreachable daemon: exit $rc, stderr: $(cat "$T/unreach.err")"

    # its state directory where cuzk-bench looks by default ($XDG_STATE_HOME/cuzk)
    if ! cuzk_daemon_start "$BIN" "$T/daemon.log" --state-dir "$T/xdg/cuzk"; then
        bad "cuzk-daemon did not start"; finish
    fi
    export CUZK_ADDR
    "$BENCH" preload --zkey "$C/circuit.zkey" --key chain >"$T/preload.txt" 2>&1 && ok || bad "preload: $(cat "$T/preload.txt")"
    check_batch daemon --key chain
    # --zkey registers the key itself (a second registration of the same id and path is fine)
    "$BENCH" batch -c 3 -j 3 --zkey "$C/circuit.zkey" --witness "$C/witness.wtns" --verify-with "$VK" \
        --priority mixed --json >"$T/mixed.json" 2>"$T/mixed.err" && ok || bad "mixed batch: $(head -c 400 "$T/mixed.err")"
    expect_json "$T/mixed.json" 'r.verified === 3 && r.key === "circuit" && Object.keys(r.latency_by_priority_ms).length === 3'
    # an unknown key: the daemon's refusal is shown, exit 1
    "$BENCH" single --key no-such-key --witness "$C/witness.wtns" >"$T/unk.txt" 2>&1
    rc=$?
    [ $rc -eq 1 ] && grep -q "404" "$T/unk.txt" && ok || bad "unknown key: exit $rc: $(head -c 400 "$T/unk.txt")"
    "$BENCH" status --json >"$T/status.json" 2>&1 && ok || bad "status: $(head -c 300 "$T/status.json")"
    expect_json "$T/status.json" 'typeof r === "object" && r !== null && !Array.isArray(r)'
    "$BENCH" metrics >"$T/metrics.txt" 2>&1 && grep -q '^cuzk_' "$T/metrics.txt" && ok \
        || bad "metrics: $(head -c 300 "$T/metrics.txt")"
    "$BENCH" evict --key chain >"$T/evict.txt" 2>&1 && ok || bad "evict: $(cat "$T/evict.txt")"
    # the daemon's tokens: found in its state directory (by default or --state-dir), or
    # --token-file; without one the daemon refuses (401)
    if [ "$(id -u)" -ne 0 ]; then   # root's default is /var/lib/cuzk
        CUZK_TOKEN= XDG_STATE_HOME="$T/xdg" "$BENCH" status >/dev/null 2>"$T/deftok.err" && ok \
            || bad "status with the default state directory's token: $(cat "$T/deftok.err")"
    fi
    CUZK_TOKEN= "$BENCH" status --state-dir "$T/xdg/cuzk" >/dev/null 2>"$T/sdtok.err" && ok \
        || bad "status --state-dir: $(cat "$T/sdtok.err")"
    CUZK_TOKEN= "$BENCH" status --token-file "$T/xdg/cuzk/token" >/dev/null 2>"$T/tf.err" && ok \
        || bad "status --token-file: $(cat "$T/tf.err")"
    CUZK_TOKEN= "$BENCH" status --state-dir "$T/none" >/dev/null 2>"$T/notok.err"
    rc=$?
    [ $rc -eq 1 ] && grep -q "401" "$T/notok.err" && ok || bad "no token: exit $rc: $(cat "$T/notok.err")"
    "$BENCH" status --token-file "$T/none/token" >/dev/null 2>"$T/tfmiss.err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "token-file" "$T/tfmiss.err" && ok || bad "missing --token-file: exit $rc"
    cuzk_daemon_stop; rc=$?
    [ $rc -eq 0 ] && ok || bad "cuzk-daemon exited $rc after SIGTERM"

    # a daemon with a bearer token, also on a Unix socket, with its built-in example key
    if ! cuzk_daemon_start "$BIN" "$T/daemon2.log" --token s3cret --listen "unix:$T/d.sock" --example; then
        bad "cuzk-daemon with --token did not start"; finish
    fi
    "$BENCH" status --addr "$CUZK_ADDR" --token wrong >/dev/null 2>"$T/tok.err"
    rc=$?
    [ $rc -eq 1 ] && grep -q "401" "$T/tok.err" && ok || bad "wrong token: exit $rc: $(cat "$T/tok.err")"
    "$BENCH" single --addr "unix:$T/d.sock" --token s3cret --key example --witness "$C/witness.wtns" \
        --verify-with "$VK" --json >"$T/unix.json" 2>"$T/unix.err" && ok || bad "single over the Unix socket: $(cat "$T/unix.err")"
    expect_json "$T/unix.json" 'r.verified === 1 && r.verify_failures === 0'
    CUZK_TOKEN=s3cret "$BENCH" batch -c 2 -j 2 --key example --witness "$C/witness.wtns" --quiet \
        >/dev/null 2>"$T/tokenv.err" && ok || bad "CUZK_TOKEN: $(cat "$T/tokenv.err")"
    cuzk_daemon_stop; rc=$?
    [ $rc -eq 0 ] && ok || bad "cuzk-daemon (token) exited $rc after SIGTERM"
    "$BENCH" status --addr "unix:$T/d.sock" >/dev/null 2>"$T/gone.err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "d.sock" "$T/gone.err" && ok || bad "stopped daemon's socket: exit $rc: $(cat "$T/gone.err")"
    if [ "$failed" -ne 0 ]; then
        echo "--- daemon log (tail)"; tail -n 30 "$T/daemon.log"
        echo "--- daemon 2 log (tail)"; tail -n 30 "$T/daemon2.log"
    fi
    ;;
*)
    echo "usage: bench_client.sh inprocess|daemon" >&2; exit 2 ;;
esac
finish
