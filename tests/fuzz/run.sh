#!/bin/sh
# run.sh — `make fuzz`: for each target, replay its regression inputs, then fuzz it for a
# bounded time from a copy of its seed corpus. Prints the executions per target; a crash
# fails, naming the input to keep in tests/fuzz/regressions/TARGET once it is fixed.
# Usage: sh tests/fuzz/run.sh BUILD_DIR SECONDS TARGET...
set -u
build=$1 seconds=$2
shift 2
summary=""
for target in "$@"; do
    fuzzer=$build/fuzz_$target
    work=$build/work/$target
    regressions=tests/fuzz/regressions/$target
    rm -rf "$work" && mkdir -p "$work/corpus" "$work/crashes"
    cp tests/fuzz/corpus/"$target"/* "$work/corpus/"
    dict=""
    [ -f "tests/fuzz/$target.dict" ] && dict="-dict=tests/fuzz/$target.dict"
    [ -d "$regressions" ] || regressions=""
    if [ -n "$regressions" ]; then
        "$fuzzer" "$regressions"/* >"$work/regressions.log" 2>&1 || {
            echo "fuzz $target: a regression input fails again:"; tail -30 "$work/regressions.log"
            exit 1; }
    fi
    echo "fuzz $target: $seconds s (log: $work/fuzz.log)"
    "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -print_final_stats=1 \
        -artifact_prefix="$work/crashes/" $dict "$work/corpus" $regressions \
        >"$work/fuzz.log" 2>&1
    status=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/fuzz.log")
    if [ "$status" -ne 0 ]; then
        grep -E "ERROR|runtime error|SUMMARY|property failed" "$work/fuzz.log" | head -10
        echo "fuzz $target: FAILED; the input is in $work/crashes/: fix the bug, then keep the"
        echo "input as tests/fuzz/regressions/$target/<what-it-broke> (the suite replays it)"
        exit 1
    fi
    summary="$summary$(printf '  %-7s %10s executions in %s s (%s/s), corpus %s files, no crash' \
        "$target" "$execs" "$seconds" "$rate" "$(ls "$work/corpus" | wc -l)")
"
done
printf 'fuzz: every target clean (ASan + UBSan):\n%s' "$summary"
