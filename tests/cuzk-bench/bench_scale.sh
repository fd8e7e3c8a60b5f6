#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cuzk-bench scale on a small generated circuit (3000 constraints, 2 partitions): the setup in
# memory, one batch proof, verification, for both key formats. Checks: exit 0 and every proof
# verified (JSON report), the files written with --out (checked with cuzk verify, and with
# snarkjs groth16 verify when tests/js has it; its absence is only noted), and clear errors
# (exit 1 naming the file) for a missing witness, a file that is not a witness and a missing
# .r1cs, exit 2 for bad usage. Beside it, the GPU options both scale and porep take (--gpu
# NAME=VALUE; unused on the CPU backend, refused with the reason when wrong) and the
# environment cuzk-bench reads once (a bad value refused naming the variable).
set -uo pipefail
BIN="${CUZK_BIN:?}"; SRC="${CUZK_SRC:?}"
BENCH="$BIN/cuzk-bench"; CUZK="$BIN/cuzk"
SNARKJS="$SRC/tests/js/node_modules/.bin/snarkjs"
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
pass=0; failed=0
ok()  { pass=$((pass + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

json_check() {   # json_check FILE EXPR (JavaScript over r) with node, else python3
    if command -v node >/dev/null 2>&1; then
        node -e 'const fs=require("fs"); const r=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));
                 process.exit((function(){return eval(process.argv[2]);})() ? 0 : 1)' "$1" "$2"
    else
        python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1"   # at least valid JSON
    fi
}
expect_json() { if json_check "$1" "$2"; then ok; else bad "$(basename "$1"): $2: $(head -c 600 "$1")"; fi; }
# expect_err CODE PATTERN cmd...: exit CODE and PATTERN (grep -E) on stderr
expect_err() {
    local code=$1 pat=$2; shift 2
    "$@" >"$T/out" 2>"$T/err"; local rc=$?
    if [ $rc -eq "$code" ] && grep -Eq -e "$pat" "$T/err"; then ok
    else bad "$* -> exit $rc, stderr: $(tail -c 300 "$T/err") (wanted $code and /$pat/)"; fi
}

export CUZK_BACKEND=cpu CUZK_THREADS=2
"$CUZK" gen --constraints 3000 --partitions 2 -q -o "$T/c" >"$T/gen.log" 2>&1 \
    && ok || { bad "cuzk gen: $(tail -c 400 "$T/gen.log")"; echo "$pass passed, $failed failed"; exit 1; }
W=(--witness "$T/c/witness-0.wtns" --witness "$T/c/witness-1.wtns")

have_snarkjs=0
if [ -x "$SNARKJS" ]; then have_snarkjs=1; else echo "NOTE: snarkjs is not installed (scripts/deps.sh): its checks are skipped"; fi

for f in params zkey; do
    out="$T/out.$f"
    "$BENCH" scale --format "$f" --r1cs "$T/c/circuit.r1cs" "${W[@]}" --out "$out" --runs 2 --json \
        >"$T/$f.json" 2>"$T/$f.err"
    rc=$?
    if [ $rc -eq 0 ]; then ok; else bad "scale --format $f: exit $rc: $(tail -c 600 "$T/$f.err")"; continue; fi
    expect_json "$T/$f.json" "r.format === '$f' && r.partitions === 2 && r.verified === 2 && r.invalid === 0"
    expect_json "$T/$f.json" 'r.constraints === 3000 && r.log2_domain === 12 && r.key_bytes > 0 && r.peak_rss_gib > 0'
    expect_json "$T/$f.json" '["r1cs_load","setup","vk","witness_load","prove_cold","prove_warm","verify","write"].every(k => r.stages[k].ms >= 0 && r.stages[k].peak_rss_gib > 0)'
    expect_json "$T/$f.json" 'r.prove_cold.total_ms > 0 && r.prove_cold.msm_ms > 0 && r.prove_warm.total_ms > 0'
    # a progress line per stage and the setup's own lines on stderr
    grep -q "^scale: setup done" "$T/$f.err" && grep -q "^setup: " "$T/$f.err" && ok \
        || bad "scale --format $f: no progress lines: $(head -c 400 "$T/$f.err")"
    for i in 0 1; do
        if "$CUZK" verify "$out/vk.json" "$out/public-$i.json" "$out/proof-$i.json" >"$T/v" 2>&1; then ok
        else bad "cuzk verify $f proof $i: $(cat "$T/v")"; fi
        if [ "$f" = params ]; then
            if "$CUZK" verify "$out/vk.json" "$out/public-$i.json" "$out/proof-$i.bin" >"$T/v" 2>&1; then ok
            else bad "cuzk verify $f proof-$i.bin: $(cat "$T/v")"; fi
        fi
        if [ $have_snarkjs = 1 ]; then
            if "$SNARKJS" groth16 verify "$out/vk.json" "$out/public-$i.json" "$out/proof-$i.json" >"$T/s" 2>&1 \
                && grep -q "OK" "$T/s"; then ok
            else bad "snarkjs groth16 verify $f proof $i: $(tail -c 300 "$T/s")"; fi
        fi
    done
done

# the human report
"$BENCH" scale --r1cs "$T/c/circuit.r1cs" --witness "$T/c/witness-0.wtns" >"$T/human.txt" 2>/dev/null \
    && grep -q "^prove_cold" "$T/human.txt" && grep -q "proofs: 1 verified, 0 invalid" "$T/human.txt" && ok \
    || bad "human report: $(head -c 600 "$T/human.txt")"

# errors: named files, before the setup runs
expect_err 1 "nope\.wtns: cannot read" "$BENCH" scale --r1cs "$T/c/circuit.r1cs" --witness "$T/c/witness-0.wtns" --witness "$T/nope.wtns"
grep -q "^scale: setup" "$T/err" && bad "a missing witness is found only after the setup" || ok
expect_err 1 "nope\.r1cs: cannot read" "$BENCH" scale --r1cs "$T/nope.r1cs" --witness "$T/c/witness-0.wtns"
expect_err 1 "circuit\.r1cs: .*not a \.wtns" "$BENCH" scale --r1cs "$T/c/circuit.r1cs" --witness "$T/c/circuit.r1cs"
"$CUZK" gen --constraints 100 -q -o "$T/small" >/dev/null 2>&1
expect_err 1 "small/witness-0\.wtns: [0-9]+ values, but the circuit .*circuit\.r1cs has 3005 wires" \
    "$BENCH" scale --format zkey --r1cs "$T/c/circuit.r1cs" --witness "$T/c/witness-0.wtns" --witness "$T/small/witness-0.wtns"
expect_err 2 "needed" "$BENCH" scale --r1cs "$T/c/circuit.r1cs"
expect_err 2 "--format takes" "$BENCH" scale --format json --r1cs "$T/c/circuit.r1cs" --witness "$T/c/witness-0.wtns"

# --gpu NAME=VALUE on scale and porep
"$BENCH" scale --format zkey --r1cs "$T/c/circuit.r1cs" --witness "$T/c/witness-0.wtns" --gpu synth=off \
    --gpu b_g2=cpu --json >"$T/g.json" 2>"$T/g.err" && ok || bad "scale --gpu: $(tail -c 400 "$T/g.err")"
expect_json "$T/g.json" "r.verified === 1 && r.invalid === 0"
expect_err 2 "cuzk-bench scale: --gpu synth=bogus: gpu option synth: 'bogus' is not one of" \
    "$BENCH" scale --r1cs "$T/c/circuit.r1cs" --witness "$T/c/witness-0.wtns" --gpu synth=bogus
"$BENCH" porep -k 10 --runs 1 --backend cpu --gpu bases=stream --gpu msm_chunk=64 >"$T/p.txt" 2>"$T/p.err" \
    && grep -q "^cpu " "$T/p.txt" && ok || bad "porep --gpu: $(tail -c 400 "$T/p.err")"
expect_err 2 "cuzk-bench porep: --gpu b-g2=cpu: gpu option 'b-g2' is unknown" \
    "$BENCH" porep -k 10 --runs 1 --backend cpu --gpu b-g2=cpu
expect_err 2 "^cuzk-bench: CUZK_BACKEND=fast: not a backend" env CUZK_BACKEND=fast "$BENCH" porep -k 10 --runs 1
expect_err 2 "^cuzk-bench: CUZK_THREADS=-1: " env CUZK_THREADS=-1 "$BENCH" scale --r1cs "$T/c/circuit.r1cs" \
    --witness "$T/c/witness-0.wtns"

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
