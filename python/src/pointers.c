/* pointers.c — the device address behind another library's array, and the stream behind its
 * stream object, without importing those libraries. How to read an array is decided once per
 * type and remembered: a torch tensor's address comes from its data_ptr method (reading
 * __cuda_array_interface__ would build a dict on every launch), a CuPy array's from .data.ptr,
 * anything else through __cuda_array_interface__ or, failing that, __dlpack__. */
#include <string.h>

#include "ext.h"

enum { READ_TORCH = 1, READ_CUPY, READ_INTERFACE, READ_DLPACK };

/* The types seen so far and how each is read. A program passes few array types: 8 slots,
 * and a type beyond them is decided again on each launch (still correct, only slower). */
static struct {
    PyObject *type; /* strong reference */
    int how;
} seen[8];
static int seen_count;

static PyObject *torch_tensor, *torch_data_ptr; /* torch.Tensor and its data_ptr, once torch is
                                                   imported by the program */
/* torch.Tensor's is_cuda descriptor and its getter: for an object of exactly that type, the
 * getter called straight (the generic lookup walks the instance's dict and the type's MRO
 * first, on every launch). */
static PyObject *torch_is_cuda;
static descrgetfunc torch_is_cuda_get;
static PyObject *str_is_cuda, *str_data, *str_ptr, *str_interface, *str_dlpack;

/* torch.Tensor, once the program has imported torch (this never imports it). */
static int find_torch(void)
{
    if (torch_tensor)
        return 1;
    PyObject *modules = PyImport_GetModuleDict();
    PyObject *torch = modules ? PyDict_GetItemString(modules, "torch") : NULL;
    if (!torch)
        return 0;
    torch_tensor = PyObject_GetAttrString(torch, "Tensor");
    torch_data_ptr = torch_tensor ? PyObject_GetAttrString(torch_tensor, "data_ptr") : NULL;
    if (!torch_data_ptr) {
        PyErr_Clear();
        Py_CLEAR(torch_tensor);
        return 0;
    }
    torch_is_cuda = PyObject_GetAttrString(torch_tensor, "is_cuda");
    torch_is_cuda_get =
        torch_is_cuda ? (descrgetfunc)PyType_GetSlot(Py_TYPE(torch_is_cuda), Py_tp_descr_get)
                      : NULL;
    PyErr_Clear();
    return 1;
}

static int module_starts_with(PyObject *type, const char *prefix)
{
    PyObject *module = PyObject_GetAttrString(type, "__module__");
    const char *name = NULL;
    if (module && PyUnicode_Check(module))
        name = PyUnicode_AsUTF8AndSize(module, NULL);
    int match = name && strncmp(name, prefix, strlen(prefix)) == 0;
    Py_XDECREF(module);
    PyErr_Clear();
    return match;
}

/* How to read object; *per_type 1 when every object of its type reads the same way (the
 * type itself has the attribute), 0 when only this object says (an instance attribute). */
static int decide(PyObject *object, int *per_type)
{
    PyObject *type = (PyObject *)Py_TYPE(object);
    *per_type = 1;
    if (find_torch() && PyObject_IsInstance(object, torch_tensor) == 1)
        return READ_TORCH;
    PyErr_Clear();
    int interface = PyObject_HasAttr(type, str_interface);
    if (interface && module_starts_with(type, "cupy"))
        return READ_CUPY;
    if (interface)
        return READ_INTERFACE;
    if (PyObject_HasAttr(type, str_dlpack))
        return READ_DLPACK;
    *per_type = 0;
    if (PyObject_HasAttr(object, str_interface))
        return READ_INTERFACE;
    return PyObject_HasAttr(object, str_dlpack) ? READ_DLPACK : 0;
}

static int how_to_read(PyObject *object)
{
    PyObject *type = (PyObject *)Py_TYPE(object);
    for (int i = 0; i < seen_count; i++)
        if (seen[i].type == type)
            return seen[i].how;
    int per_type;
    int how = decide(object, &per_type);
    if (per_type && seen_count < (int)(sizeof seen / sizeof seen[0])) {
        seen[seen_count].type = Py_NewRef(type);
        seen[seen_count++].how = how;
    }
    return how;
}

static int pointer_from_int(PyObject *value, uint64_t *out, const char *what)
{
    if (!value)
        return -1;
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s is not an int", what);
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(value);
    return PyErr_Occurred() ? -1 : 1;
}

static int read_torch(PyObject *object, uint64_t *out)
{
    PyObject *is_cuda = torch_is_cuda_get && (PyObject *)Py_TYPE(object) == torch_tensor
                            ? torch_is_cuda_get(torch_is_cuda, object, torch_tensor)
                            : PyObject_GetAttr(object, str_is_cuda);
    if (!is_cuda)
        return -1;
    Py_DECREF(is_cuda); /* a bool: Py_True outlives this reference */
    if (is_cuda != Py_True) {
        PyErr_SetString(PyExc_ValueError,
                        "a torch tensor on the CPU cannot be a kernel argument: move it to the "
                        "GPU first (.cuda())");
        return -1;
    }
    PyObject *address = PyObject_CallFunctionObjArgs(torch_data_ptr, object, NULL);
    int result = pointer_from_int(address, out, "data_ptr()");
    Py_XDECREF(address);
    return result;
}

static int read_cupy(PyObject *object, uint64_t *out)
{
    PyObject *memory = PyObject_GetAttr(object, str_data);
    PyObject *address = memory ? PyObject_GetAttr(memory, str_ptr) : NULL;
    Py_XDECREF(memory);
    int result = pointer_from_int(address, out, "CuPy's .data.ptr");
    Py_XDECREF(address);
    return result;
}

