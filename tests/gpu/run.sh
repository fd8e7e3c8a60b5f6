#!/bin/bash
# GPU backend on a CUDA machine, in one go: build (unless a prebuilt test_gpu runs there),
# correctness against the CPU (test_gpu), then the benchmarks (test_gpu --bench, with the
# MSMs' stage times), ending with a short table. Logs go to $OUT (default build dir/out).
#   PREBUILT=path/to/test_gpu  use that binary when it starts there (saves the build)
#   SKIP_TEST=1 / SKIP_BENCH=1 leave a part out
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu-run}
OUT=${OUT:-$BUILD/out}
mkdir -p "$OUT" "$BUILD"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$OUT/gpu.txt"

BIN=""
if [ -n "${PREBUILT:-}" ] && [ -x "$PREBUILT" ]; then
    "$PREBUILT" --devices >"$OUT/probe.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then BIN=$PREBUILT; else echo "prebuilt binary failed ($rc), building"; cat "$OUT/probe.log"; fi
fi
if [ -z "$BIN" ]; then
    EXTRA=()
    # libraries the configure step requires; a carried copy stands in where they are missing
    DEPS=$ROOT/.gpu-deps
    if [ -d "$DEPS" ] && ! ls /usr/lib/x86_64-linux-gnu/libjansson.* >/dev/null 2>&1; then
        EXTRA+=(-DJANSSON_LIB=$DEPS/libjansson.a -DGMP_LIBRARY=$DEPS/libgmp.a -DGMP_INCLUDE_DIR=$DEPS/include)
    fi
    t0=$(date +%s)
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCUZK_CUDA=ON -DCMAKE_BUILD_TYPE=Release "${EXTRA[@]}" >"$OUT/configure.log" 2>&1 \
        || { tail -30 "$OUT/configure.log"; exit 1; }
    cmake --build "$BUILD" -j"$(nproc)" --target test_gpu >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
    echo "built in $(( $(date +%s) - t0 )) s"
    BIN=$BUILD/tests/gpu/test_gpu
fi

TEST_RC=skipped
if [ -z "${SKIP_TEST:-}" ]; then
    t0=$(date +%s)
    timeout ${TEST_TIMEOUT:-300} "$BIN" >"$OUT/test.log" 2>&1
    TEST_RC=$?
    echo "test_gpu: rc=$TEST_RC in $(( $(date +%s) - t0 )) s"
    grep -v "^{" "$OUT/test.log" | tail -25
fi
if [ -z "${SKIP_BENCH:-}" ]; then
    timeout ${BENCH_TIMEOUT:-300} "$BIN" --bench >"$OUT/bench.log" 2>&1
    echo "bench: rc=$?"
    grep -E "gpu msm (g1 )?n=1677" "$OUT/bench.log" | tail -6
    grep -E "gpu msm g2 n=" "$OUT/bench.log" | tail -3
    grep -v "^gpu msm" "$OUT/bench.log" | grep -v "^{" | tail -30
fi
echo "== summary: test rc=$TEST_RC; $(grep -h "passed," "$OUT/test.log" 2>/dev/null | tail -1)"
