#!/bin/bash
# gpu_session.sh — everything one lent-GPU call does, in order: the GPU test suite, the
# reduce bandwidth table, the CUB and copy comparator (built here with nvcc), the JIT costs,
# and the transpose table with its cuBLAS, copy and Triton peers. Binaries come prebuilt (carried build/); logs land in $OUT (or ./gpu-out).
# Usage: bash bench/gpu_session.sh [tests|bench|transpose|backends|compile|all]
# (backends, compile: the LLVM route against NVRTC; carry build/libptxjit_llvm.so with the
# binaries. compile: only the cold-compile tables, with the compute cache and module loads.)
set -uo pipefail
what=${1:-all}
out=${OUT:-gpu-out}
mkdir -p "$out"
export PTXJIT_CACHE_DIR=$(mktemp -d /tmp/ptxjit-cache-XXXXXX)
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"

if [ "$what" = tests ] || [ "$what" = all ]; then
    echo "== GPU test suite (build/ptxjit_tests)"
    PTXJIT_CLI=$PWD/build/ptxjit build/ptxjit_tests 2>&1 | tee "$out/tests.log" | \
        grep -E "^[0-9]+%|SKIP|Failure|Error" | head -40
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    echo "== ptxjit bench reduce (n = 2^30 int32)"
    build/ptxjit bench reduce 2>&1 | tee "$out/bench_reduce.log"
    echo "== CUB DeviceReduce::Sum and device memcpy, same call"
    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
        -I/usr/local/cuda/include/cccl bench/cub_reduce.cu -o /tmp/cub_reduce &&
        /tmp/cub_reduce 30 20 2>&1 | tee "$out/cub.log"
    echo "== ptxjit bench reduce again (after CUB, to see the spread)"
    build/ptxjit bench reduce runs=20 2>&1 | grep -E "^variant=vectorized tpb=512 batch=8 |best found|copy" | tee -a "$out/bench_reduce2.log"
    echo "== JIT costs"
    build/ptxjit bench jit 2>&1 | tee "$out/bench_jit.log"
fi
if [ "$what" = transpose ] || [ "$what" = all ]; then
    echo "== ptxjit bench transpose (fp32 16384^2 and 32768^2; copy and cuBLAS Sgeam in the same process)"
    build/ptxjit bench transpose > "$out/bench_transpose.log" 2>&1
    cat "$out/bench_transpose.log"
    echo "== Triton 64x64 tiled transpose and torch copy, same call (bench/triton_transpose.py)"
    python3 bench/triton_transpose.py 2>&1 | tee "$out/triton_transpose.log"
fi
if [ "$what" = backends ] || [ "$what" = all ]; then
    echo "== LLVM vs NVRTC results (GPU suites llvm_reduce_gpu, llvm_transpose_gpu, llvm_matmul_gpu)"
    for suite in llvm_reduce_gpu llvm_transpose_gpu llvm_matmul_gpu; do
        CK_RUN_SUITE=$suite PTXJIT_CLI=$PWD/build/ptxjit build/ptxjit_tests 2>&1 | \
            tee "$out/tests_$suite.log" | grep -E "^[0-9]+%|SKIP|Failure|Error" | head -20
    done
    echo "== ptxjit bench backends reduce (n = 2^28; each route through the family op, A B B A)"
    build/ptxjit bench backends reduce 2>&1 | tee "$out/bench_backends_reduce.log"
    echo "== ptxjit bench backends transpose (16384^2 f32)"
    build/ptxjit bench backends transpose 2>&1 | tee "$out/bench_backends_transpose.log"
    echo "== ptxjit bench backends matmul (4096^3: fp32 SIMT and tensor_core, bf16 wgmma)"
    build/ptxjit bench backends matmul 2>&1 | tee "$out/bench_backends_matmul.log"
fi
if [ "$what" = compile ] || [ "$what" = backends ] || [ "$what" = all ]; then
    echo "== ptxjit bench compile (cold compiles of both routes, by stage; then with the driver's"
    echo "   compute cache, which NVRTC and nvJitLink use by default and ptxjit turns off)"
    echo "compute cache before: $(du -sh ~/.nv/ComputeCache 2>/dev/null || echo none)," \
         "CUDA_CACHE_DISABLE=${CUDA_CACHE_DISABLE:-unset}"
    build/ptxjit bench compile 2>&1 | tee "$out/bench_compile.log"
    build/ptxjit bench compile matmul variant=tensor_core 2>&1 | tee -a "$out/bench_compile.log"
fi
rm -rf "$PTXJIT_CACHE_DIR"
