#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The package as a distribution or a user would take it: `cmake --install` into a fresh
# prefix, then programs built outside the project against the installed library (through
# pkg-config, shared and static, and through CMake's find_package) prove and verify; the
# shared library exports the public API only; the installed programs answer --version and
# the installed daemon serves its installed example key.
set -euo pipefail
BIN=${CUZK_BIN:?} SRC=${CUZK_SRC:?}
T=$(mktemp -d)
trap 'kill "${dpid:-}" 2>/dev/null || true; rm -rf "$T"' EXIT
P=$T/prefix
cmake --install "$BIN" --prefix "$P" >"$T/install.log"
fail() { echo "FAIL: $*"; exit 1; }
libdir=$(ls -d "$P"/lib*/ | head -1); libdir=${libdir%/}
for f in bin/cuzk bin/cuzk-daemon bin/cuzk-bench include/cuzk/groth16.h include/cuzk/version.h \
         include/cuzk/error.h share/cuzk/example/circuit.zkey share/cuzk/example/witness.wtns \
         lib/systemd/system/cuzk-daemon.service etc/cuzk/cuzk-daemon.ini share/doc/cuzk/LICENSE; do
    [ -e "$P/$f" ] || fail "$f is not installed"
done
for f in libcuzk.a libcuzk.so pkgconfig/cuzk.pc cmake/cuzk/cuzkConfig.cmake; do
    [ -e "$libdir/$f" ] || fail "$libdir/$f is not installed"
done
so=$(readlink -f "$libdir/libcuzk.so")
soname=$(objdump -p "$so" | awk '/SONAME/ {print $2}')
[[ "$soname" =~ ^libcuzk\.so\.[0-9]+$ ]] || fail "SONAME is '$soname'"
[ -e "$libdir/$soname" ] || fail "$soname is not installed"
echo "installed: $soname"

