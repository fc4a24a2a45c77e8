"""triton_transpose.py — the Triton peer for `ptxjit bench transpose`: a 64 x 64 tiled fp32
transpose written in Triton, timed on the same GPU in the same call, next to torch's copy.

Run where PyTorch and Triton are installed (the lent GPU machine):
    python3 bench/triton_transpose.py [N ...]        # default: 16384 32768
Prints GB/s (bytes read + written) for each size: the median of 20 timed launches, each
between CUDA events, and the mean of 20 back-to-back launches (host launch cost hidden).
"""
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def transpose_tiles(src, dst, rows, cols, TILE: tl.constexpr, COLUMN_ORDER: tl.constexpr):
    # COLUMN_ORDER: consecutive programs walk down a column of tiles instead of along a row.
    if COLUMN_ORDER:
        tile_r, tile_c = tl.program_id(0), tl.program_id(1)
    else:
        tile_c, tile_r = tl.program_id(0), tl.program_id(1)
    r = tile_r * TILE + tl.arange(0, TILE)
    c = tile_c * TILE + tl.arange(0, TILE)
    inside = (r[:, None] < rows) & (c[None, :] < cols)
    tile = tl.load(src + r[:, None] * cols + c[None, :], mask=inside)
    tl.store(dst + c[:, None] * rows + r[None, :], tl.trans(tile), mask=tl.trans(inside))


def launch(src, dst, column_order, warps):
    rows, cols = src.shape
    tiles_r, tiles_c = triton.cdiv(rows, 64), triton.cdiv(cols, 64)
    grid = (tiles_r, tiles_c) if column_order else (tiles_c, tiles_r)
    transpose_tiles[grid](src, dst, rows, cols, TILE=64, COLUMN_ORDER=column_order,
                          num_warps=warps)


def time_ms(fn, runs=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    stop = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for i in range(runs):
        start[i].record()
        fn()
        stop[i].record()
    torch.cuda.synchronize()
    median = sorted(a.elapsed_time(b) for a, b in zip(start, stop))[runs // 2]
    first, last = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    first.record()
    for _ in range(runs):
        fn()
    last.record()
    torch.cuda.synchronize()
    return median, first.elapsed_time(last) / runs


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [16384, 32768]
    print(f"device: {torch.cuda.get_device_name()}, triton {triton.__version__}, "
          f"torch {torch.__version__}")
    for n in sizes:
        src = torch.rand(n, n, device="cuda") * 2 - 1
        dst = torch.full((n, n), float("nan"), device="cuda")
        gb = 2 * src.numel() * 4 / 1e9
        copy_target = torch.empty_like(src)
        median, mean = time_ms(lambda: copy_target.copy_(src))
        print(f"{n}^2 torch copy: {gb / median * 1e3:.1f} GB/s (median), "
              f"{gb / mean * 1e3:.1f} GB/s (back-to-back)")
        for column_order in (False, True):
            for warps in (4, 8):
                dst.fill_(float("nan"))
                fn = lambda: launch(src, dst, column_order, warps)
                median, mean = time_ms(fn)
                ok = torch.equal(dst, src.t())
                order = "column" if column_order else "row"
                print(f"{n}^2 triton 64x64 {order} order, {warps} warps: "
                      f"{gb / median * 1e3:.1f} GB/s (median), "
                      f"{gb / mean * 1e3:.1f} GB/s (back-to-back), {'ok' if ok else 'WRONG'}")
        del src, dst, copy_target
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
