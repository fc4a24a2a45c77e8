"""Launching from Python: geometry and arguments checked against the entry's parameters (a
wrong count, size or kind is a ParamError before the GPU is touched), every way an argument
or a stream may be given, and a launch reaching the driver. Runs against tests/fake_cuda where
there is no GPU (it checks each launch's context and stream, and counts them)."""
import ctypes
import struct

from _support import AXPY, FAKE, SCALARS, fake_count, needs_launch, ptxjit


class Pair(ctypes.Structure):
    _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_int)]


class Interface:
    """An array of another library, as __cuda_array_interface__ describes it."""

    def __init__(self, address):
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (address, False),
                                         "version": 3}


class DLPackArray:
    """An array that only speaks DLPack: a capsule over a DLManagedTensor of its own."""

    class Tensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                    ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                    ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                    ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                    ("byte_offset", ctypes.c_uint64), ("manager", ctypes.c_void_p),
                    ("deleter", ctypes.c_void_p)]

    def __init__(self, address, device_type=2, offset=0):
        self.tensor = self.Tensor(data=address, device_type=device_type, ndim=0,
                                  byte_offset=offset)

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                       ctypes.c_void_p]
        return new(ctypes.addressof(self.tensor), b"dltensor", None)

    def __dlpack_device__(self):
        return (self.tensor.device_type, 0)


class Stream:
    def __init__(self, handle):
        self.cuda_stream = handle


class ProtocolStream:
    """A stream of the __cuda_stream__ protocol: (version, handle)."""

    def __cuda_stream__(self):
        return (0, 0)


def open_axpy():
    needs_launch()
    ctx = ptxjit.Context(templates=[("axpy.cu", AXPY), ("scalars.cu", SCALARS)])
    assert ctx.gpu_status() is None, ctx.gpu_status()
    return ctx, ctx.kernel("axpy")


def refused(call, *words):
    try:
        call()
    except ptxjit.ParamError as error:
        text = str(error)
        assert all(w in text for w in words), text
        return text
    raise AssertionError("launched")


def test_a_launch_with_arrays_ints_and_floats_reaches_the_driver():
    ctx, k = open_axpy()
    with ctx:
        x, y = ctx.array([1.0, 2.0, 3.0, 4.0]), ctx.array([1.0] * 4)
        before = fake_count(1) if FAKE else 0
        k(1, 256, 2.0, x, y, 4)
        k((1, 1, 1), (256,), 2, x.ptr, y, 4, stream=None, shared=0)
        k(1, 256, 2.0, Interface(x.ptr), DLPackArray(y.ptr), 4, stream=0)
        k(1, 256, 2.0, x, y, 4, stream=Stream(0))
        k(1, 256, 2.0, x, y, 4, stream=ProtocolStream())
        ctx.synchronize()
        if FAKE:
            assert fake_count(1) - before == 5
        else:
            assert y.tolist() == [1 + 10 * v for v in (1.0, 2.0, 3.0, 4.0)]


def test_a_wrong_count_is_refused_naming_the_entry_and_its_parameters():
    ctx, k = open_axpy()
    with ctx:
        x = ctx.array([1.0] * 4)
        before = fake_count(1) if FAKE else 0
        refused(lambda: k(1, 256, 2.0, x, x), "takes 4 arguments, 3 given",
                "axpy_kernel(f32, u64, u64, u64)")
        refused(lambda: k(1, 256, 2.0, x, x, 4, 5), "5 given")
        refused(lambda: k(1), "k(grid, block")
        if FAKE:
            assert fake_count(1) == before


def test_a_wrong_kind_or_size_is_refused_naming_the_argument():
    ctx, k = open_axpy()
    with ctx:
        x = ctx.array([1.0] * 4)
        refused(lambda: k(1, 256, 2.0, x, x, 4.5), "argument 3", "float")
        refused(lambda: k(1, 256, "a", x, x, 4), "argument 0", "float")
        refused(lambda: k(1, 256, 2.0, "x", x, 4), "argument 1", "GPU array")
        refused(lambda: k(1, 256, 2.0, x, x, 2 ** 64), "argument 3", "does not fit")
        refused(lambda: k(1, 256, 2.0, DLPackArray(x.ptr, device_type=1), x, 4),
                "argument 1", "not CUDA")


def test_bad_geometry_options_and_entries_are_refused():
    ctx, k = open_axpy()
    with ctx:
        x = ctx.array([1.0] * 4)
        refused(lambda: k(0, 256, 2.0, x, x, 4), "zero dimension")
        refused(lambda: k(1, 2048, 2.0, x, x, 4), "1024")
        refused(lambda: k((1, 2, 3, 4), 32, 2.0, x, x, 4), "grid")
        refused(lambda: k(1, 32, 2.0, x, x, 4, entry="other"), "entries")
        refused(lambda: k(1, 32, 2.0, x, x, 4, shared="lots"), "shared")
        try:
            k(1, 32, 2.0, x, x, 4, streem=0)
        except TypeError as error:
            assert "streem" in str(error)
        else:
            raise AssertionError("an unknown keyword accepted")
        try:
            k(1, 32, 2.0, x, x, 4, stream="s")
        except TypeError as error:
            assert "stream" in str(error)
        else:
            raise AssertionError("a str stream accepted")


def test_every_scalar_kind_packs_and_a_second_entry_is_chosen_by_name():
    ctx, _ = open_axpy()
    with ctx:
        k = ctx.kernel("scalars")
        out = ctx.array([0] * 6, "i32")
        k(1, 1, out, -3, 2 ** 40 + 5, 7.9, 8.5, Pair(2, 3), 255)
        k(1, 1, out, 3, 5, 7, 8, struct.pack("ii", 2, 3), 0)  # ints for floats, bytes for a struct
        refused(lambda: k(1, 1, out, 3, 5, 7, 8, b"\0" * 4, 0), "argument 5", "size")
        refused(lambda: k(1, 1, out, 3, 5, 7, 8, Pair(2, 3), 256), "argument 6", "fit")
        refused(lambda: k(1, 1, out, 2 ** 32, 5, 7, 8, Pair(2, 3), 0), "argument 1", "fit")
        k(1, 1, out, entry="second_kernel")
        k(1, 1, out, entry=1)
        refused(lambda: k(1, 1, out, 3, entry="second_kernel"), "takes 1 argument, 2 given")
        ctx.synchronize()


def test_kernels_of_a_closed_context_refuse_to_launch():
    ctx, k = open_axpy()
    x = ctx.array([1.0] * 4)
    ctx.close()
    try:
        k(1, 32, 2.0, x, x, 4)
    except ptxjit.Error as error:
        assert "closed" in str(error)
    else:
        raise AssertionError("launched after close")


def test_device_arrays_round_trip_their_values():
    needs_launch()
    with ptxjit.Context() as ctx:
        a = ctx.array([1.5, -2.0, 3.25], "f32")
        assert a.tolist() == [1.5, -2.0, 3.25]
        assert a.__cuda_array_interface__["data"][0] == a.ptr
        a.free()
