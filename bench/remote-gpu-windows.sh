#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The G1 MSM's window swept on the GPU machine (after bench/remote-gpu-pack.sh): for each
# window C, `cuzk-bench kernels -k K... --backend gpu --runs 3 --window C --pre C` (msm_dev,
# msm_aff on the bases, msm_pre, msm_pre_aff on multiples of window C), then one table of
# the medians, k by C, and the window the model chose for each k (--window 0 --pre 0).
#   WIN_KS="16 18 20 22"  WIN_CS="14 16 18 20 22"  WIN_BIN=cuzk-bench  OUT=...
#   WIN_NOPRE=1  without the multiples (msm_dev and msm_aff alone: no precomputation at each C)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" "${OUT:-/tmp/msm-windows}"
ks=(); for k in ${WIN_KS:-16 18 20 22}; do ks+=(-k "$k"); done
bin=$D/bin/${WIN_BIN:-cuzk-bench}
cs="0 ${WIN_CS:-14 16 18 20 22}"
for c in $cs; do
    pre=(--pre "$c"); [ -n "${WIN_NOPRE:-}" ] && pre=()
    device_step "w$c" 300 "" "$bin" kernels "${ks[@]}" --backend gpu --runs 3 --profile --window "$c" "${pre[@]}"
done
# the table: k, C, msm_dev, msm_aff, msm_pre, msm_pre_aff (C = 0: the model's choice, whose
# windows the profile lines give)
printf '%-6s %-4s %10s %10s %10s %10s\n' k C msm_dev msm_aff msm_pre msm_pre_aff
for c in $cs; do
    awk -v c="$c" '/^2\^/ {printf "%-6s %-4s %10s %10s %10s %10s\n", $1, c, $6, $7, $9, $10}' "$OUT/w$c.log"
done | sort -t^ -k2,2n -s
grep -h "^gpu msm" "$OUT/w0.log" 2>/dev/null | sed 's/ upload.*//' | sort -u
printf '%s\n' "${summary[@]}"
