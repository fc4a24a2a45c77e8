"""The GPU part (skips without a GPU, or without torch / CuPy / JAX for their tests): every op
against torch on random ragged shapes in every dtype, outputs poisoned first; a user kernel
on torch, CuPy and JAX (DLPack) arrays; stream order with torch's streams; launches from
threads; the driver's resources against the cubin's.

    PYTHONPATH=build/python python3 -m pytest python/tests/test_gpu.py -q
    PYTHONPATH=build/python python3 python/tests/run_gpu.py        # without pytest"""
import os
import threading

from _support import AXPY, needs_gpu, needs_torch, ptxjit, skip

RAGGED_2D = [(1, 1), (7, 33), (33, 7), (129, 1000), (4099, 1001), (1000, 4097)]


def _rand(torch, shape, dtype, seed=0):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=generator, device="cuda", dtype=torch.float32).to(dtype)


def _poison(torch, shape, dtype):
    if dtype.is_floating_point:
        return torch.full(shape, float("nan"), device="cuda", dtype=dtype)
    return torch.full(shape, -123456, device="cuda", dtype=dtype)


def test_softmax_matches_torch_in_every_dtype_and_shape():
    torch = needs_torch()
    tolerance = {torch.float32: 5e-6, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}
    shapes = RAGGED_2D + [(3, 5, 257), (2, 100003), (1, 65536)]
    for dtype, tol in tolerance.items():
        for shape in shapes:
            x = _rand(torch, shape, dtype, seed=shape[-1]) * 4
            out = _poison(torch, shape, dtype)
            ptxjit.ops.softmax(x, out=out)
            reference = torch.softmax(x.double(), dim=-1)
            error = float((out.double() - reference).abs().max())
            assert not out.isnan().any(), (dtype, shape)
            assert error <= tol, (dtype, shape, error)
        # in place, and on a strided (non-contiguous) input
        x = _rand(torch, (64, 300), dtype)
        expected = torch.softmax(x.double(), -1)
        ptxjit.ops.softmax(x, out=x)
        assert float((x.double() - expected).abs().max()) <= tol
        wide = _rand(torch, (64, 600), dtype)[:, ::2]
        got = ptxjit.ops.softmax(wide)
        assert float((got.double() - torch.softmax(wide.double(), -1)).abs().max()) <= tol


def test_reduce_matches_torch_sum_for_i32_and_f32():
    torch = needs_torch()
    for n in (1, 37, 4096, (1 << 20) + 3, (1 << 26) + 5):
        g = torch.Generator(device="cuda").manual_seed(n)
        x = torch.randint(-1 << 30, 1 << 30, (n,), generator=g, device="cuda", dtype=torch.int32)
        got = ptxjit.ops.reduce(x)
        expected = int(x.long().sum()) & 0xFFFFFFFF
        expected = expected - (1 << 32) if expected >= 1 << 31 else expected
        assert got.dtype == torch.int32 and int(got) == expected, n
        y = torch.rand((n,), generator=g, device="cuda", dtype=torch.float32)
        got = ptxjit.ops.reduce(y)
        expected = float(y.double().sum())
        assert abs(float(got) - expected) <= 1e-5 * max(1.0, expected) + 1e-6 * n, n
    matrix = torch.ones((33, 77), device="cuda", dtype=torch.int32)
    assert int(ptxjit.ops.sum(matrix.t())) == 33 * 77  # any shape and strides


def test_transpose_is_bit_exact_in_every_dtype():
    torch = needs_torch()
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32):
        for shape in RAGGED_2D + [(1024, 2048), (4104, 1000)]:
            x = _rand(torch, shape, torch.float32, seed=sum(shape))
            x = (x * 1000).to(dtype)
            out = _poison(torch, (shape[1], shape[0]), dtype)
            ptxjit.ops.transpose(x, out=out)
            assert torch.equal(out, x.t().contiguous()), (dtype, shape)


def _relative_error(torch, got, reference):
    return float((got.double() - reference).abs().max() / reference.abs().max().clamp_min(1e-30))


def test_matmul_matches_torch_on_ragged_shapes_and_batches():
    torch = needs_torch()
    shapes = [(1, 8, 8), (127, 132, 68), (513, 1000, 1031), (4093, 4097, 4095), (128, 8192, 256)]
    for dtype, tol in ((torch.bfloat16, 1e-2), (torch.float16, 4e-3), (torch.float32, 1e-4)):
        for m, n, k in shapes:
            if dtype == torch.float32 and m * n * k > 1 << 31:
                continue  # the SIMT kernel: minutes at 4096^3
            a, b = _rand(torch, (m, k), dtype, 1), _rand(torch, (k, n), dtype, 2)
            out = _poison(torch, (m, n), dtype)
            ptxjit.ops.matmul(a, b, out=out)
            reference = a.double() @ b.double()
            assert _relative_error(torch, out, reference) <= tol, (dtype, m, n, k)
    a = _rand(torch, (3, 64, 40), torch.bfloat16)
    b = _rand(torch, (40, 72), torch.bfloat16)
    got = ptxjit.ops.matmul(a, b)
    assert got.shape == (3, 64, 72)
    assert _relative_error(torch, got, a.double() @ b.double()) <= 1e-2
    b3 = _rand(torch, (3, 40, 72), torch.bfloat16, 5)
    assert _relative_error(torch, ptxjit.ops.matmul(a, b3), a.double() @ b3.double()) <= 1e-2
    wide = _rand(torch, (100, 200), torch.bfloat16)[:, :136]  # lda 200: rows where they lie
    b = _rand(torch, (136, 64), torch.bfloat16)
    assert _relative_error(torch, ptxjit.ops.matmul(wide, b), wide.double() @ b.double()) <= 1e-2


