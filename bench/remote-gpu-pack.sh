#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Packs the binaries of a CUDA build made here (BUILD, default build-cuda) and the shared
# libraries they need, other than the C library and the CUDA driver, into .gpu-deps/ (ignored
# by git), for bench/remote-gpu-round.sh on the GPU machine.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-cuda}
D=$ROOT/.gpu-deps
mkdir -p "$D/bin" "$D/lib"
grep -qx '/.gpu-deps/' "$ROOT/.git/info/exclude" 2>/dev/null || echo '/.gpu-deps/' >> "$ROOT/.git/info/exclude"
rm -rf "$D/bin" "$D/lib" "$D/pack.tgz" "$D/pg.tgz"
mkdir -p "$D/bin" "$D/lib"
# the shared libraries a binary needs, but the C library's and the CUDA driver's, into lib/
pack_libs() {
    ldd "$1" | awk '/=> \// {print $3}' | while read -r lib; do
        case "$(basename "$lib")" in
            libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libcuda.so*) ;;
            *) cp -L "$lib" "$D/lib/" ;;
        esac
    done
}
# PACK_ONLY="cuzk cuzk-bench cuzk-daemon": those programs alone (a round without the tests)
bins=("$BUILD/tests/gpu/test_gpu" "$BUILD/tests/gpu/test_gpu_groth16" "$BUILD/tests/gpu/test_gpu_setup"
      "$BUILD/tests/gpu/test_gpu_subgroup" "$BUILD/tests/test_params"
      "$BUILD/cuzk-bench" "$BUILD/cuzk" "$BUILD/cuzk-daemon")
if [ -n "${PACK_ONLY:-}" ]; then
    bins=(); for b in $PACK_ONLY; do bins+=("$BUILD/$b"); done
fi
for b in "${bins[@]}"; do
    case "$b" in */test_gpu_subgroup|*/test_params) [ -x "$b" ] || continue ;; esac # optional
    [ -x "$b" ] || { echo "remote-gpu-pack.sh: $b is not built" >&2; exit 1; }
    cp "$b" "$D/bin/"
    pack_libs "$b"
done
# PACK_EXTRA="FILE=NAME ...": more binaries (e.g. a second build's cuzk-bench) as bin/NAME
for x in ${PACK_EXTRA:-}; do
    [ -x "${x%%=*}" ] || { echo "remote-gpu-pack.sh: ${x%%=*} is not built" >&2; exit 1; }
    cp "${x%%=*}" "$D/bin/${x#*=}"
    pack_libs "${x%%=*}"
done
# PACK_PG=1: this machine's PostgreSQL server (Debian's) and the libraries it needs, as
# .gpu-deps/pg.tgz (usr/lib/postgresql/V, usr/share/postgresql/V, syslib/), for the daemon
# benchmark on a PostgreSQL store there (lib-remote-gpu.sh unpacks it: PG_BIN, PG_LIBS)
if [ -n "${PACK_PG:-}" ]; then
    pgb=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1); pgv=$(basename "$(dirname "$pgb")")
    P=$(mktemp -d)
    mkdir -p "$P/usr/lib/postgresql/$pgv/bin" "$P/usr/lib/postgresql/$pgv/lib" "$P/usr/share/postgresql" "$P/syslib"
    for b in postgres initdb pg_ctl psql createdb; do cp "$pgb/$b" "$P/usr/lib/postgresql/$pgv/bin/"; done
    for l in plpgsql dict_snowball pg_stat_statements; do
        cp "$pgb/../lib/$l.so" "$P/usr/lib/postgresql/$pgv/lib/"
    done
    cp -r "/usr/share/postgresql/$pgv" "$P/usr/share/postgresql/"
    for b in "$pgb/postgres" "$pgb/psql" "$pgb/initdb"; do
        ldd "$b" | awk '/=> \// {print $3}' | while read -r lib; do
            case "$(basename "$lib")" in
                libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
                *) cp -L "$lib" "$P/syslib/" ;;
            esac
        done
    done
    chmod -R a+rX "$P"   # the server runs as nobody there
    tar czf "$D/pg.tgz" -C "$P" . && rm -rf "$P"
fi
# the carry limit is 64 MiB: ship one compressed archive (remote-gpu-round.sh unpacks it)
tar czf "$D.pack.tgz" -C "$D" bin lib && rm -rf "$D/bin" "$D/lib" && mv "$D.pack.tgz" "$D/pack.tgz"
du -sh "$D"
