#!/bin/bash
# gpu_session.sh — everything one lent-GPU call does, in order: the GPU test suite, the
# reduce bandwidth table, the CUB and copy comparator (built here with nvcc), the JIT costs,
# and the transpose table with its cuBLAS, copy and Triton peers. Binaries come prebuilt (carried build/); logs land in $OUT (or ./gpu-out).
# Usage: bash bench/gpu_session.sh [tests|suites|bench|cub|transpose|backends|compile|llm|decode|heldout|aot|python|charts|nsys|all]
# (llm: matmul on the twelve LLM shapes of docs/PERFORMANCE.md, bf16 and fp8, the defaults
# against the searched cuBLAS peer in alternating rounds; ROUNDS=N (5), FLUSH=read|write|none.
# decode: a decoding's products (1 to 16 rows), fp8 and bf16 with B K-major: the fit's
# choice, sched=gemv and the swapped tiles. python: the Python package's GPU
# tests and bench/python_launch.py; carry build/python too. heldout: bench/heldout.sh, random
# problems of every family through `run` with the defaults. aot: build/aot_example with every
# compiler off (carry build/aot_example and build/tool), and the aot suite. charts: bench
# reduce, softmax and matmul shapes= drawn with --svg into $OUT (docs/OBSERVABILITY.md), and the
# chart_gpu suite. nsys: an Nsight Systems capture of a cold request and a family op, its NVTX
# ranges listed (nsys stats); where nsys is not installed it says so. suites: only the suites
# that use the GPU but aot (its own mode), in three processes side by side (the CPU suites run
# in CI). None is in `all`.)
# (cub: ptxjit's bench reduce and the CUB program, 64- and 32-bit offsets, in alternating
# rounds A B B A A B B A through bench/ab_rounds.sh; ROUNDS=N for more; bench runs 2 rounds.)
# (backends, compile: the LLVM route against NVRTC; carry build/libptxjit_llvm.so with the
# binaries. compile: only the cold-compile tables, with the compute cache and module loads.)
set -uo pipefail
what=${1:-all}
out=${OUT:-gpu-out}
mkdir -p "$out"
PTXJIT_CACHE_DIR=$(mktemp -d /tmp/ptxjit-cache-XXXXXX)
export PTXJIT_CACHE_DIR
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"

if [ "$what" = tests ] || [ "$what" = all ]; then
    echo "== GPU test suite (build/ptxjit_tests)"
    PTXJIT_CLI=$PWD/build/ptxjit build/ptxjit_tests 2>&1 | tee "$out/tests.log" | \
        grep -E "^[0-9]+%|SKIP|Failure|Error" | head -40
fi
# The suites that use the GPU, in three test processes at once (each suite's checks are
# results, not timings, so sharing the GPU changes nothing they assert).
if [ "$what" = suites ]; then
    echo "== GPU suites, three processes side by side"
    groups=("matmul_gpu llvm_matmul_gpu"
        "reduce_gpu transpose_gpu softmax_gpu llvm_reduce_gpu llvm_transpose_gpu chart_gpu inspect_gpu"
        "launch_api_gpu multigpu_gpu tune_gpu tune_search jit_time plan examples events")
    for i in 0 1 2; do
        PTXJIT_TEST_SUITES="${groups[$i]}" PTXJIT_CLI=$PWD/build/ptxjit \
            PTXJIT_EXAMPLE_TOOL=$PWD/build/tool build/ptxjit_tests > "$out/suites_$i.log" 2>&1 &
    done
    wait
    for i in 0 1 2; do
        echo "${groups[$i]}:"
        grep -E "^[0-9]+%|:[EF]:" "$out/suites_$i.log" | head -20
    done
