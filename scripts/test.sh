#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every test: installs dependencies, builds (CUDA when nvcc is present), runs CTest,
# then builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the unit,
# daemon and bench tests there (the daemon itself instrumented, leaks checked at its exit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCUZK_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure --timeout 900 -j"$jobs")

if [ "${CUZK_SKIP_SANITIZE:-0}" != 1 ]; then
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUZK_CUDA=OFF -DCUZK_SANITIZE=ON -DCUZK_WERROR=ON >/dev/null
    cmake --build build-asan -j"$jobs"
    (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --output-on-failure --timeout 900 -j"$jobs" -L "unit|daemon|bench")
fi