def test_matmul_epilogue_alpha_beta_bias_and_activation():
    torch = needs_torch()
    m, n, k = 200, 264, 136
    a, b = _rand(torch, (m, k), torch.bfloat16, 1), _rand(torch, (k, n), torch.bfloat16, 2)
    c0 = _rand(torch, (m, n), torch.bfloat16, 3)
    bias = _rand(torch, (n,), torch.float32, 4)
    out = c0.clone()
    ptxjit.ops.matmul(a, b, out=out, alpha=0.5, beta=2.0, bias=bias, act="relu")
    reference = torch.relu(0.5 * (a.double() @ b.double()) + 2.0 * c0.double() + bias.double())
    assert _relative_error(torch, out, reference) <= 2e-2
    try:
        ptxjit.ops.matmul(a.float(), b.float(), act="relu")
    except ptxjit.ParamError as error:
        assert "bf16" in str(error)
    else:
        raise AssertionError("an f32 epilogue accepted")


def test_a_user_kernel_on_torch_tensors_and_its_checked_arguments():
    torch = needs_torch()
    with ptxjit.Context(templates=[("axpy.cu", AXPY)]) as ctx:
        k = ctx.kernel("axpy", tpb=128)
        n = 100_003
        x = _rand(torch, (n,), torch.float32, 7)
        y = _rand(torch, (n,), torch.float32, 8)
        expected = 3.0 * x + y
        k((n + 127) // 128, 128, 3.0, x, y, n)
        torch.cuda.synchronize()
        assert torch.allclose(y, expected, rtol=1e-6, atol=1e-6)  # the kernel may fuse (FMA)
        try:
            k(1, 128, 3.0, x.cpu(), y, n)
        except ptxjit.ParamError as error:
            assert "CPU" in str(error)
        else:
            raise AssertionError("a CPU tensor launched")
        resources = k.resources
        driver = k.resources_for(device=True)
        for key in ("registers", "static_smem", "local_bytes", "max_threads"):
            assert resources[key] == driver[key], key


def test_a_user_kernel_on_cupy_arrays():
    needs_gpu()
    try:
        import cupy
    except ImportError:
        skip("CuPy is not installed")
    with ptxjit.Context(templates=[("axpy.cu", AXPY)]) as ctx:
        k = ctx.kernel("axpy")
        n = 5000
        x = cupy.arange(n, dtype=cupy.float32)
        y = cupy.ones(n, dtype=cupy.float32)
        k((n + 255) // 256, 256, 2.0, x, y, n, stream=cupy.cuda.get_current_stream())
        cupy.cuda.get_current_stream().synchronize()
        assert bool((y == 2 * cupy.arange(n, dtype=cupy.float32) + 1).all())
        s = ptxjit.ops.softmax(cupy.ones((4, 10), dtype=cupy.float32))
        assert abs(float(s.sum()) - 4.0) < 1e-5


def test_work_on_a_side_stream_sees_the_torch_op_before_it():
    torch = needs_torch()
    with ptxjit.Context(templates=[("axpy.cu", AXPY)]) as ctx:
        k = ctx.kernel("axpy")
        n = 1 << 24
        side = torch.cuda.Stream()
        x = torch.ones(n, device="cuda")
        torch.cuda.synchronize()
        with torch.cuda.stream(side):
            for _ in range(20):  # long enough that an unordered launch would run first
                x.mul_(1.0)
            x.fill_(5.0)
            y = torch.zeros(n, device="cuda")
            k(n // 256, 256, 2.0, x, y, n, stream=side)
            z = ptxjit.ops.softmax(y.view(4096, 4096))  # the current (side) stream
        side.synchronize()
        assert float(y.min()) == 10.0 and float(y.max()) == 10.0
        assert abs(float(z[0].sum()) - 1.0) < 1e-4


def test_jax_arrays_through_dlpack():
    torch = needs_torch()
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        skip("JAX is not installed")
    if not any(d.platform == "gpu" for d in jax.devices()):
        skip("JAX sees no GPU")

    class OnlyDLPack:  # leaves __cuda_array_interface__ out, so that DLPack is what is read
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, stream=None):
            return self.array.__dlpack__()

    with ptxjit.Context(templates=[("axpy.cu", AXPY)]) as ctx:
        k = ctx.kernel("axpy")
        n = 4096
        x = jnp.arange(n, dtype=jnp.float32).block_until_ready()
        y = torch.ones(n, device="cuda")
        k(n // 256, 256, 2.0, OnlyDLPack(x), y, n)
        torch.cuda.synchronize()
        assert torch.equal(y, 2 * torch.arange(n, device="cuda", dtype=torch.float32) + 1)


def test_launches_from_many_threads_on_torch_tensors():
    torch = needs_torch()
    with ptxjit.Context(templates=[("axpy.cu", AXPY)]) as ctx:
        k = ctx.kernel("axpy")
        ys = [torch.zeros(1024, device="cuda") for _ in range(8)]
        x = torch.ones(1024, device="cuda")
        torch.cuda.synchronize()

        def work(y):
            for _ in range(100):
                k(4, 256, 1.0, x, y, 1024)

        threads = [threading.Thread(target=work, args=(y,)) for y in ys]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ctx.synchronize()
        assert all(float(y.min()) == 100.0 for y in ys)
