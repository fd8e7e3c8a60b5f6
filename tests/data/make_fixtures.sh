#!/usr/bin/env bash
# Regenerates the circom/snarkjs fixtures under tests/data/circuits/<name>/:
#   circuit.r1cs, witness.wtns, circuit.zkey (Groth16, one contribution),
#   verification_key.json, proof.json, public.json (a snarkjs proof of the witness),
#   r1cs_info.txt (snarkjs r1cs info), and circuits/other/<prime>.r1cs (other fields).
# The circuits (circuit.circom) and their inputs (input.json) are kept in the same folders.
#
# Needs node and npm; circom2 and snarkjs are installed from npm into a scratch folder
# outside the repository ($JS, default /tmp/js):
#   mkdir -p /tmp/js && cd /tmp/js && npm init -y && npm install snarkjs circom2
# Contributions draw fresh randomness, so every run gives different keys and proofs.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
JS="${JS:-/tmp/js}"
SNARKJS="$JS/node_modules/.bin/snarkjs"
CIRCOM="$JS/node_modules/.bin/circom2"
[ -x "$SNARKJS" ] && [ -x "$CIRCOM" ] || {
    echo "install snarkjs and circom2 into $JS first (see the header of $0)" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# ptau <curve> <power>: a small powers-of-tau file ready for phase 2, in $WORK.
ptau() {
    local curve=$1 power=$2 p="$WORK/$1_$2"
    "$SNARKJS" powersoftau new "$curve" "$power" "$p.0.ptau" >/dev/null
    "$SNARKJS" powersoftau contribute "$p.0.ptau" "$p.1.ptau" --name=fixtures -e="cuzk fixtures" >/dev/null
    "$SNARKJS" powersoftau prepare phase2 "$p.1.ptau" "$p.ptau" >/dev/null
    echo "$p.ptau"
}

# fixture <name> <prime> <ptau>
fixture() {
    local name=$1 prime=$2 pt=$3 dir="$HERE/circuits/$1" w="$WORK/$1"
    mkdir -p "$w"
    "$CIRCOM" "$dir/circuit.circom" --r1cs --wasm --prime "$prime" -o "$w" >/dev/null
    cp "$w/circuit.r1cs" "$dir/circuit.r1cs"
    "$SNARKJS" wtns calculate "$w/circuit_js/circuit.wasm" "$dir/input.json" "$dir/witness.wtns"
    "$SNARKJS" wtns check "$dir/circuit.r1cs" "$dir/witness.wtns" >/dev/null
    "$SNARKJS" groth16 setup "$dir/circuit.r1cs" "$pt" "$w/c0.zkey" >/dev/null
    "$SNARKJS" zkey contribute "$w/c0.zkey" "$dir/circuit.zkey" --name=fixtures -e="cuzk fixtures $name" >/dev/null
    "$SNARKJS" zkey export verificationkey "$dir/circuit.zkey" "$dir/verification_key.json" >/dev/null
    "$SNARKJS" groth16 prove "$dir/circuit.zkey" "$dir/witness.wtns" "$dir/proof.json" "$dir/public.json"
    "$SNARKJS" groth16 verify "$dir/verification_key.json" "$dir/public.json" "$dir/proof.json"
    "$SNARKJS" r1cs info "$dir/circuit.r1cs" > "$dir/r1cs_info.txt"
    echo "$name: done"
}

# r1cs_other <prime>: the multiplier's .r1cs over another field, for the wrong-prime tests.
r1cs_other() {
    local w="$WORK/other_$1"
    mkdir -p "$w" "$HERE/circuits/other"
    "$CIRCOM" "$HERE/circuits/multiplier/circuit.circom" --r1cs --prime "$1" -o "$w" >/dev/null
    cp "$w/circuit.r1cs" "$HERE/circuits/other/$1.r1cs"
}

BLS=$(ptau bls12381 8)
fixture multiplier bls12381 "$BLS"
fixture chain bls12381 "$BLS"
fixture nopub bls12381 "$BLS"
BN=$(ptau bn128 4)
fixture bn128 bn128 "$BN"
r1cs_other bls12377
r1cs_other goldilocks
