#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cuzk program as a snarkjs user meets it: a witness that does not satisfy the circuit
# gives no proof (cuzk prove verifies every proof before writing it; exit 1) and `cuzk wtns
# check` names the first failing constraint (snarkjs wtns check agrees); arguments in the wrong
# order are named as such, before any loader's "bad magic"; outputs that cannot be written are
# refused before the work starts; every command answers -h and --help.
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
# the engine's self-verification (the daemon's) names the same likely cause
timeout 120 "$BIN/cuzk-bench" single --in-process --zkey "$d/circuit.zkey" --witness "$T/bad.wtns" >"$T/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "failed: partition 0: self-verification failed (the witness likely does not satisfy the circuit)" "$T/out" \
    && ok || bad "cuzk-bench single of an unsatisfied witness: exit $rc: $(head -c 300 "$T/out")"

# ---- cuzk wtns check ----
W=("$BIN/cuzk" wtns check)
expect_ok "${W[@]}" "$d/circuit.r1cs" "$d/witness.wtns"
grep -q "^OK" "$T/out" && ok || bad "wtns check of a good witness: $(cat "$T/out")"
# the first failing constraint, the one snarkjs names
"$SNARKJS" wtns check "$d/circuit.r1cs" "$T/bad.wtns" >"$T/sj" 2>&1
sjc=$(sed -n 's/.*aborting checking process at constraint \([0-9]*\).*/\1/p' "$T/sj")
[ -n "$sjc" ] && ok || bad "snarkjs wtns check names no constraint: $(cat "$T/sj")"
expect_err 1 "bad.wtns does not satisfy .*circuit.r1cs: .*constraint $sjc of " "${W[@]}" "$d/circuit.r1cs" "$T/bad.wtns"
expect_err 1 "witness has 4 values, the r1cs 142 wires" "${W[@]}" "$d/circuit.r1cs" "$DATA/multiplier/witness.wtns"
head -c 40 "$d/witness.wtns" > "$T/short.wtns"
expect_err 2 "short.wtns" "${W[@]}" "$d/circuit.r1cs" "$T/short.wtns"
expect_err 2 "nonexistent.r1cs" "${W[@]}" "$T/nonexistent.r1cs" "$d/witness.wtns"
expect_err 2 "witness.wtns is a witness \(.wtns\), not a constraint system \(.r1cs\): arguments in the wrong order\? the order is circuit.r1cs witness.wtns" \
    "${W[@]}" "$d/witness.wtns" "$d/circuit.r1cs"
expect_err 2 "usage: cuzk wtns check" "${W[@]}" "$d/circuit.r1cs"

# ---- arguments in the wrong order, files of the wrong kind ----
P=("$BIN/cuzk" prove)
expect_err 2 "witness.wtns is a witness \(.wtns\), not a proving key \(.zkey\): arguments in the wrong order\? the order is circuit.zkey witness.wtns proof.json public.json" \
    "${P[@]}" "$d/witness.wtns" "$d/circuit.zkey" "$T/p2.json" "$T/q2.json"
grep -q "magic" "$T/err" && bad "prove in the wrong order speaks of a magic" || ok
expect_err 2 "input.json is a JSON object.*not a witness: .*snarkjs wtns calculate" \
    "${P[@]}" "$d/circuit.zkey" "$d/input.json" "$T/p2.json" "$T/q2.json"
printf '\0asm\1\0\0\0' > "$T/circuit.wasm"
expect_err 2 "circuit.wasm is a WebAssembly module.*snarkjs wtns calculate" \
    "${P[@]}" "$d/circuit.zkey" "$T/circuit.wasm" "$T/p2.json" "$T/q2.json"
expect_err 2 "circuit.zkey is a proving key \(.zkey\), not a witness" \
    "${P[@]}" "$d/circuit.zkey" "$d/circuit.zkey" "$T/p2.json" "$T/q2.json"
expect_err 2 "circuit.zkey is a proving key.*the order is --r1cs circuit.r1cs key.params witness.wtns" \
    "${P[@]}" --r1cs "$d/circuit.r1cs" "$d/circuit.zkey" "$d/witness.wtns" "$T/p2.json" "$T/q2.json"
