#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One device call for the Fr NTT: correctness first (test_gpu --ntt: every NTT 2^1..2^22 in
# both root families, forward and inverse, and the snarkjs and bellman H steps 2^1..2^20,
# against the CPU; test_gpu_groth16: whole proofs equal to the CPU's), the timings only when
# both pass; then cuzk's NTT (cuzk-bench kernels --ntt-only, data resident, forward, natural
# order) beside sppark's (the anchor sppark_bench, shipped as bin/sppark_bench), the forward,
# inverse and H-step timings of test_gpu --ntt-bench, and optionally a porep-27 proof's
# device time by stage. Binaries from bench/remote-gpu-pack.sh (carry .gpu-deps), with
#   PACK_EXTRA="/path/to/sppark_bench=sppark_bench" bash bench/remote-gpu-pack.sh
# A table last (also $OUT/summary.txt; every log in $OUT/bundle.tgz). About 4 minutes
# without NTT_POREP.
#   NTT_KS="16 20 24 26 27"  the sizes of the NTT comparison
#   NTT_RUNS=5               runs of each timing (median after a warm-up)
#   NTT_BENCH_KS="24 27"     test_gpu --ntt-bench sizes ("" leaves it out)
#   NTT_POREP=1              also cuzk-bench porep -k 27 -p 1 --abc --runs 1 (the 2^27 key
#                            takes minutes to make: off by default), the device's memory in
#                            use sampled every 0.5 s meanwhile (its peak in the summary)
#   NTT_OLD="NAME ..."       other builds' cuzk-bench and test_gpu, each packed as bin/NAME and
#                            bin/NAME-test_gpu (PACK_EXTRA), checked (NAME-test_gpu --ntt) and
#                            timed in the same call (A/B); one whose check fails is not timed
#   NTT_PROBE="NAME ARGS"    a product probe packed as bin/NAME (e.g. fr_low: its own check,
#                            then products per second), run first; its failure stops the round
#   NTT_NCU=K                Nsight Compute on the NTT 2^K's kernels (pipes, issue, stalls by
#                            reason, occupancy), in $OUT/ncu.log, after the timings
#   NTT_MSM="24 26"          also the G1 MSM at those sizes: cuzk-bench kernels beside
#                            sppark_bench --msm (median of NTT_RUNS)
#   NTT_SASS="FILE ..."      objects packed under bin/ (e.g. ntt-new.o): an opcode histogram of
#                            each kernel (cuobjdump --dump-sass), in $OUT/sass-FILE.txt
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" /tmp/ntt-out

finish() {
    echo "== summary"
    printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
    device_bundle
    exit "$1"
}

# the SASS of the packed objects: per kernel, its instructions by opcode (the first word)
for f in ${NTT_SASS:-}; do
    cuobjdump --dump-sass "$D/bin/$f" 2>&1 | awk '
        /Function :/ { fn = $NF; next }
        /^ +\/\*[0-9a-f]+\*\/ / { op = $2; if (op ~ /^@/) op = $3; sub(/;$/, "", op);
                                    n[fn " " op]++; t[fn]++ }
        END { for (k in n) { split(k, a, " "); print a[1], a[2], n[k], t[a[1]] } }' |
        sort -k1,1 -k3,3nr > "$OUT/sass-$f.txt"
    summary+=("sass $f: $(awk '{print $1}' "$OUT/sass-$f.txt" | sort -u | wc -l) kernels")
    awk '$2 ~ /^IMAD|^IADD3|^LOP3|^SEL|^ISETP|^LDS|^STS|^LDG|^STG|^BAR/ {print}' "$OUT/sass-$f.txt" |
        awk '{w[$1] = w[$1] sprintf(" %s=%s", $2, $3); t[$1] = $4}
             END {for (f in w) print substr(f, 1, 60), "total=" t[f], w[f]}' | sort | head -40
done
if [ -n "${NTT_PROBE:-}" ]; then
    # shellcheck disable=SC2086 # the probe's name and its arguments
    device_step probe ${T_PROBE:-150} "differ|fail|error" "$D/bin/"$NTT_PROBE ||
        { summary+=("probe $NTT_PROBE FAILED: no timings"); finish 1; }
    grep '^|' "$OUT/probe.log"
    while read -r l; do summary+=("  $l"); done < <(grep '^|' "$OUT/probe.log")
fi
device_step test_gpu_ntt ${T_NTT_TEST:-200} "fail|differ" "$D/bin/test_gpu" --ntt ||
    { summary+=("test_gpu --ntt FAILED: no timings"); finish 1; }
device_step groth16 ${T_G16:-150} "fail|differ" "$D/bin/test_gpu_groth16" ||
    { summary+=("test_gpu_groth16 FAILED: no timings"); finish 1; }

KS=${NTT_KS:-16 20 24 26 27}
RUNS=${NTT_RUNS:-5}
kargs=() sargs=()
for k in $KS; do kargs+=(-k "$k"); sargs+=(--ntt "$k"); done
device_step kernels ${T_KERNELS:-150} "" "$D/bin/cuzk-bench" kernels "${kargs[@]}" --backend gpu \
    --ntt-only --runs "$RUNS"
cat "$OUT/kernels.log"
OLDS=""
for o in ${NTT_OLD:-}; do
    if device_step "ntt_test_$o" ${T_NTT_TEST:-200} "fail|differ" "$D/bin/$o-test_gpu" --ntt; then
        OLDS="$OLDS $o"
    else
        summary+=("$o-test_gpu --ntt FAILED: $o not timed")
    fi
