"""What the ops need to know of an array, whichever library made it: its device address,
shape, strides (elements), ptxjit dtype, device, the stream its library works on now, and how
to make another array of that library. torch and CuPy are read natively; anything else with
__cuda_array_interface__ as far as that says (such an array cannot allocate an output: pass
out=)."""
from ._values import BY_TORCH_NAME, ITEMSIZE, dtype_name


class ArrayView:
    __slots__ = ("source", "library", "ptr", "shape", "strides", "dtype", "device", "stream")

    def contiguous_rows(self):
        """True when the rows of the last dimension are dense and follow each other."""
        expected = 1
        for extent, stride in zip(reversed(self.shape), reversed(self.strides)):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True

    @property
    def size(self):
        count = 1
        for extent in self.shape:
            count *= extent
        return count


def _is_torch(x):
    module = type(x).__module__
    return module.startswith("torch") and hasattr(x, "data_ptr")


def _is_cupy(x):
    return type(x).__module__.startswith("cupy") and hasattr(x, "data")


def view(x, what="x"):
    """An ArrayView of x; ValueError for an array that is not on a GPU."""
    from . import ParamError
    v = ArrayView()
    v.source = x
    if _is_torch(x):
        if not x.is_cuda:
            raise ParamError(f"{what} is a torch tensor on the CPU: move it to the GPU (.cuda())")
        import torch
        v.library, v.ptr, v.shape, v.strides = "torch", x.data_ptr(), tuple(x.shape), x.stride()
        v.dtype = BY_TORCH_NAME.get(str(x.dtype))
        v.device = x.device.index if x.device.index is not None else torch.cuda.current_device()
        v.stream = torch.cuda.current_stream(v.device).cuda_stream
    elif _is_cupy(x):
        import cupy
        v.library, v.ptr, v.shape = "cupy", x.data.ptr, tuple(x.shape)
        v.strides = tuple(s // x.itemsize for s in x.strides)
        v.dtype = dtype_name(x.dtype)
        v.device = x.device.id
        v.stream = cupy.cuda.get_current_stream().ptr
    elif hasattr(x, "__cuda_array_interface__"):
        interface = x.__cuda_array_interface__
        v.library, v.ptr, v.shape = "interface", interface["data"][0], tuple(interface["shape"])
        typestr = interface["typestr"]
        v.dtype = getattr(x, "dtype", None) if typestr == "<V2" else dtype_name(typestr)
        v.dtype = dtype_name(v.dtype) if v.dtype else None
        size = ITEMSIZE.get(v.dtype, 1)
        strides = interface.get("strides")
        v.strides = tuple(s // size for s in strides) if strides else _dense(v.shape)
        v.device = getattr(getattr(x, "context", None), "device", 0)
        stream = interface.get("stream")
        v.stream = stream if isinstance(stream, int) and stream > 2 else 0
    else:
        raise ParamError(f"{what} must be a GPU array: a torch tensor, a CuPy array or an object "
                         f"with __cuda_array_interface__; got {type(x).__name__}")
    if v.dtype is None:
        raise ParamError(f"{what} has an element type ptxjit does not know")
    return v


def _dense(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def contiguous(v, what="x"):
    """v itself when its rows are dense, else a dense copy made by its library."""
    if v.contiguous_rows():
        return v
    if v.library == "torch":
        return view(v.source.contiguous(), what)
    if v.library == "cupy":
        import cupy
        return view(cupy.ascontiguousarray(v.source), what)
    from . import ParamError
    raise ParamError(f"{what} is not dense (strides {v.strides}); pass a contiguous array")


_TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
                 "i32": "int32", "i64": "int64"}


def empty_like(v, shape, dtype=None):
    """A new array of v's library and device, of shape and dtype (default: v's)."""
    dtype = dtype or v.dtype
    if v.library == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, _TORCH_DTYPES[dtype]),
                           device=v.source.device)
    if v.library == "cupy":
        import cupy
        if dtype == "bf16":
            from . import ParamError
            raise ParamError("CuPy has no bfloat16 arrays: pass out=")
        with cupy.cuda.Device(v.device):
            return cupy.empty(shape, dtype=_TORCH_DTYPES[dtype])
    context = getattr(v.source, "context", None)
    if context is not None and hasattr(context, "empty"):
        return context.empty(shape, dtype)
    from . import ParamError
    raise ParamError("an output for this kind of array cannot be made here: pass out=")
