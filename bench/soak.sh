#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Soak: a cuzk-daemon proving round after round, good jobs and bad ones mixed, with its
# resident memory, open descriptors and threads read after each round. A service that runs
# for months must hold all three flat once warm.
#
#   bash bench/soak.sh [BUILD_DIR]     (default build; needs cuzk-daemon and cuzk-bench)
#   ROUNDS=10 JOBS=200 CONC=4          rounds, good jobs per round, concurrent clients
#   SOAK_RSS_GROWTH_MB=64              allowed growth of resident memory from the end of the
#                                      second round to the end of the last
#   SOAK_LOG=FILE                      the daemon's log (default BUILD_DIR/soak-daemon.log)
#   SOAK_RESULT_TTL=1                  seconds finished jobs are kept (the daemon's result_ttl):
#                                      each round ends after they expire, so what is read is
#                                      the steady state, not the results still held
#   SOAK_JOURNAL=both                  both: the whole soak four times, the daemon with its
#                                      jobs in memory only (--no-journal, "off") and with its job
#                                      journal (the default daemon, "on"), in the order off, on,
#                                      on, off (a machine getting busier or idler meanwhile
#                                      weighs on both alike), and jobs/s of each compared; on or
#                                      off: one of them, once
#   SOAK_STRACE=1                      count the daemon's fsync and fdatasync calls (strace -c
#                                      with a seccomp filter, when strace is installed): fsyncs
#                                      per job (0 for a sanitizer build: LeakSanitizer does not
#                                      run under ptrace)
#
# Each round: JOBS jobs of the chain fixture's witness on the daemon's built-in example key
# (every proof checked against its verification key), then bad jobs that must each fail
# with an error while the daemon keeps serving: a truncated witness, another circuit's
# witness (wrong size), a witness of random bytes, an unknown key; and a job of 40
# partitions cancelled as soon as it is accepted (with curl). Witnesses are paths beneath
# the fixture's directory (--allow-dir). Exit 0 when every good job
# passed, every bad one failed, each cancel was answered, and descriptors, threads and
# memory stayed flat after the first round; 1 otherwise; 2 when the daemon would not start.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
ROUNDS=${ROUNDS:-10}
JOBS=${JOBS:-200}
CONC=${CONC:-4}
GROWTH_MB=${SOAK_RSS_GROWTH_MB:-64}
TTL=${SOAK_RESULT_TTL:-1}
C=tests/data/circuits/chain
LOG=${SOAK_LOG:-$B/soak-daemon.log}
for t in cuzk-daemon cuzk-bench; do
    if [ ! -x "$B/$t" ]; then
        echo "soak: $B/$t not built (cmake --build $B --target cuzk-daemon cuzk-bench)" >&2
        exit 2
    fi
done
MODES=${SOAK_JOURNAL:-both}
case $MODES in both) MODES="off on on off" ;; on | off) ;; *) echo "soak: SOAK_JOURNAL=$MODES: use both, on or off" >&2; exit 2 ;; esac
STRACE=${SOAK_STRACE:-1}
if [ "$STRACE" = 1 ] && ! command -v strace >/dev/null; then
    echo "soak: strace is not installed: fsyncs are not counted"
    STRACE=0
fi
. bench/lib-daemon.sh
tmp=$(mktemp -d)
trap 'soak_stop >/dev/null 2>&1; rm -rf "$tmp"' EXIT
: >"$LOG"
printf '[engine]\nresult_ttl = %s\n' "$TTL" >"$tmp/soak.ini"
# with strace: the daemon runs under it (a wrapper in place of BUILD_DIR/cuzk-daemon); pid is
# the daemon's own, spid strace's
mkdir -p "$tmp/bin"
Babs=$(cd "$B" && pwd)
ln -s "$Babs/cuzk-bench" "$tmp/bin/cuzk-bench"
printf '#!/bin/sh\nexec strace -f -qq --seccomp-bpf -e trace=fsync,fdatasync -c -o "%s" "%s" "$@"\n' \
    "$tmp/fsync.txt" "$Babs/cuzk-daemon" >"$tmp/bin/cuzk-daemon"
