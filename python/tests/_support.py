"""What the tests share: where the build is, the driver they run against, a cache directory of
their own, small templates, and skipping (pytest's when it runs them, run.py's otherwise).

Imported before ptxjit by every test module: where no real CUDA driver can be loaded, the
tests run against tests/fake_cuda (one sm_90 device that runs nothing, with host memory), so
that launches, their argument checks and tuning with Python callbacks are exercised on a
machine without a GPU. On a GPU machine the real driver is used and the GPU tests run."""
import ctypes
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("PTXJIT_TEST_BUILD", os.path.join(REPO, "build"))
FAKE_CUDA = os.path.join(BUILD, "fake_cuda", "libcuda.so.1")

if os.path.join(BUILD, "python") not in sys.path:
    sys.path.insert(0, os.path.join(BUILD, "python"))

try:
    import pytest

    def skip(reason):
        pytest.skip(reason)
except ImportError:  # run.py
    class SkipTest(Exception):
        pass

    def skip(reason):
        raise SkipTest(reason)


def _real_gpu():
    """Whether the real driver loads and sees a device (asked before ptxjit loads one)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 \
            and count.value > 0
    except OSError:
        return False


REAL_GPU = "PTXJIT_CUDA_LIBRARY" not in os.environ and _real_gpu()
FAKE = not REAL_GPU and os.path.exists(FAKE_CUDA) and "PTXJIT_CUDA_LIBRARY" not in os.environ
if FAKE:
    os.environ["PTXJIT_CUDA_LIBRARY"] = FAKE_CUDA
    os.environ["PJ_FAKE_DEVICES"] = "1"
# One cache directory for the run, so that the tests neither read nor fill the user's.
if "PTXJIT_TEST_KEEP_CACHE" not in os.environ:
    os.environ["PTXJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptxjit-pytest-")

import ptxjit  # noqa: E402  (after the environment above)


def fake_count(what):
    """What reached the fake device: 0 loads, 1 launches, 2 allocations, 3 refusals."""
    return ctypes.CDLL(FAKE_CUDA).fake_cuda_count(0, what)


def needs_fake():
    if not FAKE:
        skip("needs tests/fake_cuda (build/fake_cuda/libcuda.so.1) and no real GPU")


def needs_launch():
    """Launching works: the fake driver, or a real GPU."""
    if not (FAKE or REAL_GPU):
        skip("no CUDA driver: neither a GPU nor build/fake_cuda")


def needs_gpu():
    if not REAL_GPU:
        skip("no GPU here (these tests run on a machine with an NVIDIA GPU and driver)")


def needs_torch():
    needs_gpu()
    try:
        import torch
    except ImportError:
        skip("torch is not installed")
    if not torch.cuda.is_available():
        skip("torch sees no GPU")
    return torch


AXPY = """//@ptxjit family axpy
//@ptxjit doc y = a*x + y over n elements, one per thread.
//@ptxjit entry axpy_kernel
//@ptxjit param tpb int(32..1024) pow2 default=256 doc="threads per block"
//@ptxjit tune tpb 64,128,256
extern "C" __global__ void __launch_bounds__(TPB)
axpy_kernel(float a, const float *x, float *y, long long n)
{
    long long i = blockIdx.x * (long long)TPB + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
"""

# Two entries and every scalar kind a launch converts: a pointer, 32- and 64-bit integers,
# float and double, and an 8-byte struct passed by value.
SCALARS = """//@ptxjit family scalars
//@ptxjit entry scalars_kernel
//@ptxjit entry second_kernel
struct pair { int a, b; };
extern "C" __global__ void scalars_kernel(int *out, int i, long long l, float f, double d,
                                          pair p, unsigned char c)
{
    out[0] = i; out[1] = (int)l; out[2] = (int)f; out[3] = (int)d; out[4] = p.a + p.b;
    out[5] = c;
}
extern "C" __global__ void second_kernel(int *out) { out[0] = 7; }
"""

BROKEN = """//@ptxjit family broken
//@ptxjit entry broken_kernel
extern "C" __global__ void broken_kernel(float *x)
{
    x[0] = undeclared_name;
}
"""


def context(**options):
    return ptxjit.Context(**options)
