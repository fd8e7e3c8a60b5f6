# SPDX-License-Identifier: Apache-2.0
# A throwaway PostgreSQL server for a benchmark; sourced by bench/farm.sh and the GPU rounds.
#
#   cuzk_pg_start [DB]
#       initdb in a fresh directory (as the unprivileged user nobody when run as root),
#       pg_ctl start on a free loopback port (the socket in that directory), creates DB
#       (default cuzk_bench); sets CUZK_PG_URL (postgresql://cuzk@127.0.0.1:PORT/DB),
#       CUZK_PG_DIR, CUZK_PG_BIN. The binaries: PG_BIN, else the newest
#       /usr/lib/postgresql/*/bin (PG_LIBS: a directory of the shared libraries they need,
#       for a copy carried to another machine). Returns 77 when there are none.
#   cuzk_pg_createdb DB     another database on the same server (its URL in CUZK_PG_URL)
#   cuzk_pg_stop            stops the server and removes its directory.

CUZK_PG_DIR=""
CUZK_PG_URL=""

cuzk_pg_start() {
    local db=${1:-cuzk_bench} as=() port i
    CUZK_PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
    [ -x "$CUZK_PG_BIN/initdb" ] || { echo "cuzk_pg_start: no PostgreSQL binaries (PG_BIN)" >&2; return 77; }
    CUZK_PG_DIR=$(mktemp -d /tmp/cuzk-pg.XXXXXX) || return 1
    if [ "$(id -u)" = 0 ]; then
        chown 65534:65534 "$CUZK_PG_DIR"
        as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
    fi
    [ -n "${PG_LIBS:-}" ] && as=(env "LD_LIBRARY_PATH=$PG_LIBS" "${as[@]}")
    CUZK_PG_AS=("${as[@]}")
    (cd / && "${as[@]}" "$CUZK_PG_BIN/initdb" -D "$CUZK_PG_DIR/data" -U cuzk --auth=trust -E UTF8 \
        --no-sync >"$CUZK_PG_DIR/initdb.log" 2>&1) || { cat "$CUZK_PG_DIR/initdb.log" >&2; return 1; }
    for i in 1 2 3 4 5; do
        port=$((20000 + RANDOM % 30000))
        if (cd / && "${as[@]}" "$CUZK_PG_BIN/pg_ctl" -D "$CUZK_PG_DIR/data" -l "$CUZK_PG_DIR/log" \
            -w -t 60 -s -o "-p $port -k $CUZK_PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=100 ${CUZK_PG_OPTS:-}" \
            start >>"$CUZK_PG_DIR/ctl.log" 2>&1); then
            CUZK_PG_PORT=$port
            cuzk_pg_createdb "$db"
            return $?
        fi
    done
    cat "$CUZK_PG_DIR/ctl.log" "$CUZK_PG_DIR/log" >&2
    return 1
}

cuzk_pg_createdb() {
    "${CUZK_PG_AS[@]}" "$CUZK_PG_BIN/createdb" -h 127.0.0.1 -p "$CUZK_PG_PORT" -U cuzk "$1" || return 1
    CUZK_PG_URL="postgresql://cuzk@127.0.0.1:$CUZK_PG_PORT/$1"
}

cuzk_pg_stop() {
    [ -n "$CUZK_PG_DIR" ] || return 0
    (cd / && "${CUZK_PG_AS[@]}" "$CUZK_PG_BIN/pg_ctl" -D "$CUZK_PG_DIR/data" -w -s -m fast stop \
        >>"$CUZK_PG_DIR/ctl.log" 2>&1)
    rm -rf "$CUZK_PG_DIR"
    CUZK_PG_DIR=""
}
