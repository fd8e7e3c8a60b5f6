#!/bin/bash
# One round on the lent GPU machine (one `run` call): whole proofs on the GPU against the CPU,
# the porep-k stage benchmark, then the kernel tests, ending with a short table. Binaries are
# built here (CUDA build) and carried in .gpu-deps/bin with the shared libraries they need in
# .gpu-deps/lib (bench/remote-gpu-pack.sh makes both).
#   ROUND_K="24 26"   porep sizes;   ROUND_CPU_K=24  sizes also run on the CPU backend
#   ROUND_P=2         partitions per batch;   ROUND_B_G2="cpu device"  where B_G2 runs
#   ROUND_PORE_ARGS=--abc  extra cuzk-bench porep flags (--abc: a, b, c given, no synthesis)
#   ROUND_PORE_BINS="cuzk-bench NAME"  each porep run with each of these packed builds (A/B;
#                     PACK_EXTRA=".../cuzk-bench=NAME"); ROUND_PORE_RUNS=3
#   ROUND_DAEMON=1    also a cuzk-daemon batch on the GPU (the chain fixture, every proof checked)
#   ROUND_KERNELS="20 24 26"  also cuzk-bench kernels (NTT and MSM, CPU and GPU) at those sizes
#                     (ROUND_WINDOWS="18 20": once per GPU MSM window)
#   SKIP_KERNELS=1 / SKIP_SANITIZER=1  leave those parts out (SANITIZER_TIMEOUT=180 s)
#   ROUND_LARGE=1     test_gpu --large (NTT, MSM, batch add at 2^24 and 2^26 against the CPU)
#   ROUND_D10_K=22    the daemon benchmark of 10-partition jobs (ROUND_D10_WORKERS="1 2",
#                     ROUND_D10_GPUS="1 2" on the first g GPUs; ROUND_D10_STORES="sqlite
#                     postgres": each run on the embedded store, then on a PostgreSQL one
#                     (bench/lib-pg.sh; PACK_PG=1 carries the server))
#   ROUND_FARM=1      bench/farm.sh on this host's CPUs: 1, 2, 3 daemons (CPU backend,
#                     --prove-threads ROUND_FARM_THREADS=5) on one PostgreSQL, the example
#                     key and a 2^16 circuit (ROUND_FARM_WORKLOADS="example k16"; PACK_PG=1)
#   ROUND_SKIP_GROTH16=1  leave out test_gpu_groth16 (a round of service benchmarks alone)
#   ROUND_MGPU_K=24   one porep batch (ROUND_MGPU_P=8 partitions) on 1, 2, 4, 8 GPUs
#   ROUND_SUBGROUP=1  test_gpu_subgroup, and test_params (its decode benchmark)
#   ROUND_PREP="22"   cuzk-bench prep (a GPU partition's host side) at those sizes
#   ROUND_SETUP=1     test_gpu_setup;  ROUND_SCALE_K="24"  bench/scale.sh (MEM=1: in memory)
#   ROUND_NSYS="22:3" Nsight Systems over cuzk-bench porep -k 22 -p 3 --runs 1 (B2 on the
#                     device): the kernels by total time, and the device's idle time between
#                     its operations (gaps of 0.1 ms and more, by size), in $OUT/nsys-*.txt
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" /tmp/round-out

# ROUND_SKIP_GROTH16=1: a round of service benchmarks alone (the GPU code checked elsewhere)
if [ -z "${ROUND_SKIP_GROTH16:-}" ]; then
    device_step test_gpu_groth16 240 "" "$D/bin/test_gpu_groth16"
    tail -14 "$OUT/test_gpu_groth16.log"
fi

