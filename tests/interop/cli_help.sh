#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cuzk program as a snarkjs user meets it: a witness that does not satisfy the circuit
# gives no proof (cuzk prove verifies every proof before writing it; exit 1) and `cuzk wtns
# check` names the first failing constraint (snarkjs wtns check agrees).
. "$(dirname "$0")/lib/common.sh"
d="$DATA/chain"

# bad_wtns IN OUT: IN with the lowest bit of its last value flipped (a private wire)
bad_wtns() { cp "$1" "$2"; local n; n=$(stat -c %s "$2")
    local b; b=$(od -An -tu1 -j $((n - 32)) -N1 "$2" | tr -d ' ')
    printf "$(printf '\\%03o' $((b ^ 1)))" | dd of="$2" bs=1 seek=$((n - 32)) conv=notrunc status=none; }
bad_wtns "$d/witness.wtns" "$T/bad.wtns"
cmp -s "$d/witness.wtns" "$T/bad.wtns" && bad "bad.wtns is the witness unchanged" || ok

# ---- cuzk prove checks each proof before writing it ----
expect_err 1 "bad.wtns: the proof fails verification: the witness does not satisfy the circuit" \
    "$BIN/cuzk" prove "$d/circuit.zkey" "$T/bad.wtns" "$T/p.json" "$T/q.json"
[ ! -e "$T/p.json" ] && [ ! -e "$T/q.json" ] && ok || bad "a proof of an unsatisfied witness was written"
"$BIN/cuzk" setup "$d/circuit.r1cs" "$T/k.params" >/dev/null 2>&1 || bad "setup of k.params"
expect_err 1 "the witness does not satisfy the circuit" \
    "$BIN/cuzk" prove --r1cs "$d/circuit.r1cs" "$T/k.params" "$T/bad.wtns" "$T/p.json" "$T/q.json"
mkdir "$T/b"
expect_err 1 "bad.wtns: the proof fails" "$BIN/cuzk" prove "$d/circuit.zkey" --batch "$T/b" "$d/witness.wtns" "$T/bad.wtns"
[ -z "$(ls -A "$T/b")" ] && ok || bad "prove --batch with one unsatisfied witness wrote $(ls -A "$T/b")"
# --no-verify writes the proof unchecked (which snarkjs then rejects)
expect_ok "$BIN/cuzk" prove --no-verify "$d/circuit.zkey" "$T/bad.wtns" "$T/p.json" "$T/q.json"
"$SNARKJS" groth16 verify "$d/verification_key.json" "$T/q.json" "$T/p.json" >"$T/out" 2>&1
grep -q OK "$T/out" && bad "snarkjs accepts the proof of an unsatisfied witness" || ok
# a good witness still proves, and -v reports the check
expect_ok "$BIN/cuzk" prove -v "$d/circuit.zkey" "$d/witness.wtns" "$T/p.json" "$T/q.json"
grep -q "1 proof verified in" "$T/out" && ok || bad "prove -v does not report the check: $(cat "$T/out")"
if [ "${CUZK_BACKEND:-}" != gpu ]; then
    "$BIN/cuzk" prove -v "$d/circuit.zkey" "$d/witness.wtns" "$T/p.json" "$T/q.json" 2>&1 | grep -q "backend cpu" \
        && { "$BIN/cuzk" prove -v "$d/circuit.zkey" "$d/witness.wtns" "$T/p.json" "$T/q.json" 2>&1 | grep -qi device \
             && bad "prove -v speaks of a device on the CPU backend" || ok; } || ok
fi
expect_ok "$SNARKJS" groth16 verify "$d/verification_key.json" "$T/q.json" "$T/p.json"
expect_ok "$BIN/cuzk" prove --help
grep -q "1  a proof fails verification" "$T/out" && ok || bad "prove --help does not give the exit status"

finish
