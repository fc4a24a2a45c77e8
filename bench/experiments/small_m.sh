#!/bin/bash
# small_m.sh — the LLM shapes where the defaults trail the searched cuBLAS peer (M of 16 to 256,
# docs/PERFORMANCE.md 2026-11-28 15:41): first tiles, clusters and split counts named, each
# shape against the peer in alternating rounds (bench matmul); then, with Nsight Compute where
# it is installed, one launch of each side's kernel: its name (cuBLAS's names its tile, cluster
# and split), duration, DRAM and L2 throughput, grid and cluster. Logs in $OUT.
# Usage: bash bench/experiments/small_m.sh [sweep|ncu|all]
set -uo pipefail
what=${1:-all}
out=${OUT:-gpu-out}
mkdir -p "$out"
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$(mktemp -d /tmp/ptxjit-cache-XXXXXX)}
T64="bm=64 consumers=1"
if [ "$what" != ncu ]; then
    B="build/ptxjit bench matmul rounds=3 flush=${FLUSH:-read}"
    echo "== bf16, 128 x 1024 x 4096"
    $B shapes=128x1024x4096 "variant=wgmma" \
        "variant=wgmma $T64 mma=m64n32k16 stages=8" \
        "variant=wgmma $T64 mma=m64n32k16 stages=8 splits=2 store=direct" \
        "variant=wgmma $T64 mma=m64n64k16 stages=8 splits=2 store=direct" \
        "variant=wgmma $T64 mma=m64n64k16 stages=8 splits=3 store=direct" \
        "variant=wgmma $T64 mma=m64n128k16 stages=8 splits=4 store=direct" \
        2>&1 | tee "$out/sweep_bf16_128.log" | grep -vE "^ *(search|peer)" | tail -12
    echo "== fp8, 1 and 16 rows"
    $B shapes=1x4096x4096,16x4096x4096 "variant=wgmma_fp8" \
        "variant=wgmma_fp8 $T64 mma=m64n64k16 stages=8" \
        "variant=wgmma_fp8 $T64 mma=m64n128k16 stages=8" \
        "variant=wgmma_fp8 $T64 mma=m64n64k16 stages=8 splits=2 store=direct" \
        "variant=wgmma_fp8 $T64 mma=m64n128k16 stages=6 splits=2 store=direct" \
        2>&1 | tee "$out/sweep_few.log" | grep -vE "^ *(search|peer)" | tail -16
    echo "== fp8 and bf16, 256 x 14336 x 4096; fp8 at 2048 and 4096 rows"
    $B shapes=256x14336x4096 "variant=wgmma_fp8" \
        "variant=wgmma_fp8 mma=m64n224k16 stages=4 store=direct" \
        "variant=wgmma_fp8 mma=m64n192k16 stages=4" \
        "variant=wgmma" "variant=wgmma mma=m64n224k16 stages=4 store=direct" \
        2>&1 | tee "$out/sweep_256.log" | grep -vE "^ *(search|peer)" | tail -12
    $B shapes=2048x4096x4096,4096x14336x4096 "variant=wgmma_fp8" \
        "variant=wgmma_fp8 cluster=2" "variant=wgmma_fp8 group=16" \
        "variant=wgmma_fp8 stages=4 store=direct" \
        2>&1 | tee "$out/sweep_big.log" | grep -vE "^ *(search|peer)" | tail -12
fi
if [ "$what" != sweep ]; then
    if ! command -v ncu >/dev/null; then
        echo "ncu: not installed here"
        exit 0
    fi
    # One line per kernel: name (cut), then the metrics that say where its time goes.
    summarize() {
        python3 -c '
import csv, sys
keep = ["Duration", "DRAM Throughput", "L2 Cache Throughput", "Compute (SM) Throughput",
        "Memory Throughput", "Grid Size", "Cluster Size", "Registers Per Thread",
        "Dynamic Shared Memory Per Block", "Block Size"]
rows = {}
for r in csv.reader(l for l in sys.stdin if l.startswith("\"")):
    if r[0] == "ID" or len(r) < 15: continue
    key = (r[0], r[4])
    if r[12] in keep: rows.setdefault(key, {})[r[12]] = r[14] + r[13].replace("%", "")
for (i, name), m in rows.items():
    print(name[:110]); print("   " + "  ".join(k.split(" ")[0] + "=" + m.get(k, "?") for k in keep))
'
    }
    ncu_run() { # label, then the command
        local label=$1; shift
        echo "-- $label"
        ncu --clock-control none --section SpeedOfLight --section LaunchStats --csv \
            --page details "$@" 2>/dev/null | summarize
    }
    torch_mm() { # m n k dtype
        cat <<PY
import torch
m, n, k = $1, $2, $3
if "$4" == "fp8":
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    for _ in range(2): torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)
else:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(2): a @ b
torch.cuda.synchronize()
PY
    }
    for s in "128 4096 4096 bf16" "128 1024 4096 bf16" "16 4096 4096 bf16" "256 14336 4096 fp8" \
             "16 4096 4096 fp8"; do
        set -- $s
        torch_mm "$@" > /tmp/mm.py
        ncu_run "torch $s (cuBLAS/cuBLASLt heuristic)" --kernel-name regex:'gemm|nvjet|xmma|cutlass|splitK|reduce' \
            -c 4 python3 /tmp/mm.py
        var=wgmma; [ "$4" = fp8 ] && var=wgmma_fp8
        ncu_run "ptxjit $s (defaults)" --kernel-name matmul_kernel -c 1 \
            build/ptxjit run matmul variant=$var m=$1 n=$2 k=$3 runs=1
    done 2>&1 | tee "$out/ncu.log"
fi
