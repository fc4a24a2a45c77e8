#!/bin/sh
# hardening.sh — `make hardening`: runs the hardening targets side by side, as many at once as
# there are processors (each mostly uses one), each into its own log; then prints each
# target's result lines in order and fails if any target failed, with the end of its log.
# Usage: sh tests/hardening.sh LOG_DIR TARGET...   (MAKE: the make to run them with)
set -u
logs=$1
shift
mkdir -p "$logs"
for target in "$@"; do rm -f "$logs/$target.status" "$logs/$target.log"; done
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)
echo "hardening: $* ($jobs at a time; logs in $logs)"
# shellcheck disable=SC2016 # $0 and $(...) expand in the inner sh, not here
for target in "$@"; do echo "$target"; done |
    xargs -P "$jobs" -I TARGET sh -c '
        begin=$(date +%s)
        ${MAKE:-make} --no-print-directory CI= TARGET >"$0/TARGET.log" 2>&1
        echo $? $(( $(date +%s) - begin )) >"$0/TARGET.status"
        echo "  done: TARGET"' "$logs"
failed=""
for target in "$@"; do
    read -r status seconds <"$logs/$target.status"
    echo "== make $target: $([ "$status" = 0 ] && echo ok || echo FAILED) in ${seconds} s"
    # The lines that say what was run and found: Check's summary, stress, fuzz, checks.
    grep -E "^[0-9]+%: Checks|^stress:|^fuzz|^  (params|schema|entry|resp) |every run|warmed|sweep: [0-9]+ kernels|suite-sampled:|nvrtc memo:|^[0-9]+ passed|SKIP|not run" \
        "$logs/$target.log" | sed 's/^/   /'
    if [ "$status" != 0 ]; then
        failed="$failed $target"
        tail -40 "$logs/$target.log" | sed 's/^/   | /'
    fi
done
echo "hardening: $(( $(date +%s) - start )) s in all"
if [ -n "$failed" ]; then echo "hardening: FAILED:$failed"; exit 1; fi
echo "hardening: every target passed"
