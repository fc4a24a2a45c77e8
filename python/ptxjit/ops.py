"""The built-in families' ops on arrays: softmax, reduce (sum), transpose, matmul.

Each takes torch tensors, CuPy arrays or __cuda_array_interface__ arrays (out= for the last),
runs on the array library's current stream (torch.cuda.current_stream(), CuPy's current
stream; stream= overrides), makes its output with the input's library, and takes any shape.
Keyword parameters are the family's (ctx.info(family)) and go into the request; the op fills
in the dtype from the arrays. context= picks a Context (default: ptxjit.default_context of the
input's device)."""
from . import _arrays
from ._context import _words, default_context
from ._ptxjit import ParamError


def _stream_of(stream, v):
    if stream is None:
        return v.stream or 0
    if isinstance(stream, int):
        return stream
    for name in ("cuda_stream", "ptr"):
        if hasattr(stream, name):
            return getattr(stream, name)
    if hasattr(stream, "__cuda_stream__"):
        pair = stream.__cuda_stream__
        return (pair() if callable(pair) else pair)[1]
    raise ParamError("stream must be None, an int handle, or a torch or CuPy stream")


def _request(params, **fixed):
    """The request text: the op's own words, less those the caller's text names, then the
    caller's (a request may not name a parameter twice)."""
    text = _words(params) or ""
    named = {word.split("=", 1)[0] for word in text.split()}
    words = [f"{k}={v}" for k, v in fixed.items() if v is not None and k not in named]
    if text:
        words.append(text)
    return " ".join(words) or None


def _check_out(out, shape, dtype, what="out"):
    o = _arrays.view(out, what)
    if tuple(o.shape) != tuple(shape) or o.dtype != dtype or not o.contiguous_rows():
        raise ParamError(f"{what} must be a dense array of shape {tuple(shape)} and dtype "
                         f"{dtype}; got shape {tuple(o.shape)}, dtype {o.dtype}")
    return o


def _prepare(v, out, shape, dtype=None, what="x"):
    """v made dense, and the output: out checked, or a new one of v's library."""
    v = _arrays.contiguous(v, what)
    dtype = dtype or v.dtype
    if out is None:
        out = _arrays.empty_like(v, shape, dtype)
    return v, out, _check_out(out, shape, dtype)


def softmax(x, out=None, *, dim=-1, stream=None, context=None, params=None, **kw):
    """Row-wise softmax along the last dimension (f32, f16, bf16): out = exp(x - max) / sum.
    out may be x (in place)."""
    v = _arrays.view(x, "x")
    shape = v.shape
    if dim not in (-1, len(shape) - 1):
        raise ParamError("softmax: dim must be the last dimension (-1); move it there first")
    v, out, o = _prepare(v, out, shape)
    if v.dtype not in ("f32", "f16", "bf16"):
        raise ParamError(f"softmax: dtype {v.dtype} is not f32, f16 or bf16")
    cols = shape[-1] if shape else 1
    rows = v.size // cols if cols else 0
    if rows and cols:
        ctx = context or default_context(v.device)
        ctx._softmax(_request(_merge(params, kw), dtype=v.dtype), v.ptr, o.ptr, rows, cols,
                     _stream_of(stream, v))
    return out


def reduce(x, out=None, *, stream=None, context=None, params=None, **kw):
    """The sum of every element of x (i32: modulo 2^32, as the kernel sums; f32), as a 0-d
    array of x's dtype (out: one element)."""
    v = _arrays.contiguous(_arrays.view(x, "x"), "x")
    if v.dtype not in ("i32", "f32"):
        raise ParamError(f"reduce: dtype {v.dtype} is not i32 or f32")
    if out is None:
        out = _arrays.empty_like(v, (), v.dtype)
    o = _arrays.view(out, "out")
    if o.size != 1 or o.dtype != v.dtype:
        raise ParamError(f"reduce: out must be one element of dtype {v.dtype}")
    stream = _stream_of(stream, v)
    if v.size == 0:
        _zero(out)
        return out
    ctx = context or default_context(v.device)
    ctx._reduce(_request(_merge(params, kw), dtype=v.dtype), v.ptr, v.size, o.ptr, stream)
    return out


sum = reduce  # noqa: A001  (the op's other name)


def _zero(out):
    if hasattr(out, "zero_"):
        out.zero_()
    elif hasattr(out, "fill"):
        out.fill(0)
    else:
        out.write(bytes(out.nbytes))


_TRANSPOSE_AS = {"f32": "f32", "i32": "f32", "u32": "f32", "f16": "f16", "bf16": "bf16",
                 "f64": "f64", "i64": "f64"}


