#!/bin/bash
# One device call comparing the G1 MSM's two bucket accumulations, XYZZ and batch-affine (the
# library picks one by size, CUZK_GPU_MSM_ACC_AUTO): correctness against the CPU first
# (test_gpu runs every G1 MSM check with each; whole proofs equal to the CPU's), then
# test_gpu --bench, then `cuzk-bench kernels --profile` side by side (msm_dev: XYZZ, msm_aff:
# batch-affine, msm_gpu: the default, with their stage times), porep batches, the large
# sizes. Binaries from bench/remote-gpu-pack.sh (carry .gpu-deps). A table last.
#   VAR_SKIP_LARGE=1   leave out test_gpu --large
#   VAR_KERNELS="24 26"  cuzk-bench kernels sizes (VAR_KERNEL_BINS="cuzk-bench NAME": other
#     builds packed by PACK_EXTRA, VAR_KERNEL_WINDOWS="0 21 22": MSM windows, 0 chosen from n)
#   VAR_POREP="24:4 27:1:--abc"  porep batches (k:partitions[:cuzk-bench porep flags])
#   VAR_POREP_BASES="auto stream"  cuzk-bench porep --gpu bases=... for them
#   VAR_SKIP_TESTS=1  leave out test_gpu and --bench
#   VAR_SUBGROUP=1  also test_gpu_subgroup;  VAR_SANITIZER=1  test_gpu_groth16 under memcheck
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" /tmp/variants-out

device_step groth16_default ${T_G16:-120} "fail|differ" "$D/bin/test_gpu_groth16"
if [ -z "${VAR_SKIP_TESTS:-}" ]; then
device_step test_gpu ${T_TEST_GPU:-200} "fail|differ|affine slices|affine pass" "$D/bin/test_gpu"
device_step test_gpu_bench ${T_BENCH:-150} "fail|differ" "$D/bin/test_gpu" --bench
grep -hE '"bench": "(ntt|h_|msm)' "$OUT/test_gpu_bench.log" | sed 's/{"bench": "\([^"]*\)", "median_ms": \([0-9.]*\).*/\1 \2/' | head -80
grep -h '^gpu msm' "$OUT/test_gpu_bench.log" | head -20
fi
[ -n "${VAR_SUBGROUP:-}" ] && device_step subgroup ${T_SUBGROUP:-120} "fail|differ" "$D/bin/test_gpu_subgroup"

for k in ${VAR_KERNELS-24 26}; do
    for bin in ${VAR_KERNEL_BINS:-cuzk-bench}; do # other builds packed with PACK_EXTRA
        for w in ${VAR_KERNEL_WINDOWS:-0}; do # 0: the window chosen from n
            t0=$(date +%s)
            log="$OUT/kernels-$k-$bin-w$w"
            timeout ${T_KERNELS:-150} "$D/bin/$bin" kernels -k "$k" --backend gpu --runs 3 \
                --window "$w" --profile >"$log.log" 2>"$log.err"; rc=$?
            summary+=("kernels 2^$k $bin window $w rc=$rc ($(( $(date +%s) - t0 )) s): $(grep -E '^2\^' "$log.log" | tail -1)")
            for col in msm_dev msm_aff; do
                summary+=("  $(grep "^gpu msm g1 .*($col" "$log.err" | tail -1)")
            done
            echo "-- kernels 2^$k, $bin, window $w"
            grep -v '^{' "$log.log"
        done
    done
done

for spec in ${VAR_POREP:-}; do
    IFS=: read -r k kp kargs_ <<<"$spec"
    for bases_ in ${VAR_POREP_BASES:-auto}; do
        log="$OUT/porep-$k-x${kp:-2}${kargs_:+-abc}-$bases_.log"
        t0=$(date +%s)
        timeout ${T_POREP:-200} "$D/bin/cuzk-bench" porep -k "$k" -p "${kp:-2}" --runs 3 --backend gpu \
            --gpu "bases=$bases_" --gpu b_g2=device ${kargs_:-} >"$log" 2>&1; rc=$?
        summary+=("porep-$k x${kp:-2} ${kargs_:-} bases $bases_ rc=$rc ($(( $(date +%s) - t0 )) s): $(grep -h '^gpu ' "$log" | tail -1)")
        summary+=("  $(grep -h '^gpu device time by stage' "$log" | tail -1) $(grep -h '^gpu bases streamed' "$log" | tail -1)")
    done
done

if [ -n "${VAR_SANITIZER:-}" ] && command -v compute-sanitizer >/dev/null; then
    device_step sanitizer ${T_SANITIZER:-240} "" compute-sanitizer --tool memcheck --leak-check full \
        "$D/bin/test_gpu_groth16"
    summary+=("  compute-sanitizer memcheck of test_gpu_groth16: $(grep -h 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)")
fi
[ -z "${VAR_SKIP_LARGE:-}" ] && device_step test_gpu_large ${T_LARGE:-300} "fail|differ|auto accumulation" "$D/bin/test_gpu" --large

echo "== summary"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
device_bundle