fi
# ptxjit's bench reduce (A) and CUB DeviceReduce::Sum (B: bench/cub_reduce.cu, 64- and 32-bit
# offsets) in turns, A B B A per two rounds: the same words (n = 2^30 int32, runs=20), the same
# timer (events around each run, the stream held until the run is enqueued, median of 20 after
# 3 warm-ups, no L2 flush), each with the 2 GiB copy of its own process, the same row format.
# The exact sequence, for ROUNDS=2:
#   build/ptxjit bench reduce runs=20; /tmp/cub_reduce bench reduce runs=20
#   /tmp/cub_reduce bench reduce runs=20; build/ptxjit bench reduce runs=20
cub_rounds() {
    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
        -I/usr/local/cuda/include/cccl bench/cub_reduce.cu -o /tmp/cub_reduce || return 1
    OUT="$out/cub_rounds" ROUNDS=$1 bash bench/ab_rounds.sh build/ptxjit /tmp/cub_reduce \
        'reduce_vs_cub|bench reduce runs=20|^variant=vectorized +[0-9]|^variant=vectorized tpb=512 batch=8 |^cub |^device-to-device|^best found' \
        2>&1 | tee "$out/cub_rounds.log"
}
if [ "$what" = bench ] || [ "$what" = all ]; then
    echo "== ptxjit bench reduce (n = 2^30 int32)"
    build/ptxjit bench reduce 2>&1 | tee "$out/bench_reduce.log"
    echo "== ptxjit bench reduce (A) and CUB DeviceReduce::Sum, 64- and 32-bit offsets (B): A B B A"
    cub_rounds 2
    echo "== JIT costs"
    build/ptxjit bench jit 2>&1 | tee "$out/bench_jit.log"
fi
if [ "$what" = cub ]; then
    echo "== ptxjit bench reduce (A) and CUB DeviceReduce::Sum, 64- and 32-bit offsets (B): A B B A x ${ROUNDS:-4}/2"
    cub_rounds "${ROUNDS:-4}"
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
LLM_SHAPES=1x4096x4096,1x14336x4096,16x4096x4096,16x14336x4096,128x4096x4096,128x1024x4096
LLM_SHAPES=$LLM_SHAPES,256x14336x4096,500x4096x14336,2048x4096x4096,4096x14336x4096
LLM_SHAPES=$LLM_SHAPES,4093x4097x4095,128x32000x4096
if [ "$what" = llm ]; then
    echo "== ptxjit bench matmul, LLM shapes, bf16 then fp8 (the defaults as the op fits them)"
    build/ptxjit bench matmul rounds=${ROUNDS:-5} flush=${FLUSH:-read} shapes=$LLM_SHAPES \
        "variant=wgmma" 2>&1 | tee "$out/llm_bf16.log"
    build/ptxjit bench matmul rounds=${ROUNDS:-5} flush=${FLUSH:-read} shapes=$LLM_SHAPES \
        "variant=wgmma_fp8" 2>&1 | tee "$out/llm_fp8.log"
fi
# The swapped tiles of a decoding (fit.c): 64 x 8 (8 rows or fewer) or 64 x 16 (16).
SWAP8="swap=1 bm=64 consumers=1 mma=m64n8k16 stages=16"
SWAP16="swap=1 bm=64 consumers=1 mma=m64n16k16 stages=16"
if [ "$what" = decode ]; then
    echo "== ptxjit bench matmul, a decoding's products: the fit, sched=gemv and the swapped tiles"
    for type in "variant=wgmma_fp8" "variant=wgmma b_layout=nk"; do
        name=$(echo "$type" | tr -c 'a-z0-9\n' _)
        build/ptxjit bench matmul rounds=${ROUNDS:-5} flush=${FLUSH:-read} \
            shapes=1x4096x4096,1x14336x4096,4x14336x4096,8x4096x4096 "$type" \
            "$type sched=gemv" "$type $SWAP8" 2>&1 | tee "$out/decode_8_$name.log"
        build/ptxjit bench matmul rounds=${ROUNDS:-5} flush=${FLUSH:-read} \
            shapes=16x4096x4096,16x14336x4096 "$type" "$type sched=gemv" "$type $SWAP16" 2>&1 |
            tee "$out/decode_16_$name.log"
    done
fi
if [ "$what" = heldout ]; then
    echo "== the held-out sweep: random problems through run with the defaults (bench/heldout.sh)"
    bash bench/heldout.sh 2>&1 | tee "$out/heldout.log" | tail -40
