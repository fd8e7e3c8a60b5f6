#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cuzk gen` outputs read by snarkjs: `r1cs info` reports the counts we wrote, `wtns check`
# accepts every witness of both profiles (and rejects a tampered one), and the domain rule
# holds: `cuzk gen --domain 10` fits a 2^10 powers of tau for `snarkjs groth16 setup`, one
# constraint more does not, and snarkjs proves and verifies with a generated witness.
. "$(dirname "$0")/lib/common.sh"
# snarkjs exits 0 on some failures: judge by its output too.
sj() { "$SNARKJS" "$@" >"$T/out" 2>&1; }
field() { sed 's/\x1b\[[0-9;]*m//g' "$T/out" | grep -F "$1" | sed 's/.*: *//' | head -1; }

check_dir() {   # dir n partitions
    local d=$1 n=$2 parts=$3
    sj r1cs info "$d/circuit.r1cs"
    [ "$(field '# of Constraints')" = "$n" ] && ok || bad "$d: snarkjs r1cs info: constraints $(field '# of Constraints'), wanted $n"
    [ "$(field '# of Outputs')" = "0" ] && ok || bad "$d: outputs $(field '# of Outputs')"
    local wires; wires=$(field '# of Wires')
    [ "$(field '# of Labels')" = "$wires" ] && ok || bad "$d: labels $(field '# of Labels') != wires $wires"
    for ((p = 0; p < parts; p++)); do
        sj wtns check "$d/circuit.r1cs" "$d/witness-$p.wtns"
        grep -q "WITNESS IS CORRECT" "$T/out" && ! grep -q "NOT CORRECT" "$T/out" && ok \
            || { bad "$d: snarkjs wtns check rejects witness-$p"; tail -3 "$T/out" >&2; }
    done
}

for prof in porep dense; do
    for n in 1 3000 20000; do
        d="$T/$prof-$n"
        if "$BIN/cuzk" gen --constraints "$n" --partitions 2 --profile "$prof" --seed "$n" -q -o "$d"; then ok
        else bad "cuzk gen --constraints $n --profile $prof failed"; continue; fi
        check_dir "$d" "$n" 2
    done
done

# A tampered witness is rejected: public input 1 (used by the first constraint), low bit.
d="$T/porep-3000"
python3 - "$d/witness-0.wtns" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[76 + 32] ^= 1   # 76-byte prefix, then wire 0, wire 1
open(p, 'wb').write(bytes(b))
EOF
sj wtns check "$d/circuit.r1cs" "$d/witness-0.wtns"
grep -q "NOT CORRECT" "$T/out" && ok || bad "snarkjs accepted a tampered witness"

# Domain rule against snarkjs groth16 setup with a 2^10 powers of tau.
cd "$T" || exit 1
sj powersoftau new bls12381 10 p0.ptau && sj powersoftau prepare phase2 p0.ptau p10.ptau
if [ -s p10.ptau ]; then
    ok
    "$BIN/cuzk" gen --domain 10 --partitions 2 --seed 7 -q -o fit || bad "cuzk gen --domain 10"
    sj r1cs info fit/circuit.r1cs; n=$(field '# of Constraints'); np=$(field '# of Public Inputs')
    [ $((n + np + 1)) -eq 1024 ] && ok || bad "--domain 10: N $n + public $np + 1 != 1024"
    sj groth16 setup fit/circuit.r1cs p10.ptau fit/c.zkey
    [ -s fit/c.zkey ] && ! grep -qi error "$T/out" && ok || { bad "snarkjs groth16 setup refused --domain 10"; tail -3 "$T/out" >&2; }
    sj groth16 prove fit/c.zkey fit/witness-1.wtns fit/proof.json fit/public.json \
        && sj zkey export verificationkey fit/c.zkey fit/vk.json \
        && sj groth16 verify fit/vk.json fit/public.json fit/proof.json
    grep -q "OK" "$T/out" && ok || { bad "snarkjs prove/verify with a generated witness"; tail -3 "$T/out" >&2; }
    "$BIN/cuzk" gen --constraints $((n + 1)) --seed 7 -q -o over || bad "cuzk gen N+1"
    sj groth16 setup over/circuit.r1cs p10.ptau over/c.zkey
    grep -q "too big" "$T/out" && ok || bad "snarkjs accepted N+1 constraints on a 2^10 ptau"
else
    bad "snarkjs powersoftau failed"; tail -3 "$T/out" >&2
fi

# CLI misuse: exit 2 with a message.
"$BIN/cuzk" gen --constraints 10 >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "missing -o not refused"
"$BIN/cuzk" gen --constraints 10 --profile nope -o "$T/x" 2>"$T/err"; [ $? -eq 2 ] && grep -q profile "$T/err" && ok || bad "bad profile not refused"
"$BIN/cuzk" gen --constraints 0 -o "$T/x" 2>/dev/null; [ $? -eq 2 ] && ok || bad "0 constraints not refused"

finish
