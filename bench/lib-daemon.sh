# SPDX-License-Identifier: Apache-2.0
# Runs a cuzk-daemon for a script; sourced by scripts/demo.sh, bench/*.sh and tests/cuzk-bench/*.sh.
#
#   cuzk_daemon_start BIN_DIR LOG [daemon flags...]
#       starts BIN_DIR/cuzk-daemon on a free loopback port (--listen 127.0.0.1:0; the daemon
#       writes the port it bound into an --address-file), waits until it answers
#       GET /healthz, and sets CUZK_DAEMON_PID and CUZK_ADDR (HOST:PORT). Flags are passed
#       through. Returns 1, with the end of LOG on stderr, when it does not come up.
#       The daemon's tokens (from its state directory, CUZK_STATE_DIR): CUZK_TOKEN, exported
#       for cuzk-bench, is the operator's (admin-token: the scripts register keys and submit
#       critical jobs), CUZK_CLIENT_TOKEN the clients' (token); "" with --no-auth.
#   cuzk_daemon_stop
#       SIGTERM, then waits (up to 60 s, then SIGKILL); returns the daemon's exit status.
#   cuzk_free_port
#       a port on 127.0.0.1 that nothing listens on now (for "nothing is there" checks).

CUZK_DAEMON_PID=""
CUZK_ADDR=""

cuzk_free_port() {
    local p i
    for i in $(seq 1 50); do
        p=$((20000 + RANDOM % 30000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"; return 0
        fi
    done
    return 1
}

# cuzk_daemon_start BIN LOG [FLAGS...]: without --state-dir among the flags the daemon gets a
# fresh state directory of its own (CUZK_STATE_DIR), removed by cuzk_daemon_stop.
cuzk_daemon_start() {
    local bin=$1 log=$2 af i a state=()
    shift 2
    CUZK_STATE_TMP=""
    local prev=""
    for a in "$@"; do
        [ "$a" = --state-dir ] && CUZK_STATE_TMP=given
        [ "$prev" = --state-dir ] && CUZK_STATE_DIR=$a
        prev=$a
    done
    if [ -z "$CUZK_STATE_TMP" ]; then
        CUZK_STATE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/cuzk-state.XXXXXX")
        CUZK_STATE_DIR=$CUZK_STATE_TMP
        state=(--state-dir "$CUZK_STATE_DIR")
    else
        CUZK_STATE_TMP=""
    fi
    af=$(mktemp -u "${TMPDIR:-/tmp}/cuzk-daemon-addr.XXXXXX")
    "$bin/cuzk-daemon" --listen 127.0.0.1:0 --address-file "$af" "${state[@]}" "$@" >>"$log" 2>&1 &
    CUZK_DAEMON_PID=$!
    CUZK_ADDR=""
    # up to 60 s to come up (it loads the keys it is given first)
    for i in $(seq 1 600); do
        if ! kill -0 "$CUZK_DAEMON_PID" 2>/dev/null; then
            wait "$CUZK_DAEMON_PID" 2>/dev/null
            echo "cuzk_daemon_start: cuzk-daemon exited at start (status $?):" >&2
            tail -n 20 "$log" >&2
            CUZK_DAEMON_PID=""; rm -f "$af"
            return 1
        fi
        if [ -z "$CUZK_ADDR" ] && [ -s "$af" ]; then
            CUZK_ADDR=$(head -n 1 "$af")
        fi
        if [ -n "$CUZK_ADDR" ] && "$bin/cuzk-bench" health --addr "$CUZK_ADDR" --quiet >/dev/null 2>&1; then
            rm -f "$af"
            CUZK_TOKEN=""; CUZK_CLIENT_TOKEN=""
            [ -r "$CUZK_STATE_DIR/admin-token" ] && CUZK_TOKEN=$(head -n 1 "$CUZK_STATE_DIR/admin-token")
            [ -r "$CUZK_STATE_DIR/token" ] && CUZK_CLIENT_TOKEN=$(head -n 1 "$CUZK_STATE_DIR/token")
            export CUZK_TOKEN CUZK_CLIENT_TOKEN
            return 0
        fi
        sleep 0.1
    done
    echo "cuzk_daemon_start: cuzk-daemon (pid $CUZK_DAEMON_PID) does not answer after 60 s (address '${CUZK_ADDR}')" >&2
    kill -KILL "$CUZK_DAEMON_PID" 2>/dev/null; wait "$CUZK_DAEMON_PID" 2>/dev/null
    CUZK_DAEMON_PID=""; rm -f "$af"
    tail -n 20 "$log" >&2
    return 1
}

cuzk_daemon_stop() {
    local pid=$CUZK_DAEMON_PID i rc=0
    [ -n "$pid" ] || return 0
    CUZK_DAEMON_PID=""
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 1 600); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "cuzk_daemon_stop: cuzk-daemon (pid $pid) still running 60 s after SIGTERM: killing it" >&2
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null || rc=$?
    if [ -n "${CUZK_STATE_TMP:-}" ]; then
        rm -rf "$CUZK_STATE_TMP"
        CUZK_STATE_TMP=""
    fi
    return $rc
}
