#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Interoperability with snarkjs: proofs made by cuzk pass `snarkjs groth16 verify`, snarkjs's
# proofs pass `cuzk verify`, `cuzk export vk` writes snarkjs's exact bytes, fixed r and s give
# reproducible proofs, tampering is caught, and bad inputs get clear errors naming the file.
. "$(dirname "$0")/lib/common.sh"

for c in multiplier chain nopub; do
    d="$DATA/$c"
    expect_ok "$BIN/cuzk" prove "$d/circuit.zkey" "$d/witness.wtns" "$T/$c.proof.json" "$T/$c.public.json"
    expect_ok "$SNARKJS" groth16 verify "$d/verification_key.json" "$T/$c.public.json" "$T/$c.proof.json"
    grep -q "OK" "$T/out" && ok || bad "snarkjs did not print OK for $c"
    expect_ok "$BIN/cuzk" verify "$d/verification_key.json" "$T/$c.public.json" "$T/$c.proof.json"
    # snarkjs's own proof verifies with cuzk
    expect_ok "$BIN/cuzk" verify "$d/verification_key.json" "$d/public.json" "$d/proof.json"
    # our public.json is snarkjs's public.json
    cmp -s "$T/$c.public.json" "$d/public.json" && ok || bad "$c: public.json differs from snarkjs's"
    # the exported verification key is byte-identical to snarkjs's
    expect_ok "$BIN/cuzk" export vk "$d/circuit.zkey" "$T/$c.vk.json"
    cmp -s "$T/$c.vk.json" "$d/verification_key.json" && ok || bad "$c: exported vk differs from snarkjs's"
    expect_ok "$SNARKJS" groth16 verify "$T/$c.vk.json" "$T/$c.public.json" "$T/$c.proof.json"
done

# Fixed r and s (tests only) give identical proofs; fresh randomness gives different ones.
d="$DATA/chain"
expect_ok "$CUZKT" prove --test-fixed-rs 12345 67890 "$d/circuit.zkey" "$d/witness.wtns" "$T/f1.json" "$T/p1.json"
expect_ok "$CUZKT" prove --threads 1 --test-fixed-rs 12345 67890 "$d/circuit.zkey" "$d/witness.wtns" "$T/f2.json" "$T/p2.json"
cmp -s "$T/f1.json" "$T/f2.json" && ok || bad "fixed r, s: proofs differ (1 thread vs default)"
expect_ok "$SNARKJS" groth16 verify "$d/verification_key.json" "$T/p1.json" "$T/f1.json"
expect_ok "$BIN/cuzk" prove "$d/circuit.zkey" "$d/witness.wtns" "$T/r1.json" "$T/p1.json"
expect_ok "$BIN/cuzk" prove "$d/circuit.zkey" "$d/witness.wtns" "$T/r2.json" "$T/p2.json"
cmp -s "$T/r1.json" "$T/r2.json" && bad "two proofs with fresh r, s are identical" || ok
# r = s = 0 is still a valid proof (edge case of the epilogue)
expect_ok "$CUZKT" prove --test-fixed-rs 0 0 "$d/circuit.zkey" "$d/witness.wtns" "$T/z.json" "$T/pz.json"
expect_ok "$SNARKJS" groth16 verify "$d/verification_key.json" "$T/pz.json" "$T/z.json"
# the shipped cuzk has no --test-fixed-rs (proofs without blinding): refused, nothing written
expect_err 2 "unknown option '--test-fixed-rs'" "$BIN/cuzk" prove --test-fixed-rs 0 0 "$d/circuit.zkey" \
    "$d/witness.wtns" "$T/nz.json" "$T/npz.json"
[ ! -e "$T/nz.json" ] && ok || bad "cuzk prove --test-fixed-rs wrote a proof"
"$BIN/cuzk" prove --help >"$T/out" 2>&1; grep -q "test-fixed-rs" "$T/out" && bad "cuzk --help names --test-fixed-rs" || ok

# Tampering: a changed public input or proof is rejected by both verifiers.
sed 's/"\([0-9]\)/"1\1/' "$T/chain.public.json" > "$T/pub_bad.json"
expect_err 1 "INVALID" "$BIN/cuzk" verify "$d/verification_key.json" "$T/pub_bad.json" "$T/chain.proof.json"
"$SNARKJS" groth16 verify "$d/verification_key.json" "$T/pub_bad.json" "$T/chain.proof.json" >"$T/out" 2>&1
grep -q "Invalid proof" "$T/out" && ok || bad "snarkjs accepted a tampered public input"
# swapping pi_a for another proof's pi_a
node -e '
const fs=require("fs"); const a=JSON.parse(fs.readFileSync(process.argv[1])); const b=JSON.parse(fs.readFileSync(process.argv[2]));
a.pi_a=b.pi_a; fs.writeFileSync(process.argv[3], JSON.stringify(a));' "$T/chain.proof.json" "$T/r2.json" "$T/proof_bad.json"
expect_err 1 "INVALID" "$BIN/cuzk" verify "$d/verification_key.json" "$T/chain.public.json" "$T/proof_bad.json"
# a wrong number of public inputs
echo '["1"]' > "$T/pub_short.json"
expect_err 1 "public inputs" "$BIN/cuzk" verify "$d/verification_key.json" "$T/pub_short.json" "$T/chain.proof.json"

