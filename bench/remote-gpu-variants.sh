#!/bin/bash
# One device call comparing the kernels' implementation variants (issue 4): the NTT path
# (CUZK_GPU_NTT_MODE=old|new, CUZK_GPU_NTT_RADIX=4|8) and the MSM accumulation
# (CUZK_GPU_MSM_ACC=xyzz|affine): correctness against the CPU first (test_gpu runs every
# variant; whole proofs with each variant equal to the CPU's), then timings side by side,
# then the large sizes. Binaries from bench/remote-gpu-pack.sh (carry .gpu-deps). A table last.
#   VAR_SKIP_LARGE=1   leave out test_gpu --large
#   VAR_KERNELS="24 26"  cuzk-bench kernels sizes (VAR_KERNEL_ACC="xyzz affine",
#     VAR_KERNEL_BINS="cuzk-bench NAME": other builds packed by PACK_EXTRA, VAR_KERNEL_WINDOWS=
#     "0 21 22": MSM windows, 0 chosen from n);  VAR_POREP="24:4 27:1:--abc" porep batches
#   VAR_POREP_MODES="old,xyzz new,xyzz new,xyzz,stream"  NTT mode,MSM accumulation[,bases]
#     for them (bases: cuzk-bench porep --gpu bases=..., auto when not given)
#   VAR_SKIP_TESTS=1  leave out test_gpu and --bench (the variants' correctness run)
#   VAR_SKIP_VARIANTS=1  run test_gpu but leave out the variants' proofs and --bench
#   VAR_SUBGROUP=1  also test_gpu_subgroup;  VAR_SANITIZER=1  test_gpu_groth16 under memcheck
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" /tmp/variants-out

device_step groth16_default ${T_G16:-120} "fail|differ" "$D/bin/test_gpu_groth16"
if [ -z "${VAR_SKIP_TESTS:-}" ]; then
device_step test_gpu ${T_TEST_GPU:-200} "fail|differ" "$D/bin/test_gpu"
fi
[ -n "${VAR_SUBGROUP:-}" ] && device_step subgroup ${T_SUBGROUP:-120} "fail|differ" "$D/bin/test_gpu_subgroup"
if [ -z "${VAR_SKIP_TESTS:-}" ] && [ -z "${VAR_SKIP_VARIANTS:-}" ]; then
device_step groth16_ntt_new ${T_G16:-120} "fail|differ" env CUZK_GPU_NTT_MODE=new "$D/bin/test_gpu_groth16"
device_step groth16_ntt_new8 ${T_G16:-120} "fail|differ" env CUZK_GPU_NTT_MODE=new CUZK_GPU_NTT_RADIX=8 "$D/bin/test_gpu_groth16"
device_step groth16_msm_affine ${T_G16:-120} "fail|differ" env CUZK_GPU_MSM_ACC=affine "$D/bin/test_gpu_groth16"
device_step test_gpu_bench ${T_BENCH:-150} "fail|differ" "$D/bin/test_gpu" --bench
grep -hE '"bench": "(ntt|h_|msm)' "$OUT/test_gpu_bench.log" | sed 's/{"bench": "\([^"]*\)", "median_ms": \([0-9.]*\).*/\1 \2/' | head -80
fi

for k in ${VAR_KERNELS-24 26}; do
    for acc in ${VAR_KERNEL_ACC:-xyzz affine}; do
        for bin in ${VAR_KERNEL_BINS:-cuzk-bench}; do # other builds packed with PACK_EXTRA
          for w in ${VAR_KERNEL_WINDOWS:-0}; do # 0: the window chosen from n
            t0=$(date +%s)
            log="$OUT/kernels-$k-$acc-$bin-w$w"
            CUZK_GPU_MSM_ACC=$acc CUZK_GPU_MSM_PROFILE=1 timeout ${T_KERNELS:-150} "$D/bin/$bin" kernels \
                -k "$k" --backend gpu --runs 3 --window "$w" >"$log.log" 2>"$log.err"; rc=$?
            summary+=("kernels 2^$k msm acc $acc $bin window $w rc=$rc ($(( $(date +%s) - t0 )) s): $(grep -E '^2\^' "$log.log" | tail -1)")
            summary+=("  $(grep '^gpu msm g1' "$log.err" | grep -v affine | tail -1)")
            echo "-- kernels 2^$k, accumulation $acc, $bin, window $w"
            grep -v '^{' "$log.log"
          done
        done
    done
done

for spec in ${VAR_POREP:-}; do
    IFS=: read -r k kp kargs_ <<<"$spec"
    for v in ${VAR_POREP_MODES:-old,xyzz new,xyzz new,affine}; do
        IFS=, read -r ntt_ acc_ bases_ <<<"$v"
        bases_=${bases_:-auto}
        log="$OUT/porep-$k-x${kp:-2}${kargs_:+-abc}-$ntt_-$acc_-$bases_.log"
        t0=$(date +%s)
        CUZK_GPU_NTT_MODE=$ntt_ CUZK_GPU_MSM_ACC=$acc_ timeout ${T_POREP:-200} \
            "$D/bin/cuzk-bench" porep -k "$k" -p "${kp:-2}" --runs 3 --backend gpu \
            --gpu "bases=$bases_" --gpu b_g2=device \
            ${kargs_:-} >"$log" 2>&1; rc=$?
        summary+=("porep-$k x${kp:-2} ${kargs_:-} ntt $ntt_ msm $acc_ bases $bases_ rc=$rc ($(( $(date +%s) - t0 )) s): $(grep -h '^gpu ' "$log" | tail -1)")
        summary+=("  $(grep -h '^gpu device time by stage' "$log" | tail -1) $(grep -h '^gpu bases streamed' "$log" | tail -1)")
    done
done

if [ -n "${VAR_SANITIZER:-}" ] && command -v compute-sanitizer >/dev/null; then
    device_step sanitizer ${T_SANITIZER:-240} "" compute-sanitizer --tool memcheck --leak-check full \
        "$D/bin/test_gpu_groth16"
    summary+=("  compute-sanitizer memcheck of test_gpu_groth16: $(grep -h 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)")
fi
[ -z "${VAR_SKIP_LARGE:-}" ] && device_step test_gpu_large ${T_LARGE:-300} "fail|differ" "$D/bin/test_gpu" --large

echo "== summary"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
device_bundle