if [ -n "${ROUND_DAEMON:-}" ]; then
    . "$ROOT/bench/lib-daemon.sh"
    C=$ROOT/tests/data/circuits/chain
    t0=$(date +%s)
    if cuzk_daemon_start "$D/bin" "$OUT/daemon.log" --key "example=$C/circuit.zkey" --gpu-workers 2; then
        timeout 90 "$D/bin/cuzk-bench" batch -c 20 -j 4 --addr "$CUZK_ADDR" --key example \
            --witness "$C/witness.wtns" --verify-with "$C/verification_key.json" >"$OUT/daemon-batch.log" 2>&1
        rc=$?
        cuzk_daemon_stop; src=$?
        summary+=("daemon batch on the GPU: bench rc=$rc, daemon exit $src ($(( $(date +%s) - t0 )) s)")
        grep -E "jobs done|throughput|device|latency per job" "$OUT/daemon-batch.log"
        grep -c "dev=gpu0" "$OUT/daemon.log" | sed 's/^/daemon log lines on gpu0: /'
    else
        summary+=("daemon did not start")
    fi
fi

if [ -n "${ROUND_D10_K:-}" ]; then
    # jobs of 10 partitions of a real circuit (cuzk gen porep profile,
    # cuzk setup), through cuzk-daemon on the GPU with 1 and then 2 workers per device
    W10=${ROUND_D10_DIR:-/tmp/d10}
    t0=$(date +%s)
    "$D/bin/cuzk" gen --domain "$ROUND_D10_K" --partitions 10 --profile porep --seed 7 -q -o "$W10" \
        && "$D/bin/cuzk" setup "$W10/circuit.r1cs" "$W10/circuit.zkey" \
        && "$D/bin/cuzk" export vk "$W10/circuit.zkey" "$W10/vk.json"; rc=$?
    summary+=("d10: gen + setup 2^$ROUND_D10_K rc=$rc ($(( $(date +%s) - t0 )) s)")
    wargs=(); for i in 0 1 2 3 4 5 6 7 8 9; do wargs+=(--witness "$W10/witness-$i.wtns"); done
    for w in ${ROUND_D10_WORKERS:-1 2}; do
      # ROUND_D10_GPUS="1 2": the daemon on the first g GPUs only (CUDA_VISIBLE_DEVICES)
      for g in ${ROUND_D10_GPUS:-all}; do
        envp=(); [ "$g" != all ] && envp=("CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1)))")
        for st in ${ROUND_D10_STORES:-sqlite}; do
          sargs=(); tag=d10-w$w-g$g
          if [ "$st" = postgres ]; then
            . "$ROOT/bench/lib-pg.sh"
            if [ -z "$CUZK_PG_DIR" ]; then cuzk_pg_start cuzk_d10 >"$OUT/pg.log" 2>&1 || { summary+=("d10: no PostgreSQL ($(tail -1 "$OUT/pg.log"))"); continue; }; fi
            cuzk_pg_createdb "cuzk_d10_w${w}_g$g" || continue
            sargs=(--store "$CUZK_PG_URL"); tag=$tag-pg
          fi
          t0=$(date +%s)
          env "${envp[@]}" BUILD_DIR=$D/bin timeout ${D10_TIMEOUT:-200} bash "$ROOT/bench/daemon-batch.sh" --zkey "$W10/circuit.zkey" \
              "${wargs[@]}" --vk "$W10/vk.json" -c ${ROUND_D10_C:-6} -j ${ROUND_D10_J:-3} --runs ${ROUND_D10_RUNS:-2} \
              --out "$OUT/$tag" -- --gpu-workers "$w" "${sargs[@]}" >"$OUT/$tag.log" 2>&1; rc=$?
          summary+=("d10: 10-partition jobs of 2^$ROUND_D10_K, $w gpu worker(s) per device, gpus $g, store $st: rc=$rc ($(( $(date +%s) - t0 )) s); $(grep -h '^median' "$OUT/$tag.log")")
          grep -hE "^run|^median|^batch|device gpu|gap between" "$OUT/$tag.log"
        done
      done
    done
    declare -F cuzk_pg_stop >/dev/null && cuzk_pg_stop
fi