# Bad input: errors name the file and the problem, exit 2, no crash.
head -c 3000 "$d/circuit.zkey" > "$T/trunc.zkey"
expect_err 2 "trunc.zkey" "$BIN/cuzk" prove "$T/trunc.zkey" "$d/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "circuit.zkey.*(bn|curve|prime|BN)" "$BIN/cuzk" prove "$DATA/bn128/circuit.zkey" "$DATA/bn128/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "witness.wtns" "$BIN/cuzk" prove "$DATA/multiplier/circuit.zkey" "$DATA/chain/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "nonexistent" "$BIN/cuzk" prove "$T/nonexistent.zkey" "$d/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "chain.proof.json is a proof \\(proof.json\\), not a verification key: arguments in the wrong order" "$BIN/cuzk" verify "$T/chain.proof.json" "$T/chain.public.json" "$T/chain.proof.json"
printf '{"pi_a": [' > "$T/broken.json"
expect_err 2 "broken.json" "$BIN/cuzk" verify "$d/verification_key.json" "$T/chain.public.json" "$T/broken.json"

# info on every kind of file, and on a broken one
expect_ok "$BIN/cuzk" info "$d/circuit.zkey"; grep -q "domain 2^" "$T/out" && ok || bad "info zkey"
expect_ok "$BIN/cuzk" info "$d/circuit.r1cs"; grep -q "constraints" "$T/out" && ok || bad "info r1cs"
expect_ok "$BIN/cuzk" info "$d/witness.wtns"; grep -q "values" "$T/out" && ok || bad "info wtns"
expect_ok "$BIN/cuzk" info "$d/proof.json"; grep -q "proof" "$T/out" && ok || bad "info proof"
expect_ok "$BIN/cuzk" info "$d/verification_key.json"; grep -q "verification key" "$T/out" && ok || bad "info vk"
expect_err 2 "trunc.zkey" "$BIN/cuzk" info "$T/trunc.zkey"

# A batch (`cuzk prove --batch DIR`): one proof per witness of a generated 3-partition
# circuit, with a .zkey and with bellman .params + .r1cs; every proof passes snarkjs verify,
# the partitions' public inputs differ, and a bad witness in the batch is named.
expect_ok "$BIN/cuzk" gen --constraints 3000 --partitions 3 --seed 11 -q -o "$T/bat"
for f in zkey params; do
    expect_ok "$BIN/cuzk" setup "$T/bat/circuit.r1cs" "$T/bat/k.$f"
    expect_ok "$BIN/cuzk" export vk "$T/bat/k.$f" "$T/bat/vk.$f.json"
    mkdir -p "$T/bat/out.$f"
    extra=(); [ $f = params ] && extra=(--r1cs "$T/bat/circuit.r1cs")
    expect_ok "$BIN/cuzk" prove "${extra[@]}" "$T/bat/k.$f" --batch "$T/bat/out.$f" \
        "$T/bat/witness-0.wtns" "$T/bat/witness-1.wtns" "$T/bat/witness-2.wtns"
    for i in 0 1 2; do
        "$SNARKJS" groth16 verify "$T/bat/vk.$f.json" "$T/bat/out.$f/public-$i.json" "$T/bat/out.$f/proof-$i.json" >"$T/out" 2>&1
        grep -q "OK" "$T/out" && ok || bad "batch ($f): snarkjs rejects proof $i"
    done
    cmp -s "$T/bat/out.$f/public-0.json" "$T/bat/out.$f/public-1.json" && bad "batch ($f): partitions share public inputs" || ok
    expect_err 2 "witness.wtns" "$BIN/cuzk" prove "${extra[@]}" "$T/bat/k.$f" --batch "$T/bat/out.$f" \
        "$T/bat/witness-0.wtns" "$DATA/chain/witness.wtns"
done

# --gpu NAME=VALUE (repeatable; every backend takes it, the GPU backend's forced modes give the
# same proof for fixed r and s), with a .zkey and with the .params key (whose subgroup checks
# params_check_min sends to the device when one answers)
d="$DATA/chain"
for g in synth=off synth=dedup synth=full bases=stream msm_chunk=1000 witness=register witness=copy b_g2=cpu; do
    expect_ok "$CUZKT" prove --gpu "$g" --test-fixed-rs 12345 67890 "$d/circuit.zkey" "$d/witness.wtns" "$T/g.json" "$T/gp.json"
    cmp -s "$T/f1.json" "$T/g.json" && ok || bad "--gpu $g: the proof differs"