expect_err 2 "witness.wtns is a witness.*not a constraint system" \
    "${P[@]}" --r1cs "$d/witness.wtns" "$T/k.params" "$d/circuit.r1cs" "$T/p2.json" "$T/q2.json"
# a binary file that happens to begin with whitespace and '[' (bellman parameters whose first
# coordinate byte is 0x0a, then 0x5b) is no public.json: its own loader speaks
{ printf '\n[\001\002'; head -c 200 /dev/urandom; } > "$T/lb.params"
expect_err 2 "lb.params: file is" "${P[@]}" --r1cs "$d/circuit.r1cs" "$T/lb.params" "$d/witness.wtns" "$T/p2.json" "$T/q2.json"
grep -q "list of public inputs" "$T/err" && bad "a binary parameters file is taken for public.json" || ok
expect_err 2 "k.params: bellman parameters need their circuit: cuzk prove --r1cs circuit.r1cs" \
    "${P[@]}" "$T/k.params" "$d/witness.wtns" "$T/p2.json" "$T/q2.json"
cp "$d/circuit.r1cs" "$T/c.r1cs"
expect_err 2 "output .*c.r1cs is a constraint system \(.r1cs\): refused" \
    "${P[@]}" "$d/circuit.zkey" "$d/witness.wtns" "$T/c.r1cs" "$T/q2.json"
cmp -s "$T/c.r1cs" "$d/circuit.r1cs" && ok || bad "prove overwrote a circuit named as proof.json"
[ ! -e "$T/p2.json" ] && [ ! -e "$T/q2.json" ] && ok || bad "a refused prove wrote an output"
V=("$BIN/cuzk" verify)
vk="$d/verification_key.json"
expect_err 2 "proof.json is a proof \(proof.json\), not a verification key: arguments in the wrong order\? the order is verification_key.json public.json proof.json" \
    "${V[@]}" "$d/proof.json" "$d/public.json" "$vk"
expect_err 2 "public.json is a list of public inputs.*not a verification key" "${V[@]}" "$d/public.json" "$vk" "$d/proof.json"
expect_err 2 "verification_key.json is a verification key, not a list of public inputs" "${V[@]}" "$vk" "$vk" "$d/proof.json"
expect_err 2 "circuit.zkey is a proving key.*cuzk export vk .*circuit.zkey verification_key.json" \
    "${V[@]}" "$d/circuit.zkey" "$d/public.json" "$d/proof.json"
expect_ok "${V[@]}" "$vk" "$d/public.json" "$d/proof.json"
# a BN254 file: compile with --prime bls12381
b="$DATA/bn128"
for args in "$b/circuit.zkey $b/witness.wtns" "$d/circuit.zkey $b/witness.wtns"; do
    # shellcheck disable=SC2086
    expect_err 2 "BN254.*circom --prime bls12381" "${P[@]}" $args "$T/p2.json" "$T/q2.json"
done
expect_err 2 "BN254.*circom --prime bls12381" "${W[@]}" "$b/circuit.r1cs" "$b/witness.wtns"

# ---- outputs that cannot be written are refused at once ----
for out in "$T/nodir/p.json $T/q.json" "$T/p.json $T/nodir/q.json"; do
    # shellcheck disable=SC2086
    expect_err 2 "output .*nodir/.\.json: its directory .*nodir: No such file" "${P[@]}" "$d/circuit.zkey" "$d/witness.wtns" $out
done
[ ! -e "$T/p.json" ] || [ "$(stat -c %Y "$T/p.json")" ] && ok
: > "$T/file"
expect_err 2 "output .*file/p.json: .*file is not a directory" "${P[@]}" "$d/circuit.zkey" "$d/witness.wtns" "$T/file/p.json" "$T/q.json"
expect_err 2 "output .*nodir/b/proof-0.json: its directory" "${P[@]}" "$d/circuit.zkey" --batch "$T/nodir/b" "$d/witness.wtns"
expect_err 2 "output .*nodir/x.zkey: its directory" "$BIN/cuzk" setup "$d/circuit.r1cs" "$T/nodir/x.zkey"
expect_err 2 "output .*nodir/vk.json: its directory" "$BIN/cuzk" export vk "$d/circuit.zkey" "$T/nodir/vk.json"
if [ "$(id -u)" != 0 ]; then
    mkdir "$T/ro"; chmod 555 "$T/ro"
    expect_err 2 "output .*ro/p.json: its directory .*ro is not writable" "${P[@]}" "$d/circuit.zkey" "$d/witness.wtns" "$T/ro/p.json" "$T/q.json"
    chmod 755 "$T/ro"
