#!/bin/bash
# ncu_lt_algo.sh — the searched cuBLASLt fp8 algorithm beside ptxjit's defaults under Nsight
# Compute: bench/experiments/lt_algo.cu times cuBLASLt's ranked algorithms for M x N x K (L2
# emptied before every run), then its fastest and its first (the heuristic's pick) and
# ptxjit's kernel for the same product each run once under `ncu --set full` (clocks left
# free). The raw CSVs, the timings and ptxjit's SASS land in $OUT as one tarball (all.tgz).
# docs/PERFORMANCE.md, 2026-11-29 21:03, read the tensor pipe's busy share from them.
# Usage: bash bench/experiments/ncu_lt_algo.sh [M N K] (GPU, nvcc, ncu; build/ptxjit)
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out"
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$(mktemp -d /tmp/ptxjit-cache-XXXXXX)}
m=${1:-4096} n=${2:-14336} k=${3:-4096}
nvcc -O2 -arch=sm_90a bench/experiments/lt_algo.cu -lcublasLt -o /tmp/lt_algo || exit 1
build/ptxjit sass matmul variant=wgmma_fp8 > "$out/ours.sass" 2>&1
/tmp/lt_algo "$m" "$n" "$k" | tee "$out/lt.txt"
# The fastest: the line's TFLOP/s is its second-to-last field.
best=$(awk '/^algorithm/ {print $(NF-1), $2}' "$out/lt.txt" | sort -n | tail -1 | awk '{print $2}' |
       tr -d :)
echo "fastest: algorithm $best"
for i in $best 0; do
    timeout 200 ncu --clock-control none --set full --csv --page raw \
        -k regex:'nvjet|xmma|cutlass|gemm' -s 1 -c 1 /tmp/lt_algo "$m" "$n" "$k" "$i" \
        > "$out/lt_$i.csv" 2> "$out/lt_$i.err"
done
timeout 200 ncu --clock-control none --set full --csv --page raw -k matmul_kernel -c 1 \
    build/ptxjit run matmul variant=wgmma_fp8 m="$m" n="$n" k="$k" runs=1 \
    > "$out/ours.csv" 2> "$out/ours.err"
# The device tool brings back few files: one tarball.
(cd "$out" && tar czf all.tgz ./*.csv ./*.txt ./*.sass ./*.err && rm -f ./*.csv ./*.err ./*.sass)