done
expect_ok "$CUZKT" prove --gpu bases=resident --gpu b_g2=device --gpu synth=dedup --test-fixed-rs 12345 67890 \
    "$d/circuit.zkey" "$d/witness.wtns" "$T/g.json" "$T/gp.json"
cmp -s "$T/f1.json" "$T/g.json" && ok || bad "several --gpu options: the proof differs"
pk=(--r1cs "$T/bat/circuit.r1cs" "$T/bat/k.params" "$T/bat/witness-0.wtns")
expect_ok "$CUZKT" prove --test-fixed-rs 5 6 "${pk[@]}" "$T/pp1.json" "$T/pq1.json"
expect_ok "$CUZKT" prove --gpu params_check_min=1 --gpu synth=off --test-fixed-rs 5 6 "${pk[@]}" "$T/pp2.json" "$T/pq2.json"
cmp -s "$T/pp1.json" "$T/pp2.json" && ok || bad "--gpu params_check_min=1 synth=off (.params): the proof differs"
expect_err 2 "cuzk prove: --gpu synth=bogus: gpu option synth: 'bogus' is not one of auto, full, dedup or off" \
    "$BIN/cuzk" prove --gpu synth=bogus "$d/circuit.zkey" "$d/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "--gpu frobnicate=1: gpu option 'frobnicate' is unknown" \
    "$BIN/cuzk" prove --gpu frobnicate=1 "$d/circuit.zkey" "$d/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "--gpu msm_chunk=0: .*not a positive count" \
    "$BIN/cuzk" prove --gpu msm_chunk=0 "$d/circuit.zkey" "$d/witness.wtns" "$T/x.json" "$T/y.json"
expect_err 2 "--gpu synth: not NAME=VALUE" \
    "$BIN/cuzk" prove --gpu synth "$d/circuit.zkey" "$d/witness.wtns" "$T/x.json" "$T/y.json"
[ ! -e "$T/x.json" ] && ok || bad "a refused --gpu option still wrote a proof"

# The environment the program reads once: CUZK_THREADS (--threads over it), CUZK_FF_IMPL,
# CUZK_BACKEND, as -v reports them; the same proof with the portable field code; bad values
# refused with the variable and its value; --help documents them and --gpu.
expect_ok env CUZK_THREADS=3 CUZK_FF_IMPL=portable CUZK_BACKEND=cpu "$CUZKT" prove -v \
    --test-fixed-rs 12345 67890 "$d/circuit.zkey" "$d/witness.wtns" "$T/e.json" "$T/ep.json"
grep -q "3 threads, backend cpu, field portable" "$T/out" && ok || bad "env: -v says $(cat "$T/out")"
cmp -s "$T/f1.json" "$T/e.json" && ok || bad "CUZK_FF_IMPL=portable: the proof differs"
expect_ok env CUZK_THREADS=3 "$BIN/cuzk" prove -v --threads 2 "$d/circuit.zkey" "$d/witness.wtns" "$T/e.json" "$T/ep.json"
grep -q " 2 threads" "$T/out" && ok || bad "--threads 2 under CUZK_THREADS=3: $(cat "$T/out")"
expect_ok env CUZK_THREADS= CUZK_FF_IMPL= CUZK_BACKEND= "$BIN/cuzk" prove "$d/circuit.zkey" "$d/witness.wtns" "$T/e.json" "$T/ep.json"
if env CUZK_BACKEND=gpu "$BIN/cuzk" prove -v "$d/circuit.zkey" "$d/witness.wtns" "$T/e.json" "$T/ep.json" >"$T/out" 2>&1; then
    grep -q "backend gpu" "$T/out" && ok || bad "CUZK_BACKEND=gpu: -v says $(cat "$T/out")"
else   # no CUDA in this build, or no device
    grep -Eq "no GPU backend|GPU|CUDA|device" "$T/out" && ok || bad "CUZK_BACKEND=gpu without a GPU: $(cat "$T/out")"
fi
for v in CUZK_THREADS=0 CUZK_THREADS=4x CUZK_FF_IMPL=fast CUZK_BACKEND=tpu; do
    expect_err 2 "^cuzk: $v: " env "$v" "$BIN/cuzk" prove "$d/circuit.zkey" "$d/witness.wtns" "$T/x.json" "$T/y.json"
done
"$BIN/cuzk" --help >"$T/out" 2>&1
for w in CUZK_THREADS CUZK_FF_IMPL CUZK_BACKEND "--gpu NAME=VALUE" "synth=auto|full|dedup|off" params_check_min; do
    grep -qF -- "$w" "$T/out" && ok || bad "cuzk --help does not document $w"
done

finish
