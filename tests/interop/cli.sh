#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cuzk program's rules for files. Outputs: written under a temporary name and renamed, so
# an output naming an input (the same file, a hard link, a symbolic link to it) or another
# output is refused before anything is computed, a symbolic link of an output's name is
# replaced rather than written through, and a command that fails leaves none of its outputs
# (prove, setup, export vk, gen). `cuzk verify`: keys with a point at infinity or a wrong
# vk_alphabeta_12 are refused, a Filecoin proof is told from a proof.json by content, and the
# exit status is 0 valid, 1 invalid, 2 unreadable or malformed input (snarkjs judges too).
. "$(dirname "$0")/lib/common.sh"
d="$DATA/chain"
# no_tmp DIR: no temporary file or directory is left in DIR
no_tmp() { if ls -A "$1" | grep -Eq '(\.tmp$|^\.cuzk-gen\.)'; then bad "temporaries left in $1: $(ls -A "$1")"; else ok; fi; }

# ---- outputs of cuzk prove ----
mkdir "$T/o"; cp "$d/circuit.zkey" "$T/o/k.zkey"; cp "$d/witness.wtns" "$T/o/w.wtns"
P=("$BIN/cuzk" prove)
expect_err 2 "output .*/o/k.zkey is the input .*/o/k.zkey" "${P[@]}" "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/k.zkey" "$T/o/pub.json"
cmp -s "$T/o/k.zkey" "$d/circuit.zkey" && ok || bad "prove: the key named as proof.json was overwritten"
expect_err 2 "is the input .*w.wtns" "${P[@]}" "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/p.json" "$T/o/w.wtns"
cmp -s "$T/o/w.wtns" "$d/witness.wtns" && ok || bad "prove: the witness named as public.json was overwritten"
ln "$T/o/k.zkey" "$T/o/hard.json"; ln -s k.zkey "$T/o/soft.json"
expect_err 2 "hard.json is the input" "${P[@]}" "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/hard.json" "$T/o/pub.json"
expect_err 2 "soft.json is the input" "${P[@]}" "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/p.json" "$T/o/soft.json"
cmp -s "$T/o/k.zkey" "$d/circuit.zkey" && ok || bad "prove: the key behind a link was overwritten"
expect_err 2 "outputs .*/o/p.json and .*/o/./p.json are the same file" "${P[@]}" "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/p.json" "$T/o/./p.json"
expect_err 2 "outputs .*p.json and .*p.json are the same file" "${P[@]}" --filecoin "$T/o/p.json" --r1cs "$d/circuit.r1cs" \
    "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/p.json" "$T/o/pub.json"
[ ! -e "$T/o/p.json" ] && [ ! -e "$T/o/pub.json" ] && ok || bad "a refused prove wrote an output"
# public.json cannot be written: no proof.json appears, an existing one is kept as it was
expect_err 2 "nodir/pub.json" "${P[@]}" "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/p.json" "$T/o/nodir/pub.json"
[ ! -e "$T/o/p.json" ] && ok || bad "prove left proof.json behind when public.json failed"
mkdir "$T/o/isdir"
expect_err 2 "isdir: is a directory" "${P[@]}" "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/p.json" "$T/o/isdir"
[ ! -e "$T/o/p.json" ] && ok || bad "prove left proof.json behind when public.json is a directory"
echo old > "$T/o/p.json"
expect_err 2 "nodir/pub.json" "${P[@]}" "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/p.json" "$T/o/nodir/pub.json"
[ "$(cat "$T/o/p.json")" = old ] && ok || bad "a failed prove changed an existing proof.json"
no_tmp "$T/o"
# a good run replaces the outputs whole; an output that is a symbolic link is replaced, its
# target is not written
echo target > "$T/o/target"; ln -s target "$T/o/plink.json"
expect_ok "${P[@]}" "$T/o/k.zkey" "$T/o/w.wtns" "$T/o/p.json" "$T/o/plink.json"
[ "$(cat "$T/o/target")" = target ] && [ ! -L "$T/o/plink.json" ] && ok || bad "prove wrote through a symbolic link"
expect_ok "$SNARKJS" groth16 verify "$d/verification_key.json" "$T/o/plink.json" "$T/o/p.json"
grep -q OK "$T/out" && ok || bad "snarkjs rejects the proof written by rename"
[ "$(stat -c %a "$T/o/p.json")" = "$(printf '%o' $((0666 & ~$(umask))))" ] && ok \
    || bad "proof.json has mode $(stat -c %a "$T/o/p.json"), not 0666 less the umask"
