#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A/B of the G1 MSM on the GPU machine (after bench/remote-gpu-pack.sh with the second build
# packed as AB_OLD, default base-cuzk-bench): test_gpu first (AB_TESTS="" to skip), then
# `cuzk-bench kernels -k K --backend gpu --runs 3 --profile` of each build, in turn, AB_ROUNDS
# times, and the MSM columns and stage lines of each.
#   AB_KS="24 26"  AB_ROUNDS=2  AB_TESTS="test_gpu"  OUT=...
#   AB_ARGS="--pre 0"  more arguments for the new build's kernels (the old one may lack them)
#   AB_OLD_ARGS="--pre 22"  more arguments for the old builds' kernels
#   AB_OLD=""  the new build alone
#   AB_DEADLINE=S  start no kernels run once S seconds have passed since the first one began
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" "${OUT:-/tmp/msm-ab}"
ks=(); for k in ${AB_KS:-24 26}; do ks+=(-k "$k"); done
for t in ${AB_TESTS-test_gpu}; do
    device_step "$t" 400 "passed,|FAIL|multiples|GPU != CPU|affine pass" "$D/bin/$t"
done
ab_t0=$(date +%s)
for r in $(seq 1 "${AB_ROUNDS:-2}"); do
    for b in cuzk-bench ${AB_OLD-base-cuzk-bench}; do
        if [ -n "${AB_DEADLINE:-}" ] && [ $(( $(date +%s) - ab_t0 )) -ge "$AB_DEADLINE" ]; then
            summary+=("k-$b-$r skipped: AB_DEADLINE ${AB_DEADLINE} s passed"); continue
        fi
        echo "== round $r: $b"
        extra=(${AB_OLD_ARGS:-}); [ "$b" = cuzk-bench ] && extra=(${AB_ARGS:-})
        device_step "k-$b-$r" 300 "msm_aff|msm_dev\)|msm_pre|precomputed|^2\^" "$D/bin/$b" kernels "${ks[@]}" --backend gpu --runs 3 --profile "${extra[@]}"
    done
done
printf '%s\n' "${summary[@]}"