if [ -n "${ROUND_FARM:-}" ]; then
    t0=$(date +%s)
    FW=/tmp/farm16
    wls=${ROUND_FARM_WORKLOADS:-example k16}
    case " $wls " in *" k16 "*)
        "$D/bin/cuzk" gen --domain 16 --partitions 1 --seed 5 -q -o "$FW" \
            && "$D/bin/cuzk" setup "$FW/circuit.r1cs" "$FW/circuit.zkey" \
            && "$D/bin/cuzk" export vk "$FW/circuit.zkey" "$FW/vk.json" ;;
    esac
    for wl in $wls; do
        fa=(); [ "$wl" = k16 ] && fa=(--zkey "$FW/circuit.zkey" --witness "$FW/witness-0.wtns" --vk "$FW/vk.json")
        CUZK_BACKEND=cpu BUILD_DIR=$D/bin timeout ${FARM_TIMEOUT:-240} bash "$ROOT/bench/farm.sh" \
            --daemons "1 2 3" -c ${ROUND_FARM_C:-120} -p 2 -j 12 --sqlite "${fa[@]}" \
            -- --prove-threads ${ROUND_FARM_THREADS:-5} >"$OUT/farm-$wl.log" 2>&1; rc=$?
        summary+=("farm $wl: rc=$rc ($(( $(date +%s) - t0 )) s)")
        grep -E "^\|" "$OUT/farm-$wl.log"
    done
fi

# ROUND_K entries: K, or K:P, or K:P:FLAG (e.g. "24:4 27:1:--abc"), else ROUND_P / ROUND_PORE_ARGS
for spec in ${ROUND_K-24 26}; do
    IFS=: read -r k kp kargs_ <<<"$spec"
    kp=${kp:-${ROUND_P:-2}}; kargs_=${kargs_:-${ROUND_PORE_ARGS:-}}
    for g2 in ${ROUND_B_G2:-cpu}; do
        [ "$g2" = gpu ] && g2=device # cuzk-bench porep --gpu b_g2=device|cpu
        be=gpu
        for c in ${ROUND_CPU_K:-}; do [ "$c" = "$k" ] && [ "$g2" = cpu ] && be=both; done
        for bin in ${ROUND_PORE_BINS:-cuzk-bench}; do
        t0=$(date +%s); tag=porep-$k-$g2; [ "$bin" != cuzk-bench ] && tag=$tag-$bin
        timeout ${PORE_TIMEOUT:-300} "$D/bin/$bin" porep -k "$k" -p "$kp" --runs ${ROUND_PORE_RUNS:-3} \
            --backend $be --gpu "b_g2=$g2" $kargs_ --json >"$OUT/$tag.log" 2>"$OUT/$tag.err"; rc=$?
        summary+=("porep-$k x$kp $kargs_ ($be, b_g2 on $g2, $bin) rc=$rc ($(( $(date +%s) - t0 )) s)")
        while read -r l; do summary+=("  $l"); done < <(grep -E "^gpu|device" "$OUT/$tag.log" | head -${ROUND_PORE_LINES:-4})
        grep -v '^{' "$OUT/$tag.log"
        tail -2 "$OUT/$tag.err"
        done
    done
done

if [ -n "${ROUND_MGPU_K:-}" ]; then
    # one batch of porep-K partitions over 1, 2, 4, 8 GPUs (as many as are visible),
    # the library spreading the partitions (cuzk-bench porep --devices N)
    ng=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    for nd in 1 2 4 8; do
        [ "$nd" -le "$ng" ] || break
        t0=$(date +%s)
        timeout ${MGPU_TIMEOUT:-300} "$D/bin/cuzk-bench" porep -k "$ROUND_MGPU_K" -p "${ROUND_MGPU_P:-8}" --runs 3 \
            --backend gpu --gpu b_g2=device --devices "$nd" ${ROUND_MGPU_ARGS:-} --json \
            >"$OUT/mgpu-$nd.log" 2>"$OUT/mgpu-$nd.err"; rc=$?
        tot=$(grep -o '"total_ms":[0-9.]*' "$OUT/mgpu-$nd.log" | head -1 | cut -d: -f2)
        summary+=("porep-$ROUND_MGPU_K x${ROUND_MGPU_P:-8} on $nd GPU(s): rc=$rc, batch ${tot:-?} ms ($(( $(date +%s) - t0 )) s)")
        grep -v '^{' "$OUT/mgpu-$nd.log"
    done
