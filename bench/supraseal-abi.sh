#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The SupraSeal C2 ABI's whole call (docs/filecoin.md) timed beside cuzk's own prover on
# `cuzk-bench porep --abc`'s workload, and beside SupraSeal C2 itself when its driver is built:
# per size K:P (domain 2^K, P circuits)
#   - cuzk_supraseal_porep (tests/supraseal/porep_bench.c): the porep-K key written once as
#     WORK/porep-K.params, then in one process cuzk's prover given a, b, c (as cuzk-bench porep
#     --abc) and generate_groth16_proofs_c on bellperson's structs over the same arrays, a
#     warm-up and RUNS calls each, best times, and whether the proofs are equal byte for byte;
#   - cuzk-bench porep -k K -p P --abc (the same prover, its own report), unless POREP=0;
#   - SUPRASEAL_BENCH=PATH (../shared/anchors/supraseal_bench, built with its build.sh): SupraSeal
#     C2's generate_groth16_proofs_c on porep-K x P, the whole call;
#   - REAL=1: a real circuit too (cuzk gen --domain K, cuzk setup), the harness calling the ABI
#     as bellperson does, every proof verified (NATIVE=cpu|gpu adds cuzk's proof per circuit).
# Defaults: the two Filecoin sizes, 10 porep-24 circuits and one porep-27:
#   SIZES="24:10 27:1" BACKEND=gpu RUNS=3 BUILD=build WORK=/tmp/cuzk-abi bash bench/supraseal-abi.sh
#   CLEAN=1   delete each size's files after its runs (a 2^27 key is about 48 GB on disk)
# Extra environment reaches the programs (CUZK_THREADS, CUDA_VISIBLE_DEVICES, CUZK_GPU).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILD:-$ROOT/build}
SIZES=${SIZES:-24:10 27:1}
BACKEND=${BACKEND:-gpu}
RUNS=${RUNS:-3}
NATIVE=${NATIVE:-off}
WORK=${WORK:-/tmp/cuzk-abi}
PB=$B/tests/supraseal/cuzk_supraseal_porep
H=$B/tests/supraseal/cuzk_supraseal_harness
for p in "$B/cuzk" "$B/cuzk-bench" "$PB" "$H"; do
    [ -x "$p" ] || { echo "supraseal-abi: $p is not built (BUILD=$B)"; exit 2; }
done
mkdir -p "$WORK"
rows=()
for sz in $SIZES; do
    K=${sz%%:*}; P=${sz##*:}
    echo "== porep-$K x $P: cuzk's prover and the ABI call (backend $BACKEND)"
    "$PB" --backend "$BACKEND" --runs "$RUNS" -k "$K" -p "$P" --key "$WORK/porep-$K.params" \
        | tee "$WORK/abi-$K-$P.log" || exit 1
    rows+=("$(head -1 "$WORK/abi-$K-$P.log")")
    if [ "${POREP:-1}" != 0 ]; then
        echo "== porep-$K x $P: cuzk-bench porep --abc (backend $BACKEND)"
        "$B/cuzk-bench" porep -k "$K" -p "$P" --abc --backend "$BACKEND" --runs "$RUNS" \
            2>"$WORK/porep-$K-$P.err" | tee "$WORK/porep-$K-$P.log" || { cat "$WORK/porep-$K-$P.err"; exit 1; }
        rows+=("  cuzk-bench porep --abc: $(awk -v b="$BACKEND" '$1 == b && $2 ~ /^[0-9.]+$/ {print $2 " ms"}' "$WORK/porep-$K-$P.log")")
    fi
    if [ -n "${SUPRASEAL_BENCH:-}" ]; then
        echo "== porep-$K x $P: SupraSeal C2 ($SUPRASEAL_BENCH)"
        "$SUPRASEAL_BENCH" -k "$K" -p "$P" --runs "$RUNS" | tee "$WORK/supraseal-$K-$P.log" || exit 1
        rows+=("  SupraSeal C2: $(grep -o 'whole call median [0-9.]* ms' "$WORK/supraseal-$K-$P.log")")
    fi
    if [ "${REAL:-0}" = 1 ]; then
        W=$WORK/real-$K
        mkdir -p "$W"
        if [ ! -s "$W/key.params" ]; then
            "$B/cuzk" gen --domain "$K" --partitions "$P" --profile porep -q -o "$W" || exit 1
            "$B/cuzk" setup --backend "$([ "$BACKEND" = cpu ] && echo cpu || echo auto)" \
                "$W/circuit.r1cs" "$W/key.params" || exit 1
            "$B/cuzk" export vk "$W/key.params" "$W/vk.json" || exit 1
        fi
        wits=()
        for ((i = 0; i < P; i++)); do wits+=("$W/witness-$i.wtns"); done
        vkopt=(--vk "$W/vk.json")
        [ "$NATIVE" != off ] && vkopt=()
        echo "== 2^$K x $P, a real circuit: the harness (backend $BACKEND, every proof verified)"
        "$H" --backend "$BACKEND" --native "$NATIVE" --trusted "${vkopt[@]}" --runs "$RUNS" \
            prove "$W/circuit.r1cs" "$W/key.params" "$P" "${wits[@]}" | tee "$W/abi.log" || exit 1
        rows+=("  real circuit, ABI call: $(awk '/^abi best:/ {print $3 " ms"}' "$W/abi.log"), proofs verify")
    fi
    [ "${CLEAN:-0}" = 1 ] && rm -rf "$WORK/porep-$K.params" "$WORK/real-$K"
done
echo
echo "supraseal-abi (backend $BACKEND, best of $RUNS):"
printf '%s\n' "${rows[@]}"
