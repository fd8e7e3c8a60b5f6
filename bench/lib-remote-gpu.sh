# SPDX-License-Identifier: Apache-2.0
# The common part of the one-call GPU rounds (bench/remote-gpu-round.sh, bench/remote-gpu-variants.sh);
# sourced there with ROOT set and OUT's default given as $1:
#   unpacks bench/remote-gpu-pack.sh's archive (D: the binaries in $D/bin, libraries in $D/lib),
#   exports LD_LIBRARY_PATH and CUZK_TEST_DATA, prints the GPU, starts an empty `summary`.
#
#   device_step NAME TIMEOUT PATTERN cmd...
#       runs cmd (output in $OUT/NAME.log) under timeout, adds "NAME rc=RC <its 'passed,'
#       line> (S s)" to summary, prints the log's lines matching PATTERN (egrep, case
#       insensitive; "" prints none); returns cmd's status.
D=${GPU_DEPS:-$ROOT/.gpu-deps}
if [ -f "$D/pg.tgz" ]; then # PACK_PG=1: a PostgreSQL server for bench/lib-pg.sh
    mkdir -p /tmp/pg && tar xzf "$D/pg.tgz" -C /tmp/pg && chmod 755 /tmp/pg
    PG_BIN=$(ls -d /tmp/pg/usr/lib/postgresql/*/bin | tail -1); PG_LIBS=/tmp/pg/syslib
    export PG_BIN PG_LIBS
fi
if [ -f "$D/pack.tgz" ]; then # bench/remote-gpu-pack.sh's archive
    mkdir -p /tmp/gpu-deps && tar xzf "$D/pack.tgz" -C /tmp/gpu-deps && D=/tmp/gpu-deps
fi
OUT=${OUT:-$1}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CUZK_TEST_DATA=$ROOT/tests/data
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
echo "cpus: $(nproc)"
summary=()

device_step() {
    local name=$1 to=$2 pat=$3; shift 3
    local t0 rc
    t0=$(date +%s)
    timeout "$to" "$@" >"$OUT/$name.log" 2>&1; rc=$?
    summary+=("$name rc=$rc $(grep -h 'passed,' "$OUT/$name.log" | tail -1) ($(( $(date +%s) - t0 )) s)")
    [ -n "$pat" ] && grep -iE "$pat" "$OUT/$name.log" | head -20
    return $rc
}

# Only a few files come back from the device: everything under OUT in one archive.
device_bundle() {
    (cd "$OUT" && tar czf /tmp/device-bundle.tgz . && find . -mindepth 1 -delete && mv /tmp/device-bundle.tgz bundle.tgz)
}
