#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Coverage-guided fuzzing of the readers (tests/fuzz/fuzz_load.c): builds build-fuzz with
# clang (-DCUZK_FUZZ=ON, CPU only), seeds every format from tests/data/circuits (and a
# .params and a Filecoin proof made here with cuzk), then runs each format for
# FUZZ_SECONDS (default 60) with FUZZ_JOBS workers (default 1).
#   bash tests/fuzz/run.sh [format ...]     (default: every format)
# Corpora grow in FUZZ_DIR (default build-fuzz/fuzz/corpus/<format>); an input that fails
# is kept as FUZZ_DIR/artifacts/<format>-crash-* (or leak-, oom-, timeout-) and the script
# exits 1 after the other formats have run. Not part of CI: the mutation fuzzing CI runs is
# tests/unit/test_fuzz.c; what this finds becomes a regression case there.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
B=${FUZZ_BUILD:-build-fuzz}
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
formats=("$@")
[ ${#formats[@]} -gt 0 ] || formats=(wtns r1cs zkey params key proof-json public-json vk-json
                                     filecoin-proof g1 g2)

CC=clang CXX=clang++ cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCUZK_CUDA=OFF -DCUZK_TESTS=OFF -DCUZK_FUZZ=ON >/dev/null
cmake --build "$B" --target cuzk-fuzz cuzk >/dev/null

D=${FUZZ_DIR:-$B/fuzz}
seed=$D/seed
C=tests/data/circuits
mkdir -p "$D/artifacts" "$seed"
for f in "${formats[@]}"; do mkdir -p "$seed/$f" "$D/corpus/$f"; done
for c in bn128 chain multiplier nopub; do
    for pair in wtns:witness.wtns r1cs:circuit.r1cs zkey:circuit.zkey key:circuit.zkey \
                proof-json:proof.json public-json:public.json vk-json:verification_key.json; do
        f=${pair%%:*}
        [ -d "$seed/$f" ] && cp "$C/$c/${pair#*:}" "$seed/$f/$c"
    done
done
[ -d "$seed/r1cs" ] && cp $C/other/*.r1cs "$seed/r1cs/"
if [ -d "$seed/params" ] || [ -d "$seed/key" ] || [ -d "$seed/filecoin-proof" ] ||
   [ -d "$seed/g1" ] || [ -d "$seed/g2" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$B/cuzk" setup $C/multiplier/circuit.r1cs "$tmp/mult.params" >/dev/null
    "$B/cuzk" prove --no-verify --filecoin "$tmp/p.bin" --r1cs $C/multiplier/circuit.r1cs \
        "$tmp/mult.params" $C/multiplier/witness.wtns "$tmp/proof.json" "$tmp/public.json" >/dev/null
    for f in params key; do [ -d "$seed/$f" ] && cp "$tmp/mult.params" "$seed/$f/"; done
    [ -d "$seed/filecoin-proof" ] && cp "$tmp/p.bin" "$seed/filecoin-proof/"
    if [ -d "$seed/g1" ]; then   # the proof's A and C, compressed
        head -c 48 "$tmp/p.bin" >"$seed/g1/a"
        tail -c 48 "$tmp/p.bin" >"$seed/g1/c"
    fi
    [ -d "$seed/g2" ] && dd if="$tmp/p.bin" of="$seed/g2/b" bs=1 skip=48 count=96 2>/dev/null
fi

failed=0
par=()
[ "$jobs" -gt 1 ] && par=(-jobs="$jobs" -workers="$jobs")
for f in "${formats[@]}"; do
    log=$D/$f.log
    set +e
    TMPDIR=${TMPDIR:-/tmp} CUZK_FUZZ_FORMAT=$f CUZK_FUZZ_R1CS=$root/$C/multiplier/circuit.r1cs \
        "$B/cuzk-fuzz" -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 \
        "${par[@]}" -artifact_prefix="$D/artifacts/$f-" \
        "$D/corpus/$f" "$seed/$f" >"$log" 2>&1
    rc=$?
    set -e
    runs=$(grep -Eo '^#[0-9]+' "$log" | tail -1 || true)
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 || true)
    if [ $rc -eq 0 ]; then
        echo "fuzz $f: ok, ${runs#\#} runs, $cov, ${secs}s"
    else
        echo "fuzz $f: FAILED (rc $rc), see $log and $D/artifacts/$f-*"
        failed=1
    fi
done
exit $failed