chmod +x "$tmp/bin/cuzk-daemon"
spid=""
soak_start() { # MODE (on: journal, off: --no-journal)
    local bin=$B flags=(--config "$tmp/soak.ini" --example --allow-dir "$PWD/$C" --allow-dir "$tmp")
    [ "$1" = off ] && flags+=(--no-journal)
    [ "$STRACE" = 1 ] && bin=$tmp/bin
    rm -f "$tmp/fsync.txt"
    cuzk_daemon_start "$bin" "$LOG" "${flags[@]}" || return 1
    pid=$CUZK_DAEMON_PID spid=""
    if [ "$STRACE" = 1 ]; then
        spid=$pid
        for _ in $(seq 1 50); do
            pid=$(ps -o pid= --ppid "$spid" | head -n 1 | tr -d ' ')
            [ -n "$pid" ] && break
            sleep 0.1
        done
    fi
}
soak_stop() { # the daemon's exit status
    if [ -z "$spid" ]; then
        cuzk_daemon_stop
        return
    fi
    local rc=0
    kill -TERM "$pid" 2>/dev/null
    wait "$spid" 2>/dev/null || rc=$?   # strace exits with the daemon's status
    CUZK_DAEMON_PID="" spid=""
    [ -n "${CUZK_STATE_TMP:-}" ] && rm -rf "$CUZK_STATE_TMP"
    CUZK_STATE_TMP=""
    return $rc
}
fail=0
declare -A mode_jobs mode_s mode_calls mode_all
for mode in $MODES; do
if ! soak_start "$mode"; then
    echo "soak: cuzk-daemon did not start (log: $LOG)" >&2
    exit 2
fi
echo "soak: journal $mode: cuzk-daemon pid $pid on $CUZK_ADDR; $ROUNDS rounds of $JOBS jobs ($CONC clients) and 4 bad ones"

# the bad witnesses
w=$C/witness.wtns
head -c $(( $(stat -c %s "$w") / 2 )) "$w" >"$tmp/truncated.wtns"
cp tests/data/circuits/multiplier/witness.wtns "$tmp/other.wtns"
head -c "$(stat -c %s "$w")" /dev/urandom >"$tmp/random.wtns"

status_of() { # field of /proc/PID/status, in kB for VmRSS
    awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"
}

