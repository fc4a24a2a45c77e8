"""The ops' handling of arrays without a GPU, on tests/fake_cuda (which runs no kernel): the
requests they make for each dtype and shape reach the driver, outputs are made and checked,
and a bad call is a ParamError naming what to fix. test_gpu.py checks their results."""
from _support import FAKE, fake_count, needs_fake, ptxjit


def launched(call):
    before = fake_count(1)
    result = call()
    assert fake_count(1) > before
    return result


def test_each_op_runs_on_device_arrays_in_each_dtype():
    needs_fake()
    ops = ptxjit.ops
    with ptxjit.Context() as ctx:
        for dtype in ("f32", "f16", "bf16"):
            x = ctx.empty((37, 129), dtype)
            out = launched(lambda: ops.softmax(x, context=ctx))
            assert out.shape == (37, 129) and out.dtype == dtype
            t = launched(lambda: ops.transpose(x, context=ctx))
            assert t.shape == (129, 37)
            a, b = ctx.empty((33, 40), dtype), ctx.empty((40, 24), dtype)
            c = launched(lambda: ops.matmul(a, b, context=ctx))
            assert c.shape == (33, 24)
        batch = launched(lambda: ops.matmul(ctx.empty((3, 16, 40), "bf16"),
                                            ctx.empty((40, 24), "bf16"), context=ctx))
        assert batch.shape == (3, 16, 24)
        for dtype in ("i32", "f32"):
            s = launched(lambda: ops.reduce(ctx.empty((1000,), dtype), context=ctx))
            assert s.shape == () and s.dtype == dtype
        launched(lambda: ops.softmax(ctx.empty((4, 100003), "f32"), context=ctx))  # block
        launched(lambda: ops.transpose(ctx.empty((4099, 1001), "i32"), context=ctx))
        bias = ctx.empty((24,), "f32")
        launched(lambda: ops.matmul(ctx.empty((33, 40), "bf16"), ctx.empty((40, 24), "bf16"),
                                    out=ctx.empty((33, 24), "bf16"), alpha=0.5, beta=1.0,
                                    bias=bias, act="gelu", context=ctx))


def refused(call, *words):
    try:
        call()
    except ptxjit.ParamError as error:
        assert all(w in str(error) for w in words), str(error)
    else:
        raise AssertionError("accepted")


def test_bad_op_calls_are_param_errors():
    if not FAKE:
        needs_fake()
    ops = ptxjit.ops
    with ptxjit.Context() as ctx:
        x = ctx.empty((8, 16), "f32")
        refused(lambda: ops.softmax(x, out=ctx.empty((8, 15), "f32"), context=ctx), "shape")
        refused(lambda: ops.softmax(x, dim=0, context=ctx), "last dimension")
        refused(lambda: ops.softmax(ctx.empty((8,), "i32"), context=ctx), "i32")
        refused(lambda: ops.matmul(x, ctx.empty((15, 4), "f32"), context=ctx), "inner")
        refused(lambda: ops.matmul(x, ctx.empty((16, 4), "bf16"), context=ctx), "one dtype")
        refused(lambda: ops.matmul(x, ctx.empty((16, 8), "f32"), act="relu", context=ctx),
                "bf16")
        refused(lambda: ops.matmul(ctx.empty((8, 16), "bf16"), ctx.empty((16, 8), "bf16"),
                                   beta=1.0, context=ctx), "out=")
        refused(lambda: ops.transpose(ctx.empty((2, 3, 4), "f32"), context=ctx), "2-D")
        refused(lambda: ops.reduce(ctx.empty((8,), "f16"), context=ctx), "f16")
        refused(lambda: ops.softmax([1.0, 2.0]), "GPU array")
        refused(lambda: ops.softmax(x, variant="online", tpr=3, context=ctx), "tpr")
