#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A farm on one host: D cuzk-daemons (D = 1, 2, 3 by default) sharing one PostgreSQL job
# queue (docs/cluster.md) on loopback, each given the same share of a batch by a cuzk-bench
# client of its own (any daemon proves any job). Per D: partitions per minute over the whole
# batch (first submission to last result), the time from a job's submission to its first
# partition's claim (median, p90; from the daemons' logs), and the database time of the
# claims per partition claimed (the daemons' cluster status). With --sqlite the same batch
# also runs on one daemon with the embedded store, for comparison.
#
#   bench/farm.sh [--daemons "1 2 3"] [-c JOBS] [-p PARTITIONS] [-j CLIENTS]
#                 [--zkey K.zkey --witness W.wtns [--vk VK.json]] [--sqlite] [-- DAEMON FLAGS]
#   Without --zkey: the example key (share/cuzk/example of the build, or tests/data/circuits/chain). BUILD_DIR=DIR
#   (default build) holds cuzk-daemon and cuzk-bench; PG_BIN the PostgreSQL binaries.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}
daemons="1 2 3"; count=60; parts=2; conc=6; zkey=""; wit=""; vk=""; sqlite=0; dflags=()
while [ $# -gt 0 ]; do
    case "$1" in
    --daemons) daemons=$2; shift 2 ;;
    -c) count=$2; shift 2 ;;
    -p) parts=$2; shift 2 ;;
    -j) conc=$2; shift 2 ;;
    --zkey) zkey=$2; shift 2 ;;
    --witness) wit=$2; shift 2 ;;
    --vk) vk=$2; shift 2 ;;
    --sqlite) sqlite=1; shift ;;
    --) shift; dflags=("$@"); break ;;
    *) echo "farm.sh: unknown argument '$1' (see the header of this script)" >&2; exit 2 ;;
    esac
done
for p in cuzk-daemon cuzk-bench; do
    [ -x "$B/$p" ] || { echo "farm.sh: $B/$p is not built" >&2; exit 2; }
done
if [ -z "$zkey" ]; then   # the example key: the build's copy, else the source tree's
    ex=$B/share/cuzk/example
    [ -f "$ex/circuit.zkey" ] || ex=tests/data/circuits/chain
    zkey=$ex/circuit.zkey
    wit=$ex/witness.wtns
    vk=$ex/verification_key.json
fi
[ -f "$zkey" ] && [ -f "$wit" ] || { echo "farm.sh: no key or witness ($zkey, $wit)" >&2; exit 2; }
zkey=$(cd "$(dirname "$zkey")" && pwd -P)/$(basename "$zkey")
wdir=$(cd "$(dirname "$wit")" && pwd -P)
wit=$wdir/$(basename "$wit")
. bench/lib-daemon.sh
. bench/lib-pg.sh
T=$(mktemp -d)
pids=(); addrs=(); toks=(); states=()
stop_all() {
    local k
    for k in "${!pids[@]}"; do
        CUZK_DAEMON_PID=${pids[$k]}; CUZK_STATE_TMP=${states[$k]}
        cuzk_daemon_stop >/dev/null 2>&1
    done
    pids=(); addrs=(); toks=(); states=()
}
trap 'stop_all; cuzk_pg_stop; rm -rf "$T"' EXIT
# pg_stat_statements, when the server has it: the database's own time of each statement
pss=0
if [ -f "$(ls -d ${PG_BIN:-/usr/lib/postgresql/*/bin} 2>/dev/null | sort -V | tail -1)/../lib/pg_stat_statements.so" ]; then
    CUZK_PG_OPTS="${CUZK_PG_OPTS:-} -c shared_preload_libraries=pg_stat_statements"
    pss=1
fi
export CUZK_PG_OPTS
cuzk_pg_start cuzk_farm0 || exit $?
echo "farm: $(nproc) CPUs, PostgreSQL $("$CUZK_PG_BIN/postgres" --version | awk '{print $3}'), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "key $zkey, $count jobs of $parts partitions, $conc clients in all, daemon flags: ${dflags[*]:-none}"

wargs=()
for i in $(seq 1 "$parts"); do wargs+=(--witness "$wit"); done
num() { grep -m1 -oE "\"$2\": [-0-9.e+]+" "$1" | sed 's/.*: //'; }