no_tmp "$T/o"
# --batch: a witness named as an output is refused
mkdir "$T/o/b"; cp "$d/witness.wtns" "$T/o/b/proof-1.json"
expect_err 2 "proof-1.json is the input" "${P[@]}" "$T/o/k.zkey" --batch "$T/o/b" "$T/o/w.wtns" "$T/o/b/proof-1.json"
cmp -s "$T/o/b/proof-1.json" "$d/witness.wtns" && ok || bad "prove --batch overwrote a witness"

# ---- cuzk export vk, cuzk setup, cuzk gen ----
expect_err 2 "is the input" "$BIN/cuzk" export vk "$T/o/k.zkey" "$T/o/k.zkey"
cmp -s "$T/o/k.zkey" "$d/circuit.zkey" && ok || bad "export vk overwrote the key"
ln -s target "$T/o/vlink.json"
expect_ok "$BIN/cuzk" export vk "$T/o/k.zkey" "$T/o/vlink.json"
[ "$(cat "$T/o/target")" = target ] && cmp -s "$T/o/vlink.json" "$d/verification_key.json" && ok \
    || bad "export vk wrote through a symbolic link"
cp "$d/circuit.r1cs" "$T/o/c.r1cs"
for f in zkey params; do
    ln "$T/o/c.r1cs" "$T/o/c.$f"
    expect_err 2 "c.$f is the input .*c.r1cs" "$BIN/cuzk" setup "$T/o/c.r1cs" "$T/o/c.$f"
    cmp -s "$T/o/c.r1cs" "$d/circuit.r1cs" && ok || bad "setup ($f) overwrote the circuit"
    rm "$T/o/c.$f"
    ln -s target "$T/o/l.$f"
    expect_ok "$BIN/cuzk" setup "$T/o/c.r1cs" "$T/o/l.$f"
    [ "$(cat "$T/o/target")" = target ] && [ ! -L "$T/o/l.$f" ] && ok || bad "setup ($f) wrote through a link"
    expect_err 2 "nodir/x.$f" "$BIN/cuzk" setup "$T/o/c.r1cs" "$T/o/nodir/x.$f"
done
expect_ok "$BIN/cuzk" prove --r1cs "$T/o/c.r1cs" "$T/o/l.params" "$T/o/w.wtns" "$T/o/pp.json" "$T/o/pq.json"
no_tmp "$T/o"
mkdir "$T/g"; ln -s ../o/target "$T/g/circuit.r1cs"
expect_ok "$BIN/cuzk" gen --constraints 100 --partitions 2 -q -o "$T/g"
[ "$(cat "$T/o/target")" = target ] && [ ! -L "$T/g/circuit.r1cs" ] && ok || bad "gen wrote through a link"
[ -s "$T/g/witness-0.wtns" ] && [ -s "$T/g/witness-1.wtns" ] && ok || bad "gen: witnesses missing"
expect_ok "$BIN/cuzk" setup "$T/g/circuit.r1cs" "$T/g/k.zkey"
expect_ok "$BIN/cuzk" prove "$T/g/k.zkey" "$T/g/witness-1.wtns" "$T/g/p.json" "$T/g/q.json"
no_tmp "$T/g"
# a failing gen (a witness name taken by a directory) leaves none of its files
mkdir -p "$T/g2/witness-1.wtns"
expect_err 2 "g2/witness-1.wtns" "$BIN/cuzk" gen --constraints 100 --partitions 2 -q -o "$T/g2"
[ ! -e "$T/g2/circuit.r1cs" ] && [ ! -e "$T/g2/witness-0.wtns" ] && ok || bad "a failed gen left files: $(ls -A "$T/g2")"
no_tmp "$T/g2"

# ---- cuzk verify ----
vk="$d/verification_key.json"
V=("$BIN/cuzk" verify)
expect_ok "${V[@]}" "$vk" "$d/public.json" "$d/proof.json"
# edit_vk OUT JS: the chain key with JS applied to its object v
edit_vk() { node -e 'const fs=require("fs"); const v=JSON.parse(fs.readFileSync(process.argv[1]));
  '"$2"'; fs.writeFileSync(process.argv[2], JSON.stringify(v, null, 1));' "$vk" "$1"; }
G1INF='["0","1","0"]'; G2INF='[["0","0"],["1","0"],["0","0"]]'
# every point at infinity, and a proof at infinity: verified before keys were checked
edit_vk "$T/vk_inf.json" "v.vk_alpha_1=$G1INF; v.vk_beta_2=v.vk_gamma_2=v.vk_delta_2=$G2INF;
  v.IC=v.IC.map(()=>$G1INF); delete v.vk_alphabeta_12"
echo "{\"pi_a\":$G1INF,\"pi_b\":$G2INF,\"pi_c\":$G1INF,\"protocol\":\"groth16\",\"curve\":\"bls12381\"}" > "$T/proof_inf.json"
expect_err 2 "vk_inf.json: vk_alpha_1: the point at infinity" "${V[@]}" "$T/vk_inf.json" "$d/public.json" "$T/proof_inf.json"
for f in vk_alpha_1 vk_beta_2 vk_gamma_2 vk_delta_2 "IC[0]" "IC[3]"; do
    case $f in vk_alpha_1|IC*) inf=$G1INF ;; *) inf=$G2INF ;; esac
    edit_vk "$T/vk_one.json" "v.$f=$inf; delete v.vk_alphabeta_12"
    pat=$(printf '%s' "$f" | sed 's/[][]/\\&/g')
    expect_err 2 "vk_one.json: $pat: the point at infinity" "${V[@]}" "$T/vk_one.json" "$d/public.json" "$d/proof.json"
