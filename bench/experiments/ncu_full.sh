#!/bin/bash
# ncu_full.sh — Nsight Compute's full set on one launch each: ptxjit at 128 x 1024 x 4096
# (unsplit, in 4 parts), at 128 x 4096 x 4096, and cuBLAS (through torch) at 128 x 1024 x 4096;
# every metric of the details page, as CSV, in $OUT.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$(mktemp -d /tmp/ptxjit-cache-XXXXXX)}
T64="bm=64 consumers=1 mma=m64n64k16"
full() { # name, then the command
    local name=$1; shift
    ncu --clock-control none --set full --csv --page details "$@" > "$out/$name.csv" 2>/dev/null
    echo "$name: $(grep -c . "$out/$name.csv") lines"
}
full ours_1024 --kernel-name matmul_kernel -c 1 build/ptxjit run matmul m=128 n=1024 k=4096 runs=1
full ours_1024_split4 --kernel-name matmul_kernel -c 1 build/ptxjit run matmul $T64 stages=13 \
    splits=4 store=direct m=128 n=1024 k=4096 runs=1
full ours_4096 --kernel-name matmul_kernel -c 1 build/ptxjit run matmul m=128 n=4096 k=4096 runs=1
cat > /tmp/mm.py <<PY
import torch
a = torch.randn(128, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 1024, device="cuda", dtype=torch.bfloat16)
for _ in range(2): a @ b
torch.cuda.synchronize()
PY
full cublas_1024 --kernel-name regex:nvjet -c 1 python3 /tmp/mm.py
