#!/bin/sh
# demo.sh — the main job (`make demo`): specialize reduce kernels, compile them to PTX and
# cubin, cache them, show what was made; with a GPU also run, check and benchmark them.
set -e
cli=${1:-build/ptxjit}
build=$(dirname "$cli")
export PTXJIT_CACHE_DIR=${PTXJIT_CACHE_DIR:-$build/demo-cache}

step() { printf '\n== %s\n' "$*"; }

step "families, and the reduce family's schema"
"$cli" list
"$cli" info reduce

step "the five steps of the write-up, specialized and compiled (or taken from the cache)"
for v in two_pass warp_shuffle one_pass batched vectorized; do
    "$cli" ptx reduce variant=$v >/dev/null
done

step "PTX of variant=vectorized tpb=256 batch=8: entry and 128-bit loads"
"$cli" ptx reduce variant=vectorized tpb=256 batch=8 | grep -E '^\.(version|target)|\.entry|ld\.global\.nc\.v4' | head -8

step "what was made: key, sizes, cache, resources"
"$cli" inspect reduce variant=vectorized tpb=256 batch=8

step "a bad request fails before compiling (exit status 2)"
if "$cli" ptx reduce tpb=100; then echo "unexpected success"; exit 1; else echo "(exit $?)"; fi

step "the same request again: a disk cache hit"
"$cli" ptx reduce variant=vectorized tpb=256 batch=8 >/dev/null
"$cli" cache stats

step "the embedding example (linked through pkg-config)"
"$build/embed"

if "$cli" run reduce n=1000 >/dev/null 2>&1; then
    step "GPU: every variant checked against the CPU reference"
    for v in two_pass warp_shuffle one_pass batched vectorized; do
        for d in i32 f32; do
            "$cli" run reduce variant=$v dtype=$d n=2^28+37 runs=5
        done
    done
    step "GPU: bandwidth table, int32, n = 2^30"
    "$cli" bench reduce
    step "GPU: JIT costs"
    "$cli" bench jit
else
    step "no GPU here: kernels were specialized, compiled and cached, not run"
    "$cli" run reduce n=1000 || true
fi
