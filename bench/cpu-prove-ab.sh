#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two cuzk builds' CPU proofs, interleaved (old, new, old, new, ...) so that a busy machine
# slows both alike, and snarkjs's on the same key and witness: the median of each.
#   bench/cpu-prove-ab.sh OLD_BUILD NEW_BUILD DIR...
# DIR: a circuit directory with circuit.zkey and witness-0.wtns .. witness-3.wtns (cuzk gen
# --partitions 4, then cuzk setup DIR/circuit.r1cs DIR/circuit.zkey).
# Environment: RUNS (default 3) runs of each; THREADS (default 2) cuzk's --threads;
# BATCH=1 also --batch of the 4 witnesses; SNARKJS=1 also snarkjs groth16 prove (RUNS times);
# PIN="taskset -c 0,1": every run on those cores (a 2-core machine on a larger host);
# SNARKJS_CLI: snarkjs's build/cli.cjs (default tests/js's), run with the node on PATH.
# Prints one line per circuit and mode: the prove stage's milliseconds (cuzk prove -v: key
# load and the proof's check excluded), all runs, their medians and the medians of the
# whole command (key load, check and writes included) and of its CPU time (user + sys);
# snarkjs: the whole command.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 OLD_BUILD NEW_BUILD DIR..." >&2; exit 2; }
OLD=$1 NEW=$2
shift 2
RUNS=${RUNS:-3}
THREADS=${THREADS:-2}
PIN=${PIN:-}        # e.g. "taskset -c 0,1": both programs on those cores
TIMEFORMAT='%U %S'  # bash's time: user and system seconds
SNARKJS_CLI=${SNARKJS_CLI:-$ROOT/tests/js/node_modules/snarkjs/build/cli.cjs}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
med() {
    tr ' ' '\n' | grep . | sort -g |
        awk '{ v[NR] = $1 }
             END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# one proof (or a batch) with build $1 of circuit $2, the remaining args the witnesses
prove_ms() {
    local b=$1 d=$2
    shift 2
    local args=("$d/circuit.zkey")
    if [ $# -gt 1 ]; then
        mkdir -p "$T/out"
        args+=(--batch "$T/out" "$@")
    else
        args+=("$1" "$T/proof.json" "$T/public.json")
    fi
    local t0 t1 ms cpu
    t0=$(date +%s%N)
    { time $PIN "$b/cuzk" prove -v --threads "$THREADS" "${args[@]}" >"$T/log" 2>&1; } 2>"$T/time"
    t1=$(date +%s%N)
    ms=$(sed -n 's/.* proofs\{0,1\} in \([0-9.]*\) ms.*/\1/p' "$T/log" | head -1)
    cpu=$(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$T/time")
    echo "$ms $(( (t1 - t0) / 1000000 )) $cpu"
}
for d in "$@"; do
    modes=(single)
    [ "${BATCH:-0}" = 1 ] && modes+=(batch4)
    for m in "${modes[@]}"; do
        w=("$d/witness-0.wtns")
        [ "$m" = batch4 ] && w=("$d"/witness-{0,1,2,3}.wtns)
        o="" n="" ow="" nw="" oc="" nc=""
        for ((i = 0; i < RUNS; i++)); do
            read -r a b c < <(prove_ms "$OLD" "$d" "${w[@]}")
            o="$o $a" ow="$ow $b" oc="$oc $c"
            read -r a b c < <(prove_ms "$NEW" "$d" "${w[@]}")
            n="$n $a" nw="$nw $b" nc="$nc $c"
        done
        echo "$(basename "$d") $m prove ms old:$o | new:$n | median old $(echo "$o" | med)" \
             "new $(echo "$n" | med); whole command ms median old $(echo "$ow" | med)" \
             "new $(echo "$nw" | med); CPU ms (user + sys) median old $(echo "$oc" | med)" \
             "new $(echo "$nc" | med)"
    done
    if [ "${SNARKJS:-0}" = 1 ]; then
        s="" sc=""
        for ((i = 0; i < RUNS; i++)); do
            t0=$(date +%s%N)
            { time $PIN node "$SNARKJS_CLI" groth16 prove \
                "$d/circuit.zkey" "$d/witness-0.wtns" "$T/sproof.json" "$T/spublic.json" \
                >/dev/null; } 2>"$T/time"
            t1=$(date +%s%N)
            s="$s $(( (t1 - t0) / 1000000 ))"
            sc="$sc $(awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$T/time")"
        done
        echo "$(basename "$d") snarkjs whole command ms:$s | median $(echo "$s" | med);" \
             "CPU ms median $(echo "$sc" | med)"
    fi
done
