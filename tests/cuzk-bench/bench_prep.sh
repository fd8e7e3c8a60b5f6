#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cuzk-bench prep (tools/cuzk-bench/prep.c): the CPU side of a GPU partition, which runs on any
# machine; its prepared splits must equal the reference way's, at several thread counts and
# sizes, and bad options must be refused.
set -euo pipefail
bench="$CUZK_BIN/cuzk-bench"
for k in 14 16; do
    for t in 1 3; do
        out=$("$bench" prep -k "$k" --threads "$t" --runs 2 --json)
        echo "$out"
        python3 - "$out" "$k" "$t" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
k, t = int(sys.argv[2]), int(sys.argv[3])
assert j["bench"] == "prep" and j["k"] == k and j["threads"] == t, j
assert j["same"] is True, "prepared splits differ from the reference"
a, b, l = j["sig"]
# porep witness: about a tenth of the values are significant, nearly all of them in A and L,
# about a quarter in B
n = j["n_vars"]
assert 0.05 * n < a < 0.15 * n and 0.05 * n < l < 0.15 * n and 0 < b < a, j
for s in ("copy_ms", "prep_ms", "prep_copy_ms", "reference_ms"):
    assert set(j[s]) == {"median", "best"}, (s, j[s])
PY
    done
done
"$bench" prep -k 12 --runs 1 | grep -q "same splits and copy: yes"
if "$bench" prep -k 3 2>/dev/null; then echo "k 3 accepted" >&2; exit 1; fi
if "$bench" prep --bogus 2>/dev/null; then echo "--bogus accepted" >&2; exit 1; fi
echo "bench_prep: OK"