def transpose(x, out=None, *, stream=None, context=None, params=None, **kw):
    """The transpose of a 2-D array (rows x cols -> cols x rows), bit-exact; 4-byte integers
    move as f32, 8-byte ones as f64."""
    v = _arrays.view(x, "x")
    if len(v.shape) != 2:
        raise ParamError(f"transpose: x must be 2-D, not of shape {v.shape}")
    rows, cols = v.shape
    v, out, o = _prepare(v, out, (cols, rows))
    moved = _TRANSPOSE_AS.get(v.dtype)
    if moved is None:
        raise ParamError(f"transpose: dtype {v.dtype} is not moved by the kernel")
    if rows and cols:
        ctx = context or default_context(v.device)
        ctx._transpose(_request(_merge(params, kw), dtype=moved), v.ptr, o.ptr, rows, cols,
                       _stream_of(stream, v))
    return out


def _merge(params, kw):
    text = _words(params)
    extra = _words(kw) if kw else None
    return " ".join(t for t in (text, extra) if t) or None


def _matmul_operands(a, b):
    va = _arrays.view(a, "a")
    vb = _arrays.view(b, "b")
    if va.strides[-1] != 1:
        va = _arrays.contiguous(va, "a")
    if vb.strides[-1] != 1:
        vb = _arrays.contiguous(vb, "b")
    if va.dtype != vb.dtype:
        raise ParamError(f"matmul: a is {va.dtype} and b is {vb.dtype}; give both one dtype")
    if len(va.shape) not in (2, 3) or len(vb.shape) not in (2, 3):
        raise ParamError("matmul: a is (m, k) or (batch, m, k), b is (k, n) or (batch, k, n)")
    return va, vb


def _batch_of(va, vb):
    batch_a = va.shape[0] if len(va.shape) == 3 else 1
    batch_b = vb.shape[0] if len(vb.shape) == 3 else 1
    if batch_a != batch_b and 1 not in (batch_a, batch_b):
        raise ParamError(f"matmul: batches of {batch_a} and {batch_b} products do not match")
    return max(batch_a, batch_b)


def _epilogue_words(dtype, alpha, beta, bias, act):
    words = {}
    if alpha is not None:
        words["alpha"] = "scaled"
    if beta is not None:
        words["beta"] = "scaled"
    if bias is not None:
        words["bias"] = "column"
    if act is not None:
        words["act"] = act
    if words and dtype == "f32":
        raise ParamError("matmul: alpha, beta, bias and act are fused by the wgmma variants, "
                         "which take bf16 or f16 inputs; convert a and b, or apply them after")
    return words


def matmul(a, b, out=None, *, bias=None, alpha=None, beta=None, act=None, stream=None,
           context=None, params=None, **kw):
    """C = act(alpha * A @ B + beta * C + bias) for A (m, k) or (batch, m, k) and B (k, n) or
    (batch, k, n), row-major with any row stride; bf16/f16 (Hopper wgmma, fp32 accumulation,
    output of the input's dtype) or f32 (a SIMT variant unless params name another). beta
    reads out's values before the call. bias: n f32 values added to each row."""
    va, vb = _matmul_operands(a, b)
    m, k = va.shape[-2:]
    k2, n = vb.shape[-2:]
    if k != k2:
        raise ParamError(f"matmul: a is {m} x {k} and b is {k2} x {n}: inner sizes differ")
    batch = _batch_of(va, vb)
    shape = (batch, m, n) if max(len(va.shape), len(vb.shape)) == 3 else (m, n)
    if beta is not None and out is None:
        raise ParamError("matmul: beta scales out's values: pass out=")
    dtype = va.dtype
    if dtype not in ("f32", "bf16", "f16"):
        raise ParamError(f"matmul: dtype {dtype} is not f32, bf16 or f16")
    if out is None:
        out = _arrays.empty_like(va, shape, dtype)
    o = _check_out(out, shape, dtype)
    words = _epilogue_words(dtype, alpha, beta, bias, act)
    bias_ptr = 0
    if bias is not None:
        vbias = _arrays.contiguous(_arrays.view(bias, "bias"), "bias")
        if vbias.dtype != "f32" or vbias.size != n:
            raise ParamError(f"matmul: bias must be {n} f32 values")
        bias_ptr = vbias.ptr
    fixed = {"variant": "wgmma", "dtype": dtype, "out": dtype} if dtype != "f32" else \
        {"variant": "block_tiled"}
    fixed.update(words)
    if not (m and n):
        return out
    if k == 0:
        raise ParamError("matmul: k is 0: the product is empty")
    layout = (va.strides[-2], vb.strides[-2], n, batch,
              va.strides[0] if len(va.shape) == 3 and va.shape[0] > 1 else 0,
              vb.strides[0] if len(vb.shape) == 3 and vb.shape[0] > 1 else 0, m * n)
    epilogue = (1.0 if alpha is None else float(alpha), 0.0 if beta is None else float(beta),
                bias_ptr)
    ctx = context or default_context(va.device)
    ctx._matmul(_request(_merge(params, kw), **fixed), va.ptr, vb.ptr, o.ptr, m, n, k, layout,
                epilogue, _stream_of(stream, va))
    return out
