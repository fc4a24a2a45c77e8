#!/bin/bash
# ncu_source.sh — where the warps of ptxjit's fp8 kernel and of cuBLASLt's fastest algorithm
# wait, instruction by instruction: one launch of each under `ncu --set full` (clocks left
# free), then each report's source page as SASS with its warp-state samples (CSV) and its
# details page, all in $OUT/source.tgz. bench/experiments/ncu_stalls.py summarises the CSVs.
# docs/PERFORMANCE.md, 2026-11-29 22:38, took these steps by hand.
# Usage: bash bench/experiments/ncu_source.sh [M N K [PARAMS]] (GPU, nvcc, ncu; build/ptxjit)
set -uo pipefail
out=${OUT:-gpu-out}
mkdir -p "$out/source"
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$(mktemp -d /tmp/ptxjit-cache-XXXXXX)}
m=${1:-4096} n=${2:-14336} k=${3:-4096} params=${4:-variant=wgmma_fp8 out=bf16}
nvcc -O2 -arch=sm_90a bench/experiments/lt_algo.cu -lcublasLt -o /tmp/lt_algo || exit 1
/tmp/lt_algo "$m" "$n" "$k" > "$out/source/lt.txt"
# The fastest: the line's TFLOP/s is its second-to-last field.
best=$(awk '/^algorithm/ {print $(NF-1), $2}' "$out/source/lt.txt" | sort -n | tail -1 |
       awk '{print $2}' | tr -d :)
echo "cuBLASLt's fastest: algorithm $best"
# shellcheck disable=SC2086 # params are words
timeout 200 ncu --clock-control none --set full -f -o /tmp/ncu_ours -k matmul_kernel -c 1 \
    build/ptxjit run matmul $params m="$m" n="$n" k="$k" runs=1 > "$out/source/ours.log" 2>&1
timeout 200 ncu --clock-control none --set full -f -o /tmp/ncu_peer -k regex:'nvjet|xmma|cutlass|gemm' \
    -s 1 -c 1 /tmp/lt_algo "$m" "$n" "$k" "$best" > "$out/source/peer.log" 2>&1
for who in ours peer; do
    ncu -i /tmp/ncu_$who.ncu-rep --page source --print-source sass --csv \
        > "$out/source/src_$who.csv" 2>> "$out/source/$who.log"
    ncu -i /tmp/ncu_$who.ncu-rep --page details > "$out/source/details_$who.txt" 2>&1
    grep -E "Duration|SM Frequency|Executed Instructions  " "$out/source/details_$who.txt" |
        sed "s/^/$who: /"
done
python3 bench/experiments/ncu_stalls.py "$out/source/src_ours.csv" "$out/source/src_peer.csv"
(cd "$out" && tar czf source.tgz source && rm -rf source)
