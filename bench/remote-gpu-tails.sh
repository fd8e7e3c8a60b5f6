#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The split MSMs of porep-k partitions (A, B1, L in G1, B2 in G2: the significant terms)
# swept over windows and accumulations on the GPU machine (after bench/remote-gpu-pack.sh):
# `cuzk-bench tails -k K --runs R --windows W` for each K, each run's log in OUT, then the
# lines of the library's choice and the best of each split.
#   TAILS_KS="22 24 26 27"  TAILS_WINDOWS=12-21  TAILS_RUNS=3  TAILS_BIN=cuzk-bench  OUT=...
#   TAILS_OLD="base-cuzk-bench"  after each K, these packed binaries' library choice too
#     (`tails -k K --windows LO-LO`: the library's line and the one window LO), to compare a
#     new choice with the old in one call
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" "${OUT:-/tmp/tails}"
bin=$D/bin/${TAILS_BIN:-cuzk-bench}
lo=${TAILS_WINDOWS:-12-21}; lo=${lo%-*}
for k in ${TAILS_KS:-22 24 26 27}; do
    device_step "tails$k" 500 "" "$bin" tails -k "$k" --runs "${TAILS_RUNS:-3}" \
        --windows "${TAILS_WINDOWS:-12-21}"
    for o in ${TAILS_OLD:-}; do
        device_step "tails$k-$o" 300 "" "$D/bin/$o" tails -k "$k" --runs "${TAILS_RUNS:-3}" \
            --windows "$lo-$lo"
    done
done
for f in "$OUT"/tails*.log; do
    echo "== $(basename "$f" .log)"
    grep -E "library|best:|porep-|differs|error|cuzk-bench tails" "$f"
done
printf '%s\n' "${summary[@]}"
