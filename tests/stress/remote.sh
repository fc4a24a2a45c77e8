#!/bin/sh
# remote.sh — `make stress-remote`: the multi-process stress (stress.c) with every process's
# contexts on one redis-server too (signed entries, a unix socket in a temporary directory),
# which is SIGKILLed and restarted empty partway through. Passes on the stress's own checks:
# every kernel a process got, and every entry on disk, equal to a fresh compile.
# Usage: sh tests/stress/remote.sh STRESS [stress options]
set -eu
stress=$1; shift
command -v redis-server >/dev/null || { echo "stress-remote: skipped, redis-server is not installed (make deps)"; exit 0; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ptxjit-stress-remote-XXXXXX")
pid=
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
start() {
    rm -f "$work/redis.sock"
    redis-server --port 0 --unixsocket "$work/redis.sock" --unixsocketperm 700 --save '' \
        --appendonly no --logfile "$work/redis.log" &
    pid=$!
    i=0; while [ ! -S "$work/redis.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
}
head -c 32 /dev/urandom > "$work/key"
chmod 600 "$work/key"
export PTXJIT_REMOTE_CACHE="unix://$work/redis.sock" PTXJIT_REMOTE_CACHE_KEY_FILE="$work/key"
export PTXJIT_REMOTE_CACHE_BACKOFF_MS=200
start
"$stress" "$@" & stress_pid=$!
sleep 1
mid_run=no
kill -0 $stress_pid 2>/dev/null && mid_run=yes
kill -9 $pid; wait $pid 2>/dev/null || true
start
wait $stress_pid
echo "stress-remote: passed; redis-server SIGKILLed and restarted 1 s in (stress still running: $mid_run)"
