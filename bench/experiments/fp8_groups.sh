#!/bin/bash
# fp8_groups.sh — whether fp8's large shapes lose to cuBLASLt on data movement under the power
# cap. One launch under Nsight Compute ran 4096 x 14336 x 4096 within 2% of cuBLASLt, where the
# bench's back-to-back rounds give 0.91-0.92, and read 263 MB from DRAM where cuBLASLt read 205
# (docs/PERFORMANCE.md, 2026-11-29 09:00): with group=8 each band of 8 row tiles (1024 rows)
# streams all of B (59 MB, about L2's size), so B comes from DRAM four times. group=32 holds
# all 4096 rows in one band: A (16 MB) stays in L2 and B is read once. Here: the raster group
# against the default's 8, in alternating rounds against the searched peer, then the DRAM
# bytes of one launch each (where ncu is installed).
# Usage: bash bench/experiments/fp8_groups.sh (GPU; build/ptxjit; $OUT for the logs)
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$(mktemp -d /tmp/ptxjit-cache-XXXXXX)}
P=build/ptxjit
$P bench matmul rounds=5 flush=read shapes=4096x14336x4096,2048x4096x4096,8192x8192x8192 \
    "variant=wgmma_fp8" "variant=wgmma_fp8 group=16" "variant=wgmma_fp8 group=32" \
    "variant=wgmma_fp8 group=64" 2>&1 | tee "$out/fp8_groups.log" | grep -E "^(matmul [0-9]|variant)"
$P bench matmul rounds=3 flush=read shapes=8192x8192x8192,4096x14336x4096 "variant=wgmma" \
    "variant=wgmma group=32" 2>&1 | tee "$out/bf16_groups.log" | grep -E "^(matmul [0-9]|variant)"
if command -v ncu >/dev/null; then
    for g in 8 32; do
        ncu --clock-control none --metrics dram__bytes_read.sum,gpu__time_duration.sum \
            --kernel-name matmul_kernel -c 1 $P run matmul variant=wgmma_fp8 group=$g m=4096 \
            n=14336 k=4096 runs=1 2>&1 | grep -E "dram__bytes_read|gpu__time_duration" |
            sed "s/^/group=$g /"
    done | tee "$out/fp8_groups_ncu.log"
else
    echo "ncu: not installed here"
fi