fi
if [ "$what" = aot ]; then
    echo "== the ahead-of-time example with every compiler off, then the aot suite (docs/AOT.md)"
    PTXJIT_NVRTC_LIBRARY=none PTXJIT_NVJITLINK_LIBRARY=none PTXJIT_LLVM_LIBRARY=none \
        build/aot_example 2>&1 | tee "$out/aot_example.log"
    PTXJIT_TEST_SUITES=aot PTXJIT_CLI=$PWD/build/ptxjit PTXJIT_EXAMPLE_TOOL=$PWD/build/tool \
        build/ptxjit_tests 2>&1 | tee "$out/tests_aot.log" | grep -E "^[0-9]+%|Failure|Error"
fi
if [ "$what" = python ]; then
    echo "== the Python package's tests (GPU part included) and its launch bench"
    PYTHONPATH=$PWD/build/python python3 -m pytest python/tests -q 2>&1 | tee "$out/python_tests.log" | tail -15
    PYTHONPATH=$PWD/build/python python3 bench/python_launch.py 2>&1 | tee "$out/python_launch.log"
fi
if [ "$what" = charts ]; then
    echo "== the benches drawn (--svg): reduce, softmax, matmul shapes"
    build/ptxjit bench reduce --svg "$out/bench_reduce.svg" 2>&1 | tee "$out/bench_reduce.log"
    build/ptxjit bench softmax --svg "$out/bench_softmax.svg" 2>&1 | tee "$out/bench_softmax.log"
    build/ptxjit bench matmul rounds=5 shapes=8192x8192x8192,128x4096x4096,4093x4097x4095 \
        "variant=wgmma" "variant=wgmma_fp8" --svg "$out/bench_matmul_shapes.svg" 2>&1 | \
        tee "$out/bench_matmul_shapes.log"
    PTXJIT_TEST_SUITES=chart_gpu PTXJIT_CLI=$PWD/build/ptxjit build/ptxjit_tests 2>&1 | \
        tee "$out/tests_chart_gpu.log" | grep -E "^[0-9]+%|Failure|Error|rows printed"
fi
if [ "$what" = nsys ]; then
    echo "== Nsight Systems: a cold request and a family op, their NVTX ranges"
    NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys \
        2>/dev/null | head -1)
    if [ -z "$NSYS" ]; then
        echo "nsys: not installed here; Nsight Compute's NVTX filter instead: it profiles only"
        echo "the kernels launched inside the range named, and prints the range stack of each"
        NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
        if [ -n "$NCU" ]; then
            rm -rf "${PTXJIT_CACHE_DIR:?}"/*
            for range in "ptxjit reduce/" "ptxjit softmax/"; do
                family=${range#ptxjit }; family=${family%/}
                problem="n=2^24"; [ "$family" = softmax ] && problem="rows=4096 cols=1000"
                echo "-- ncu --nvtx --nvtx-include '$range' ptxjit run $family $problem (cold cache)"
                "$NCU" --nvtx --nvtx-include "$range" --print-nvtx-rename none -c 1 \
                    --metrics gpu__time_duration.sum --print-details all \
                    build/ptxjit run "$family" $problem 2>&1 | tee -a "$out/ncu_nvtx.log" | \
                    grep -v "^==PROF== Profiling" | head -60
            done
            echo "-- the same filter on a range no kernel runs in: nothing profiled"
            "$NCU" --nvtx --nvtx-include "no such range/" -c 1 build/ptxjit run reduce n=2^24 2>&1 | \
                tee -a "$out/ncu_nvtx.log" | tail -3
        fi
    else
        rm -rf "$PTXJIT_CACHE_DIR"/*
        "$NSYS" profile --trace=nvtx,cuda --force-overwrite=true -o "$out/cold_request" \
            build/ptxjit run reduce n=2^24 2>&1 | tail -5
        "$NSYS" stats --report nvtx_sum "$out/cold_request.nsys-rep" 2>&1 | \
            tee "$out/nsys_nvtx.log" | head -30
    fi
fi
rm -rf "$PTXJIT_CACHE_DIR"