static int read_interface(PyObject *object, uint64_t *out)
{
    PyObject *interface = PyObject_GetAttr(object, str_interface);
    if (!interface)
        return -1;
    PyObject *data = PyDict_Check(interface) ? PyDict_GetItemString(interface, "data") : NULL;
    int result = -1;
    if (data && PyTuple_Check(data) && PyTuple_Size(data) >= 1)
        result = pointer_from_int(PyTuple_GetItem(data, 0), out, "__cuda_array_interface__'s data");
    else
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ has no data (address, "
                                         "read-only) entry");
    Py_DECREF(interface);
    return result;
}

/* DLPack's C structures (dlpack.h, version 0.8: the unversioned capsule "dltensor"). */
typedef struct {
    void *data;
    struct {
        int32_t device_type, device_id;
    } device;
    int32_t ndim;
    struct {
        uint8_t code, bits;
        uint16_t lanes;
    } dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} dl_tensor;
typedef struct {
    dl_tensor tensor;
    void *manager_context;
    void (*deleter)(void *self);
} dl_managed_tensor;
enum { DL_CUDA = 2, DL_CUDA_HOST = 3, DL_CUDA_MANAGED = 13 };

/* The capsule is not consumed (its name stays "dltensor"): dropping it calls the producer's
 * deleter, and the array itself keeps the memory alive through the launch. */
static int read_dlpack(PyObject *object, uint64_t *out)
{
    PyObject *capsule = PyObject_CallMethod(object, "__dlpack__", NULL);
    if (!capsule)
        return -1;
    dl_managed_tensor *managed = PyCapsule_GetPointer(capsule, "dltensor");
    int result = -1;
    if (managed) {
        int type = managed->tensor.device.device_type;
        if (type == DL_CUDA || type == DL_CUDA_HOST || type == DL_CUDA_MANAGED) {
            *out = (uint64_t)(uintptr_t)managed->tensor.data + managed->tensor.byte_offset;
            result = 1;
        } else {
            PyErr_Format(PyExc_ValueError, "a DLPack array on device type %d (not CUDA) cannot "
                                           "be a kernel argument: move it to the GPU first",
                         type);
        }
    }
    Py_DECREF(capsule);
    return result;
}

int pyx_device_pointer(PyObject *object, uint64_t *out)
{
    switch (how_to_read(object)) {
    case READ_TORCH:
        return read_torch(object, out);
    case READ_CUPY:
        return read_cupy(object, out);
    case READ_INTERFACE:
        return read_interface(object, out);
    case READ_DLPACK:
        return read_dlpack(object, out);
    default:
        return PyErr_Occurred() ? -1 : 0;
    }
}

/* A stream object's handle: the __cuda_stream__ protocol ((version, handle)), torch's
 * .cuda_stream, CuPy's .ptr. */
static PyObject *stream_handle_object(PyObject *object)
{
    if (PyObject_HasAttrString(object, "__cuda_stream__")) {
        /* a method by the protocol; a plain (version, handle) attribute is taken too */
        PyObject *member = PyObject_GetAttrString(object, "__cuda_stream__");
        PyObject *pair = member && PyCallable_Check(member) ? PyObject_CallNoArgs(member)
                                                            : Py_XNewRef(member);
        Py_XDECREF(member);
        PyObject *handle = pair && PyTuple_Check(pair) && PyTuple_Size(pair) == 2
                               ? Py_NewRef(PyTuple_GetItem(pair, 1))
                               : NULL;
        if (pair && !handle)
            PyErr_SetString(PyExc_TypeError, "__cuda_stream__() must return (version, handle)");
        Py_XDECREF(pair);
        return handle;
    }
    if (PyObject_HasAttrString(object, "cuda_stream"))
        return PyObject_GetAttrString(object, "cuda_stream");
    if (PyObject_HasAttrString(object, "ptr"))
        return PyObject_GetAttrString(object, "ptr");
    PyErr_Format(PyExc_TypeError,
                 "stream must be None, an int handle, or a torch or CuPy stream (an object with "
                 "__cuda_stream__, .cuda_stream or .ptr), not %S", (PyObject *)Py_TYPE(object));
    return NULL;
}

int pyx_stream_handle(PyObject *object, void **out)
{
    *out = NULL;
    if (!object || object == Py_None)
        return 0;
    PyObject *handle = PyLong_Check(object) ? Py_NewRef(object) : stream_handle_object(object);
    if (!handle)
        return -1;
    if (PyLong_Check(handle))
        *out = (void *)(uintptr_t)PyLong_AsUnsignedLongLong(handle);
    else
        PyErr_SetString(PyExc_TypeError, "a stream's handle must be an int");
    Py_DECREF(handle);
    return PyErr_Occurred() ? -1 : 0;
}

int pyx_pointers_init(void)
{
    str_is_cuda = PyUnicode_InternFromString("is_cuda");
    str_data = PyUnicode_InternFromString("data");
    str_ptr = PyUnicode_InternFromString("ptr");
    str_interface = PyUnicode_InternFromString("__cuda_array_interface__");
    str_dlpack = PyUnicode_InternFromString("__dlpack__");
    return str_is_cuda && str_data && str_ptr && str_interface && str_dlpack ? 0 : -1;
}

void pyx_pointers_clear(void)
{
    for (int i = 0; i < seen_count; i++)
        Py_CLEAR(seen[i].type);
    seen_count = 0;
    Py_CLEAR(torch_tensor);
    Py_CLEAR(torch_data_ptr);
    Py_CLEAR(torch_is_cuda);
    torch_is_cuda_get = NULL;
}
