#!/bin/bash
# Which store writes C's gap past an odd N (test matmul_wgmma_odd_n_in_aligned_rows, H200 15:27)
p="m=70 n=201 k=1000 lda=1024 ldb=208 ldc=208"
for extra in "store=tma" "store=tma beta=scaled" "store=tma bias=column" "store=tma alpha=scaled act=gelu" \
    "store=tma alpha=scaled beta=scaled bias=column act=gelu" "store=direct alpha=scaled beta=scaled bias=column act=gelu" \
    "store=tma bm=64 consumers=1 mma=m64n64k16" "store=tma mma=m64n128k16"; do
  for shape in "$p" "m=70 n=200 k=1000 lda=1024 ldb=208 ldc=208" "m=64 n=201 k=64 lda=64 ldb=208 ldc=208" "m=70 n=201 k=1000 lda=1024 ldb=208 ldc=208 batch=2"; do
    echo "$extra | $shape: $(build/ptxjit run matmul $shape $extra 2>&1 | tail -1)"
  done
done
