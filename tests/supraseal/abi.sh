#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The SupraSeal C2 ABI end to end (tests/supraseal/harness.c): keys made with `cuzk setup`
# for a `cuzk gen --profile porep` circuit (10 witnesses) and a circom circuit; batches of
# 1, 3 and 10 circuits; every error path; clone/drop/evict while proofs run; Curio's split
# flavour with two workers on one gpu mutex. BACKEND=cpu|gpu|auto picks the library's
# backend (default cpu; the GPU round on a device host sets gpu), NATIVE= the reference's.
set -euo pipefail
BIN=${CUZK_BIN:?} DATA=${CUZK_TEST_DATA:?}
BACKEND=${BACKEND:-cpu} NATIVE=${NATIVE:-cpu}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
H="$BIN/tests/supraseal/cuzk_supraseal_harness"
HC="$BIN/tests/supraseal/cuzk_supraseal_curio_harness"
opts=(--backend "$BACKEND" --native "$NATIVE")
run() { echo "+ $*"; "$@" || { echo "FAIL: $*"; exit 1; }; }
if [ "$BACKEND" = gpu ] || [ "$NATIVE" = gpu ]; then
    "$H" gpu-available || { echo "SKIP: the GPU backend asked for, no device"; exit 77; }
fi

# a PoRep-shaped synthetic circuit, 10 partitions
"$BIN/cuzk" gen --constraints 2000 --public 12 --partitions 10 --profile porep --seed 5 -q -o "$T/porep"
"$BIN/cuzk" setup "$T/porep/circuit.r1cs" "$T/porep/key.params" >/dev/null
P=("$T/porep/circuit.r1cs" "$T/porep/key.params")
W=("$T"/porep/witness-*.wtns)
[ "${#W[@]}" = 10 ] || { echo "FAIL: cuzk gen wrote ${#W[@]} witnesses"; exit 1; }
# a circom circuit
C="$DATA/circuits/chain"
"$BIN/cuzk" setup "$C/circuit.r1cs" "$T/chain.params" >/dev/null
CC=("$C/circuit.r1cs" "$T/chain.params")

for n in 1 3 10; do
    run "$H" "${opts[@]}" --seed $n prove "${P[@]}" $n "${W[@]}"
done
run "$H" "${opts[@]}" prove "${CC[@]}" 3 "$C/witness.wtns"
run "$H" "${opts[@]}" errors "${P[@]}" "${W[0]}"
run "$H" "${opts[@]}" refs "${P[@]}" "${W[0]}"
run "$HC" "${opts[@]}" prove "${P[@]}" 3 "${W[@]:0:3}"
run "$HC" "${opts[@]}" split "${P[@]}" "${W[1]}"
run "$HC" "${opts[@]}" errors "${CC[@]}" "$C/witness.wtns"
# the environment, read at the first call: good values are taken, a bad one fails create_SRS
run env CUZK_THREADS=1 CUZK_PARAMS=trusted CUZK_GPU=b_g2=cpu,msm_chunk=4096 \
    "$H" "${opts[@]}" prove "${CC[@]}" 1 "$C/witness.wtns"
for bad in CUZK_BACKEND=tpu CUZK_THREADS=x CUZK_PARAMS=maybe CUZK_PARAMS_CACHE=2 CUZK_GPU=synth; do
    if env "$bad" "$H" "${opts[@]}" prove "${CC[@]}" 1 "$C/witness.wtns" >"$T/env.out" 2>&1; then
        echo "FAIL: $bad was accepted"; exit 1
    fi
    grep -q "the environment: ${bad%%=*}" "$T/env.out" ||
        { cat "$T/env.out"; echo "FAIL: $bad: the error does not name the variable"; exit 1; }
    echo "env $bad: refused ($(grep -o 'the environment: .*' "$T/env.out" | head -1))"
done
echo "supraseal abi: ok"
