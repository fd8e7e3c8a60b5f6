#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Real keys and proofs at scale, end to end, with the time and peak host memory of each step:
#   cuzk gen (porep profile, domain 2^K, P partitions) -> cuzk setup (.zkey and/or .params)
#   -> cuzk prove --batch of the P partitions with each key -> cuzk verify of every proof, and
#   snarkjs groth16 verify when snarkjs is installed (tests/js). Prints a table last.
#   K=20 P=1 FORMATS="zkey params" BUILD=build WORK=/tmp/cuzk-scale bash bench/scale.sh
#   PARAMS_FLAGS="--trusted"  flags for proving with the .params key (skip subgroup checks
#                             of a key made by this script, or --cache)
#   KEEP=DIR                  copy the verification keys, proofs and public inputs there
#                             (to check them with snarkjs on another machine)
#   CLEAN=1                   delete each key after its proofs (disk: 2^26 keys are tens of GB)
#   MEM=1                     no key file: one `cuzk-bench scale` step per format does the setup in
#                             memory, the batch proof of the P witnesses and their verification
#                             (per-stage times and peak RSS in its log, printed below); for 2^27,
#                             whose key does not fit on the disk next to the .r1cs:
#                               K=27 P=1 MEM=1 FORMATS=params bash bench/scale.sh
#   SCALE_FLAGS="--runs 2"    extra flags of cuzk-bench scale (--runs, --threads, --devices, --gpu)
#   REUSE=1                   skip cuzk gen when WORK already holds the circuit and P witnesses
#                             (same K; e.g. gen in one call, the proving steps in the next)
#   PROVE_FLAGS="--gpu b_g2=cpu"  extra flags of cuzk prove (--gpu NAME=VALUE, --threads)
# Extra environment reaches the programs (CUZK_BACKEND, CUZK_THREADS, CUZK_FF_IMPL).
# With nvidia-smi present, the peak device memory in use during each step is shown too.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K=${K:-20}; P=${P:-1}; FORMATS=${FORMATS:-zkey params}
B=${BUILD:-$ROOT/build}
W=${WORK:-/tmp/cuzk-scale-$K}
SNARKJS=$ROOT/tests/js/node_modules/.bin/snarkjs
mkdir -p "$W"
rows=()
fail=0
have_smi=0; command -v nvidia-smi >/dev/null && have_smi=1
# step NAME cmd...: runs it under /usr/bin/time, records wall seconds, peak RSS and (with a
# GPU) the peak device memory in use
step() {
    local name=$1; shift
    local t0 t1 smi_pid=""
    t0=$(date +%s.%N)
    if [ $have_smi = 1 ]; then
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 >"$W/smi" 2>/dev/null &
        smi_pid=$!
    fi
    /usr/bin/time -f "%M" -o "$W/rss" "$@" >"$W/$name.log" 2>&1
    local rc=$?
    t1=$(date +%s.%N)
    local dev="-"
    if [ -n "$smi_pid" ]; then
        kill "$smi_pid" 2>/dev/null; wait "$smi_pid" 2>/dev/null
        dev=$(sort -n "$W/smi" | tail -1); dev=$(awk -v m="${dev:-0}" 'BEGIN {printf "%.2f", m / 1024}')
    fi
    local rss; rss=$(tail -1 "$W/rss")
    rows+=("$(printf '%-24s %4s %10.2f %10.2f %10s' "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" "$(awk -v r="${rss:-0}" 'BEGIN {print r / 1048576}')" "$dev")")
    [ $rc -eq 0 ] || { fail=1; echo "step $name failed (rc $rc):"; tail -5 "$W/$name.log"; }
    return $rc
}

wits=(); for ((p = 0; p < P; p++)); do wits+=("$W/circuit/witness-$p.wtns"); done
have_all=0
if [ -n "${REUSE:-}" ] && [ -s "$W/circuit/circuit.r1cs" ]; then
    have_all=1; for w in "${wits[@]}"; do [ -s "$w" ] || have_all=0; done
fi
if [ $have_all = 1 ]; then
    echo "reusing $W/circuit (REUSE=1)"
else
    step gen "$B/cuzk" gen --domain "$K" --partitions "$P" --profile porep -o "$W/circuit"
fi
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP"
# check_proofs FORMAT VK: cuzk verify (and snarkjs) of $W/out.FORMAT/proof-<p>.json; KEEP copies
check_proofs() {
    local f=$1 vk=$2 p
    for ((p = 0; p < P; p++)); do
        step "verify.$f.$p" "$B/cuzk" verify "$vk" "$W/out.$f/public-$p.json" "$W/out.$f/proof-$p.json"
        if [ -x "$SNARKJS" ]; then
            step "snarkjs-verify.$f.$p" "$SNARKJS" groth16 verify "$vk" "$W/out.$f/public-$p.json" \
                "$W/out.$f/proof-$p.json"
            grep -q "OK" "$W/snarkjs-verify.$f.$p.log" || { fail=1; echo "snarkjs rejected proof $p ($f)"; }
        fi
        [ -n "${KEEP:-}" ] && cp "$W/out.$f/public-$p.json" "$KEEP/public.$f.$p.json" && cp "$W/out.$f/proof-$p.json" "$KEEP/proof.$f.$p.json"
    done
    [ -n "${KEEP:-}" ] && cp "$vk" "$KEEP/vk.$f.json"
}
if [ "${MEM:-0}" != 0 ]; then
    wargs=(); for w in "${wits[@]}"; do wargs+=(--witness "$w"); done
    for f in $FORMATS; do
        rm -rf "$W/out.$f"
        # shellcheck disable=SC2086
        step "scale.$f" "$B/cuzk-bench" scale --format "$f" --r1cs "$W/circuit/circuit.r1cs" "${wargs[@]}" \
            --out "$W/out.$f" ${SCALE_FLAGS:-}
        rc=$?
        sed -n '/^cuzk-bench scale: /,$p' "$W/scale.$f.log"
        [ $rc -eq 0 ] || continue
        check_proofs "$f" "$W/out.$f/vk.json"
    done
else
for f in $FORMATS; do
    key=$W/key.$f
    step "setup.$f" "$B/cuzk" setup -v "$W/circuit/circuit.r1cs" "$key" || continue
    grep -E "setup: (backend|total|H|A|B|L|C|IC)" "$W/setup.$f.log" | head -12
    step "export-vk.$f" "$B/cuzk" export vk "$key" "$W/vk.$f.json" || continue
    mkdir -p "$W/out.$f"
    extra=()
    # shellcheck disable=SC2206
    [ "$f" = params ] && extra=(--r1cs "$W/circuit/circuit.r1cs" ${PARAMS_FLAGS:-})
    # shellcheck disable=SC2086
    step "prove-batch.$f" "$B/cuzk" prove -v ${PROVE_FLAGS:-} "${extra[@]}" "$key" --batch "$W/out.$f" "${wits[@]}" || continue
    grep -h "cuzk prove:" "$W/prove-batch.$f.log" | tail -2
    check_proofs "$f" "$W/vk.$f.json"
    ls -la "$key" | awk '{print $5, $9}' >> "$W/sizes.txt"
    [ -n "${CLEAN:-}" ] && rm -f "$key"
done
fi
ls -la "$W/circuit" | awk '$9 != "." && $9 != ".." && NF >= 9 {print $5, $9}' >> "$W/sizes.txt"
echo "== scale K=$K P=$P ($(nproc) CPUs) in $W"
cat "$W/sizes.txt"
printf '%-24s %4s %10s %10s %10s\n' step rc seconds peak_GiB device_GiB
printf '%s\n' "${rows[@]}"
exit $fail