fi

if [ -n "${ROUND_NSYS:-}" ]; then
    NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys 2>/dev/null | head -1)
    IFS=: read -r k kp <<<"$ROUND_NSYS"
    if [ -n "$NSYS" ]; then
        t0=$(date +%s)
        timeout ${NSYS_TIMEOUT:-240} "$NSYS" profile -o /tmp/nsys-$k -f true --trace cuda \
            "$D/bin/cuzk-bench" porep -k "$k" -p "${kp:-3}" --runs 1 --backend gpu --gpu b_g2=device \
            >"$OUT/nsys-run.log" 2>&1; rc=$?
        "$NSYS" stats -q --report cuda_gpu_kern_sum --format csv /tmp/nsys-$k.nsys-rep >"$OUT/nsys-kern.txt" 2>&1
        "$NSYS" stats -q --report cuda_gpu_trace --format csv /tmp/nsys-$k.nsys-rep >/tmp/nsys-trace.csv 2>&1
        # the device's idle gaps: operations sorted by start, a gap where the next starts after
        # every earlier one ended (the CSV's first two columns: start ns, duration ns)
        awk -F, 'NR > 1 && $1 ~ /^[0-9]/ { print $1, $2 }' /tmp/nsys-trace.csv | sort -n |
            awk '{ s = $1; e = $1 + $2; if (n++ && s > end) { g = (s - end) / 1e6; tot += g;
                       if (g >= 0.1) { c[g >= 10 ? "10+" : g >= 1 ? "1-10" : "0.1-1"]++; sz[g >= 10 ? "10+" : g >= 1 ? "1-10" : "0.1-1"] += g } }
                   if (n == 1) first = s; if (e > end) end = e }
                   if (n > 1 && g >= 0.5) last[++nl] = sprintf("at %.1f ms: %.2f ms idle", (s - first) / 1e6, g); g = 0 }
                 END { printf "device span %.1f ms, idle %.1f ms; gaps >= 0.1 ms:", (end - first) / 1e6, tot;
                       for (k in c) printf " %s ms: %d (%.1f ms)", k, c[k], sz[k]; print "";
                       for (i = (nl > 80 ? nl - 79 : 1); i <= nl; i++) print last[i] }' >"$OUT/nsys-gaps.txt"
        summary+=("nsys porep-$k x${kp:-3}: rc=$rc ($(( $(date +%s) - t0 )) s); $(head -1 "$OUT/nsys-gaps.txt")")
        head -25 "$OUT/nsys-kern.txt"; head -1 "$OUT/nsys-gaps.txt"
    else
        summary+=("nsys: not on this machine")
    fi
fi

# ROUND_WINDOWS="18 20": the kernels once per GPU MSM window (--window; 0: chosen from n)
if [ -n "${ROUND_KERNELS:-}" ]; then
    kargs=(); for k in $ROUND_KERNELS; do kargs+=(-k "$k"); done
    for w in ${ROUND_WINDOWS:-0}; do
        t0=$(date +%s); tag=kernels; [ "$w" != 0 ] && tag=kernels-w$w
        timeout ${KERNELS_BENCH_TIMEOUT:-200} "$D/bin/cuzk-bench" kernels "${kargs[@]}" --backend ${ROUND_KERNELS_BACKEND:-gpu} \
            --window "$w" --runs 3 --json --profile >"$OUT/$tag.log" 2>"$OUT/$tag.err"; rc=$?
        summary+=("cuzk-bench kernels, window $w: rc=$rc ($(( $(date +%s) - t0 )) s)")
        echo "-- kernels, window $w (0: chosen from n)"
        grep -v '^\[' "$OUT/$tag.log" | grep -v '^{'
        grep '^gpu msm g1' "$OUT/$tag.err"
    done
fi

