#!/usr/bin/env python3
"""ptxjit from Python against its peers, in one process (issue #31; docs/PYTHON.md).

1. Per-launch host cost: 10,000 back-to-back launches of a one-block kernel (32 threads, one
   pointer, x[i] += 1), best of 7 rounds that take every peer in turn (the order reversed each
   round; the median printed too), for: a ptxjit kernel on a torch tensor (and on an int
   address); torch's own x.add_(1); CuPy's RawKernel; Triton; cuLaunchKernel through ctypes;
   and the floor, bench/floor_launch.c (a stable-ABI extension whose one METH_FASTCALL
   function calls cuLaunchKernel), with a precomputed address and with x.data_ptr() per call.
   Each loop starts on an idle GPU and is timed on the host until its last launch returns.
   Then ctx.kernel(...) answered from memory.
2. The ops against torch: softmax bf16 65536 x 4096 (GB/s), matmul bf16 8192^3 (TFLOP/s),
   transpose f32 16384^2 against x.t().contiguous() (GB/s), sum of 2^30 int32 against
   torch.sum (GB/s); alternating rounds (A B, then B A, ...), each round timed with CUDA events
   over several calls, median and spread (max - min over median) of the rounds.
Every peer is optional: a missing one is a note in the table.

    PYTHONPATH=build/python python3 bench/python_launch.py [--launches 10000] [--launch-rounds 7]
        [--rounds 6] [--no-ops] [--no-launch] [--json FILE]
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "build", "python"))

import ptxjit  # noqa: E402

BUMP = """//@ptxjit family bump
//@ptxjit doc x[i] += 1 for one block: the launch bench's kernel.
//@ptxjit entry bump_kernel
extern "C" __global__ void bump_kernel(float *x) { x[threadIdx.x] += 1.0f; }
"""
CUDA_SOURCE = 'extern "C" __global__ void bump_kernel(float *x) { x[threadIdx.x] += 1.0f; }'

rows = []   # (section, what, value, unit, note)


def note(section, what, value, unit, extra=""):
    rows.append((section, what, value, unit, extra))


def loop_us(launch, sync, launches, repeats=3):
    """Best of repeats loops of launches calls, in microseconds per call (host time)."""
    launch()
    sync()
    best = float("inf")
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        for _ in range(launches):
            launch()
        elapsed = time.perf_counter() - start
        sync()
        best = min(best, elapsed / launches * 1e6)
    return best


def launch_peers(torch, ctx, launches, launch_rounds):
    x = torch.zeros(32, device="cuda")
    sync = torch.cuda.synchronize
    k = ctx.kernel("bump")
    address = x.data_ptr()
    peers = {}
    peers["ptxjit k(1, 32, x) torch tensor"] = lambda: k(1, 32, x)
    peers["ptxjit k(1, 32, ptr) int address"] = lambda: k(1, 32, address)
    peers["torch x.add_(1)"] = lambda: x.add_(1)
    function = k.function()
    try:
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "build", "python"))
        import _floor_launch
        launch = _floor_launch.launch
        peers["floor: C ext cuLaunchKernel(ptr)"] = lambda: launch(function, address, 0)
        peers["floor: C ext + x.data_ptr()"] = lambda: launch(function, x.data_ptr(), 0)
    except ImportError as error:
        note("launch", "floor extension", None, "", f"skipped: {error} (make python builds it)")
    cuda = ctypes.CDLL("libcuda.so.1")
    cu_launch = cuda.cuLaunchKernel
    cu_launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    pointer = ctypes.c_uint64(address)
    args = (ctypes.c_void_p * 1)(ctypes.addressof(pointer))
    peers["ctypes cuLaunchKernel"] = lambda: cu_launch(function, 1, 1, 1, 32, 1, 1, 0, None,
                                                      args, None)
    try:
        import cupy
        raw = cupy.RawKernel(CUDA_SOURCE, "bump_kernel")
        xc = cupy.zeros(32, dtype=cupy.float32)
        raw((1,), (32,), (xc,))
        peers["CuPy RawKernel"] = lambda: raw((1,), (32,), (xc,))
    except Exception as error:  # noqa: BLE001
        note("launch", "CuPy RawKernel", None, "", f"skipped: {error}")
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def bump(x_ptr, BLOCK: tl.constexpr):
            offsets = tl.arange(0, BLOCK)
            tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1.0)

        bump[(1,)](x, BLOCK=32)
        peers["Triton"] = lambda: bump[(1,)](x, BLOCK=32)
    except Exception as error:  # noqa: BLE001
        note("launch", "Triton", None, "", f"skipped: {error}")
    # Rounds over every peer, in turn, the order reversed each round: a drift of the host's or
    # the GPU's speed falls on every peer alike rather than on whichever ran last.
    names = list(peers)
    samples = {name: [] for name in names}
    for r in range(launch_rounds):
        for name in names if r % 2 == 0 else reversed(names):
            samples[name].append(loop_us(peers[name], sync, launches, repeats=1))
    results = {name: min(samples[name]) for name in names}
    floor = results.get("floor: C ext cuLaunchKernel(ptr)")
    for name, us in results.items():
        ratio = f"{us / floor:.2f}x floor, " if floor else ""
        note("launch", name, us, "us/launch",
             f"{ratio}median {statistics.median(samples[name]):.3f}")
    hits = 100000
    ctx.kernel("softmax", dtype="bf16", tpb=256)
    for label, call in (("ctx.kernel('softmax', dtype='bf16', tpb=256)",
                         lambda: ctx.kernel("softmax", dtype="bf16", tpb=256)),
                        ("ctx.kernel('softmax', 'dtype=bf16 tpb=256')",
                         lambda: ctx.kernel("softmax", "dtype=bf16 tpb=256"))):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(hits):
                call()
            best = min(best, (time.perf_counter() - start) / hits * 1e6)
        note("request", label, best, "us (memory hit)")


def timed_ms(torch, call, calls):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def rounds_of(torch, peer, ours, calls, rounds):
    """Alternating rounds, peer first in even rounds and second in odd ones."""
    peer(), ours()
    torch.cuda.synchronize()
    times = {"peer": [], "ours": []}
    for r in range(rounds):
        order = (("peer", peer), ("ours", ours)) if r % 2 == 0 else (("ours", ours), ("peer", peer))
        for name, call in order:
            times[name].append(timed_ms(torch, call, calls))
    return times


def summary(times, work):
    """(median rate, spread) of work / time for each round's time (ms)."""
    rates = [work / (t * 1e-3) for t in times]
    median = statistics.median(rates)
    return median, (max(rates) - min(rates)) / median


