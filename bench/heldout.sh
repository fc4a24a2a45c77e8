#!/bin/bash
# heldout.sh — issue 30's held-out sweep: random problems no fit or test was made on, each run
# through `ptxjit run FAMILY SIZES` with the defaults (the op plans the kernel), checked against
# the CPU reference. Passes when no problem fails and none is refused. The shapes come from a
# seed, printed first: SEED=N repeats a sweep. Needs a GPU; --plan (no GPU) prints the plans.
# Usage: [SEED=N] [COUNT=N] [PTXJIT=build/ptxjit] bash bench/heldout.sh [--plan]
set -uo pipefail
ptxjit=${PTXJIT:-build/ptxjit}
seed=${SEED:-$(date +%s)}
count=${COUNT:-12}
plan=${1:-}
echo "heldout: seed $seed, $count problems a family (SEED=$seed repeats them)"
RANDOM=$seed
between() { # a random integer in [lo, hi), spread over the decades between them
    local lo=$1 hi=$2
    awk -v r1="$RANDOM" -v r2="$RANDOM" -v lo="$lo" -v hi="$hi" 'BEGIN {
        u = (r1 * 32768 + r2) / 1073741824.0
        printf "%d\n", exp(log(lo) + u * (log(hi) - log(lo))) }'
}
problems() {
    local i
    for ((i = 0; i < count; i++)); do
        echo "reduce n=$(between 1 300000000)"
        echo "transpose h=$(between 1 20000) w=$(between 1 20000)"
        echo "softmax rows=$(between 1 70000) cols=$(between 1 20000)"
        echo "softmax dtype=bf16 rows=$(between 1 70000) cols=$(between 1 20000)"
        echo "matmul m=$(between 1 5000) n=$(between 1 5000) k=$(between 1 5000)"
        echo "matmul variant=wgmma_fp8 m=$(between 1 5000) n=$(between 1 5000) k=$(between 1 5000)"
        # a decoding's product with B as a linear layer's weight (N x K): the fit's sched=gemv
        echo "matmul b_layout=nk m=$(between 1 9) n=$(between 1 20000) k=$(between 1 8000)"
    done
}
failed=0 refused=0 total=0
while read -r problem; do
    total=$((total + 1))
    # shellcheck disable=SC2086 # the words of a problem are separate arguments
    if [ "$plan" = --plan ]; then
        out=$("$ptxjit" run $problem --plan 2>&1) || failed=$((failed + 1))
        echo "$problem: $(echo "$out" | head -1)"
        continue
    fi
    # shellcheck disable=SC2086
    out=$("$ptxjit" run $problem runs=3 2>&1)
    status=$?
    verdict=ok
    if [ $status -ne 0 ] && echo "$out" | grep -qi "invalid argument\|cannot run\|refus"; then
        verdict=REFUSED # the op would not take the problem's shape
        refused=$((refused + 1))
    elif [ $status -ne 0 ] || echo "$out" | grep -q "WRONG"; then
        verdict=FAILED
        failed=$((failed + 1))
    fi
    echo "$problem: $verdict $(echo "$out" | grep -E "GB/s|GFLOP/s|error" | head -1)"
    [ "$verdict" = ok ] || echo "$out" | tail -5 | sed 's/^/    | /'
done < <(problems)
echo "heldout: $total problems, $failed failed, $refused refused (seed $seed)"
[ $failed -eq 0 ] && [ $refused -eq 0 ]
