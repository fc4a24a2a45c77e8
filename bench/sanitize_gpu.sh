#!/bin/bash
# sanitize_gpu.sh — compute-sanitizer (memcheck, racecheck, synccheck) over every kernel
# variant of the families at small sizes, through both backends (nvrtc, and
# llvm for every variant its generators build), by `ptxjit run`, which also checks each
# result against the CPU reference. Needs a GPU and the CUDA toolkit's compute-sanitizer; runs
# from prebuilt binaries only (build/ptxjit, and build/libptxjit_llvm.so next to it for the
# llvm backend): no compiler. Logs land in $OUT/sanitize (or ./gpu-out/sanitize); a pass/fail
# table ends the output; the exit status is 1 if any run failed.
#
# Every run's kernel is compiled once first, in parallel and without a GPU, into a fresh cache
# directory: each sanitized process then loads its cubin from disk instead of compiling under
# the sanitizer. Each tool run is bounded by `timeout` (TIMEOUT seconds), and JOBS of them
# share the GPU at once (compute-sanitizer slows a kernel 10-100x, but these kernels are tiny:
# most of a run is the sanitizer's and the context's start).
#
# Usage: bash bench/sanitize_gpu.sh [--check] [TOOL...]
#   TOOL      memcheck racecheck synccheck (default: all three)
#   --check   no GPU: only compile each run's kernel with each backend, to check the list
#   RUNS_MATCHING=REGEX   only the runs whose line matches      BACKENDS="nvrtc llvm" (default)
#   JOBS=6    tool runs at once (JOBS=1: one after another)    TIMEOUT=180  seconds per tool run
#   PTXJIT=build/ptxjit   SANITIZER=compute-sanitizer (else $CUDA_HOME/bin/compute-sanitizer)
#
# A run is a line of RUNS: "family | params | size arguments of ptxjit run". A new family
# adds its lines; nothing else changes.
set -uo pipefail

