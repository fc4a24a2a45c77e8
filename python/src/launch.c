/* launch.c — calling a Kernel: k(grid, block, *args, shared=0, stream=None, entry=None).
 * The hot path of the package. Each argument is checked against the entry's parameters read
 * once when the Kernel was made (layout.c) and packed into a buffer on the stack, then
 * ptxjit_launch goes to cuLaunchKernel directly once the module is loaded (its fast path):
 * nothing is allocated, no dict or tuple is built, no Python-level code runs for a torch
 * tensor. A wrong count, size or kind of argument is a ParamError before the GPU is touched. */
#include <string.h>

#include "ext.h"

/* Entries with more parameters than this pack into the heap instead of the stack. */
#define STACK_PARAMS 32
#define STACK_BYTES 1024

typedef struct {
    ptxjit_dim3 grid, block;
    unsigned shared;
    void *stream;
    int entry;
} launch_options;

static PyObject *str_shared, *str_stream, *str_entry;

static int read_dim(PyObject *value, ptxjit_dim3 *out, const char *what)
{
    unsigned parts[3] = {1, 1, 1};
    Py_ssize_t count = 1;
    if (PyLong_Check(value)) {
        parts[0] = (unsigned)PyLong_AsUnsignedLong(value);
    } else if (PyTuple_Check(value) && (count = PyTuple_Size(value)) >= 1 && count <= 3) {
        for (Py_ssize_t i = 0; i < count && !PyErr_Occurred(); i++) {
            PyObject *item = PyTuple_GetItem(value, i);
            if (PyLong_Check(item))
                parts[i] = (unsigned)PyLong_AsUnsignedLong(item);
            else
                PyErr_SetString(PyExc_TypeError, "not an int");
        }
    } else {
        count = 0;
    }
    if (count == 0 || PyErr_Occurred()) {
        PyErr_Clear();
        pyx_raise_message(PTXJIT_ERR_INVALID_ARGUMENT,
                          "%s must be an int or a tuple of 1 to 3 ints (x, y, z), each 0 to "
                          "2^32-1", what);
        return -1;
    }
    out->x = parts[0], out->y = parts[1], out->z = parts[2];
    return 0;
}

static int find_entry(const pyx_kernel *k, PyObject *name)
{
    if (PyLong_Check(name)) {
        long index = PyLong_AsLong(name);
        if (index >= 0 && index < k->entry_count)
            return (int)index;
    } else if (PyUnicode_Check(name)) {
        for (int i = 0; i < k->entry_count; i++)
            if (PyUnicode_Compare(name, k->entries[i].py_name) == 0)
                return i;
    }
    PyErr_Clear();
    pyx_raise_message(PTXJIT_ERR_INVALID_ARGUMENT,
                      "entry must name one of the kernel's entries (see .entries), or be "
                      "its index; %s has %d", ptxjit_kernel_family(k->kernel), k->entry_count);
    return -1;
}

static int read_option(const pyx_kernel *k, launch_options *o, PyObject *key, PyObject *value)
{
    if (key == str_stream || PyUnicode_Compare(key, str_stream) == 0)
        return pyx_stream_handle(value, &o->stream);
    if (key == str_shared || PyUnicode_Compare(key, str_shared) == 0) {
        o->shared = PyLong_Check(value) ? (unsigned)PyLong_AsUnsignedLong(value) : 0;
        if (!PyLong_Check(value) || PyErr_Occurred()) {
            PyErr_Clear();
            pyx_raise_message(PTXJIT_ERR_INVALID_ARGUMENT,
                              "shared must be an int: bytes of dynamic shared memory per block");
            return -1;
        }
        return 0;
    }
    if (key == str_entry || PyUnicode_Compare(key, str_entry) == 0) {
        if (value != Py_None && (o->entry = find_entry(k, value)) < 0)
            return -1;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a kernel takes the keywords shared, stream and entry, not %S",
                 key);
    return -1;
}

/* The ParamError of argument index, naming the entry's parameters. */
static int bad_argument(const pyx_kernel *k, const pyx_entry *e, int index, const char *why)
{
    PyObject *signature = pyx_layout_describe(e);
    if (!signature)
        return -1;
    pyx_raise_message(PTXJIT_ERR_INVALID_ARGUMENT,
                      "argument %d of entry %s (%s %s) is %s: %s", index,
                      PyUnicode_AsUTF8AndSize(signature, NULL), ptxjit_kernel_family(k->kernel),
                      ptxjit_kernel_params(k->kernel), e->params[index].type, why);
    Py_DECREF(signature);
    return -1;
}