# ROUND_PREP="22 27": the host side of a GPU partition (cuzk-bench prep) on this host's
# cores, all of them and ROUND_PREP_THREADS (default "4 8": a daemon worker's share)
if [ -n "${ROUND_PREP:-}" ]; then
    for k in $ROUND_PREP; do
        for t in 0 ${ROUND_PREP_THREADS:-4 8}; do
            t0=$(date +%s)
            timeout ${PREP_TIMEOUT:-200} "$D/bin/cuzk-bench" prep -k "$k" --threads "$t" --runs 5 \
                >"$OUT/prep-$k-t$t.log" 2>&1; rc=$?
            summary+=("cuzk-bench prep -k $k --threads $t: rc=$rc ($(( $(date +%s) - t0 )) s); $(tail -1 "$OUT/prep-$k-t$t.log")")
            cat "$OUT/prep-$k-t$t.log"
        done
    done
fi

[ -z "${SKIP_KERNELS:-}" ] && device_step test_gpu ${KERNEL_TIMEOUT:-240} "fail" "$D/bin/test_gpu"
# the large sizes: kernels at 2^24 and 2^26 against the CPU
[ -n "${ROUND_LARGE:-}" ] && device_step test_gpu_large ${LARGE_TIMEOUT:-420} "large|fail|differ" "$D/bin/test_gpu" --large
if command -v compute-sanitizer >/dev/null && [ -z "${SKIP_SANITIZER:-}" ]; then
    device_step sanitizer ${SANITIZER_TIMEOUT:-180} "" compute-sanitizer --tool memcheck --leak-check full "$D/bin/test_gpu_groth16"
    summary+=("  compute-sanitizer memcheck of test_gpu_groth16: $(grep -h 'ERROR SUMMARY' "$OUT/sanitizer.log" | tail -1)")
fi
if [ -n "${ROUND_SUBGROUP:-}" ]; then
    # subgroup checks on the device: the kernel against the CPU, then test_params (its decode
    # benchmark with the library's default, the device for vectors of 65536 points and more);
    # the .params reader's rejections with every vector checked on the device
    # (cuzk_gpu_opts.params_check_min = 1) are in test_gpu_groth16, run above
    device_step test_gpu_subgroup ${SUBGROUP_TIMEOUT:-200} "fail|points" "$D/bin/test_gpu_subgroup"
    export CUZK_PARAMS_BENCH_LOG2=${ROUND_SUBGROUP_BENCH_LOG2:-20}
    device_step test_params ${SUBGROUP_TIMEOUT:-200} "fail|MB/s|decode" "$D/bin/test_params"
    unset CUZK_PARAMS_BENCH_LOG2
fi
# GPU fixed-base setup against the CPU (points, whole keys, proofs from GPU-made keys)
[ -n "${ROUND_SETUP:-}" ] && device_step test_gpu_setup ${SETUP_TIMEOUT:-240} "fail|ms" "$D/bin/test_gpu_setup"

if [ -n "${ROUND_SCALE_K:-}" ]; then
    # real setup + proofs at scale (bench/scale.sh), proofs kept for snarkjs here
    for k in $ROUND_SCALE_K; do
        t0=$(date +%s)
        K=$k P=${ROUND_SCALE_P:-1} FORMATS="${ROUND_SCALE_FORMATS:-zkey}" BUILD=$D/bin WORK=/tmp/scale-$k \
            KEEP=$OUT/scale-$k CLEAN=1 PARAMS_FLAGS="${ROUND_SCALE_PARAMS_FLAGS:---trusted}" CUZK_BACKEND=gpu \
            timeout ${SCALE_TIMEOUT:-400} bash "$ROOT/bench/scale.sh" >"$OUT/scale-$k.log" 2>&1; rc=$?
        summary+=("scale K=$k P=${ROUND_SCALE_P:-1}: rc=$rc ($(( $(date +%s) - t0 )) s)")
        sed -n '/^== scale/,$p' "$OUT/scale-$k.log"
        grep -h "cuzk prove:\|setup: " "$OUT/scale-$k.log" | head -20
        rm -rf /tmp/scale-$k
    done
fi

echo "== summary"
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
device_bundle
