#!/bin/sh
# demo.sh — the main job (`make demo`): specialize reduce, transpose, matmul and softmax kernels,
# compile them to PTX and cubin, cache them, show what was made; with a GPU also run, check
# and benchmark them.
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

step "transpose: defaults follow the variant; the four steps of the write-up, compiled"
"$cli" info transpose | sed -n '/^parameters/,/^constraints/p'
for p in "variant=smem" "variant=tma" "variant=tma_swizzle" "variant=tma_batched"; do
    "$cli" ptx transpose $p >/dev/null
done

step "PTX of the default transpose: the TMA copies, the mbarrier wait, the proxy fence"
"$cli" ptx transpose | grep -E '\.entry|cp\.async\.bulk\.tensor|mbarrier\.try_wait|fence\.proxy' | head -6

step "a swizzle that does not fit the tile fails before compiling (exit status 2)"
if "$cli" ptx transpose variant=tma_swizzle block=16; then echo "unexpected success"; exit 1; else echo "(exit $?)"; fi

step "matmul: the write-up's seven steps and Hopper wgmma, compiled; what each is about"
for v in naive coalescing tiled tiled_register block_tiled block_tiled_vectorized tensor_core wgmma; do
    "$cli" ptx matmul variant=$v >/dev/null
done
"$cli" ptx matmul variant=tensor_core | grep -m2 -E 'mma\.sync|ldmatrix'
"$cli" ptx matmul variant=wgmma | grep -m3 -E 'wgmma\.mma_async|cp\.async\.bulk\.tensor|setmaxnreg'

step "softmax: the row in registers (online) or two passes (block), through both backends"
for v in online block; do
    for b in nvrtc llvm; do
        "$cli" ptx softmax variant=$v dtype=bf16 backend=$b >/dev/null
    done
done
"$cli" ptx softmax | awk '/ld\.global\.nc\.v4/ && !l++ || /shfl\.sync\.bfly/ && !s++ || /ex2\.approx/ && !e++'

step "the embedding example (linked through pkg-config)"
"$build/embed"

step "a tool with kernels of its own: a template from a string, one from a directory"
"$build/tool" "$(dirname "$0")/tool_templates"

if "$cli" run reduce n=1000 >/dev/null 2>&1; then
    step "GPU: every variant checked against the CPU reference"
    for v in two_pass warp_shuffle one_pass batched vectorized; do
        for d in i32 f32; do
            "$cli" run reduce variant=$v dtype=$d n=2^28+37 runs=5
        done
    done
    step "GPU: bandwidth table, int32, n = 2^30"
    "$cli" bench reduce
    step "GPU: every transpose variant and dtype, bit-exact, on ragged shapes"
    for p in variant=smem variant=tma variant=tma_swizzle "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar inplace=0" variant=tma_batched; do
        for d in f32 bf16 f64; do
            "$cli" run transpose $p dtype=$d h=4104 w=1000 runs=3
        done
    done
    "$cli" run transpose variant=smem dtype=f16 h=4099 w=1001 runs=3
    step "GPU: transpose table, fp32 16384^2 and 32768^2, cuBLAS and copy in the same run"
    "$cli" bench transpose
    step "GPU: every matmul variant against float64 on a ragged shape"
    for v in naive coalescing tiled tiled_register block_tiled block_tiled_vectorized; do
        "$cli" run matmul variant=$v m=127 n=129 k=65 runs=3
    done
    "$cli" run matmul variant=tensor_core m=127 n=132 k=68 runs=3
    "$cli" run matmul variant=wgmma m=127 n=136 k=72 runs=3
    step "GPU: matmul table, 4096^3 fp32 and 8192^3 bf16, cuBLAS in the same run"
    "$cli" bench matmul
    step "GPU: softmax, both variants and dtypes, against float64 on ragged rows"
    for v in online block; do
        for d in f32 bf16 f16; do
            "$cli" run softmax variant=$v dtype=$d rows=1001 cols=4097 runs=3
        done
    done
    step "GPU: softmax table, fp32 and bf16 at 1 GiB, both backends, the copy in the same run"
    "$cli" bench softmax
    step "GPU: JIT costs"
    "$cli" bench jit
else
    step "no GPU here: kernels were specialized, compiled and cached, not run"
    "$cli" run reduce n=1000 || true
fi