declare -a rss fds thr
good_s=0
printf '%-6s %10s %8s %8s %8s %10s\n' round "jobs/s" "rss MB" fds threads "bad failed"
for r in $(seq 1 "$ROUNDS"); do
    t0=$(date +%s.%N)
    if ! "$B/cuzk-bench" batch -c "$JOBS" -j "$CONC" --witness "$w" --key example \
        --verify-with "$C/verification_key.json" --priority mixed --quiet \
        --addr "$CUZK_ADDR" >"$tmp/batch.log" 2>&1; then
        echo "soak: round $r: good jobs failed:" >&2
        tail -n 20 "$tmp/batch.log" >&2
        fail=1
    fi
    t1=$(date +%s.%N)
    [ "$r" -ge 2 ] || [ "$ROUNDS" -eq 1 ] && good_s=$(awk -v s="$good_s" -v a="$t0" -v b="$t1" 'BEGIN {print s + b - a}')
    bad_failed=0
    # each must be refused as a failed job (exit 1), not be proved (0) or find no daemon (2)
    for bad in truncated other random unknown-key; do
        bw=$tmp/$bad.wtns key=example
        [ "$bad" = unknown-key ] && bw=$w key=no-such-key
        "$B/cuzk-bench" single --witness "$bw" --key "$key" --quiet --addr "$CUZK_ADDR" \
            >"$tmp/bad.log" 2>&1
        brc=$?
        if [ $brc -eq 1 ]; then
            bad_failed=$((bad_failed + 1))
        else
            echo "soak: round $r: the $bad job ended with status $brc, not 1 (refused):" >&2
            tail -n 5 "$tmp/bad.log" >&2
            fail=1
        fi
    done
    # a job of 40 partitions submitted and cancelled at once (DELETE /v1/proofs/ID): it
    # must answer, whether it had begun or not
    if command -v curl >/dev/null; then
        body=$(printf '"%s",' $(for i in $(seq 40); do echo "$PWD/$w"; done))
        id=$(curl -s -X POST "http://$CUZK_ADDR/v1/proofs" -H 'Content-Type: application/json' \
            -H "Authorization: Bearer $CUZK_CLIENT_TOKEN" \
            -d "{\"key\": \"example\", \"witnesses\": [${body%,}]}" |
            sed -n 's/.*"id": *"\([0-9a-f]\{32\}\)".*/\1/p')
        code=$(curl -s -o "$tmp/cancel.log" -w '%{http_code}' -H "Authorization: Bearer $CUZK_CLIENT_TOKEN" -X DELETE "http://$CUZK_ADDR/v1/proofs/${id:-none}")
        if [ -z "$id" ] || [ "${code:0:1}" != 2 ]; then
            echo "soak: round $r: submit then cancel: job '${id}', DELETE answered $code:" >&2
            cat "$tmp/cancel.log" >&2
            fail=1
        fi
    fi
    sleep "$(awk -v t="$TTL" 'BEGIN {print t + 0.5}')" # the round's results expire
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "soak: round $r: cuzk-daemon died (log: $LOG)" >&2
        exit 1
    fi
    rss[r]=$(status_of VmRSS)
    thr[r]=$(status_of Threads)
    fds[r]=$(ls "/proc/$pid/fd" | wc -l)
    rate=$(awk -v n="$JOBS" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", n / (b - a)}')
    printf '%-6s %10s %8.1f %8s %8s %10s\n' "$r" "$rate" "$(awk -v k="${rss[r]}" 'BEGIN {print k / 1024}')" \
        "${fds[r]}" "${thr[r]}" "$bad_failed/4"
done

if [ "$ROUNDS" -ge 2 ]; then
    last=$ROUNDS
    grow_kb=$(( rss[last] - rss[2] ))
    if [ "$grow_kb" -gt $(( GROWTH_MB * 1024 )) ]; then
        echo "soak: resident memory grew by $((grow_kb / 1024)) MB from round 2 to round $last (allowed $GROWTH_MB)" >&2
        fail=1
    fi
    if [ "${fds[last]}" -gt "${fds[2]}" ]; then
        echo "soak: open descriptors grew from ${fds[2]} (round 2) to ${fds[last]} (round $last)" >&2
        fail=1
    fi
    if [ "${thr[last]}" -gt "${thr[2]}" ]; then
        echo "soak: threads grew from ${thr[2]} (round 2) to ${thr[last]} (round $last)" >&2
        fail=1
    fi
    per_job=$(awk -v g="$grow_kb" -v n=$(( (last - 2) * (JOBS + 4) )) 'BEGIN {printf "%.0f", n ? g * 1024 / n : 0}')
    echo "soak: from round 2 to $last: resident memory $((grow_kb / 1024)) MB ($per_job bytes a job), descriptors ${fds[2]} -> ${fds[last]}, threads ${thr[2]} -> ${thr[last]}"
fi
stop_rc=0
soak_stop || stop_rc=$?
if [ $stop_rc -ne 0 ]; then
    echo "soak: cuzk-daemon exited with status $stop_rc after SIGTERM (log: $LOG)" >&2
    fail=1
fi
timed=$(( ROUNDS >= 2 ? ROUNDS - 1 : 1 ))
mode_jobs[$mode]=$(( ${mode_jobs[$mode]:-0} + timed * JOBS ))
mode_s[$mode]=$(awk -v a="${mode_s[$mode]:-0}" -v b="$good_s" 'BEGIN {print a + b}')
echo "soak: journal $mode: $(awk -v n=$(( timed * JOBS )) -v s="$good_s" 'BEGIN {printf "%.1f", (s > 0 ? n / s : 0)}') jobs/s (rounds 2 to $ROUNDS)"
# every job of the pass: good ones, the 4 bad ones and the cancelled one of each round
if [ "$STRACE" = 1 ]; then   # no file or no line: none made
    calls=0
    [ -s "$tmp/fsync.txt" ] &&
        calls=$(awk '$NF == "fsync" || $NF == "fdatasync" {n += $4} END {print n + 0}' "$tmp/fsync.txt")
    mode_calls[$mode]=$(( ${mode_calls[$mode]:-0} + calls ))
    mode_all[$mode]=$(( ${mode_all[$mode]:-0} + ROUNDS * (JOBS + 5) ))
fi
done
for mode in off on; do
    [ -n "${mode_jobs[$mode]:-}" ] || continue
    rate=$(awk -v n="${mode_jobs[$mode]}" -v s="${mode_s[$mode]}" 'BEGIN {printf "%.1f", (s > 0 ? n / s : 0)}')
    eval "rate_$mode=$rate"
    fs=""
    [ -n "${mode_calls[$mode]:-}" ] && fs=$(awk -v c="${mode_calls[$mode]}" -v n="${mode_all[$mode]}" \
        'BEGIN {printf ", %d fsync/fdatasync calls for %d jobs: %.2f a job", c, n, c / n}')
    echo "soak: journal $mode: $rate jobs/s over every pass$fs"
done
if [ -n "${rate_off:-}" ] && [ -n "${rate_on:-}" ]; then
    echo "soak: jobs/s: in memory $rate_off, journal $rate_on ($(awk -v a="$rate_off" -v b="$rate_on" 'BEGIN {printf "%+.1f %%", (a > 0 ? (b - a) * 100 / a : 0)}'))"
fi
[ $fail -eq 0 ] && echo "soak: OK" || echo "soak: FAILED" >&2
exit $fail
