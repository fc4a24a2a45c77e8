#!/bin/bash
# ncu_split.sh — where split-K's time goes: one launch of each tile and split count at a
# decoding's shapes under Nsight Compute (duration, throughputs, grid), then the same rows in
# bench matmul against the searched peer. Logs in $OUT.
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$(mktemp -d /tmp/ptxjit-cache-XXXXXX)}
T64="bm=64 consumers=1"
summarize() {
    python3 -c '
import csv, sys
keep = ["Duration", "Elapsed Cycles", "SM Frequency", "DRAM Throughput", "L2 Cache Throughput",
        "Compute (SM) Throughput", "Grid Size"]
rows = {}
for r in csv.reader(l for l in sys.stdin if l.startswith("\"")):
    if r[0] == "ID" or len(r) < 15: continue
    if r[12] in keep: rows.setdefault(r[0], {})[r[12]] = r[14]
for i, m in rows.items():
    print("   " + "  ".join(k.split(" ")[0] + "=" + m.get(k, "?") for k in keep))
'
}
for shape in "m=128 n=1024 k=4096" "m=16 n=4096 k=4096" "m=1 n=14336 k=4096"; do
    for c in "" "$T64 mma=m64n64k16 stages=13" "$T64 mma=m64n64k16 stages=13 splits=4 store=direct" \
             "$T64 mma=m64n128k16 stages=9 splits=4 store=direct" "$T64 mma=m64n128k16 stages=9"; do
        echo "-- $shape $c"
        ncu --clock-control none --section SpeedOfLight --section LaunchStats --csv --page details \
            --kernel-name matmul_kernel -c 1 build/ptxjit run matmul variant=wgmma $c $shape runs=1 \
            2>/dev/null | summarize
    done
done 2>&1 | tee "$out/ncu_split.log"
build/ptxjit bench matmul rounds=3 shapes=128x1024x4096 "variant=wgmma" \
    "variant=wgmma $T64 mma=m64n64k16 stages=13" "variant=wgmma $T64 mma=m64n64k16 stages=14" \
    "variant=wgmma $T64 mma=m64n64k16 stages=13 sched=grid splits=4 store=direct" \
    2>&1 | tee "$out/bench_split.log" | grep -E "^variant" | cut -c1-130
