#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cuzk's CPU Pippenger against blst's (supranational/blst, built from source here) on the
# same points and scalars, G1 and G2, one thread each (blst_p?s_mult_pippenger is
# single-threaded; cuzk's MSM is given nthreads = 1; both pinned to the same core).
#   BLST_SRC=/path/to/blst bench/cpu-msm-vs-blst.sh
# Times: the CPU time of the run (the machine's other load moves it less than the wall
# time), the wall time in parentheses.
# Environment:
#   BLST_SRC   blst source tree (required; its build.sh builds libblst.a)
#   B          cuzk build directory with libcuzk.a (default: build)
#   WORK       scratch directory (default /tmp/cuzk-msm-vs-blst): libblst.a, the two
#              drivers, one input file at a time (2^20 G2 points: 200 MiB)
#   KS         sizes as log2 (default "12 13 14 15 16 17 18 19 20")
#   GROUPS_    groups (default "g1 g2")
#   RUNS       timed runs per measurement after one warm-up, their median taken (default 3)
#   ROUNDS     the measurements of cuzk and blst alternate ROUNDS times; each side's least
#              median is printed (default 1)
#   CPU        the core both are pinned to (default 0)
#   XYZZ=1     also cuzk with XYZZ buckets only (CUZK_MSM_XYZZ_ONLY)
# Every size's two results are compared; a difference is reported and the script exits 1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
: "${BLST_SRC:?set BLST_SRC to a blst source tree}"
B=${B:-$ROOT/build}
WORK=${WORK:-/tmp/cuzk-msm-vs-blst}
KS=${KS:-"12 13 14 15 16 17 18 19 20"}
GROUPS_=${GROUPS_:-"g1 g2"}
RUNS=${RUNS:-3}
ROUNDS=${ROUNDS:-1}
CPU=${CPU:-0}
[ -f "$B/libcuzk.a" ] || { echo "no $B/libcuzk.a: build cuzk first (or set B)" >&2; exit 2; }
[ -f "$BLST_SRC/build.sh" ] || { echo "no $BLST_SRC/build.sh: not a blst source tree" >&2; exit 2; }
BLST_SRC=$(cd "$BLST_SRC" && pwd)
mkdir -p "$WORK/blst"
(cd "$WORK/blst" && sh "$BLST_SRC/build.sh" >build.log 2>&1) ||
    { echo "blst build failed: $WORK/blst/build.log" >&2; exit 2; }
CC=${CC:-cc}
$CC -O2 -std=gnu11 -Wall -Wextra -I"$BLST_SRC/bindings" -o "$WORK/blst_side" \
    "$ROOT/bench/blst-msm/blst_side.c" "$WORK/blst/libblst.a"
# the static library, as the cuzk programs link it (through libcuzk.so every field operation
# would go through the PLT)
$CC -O2 -std=gnu11 -Wall -Wextra -I"$ROOT/include" -I"$B/include" -o "$WORK/cuzk_side" \
    "$ROOT/bench/blst-msm/cuzk_side.c" "$B/libcuzk.a" -lm -lpthread \
    $(pkg-config --libs jansson libcrypto 2>/dev/null || echo -ljansson -lcrypto)
PIN=(taskset -c "$CPU")
command -v taskset >/dev/null || PIN=()
echo "cuzk $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), blst" \
     "$(git -C "$BLST_SRC" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%F)," \
     "1 thread each on core $CPU, median of $RUNS after a warm-up, best of $ROUNDS" \
     "alternating rounds; CPU time (wall time)"
hdr="| group | n | cuzk ms (window) | blst ms | cuzk / blst (CPU) |"
[ "${XYZZ:-0}" = 1 ] && hdr="$hdr cuzk XYZZ-only ms |"
echo "$hdr"
echo "$hdr" | sed 's/[^|]/-/g; s/^-/|/'
# less A B: A < B, or B empty
less() { [ -z "$2" ] || awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
fail=0
for g in $GROUPS_; do
    for k in $KS; do
        f=$WORK/in-$g-$k.bin
        "$WORK/cuzk_side" gen "$g" "$k" "$((1000 + k))" "$f"
        oc="" bc="" xc=""
        for ((r = 0; r < ROUNDS; r++)); do # the two alternate; each keeps its best round
            read -r _ w1 _ c1 _ _ _ win _ rc < <("${PIN[@]}" "$WORK/cuzk_side" run "$f" "$RUNS" 1)
            read -r _ w2 _ c2 _ rb < <("${PIN[@]}" "$WORK/blst_side" "$f" "$RUNS")
            [ "$rc" = "$rb" ] ||
                { echo "results differ at $g 2^$k: cuzk $rc blst $rb" >&2; fail=1; }
            less "$c1" "$oc" && oc=$c1 ow=$w1
            less "$c2" "$bc" && bc=$c2 bw=$w2
            if [ "${XYZZ:-0}" = 1 ]; then
                read -r _ w3 _ c3 _ _ _ _ _ rx < <("${PIN[@]}" "$WORK/cuzk_side" run "$f" \
                    "$RUNS" 1 xyzz)
                [ "$rx" = "$rc" ] || { echo "cuzk XYZZ-only differs at $g 2^$k" >&2; fail=1; }
                less "$c3" "$xc" && xc=$c3 xw=$w3
            fi
        done
        line=$(awk -v g="$g" -v k="$k" -v ow="$ow" -v oc="$oc" -v w="$win" -v bw="$bw" \
            -v bc="$bc" 'BEGIN { printf "| %s | 2^%d | %.1f (%.1f) (c=%d) | %.1f (%.1f) | %.2f |",
                                  g, k, oc, ow, w, bc, bw, oc / bc }')
        [ "${XYZZ:-0}" = 1 ] && line="$line $xc ($xw) |"
        echo "$line"
        rm -f "$f"
    done
done
exit $fail
