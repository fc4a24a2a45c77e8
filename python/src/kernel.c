/* kernel.c — ptxjit.Kernel: one compiled kernel of a context, made by Context.kernel() (one
 * object per kernel, so a later request for it returns the same object). Its text and data
 * (.ptx, .source, .cubin, .resources, .param_layout()) need no GPU; calling it launches
 * (launch.c). */
#include <string.h>

#include "ext.h"

PyTypeObject *pyx_kernel_type;

PyObject *pyx_kernel_new(pyx_context *owner, ptxjit_kernel *kernel, ptxjit_origin origin)
{
    pyx_kernel *self = PyObject_GC_New(pyx_kernel, pyx_kernel_type);
    if (!self)
        return NULL;
    self->owner = (pyx_context *)Py_NewRef((PyObject *)owner);
    self->kernel = kernel;
    self->origin = origin;
    self->entries = NULL;
    self->entry_count = 0;
    if (pyx_layout_read(&self->entries, &self->entry_count, kernel) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    PyObject_GC_Track((PyObject *)self);
    return (PyObject *)self;
}

static void kernel_dealloc(PyObject *object)
{
    pyx_kernel *self = (pyx_kernel *)object;
    PyTypeObject *type = Py_TYPE(object);
    PyObject_GC_UnTrack(object);
    pyx_layout_free(self->entries, self->entry_count);
    Py_XDECREF((PyObject *)self->owner);
    PyObject_GC_Del(object);
    Py_DECREF(type);
}

/* The owner is visited so that a context and the kernels its dicts hold are one collectable
 * cycle; only the context clears (a kernel never loses its owner). */
static int kernel_traverse(PyObject *object, visitproc visit, void *arg)
{
    Py_VISIT(((pyx_kernel *)object)->owner);
    Py_VISIT((PyObject *)Py_TYPE(object));
    return 0;
}

/* The kernel, or NULL with an exception once its context is closed. */
static ptxjit_kernel *live(PyObject *object)
{
    pyx_kernel *self = (pyx_kernel *)object;
    return pyx_context_open(self->owner) ? self->kernel : NULL;
}

static PyObject *text_or_none(const char *text)
{
    return text ? PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace")
                : Py_NewRef(Py_None);
}

#define TEXT_GETTER(name, call)                                                           \
    static PyObject *get_##name(PyObject *self, void *unused)                             \
    {                                                                                     \
        (void)unused;                                                                     \
        ptxjit_kernel *kernel = live(self);                                               \
        return kernel ? text_or_none(call(kernel)) : NULL;                                \
    }
TEXT_GETTER(family, ptxjit_kernel_family)
TEXT_GETTER(params, ptxjit_kernel_params)
TEXT_GETTER(key, ptxjit_kernel_key)
TEXT_GETTER(ptx, ptxjit_kernel_ptx)
TEXT_GETTER(log, ptxjit_kernel_log)
TEXT_GETTER(compile_options, ptxjit_kernel_compile_options)

static PyObject *get_source(PyObject *self, void *unused)
{
    (void)unused;
    ptxjit_kernel *kernel = live(self);
    if (!kernel)
        return NULL;
    const char *source = ptxjit_kernel_source(kernel);
    return source ? text_or_none(source) : pyx_raise(PTXJIT_ERR_UNSUPPORTED);
}

static PyObject *get_cubin(PyObject *self, void *unused)
{
    (void)unused;
    ptxjit_kernel *kernel = live(self);
    size_t size = 0;
    const void *cubin = kernel ? ptxjit_kernel_cubin(kernel, &size) : NULL;
    if (!kernel)
        return NULL;
    return PyBytes_FromStringAndSize(cubin ? cubin : "", cubin ? (Py_ssize_t)size : 0);
}

static PyObject *get_entries(PyObject *object, void *unused)
{
    (void)unused;
    pyx_kernel *self = (pyx_kernel *)object;
    PyObject *names = PyTuple_New(self->entry_count);
    for (int i = 0; names && i < self->entry_count; i++)
        PyTuple_SetItem(names, i, Py_NewRef(self->entries[i].py_name));
    return names;
}

static const char *origin_name(ptxjit_origin origin)
{
    static const char *const names[] = {"compiled", "disk", "memory", "remote", "shared"};
    return (unsigned)origin < 5 ? names[origin] : "unknown";
}

static PyObject *get_origin(PyObject *object, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(origin_name(((pyx_kernel *)object)->origin));
}

static PyObject *resources_dict(const ptxjit_kernel_resources *r)
{
    return Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "registers", r->registers,
                         "static_smem", r->static_smem, "local_bytes", r->local_bytes,
                         "max_threads", r->max_threads, "param_bytes", r->param_bytes,
                         "spill_stores", r->spill_stores, "spill_loads", r->spill_loads);
}

