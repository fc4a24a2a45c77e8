#!/bin/bash
# sanitize_gpu.sh — compute-sanitizer (memcheck, racecheck, synccheck) over every kernel
# variant at small sizes, through `ptxjit run`, which checks each result against the CPU
# reference. Needs a GPU and the CUDA toolkit's compute-sanitizer; runs from prebuilt binaries
# (build/ptxjit). Logs land in $OUT/sanitize (or ./gpu-out/sanitize); a pass/fail table ends
# the output; the exit status is 1 if any run failed.
#
# Usage: bash bench/sanitize_gpu.sh [--check] [TOOL...]
#   TOOL      memcheck racecheck synccheck (default: all three)
#   --check   no GPU: only compile each run's kernel (ptxjit --no-gpu ptx), to check the list
#   RUNS_MATCHING=REGEX   only the runs whose line matches
#
# A run is a line of RUNS: "family | params | size arguments of ptxjit run". A new family
# (matmul, ...) adds its lines; nothing else changes.
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
'

cli=${PTXJIT:-build/ptxjit}
out=${OUT:-gpu-out}/sanitize
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

sanitizer=$(command -v compute-sanitizer || echo "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer")
if [ "$check_only" = 0 ] && [ ! -x "$sanitizer" ]; then
    echo "error: compute-sanitizer not found (PATH, \$CUDA_HOME/bin); install the CUDA toolkit" >&2
    exit 2
fi
mkdir -p "$out"
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$(mktemp -d /tmp/ptxjit-sanitize-XXXXXX)}

# The runs as "family|params|sizes" lines, comments and blank lines dropped.
runs() {
    printf '%s\n' "$RUNS" | sed -e 's/#.*//' -e '/^[[:space:]]*$/d' |
        grep -E -- "${RUNS_MATCHING:-.}" |
        sed -e 's/[[:space:]]*|[[:space:]]*/|/g' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'
}

# compute-sanitizer's options per tool: memcheck also reports device memory never freed.
tool_options() {
    case $1 in
    memcheck) echo "--tool memcheck --leak-check full" ;;
    racecheck) echo "--tool racecheck --racecheck-report all" ;;
    synccheck) echo "--tool synccheck" ;;
    esac
}

# One cell of the table: PASS, FAIL (N errors), WRONG (the result check failed) or ERROR.
run_one() {
    local tool=$1 family=$2 params=$3 sizes=$4 log=$5
    # shellcheck disable=SC2046,SC2086
    "$sanitizer" $(tool_options "$tool") --error-exitcode 99 --print-limit 20 \
        "$cli" run "$family" $params $sizes runs=1 >"$log" 2>&1
    local status=$?
    local errors
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -1)
    if [ $status -eq 0 ] && [ "${errors:-0}" = 0 ]; then
        echo PASS
    elif [ $status -eq 99 ] || [ "${errors:-0}" != 0 ]; then
        echo "FAIL(${errors:-?})"
    elif grep -q WRONG "$log"; then
        echo WRONG
    else
        echo "ERROR($status)"
    fi
}

if [ "$check_only" = 1 ]; then
    failed=0
    while IFS='|' read -r family params sizes; do
        # shellcheck disable=SC2086
        if "$cli" --no-gpu ptx "$family" $params >/dev/null 2>"$out/check.err"; then
            printf 'ok      %s %s\n' "$family" "$params"
        else
            printf 'BROKEN  %s %s: %s\n' "$family" "$params" "$(tail -1 "$out/check.err")"
            failed=1
        fi
    done < <(runs)
    exit $failed
fi

echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
echo "sanitizer: $("$sanitizer" --version | tail -1)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); logs: $out"
table="$out/summary.txt"
printf '%-10s %-58s %-14s' family params sizes >"$table"
for tool in "${tools[@]}"; do printf ' %-10s' "$tool" >>"$table"; done
echo >>"$table"
failed=0
while IFS='|' read -r family params sizes; do
    printf '%-10s %-58s %-14s' "$family" "$params" "$sizes" >>"$table"
    for tool in "${tools[@]}"; do
        name=$(printf '%s__%s__%s' "$tool" "$family" "$params" | tr ' =' '_-')
        cell=$(run_one "$tool" "$family" "$params" "$sizes" "$out/$name.log")
        [ "$cell" = PASS ] || failed=1
        printf ' %-10s' "$cell" >>"$table"
        echo "$tool $family $params $sizes: $cell"
    done
    echo >>"$table"
done < <(runs)
echo
cat "$table"
rm -rf "$PTXJIT_CACHE_DIR"
if [ $failed = 0 ]; then echo "all runs clean"; else echo "some runs failed: see $out/*.log"; fi
exit $failed
