"""The Python side of a Context: tuning with keywords and a result object, one default
context per device for the ops, and DeviceArray, device memory for programs without torch or
CuPy. Requests, launches and everything else are the C core's (_ptxjit)."""
import array as _array
import os
import threading

from . import _ptxjit
from ._values import ITEMSIZE, dtype_name


def _words(value, joiner=" "):
    """A request's text from a str, a dict {name: value} or a dict {name: [values]}."""
    if value is None or isinstance(value, str):
        return value
    words = []
    for name, item in value.items():
        if isinstance(item, (list, tuple)):
            item = ",".join(str(v) for v in item)
        words.append(f"{name}={item}")
    return joiner.join(words)


class TuneResult(dict):
    """ptxjit_tune's result: a dict (family, problem, winner, best_ms, candidates, ...) whose
    keys are also attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Context(_ptxjit.Context):
    """A ptxjit context: Context(arch=None, cache_dir=None, templates=None,
    compile_options=None, use_gpu=None, device=0, backend=None, disk_cache=None, ...).

    templates: directories of templates, and (name, text) pairs registered from memory.
    ctx.kernel(family, params=None, **params) gives a Kernel; close() (or a with block) frees
    the context and every kernel it made. include_dirs: directories a template's #include
    may name, added to compile_options as -I words. aot: addresses of ahead-of-time tables
    (ctypes.addressof of the table in a library built from `ptxjit aot`'s file), registered
    as ctx.register_aot(address) registers one (docs/AOT.md). on_event: fn(event), called
    with a dict for each event of the library (kind "request_end", tier "disk", status,
    family, params, key, ms, ...: docs/PYTHON.md, "Events"), from whichever thread met it;
    an exception it raises is reported as unraisable and the request goes on."""

    def __init__(self, *args, include_dirs=None, aot=(), **options):
        if include_dirs:
            words = [options.get("compile_options") or ""]
            words += [f"-I{os.fspath(d)}" for d in include_dirs]
            options["compile_options"] = " ".join(w for w in words if w)
        super().__init__(*args, **options)
        for address in aot:  # ctypes.addressof of ptxjit_aot_tables (docs/AOT.md)
            self.register_aot(address)

    def tune(self, family, problem, *, fixed=None, space=None, run=None, check=None,
             threads=0, runs=0, retune=False, compile_only=False, exhaustive=False,
             progress=None, bucket="exact"):
        """Tunes family for problem ("rows=4096 cols=4096" or a dict). A user family passes
        run(kernel, stream), which launches the candidate on stream, and optionally
        check(kernel, stream), which returns False (or raises) when its result is wrong.
        space: "tpb=128,256" or {"tpb": [128, 256]}; fixed likewise. Returns a TuneResult."""
        if bucket not in ("exact", "pow2"):
            raise _ptxjit.ParamError("bucket must be 'exact' or 'pow2'")
        result = self._tune(family, _words(problem), _words(fixed), _words(space), run, check,
                            threads, runs, retune, compile_only, exhaustive, progress,
                            0 if bucket == "exact" else 1)
        result["candidates"] = [dict(c) for c in result["candidates"]]
        return TuneResult(result)

    def empty(self, shape, dtype="f32"):
        """An uninitialized DeviceArray of this context's device."""
        return DeviceArray(self, shape, dtype)

    def array(self, values, dtype="f32"):
        """A DeviceArray holding values (a list, array.array or bytes of dtype elements)."""
        data = values if isinstance(values, (bytes, bytearray)) else _pack(values, dtype)
        result = DeviceArray(self, (len(data) // ITEMSIZE[dtype_name(dtype)],), dtype)
        result.write(data)
        return result

    def __repr__(self):
        if self.closed:
            return "<ptxjit.Context closed>"
        return f"<ptxjit.Context {self.arch} device {self.device} cache {self.cache_dir}>"


_TYPECODES = {"f32": "f", "f64": "d", "i32": "i", "u32": "I", "i64": "q", "f16": "H",
              "bf16": "H"}


def _pack(values, dtype):
    return _array.array(_TYPECODES[dtype_name(dtype)], values).tobytes()


class DeviceArray:
    """Device memory from ptxjit_alloc with a shape and dtype, usable as a kernel argument
    (__cuda_array_interface__): for programs without torch or CuPy. f16/bf16 values read back
    as their raw 16-bit patterns."""

    def __init__(self, context, shape, dtype="f32"):
        self.context = context
        self.shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.dtype = dtype_name(dtype)
        if self.dtype is None:
            raise _ptxjit.ParamError(f"dtype {dtype!r}: use one of {sorted(ITEMSIZE)}")
        count = 1
        for extent in self.shape:
            count *= extent
        self.nbytes = count * ITEMSIZE[self.dtype]
        self.ptr = context._alloc(self.nbytes)

    @property
    def __cuda_array_interface__(self):
        typestr = {"f16": "<f2", "bf16": "<V2", "f32": "<f4", "f64": "<f8", "i32": "<i4",
                   "u32": "<u4", "i64": "<i8"}[self.dtype]
        return {"shape": self.shape, "typestr": typestr, "data": (self.ptr, False),
                "version": 3, "strides": None, "stream": None}

    def write(self, data):
        """Copies bytes (or any buffer) of at most nbytes into the array."""
        self.context._copy_to_device(self.ptr, data)

    def read(self):
        """The array's bytes (waits for the copy)."""
        return bytes(self.context._copy_to_host(self.ptr, self.nbytes))

    def tolist(self):
        values = _array.array(_TYPECODES[self.dtype])
        values.frombytes(self.read())
        return values.tolist()

    def free(self):
        if self.ptr:
            self.context._free(self.ptr)
            self.ptr = 0

    def __del__(self):
        try:
            self.free()
        except Exception:  # a closed context took the memory with it
            pass


_defaults = {}
_defaults_lock = threading.Lock()


def default_context(device=0):
    """The context the ops use for a device: opened on first use with the defaults (the
    environment's PTXJIT_* settings apply), shared by every thread."""
    with _defaults_lock:
        context = _defaults.get(device)
        if context is None or context.closed:
            context = _defaults[device] = Context(device=device)
        return context
