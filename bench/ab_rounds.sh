#!/bin/bash
# ab_rounds.sh — two builds of the CLI timed against each other in alternating rounds on one
# GPU: for each bench command, rounds of A B then B A (ROUNDS=4: A B B A A B B A), so that a
# drift of the card or the host reaches both sides alike. Each command's full output lands in
# $OUT/NAME.log (or ./ab-out), every run under a header; the rows matching its pattern print
# as they come. Each side keeps a cache directory of its own (it never reads the other's).
# Usage: bash bench/ab_rounds.sh A_CLI B_CLI 'NAME|bench ARGS|PATTERN' ...
#   (PATTERN, an extended regular expression, is the rest of the spec and may hold '|')
#   e.g. bash bench/ab_rounds.sh build/base/ptxjit build/ptxjit \
#        'reduce|bench reduce runs=20|^variant=vectorized tpb=512 batch=8 |best found'
set -uo pipefail
a=$1 b=$2
shift 2
out=${OUT:-ab-out}
rounds=${ROUNDS:-4}
caches=$(mktemp -d /tmp/ab-caches-XXXXXX)
mkdir -p "$out"
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); A = $a, B = $b"
# Round k runs A then B when k is even, B then A when it is odd.
order() { if [ $(($1 % 2)) -eq 0 ]; then echo "A B"; else echo "B A"; fi; }
for spec in "$@"; do
    name=${spec%%|*}
    rest=${spec#*|}
    args=${rest%%|*}
    pattern=${rest#*|}
    for ((k = 0; k < rounds; k++)); do
        for side in $(order $k); do
            cli=$a
            [ "$side" = B ] && cli=$b
            run=$(mktemp)
            PTXJIT_CACHE_DIR="$caches/$side" $cli $args > "$run" 2>&1
            status=$?
            echo "== $name round $k $side (exit $status)"
            { echo "==== $name round $k $side: $cli $args (exit $status)"; cat "$run"; } \
                >> "$out/$name.log"
            grep -E "$pattern" "$run" | head -20
            rm -f "$run"
        done
    done
done
rm -rf "$caches"