def op_peers(torch, rounds):
    ops = ptxjit.ops
    cases = []
    x = torch.randn(65536, 4096, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(x)
    cases.append(("softmax bf16 65536x4096", "GB/s", 2 * x.numel() * 2 / 1e9, 10,
                  lambda: torch.softmax(x, dim=-1), lambda: ops.softmax(x, out=out)))
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    cases.append(("matmul bf16 8192^3", "TFLOP/s", 2 * n ** 3 / 1e12, 5,
                  lambda: torch.matmul(a, b, out=c), lambda: ops.matmul(a, b, out=c)))
    t = torch.randn(16384, 16384, device="cuda", dtype=torch.float32)
    tout = torch.empty_like(t)
    cases.append(("transpose f32 16384^2", "GB/s", 2 * t.numel() * 4 / 1e9, 10,
                  lambda: t.t().contiguous(), lambda: ops.transpose(t, out=tout)))
    s = torch.randint(-100, 100, (1 << 30,), device="cuda", dtype=torch.int32)
    sout = torch.empty((), device="cuda", dtype=torch.int32)
    cases.append(("sum int32 2^30", "GB/s", s.numel() * 4 / 1e9, 10,
                  lambda: torch.sum(s), lambda: ops.reduce(s, out=sout)))
    for name, unit, work, calls, peer, ours in cases:
        times = rounds_of(torch, peer, ours, calls, rounds)
        peer_rate, peer_spread = summary(times["peer"], work)
        our_rate, our_spread = summary(times["ours"], work)
        note("ops", f"{name}: torch", peer_rate, unit, f"spread {peer_spread:.1%}")
        note("ops", f"{name}: ptxjit", our_rate, unit,
             f"spread {our_spread:.1%}, {our_rate / peer_rate:.3f}x torch")


def print_table(device):
    print(f"ptxjit {ptxjit.version} from Python on {device}")
    width = max(len(r[1]) for r in rows) + 2
    section = None
    for part, what, value, unit, extra in rows:
        if part != section:
            print(f"\n[{part}]")
            section = part
        shown = f"{value:10.3f} {unit}" if value is not None else " " * 10 + " -"
        print(f"  {what:<{width}}{shown}  {extra}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--launches", type=int, default=10000)
    parser.add_argument("--launch-rounds", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--no-ops", action="store_true")
    parser.add_argument("--no-launch", action="store_true")
    parser.add_argument("--json")
    options = parser.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("bench/python_launch.py needs torch (the peers run on torch tensors)")
    if not torch.cuda.is_available():
        sys.exit("bench/python_launch.py needs a GPU")
    torch.zeros(1, device="cuda")  # torch's primary context first: ptxjit works in it
    device = torch.cuda.get_device_name()
    with ptxjit.Context(templates=[("bump.cu", BUMP)]) as ctx:
        if not options.no_launch:
            launch_peers(torch, ctx, options.launches, options.launch_rounds)
    if not options.no_ops:
        op_peers(torch, options.rounds)
    print_table(device)
    if options.json:
        with open(options.json, "w") as file:
            json.dump({"device": device, "rows": rows}, file, indent=1)


if __name__ == "__main__":
    main()
