# fp8_bursts.py — the bench's regime, launch by launch: after 0.3 s idle, 23 launches of one
# side with events around each (with and without an L2 flush by a read before each), 8 bursts
# per side alternating which goes first; ptxjit's sets (libptxjit through ctypes) against
# cuBLASLt's heuristic-first algorithm (torch._scaled_mm). Prints each launch index's median
# time and the TFLOP/s of launches 3-22 (docs/PERFORMANCE.md, 2026-11-29 18:33).
# Usage: python3 bench/experiments/fp8_bursts.py M N K ["PARAMS" ...] (GPU, torch; build/libptxjit.so)
import ctypes, sys, time, statistics, torch
m, n, k = (int(x) for x in sys.argv[1:4])
sets = sys.argv[4:] or ["variant=wgmma_fp8 out=bf16"]
lib = ctypes.CDLL("build/libptxjit.so"); lib.ptxjit_last_error.restype = ctypes.c_char_p
ctx = ctypes.c_void_p(); assert lib.ptxjit_open(ctypes.byref(ctx), None) == 0
a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
bt = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
one = torch.ones((), device="cuda"); s = torch.cuda.current_stream()
flush = torch.empty(2 * 60 * 2**20 // 4, device="cuda", dtype=torch.float32)
def mk(p):
    P = p.encode()
    def f():
        st = lib.ptxjit_matmul(ctx, P, ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(bt.data_ptr()),
            ctypes.c_uint64(c.data_ptr()), ctypes.c_size_t(m), ctypes.c_size_t(n), ctypes.c_size_t(k),
            ctypes.c_void_p(s.cuda_stream))
        if st: sys.exit("ptxjit: " + lib.ptxjit_last_error().decode())
    return f
def peer(): torch._scaled_mm(a, bt.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=True, out=c)
fns = [(p, mk(p)) for p in sets] + [("cuBLASLt", peer)]
for _, f in fns: f()
torch.cuda.synchronize()
N = 23
def burst(f, flushed):
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2 * N)]
    for i in range(N):
        if flushed: flush.sum()
        ev[2 * i].record(); f(); ev[2 * i + 1].record()
    torch.cuda.synchronize()
    return [ev[2 * i].elapsed_time(ev[2 * i + 1]) * 1000 for i in range(N)]
for flushed in (False, True):
    res = {nm: [] for nm, _ in fns}
    for r in range(8):
        order = fns if r % 2 == 0 else fns[::-1]
        for nm, f in order:
            time.sleep(0.3); res[nm].append(burst(f, flushed))
    print(f"== {m}x{n}x{k} flush={'read' if flushed else 'none'}: median us per launch index (8 bursts); TFLOP/s of the median of launches 3..22")
    peer_med = statistics.median(statistics.median(b[3:]) for b in res["cuBLASLt"])
    for nm, _ in fns:
        per = [statistics.median(b[i] for b in res[nm]) for i in range(N)]
        med = statistics.median(statistics.median(b[3:]) for b in res[nm])
        print(f"{nm:40s} {2*m*n*k/med/1e6:7.1f} TFLOP/s  x{peer_med/med:.3f}  |", " ".join(f"{x:.0f}" for x in per))