done
# vk_alphabeta_12: checked when present (here: its two halves swapped), optional
edit_vk "$T/vk_ab.json" "v.vk_alphabeta_12.reverse()"
expect_err 2 "vk_ab.json: vk_alphabeta_12: not e\(vk_alpha_1, vk_beta_2\)" "${V[@]}" "$T/vk_ab.json" "$d/public.json" "$d/proof.json"
edit_vk "$T/vk_noab.json" "delete v.vk_alphabeta_12"
expect_ok "${V[@]}" "$T/vk_noab.json" "$d/public.json" "$d/proof.json"
expect_ok "$SNARKJS" groth16 verify "$T/vk_noab.json" "$d/public.json" "$d/proof.json"
# the Filecoin proof told apart by content: a 192-byte JSON text is read as JSON, a
# 193-byte binary proof as binary (and refused for its length)
"$BIN/cuzk" setup "$d/circuit.r1cs" "$T/k.params" >/dev/null 2>&1
expect_ok "$BIN/cuzk" export vk "$T/k.params" "$T/kvk.json"
expect_ok "$BIN/cuzk" prove --filecoin "$T/p.bin" --r1cs "$d/circuit.r1cs" "$T/k.params" "$d/witness.wtns" "$T/kp.json" "$T/kq.json"
expect_ok "${V[@]}" "$T/kvk.json" "$T/kq.json" "$T/p.bin"
j='{"protocol": "groth16", "curve": "bls12381"'
{ printf '%s' "$j"; printf '%*s' $((192 - 2 - ${#j})) ''; printf '}\n'; } > "$T/j192.json"
[ "$(stat -c %s "$T/j192.json")" = 192 ] && ok || bad "j192.json is not 192 bytes"
expect_err 2 "j192.json: .*pi_a" "${V[@]}" "$T/kvk.json" "$T/kq.json" "$T/j192.json"
{ cat "$T/p.bin"; printf 'x'; } > "$T/p193.bin"
expect_err 2 "p193.bin: longer than the 192 bytes of a Filecoin proof" "${V[@]}" "$T/kvk.json" "$T/kq.json" "$T/p193.bin"
: > "$T/empty.bin"
expect_err 2 "empty.bin: empty" "${V[@]}" "$T/kvk.json" "$T/kq.json" "$T/empty.bin"
expect_ok "$BIN/cuzk" info "$T/p.bin"; grep -q "Filecoin's 192-byte form" "$T/out" && ok || bad "info p.bin: $(cat "$T/out")"
expect_ok "$BIN/cuzk" info "$T/vk_one.json"; grep -q "REFUSED by cuzk verify: .*IC\[3\]: the point at infinity" "$T/out" && ok \
    || bad "info of a key with a point at infinity: $(cat "$T/out")"
# exit status: 1 for an invalid proof, 2 for unreadable or malformed input
sed 's/"\([0-9]\)/"1\1/' "$d/public.json" > "$T/pub_bad.json"
expect_err 1 "INVALID" "${V[@]}" "$T/kvk.json" "$T/pub_bad.json" "$T/p.bin"
expect_err 1 "INVALID" "${V[@]}" "$vk" "$T/pub_bad.json" "$d/proof.json"
expect_err 2 "nonexistent.json" "${V[@]}" "$vk" "$d/public.json" "$T/nonexistent.json"
expect_err 2 "nonexistent.json" "${V[@]}" "$T/nonexistent.json" "$d/public.json" "$d/proof.json"
echo '["x"]' > "$T/pub_mal.json"
expect_err 2 "pub_mal.json" "${V[@]}" "$vk" "$T/pub_mal.json" "$d/proof.json"
expect_err 2 "usage" "${V[@]}" "$vk" "$d/public.json"
expect_ok "${V[@]}" --help
for w in "exit status" "0  the proof is valid" "1  the proof is invalid" "2  an input is unreadable or malformed"; do
    grep -qF -- "$w" "$T/out" && ok || bad "cuzk verify --help does not say '$w'"
done

finish
