#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bellman/bellperson (Filecoin) parameters through the CLI: keys for the fixture circuits
# (`cuzk setup ... key.params`, and the test tool's own in-test setup), proofs with
# `cuzk prove --r1cs`, the verification key exported to snarkjs JSON, and both
# `cuzk verify` and `snarkjs groth16 verify` accepting the proofs; the 192-byte Filecoin
# proof form; the decoded cache; tampering and bad input (errors name the file).
. "$(dirname "$0")/lib/common.sh"
TP="$BIN/tests/test_params"

for c in multiplier chain nopub; do
    d="$DATA/$c"
    for maker in setup tool; do
        k="$T/$c.$maker.params"
        if [ $maker = setup ]; then
            expect_ok "$BIN/cuzk" setup "$d/circuit.r1cs" "$k"
        elif [ -x "$TP" ]; then
            expect_ok "$TP" --write-key "$d/circuit.r1cs" "$k"
        else
            continue
        fi
        expect_ok "$BIN/cuzk" info "$k"; grep -q "bellman" "$T/out" && ok || bad "info $k"
        expect_ok "$BIN/cuzk" prove --filecoin "$T/$c.$maker.proof.bin" --r1cs "$d/circuit.r1cs" "$k" \
            "$d/witness.wtns" "$T/$c.$maker.proof.json" "$T/$c.$maker.public.json"
        expect_ok "$BIN/cuzk" export vk "$k" "$T/$c.$maker.vk.json"
        expect_ok "$SNARKJS" groth16 verify "$T/$c.$maker.vk.json" "$T/$c.$maker.public.json" "$T/$c.$maker.proof.json"
        grep -q "OK" "$T/out" && ok || bad "snarkjs did not print OK for $c ($maker)"
        expect_ok "$BIN/cuzk" verify "$T/$c.$maker.vk.json" "$T/$c.$maker.public.json" "$T/$c.$maker.proof.json"
        expect_ok "$BIN/cuzk" verify "$T/$c.$maker.vk.json" "$T/$c.$maker.public.json" "$T/$c.$maker.proof.bin"
        [ "$(stat -c %s "$T/$c.$maker.proof.bin")" = 192 ] && ok || bad "$c: Filecoin proof is not 192 bytes"
        # the public inputs are the witness's, as snarkjs writes them
        cmp -s "$T/$c.$maker.public.json" "$d/public.json" && ok || bad "$c: public.json differs from snarkjs's"
    done
done

d="$DATA/chain"; k="$T/chain.setup.params"
# fixed r, s: the same proof on one thread and on all, with and without subgroup checks
expect_ok "$CUZKT" prove --test-fixed-rs 12345 67890 --r1cs "$d/circuit.r1cs" "$k" "$d/witness.wtns" "$T/f1.json" "$T/p1.json"
expect_ok "$CUZKT" prove --threads 1 --trusted --test-fixed-rs 12345 67890 --r1cs "$d/circuit.r1cs" "$k" "$d/witness.wtns" "$T/f2.json" "$T/p2.json"
cmp -s "$T/f1.json" "$T/f2.json" && ok || bad "fixed r, s: proofs differ"
# the decoded cache: written on the first load, used on the second
rm -f "$k.cuzkcache"
expect_ok "$BIN/cuzk" prove --cache --r1cs "$d/circuit.r1cs" "$k" "$d/witness.wtns" "$T/c1.json" "$T/pc.json"
[ -s "$k.cuzkcache" ] && ok || bad "no cache file after prove --cache"
expect_ok "$BIN/cuzk" prove --cache --r1cs "$d/circuit.r1cs" "$k" "$d/witness.wtns" "$T/c2.json" "$T/pc.json"
expect_ok "$SNARKJS" groth16 verify "$T/chain.setup.vk.json" "$T/pc.json" "$T/c2.json"

# tampering: a changed public input, a changed Filecoin proof
sed 's/"\([0-9]\)/"1\1/' "$T/chain.setup.public.json" > "$T/pub_bad.json"
expect_err 1 "INVALID" "$BIN/cuzk" verify "$T/chain.setup.vk.json" "$T/pub_bad.json" "$T/chain.setup.proof.bin"
"$SNARKJS" groth16 verify "$T/chain.setup.vk.json" "$T/pub_bad.json" "$T/chain.setup.proof.json" >"$T/out" 2>&1
grep -q "Invalid proof" "$T/out" && ok || bad "snarkjs accepted a tampered public input"
cp "$T/chain.setup.proof.bin" "$T/bad.bin"
printf '\x00' | dd of="$T/bad.bin" bs=1 seek=0 conv=notrunc 2>/dev/null   # compressed flag gone
expect_err 2 "bad.bin.*(flag|compress)" "$BIN/cuzk" verify "$T/chain.setup.vk.json" "$T/chain.setup.public.json" "$T/bad.bin"
# C of another proof in the Filecoin form
cp "$T/chain.setup.proof.bin" "$T/mix.bin"
"$BIN/cuzk" prove --filecoin "$T/other.bin" --r1cs "$d/circuit.r1cs" "$k" "$d/witness.wtns" "$T/o.json" "$T/op.json" >/dev/null 2>&1
dd if="$T/other.bin" of="$T/mix.bin" bs=1 skip=144 seek=144 count=48 conv=notrunc 2>/dev/null
expect_err 1 "INVALID" "$BIN/cuzk" verify "$T/chain.setup.vk.json" "$T/chain.setup.public.json" "$T/mix.bin"

# bad input: exit 2, the message names the file and what is wrong
head -c 5000 "$k" > "$T/trunc.params"
expect_err 2 "trunc.params.*vector" "$BIN/cuzk" prove --r1cs "$d/circuit.r1cs" "$T/trunc.params" "$d/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "trunc.params" "$BIN/cuzk" info "$T/trunc.params"
expect_err 2 "multiplier.setup.params: vector .* needs" "$BIN/cuzk" prove --r1cs "$d/circuit.r1cs" "$T/multiplier.setup.params" "$d/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "witness.wtns" "$BIN/cuzk" prove --r1cs "$DATA/multiplier/circuit.r1cs" "$T/multiplier.setup.params" "$d/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "nonexistent" "$BIN/cuzk" prove --r1cs "$d/circuit.r1cs" "$T/nonexistent.params" "$d/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "nonexistent" "$BIN/cuzk" export vk "$T/nonexistent.params" "$T/x.json"

finish
