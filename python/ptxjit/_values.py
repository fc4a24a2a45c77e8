"""Element types across libraries: torch, NumPy/CuPy and __cuda_array_interface__ type strings
mapped to ptxjit's dtype names, and request values that are not plain str or int."""

# ptxjit's dtype names by NumPy-style type string (kind + bytes), as __cuda_array_interface__
# and NumPy/CuPy dtypes (.str without the byte order) write them.
BY_TYPESTR = {"f2": "f16", "f4": "f32", "f8": "f64", "i4": "i32", "u4": "u32", "i8": "i64"}
# Bytes per element of each ptxjit dtype.
ITEMSIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "u32": 4, "i64": 8}
# torch's dtype names (str(torch.bfloat16) is "torch.bfloat16").
BY_TORCH_NAME = {
    "torch.float16": "f16", "torch.bfloat16": "bf16", "torch.float32": "f32",
    "torch.float64": "f64", "torch.int32": "i32", "torch.uint32": "u32", "torch.int64": "i64",
}


def dtype_name(dtype):
    """ptxjit's name for a torch, NumPy or CuPy dtype (or a ptxjit name); None if it has none."""
    if isinstance(dtype, str):
        if dtype in ITEMSIZE:
            return dtype
        dtype = dtype.lstrip("<|=")
        return BY_TYPESTR.get(dtype) or {"float16": "f16", "float32": "f32", "float64": "f64",
                                         "int32": "i32", "uint32": "u32", "int64": "i64",
                                         "bfloat16": "bf16"}.get(dtype)
    text = str(dtype)
    if text in BY_TORCH_NAME:
        return BY_TORCH_NAME[text]
    name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None)
    if name == "bfloat16":  # ml_dtypes / JAX
        return "bf16"
    kind, size = getattr(dtype, "kind", None), getattr(dtype, "itemsize", None)
    if kind and size:
        return BY_TYPESTR.get(f"{kind}{size}")
    return dtype_name(name) if isinstance(name, str) else None


def param_text(name, value):
    """The text of a request's keyword value that is neither str nor int: a dtype."""
    from . import ParamError
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = dtype_name(value)
    if text is None:
        raise ParamError(f"parameter {name}: {value!r} is not a str, an int or a dtype; "
                         f"write it as the request would ({name}=VALUE)")
    return text