RUNS='
# reduce: every variant and dtype; n odd and not a multiple of any tile, and smaller than a block
reduce    | variant=two_pass dtype=i32                       | n=100003
reduce    | variant=two_pass dtype=f32                       | n=100003
reduce    | variant=warp_shuffle dtype=i32                   | n=100003
reduce    | variant=warp_shuffle dtype=f32 tpb=64            | n=37
reduce    | variant=one_pass dtype=i32                       | n=100003
reduce    | variant=one_pass dtype=f32                       | n=100003
reduce    | variant=batched dtype=i32 batch=4                | n=100003
reduce    | variant=batched dtype=f32 batch=7 tpb=128        | n=100003
reduce    | variant=vectorized dtype=i32 batch=4             | n=100003
reduce    | variant=vectorized dtype=f32 batch=8 tpb=256     | n=100003
reduce    | variant=vectorized dtype=i32 batch=16 tpb=1024   | n=37
# transpose: every variant and dtype, and each tma_batched knob (xpose, rows, inplace, stages,
# group); shapes not multiples of the tile (rows stay multiples of 16 bytes, as TMA needs)
transpose | variant=smem dtype=f32                          | h=200 w=136
transpose | variant=smem dtype=f16 batch=16                 | h=200 w=136
transpose | variant=smem dtype=bf16 block=16 batch=4        | h=200 w=136
transpose | variant=smem dtype=f64                          | h=200 w=136
transpose | variant=tma dtype=f32                           | h=200 w=136
transpose | variant=tma dtype=f16                           | h=200 w=136
transpose | variant=tma dtype=f64 block=16                  | h=200 w=136
transpose | variant=tma_swizzle dtype=f32                   | h=200 w=136
transpose | variant=tma_swizzle dtype=bf16 swizzle=64B      | h=200 w=136
transpose | variant=tma_swizzle dtype=f64 swizzle=32B block=16 | h=200 w=136
transpose | variant=tma_batched dtype=f32                   | h=200 w=136
transpose | variant=tma_batched dtype=f16                   | h=200 w=136
transpose | variant=tma_batched dtype=bf16 group=1          | h=200 w=136
transpose | variant=tma_batched dtype=f64                   | h=200 w=136
transpose | variant=tma_batched dtype=f32 xpose=scalar      | h=200 w=136
transpose | variant=tma_batched dtype=f32 block=32 swizzle=128B xpose=vector | h=200 w=136
transpose | variant=tma_batched dtype=f16 block=64 swizzle=128B batch=64 xpose=vector | h=200 w=136
transpose | variant=tma_batched dtype=f32 rows=0 block=64   | h=200 w=136
transpose | variant=tma_batched dtype=f32 inplace=0         | h=200 w=136
transpose | variant=tma_batched dtype=f32 stages=2          | h=200 w=136
transpose | variant=tma_batched dtype=f64 stages=1 group=4  | h=200 w=136
# matmul: the seven steps at their defaults and in smaller tiles, tensor_core with both loads,
# without prefetch and in narrow warp tiles, wgmma in both dtypes and outputs, one consumer, a
# width that is no power of two, clusters of two; m, n, k multiples of no tile (n and k of 8,
# as TMA needs)
matmul    | variant=naive                                    | m=200 n=136 k=72
matmul    | variant=coalescing                               | m=200 n=136 k=72
matmul    | variant=tiled                                    | m=200 n=136 k=72
matmul    | variant=tiled bm=16 bn=16 bk=4                   | m=200 n=136 k=72
matmul    | variant=tiled_register                           | m=200 n=136 k=72
matmul    | variant=block_tiled                              | m=200 n=136 k=72
matmul    | variant=block_tiled bm=32 bn=32 bk=8 tm=4 tn=4   | m=200 n=136 k=72
matmul    | variant=block_tiled_vectorized                   | m=200 n=136 k=72
matmul    | variant=tensor_core load=cp_async                | m=200 n=136 k=72
matmul    | variant=tensor_core load=cp_async prefetch=0 stages=2 | m=200 n=136 k=72
matmul    | variant=tensor_core load=cp_async wm=64 wn=16 bn=64 | m=200 n=136 k=72
matmul    | variant=tensor_core load=tma                     | m=200 n=136 k=72
matmul    | variant=tensor_core load=tma bk=16 prefetch=0 wm=32 wn=16 bm=64 bn=64 | m=200 n=136 k=72
matmul    | variant=tensor_core load=tma bk=8 stages=6 wm=16 wn=8 bm=32 bn=32 | m=200 n=136 k=72
matmul    | variant=wgmma                                    | m=200 n=136 k=72
matmul    | variant=wgmma dtype=f16 out=f32                  | m=200 n=136 k=72
matmul    | variant=wgmma consumers=1 bm=128 mma=m64n128k16 stages=2 | m=200 n=136 k=72
matmul    | variant=wgmma dtype=f16 mma=m64n200k16 stages=3  | m=200 n=136 k=72
matmul    | variant=wgmma cluster=2                          | m=200 n=136 k=72
matmul    | variant=wgmma cluster=2 dtype=f16 out=f32 consumers=1 bm=64 mma=m64n64k16 | m=200 n=136 k=72
# the wgmma variants beyond the first wgmma kernel: both schedules and stores (persistent blocks
# that loop over several tiles: 272 tiles), B transposed, the epilogue terms that need no
# launch values, tf32 and fp8 (k of 16 bytes)
matmul    | variant=wgmma sched=grid store=direct            | m=200 n=136 k=72
matmul    | variant=wgmma                                    | m=2176 n=4096 k=72
matmul    | variant=wgmma cluster=2 mma=m64n128k16 out=f32 stages=2 | m=2176 n=4096 k=72
matmul    | variant=wgmma b_layout=nk alpha=scaled act=gelu out=f16 | m=200 n=136 k=72
matmul    | variant=wgmma_tf32                               | m=200 n=136 k=72
matmul    | variant=wgmma_tf32 mma=m64n128k16 out=bf16 cluster=2 | m=2176 n=4096 k=72
matmul    | variant=wgmma_fp8                                | m=200 n=136 k=80
matmul    | variant=wgmma_fp8 fp8=e5m2 out=f32 mma=m64n128k16 act=relu | m=2176 n=4096 k=80
# the schedules for a decoding and for few tiles (swapped operands, split-K, ping-pong
# consumers, the dot products of sched=gemv: K ending inside a step, in a row of every type,
# more than 8 rows of A and 16 of B), rows the TMA cannot take (staged by the copy kernel of
# the op, matmul_stage_rows), a strided batch
matmul    | variant=wgmma swap=1 bm=64 consumers=1 mma=m64n8k16 stages=16 | m=5 n=200 k=72
matmul    | variant=wgmma_fp8 swap=1 bm=64 consumers=1 mma=m64n16k16 stages=16 | m=13 n=136 k=80
matmul    | variant=wgmma splits=3 bm=64 consumers=1 mma=m64n64k16 | m=100 n=136 k=1000
matmul    | variant=wgmma_fp8 sched=pingpong mma=m64n128k16     | m=300 n=520 k=160
matmul    | variant=wgmma_fp8 sched=gemv                     | m=3 n=200 k=1040
matmul    | variant=wgmma_fp8 sched=gemv                     | m=2 n=100 k=1000
matmul    | variant=wgmma sched=gemv                         | m=12 n=33 k=584
matmul    | variant=wgmma_tf32 sched=gemv                    | m=5 n=40 k=300
matmul    | variant=wgmma sched=gemv                         | m=3 n=40 k=72 batch=4 lda=80 ldc=48
matmul    | variant=wgmma_fp8                                | m=37 n=101 k=99 batch=3
# softmax: both variants, every dtype; rows ragged against the vector (element-wide path), and
# row counts that are no multiple of the rows a block takes
softmax   | variant=online dtype=f32                        | rows=37 cols=1000
softmax   | variant=online dtype=f32 tpb=256 tpr=32 items=8 | rows=37 cols=1023
softmax   | variant=online dtype=bf16                       | rows=37 cols=4096
softmax   | variant=online dtype=f16 tpb=64 tpr=4 vec=1 items=40 | rows=37 cols=157
softmax   | variant=online dtype=bf16 tpb=1024 tpr=1024 items=2 | rows=5 cols=16383
softmax   | variant=block dtype=f32                         | rows=5 cols=40001
softmax   | variant=block dtype=bf16 tpb=128 tpr=32 items=2 | rows=37 cols=1001
softmax   | variant=block dtype=f16                         | rows=5 cols=20000
'

