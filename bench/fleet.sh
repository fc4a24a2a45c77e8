#!/bin/bash
# fleet.sh — the remote cache on one machine (issue 16): one redis-server (unix socket, signed
# entries), 2 nodes (separate local cache dirs) x 8 processes, 24 reduce keys. A bench, not a
# pass/fail timing: it prints the figures for docs/RELIABILITY.md and PERFORMANCE.md, and fails
# only on correctness (a request not answered, an entry that differs from a fresh compile's).
#   staggered   node A's 8 processes compile 3 keys each; then node B's 8 processes ask for
#               all 24 (shuffled): compiles across the fleet, B's remote-hit latency (the
#               request's time as `ptxjit ptx` reports it: key, disk miss, fetch, checks,
#               local store).
#   lone        node C, one process, asks for the 24 keys in turn: the remote hit without
#               other processes competing for the 2 cores.
#   together    both nodes' 16 processes ask for all 24 at once (shuffled): compiles (one per
#               key: the compile lock of a node's cache dir and the fleet's lease), and the
#               waits that made it so (ptxjit cache stats).
#   kill        as together, with redis-server SIGKILLed mid-run and restarted (empty) a
#               second later: every request answered, every entry of both nodes byte-equal to
#               a fresh compile's (entries hold the PTX and the cubin).
# The last lines compare the figures with issue 16's goals. The machine's load average is
# printed with them: other work on the machine lengthens every wait for a core.
# Usage: bash bench/fleet.sh [PTXJIT]   (default build/ptxjit; needs redis-server)
set -euo pipefail
PTXJIT=$(realpath "${1:-build/ptxjit}")
command -v redis-server >/dev/null || { echo "fleet: redis-server is not installed (make deps)" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ptxjit-fleet-XXXXXX")
REDIS_PID=
cleanup() { [ -n "$REDIS_PID" ] && { kill -9 "$REDIS_PID"; wait "$REDIS_PID"; } 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
head -c 32 /dev/urandom > "$WORK/fleet.key"
chmod 600 "$WORK/fleet.key"
export PTXJIT_REMOTE_CACHE="unix://$WORK/redis.sock" PTXJIT_REMOTE_CACHE_KEY_FILE="$WORK/fleet.key"
export PTXJIT_REMOTE_CACHE_BACKOFF_MS=500

KEYS=()
for variant in one_pass two_pass warp_shuffle vectorized; do
    for tpb in 128 256 512; do
        for dtype in i32 f32; do KEYS+=("variant=$variant tpb=$tpb dtype=$dtype"); done
    done
done

start_redis() {
    rm -f "$WORK/redis.sock"
    redis-server --port 0 --unixsocket "$WORK/redis.sock" --unixsocketperm 700 --save '' \
        --appendonly no --logfile "$WORK/redis.log" &
    REDIS_PID=$!
    for _ in $(seq 100); do [ -S "$WORK/redis.sock" ] && return; sleep 0.05; done
    echo "fleet: redis-server did not start" >&2; exit 1
}
kill_redis() { kill -9 "$REDIS_PID"; wait "$REDIS_PID" 2>/dev/null || true; REDIS_PID=; }

# One process of a node: its requests in order, one `ptxjit ptx` each (a fresh process, as a
# job's workers are); the origin lines go to LOG. Fails if any request fails.
worker() { # NODE_DIR LOG SEED KEY_INDEXES...
    local dir=$1 log=$2 seed=$3; shift 3
    local order
    order=$(printf '%s\n' "$@" | shuf --random-source=<(yes "$seed"))
    for i in $order; do
        # shellcheck disable=SC2086 # the key's words are meant to split
        PTXJIT_CACHE_DIR=$dir "$PTXJIT" --no-gpu ptx reduce ${KEYS[$i]} >/dev/null 2>>"$log" ||
            { echo "fleet: request '${KEYS[$i]}' failed on $dir" >&2; return 1; }
    done
}

all_keys() { seq 0 $((${#KEYS[@]} - 1)); }
count() { cat "$@" | grep -c "$PATTERN" || true; }

node() { # NAME SPLIT(1: each process its third; 0: all keys)
    local name=$1 split=$2 pids=()
    for p in $(seq 0 7); do
        if [ "$split" = 1 ]; then
            worker "$WORK/$name" "$WORK/$name.$p.log" "$name$p" $p $((p + 8)) $((p + 16)) &
        else
            # shellcheck disable=SC2046
            worker "$WORK/$name" "$WORK/$name.$p.log" "$name$p" $(all_keys) &
        fi
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR) print (NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); else print "-"}'; }

# Every entry of a node equal to the reference cache's file of the same key.
check_identical() { # NODE
    local n=0
    for f in "$WORK/$1"/v1/*/*; do
        case $(basename "$f") in *.*|stats|compiler-*) continue ;; esac
        [ -f "$f" ] || continue
        cmp -s "$f" "$WORK/reference/v1/$(basename "$(dirname "$f")")/$(basename "$f")" ||
            { echo "fleet: $f differs from a fresh compile" >&2; exit 1; }
        n=$((n + 1))
    done
    echo "$n"
}

fresh() { rm -rf "$WORK"/a "$WORK"/b "$WORK"/c "$WORK"/*.log; }

# A node that has run ptxjit before: its compiler memo is there (on a node's very first
# request the memo is made, which loads NVRTC to ask its version: several ms that are not the
# remote's).
with_memo() { # NODE
    mkdir -p "$WORK/$1/v1" && chmod 700 "$WORK/$1" "$WORK/$1/v1"
    cp "$WORK/reference/v1/compiler" "$WORK/$1/v1/"
}

remote_hit_ms() { cat "$@" | sed -n 's/.*remote cache hit in \([0-9.]*\) ms/\1/p'; }

# A counter of `ptxjit cache stats --json` on NODE (0 where this ptxjit has none).
stat_of() { # NODE NAME
    local value
    value=$(PTXJIT_CACHE_DIR=$WORK/$1 "$PTXJIT" --no-gpu cache stats --json |
        sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p")
    echo "${value:-0}"
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "fleet: ${#KEYS[@]} keys, 2 nodes x 8 processes, $(nproc) cores; $(date -u +%F)"
# The reference: each key compiled once, no remote.
for i in $(all_keys); do
    # shellcheck disable=SC2086
    PTXJIT_REMOTE_CACHE= PTXJIT_CACHE_DIR=$WORK/reference "$PTXJIT" --no-gpu ptx reduce ${KEYS[$i]} \
        >/dev/null 2>&1
done

start_redis
fresh
node a 1
with_memo b
load_b=$(load)
node b 0
PATTERN=': compiled in' ; compiles=$(count "$WORK"/a.*.log "$WORK"/b.*.log)
PATTERN=': remote cache hit in' ; remote_hits=$(count "$WORK"/b.*.log)
latency=$(remote_hit_ms "$WORK"/b.*.log | median)
disk=$(cat "$WORK"/b.*.log | sed -n 's/.*disk cache hit in \([0-9.]*\) ms/\1/p' | median)
echo "staggered: compiles $compiles (24 keys), node B remote hits $remote_hits," \
     "median remote hit $latency ms (disk hit $disk ms; load average before: $load_b);" \
     "identical entries: a $(check_identical a), b $(check_identical b)"
with_memo c
# shellcheck disable=SC2046 # one key index a word
worker "$WORK/c" "$WORK/c.log" c $(all_keys)
lone=$(remote_hit_ms "$WORK/c.log" | median)
echo "lone: node C's one process, 24 remote hits in turn: median $lone ms"

kill_redis; start_redis; fresh
load_t=$(load)
node a 0 & A=$!
node b 0 & B=$!
wait $A; wait $B
PATTERN=': compiled in' ; together=$(count "$WORK"/a.*.log "$WORK"/b.*.log)
PATTERN=': remote cache hit in' ; remote_hits=$(count "$WORK"/a.*.log "$WORK"/b.*.log)
waits=$(( $(stat_of a compile_waits) + $(stat_of b compile_waits) ))
wins=$(( $(stat_of a lease_wins) + $(stat_of b lease_wins) ))
lease_waits=$(( $(stat_of a lease_waits) + $(stat_of b lease_waits) ))
lease_timeouts=$(( $(stat_of a lease_timeouts) + $(stat_of b lease_timeouts) ))
echo "together: compiles $together (24 keys, 16 processes at once), remote hits $remote_hits;" \
     "waits for a process of the same node $waits, leases won $wins, waits for another node" \
     "$lease_waits ($lease_timeouts timed out; load average before: $load_t);" \
     "identical entries: a $(check_identical a), b $(check_identical b)"

kill_redis; start_redis; fresh
node a 0 & A=$!
node b 0 & B=$!
sleep 1; kill_redis; sleep 1; start_redis
wait $A; wait $B
PATTERN=': compiled in' ; compiles=$(count "$WORK"/a.*.log "$WORK"/b.*.log)
PATTERN='^// ptxjit: reduce' ; answered=$(count "$WORK"/a.*.log "$WORK"/b.*.log)
PATTERN='remote cache unix' ; warnings=$(count "$WORK"/a.*.log "$WORK"/b.*.log)
identical_a=$(check_identical a) identical_b=$(check_identical b)
echo "kill: $answered of $((16 * ${#KEYS[@]})) requests answered, compiles $compiles," \
     "remote warnings $warnings; identical entries: a $identical_a, b $identical_b"

verdict() { if awk "BEGIN {exit !($1)}"; then echo met; else echo "NOT met"; fi; }
echo "goal: compiles <= 1.1 x distinct keys across the fleet: $together / ${#KEYS[@]} =" \
     "$(awk "BEGIN {printf \"%.2f\", $together / ${#KEYS[@]}}") ($(verdict "$together <= 1.1 * ${#KEYS[@]}"))"
echo "goal: node B's first request served from Redis in <= 2 ms (median): $latency ms" \
     "($(verdict "$latency <= 2")); alone $lone ms"
echo "goal: redis-server SIGKILLed mid-run and restarted: $answered of $((16 * ${#KEYS[@]}))" \
     "answered, entries byte-equal to a fresh compile's (a $identical_a, b $identical_b)" \
     "($(verdict "$answered == 16 * ${#KEYS[@]}"))"
