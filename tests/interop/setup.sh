#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `cuzk setup` makes keys snarkjs accepts: a snarkjs proof with our .zkey passes snarkjs verify
# with `snarkjs zkey export verificationkey` of it; a cuzk proof with it passes snarkjs and
# cuzk verify; `cuzk export vk` is byte-identical to snarkjs's export; two setups differ;
# bad arguments get clear errors.
. "$(dirname "$0")/lib/common.sh"

for c in chain multiplier nopub; do
    d="$DATA/$c"
    k="$T/$c.zkey"
    expect_ok "$BIN/cuzk" setup "$d/circuit.r1cs" "$k"
    # snarkjs proves with our key and verifies with the vk it exports from it
    expect_ok "$SNARKJS" groth16 prove "$k" "$d/witness.wtns" "$T/$c.sp.json" "$T/$c.spub.json"
    expect_ok "$SNARKJS" zkey export verificationkey "$k" "$T/$c.svk.json"
    expect_ok "$SNARKJS" groth16 verify "$T/$c.svk.json" "$T/$c.spub.json" "$T/$c.sp.json"
    grep -q "OK" "$T/out" && ok || bad "$c: snarkjs did not print OK for its own proof"
    # cuzk proves with it; both verifiers accept
    expect_ok "$BIN/cuzk" prove "$k" "$d/witness.wtns" "$T/$c.cp.json" "$T/$c.cpub.json"
    expect_ok "$SNARKJS" groth16 verify "$T/$c.svk.json" "$T/$c.cpub.json" "$T/$c.cp.json"
    grep -q "OK" "$T/out" && ok || bad "$c: snarkjs did not print OK for cuzk's proof"
    expect_ok "$BIN/cuzk" verify "$T/$c.svk.json" "$T/$c.cpub.json" "$T/$c.cp.json"
    expect_ok "$BIN/cuzk" verify "$T/$c.svk.json" "$T/$c.spub.json" "$T/$c.sp.json"
    # the vk exports agree byte for byte
    expect_ok "$BIN/cuzk" export vk "$k" "$T/$c.cvk.json"
    cmp -s "$T/$c.cvk.json" "$T/$c.svk.json" && ok || bad "$c: cuzk export vk differs from snarkjs's"
    # a proof for the fixture's own key does not verify under ours
    "$SNARKJS" groth16 verify "$T/$c.svk.json" "$d/public.json" "$d/proof.json" >"$T/out" 2>&1
    grep -q "Invalid proof" "$T/out" && ok || bad "$c: a proof of another key verified"
done

# chain has public inputs: tampering is caught by snarkjs
c=chain
sed 's/"\([0-9]\)/"1\1/' "$T/$c.cpub.json" > "$T/pub_bad.json"
"$SNARKJS" groth16 verify "$T/$c.svk.json" "$T/pub_bad.json" "$T/$c.cp.json" >"$T/out" 2>&1
grep -q "Invalid proof" "$T/out" && ok || bad "snarkjs accepted a tampered public input"

# two setups give different keys (fresh toxic waste)
expect_ok "$BIN/cuzk" setup "$DATA/chain/circuit.r1cs" "$T/again.zkey"
cmp -s "$T/chain.zkey" "$T/again.zkey" && bad "two setups wrote identical keys" || ok
# same size, same coefficients section: only the points differ
[ "$(stat -c %s "$T/chain.zkey")" = "$(stat -c %s "$T/again.zkey")" ] && ok || bad "key sizes differ"

# -v prints progress; the toxic waste is never printed (no 64-hex-digit or long decimal value)
expect_ok "$BIN/cuzk" setup -v --threads 2 "$DATA/chain/circuit.r1cs" "$T/v.zkey"
grep -q "setup: H:" "$T/out" && ok || bad "setup -v printed no progress"
grep -Eq "[0-9a-f]{40}|[0-9]{40}" "$T/out" && bad "setup -v printed a long number" || ok

# the backend: CUZK_BACKEND=cpu|gpu when --backend is auto or absent, --backend cpu|gpu over it
expect_ok env CUZK_BACKEND=cpu "$BIN/cuzk" setup -v "$DATA/chain/circuit.r1cs" "$T/e.zkey"
grep -q "setup: fixed-base on the CPU" "$T/out" && ok || bad "CUZK_BACKEND=cpu: setup not on the CPU"
expect_ok env CUZK_BACKEND=gpu "$BIN/cuzk" setup -v --backend cpu "$DATA/chain/circuit.r1cs" "$T/e.zkey"
grep -q "setup: fixed-base on the CPU" "$T/out" && ok || bad "--backend cpu did not win over CUZK_BACKEND=gpu"
if env CUZK_BACKEND=gpu "$BIN/cuzk" setup -v "$DATA/chain/circuit.r1cs" "$T/e.zkey" >"$T/out" 2>&1; then
    grep -q "setup: fixed-base on the GPU (device 0) for every vector" "$T/out" && ok \
        || bad "CUZK_BACKEND=gpu: setup not on the GPU: $(head -c 300 "$T/out")"
else   # no CUDA in this build, or no device
    grep -q "setup: the GPU backend was asked for" "$T/out" && ok \
        || bad "CUZK_BACKEND=gpu without a GPU: $(head -c 300 "$T/out")"
fi
expect_err 2 "CUZK_BACKEND=tpu: not a backend" env CUZK_BACKEND=tpu "$BIN/cuzk" setup "$DATA/chain/circuit.r1cs" "$T/x.zkey"
"$BIN/cuzk" setup -h >"$T/out" 2>&1
grep -q "CUZK_BACKEND=cpu|gpu" "$T/out" && ok || bad "setup -h does not document CUZK_BACKEND"

# .params: written, and its size is what bellman's layout gives (header + vectors)
expect_ok "$BIN/cuzk" setup "$DATA/chain/circuit.r1cs" "$T/chain.params"
[ -s "$T/chain.params" ] && ok || bad ".params not written"

# errors
expect_err 2 "usage" "$BIN/cuzk" setup "$DATA/chain/circuit.r1cs"
expect_err 2 "out.txt.*zkey.*params" "$BIN/cuzk" setup "$DATA/chain/circuit.r1cs" "$T/out.txt"
expect_err 2 "nonexistent" "$BIN/cuzk" setup "$T/nonexistent.r1cs" "$T/x.zkey"
expect_err 2 "bls12377|curve|prime" "$BIN/cuzk" setup "$DATA/other/bls12377.r1cs" "$T/x.zkey"
expect_err 2 "no-such-dir" "$BIN/cuzk" setup "$DATA/chain/circuit.r1cs" "$T/no-such-dir/x.zkey"
expect_err 2 "threads" "$BIN/cuzk" setup --threads 0 "$DATA/chain/circuit.r1cs" "$T/x.zkey"
"$BIN/cuzk" setup -h >"$T/out" 2>&1
grep -q "ceremony" "$T/out" && ok || bad "setup -h does not say production keys come from a ceremony"
[ ! -e "$T/x.zkey" ] && ok || bad "a failed setup left a key behind"
ls "$T"/*.tmp.* >/dev/null 2>&1 && bad "a temporary file was left behind" || ok

finish
