# fp8_power.py — fp8 products run back to back for 2.5 s a phase, ptxjit's (libptxjit through
# ctypes, the op's defaults or the params given) and cuBLASLt's (torch._scaled_mm, fast
# accumulation: the algorithm cuBLASLt's heuristic ranks first), in alternating phases, with the
# SM clock and board power sampled by nvidia-smi every 20 ms: whether one side draws more power
# for its work, or loses clock, when the card sits at its power cap (docs/PERFORMANCE.md,
# 2026-11-29 18:33). Not a pass/fail test; no L2 flush (the run is the sustained case).
# Usage: python3 bench/experiments/fp8_power.py [M N K ["PARAMS"]] (GPU, torch; build/libptxjit.so)
import ctypes, subprocess, sys, threading, time, statistics, torch
m, n, k = (int(x) for x in (sys.argv[1:4] if len(sys.argv) > 3 else (4096, 14336, 4096)))
params = sys.argv[4] if len(sys.argv) > 4 else "variant=wgmma_fp8 out=bf16"
lib = ctypes.CDLL("build/libptxjit.so")
ctx = ctypes.c_void_p()
assert lib.ptxjit_open(ctypes.byref(ctx), None) == 0
torch.manual_seed(1)
a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
bt = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)   # B as n x k (b_layout=nk)
c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
one = torch.ones((), device="cuda")
s = torch.cuda.current_stream()
P = params.encode()
def ours():
    st = lib.ptxjit_matmul(ctx, P, ctypes.c_uint64(a.data_ptr()), ctypes.c_uint64(bt.data_ptr()),
                           ctypes.c_uint64(c.data_ptr()), ctypes.c_size_t(m), ctypes.c_size_t(n),
                           ctypes.c_size_t(k), ctypes.c_void_p(s.cuda_stream))
    if st: lib.ptxjit_last_error.restype = ctypes.c_char_p; sys.exit("ptxjit: %s" % lib.ptxjit_last_error().decode())
def peer():
    torch._scaled_mm(a, bt.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=True, out=c)
ours(); torch.cuda.synchronize()
ref = (a.float() @ bt.float().t())
print("ours err", ((c.float() - ref).abs().max() / ref.abs().max()).item())
samples = []
proc = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                         "--format=csv,noheader,nounits", "-lms", "20"], stdout=subprocess.PIPE, text=True)
def reader():
    for line in proc.stdout:
        try:
            f = [float(x) for x in line.split(",")]
            samples.append((time.monotonic(), *f))
        except ValueError:
            pass
threading.Thread(target=reader, daemon=True).start()
time.sleep(1.0)
def phase(name, fn, secs=2.5):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.monotonic(); e0.record(); cnt = 0
    while time.monotonic() - t0 < secs:
        for _ in range(50): fn()
        cnt += 50
        torch.cuda.synchronize()
    e1.record(); torch.cuda.synchronize(); t1 = time.monotonic()
    ms = e0.elapsed_time(e1) / cnt
    win = [x for x in samples if t0 + 0.5 <= x[0] <= t1]
    clk = statistics.mean(x[1] for x in win); pw = statistics.mean(x[2] for x in win)
    tf = 2 * m * n * k / ms / 1e9
    print(f"{name:5s} {ms*1000:8.1f} us {tf:7.1f} TFLOP/s  clock {clk:6.0f} MHz  power {pw:5.0f} W  "
          f"temp {win[-1][3]:.0f}  TFLOP/s per GHz {tf/clk*1000:6.1f}  J/PFLOP {pw/tf*1000:6.0f}  ({len(win)} samples)", flush=True)
    time.sleep(0.5)
    return tf
r = {"ours": [], "peer": []}
for i in range(3):
    order = [("ours", ours), ("peer", peer)] if i % 2 == 0 else [("peer", peer), ("ours", ours)]
    for nm, fn in order:
        r[nm].append(phase(nm, fn))
print("ratio per round", [round(o / p, 3) for o, p in zip(r["ours"], r["peer"])])
proc.terminate()
