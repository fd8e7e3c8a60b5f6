#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Two CPU builds side by side on the lent machine's host (quiet, unlike a shared 2-core
# development machine), in the same device call as a GPU round if wanted. The builds are made
# here and carried: bench/remote-gpu-pack.sh with
#   PACK_EXTRA="OLD/cuzk=ab-old-cuzk OLD/cuzk-bench=ab-old-cuzk-bench
#               NEW/cuzk=ab-new-cuzk NEW/cuzk-bench=ab-new-cuzk-bench"
# (two CPU builds, say; the GPU round's own binaries beside them are not used here). On the host, both on the same two cores
# (AB_CPUS, default 0,1: a 2-core machine), interleaved:
#   cuzk-bench micro (field, curve, pairing ns/op), AB_MICRO rounds each (default 3);
#   whole proofs of synthetic circuits (bench/cpu-prove-ab.sh, AB_RUNS each, default 3),
#   and snarkjs's when .gpu-deps/njs.tgz is there (node in bin/, tests/js's node_modules),
#   AB_CIRCUITS="dense:63000 dense:131000 porep:10000" (profile:constraints), made with the
#   new cuzk (gen, setup) on all cores.
# Prints one table at the end; everything also under OUT (default /tmp/cpu-ab).
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" /tmp/cpu-ab
B=$D/bin
CPUS=${AB_CPUS:-0,1}
for x in ab-old-cuzk ab-new-cuzk ab-old-cuzk-bench ab-new-cuzk-bench; do
    [ -x "$B/$x" ] || { echo "remote-cpu-ab.sh: no $B/$x (PACK_EXTRA)" >&2; exit 2; }
done
mkdir -p /tmp/ab/old /tmp/ab/new
ln -sf "$B/ab-old-cuzk" /tmp/ab/old/cuzk
ln -sf "$B/ab-new-cuzk" /tmp/ab/new/cuzk
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) ($(nproc) cpus); pinned to $CPUS"
for ((i = 0; i < ${AB_MICRO:-3}; i++)); do
    taskset -c "${CPUS%%,*}" "$B/ab-old-cuzk-bench" micro >"$OUT/micro-old-$i.log" 2>&1
    taskset -c "${CPUS%%,*}" "$B/ab-new-cuzk-bench" micro >"$OUT/micro-new-$i.log" 2>&1
done
# the least of the rounds per operation
best() { cat "$@" | awk 'NF == 2 && $2 ~ /^[0-9.]+$/ { if (!($1 in m) || $2 < m[$1]) m[$1] = $2 }
                         END { for (k in m) print k, m[k] }' | sort; }
join <(best "$OUT"/micro-old-*.log) <(best "$OUT"/micro-new-*.log) |
    awk '{ printf "| %s | %s | %s | %.3f |\n", $1, $2, $3, $3 / $2 }' >"$OUT/micro.md"
dirs=()
for spec in ${AB_CIRCUITS:-dense:63000 dense:131000 porep:10000}; do
    prof=${spec%%:*} n=${spec#*:} d=/tmp/ab/$prof-$n
    t0=$(date +%s)
    "$B/ab-new-cuzk" gen --constraints "$n" --profile "$prof" --partitions 1 -q -o "$d" &&
        "$B/ab-new-cuzk" setup "$d/circuit.r1cs" "$d/circuit.zkey" >/dev/null 2>&1 || { echo "gen $spec failed"; continue; }
    echo "gen + setup $spec: $(( $(date +%s) - t0 )) s"
    dirs+=("$d")
done
# snarkjs beside them when .gpu-deps/njs.tgz holds node (bin/node) and tests/js's
# node_modules (the lent machine has neither): SNARKJS=1 of cpu-prove-ab.sh
sj=(env)
if [ -f "$ROOT/.gpu-deps/njs.tgz" ]; then
    mkdir -p /tmp/njs && tar xzf "$ROOT/.gpu-deps/njs.tgz" -C /tmp/njs
    export PATH=/tmp/njs/bin:$PATH SNARKJS_CLI=/tmp/njs/node_modules/snarkjs/build/cli.cjs
    sj=(env SNARKJS=1)
    echo "snarkjs: $(node "$SNARKJS_CLI" --version 2>&1 | head -1), node $(node --version)"
fi
"${sj[@]}" PIN="taskset -c $CPUS" RUNS=${AB_RUNS:-3} bash "$ROOT/bench/cpu-prove-ab.sh" /tmp/ab/old /tmp/ab/new "${dirs[@]}" \
    >"$OUT/prove.log" 2>&1
echo "-- micro, ns/op (least of ${AB_MICRO:-3} rounds, core ${CPUS%%,*})"
echo "| operation | old | new | new / old |"
echo "| --- | --- | --- | --- |"
cat "$OUT/micro.md"
echo "-- whole proofs, cores $CPUS, 2 threads"
cat "$OUT/prove.log"
