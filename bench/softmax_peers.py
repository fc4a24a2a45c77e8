#!/usr/bin/env python3
"""The peers of `ptxjit bench softmax`, on the same shapes: torch.softmax(dim=-1) and a Triton
row-softmax kernel (written here: a whole row per program in one block of next_power_of_2(N)
elements, loaded once, max, exp, sum, divide, stored), fp32 and bf16, N in {1024, 4096, 16384},
M = 2^28 / N (1 GiB of fp32 input). Triton runs with num_warps 4, 8 and 16, one program per row
and persistent programs looping over rows; the best is its figure. Each is timed with CUDA
events (median of --runs after warm-up) and its max error against float64 on sampled rows is
printed. GB/s counts bytes read + written once each; the device-to-device copy (2 GiB) is
measured in the same run. A table, then one JSON line.

    python3 bench/softmax_peers.py [--runs 30] [--quick]
"""
import argparse
import json
import statistics

import torch
import triton
import triton.language as tl


@triton.jit
def row_softmax(out_ptr, in_ptr, rows, cols, in_stride, out_stride, BLOCK: tl.constexpr):
    # Programs take rows first, first + programs, ...: one row each when the grid has a
    # program per row, several when it is persistent.
    first = tl.program_id(0)
    step = tl.num_programs(0)
    columns = tl.arange(0, BLOCK)
    inside = columns < cols
    for row in tl.range(first, rows, step):
        base = row.to(tl.int64)
        x = tl.load(in_ptr + base * in_stride + columns, mask=inside, other=-float("inf"))
        x = x.to(tl.float32)
        shifted = x - tl.max(x, axis=0)
        numerator = tl.exp(shifted)
        y = numerator / tl.sum(numerator, axis=0)
        tl.store(out_ptr + base * out_stride + columns, y.to(out_ptr.dtype.element_ty),
                 mask=inside)


def triton_softmax(x, out, num_warps, programs):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    row_softmax[(programs,)](out, x, rows, cols, x.stride(0), out.stride(0), BLOCK=block,
                             num_warps=num_warps)
    return out


def persistent_programs(x, num_warps):
    """As many programs as fit on the GPU at once (by registers and warps), at most one a row."""
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    kernel = row_softmax.warmup(torch.empty_like(x), x, rows, cols, x.stride(0), x.stride(0),
                                BLOCK=block, num_warps=num_warps, grid=(1,))
    kernel._init_handles()
    props = torch.cuda.get_device_properties(x.device)
    threads = 32 * num_warps
    by_registers = props.regs_per_multiprocessor // max(1, kernel.n_regs * threads)
    by_threads = props.max_threads_per_multi_processor // threads
    shared = kernel.metadata.shared
    by_shared = props.shared_memory_per_multiprocessor // shared if shared else by_threads
    per_sm = max(1, min(by_registers, by_threads, by_shared))
    return min(rows, per_sm * props.multi_processor_count)


def time_ms(fn, runs, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    stop = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for i in range(runs):
        start[i].record()
        fn()
        stop[i].record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in zip(start, stop))


def max_error(x, y, samples=64):
    """Max |y - softmax(x)| over sampled rows (the first, the last, random ones), in float64."""
    rows = x.shape[0]
    pick = torch.cat([torch.tensor([0, rows - 1]), torch.randint(0, rows, (samples - 2,))])
    pick = pick.to(x.device)
    want = torch.softmax(x[pick].double(), dim=-1)
    return (y[pick].double() - want).abs().max().item()


def copy_gbps(runs):
    src = torch.empty(1 << 29, dtype=torch.float32, device="cuda").fill_(1.0)  # 2 GiB
    dst = torch.empty_like(src)
    ms = time_ms(lambda: dst.copy_(src), runs)
    del src, dst
    return 2 * (1 << 31) / (ms * 1e6)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="Triton: num_warps by N only")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.cuda.get_device_name()
    copy = copy_gbps(args.runs)
    print("softmax peers, %s, torch %s, triton %s, median of %d" %
          (device, torch.__version__, triton.__version__, args.runs))
    print("device-to-device copy, 2 GiB, read + write: %.1f GB/s" % copy)
    print("%-5s %6s %7s  %-24s %8s %7s %9s" % ("dtype", "N", "M", "peer", "GB/s", "% copy",
                                               "max err"))
    results = []
    for name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        size = torch.finfo(dtype).bits // 8
        for cols in (1024, 4096, 16384):
            rows = (1 << 28) // cols
            # [-8, 8): the range `ptxjit bench softmax` draws from.
            x = (torch.rand(rows, cols, device="cuda") * 16 - 8).to(dtype)
            out = torch.empty_like(x)
            moved = 2 * rows * cols * size
            entry = {"dtype": name, "n": cols, "m": rows}

            ms = time_ms(lambda: torch.softmax(x, dim=-1), args.runs)
            y = torch.softmax(x, dim=-1)
            gbps = moved / (ms * 1e6)
            err = max_error(x, y)
            print("%-5s %6d %7d  %-24s %8.1f %6.1f%% %9.2e" %
                  (name, cols, rows, "torch.softmax", gbps, 100 * gbps / copy, err))
            entry["torch_gbps"] = round(gbps, 1)
            entry["torch_max_abs_error"] = err
            del y

            best = None
            by_n = 4 if cols <= 1024 else 8 if cols <= 2048 else 16
            for warps in ([by_n] if args.quick else [4, 8, 16]):
                for persistent in (False, True):
                    programs = persistent_programs(x, warps) if persistent else rows
                    out.fill_(float("nan"))
                    ms = time_ms(lambda: triton_softmax(x, out, warps, programs), args.runs)
                    gbps = moved / (ms * 1e6)
                    err = max_error(x, out)
                    label = "triton w=%d %s" % (warps, "persistent" if persistent else "row/prog")
                    print("%-5s %6d %7d  %-24s %8.1f %6.1f%% %9.2e" %
                          (name, cols, rows, label, gbps, 100 * gbps / copy, err))
                    if best is None or gbps > best[0]:
                        best = (gbps, warps, persistent, err)
            entry["triton_gbps"] = round(best[0], 1)
            entry["triton_config"] = "num_warps=%d %s" % (
                best[1], "persistent" if best[2] else "one program per row")
            entry["triton_max_abs_error"] = best[3]
            results.append(entry)
            del x, out
            torch.cuda.empty_cache()
    print("\nbest: torch and Triton GB/s per shape (ptxjit: build/ptxjit bench softmax)")
    for e in results:
        print("%-5s %6d  torch %8.1f  triton %8.1f (%s)" %
              (e["dtype"], e["n"], e["torch_gbps"], e["triton_gbps"], e["triton_config"]))
    print("json: " + json.dumps({"family": "softmax", "device": device, "copy_gbps": round(copy, 1),
                                 "peers": results}))


if __name__ == "__main__":
    main()
