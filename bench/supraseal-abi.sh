#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The SupraSeal C2 ABI's call (docs/filecoin.md) timed beside `cuzk-bench porep --abc` on the
# same sizes: per size K (domain 2^K) with P circuits, a porep-profile circuit and its P
# witnesses (cuzk gen), a .params key for it (cuzk setup), then
#   - the harness (tests/supraseal/harness.c) calling generate_groth16_proofs_c on the P
#     circuits as bellperson does, RUNS times, every proof verified (--native off: no CPU
#     reference at these sizes; NATIVE=cpu|gpu adds the byte-for-byte comparison),
#   - cuzk-bench porep -k K -p P --abc (the prover given a, b, c) RUNS times,
# and prints both best times. Defaults: the two Filecoin sizes, 10 porep-24 circuits and one
# porep-27:
#   SIZES="24:10 27:1" BACKEND=gpu RUNS=3 BUILD=build WORK=/tmp/cuzk-abi bash bench/supraseal-abi.sh
#   REUSE=1   keep WORK's circuit, witnesses and key from an earlier call (same sizes)
#   CLEAN=1   delete each size's files after its runs (a 2^27 key is about 48 GB)
# Extra environment reaches the programs (CUZK_THREADS, CUDA_VISIBLE_DEVICES, CUZK_GPU).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILD:-$ROOT/build}
SIZES=${SIZES:-24:10 27:1}
BACKEND=${BACKEND:-gpu}
RUNS=${RUNS:-3}
NATIVE=${NATIVE:-off}
WORK=${WORK:-/tmp/cuzk-abi}
H=$B/tests/supraseal/cuzk_supraseal_harness
for p in "$B/cuzk" "$B/cuzk-bench" "$H"; do
    [ -x "$p" ] || { echo "supraseal-abi: $p is not built (BUILD=$B)"; exit 2; }
done
rows=()
for sz in $SIZES; do
    K=${sz%%:*}; P=${sz##*:}
    W=$WORK/$K
    mkdir -p "$W"
    if [ "${REUSE:-0}" != 1 ] || [ ! -s "$W/key.params" ]; then
        echo "== 2^$K: cuzk gen, $P witnesses"
        "$B/cuzk" gen --domain "$K" --partitions "$P" --profile porep -q -o "$W" || exit 1
        echo "== 2^$K: cuzk setup"
        "$B/cuzk" setup --backend "$([ "$BACKEND" = cpu ] && echo cpu || echo auto)" \
            "$W/circuit.r1cs" "$W/key.params" || exit 1
        "$B/cuzk" export vk "$W/key.params" "$W/vk.json" || exit 1
    fi
    wits=()
    for ((i = 0; i < P; i++)); do wits+=("$W/witness-$i.wtns"); done
    vkopt=(--vk "$W/vk.json")
    [ "$NATIVE" != off ] && vkopt=()
    echo "== 2^$K x $P: the ABI call (harness, backend $BACKEND)"
    "$H" --backend "$BACKEND" --native "$NATIVE" --trusted "${vkopt[@]}" --runs "$RUNS" \
        prove "$W/circuit.r1cs" "$W/key.params" "$P" "${wits[@]}" | tee "$W/abi.log" || exit 1
    abi=$(awk '/^abi best:/ {print $3}' "$W/abi.log")
    echo "== 2^$K x $P: cuzk-bench porep --abc (backend $BACKEND)"
    "$B/cuzk-bench" porep -k "$K" -p "$P" --abc --backend "$BACKEND" --runs "$RUNS" \
        --json >"$W/porep.json" 2>"$W/porep.log" || { cat "$W/porep.log"; exit 1; }
    cat "$W/porep.json"
    rows+=("2^$K x $P  abi ${abi} ms  (porep --abc: $W/porep.json)")
    [ "${CLEAN:-0}" = 1 ] && rm -rf "$W"
done
echo
echo "supraseal-abi (backend $BACKEND, best of $RUNS):"
printf '  %s\n' "${rows[@]}"