/* An integer of size bytes into slot (little-endian): from the signed type's minimum to the
 * unsigned type's maximum, so that both spellings of a value are taken; -1 if it does not fit
 * (or is not an int), with the exception cleared by the caller. */
static int pack_integer(PyObject *value, uint32_t size, void *slot)
{
    int overflow = 0;
    long long signed_value = PyLong_AsLongLongAndOverflow(value, &overflow);
    if ((signed_value == -1 && PyErr_Occurred()) || overflow < 0)
        return -1;
    unsigned long long bits = (unsigned long long)signed_value;
    if (overflow > 0) { /* above 2^63 - 1: only a 64-bit unsigned value holds it */
        bits = PyLong_AsUnsignedLongLong(value);
        if (PyErr_Occurred() || size < 8)
            return -1;
    } else if (size < 8) {
        long long low = -(1LL << (size * 8 - 1)), high = (1LL << (size * 8)) - 1;
        if (signed_value < low || signed_value > high)
            return -1;
    }
    memcpy(slot, &bits, size);
    return 0;
}

static int pack_int_param(const pyx_kernel *k, const pyx_entry *e, int i, PyObject *value,
                          void *slot)
{
    uint32_t size = e->params[i].size;
    if (PyLong_Check(value)) {
        if (pack_integer(value, size, slot) == 0)
            return 0;
        PyErr_Clear();
        return bad_argument(k, e, i, "the int given does not fit it");
    }
    if (PyFloat_Check(value))
        return bad_argument(k, e, i, "a float was given for an integer parameter; pass an int");
    if (size == 8) {
        uint64_t address = 0;
        int found = pyx_device_pointer(value, &address);
        if (found > 0) {
            memcpy(slot, &address, 8);
            return 0;
        }
        if (found < 0) {
            PyObject *type, *error, *trace;
            PyErr_Fetch(&type, &error, &trace);
            PyObject *text = error ? PyObject_Str(error) : NULL;
            int result = bad_argument(k, e, i, text ? PyUnicode_AsUTF8AndSize(text, NULL)
                                                    : "its array could not be read");
            Py_XDECREF(text);
            Py_XDECREF(type), Py_XDECREF(error), Py_XDECREF(trace);
            return result;
        }
    }
    PyObject *index = PyNumber_Index(value); /* numpy integers */
    if (index && pack_integer(index, size, slot) == 0) {
        Py_DECREF(index);
        return 0;
    }
    Py_XDECREF(index);
    PyErr_Clear();
    return bad_argument(k, e, i, size == 8 ? "pass a GPU array (torch, CuPy, "
                                             "__cuda_array_interface__, __dlpack__) or an int"
                                           : "pass an int that fits it");
}

static int pack_float_param(const pyx_kernel *k, const pyx_entry *e, int i, PyObject *value,
                            void *slot)
{
    double number = PyFloat_Check(value) ? PyFloat_AsDouble(value) : -1.0;
    if (!PyFloat_Check(value)) {
        PyObject *as_float = PyNumber_Float(value); /* ints, numpy scalars */
        if (!as_float) {
            PyErr_Clear();
            return bad_argument(k, e, i, "pass a float (or an int)");
        }
        number = PyFloat_AsDouble(as_float);
        Py_DECREF(as_float);
    }
    if (e->params[i].size == 4) {
        float single = (float)number;
        memcpy(slot, &single, 4);
    } else if (e->params[i].size == 8) {
        memcpy(slot, &number, 8);
    } else {
        return bad_argument(k, e, i, "a float of this size is not supported; pass bytes");
    }
    return 0;
}

/* A parameter passed by value as bytes (a struct, a CUtensorMap, a half): any object with
 * the buffer protocol, of exactly the parameter's size, copied into place. */
