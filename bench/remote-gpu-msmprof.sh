#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Where a G1 MSM's time goes, on the GPU machine (after bench/remote-gpu-pack.sh): the stage
# times of the XYZZ and batch-affine accumulations (`cuzk-bench kernels --profile`), Nsight
# Compute on their kernels at 2^PROF_K (speed of light, occupancy, warp states, memory), and
# the instruction mix of each MSM kernel (cuobjdump), one line a kernel: what a change to the
# accumulation is measured against.
#   PROF_KS="24 26"  sizes of the stage profile     PROF_K=24   the size Nsight Compute sees
#   PROF_BIN=cuzk-bench (a packed name)              OUT=...     where the logs go
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" "${OUT:-/tmp/msmprof}"
B=$D/bin/${PROF_BIN:-cuzk-bench}
ks=(); for k in ${PROF_KS:-24 26}; do ks+=(-k "$k"); done
device_step kprof 300 "gpu msm g1|msm_" "$B" kernels "${ks[@]}" --backend gpu --runs 3 --profile
K=${PROF_K:-24}
SECS=(--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section ComputeWorkloadAnalysis)
if command -v ncu >/dev/null; then
    device_step ncu_xyzz 300 "error" ncu --clock-control none -k regex:'msm_accumulate_kernel|msm_bucket_sum_kernel' \
        --launch-count 2 "${SECS[@]}" "$B" kernels -k "$K" --backend gpu --runs 1
    device_step ncu_aff 300 "error" ncu --clock-control none -k regex:'msm_aff_round_kernel' \
        --launch-count 5 "${SECS[@]}" "$B" kernels -k "$K" --backend gpu --runs 1
    for f in ncu_xyzz ncu_aff; do
        grep -E '^  [a-z_]+.*\(|Duration|Issue Slots Busy|Achieved Occupancy|Registers Per|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Hit|L1/TEX Hit|Stall|Warp Cycles Per Issued|Theoretical Occupancy|One or More Eligible' "$OUT/$f.log" | head -120
    done
fi
if command -v cuobjdump >/dev/null; then
    cuobjdump --dump-sass "$B" 2>/dev/null | awk '
        /Function :/ { fn = $3; next }
        fn ~ /msm_(accumulate|aff_round|bucket_sum)/ && /\/\*[0-9a-f]+\*\// {
            for (i = 1; i <= NF; i++) if ($i ~ /^[A-Z][A-Z0-9.]+$/ && $i !~ /^R[0-9]/) { c[fn, $i]++; t[fn]++; break } }
        END { for (k in c) { split(k, p, SUBSEP); print t[p[1]], p[1], p[2], c[k] } }' | sort -k2,2 -k4,4nr | awk '{ if ($2 != last) { print ""; printf "%s (%d):", $2, $1; last = $2 } printf " %s %d", $3, $4 } END { print "" }' > "$OUT/sass-mix.txt"
    cut -c1-400 "$OUT/sass-mix.txt"
fi
printf '%s\n' "${summary[@]}"