done
for o in $OLDS; do
    device_step "kernels_$o" ${T_KERNELS:-150} "" "$D/bin/$o" kernels "${kargs[@]}" --backend gpu \
        --ntt-only --runs "$RUNS"
    cat "$OUT/kernels_$o.log"
done
if [ -x "$D/bin/sppark_bench" ]; then
    device_step sppark ${T_SPPARK:-150} "" "$D/bin/sppark_bench" "${sargs[@]}" --runs "$RUNS"
    grep -E '^ntt|check' "$OUT/sppark.log"
else
    summary+=("sppark_bench not packed (PACK_EXTRA=\".../sppark_bench=sppark_bench\")")
fi
if [ -n "${NTT_MSM:-}" ]; then
    margs=() msargs=()
    for k in $NTT_MSM; do margs+=(-k "$k"); msargs+=(--msm "$k"); done
    device_step msm ${T_MSM:-300} "" "$D/bin/cuzk-bench" kernels "${margs[@]}" --backend gpu --runs "$RUNS"
    cat "$OUT/msm.log"
    [ -x "$D/bin/sppark_bench" ] && device_step sppark_msm ${T_MSM:-300} "" "$D/bin/sppark_bench" "${msargs[@]}" --runs "$RUNS" &&
        grep -E '^msm|check' "$OUT/sppark_msm.log"
fi
if [ -n "${NTT_BENCH_KS-24 27}" ]; then
    # shellcheck disable=SC2086 # the sizes are words
    device_step ntt_bench ${T_NTT_BENCH:-150} "fail|differ" "$D/bin/test_gpu" --ntt-bench ${NTT_BENCH_KS-24 27}
    grep -E '^(ntt_|h_)' "$OUT/ntt_bench.log"
    for o in $OLDS; do
        # shellcheck disable=SC2086
        device_step "ntt_bench_$o" ${T_NTT_BENCH:-150} "fail|differ" "$D/bin/$o-test_gpu" --ntt-bench ${NTT_BENCH_KS-24 27}
        grep -E '^(ntt_|h_)' "$OUT/ntt_bench_$o.log"
    done
fi
if [ -n "${NTT_POREP:-}" ]; then
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 >"$OUT/porep27-mem.txt" 2>&1 &
    smi=$!
    device_step porep27 ${T_POREP:-330} "" "$D/bin/cuzk-bench" porep -k 27 -p 1 --runs 1 --backend gpu --abc
    kill "$smi" 2>/dev/null
    summary+=("  $(grep -h '^gpu ' "$OUT/porep27.log" | tail -1)")
    summary+=("  $(grep -h 'device time by stage' "$OUT/porep27.log" | tail -1)")
    summary+=("  $(grep -h 'H MSM accumulation' "$OUT/porep27.log" | tail -1)")
    summary+=("  device memory in use, peak: $(sort -n "$OUT/porep27-mem.txt" | tail -1) MiB")
fi

if [ -n "${NTT_NCU:-}" ]; then
    device_step ncu ${T_NCU:-200} "error" ncu --clock-control none --launch-skip 3 --launch-count 4 \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats \
        --section WarpStateStats --section Occupancy --section LaunchStats \
        --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
        "$D/bin/cuzk-bench" kernels -k "$NTT_NCU" --backend gpu --ntt-only --runs 1
    grep -E '^  [a-z_]+.*\(|stalled_|Issue Slots Busy|Executed Ipc Active|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|Compute \(SM\) Throughput|Memory Throughput|Block Size|Grid Size|Stall' "$OUT/ncu.log" | head -80
fi

# the table: cuzk's forward NTT (ms) beside sppark's, per size
summary+=("Fr NTT forward, natural order, data resident (median of $RUNS, ms):")
hdr=$(printf '%-6s %10s' k cuzk); for o in $OLDS; do hdr+=$(printf ' %10s' "$o"); done
summary+=("$hdr $(printf '%10s %8s  %s' sppark ratio "sppark's own check")")
for k in $KS; do
    c=$(awk -v k="2^$k" '$1 == k {print $3}' "$OUT/kernels.log" | tail -1)
    row=$(printf '%-6s %10s' "2^$k" "${c:--}")
    for o in $OLDS; do
        v=$(awk -v k="2^$k" '$1 == k {print $3}' "$OUT/kernels_$o.log" 2>/dev/null | tail -1)
        row+=$(printf ' %10s' "${v:--}")
    done
    s=$(awk -v k="$k" '$1 == "ntt_fwd_nn" && $2 == "2^" k {print $4}' "$OUT/sppark.log" 2>/dev/null | tail -1)
    sc=$(awk -v k="$k" '$1 == "ntt_fwd_nn" && $2 == "2^" k {print $NF}' "$OUT/sppark.log" 2>/dev/null | tail -1)
    r=$(awk -v c="${c:-0}" -v s="${s:-0}" 'BEGIN { if (c > 0 && s > 0) printf "%.3f", c / s; else print "-" }')
    summary+=("$row $(printf '%10s %8s  %s' "${s:--}" "$r" "${sc:--}")")
done
if [ -f "$OUT/ntt_bench.log" ]; then
    summary+=("test_gpu --ntt-bench (median of 3, ms):")
    while read -r name ms; do summary+=("  $name $ms"); done < <(grep -E '^(ntt_|h_)' "$OUT/ntt_bench.log" | awk '{print $1, $2}')
    for o in $OLDS; do
        summary+=("the same, $o:")
        while read -r name ms; do summary+=("  $name $ms"); done < <(grep -E '^(ntt_|h_)' "$OUT/ntt_bench_$o.log" | awk '{print $1, $2}')
    done
fi
finish 0
