#!/bin/bash
# Real keys and proofs at scale, end to end, with the time and peak host memory of each step:
#   cuzk gen (porep profile, domain 2^K, P partitions) -> cuzk setup (.zkey and .params)
#   -> cuzk prove of every partition with each key -> cuzk verify, and snarkjs groth16 verify
#   when snarkjs is installed (tests/js). Prints a table last.
#   K=20 P=1 FORMATS="zkey params" BUILD=build WORK=/tmp/cuzk-scale bash bench/scale.sh
# Extra environment reaches the programs (CUZK_BACKEND, CUZK_THREADS, CUZK_B_G2, ...).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
K=${K:-20}; P=${P:-1}; FORMATS=${FORMATS:-zkey params}
B=${BUILD:-$ROOT/build}
W=${WORK:-/tmp/cuzk-scale-$K}
SNARKJS=$ROOT/tests/js/node_modules/.bin/snarkjs
mkdir -p "$W"
rows=()
fail=0
# step NAME cmd...: runs it under /usr/bin/time, records wall seconds and peak RSS
step() {
    local name=$1; shift
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$W/rss" "$@" >"$W/$name.log" 2>&1
    local rc=$?
    t1=$(date +%s.%N)
    local rss; rss=$(tail -1 "$W/rss")
    rows+=("$(printf '%-28s %6s %10.2f %10.2f' "$name" "$rc" "$(echo "$t1 - $t0" | bc)" "$(echo "$rss / 1048576" | bc -l)")")
    [ $rc -eq 0 ] || { fail=1; echo "step $name failed (rc $rc):"; tail -5 "$W/$name.log"; }
    return $rc
}

step gen "$B/cuzk" gen --domain "$K" --partitions "$P" --profile porep -o "$W/circuit"
for f in $FORMATS; do
    key=$W/key.$f
    step "setup.$f" "$B/cuzk" setup "$W/circuit/circuit.r1cs" "$key" || continue
    step "export-vk.$f" "$B/cuzk" export vk "$key" "$W/vk.$f.json" || continue
    for ((p = 0; p < P; p++)); do
        wt=$W/circuit/witness-$p.wtns
        if [ "$f" = zkey ]; then
            step "prove.$f.$p" "$B/cuzk" prove -v "$key" "$wt" "$W/proof.$f.$p.json" "$W/public.$f.$p.json"
        else
            step "prove.$f.$p" "$B/cuzk" prove -v --r1cs "$W/circuit/circuit.r1cs" "$key" "$wt" \
                "$W/proof.$f.$p.json" "$W/public.$f.$p.json"
        fi || continue
        grep -h "cuzk prove:" "$W/prove.$f.$p.log" | tail -2
        step "verify.$f.$p" "$B/cuzk" verify "$W/vk.$f.json" "$W/public.$f.$p.json" "$W/proof.$f.$p.json"
        if [ -x "$SNARKJS" ]; then
            step "snarkjs-verify.$f.$p" "$SNARKJS" groth16 verify "$W/vk.$f.json" "$W/public.$f.$p.json" \
                "$W/proof.$f.$p.json"
            grep -q "OK" "$W/snarkjs-verify.$f.$p.log" || { fail=1; echo "snarkjs rejected proof.$f.$p"; }
        fi
    done
done
ls -la "$W/circuit" "$W"/key.* 2>/dev/null | awk '{print $5, $9}' | grep -v "^ *$" > "$W/sizes.txt"
echo "== scale K=$K P=$P ($(nproc) CPUs) in $W"
printf '%-28s %6s %10s %10s\n' step rc seconds peak_GiB
printf '%s\n' "${rows[@]}"
exit $fail