/* The entry name from an optional argument (None: the first). */
static int entry_argument(PyObject *value, const char **out)
{
    return pyx_utf8(value, out, "entry");
}

static PyObject *resources_for(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"entry", "device", NULL};
    PyObject *entry_object = Py_None;
    int device = 0;
    const char *entry;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Op", keywords, &entry_object, &device) ||
        entry_argument(entry_object, &entry) < 0)
        return NULL;
    ptxjit_kernel *kernel = live(self);
    if (!kernel)
        return NULL;
    ptxjit_kernel_resources r;
    ptxjit_status status = device ? ptxjit_kernel_resources_get(&r, kernel, entry)
                                  : ptxjit_kernel_resources_static(&r, kernel, entry);
    return status == PTXJIT_OK ? resources_dict(&r) : pyx_raise(status);
}

static PyObject *get_resources(PyObject *self, void *unused)
{
    (void)unused;
    PyObject *args = PyTuple_New(0);
    PyObject *result = args ? resources_for(self, args, NULL) : NULL;
    Py_XDECREF(args);
    return result;
}

static PyObject *param_layout(PyObject *self, PyObject *args)
{
    PyObject *entry_object = Py_None;
    const char *entry;
    if (!PyArg_ParseTuple(args, "|O", &entry_object) || entry_argument(entry_object, &entry) < 0)
        return NULL;
    ptxjit_kernel *kernel = live(self);
    if (!kernel)
        return NULL;
    pyx_kernel *k = (pyx_kernel *)self;
    int index = 0;
    while (entry && index < k->entry_count && strcmp(k->entries[index].name, entry) != 0)
        index++;
    int count = 0;
    ptxjit_status status = ptxjit_kernel_param_count(&count, kernel, entry);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < count; i++) {
        ptxjit_param_layout layout;
        if ((status = ptxjit_kernel_param_layout(&layout, kernel, entry, i)) != PTXJIT_OK) {
            Py_DECREF(list);
            return pyx_raise(status);
        }
        PyObject *item = Py_BuildValue("{s:i,s:n,s:n,s:n,s:s}", "index", i, "offset",
                                       (Py_ssize_t)layout.offset, "size", (Py_ssize_t)layout.size,
                                       "align", (Py_ssize_t)layout.align, "type",
                                       k->entries[index].params[i].type);
        if (!item || PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_XDECREF(item);
    }
    return list;
}

static PyObject *function(PyObject *self, PyObject *args)
{
    PyObject *entry_object = Py_None;
    const char *entry;
    if (!PyArg_ParseTuple(args, "|O", &entry_object) || entry_argument(entry_object, &entry) < 0)
        return NULL;
    ptxjit_kernel *kernel = live(self);
    void *handle = NULL;
    if (!kernel)
        return NULL;
    ptxjit_status status = ptxjit_kernel_function(&handle, kernel, entry);
    return status == PTXJIT_OK ? PyLong_FromVoidPtr(handle) : pyx_raise(status);
}

