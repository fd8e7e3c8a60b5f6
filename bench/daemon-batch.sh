#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Throughput of cuzk-daemon under a batch from cuzk-bench: starts the daemon on a free
# loopback port, registers a key, runs one warm-up batch, then RUNS timed batches, and prints
# each run's throughput, latency percentiles and device busy fraction, then the medians.
#
#   bench/daemon-batch.sh --zkey KEY.zkey --witness W.wtns [--witness ...] [options]
#     --vk VK.json        check every proof against it (cuzk-bench --verify-with)
#     -c COUNT            jobs per batch (default 10)
#     -j CONCURRENCY      concurrent clients (default 4)
#     --runs R            timed batches after the warm-up (default 3)
#     --out DIR           keep each run's JSON report and the daemon's log there
#     -- FLAGS...         passed to cuzk-daemon (e.g. --workers-per-device 2)
#   BUILD_DIR=DIR (default build) holds cuzk-daemon and cuzk-bench.
# Each --witness is one partition of every job (give the same file P times for P partitions);
# the daemon reads them by path, from their directories (its --allow-dir).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}
zkey=""; vk=""; count=10; conc=4; runs=3; out=""
wit=(); dflags=()
while [ $# -gt 0 ]; do
    case "$1" in
    --zkey) zkey=$2; shift 2 ;;
    --witness) wit+=(--witness "$2"); shift 2 ;;
    --vk) vk=$2; shift 2 ;;
    -c) count=$2; shift 2 ;;
    -j) conc=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; dflags=("$@"); break ;;
    *) echo "daemon-batch.sh: unknown argument '$1' (see the header of this script)" >&2; exit 2 ;;
    esac
done
[ -n "$zkey" ] && [ ${#wit[@]} -gt 0 ] || { echo "daemon-batch.sh: give --zkey and --witness" >&2; exit 2; }
for p in cuzk-daemon cuzk-bench; do
    [ -x "$B/$p" ] || { echo "daemon-batch.sh: $B/$p is not built" >&2; exit 2; }
done
T=$(mktemp -d)
[ -n "$out" ] && mkdir -p "$out"
. bench/lib-daemon.sh
trap 'cuzk_daemon_stop >/dev/null 2>&1; rm -rf "$T"' EXIT
# the witnesses go by path: their directories are the ones the daemon may read them from
declare -A seen=()
adirs=()
for ((i = 1; i < ${#wit[@]}; i += 2)); do
    d=$(cd "$(dirname "${wit[$i]}")" && pwd -P) || exit 2
    [ -n "${seen[$d]:-}" ] || { seen[$d]=1; adirs+=(--allow-dir "$d"); }
done
cuzk_daemon_start "$B" "$T/daemon.log" "${adirs[@]}" "${dflags[@]}" || exit 1
echo "cuzk-daemon ${dflags[*]} on $CUZK_ADDR; $(nproc) CPUs; $(date -u +%Y-%m-%dT%H:%MZ)"
"$B/cuzk-bench" preload --addr "$CUZK_ADDR" --zkey "$zkey" --key bench || exit 1
args=(batch --addr "$CUZK_ADDR" --key bench -c "$count" -j "$conc" "${wit[@]}" --json)
[ -n "$vk" ] && args+=(--verify-with "$vk")
echo "command: cuzk-bench ${args[*]}"
"$B/cuzk-bench" "${args[@]}" >"$T/warmup.json" || { echo "warm-up batch failed:" >&2; head -c 2000 "$T/warmup.json" >&2; exit 1; }

# a number from the report: num FILE KEY (the first "KEY": value)
num() { grep -m1 -oE "\"$2\": [-0-9.e+]+" "$1" | sed 's/.*: //'; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
: >"$T/tp"; : >"$T/sp"; : >"$T/p50"; : >"$T/busy"
rc=0
for r in $(seq 1 "$runs"); do
    f="$T/run$r.json"
    "$B/cuzk-bench" "${args[@]}" >"$f" || rc=1
    [ -n "$out" ] && cp "$f" "$out/run$r.json"
    tp=$(num "$f" proofs_per_min); sp=$(num "$f" s_per_proof); p50=$(num "$f" p50); busy=$(num "$f" busy_fraction)
    printf 'run %d: %s proofs/min, %s s/proof, p50 %s ms, device busy %s, verify failures %s\n' \
        "$r" "$tp" "$sp" "$p50" "${busy:-n/a}" "$(num "$f" verify_failures)"
    echo "$tp" >>"$T/tp"; echo "$sp" >>"$T/sp"; echo "$p50" >>"$T/p50"; [ -n "$busy" ] && echo "$busy" >>"$T/busy"
done
printf 'median of %d runs: %s proofs/min, %s s/proof, p50 latency %s ms, device busy %s\n' "$runs" \
    "$(median <"$T/tp")" "$(median <"$T/sp")" "$(median <"$T/p50")" "$([ -s "$T/busy" ] && median <"$T/busy" || echo n/a)"
cuzk_daemon_stop || rc=1
[ -n "$out" ] && cp "$T/daemon.log" "$out/daemon.log"
# Steady state from the daemon's timeline: per batch (device intervals with < 500 ms idle
# between them), the device-held time over the span from its first partition's device work
# to its last (the wall-time figure above also counts the batch's ramp and tail: the first
# witness load, the last job's finalisation and verification, the client's polling).
awk '/event=prove_end/ && /device_ms=/ {
        t = ""; d = "";
        for (i = 1; i <= NF; i++) {
            if ($i ~ /^t=/) t = substr($i, 3) + 0;
            if ($i ~ /^device_ms=/) d = substr($i, 11) + 0;
        }
        if (t == "" || d == "") next;
        s = t - d;
        if (n > 0 && s - last > 500) { printf "batch %d: %d partitions, device busy %.1f %% of %.0f ms from first to last\n", ++b, n, 100 * busy / (last - first), last - first; n = 0 }
        if (n == 0) { first = s; busy = 0 }
        busy += d; last = t; n++
     }
     END { if (n > 0) printf "batch %d: %d partitions, device busy %.1f %% of %.0f ms from first to last\n", ++b, n, 100 * busy / (last - first), last - first }' "$T/daemon.log"
# the device time of a partition by stage (median over the runs' partitions, the warm-up's too)
awk '/event=prove_end/ && /b2_ms=/ {
        for (i = 1; i <= NF; i++) if ($i ~ /_ms=/) { split($i, kv, "="); v[kv[1]] = v[kv[1]] " " kv[2] }
     }
     END { n = split("device_ms abc_ms ntt_ms h_msm_ms batch_add_ms tail_ms b2_ms split_wait_ms prep_ms", ks, " ");
           line = "device time a partition, median ms:";
           for (k = 1; k <= n; k++) {
               m = split(v[ks[k]], a, " "); if (!m) continue;
               for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
               line = line sprintf(" %s %.2f", ks[k], a[int((m + 1) / 2)])
           }
           print line }' "$T/daemon.log"
exit $rc
