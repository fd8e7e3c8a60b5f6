#!/usr/bin/env bash
# The main job on a small built-in example: build cuzk and run its micro-benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target cuzk-bench
./build/cuzk-bench micro
