"""ptxjit from Python: parameter-specialized GPU kernels compiled at run time, launched on
torch, CuPy, JAX or any __cuda_array_interface__ / DLPack array (docs/PYTHON.md).

    import ptxjit
    ctx = ptxjit.Context()
    k = ctx.kernel("softmax", dtype="bf16")          # compiled (or found in a cache)
    print(k.ptx, k.resources)
    ptxjit.ops.softmax(x)                            # the family op on a torch tensor
"""
from ._ptxjit import (  # noqa: F401  (the C core: types, exceptions)
    CacheError, CompileError, Error, FileError, GPUError, Kernel, NoCompilerError, NoGPUError,
    OutOfMemoryError, ParamError, TemplateError, UnsupportedError, device_count, status_name,
    version,
)
from ._context import Context, DeviceArray, TuneResult, default_context  # noqa: F401
from . import ops  # noqa: F401
from . import _ptxjit
import atexit as _atexit

# A library thread (the copier, a pool's) must not ask a finalizing interpreter for the GIL:
# events stop at exit, before finalization starts.
_atexit.register(_ptxjit._stop_events)

__version__ = version
__all__ = [
    "Context", "Kernel", "DeviceArray", "TuneResult", "default_context", "device_count", "ops",
    "Error", "ParamError", "TemplateError", "CompileError", "NoCompilerError", "CacheError",
    "GPUError", "NoGPUError", "OutOfMemoryError", "FileError", "UnsupportedError",
]
