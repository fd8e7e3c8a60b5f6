#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cuzk-bench kernels (tools/cuzk-bench/kernels.c): --ntt-only times the NTTs alone (no MSM
# column filled), the default times both; where a GPU answers, its NTT must equal the CPU's
# (the command fails on a difference).
set -euo pipefail
bench="$CUZK_BIN/cuzk-bench"
for mode in --ntt-only ""; do
    # shellcheck disable=SC2086 # mode is one word or none
    out=$("$bench" kernels -k 10 -k 12 --runs 1 --json $mode | tail -1)
    echo "$out"
    python3 - "$out" "$mode" <<'PY'
import json, sys
rows = json.loads(sys.argv[1])
only = sys.argv[2] == "--ntt-only"
assert [r["k"] for r in rows] == [10, 12], rows
for r in rows:
    assert r["ntt_cpu_ms"] > 0, r
    assert (r["msm_cpu_ms"] < 0) == only, r  # -1: not run
PY
done
if "$bench" kernels --bogus 2>/dev/null; then echo "--bogus accepted" >&2; exit 1; fi
echo "bench_kernels: OK"