/* SASS through the toolkit's nvdisasm, by ptxjit._sass (a subprocess); None without it. */
static PyObject *get_sass(PyObject *self, void *unused)
{
    PyObject *cubin = get_cubin(self, unused);
    PyObject *helper = cubin ? PyImport_ImportModule("ptxjit._sass") : NULL;
    PyObject *sass = helper ? PyObject_CallMethod(helper, "disassemble", "O", cubin) : NULL;
    Py_XDECREF(helper);
    Py_XDECREF(cubin);
    return sass;
}

static PyObject *kernel_repr(PyObject *self)
{
    pyx_kernel *k = (pyx_kernel *)self;
    if (!k->owner->context)
        return PyUnicode_FromString("<ptxjit.Kernel of a closed context>");
    return PyUnicode_FromFormat("<ptxjit.Kernel %s %s key=%s>", ptxjit_kernel_family(k->kernel),
                                ptxjit_kernel_params(k->kernel), ptxjit_kernel_key(k->kernel));
}

static PyGetSetDef kernel_getset[] = {
    {"family", get_family, NULL, "the family's name", NULL},
    {"params", get_params, NULL, "the canonical parameters (defaults filled, sorted)", NULL},
    {"key", get_key, NULL, "the cache key, 32 hex digits", NULL},
    {"ptx", get_ptx, NULL, "the PTX text", NULL},
    {"source", get_source, NULL, "what the route compiled: specialized CUDA (nvrtc) or LLVM IR",
     NULL},
    {"log", get_log, NULL, "the compiler's log (may be empty)", NULL},
    {"cubin", get_cubin, NULL, "the cubin's bytes", NULL},
    {"sass", get_sass, NULL, "the cubin's SASS through nvdisasm; None where it is missing", NULL},
    {"entries", get_entries, NULL, "the entry points' names (the first is the default)", NULL},
    {"compile_options", get_compile_options, NULL, "the compile options, canonical", NULL},
    {"origin", get_origin, NULL, "how it was first found: compiled, disk, memory, remote, shared",
     NULL},
    {"resources", get_resources, NULL,
     "registers, static_smem, local_bytes, max_threads, param_bytes, spill_stores, spill_loads "
     "of the first entry, read from the cubin (no GPU)", NULL},
    {NULL},
};

static PyMethodDef kernel_methods[] = {
    {"resources_for", (PyCFunction)(void (*)(void))resources_for, METH_VARARGS | METH_KEYWORDS,
     "resources_for(entry=None, device=False): an entry's resources, from the cubin or (device) "
     "from the driver"},
    {"param_layout", param_layout, METH_VARARGS,
     "param_layout(entry=None): each parameter's index, offset, size, align and PTX type"},
    {"function", function, METH_VARARGS,
     "function(entry=None): the CUfunction handle as an int (loads the module; needs a GPU)"},
    {NULL},
};

static PyType_Slot kernel_slots[] = {
    {Py_tp_dealloc, kernel_dealloc},
    {Py_tp_traverse, kernel_traverse},
    {Py_tp_call, pyx_kernel_call},
    {Py_tp_repr, kernel_repr},
    {Py_tp_getset, kernel_getset},
    {Py_tp_methods, kernel_methods},
    {Py_tp_doc, "A compiled kernel. k(grid, block, *args, shared=0, stream=None, entry=None) "
                "launches it; args are checked against the entry's parameters."},
    {0, NULL},
};

static PyType_Spec kernel_spec = {"ptxjit.Kernel", sizeof(pyx_kernel), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_HAVE_GC,
                                  kernel_slots};

int pyx_kernel_register(PyObject *module)
{
    pyx_kernel_type = (PyTypeObject *)PyType_FromSpec(&kernel_spec);
    if (!pyx_kernel_type)
        return -1;
    return PyModule_AddObjectRef(module, "Kernel", (PyObject *)pyx_kernel_type);
}
