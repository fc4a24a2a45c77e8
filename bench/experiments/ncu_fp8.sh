#!/bin/bash
# ncu_fp8.sh — where fp8's compute-bound shapes lose to cuBLASLt: Nsight Compute's full set
# (clocks left free) on one launch of ptxjit's default kernel and one of cuBLASLt's (through
# torch._scaled_mm) at 4096 x 14336 x 4096 and 256 x 14336 x 4096 (ptxjit's 128 x 256 tile
# named, which the fit no longer takes at 256 rows since 2026-11-29); a few lines per kernel
# printed (time, SM clock, tensor pipe, L2 and DRAM), the raw CSVs in $OUT.
# Usage: bash bench/experiments/ncu_fp8.sh (GPU, ncu; build/ptxjit)
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$(mktemp -d /tmp/ptxjit-cache-XXXXXX)}
raw() { # name, then the command
    local name=$1; shift
    ncu --clock-control none --set full --csv --page raw "$@" > "$out/$name.csv" 2>"$out/$name.err"
    python3 - "$out/$name.csv" "$name" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if r]
head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
names, units, vals = rows[head], rows[head + 1], rows[head + 2:]
want = ["Kernel Name", "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second",
        "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "lts__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_bytes.sum",
        "dram__bytes_read.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "launch__grid_size", "launch__cluster_dim_x", "launch__registers_per_thread",
        "smsp__warps_issue_stalled_long_scoreboard_per_warp_active.pct",
        "smsp__warps_issue_stalled_barrier_per_warp_active.pct",
        "smsp__warps_issue_stalled_wait_per_warp_active.pct"]
for v in vals:
    print("--", sys.argv[2])
    for w in want:
        if w in names:
            i = names.index(w)
            print("  %s = %s %s" % (w, v[i][:100], units[i]))
    for i, n in enumerate(names):
        if "gmma" in n and "pct" in n:
            print("  %s = %s" % (n, v[i]))
PY
}
cat > /tmp/fp8mm.py <<'PY'
import sys, torch
m, n, k = map(int, sys.argv[1:4])
a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
one = torch.ones((), device="cuda")
for _ in range(3): torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
torch.cuda.synchronize()
PY
for s in "4096 14336 4096" "256 14336 4096"; do
    set -- $s
    raw "cublaslt_$1x$2x$3" --kernel-name regex:'gemm|nvjet|xmma|cutlass' -s 2 -c 1 \
        python3 /tmp/fp8mm.py $1 $2 $3
    raw "ours_$1x$2x$3" --kernel-name matmul_kernel -c 1 \
        build/ptxjit run matmul variant=wgmma_fp8 mma=m64n256k16 m=$1 n=$2 k=$3 runs=1
done