# run NAME D [STORE FLAGS...]: D daemons, the batch split between them
run() {
    local name=$1 d=$2 k rc=0
    shift 2
    for k in $(seq 0 $((d - 1))); do
        cuzk_daemon_start "$B" "$T/$name-$k.log" --allow-dir "$wdir" --node-name "node$k" \
            "$@" "${dflags[@]}" || { stop_all; return 1; }
        pids+=("$CUZK_DAEMON_PID"); addrs+=("$CUZK_ADDR"); toks+=("$CUZK_TOKEN")
        states+=("$CUZK_STATE_TMP")
        CUZK_TOKEN=${toks[$k]} "$B/cuzk-bench" preload --addr "$CUZK_ADDR" --zkey "$zkey" \
            --key farm >/dev/null || { stop_all; return 1; }
    done
    local t0 t1 per=$(( (count + d - 1) / d )) cl=$(( (conc + d - 1) / d ))
    t0=$(date +%s.%N)
    for k in $(seq 0 $((d - 1))); do
        local va=()
        [ -n "$vk" ] && va=(--verify-with "$vk")
        CUZK_TOKEN=${toks[$k]} "$B/cuzk-bench" batch --addr "${addrs[$k]}" --key farm -c "$per" \
            -j "$cl" "${wargs[@]}" "${va[@]}" --json --quiet >"$T/$name-$k.json" 2>"$T/$name-$k.err" &
    done
    for k in $(seq 0 $((d - 1))); do wait -n || rc=1; done
    t1=$(date +%s.%N)
    local claims=0 claim_ms=0 calls=0 s
    for k in $(seq 0 $((d - 1))); do
        CUZK_TOKEN=${toks[$k]} "$B/cuzk-bench" status --addr "${addrs[$k]}" >"$T/$name-$k.status" 2>/dev/null
        s=$T/$name-$k.status
        local c m n
        c=$(num "$s" claims); m=$(num "$s" claim_ms_mean); n=$(num "$s" claim_calls)
        claims=$(awk -v a="$claims" -v b="${c:-0}" 'BEGIN{print a+b}')
        claim_ms=$(awk -v a="$claim_ms" -v m="${m:-0}" -v n="${n:-0}" 'BEGIN{print a+m*n}')
        calls=$((calls + ${n:-0}))
    done
    stop_all
    # the database's time per claim call and per partition claimed (the claim statement's)
    local dbq="- -"
    if [ "$pss" = 1 ] && [ "$name" != sqlite ]; then
        dbq=$("$CUZK_PG_BIN/psql" -X -q -t -A -F' ' "$CUZK_PG_URL" -c "SELECT
            round((sum(total_exec_time) / NULLIF(sum(calls), 0))::numeric, 4),
            round((sum(total_exec_time) / NULLIF(sum(rows), 0))::numeric, 4)
            FROM pg_stat_statements WHERE query LIKE 'WITH c AS (SELECT w.job, w.idx%'
            AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())" 2>/dev/null)
        [ -n "$dbq" ] || dbq="- -"
    fi
    local total=$((per * d * parts)) fails=0
    for k in $(seq 0 $((d - 1))); do
        fails=$((fails + $(num "$T/$name-$k.json" verify_failures 2>/dev/null || echo 0)))
        [ -s "$T/$name-$k.err" ] && head -c 600 "$T/$name-$k.err" >&2
    done
    # submission to first claim, per job, from the logs (ISO times at the start of each line)
    local lat
    lat=$(cat "$T/$name"-*.log | awk '
        function sec(ts) { split(substr(ts, 12, 15), h, ":"); return h[1] * 3600 + h[2] * 60 + h[3] }
        /event=job_submit job=/ { for (i = 1; i <= NF; i++) if ($i ~ /^job=/) sub_t[substr($i, 5)] = sec($1) }
        /event=claim job=/ { for (i = 1; i <= NF; i++) if ($i ~ /^job=/) { j = substr($i, 5); t = sec($1); if (!(j in cl_t) || t < cl_t[j]) cl_t[j] = t } }
        END { for (j in sub_t) if (j in cl_t) print (cl_t[j] - sub_t[j]) * 1000 }' | sort -g |
        awk '{v[NR] = $1} END { if (NR) printf "%.1f %.1f", v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.999)]; else printf "- -" }')
    local wall ppm per_claim
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')
    ppm=$(awk -v n="$total" -v w="$wall" 'BEGIN{printf "%.1f", n * 60 / w}')
    per_claim=$(awk -v m="$claim_ms" -v c="$claims" 'BEGIN{ if (c > 0) printf "%.3f", m / c; else print "-" }')
    per_call=$(awk -v m="$claim_ms" -v c="$calls" 'BEGIN{ if (c > 0) printf "%.3f", m / c; else print "-" }')
    printf '%-10s %2d daemon(s): %5d partitions in %7.2f s = %8s partitions/min; submit to claim median %s ms, p90 %s ms; claims %s ms per partition claimed as the daemons time them (%d calls, %s ms each), the database'"'"'s own %s ms per call, %s ms per partition; verify failures %d; rc %d\n' \
        "$name" "$d" "$total" "$wall" "$ppm" "${lat% *}" "${lat#* }" "$per_claim" "$calls" "$per_call" "${dbq% *}" "${dbq#* }" "$fails" "$rc"
    echo "$name|$d|$total|$wall|$ppm|${lat% *}|${lat#* }|$per_claim|$calls|$per_call|${dbq% *}|${dbq#* }|$fails" >>"$T/table"
    return $rc
}

rc=0
if [ "$sqlite" = 1 ]; then
    run sqlite 1 || rc=1
fi
for d in $daemons; do
    cuzk_pg_createdb "cuzk_farm$d" || exit 1
    [ "$pss" = 1 ] && "$CUZK_PG_BIN/psql" -X -q "$CUZK_PG_URL" -c "CREATE EXTENSION pg_stat_statements" \
        -c "SELECT pg_stat_statements_reset()" >/dev/null 2>&1
    run "postgres" "$d" --store "$CUZK_PG_URL" || rc=1
done
echo
echo "| store | daemons | partitions | wall s | partitions/min | submit to claim, median ms | p90 ms | claim ms per partition (daemon) | claim calls | ms per call (daemon) | DB ms per call | DB ms per partition |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
awk -F'|' '{printf "| %s | %s | %s | %.2f | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12}' "$T/table"
exit $rc
