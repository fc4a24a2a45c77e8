#!/bin/bash
# fp8_trailing.sh — the fp8 LLM shapes below 0.90 of cuBLASLt (docs/PERFORMANCE.md, 2026-11-29
# 04:40): named tiles against the fit's at 256 x 14336 x 4096 (compute-bound, 112 tiles of the
# default 128 x 256 on 132 SMs), and split counts at 1 / 16 x 4096 x 4096 and 128 x 1024 x 4096;
# bf16 at 256 x 14336 x 4096 beside it. Each against the searched peer in alternating rounds.
# Usage: bash bench/experiments/fp8_trailing.sh (GPU; build/ptxjit)
set -uo pipefail
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$(mktemp -d /tmp/ptxjit-cache-XXXXXX)}
P=build/ptxjit
T="bm=64 consumers=1 store=direct"
$P bench matmul rounds=5 flush=read shapes=256x14336x4096,4096x14336x4096 "variant=wgmma_fp8" \
    "variant=wgmma_fp8 bm=256 consumers=2 mma=m64n112k16 stages=4 store=direct" \
    "variant=wgmma_fp8 bm=256 consumers=2 mma=m64n112k16 stages=4 store=direct sched=grid" \
    "variant=wgmma_fp8 mma=m64n224k16 stages=4 store=direct" 2>&1 | grep -E "^(matmul [0-9]|variant)"
$P bench matmul rounds=5 flush=read shapes=256x14336x4096 "variant=wgmma" \
    "variant=wgmma bm=256 consumers=2 mma=m64n112k16 stages=4 store=direct" 2>&1 |
    grep -E "^(matmul [0-9]|variant)"
$P bench matmul rounds=7 flush=read shapes=1x4096x4096,16x4096x4096,128x1024x4096 \
    "variant=wgmma_fp8" "variant=wgmma_fp8 $T mma=m64n128k16 stages=9 splits=2" \
    "variant=wgmma_fp8 $T mma=m64n64k16 stages=8 splits=2" \
    "variant=wgmma_fp8 $T mma=m64n64k16 stages=13 splits=3" 2>&1 | grep -E "^(matmul [0-9]|variant)"
