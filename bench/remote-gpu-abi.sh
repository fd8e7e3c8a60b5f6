#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One device call for the SupraSeal C2 ABI (docs/filecoin.md): the GPU's whole proofs against
# the CPU's (test_gpu_groth16), the ABI harness on the GPU backend against the CPU's proofs
# (tests/supraseal/abi.sh), then bench/supraseal-abi.sh: the ABI call beside cuzk's prover and
# `cuzk-bench porep --abc` on the same porep workload, and beside SupraSeal C2 itself when its
# driver (../shared/anchors, build.sh) was packed as supraseal_bench. Binaries from
#   BUILD=build-cuda PACK_EXTRA="build-cuda/tests/supraseal/cuzk_supraseal_harness=cuzk_supraseal_harness ..."
#   bash bench/remote-gpu-pack.sh
# (carry .gpu-deps). ABI_SIZES (default "24:10"), ABI_RUNS (default 2), ABI_SKIP_TESTS=1,
# ABI_SUPRASEAL=0 (leave SupraSeal C2 out: its 2^27 key and ours do not both fit a 64 GiB disk).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib-remote-gpu.sh" /tmp/abi-out
# the build tree's layout, as abi.sh and supraseal-abi.sh expect it
B=/tmp/abi-bin
mkdir -p "$B/tests/supraseal"
for f in "$D"/bin/*; do ln -sf "$f" "$B/"; done
for f in cuzk_supraseal_harness cuzk_supraseal_curio_harness cuzk_supraseal_porep; do
    ln -sf "$D/bin/$f" "$B/tests/supraseal/$f"
done
if [ -z "${ABI_SKIP_TESTS:-}" ]; then
    device_step groth16 ${T_G16:-150} "fail|differ" "$D/bin/test_gpu_groth16"
    device_step abi_gpu ${T_ABI:-300} "fail|supraseal abi" env BACKEND=gpu NATIVE=cpu CUZK_BIN="$B" \
        bash "$ROOT/tests/supraseal/abi.sh"
fi
ss=()
[ -x "$D/bin/supraseal_bench" ] && [ "${ABI_SUPRASEAL:-1}" != 0 ] && ss=(SUPRASEAL_BENCH="$D/bin/supraseal_bench")
device_step abi_bench ${T_ABI_BENCH:-420} "" env BUILD="$B" SIZES="${ABI_SIZES:-24:10}" \
    RUNS="${ABI_RUNS:-2}" WORK=/tmp/cuzk-abi CLEAN=1 "${ss[@]}" bash "$ROOT/bench/supraseal-abi.sh"
sed -n '/^supraseal-abi (backend/,$p' "$OUT/abi_bench.log"
echo
printf '%s\n' "${summary[@]}"