cli=${PTXJIT:-build/ptxjit}
out=${OUT:-gpu-out}/sanitize
backends=${BACKENDS:-nvrtc llvm}
parallel=${JOBS:-6}
limit=${TIMEOUT:-180}
check_only=0
tools=()
for arg in "$@"; do
    case $arg in
    --check) check_only=1 ;;
    memcheck | racecheck | synccheck) tools+=("$arg") ;;
    *) echo "usage: $0 [--check] [memcheck|racecheck|synccheck ...]" >&2; exit 2 ;;
    esac
done
[ ${#tools[@]} -eq 0 ] && tools=(memcheck racecheck synccheck)
[ -x "$cli" ] || { echo "error: no $cli; build it (make) or set PTXJIT=path/to/ptxjit" >&2; exit 2; }

sanitizer=${SANITIZER:-$(command -v compute-sanitizer ||
    echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")}
if [ "$check_only" = 0 ] && [ ! -x "$sanitizer" ]; then
    echo "error: compute-sanitizer not found (PATH, \$CUDA_HOME/bin); install the CUDA toolkit" >&2
    exit 2
fi
rm -rf "$out" && mkdir -p "$out/compile" "$out/cells"
cache=$(mktemp -d /tmp/ptxjit-sanitize-XXXXXX)
export PTXJIT_CACHE_DIR=$cache
trap 'rm -rf "$cache"' EXIT
start=$(date +%s)

# The runs as "family|params|sizes" lines, comments and blank lines dropped.
runs() {
    printf '%s\n' "$RUNS" | sed -e 's/#.*//' -e '/^[[:space:]]*$/d' |
        grep -E -- "${RUNS_MATCHING:-.}" |
        sed -e 's/[[:space:]]*|[[:space:]]*/|/g' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'
}

# Every (run, backend) once, numbered: "index|backend|family|params|sizes".
jobs_list() {
    local index=0 backend
    while IFS='|' read -r family params sizes; do
        for backend in $backends; do
            echo "$index|$backend|$family|$params|$sizes"
            index=$((index + 1))
        done
    done < <(runs)
}

# Waits until fewer than JOBS background jobs run.
throttle() {
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
}

# Compiles one run's kernel (no GPU) into the cache; its verdict goes to compile/INDEX:
# ok, n/a (the llvm backend does not build this variant) or BROKEN.
compile_one() {
    local index=$1 backend=$2 family=$3 params=$4 err=$out/compile/$1.err verdict
    # shellcheck disable=SC2086
    if "$cli" --no-gpu ptx "$family" $params backend="$backend" >/dev/null 2>"$err"; then
        verdict=ok
    elif grep -q "not supported by the llvm backend" "$err"; then
        verdict=n/a
    else
        verdict=BROKEN
    fi
    echo "$verdict" >"$out/compile/$index"
}

while IFS='|' read -r index backend family params sizes; do
    throttle
    compile_one "$index" "$backend" "$family" "$params" &
done < <(jobs_list)
wait
broken=0
while IFS='|' read -r index backend family params sizes; do
    verdict=$(cat "$out/compile/$index")
    [ "$verdict" = BROKEN ] && broken=1
    printf '%-7s %-6s %s %s%s\n' "$verdict" "$backend" "$family" "$params" \
        "$([ "$verdict" = BROKEN ] && echo ": $(tail -1 "$out/compile/$index.err")")"
done < <(jobs_list) >"$out/compiled.txt"
if [ "$check_only" = 1 ]; then
    cat "$out/compiled.txt"
    echo "$(jobs_list | wc -l) kernels checked in $(($(date +%s) - start)) s"
    exit $broken
fi

# compute-sanitizer's options per tool: memcheck also reports device memory never freed.
tool_options() {
    case $1 in
    memcheck) echo "--tool memcheck --leak-check full" ;;
    racecheck) echo "--tool racecheck --racecheck-report all" ;;
    synccheck) echo "--tool synccheck" ;;
    esac
}

# One cell of the table, written to cells/INDEX.TOOL: PASS, FAIL(N errors), WRONG (the
# result check failed), TIMEOUT, ERROR(status), or n/a and BROKEN from the compile above.
run_one() {
    local tool=$1 index=$2 backend=$3 family=$4 params=$5 sizes=$6 cell
    local log="$out/$tool.$index.$family.$backend.log" verdict
    verdict=$(cat "$out/compile/$index")
    if [ "$verdict" != ok ]; then
        echo "$verdict" >"$out/cells/$index.$tool"
        return
    fi
    {
        echo "# $family $params backend=$backend $sizes"
        # A timed-out run's whole process group (the sanitizer and ptxjit) gets the signal.
        # shellcheck disable=SC2046,SC2086
        timeout -k 15 "$limit" "$sanitizer" $(tool_options "$tool") --error-exitcode 99 \
            --print-limit 20 "$cli" run "$family" $params backend="$backend" $sizes runs=1
    } >"$log" 2>&1
    local status=$?
    local errors
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -1)
    if [ $status -eq 124 ] || [ $status -eq 137 ]; then
        cell=TIMEOUT
    elif [ $status -eq 0 ] && [ "${errors:-0}" = 0 ]; then
        cell=PASS
    elif [ $status -eq 99 ] || [ "${errors:-0}" != 0 ]; then
        cell="FAIL(${errors:-?})"
    elif grep -q WRONG "$log"; then
        cell=WRONG
    else
        cell="ERROR($status)"
    fi
    echo "$cell" >"$out/cells/$index.$tool"
    echo "$tool $family $params backend=$backend: $cell"
}

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
echo "sanitizer: $("$sanitizer" --version | tail -1)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); logs: $out; $parallel at a time, $limit s each at most"
echo "compiled $(jobs_list | wc -l) kernels in $(($(date +%s) - start)) s" \
    "($(grep -c '^ok' "$out/compiled.txt") ok, $(grep -c '^n/a' "$out/compiled.txt") n/a," \
    "$(grep -c '^BROKEN' "$out/compiled.txt") broken)"