static int pack_bytes_param(const pyx_kernel *k, const pyx_entry *e, int i, PyObject *value,
                            void *slot)
{
    Py_buffer view;
    if (PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        return bad_argument(k, e, i, "pass its bytes (bytes, a ctypes structure, any buffer) "
                                     "of exactly its size");
    }
    int ok = view.len == (Py_ssize_t)e->params[i].size;
    if (ok)
        memcpy(slot, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return ok ? 0 : bad_argument(k, e, i, "a buffer of another size was given");
}

static int pack_argument(const pyx_kernel *k, const pyx_entry *e, int i, PyObject *value,
                         void *slot)
{
    switch (e->params[i].kind) {
    case PYX_PARAM_FLOAT:
        return pack_float_param(k, e, i, value, slot);
    case PYX_PARAM_BYTES:
        return pack_bytes_param(k, e, i, value, slot);
    default:
        return pack_int_param(k, e, i, value, slot);
    }
}

static int wrong_count(const pyx_kernel *k, const pyx_entry *e, int given)
{
    PyObject *signature = pyx_layout_describe(e);
    if (signature)
        pyx_raise_message(PTXJIT_ERR_INVALID_ARGUMENT,
                          "entry %s of %s takes %d argument%s, %d given: k(grid, block, "
                          "*args) with one argument per parameter",
                          PyUnicode_AsUTF8AndSize(signature, NULL),
                          ptxjit_kernel_family(k->kernel), e->count, e->count == 1 ? "" : "s",
                          given);
    Py_XDECREF(signature);
    return -1;
}

static int read_options(const pyx_kernel *k, launch_options *o, PyObject *args, PyObject *kwargs)
{
    memset(o, 0, sizeof *o);
    if (PyTuple_Size(args) < 2) {
        pyx_raise_message(PTXJIT_ERR_INVALID_ARGUMENT,
                          "a kernel is called as k(grid, block, *args, shared=0, stream=None, "
                          "entry=None)");
        return -1;
    }
    if (read_dim(PyTuple_GetItem(args, 0), &o->grid, "grid") < 0 ||
        read_dim(PyTuple_GetItem(args, 1), &o->block, "block") < 0)
        return -1;
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (kwargs && PyDict_Next(kwargs, &position, &key, &value))
        if (read_option(k, o, key, value) < 0)
            return -1;
    return 0;
}

/* Packs every argument into slots (8 bytes each, larger ones in their own run of slots)
 * and points argv at them; bytes is the space slots has. */
static int pack_all(const pyx_kernel *k, const pyx_entry *e, PyObject *args, uint64_t *slots,
                    size_t bytes, void **argv)
{
    size_t used = 0;
    for (int i = 0; i < e->count; i++) {
        size_t words = (e->params[i].size + 7) / 8;
        if ((used + words) * 8 > bytes) {
            pyx_raise_message(PTXJIT_ERR_UNSUPPORTED, "the parameters of entry %s are larger "
                              "than a launch from Python packs", e->name);
            return -1;
        }
        argv[i] = &slots[used];
        if (pack_argument(k, e, i, PyTuple_GetItem(args, i + 2), &slots[used]) < 0)
            return -1;
        used += words;
    }
    return 0;
}

/* Parameter space for an entry: its sizes rounded up to 8 bytes each. */
static size_t packed_bytes(const pyx_entry *e)
{
    size_t bytes = 0;
    for (int i = 0; i < e->count; i++)
        bytes += (e->params[i].size + 7) / 8 * 8;
    return bytes;
}

PyObject *pyx_kernel_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    pyx_kernel *k = (pyx_kernel *)self;
    if (!pyx_context_open(k->owner))
        return NULL;
    launch_options o;
    if (read_options(k, &o, args, kwargs) < 0)
        return NULL;
    const pyx_entry *e = &k->entries[o.entry];
    int given = (int)PyTuple_Size(args) - 2;
    if (given != e->count)
        return wrong_count(k, e, given), NULL;
    uint64_t stack_slots[STACK_BYTES / 8];
    void *stack_argv[STACK_PARAMS];
    size_t bytes = packed_bytes(e);
    int on_heap = e->count > STACK_PARAMS || bytes > STACK_BYTES;
    uint64_t *slots = on_heap ? PyMem_Malloc(bytes + 8) : stack_slots;
    void **argv = on_heap ? PyMem_Malloc(sizeof(void *) * ((size_t)e->count + 1)) : stack_argv;
    PyObject *result = NULL;
    if (!slots || !argv)
        PyErr_NoMemory();
    else if (pack_all(k, e, args, slots, on_heap ? bytes + 8 : STACK_BYTES, argv) == 0) {
        ptxjit_status status = ptxjit_launch(k->kernel, o.entry ? e->name : NULL, o.grid,
                                             o.block, o.shared, o.stream, argv);
        result = status == PTXJIT_OK ? Py_NewRef(Py_None) : pyx_raise(status);
    }
    if (on_heap) {
        PyMem_Free(slots);
        PyMem_Free(argv);
    }
    return result;
}

int pyx_launch_init(void)
{
    str_shared = PyUnicode_InternFromString("shared");
    str_stream = PyUnicode_InternFromString("stream");
    str_entry = PyUnicode_InternFromString("entry");
    return str_shared && str_stream && str_entry ? 0 : -1;
}