# The shared library exports the public API only: every defined dynamic symbol is a cuzk_
# (or CUZK_ constant) name declared in an installed header (macros expanded), and known
# internals are absent.
nm -D --defined-only "$so" | awk '{print $NF}' | sort -u >"$T/exported"
n=$(wc -l <"$T/exported")
[ "$n" -gt 100 ] || fail "only $n symbols exported"
for h in "$P"/include/cuzk/*.h; do echo "#include <cuzk/$(basename "$h")>"; done >"$T/all.c"
cc -E -I"$P/include" "$T/all.c" >"$T/headers"
bad=0
while read -r sym; do
    case "$sym" in cuzk_* | CUZK_*) ;; *) echo "exported, not cuzk_: $sym"; bad=1; continue ;; esac
    grep -qw -- "$sym" "$T/headers" || { echo "exported, in no installed header: $sym"; bad=1; }
done <"$T/exported"
[ "$bad" = 0 ] || fail "the shared library exports more than the public API"
for sym in cuzk_version cuzk_groth16_prove cuzk_zkey_load cuzk_strerror cuzk_gpu_opts_set \
           cuzk_key_load cuzk_engine_new cuzk_g1_msm; do
    grep -qx "$sym" "$T/exported" || fail "$sym is not exported"
done
for sym in cuzk_gpu_key_from_view cuzk_porep_new cuzk_pk_view_from_zkey io_open_regular \
           setup_wipe engine_now; do
    if grep -qx "$sym" "$T/exported"; then fail "the internal $sym is exported"; fi
done
echo "exports: $n public symbols, nothing else"

export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --modversion cuzk)" = "$("$P/bin/cuzk" --version | awk '{print $2}')" ] ||
    fail "pkg-config's version is not cuzk --version's"
Z=$SRC/tests/data/circuits/multiplier
# shared, through pkg-config
cc -std=gnu11 -Wall -Wextra -Werror "$SRC/tests/package/consumer.c" $(pkg-config --cflags cuzk) \
    $(pkg-config --libs cuzk) -Wl,-rpath,"$libdir" -o "$T/consumer"
# (ldd's output is read whole: grep -q stopping early would fail the pipe under pipefail)
deps=$(ldd "$T/consumer")
grep -q "$soname => $libdir/" <<<"$deps" || fail "consumer is not linked to the installed $soname"
"$T/consumer" "$Z/circuit.zkey" "$Z/witness.wtns" | tee "$T/out"
grep -q '^ok ' "$T/out" || fail "pkg-config consumer"
# static, through pkg-config --static
cc -std=gnu11 "$SRC/tests/package/consumer.c" $(pkg-config --cflags cuzk) -static-libgcc \
    "$libdir/libcuzk.a" $(pkg-config --static --libs cuzk | sed 's/-lcuzk//') -o "$T/consumer-static"
deps=$(ldd "$T/consumer-static" 2>&1 || true)
if grep -q libcuzk <<<"$deps"; then fail "the static consumer needs libcuzk.so"; fi
out=$("$T/consumer-static" "$Z/circuit.zkey" "$Z/witness.wtns") || fail "static consumer"
grep -q '^ok ' <<<"$out" || fail "static consumer"
# CMake's find_package
cmake -S "$SRC/tests/package/cmake" -B "$T/cmake" -DCMAKE_PREFIX_PATH="$P" >"$T/cmake.log" ||
    { cat "$T/cmake.log"; fail "find_package(cuzk)"; }
cmake --build "$T/cmake" >"$T/cmake-build.log" || { cat "$T/cmake-build.log"; fail "CMake consumer build"; }
out=$(LD_LIBRARY_PATH=$libdir "$T/cmake/consumer" "$Z/circuit.zkey" "$Z/witness.wtns") || out=
grep -q '^ok ' <<<"$out" ||
    fail "CMake consumer"
echo "consumers: pkg-config shared and static, CMake: proofs verify"
# The SupraSeal C2 ABI libraries (docs/filecoin.md): installed with their header and .pc
# files; the shared ones export the crate's symbols (and cuzk_supraseal_set_option) only; a
# consumer links each flavour through pkg-config, shared and static.
[ -e "$P/include/cuzk_supraseal.h" ] || fail "include/cuzk_supraseal.h is not installed"
"$P/bin/cuzk" setup "$Z/circuit.r1cs" "$T/abi.params" >/dev/null || fail "cuzk setup for the ABI key"
abi_common="clone_SRS create_SRS cuzk_supraseal_set_option drop_SRS evict_SRS generate_groth16_proofs_c"
for flavour in supraseal supraseal_curio; do
    for f in libcuzk_$flavour.so libcuzk_$flavour.a pkgconfig/cuzk_$flavour.pc; do
        [ -e "$libdir/$f" ] || fail "$libdir/$f is not installed"
    done
    want=$abi_common
    [ $flavour = supraseal_curio ] && want="$want create_gpu_mutex destroy_gpu_mutex destroy_pending_proof finalize_groth16_proof_c generate_groth16_proofs_start_c"
    want=$(tr ' ' '\n' <<<"$want" | sort | tr '\n' ' ')
    have=$(nm -D --defined-only "$(readlink -f "$libdir/libcuzk_$flavour.so")" | awk '{print $NF}' | sort | tr '\n' ' ')
    [ "$have" = "$want" ] || fail "libcuzk_$flavour.so exports '$have', not '$want'"
    cc -std=gnu11 -Wall -Wextra -Werror "$SRC/tests/package/supraseal_consumer.c" \
        $(pkg-config --cflags cuzk_$flavour) $(pkg-config --libs cuzk_$flavour) \
        -Wl,-rpath,"$libdir" -o "$T/abi-$flavour"
    out=$("$T/abi-$flavour" "$T/abi.params") || fail "the $flavour consumer (shared)"
    grep -q '^ok' <<<"$out" || fail "the $flavour consumer (shared)"
    cc -std=gnu11 "$SRC/tests/package/supraseal_consumer.c" $(pkg-config --cflags cuzk_$flavour) \
        -static-libgcc "$libdir/libcuzk_$flavour.a" \
        $(pkg-config --static --libs cuzk_$flavour | sed "s/-lcuzk_$flavour//") -o "$T/abi-$flavour-static"
    deps=$(ldd "$T/abi-$flavour-static" 2>&1 || true)
    if grep -q libcuzk <<<"$deps"; then fail "the static $flavour consumer needs a libcuzk .so"; fi
    out=$("$T/abi-$flavour-static" "$T/abi.params") || fail "the $flavour consumer (static)"
    grep -q '^ok' <<<"$out" || fail "the $flavour consumer (static)"
done
echo "supraseal ABI: both flavours installed, exports exact, consumers shared and static ok"

# every installed program answers --version with the library's version
v=$(pkg-config --modversion cuzk)
for p in cuzk cuzk-daemon cuzk-bench; do
    out=$("$P/bin/$p" --version)
    [ "$out" = "$p $v" ] || fail "$p --version said '$out'"
done
# the installed daemon serves the installed example key (not the source tree's)
"$P/bin/cuzk-daemon" --example --listen 127.0.0.1:0 --state-dir "$T/state" --address-file "$T/addr" >"$T/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 100); do [ -s "$T/addr" ] && break; sleep 0.1; done
[ -s "$T/addr" ] || { cat "$T/daemon.log"; fail "the installed daemon did not start"; }
grep -q "witness=$P/share/cuzk/example/witness.wtns" "$T/daemon.log" ||
    { cat "$T/daemon.log"; fail "the daemon's example is not the installed one"; }
# it made its token (0600) and requires it; the installed cuzk-bench finds it there
[ "$(stat -c %a "$T/state/token")" = 600 ] || fail "the daemon's token is not 0600"
"$P/bin/cuzk-bench" status --addr "$(head -n 1 "$T/addr")" --state-dir "$T/state" >/dev/null ||
    fail "cuzk-bench status with the daemon's token failed"
if "$P/bin/cuzk-bench" status --addr "$(head -n 1 "$T/addr")" --state-dir "$T/none" >/dev/null 2>&1; then
    fail "the daemon answered without a token"
fi
kill "$dpid"; wait "$dpid" 2>/dev/null || true; dpid=
echo "PASS: package"