for tool in "${tools[@]}"; do
    while IFS='|' read -r index backend family params sizes; do
        throttle
        run_one "$tool" "$index" "$backend" "$family" "$params" "$sizes" &
    done < <(jobs_list)
done
wait

table="$out/summary.txt"
{
    printf '%-10s %-62s %-7s %-16s' family params backend sizes
    for tool in "${tools[@]}"; do printf ' %-10s' "$tool"; done
    echo
    while IFS='|' read -r index backend family params sizes; do
        printf '%-10s %-62s %-7s %-16s' "$family" "$params" "$backend" "$sizes"
        for tool in "${tools[@]}"; do printf ' %-10s' "$(cat "$out/cells/$index.$tool")"; done
        echo
    done < <(jobs_list)
} >"$table"
echo
cat "$table"
cells=$(cat "$out"/cells/* | wc -l)
passed=$(cat "$out"/cells/* | grep -c '^PASS$')
skipped=$(cat "$out"/cells/* | grep -c '^n/a$')
failed=$((cells - passed - skipped))
echo "$cells tool runs: $passed clean, $skipped n/a (not built by the llvm backend)," \
    "$failed failed; $(($(date +%s) - start)) s in all"
if [ $failed = 0 ]; then echo "all runs clean"; else echo "some runs failed: see $out/*.log"; fi
[ $failed = 0 ]