fi

# ---- help and version ----
for c in prove verify export "export vk" info wtns "wtns check" setup gen; do
    for h in -h --help; do
        # shellcheck disable=SC2086
        "$BIN/cuzk" $c $h >"$T/out" 2>"$T/err"; rc=$?
        [ $rc -eq 0 ] && grep -q "^usage" "$T/out" && [ ! -s "$T/err" ] && ok \
            || bad "cuzk $c $h: exit $rc, stdout $(head -c 100 "$T/out"), stderr $(head -c 200 "$T/err")"
    done
done
# help anywhere among prove's arguments; info's help is not a file name
expect_ok "$BIN/cuzk" prove "$d/circuit.zkey" -h
expect_ok "$BIN/cuzk" info --help
grep -q "usage: cuzk info" "$T/out" && ok || bad "cuzk info --help: $(cat "$T/out")"
for prog in cuzk cuzk-bench cuzk-daemon; do
    expect_ok "$BIN/$prog" --version
    grep -q "^$prog [0-9]" "$T/out" && ok || bad "$prog --version: $(cat "$T/out")"
    expect_ok "$BIN/$prog" --help
    grep -q "^usage: $prog" "$T/out" && ok || bad "$prog --help: $(head -c 200 "$T/out")"
    expect_ok "$BIN/$prog" -h
    expect_err 2 "usage: $prog" timeout 20 "$BIN/$prog"
done
for c in micro porep kernels scale prep single batch status metrics preload evict health; do
    for h in -h --help; do
        timeout 20 "$BIN/cuzk-bench" $c $h >"$T/out" 2>"$T/err"; rc=$?
        [ $rc -eq 0 ] && grep -q "^usage: cuzk-bench $c" "$T/out" && ok \
            || bad "cuzk-bench $c $h: exit $rc, stdout $(head -c 100 "$T/out"), stderr $(head -c 200 "$T/err")"
    done
done

# ---- a progress line on a terminal, after 2 s; nothing when stderr is not a terminal ----
if command -v script >/dev/null; then
    mkdir "$T/big"
    "$BIN/cuzk" gen --constraints 2^16 -q -o "$T/big" || bad "gen 2^16"
    # tty LOG CMD...: CMD on a pseudo-terminal, its output into LOG; the seconds it took
    tty_run() { local log=$1 s; shift; s=$(date +%s.%N)
        script -qec "$(printf '%q ' "$@")" "$log" >/dev/null 2>&1
        echo "$(date +%s.%N) - $s" | bc; }
    for cmd in "setup --threads 1 $T/big/circuit.r1cs $T/big/k.zkey" \
               "prove --threads 1 $T/big/k.zkey $T/big/witness-0.wtns $T/big/p.json $T/big/q.json"; do
        name=${cmd%% *}
        # shellcheck disable=SC2086
        "$BIN/cuzk" $cmd >"$T/out" 2>"$T/err" && [ ! -s "$T/err" ] && ok \
            || bad "cuzk $name without a terminal printed on stderr: $(head -c 300 "$T/err")"
        # shellcheck disable=SC2086
        took=$(tty_run "$T/tty.log" "$BIN/cuzk" $cmd)
        if [ "$(echo "$took >= 3" | bc)" = 1 ]; then
            grep -aq "cuzk $name: [a-z ]* ([0-9]* s)" "$T/tty.log" && ok \
                || bad "cuzk $name on a terminal ($took s): no progress line: $(head -c 300 "$T/tty.log")"
            end=$(sed 's/Script done.*//' "$T/tty.log" | tr -d '\n' | tail -c 4 | od -An -c | tr -d ' ')
            [ "$end" = '\r033[K' ] && ok || bad "cuzk $name: the progress line is not cleared at the end ($end)"
        fi
        if [ "$(echo "$took < 1.5" | bc)" = 1 ]; then
            grep -aq "cuzk $name: .* s)" "$T/tty.log" && bad "cuzk $name: a progress line before 2 s" || ok
        fi
    done
fi

finish
