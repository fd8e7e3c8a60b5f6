#!/bin/bash
# GPU benchmarks only (MSM 2^20/2^22/2^24 with bases resident, NTT 2^20/2^24/2^27 with data
# resident, medians of 3 after a warm-up): tests/gpu/run.sh without the correctness part.
exec env SKIP_TEST=1 "$(dirname "$0")/../tests/gpu/run.sh" "$@"
