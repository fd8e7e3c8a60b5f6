#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Two builds' one-thread CPU MSMs side by side on the lent machine's host, pinned to one core,
# interleaved: bench/blst-msm/cuzk_side.c linked with each build's libcuzk.a, carried with
# remote-gpu-pack.sh's PACK_EXTRA="OLD_SIDE=ab-old-side NEW_SIDE=ab-new-side". The inputs are
# made there (MSMAB_SIZES, default "g1:14 g1:16 g2:14 g2:16"); MSMAB_ROUNDS rounds (default 3)
# of MSMAB_RUNS runs (default 5) each; the least median CPU ms of each side is printed, with
# the results' equality checked.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" /tmp/msm-ab
B=$D/bin
CPU=${MSMAB_CPU:-0}
for x in ab-old-side ab-new-side; do
    [ -x "$B/$x" ] || { echo "remote-cpu-msm-ab.sh: no $B/$x (PACK_EXTRA)" >&2; exit 2; }
done
echo "| MSM | old CPU ms | new CPU ms | new / old |"
echo "| --- | --- | --- | --- |"
fail=0
for spec in ${MSMAB_SIZES:-g1:14 g1:16 g2:14 g2:16}; do
    g=${spec%%:*} k=${spec#*:} f=/tmp/msm-ab-$g-$k.bin
    "$B/ab-new-side" gen "$g" "$k" "$((1000 + k))" "$f" || { echo "gen $spec failed"; fail=1; continue; }
    bo="" bn="" ro="" rn=""
    for ((r = 0; r < ${MSMAB_ROUNDS:-3}; r++)); do
        read -r _ _ _ co _ _ _ _ _ ro < <(taskset -c "$CPU" "$B/ab-old-side" run "$f" "${MSMAB_RUNS:-5}" 1)
        read -r _ _ _ cn _ _ _ _ _ rn < <(taskset -c "$CPU" "$B/ab-new-side" run "$f" "${MSMAB_RUNS:-5}" 1)
        [ "$ro" = "$rn" ] || { echo "results differ at $spec" >&2; fail=1; }
        [ -z "$bo" ] || awk -v a="$co" -v b="$bo" 'BEGIN { exit !(a < b) }' && bo=$co
        [ -z "$bn" ] || awk -v a="$cn" -v b="$bn" 'BEGIN { exit !(a < b) }' && bn=$cn
    done
    awk -v s="$g 2^$k" -v o="$bo" -v n="$bn" 'BEGIN { printf "| %s | %.1f | %.1f | %.3f |\n", s, o, n, n / o }'
    rm -f "$f"
done
exit $fail
