# SPDX-License-Identifier: Apache-2.0
# Sourced by the interop tests (tests/interop/*.sh): paths from CTest's environment, snarkjs
# (skip with 77 when it is absent), a scratch folder, and the check helpers. Each test ends
# with `finish`, which prints "N passed, N failed" and sets the exit status.
set -uo pipefail
BIN="${CUZK_BIN:?}"; SRC="${CUZK_SRC:?}"; DATA="${CUZK_TEST_DATA:-$SRC/tests/data}/circuits"
SNARKJS="$SRC/tests/js/node_modules/.bin/snarkjs"
# the test build of cuzk (never installed): cuzk with `prove --test-fixed-rs R S`
CUZKT="$BIN/tests/cuzk-test"
if [ ! -x "$SNARKJS" ]; then
    echo "SKIP: snarkjs is not installed (run scripts/deps.sh)"; exit 77
fi
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
pass=0; failed=0
ok()  { pass=$((pass + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
# expect_ok cmd...: exits 0
expect_ok()   { if "$@" >"$T/out" 2>&1; then ok; else bad "$* (exit $?)"; cat "$T/out" >&2; fi; }
# expect_err CODE PATTERN cmd...: exits with CODE and prints PATTERN (grep -E) on stderr
expect_err() {
    local code=$1 pat=$2; shift 2
    "$@" >"$T/out" 2>"$T/err"; local rc=$?
    if [ $rc -eq "$code" ] && grep -Eq -e "$pat" "$T/err"; then ok
    else bad "$* -> exit $rc, stderr: $(head -c 300 "$T/err") (wanted $code and /$pat/)"; fi
}
finish() {
    echo "$pass passed, $failed failed"
    [ "$failed" -eq 0 ]
}
