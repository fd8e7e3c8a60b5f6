# Runs a cuzk-daemon for a script; sourced by scripts/demo.sh and tests/bench/*.sh.
#
#   cuzk_daemon_start BIN_DIR LOG [daemon flags...]
#       starts BIN_DIR/cuzk-daemon on a free loopback port (flags are passed through), waits
#       until it answers GET /healthz, and sets CUZK_DAEMON_PID and CUZK_ADDR (HOST:PORT).
#       Returns 1, with the end of LOG on stderr, when it does not come up.
#   cuzk_daemon_stop
#       SIGTERM, then waits (up to 60 s, then SIGKILL); returns the daemon's exit status.

CUZK_DAEMON_PID=""
CUZK_ADDR=""

# A port on 127.0.0.1 that nothing listens on now (the daemon may still lose a race for
# it: cuzk_daemon_start then tries another).
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

cuzk_daemon_start() {
    local bin=$1 log=$2 try port i
    shift 2
    for try in 1 2 3 4 5; do
        port=$(cuzk_free_port) || { echo "cuzk_daemon_start: no free port" >&2; return 1; }
        "$bin/cuzk-daemon" --listen "127.0.0.1:$port" "$@" >>"$log" 2>&1 &
        CUZK_DAEMON_PID=$!
        CUZK_ADDR="127.0.0.1:$port"
        # up to 30 s for the daemon to answer
        for i in $(seq 1 300); do
            if ! kill -0 "$CUZK_DAEMON_PID" 2>/dev/null; then
                break
            fi
            if "$bin/cuzk-bench" status --addr "$CUZK_ADDR" >/dev/null 2>&1; then
                return 0
            fi
            sleep 0.1
        done
        if kill -0 "$CUZK_DAEMON_PID" 2>/dev/null; then
            echo "cuzk_daemon_start: cuzk-daemon (pid $CUZK_DAEMON_PID) does not answer on $CUZK_ADDR after 30 s" >&2
            kill -KILL "$CUZK_DAEMON_PID" 2>/dev/null; wait "$CUZK_DAEMON_PID" 2>/dev/null
            CUZK_DAEMON_PID=""
            tail -n 20 "$log" >&2
            return 1
        fi
        wait "$CUZK_DAEMON_PID" 2>/dev/null
        CUZK_DAEMON_PID=""
        # exited at start: a port lost to a race is worth another try; anything else is not
        if ! grep -qiE "in use|bind" "$log"; then
            echo "cuzk_daemon_start: cuzk-daemon exited at start:" >&2
            tail -n 20 "$log" >&2
            return 1
        fi
    done
    echo "cuzk_daemon_start: cuzk-daemon could not bind a port after 5 tries" >&2
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
    return $rc
}
