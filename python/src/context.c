/* context.c — ptxjit.Context: a ptxjit_context with its options as keywords, closed by close(),
 * a with block or garbage collection. Its kernel() is the request path from Python: an exact
 * request asked before is answered from a dict of this object (no text is built, no lock is
 * taken), anything else goes to ptxjit_get_kernel with the GIL released, since it may compile. */
#include <string.h>
#include <unistd.h>

#include "ext.h"

PyTypeObject *pyx_context_type;

ptxjit_context *pyx_context_open(pyx_context *self)
{
    if (!self->context)
        pyx_raise_message(PTXJIT_ERR_INVALID_ARGUMENT,
                          "the context is closed: open a new ptxjit.Context");
    return self->context;
}

PyObject *pyx_context_wrap_kernel(pyx_context *self, ptxjit_kernel *kernel, ptxjit_origin origin)
{
    PyObject *address = PyLong_FromVoidPtr(kernel);
    if (!address)
        return NULL;
    PyObject *wrapper = PyDict_GetItemWithError(self->by_pointer, address);
    if (wrapper) {
        Py_DECREF(address);
        return Py_NewRef(wrapper);
    }
    wrapper = PyErr_Occurred() ? NULL : pyx_kernel_new(self, kernel, origin);
    if (wrapper && PyDict_SetItem(self->by_pointer, address, wrapper) < 0)
        Py_CLEAR(wrapper);
    Py_DECREF(address);
    return wrapper;
}

/* ---- opening ---- */

/* Keeps the UTF-8 texts of the options alive until ptxjit_open has read them. */
typedef struct {
    PyObject *keep[16];
    int count;
} option_texts;

static int option_text(option_texts *texts, PyObject *value, const char **out, const char *name)
{
    *out = NULL;
    if (!value || value == Py_None)
        return 0;
    PyObject *path = PyOS_FSPath(value); /* str or os.PathLike */
    if (!path) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a str or a path", name);
        return -1;
    }
    if (!PyUnicode_Check(path)) {
        Py_DECREF(path);
        PyErr_Format(PyExc_TypeError, "%s must be a str or a path", name);
        return -1;
    }
    texts->keep[texts->count++] = path;
    *out = PyUnicode_AsUTF8AndSize(path, NULL);
    return *out ? 0 : -1;
}

/* templates: directories (joined into template_path) and (name, text) pairs, added from
 * memory once the context is open. */
static int split_templates(PyObject *templates, PyObject **directories, PyObject **texts)
{
    *directories = PyList_New(0);
    *texts = PyList_New(0);
    PyObject *iterator = templates && templates != Py_None ? PyObject_GetIter(templates) : NULL;
    if (!*directories || !*texts || (templates && templates != Py_None && !iterator))
        return -1;
    for (PyObject *item; iterator && (item = PyIter_Next(iterator));) {
        int ok;
        if (PyTuple_Check(item) && PyTuple_Size(item) == 2) {
            ok = PyList_Append(*texts, item) == 0;
        } else {
            PyObject *path = PyOS_FSPath(item);
            ok = path && PyList_Append(*directories, path) == 0;
            Py_XDECREF(path);
        }
        Py_DECREF(item);
        if (!ok) {
            Py_DECREF(iterator);
            return -1;
        }
    }
    Py_XDECREF(iterator);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *join_paths(PyObject *directories)
{
    if (PyList_Size(directories) == 0)
        return Py_NewRef(Py_None);
    PyObject *colon = PyUnicode_FromString(":");
    PyObject *joined = colon ? PyUnicode_Join(colon, directories) : NULL;
    Py_XDECREF(colon);
    return joined;
}

static int add_template_pairs(pyx_context *self, PyObject *pairs)
{
    for (Py_ssize_t i = 0; i < PyList_Size(pairs); i++) {
        PyObject *pair = PyList_GetItem(pairs, i);
        const char *name, *text;
        if (pyx_utf8(PyTuple_GetItem(pair, 0), &name, "a template's name") < 0 ||
            pyx_utf8(PyTuple_GetItem(pair, 1), &text, "a template's text") < 0)
            return -1;
        if (!name || !text) {
            PyErr_SetString(PyExc_TypeError, "a template from memory is a (name, text) pair");
            return -1;
        }
        ptxjit_status status = ptxjit_add_template(self->context, name, text);
        if (status != PTXJIT_OK) {
            pyx_raise(status);
            return -1;
        }
    }
    return 0;
}

static int flag(PyObject *value, int *out)
{
    if (!value || value == Py_None)
        return 0;
    int truth = PyObject_IsTrue(value);
    if (truth < 0)
        return -1;
    *out = truth;
    return 0;
}

static int number(PyObject *value, long long *out, const char *name)
{
    if (!value || value == Py_None)
        return 0;
    *out = PyLong_AsLongLong(value);
    if (PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s must be an int", name);
        return -1;
    }
    return 0;
}

typedef struct {
    PyObject *arch, *cache_dir, *templates, *compile_options, *use_gpu, *device, *backend,
        *disk_cache, *cache_max_bytes, *cache_shared, *compile_worker, *remote_cache,
        *process_cache, *compile_wait_ms, *remote_lease_ms, *template_max_bytes,
        *confine_includes, *on_event;
} open_arguments;

static int fill_options(ptxjit_options *o, const open_arguments *a, option_texts *texts,
                        PyObject *template_path)
{
    long long n;
    if (option_text(texts, a->arch, &o->arch, "arch") < 0 ||
        option_text(texts, a->cache_dir, &o->cache_dir, "cache_dir") < 0 ||
        option_text(texts, template_path, &o->template_path, "templates") < 0 ||
        option_text(texts, a->compile_options, &o->compile_options, "compile_options") < 0 ||
        option_text(texts, a->backend, &o->backend, "backend") < 0 ||
        option_text(texts, a->compile_worker, &o->compile_worker, "compile_worker") < 0 ||
        option_text(texts, a->remote_cache, &o->remote_cache, "remote_cache") < 0 ||
        flag(a->use_gpu, &o->use_gpu) < 0 || flag(a->disk_cache, &o->disk_cache) < 0 ||
        flag(a->cache_shared, &o->cache_shared) < 0 ||
        flag(a->process_cache, &o->process_cache) < 0 ||
        flag(a->confine_includes, &o->confine_includes) < 0)
        return -1;
    n = o->device;
    if (number(a->device, &n, "device") < 0)
        return -1;
    o->device = (int)n;
    n = 0;
    if (number(a->cache_max_bytes, &n, "cache_max_bytes") < 0)
        return -1;
    o->cache_max_bytes = (uint64_t)n;
    n = 0;
    if (number(a->compile_wait_ms, &n, "compile_wait_ms") < 0)
        return -1;
    o->compile_wait_ms = (int)n;
    n = 0;
    if (number(a->remote_lease_ms, &n, "remote_lease_ms") < 0)
        return -1;
    o->remote_lease_ms = (int)n;
    n = 0;
    if (number(a->template_max_bytes, &n, "template_max_bytes") < 0)
        return -1;
    o->template_max_bytes = (uint64_t)n;
    if (a->on_event && a->on_event != Py_None) {
        if (!PyCallable_Check(a->on_event)) {
            PyErr_SetString(PyExc_TypeError, "on_event must be callable: fn(event_dict)");
            return -1;
        }
        o->on_event = pyx_event_call, o->event_user = a->on_event;
    }
    return 0;
}

static int open_context(pyx_context *self, const open_arguments *a)
{
    PyObject *directories = NULL, *pairs = NULL, *template_path = NULL;
    option_texts texts = {.count = 0};
    ptxjit_options options;
    ptxjit_options_init(&options);
    int result = -1;
    if (split_templates(a->templates, &directories, &pairs) == 0 &&
        (template_path = join_paths(directories)) &&
        fill_options(&options, a, &texts, template_path) == 0) {
        ptxjit_context *context = NULL;
        if (options.on_event) { /* (a second __init__ after a failed open replaces it) */
            PyObject *old = self->on_event;
            self->on_event = Py_NewRef(a->on_event);
            Py_XDECREF(old);
        }
        ptxjit_status status;
        Py_BEGIN_ALLOW_THREADS
        status = ptxjit_open(&context, &options);
        Py_END_ALLOW_THREADS
        self->context = context;
        self->device = options.device;
        if (status != PTXJIT_OK)
            pyx_raise(status);
        else
            result = add_template_pairs(self, pairs);
    }
    for (int i = 0; i < texts.count; i++)
        Py_DECREF(texts.keep[i]);
    Py_XDECREF(directories);
    Py_XDECREF(pairs);
    Py_XDECREF(template_path);
    return result;
}

static int context_init(PyObject *object, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"arch", "cache_dir", "templates", "compile_options", "use_gpu",
                               "device", "backend", "disk_cache", "cache_max_bytes",
                               "cache_shared", "compile_worker", "remote_cache", "process_cache",
                               "compile_wait_ms", "remote_lease_ms", "template_max_bytes",
                               "confine_includes", "on_event", NULL};
    pyx_context *self = (pyx_context *)object;
    open_arguments a = {0};
    if (self->context) {
        PyErr_SetString(PyExc_RuntimeError, "a Context is opened once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOOOOOOOOOOOOOOOOO", keywords, &a.arch,
                                     &a.cache_dir, &a.templates, &a.compile_options, &a.use_gpu,
                                     &a.device, &a.backend, &a.disk_cache, &a.cache_max_bytes,
                                     &a.cache_shared, &a.compile_worker, &a.remote_cache,
                                     &a.process_cache, &a.compile_wait_ms, &a.remote_lease_ms,
                                     &a.template_max_bytes, &a.confine_includes, &a.on_event))
        return -1;
    self->memo = PyDict_New();
    self->by_pointer = PyDict_New();
    if (!self->memo || !self->by_pointer)
        return -1;
    return open_context(self, &a);
}

/* ---- closing ---- */

/* Refuses new calls first, then waits for those running without the GIL (a compile, a
 * tuning), since ptxjit_close must not race them. */
static void close_context(pyx_context *self)
{
    ptxjit_context *context = self->context;
    self->context = NULL;
    while (self->busy > 0) {
        Py_BEGIN_ALLOW_THREADS
        usleep(1000);
        Py_END_ALLOW_THREADS
    }
    if (self->memo)
        PyDict_Clear(self->memo);
    /* Without the GIL: closing joins the context's threads, whose events take it. */
    Py_BEGIN_ALLOW_THREADS
    ptxjit_close(context);
    Py_END_ALLOW_THREADS
    Py_CLEAR(self->on_event);
}

static PyObject *context_close(PyObject *object, PyObject *unused)
{
    (void)unused;
    close_context((pyx_context *)object);
    Py_RETURN_NONE;
}

/* register_aot(address): the ptxjit_aot_table at address (an int, ctypes.addressof of the
 * table in a shared object built from the file `ptxjit aot` wrote) registered with the
 * context, as ptxjit_register_aot does; the object must stay loaded while the context is
 * open (docs/AOT.md, "From Python"). */
static PyObject *context_register_aot(PyObject *object, PyObject *arg)
{
    ptxjit_context *context = pyx_context_open((pyx_context *)object);
    if (!context)
        return NULL;
    unsigned long long address = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred())
        return NULL;
    if (!address)
        return pyx_raise_message(PTXJIT_ERR_INVALID_ARGUMENT, "register_aot: address is 0");
    ptxjit_status status =
        ptxjit_register_aot(context, (const ptxjit_aot_table *)(uintptr_t)address);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    Py_RETURN_NONE;
}

static PyObject *context_enter(PyObject *object, PyObject *unused)
{
    (void)unused;
    return pyx_context_open((pyx_context *)object) ? Py_NewRef(object) : NULL;
}

static PyObject *context_exit(PyObject *object, PyObject *args)
{
    (void)args;
    close_context((pyx_context *)object);
    Py_RETURN_FALSE;
}

static int context_traverse(PyObject *object, visitproc visit, void *arg)
{
    pyx_context *self = (pyx_context *)object;
    Py_VISIT(self->memo);
    Py_VISIT(self->by_pointer);
    Py_VISIT(self->on_event);
    Py_VISIT((PyObject *)Py_TYPE(object));
    return 0;
}

/* Garbage collection closes the context first (PEP 442: the finalizers of a cycle run before
 * any of its objects is cleared), so that the library's threads stop calling on_event while
 * every object the callback may use still stands. */
static void context_finalize(PyObject *object)
{
    pyx_context *self = (pyx_context *)object;
    if (!self->context)
        return;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    close_context(self);
    PyErr_Restore(type, value, traceback);
}

static int context_clear(PyObject *object)
{
    pyx_context *self = (pyx_context *)object;
    /* Closed by context_finalize already, unless the finalizer did not run. */
    if (self->context)
        close_context(self);
    Py_CLEAR(self->on_event);
    Py_CLEAR(self->memo);
    Py_CLEAR(self->by_pointer);
    return 0;
}

static void context_dealloc(PyObject *object)
{
    PyTypeObject *type = Py_TYPE(object);
    PyObject_GC_UnTrack(object);
    pyx_context *self = (pyx_context *)object;
    if (self->context)
        close_context(self);
    context_clear(object);
    freefunc free_slot = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_slot(object);
    Py_DECREF(type);
}

/* ---- requests ---- */

/* "name=value" of a keyword parameter: str and int as written, bool as 0 or 1, anything
 * else (a torch or NumPy dtype) through ptxjit._values.param_text. */
static PyObject *param_word(PyObject *name, PyObject *value)
{
    if (PyBool_Check(value))
        return PyUnicode_FromFormat("%U=%d", name, value == Py_True);
    if (PyUnicode_Check(value) || PyLong_Check(value))
        return PyUnicode_FromFormat("%U=%S", name, value);
    PyObject *helper = PyImport_ImportModule("ptxjit._values");
    PyObject *text = helper ? PyObject_CallMethod(helper, "param_text", "OO", name, value) : NULL;
    Py_XDECREF(helper);
    if (!text)
        return NULL;
    PyObject *word = PyUnicode_FromFormat("%U=%U", name, text);
    Py_DECREF(text);
    return word;
}

typedef struct {
    const char *family, *params, *options, *problem;
    PyObject *params_text; /* owns params when built from keywords */
    int memo;              /* 0: auto or a problem, answered anew each time */
} request;

static int is_keyword(PyObject *name, const char *keyword)
{
    return PyUnicode_CompareWithASCIIString(name, keyword) == 0;
}

/* The request's texts from kernel(family, params=None, *, compile_options=None,
 * problem=None, **params). */
static int read_request(request *r, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    memset(r, 0, sizeof *r);
    r->memo = 1;
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError,
                        "kernel(family, params=None, *, compile_options=None, problem=None, "
                        "**params) takes a family name and at most a parameter string");
        return -1;
    }
    if (pyx_utf8(args[0], &r->family, "family") < 0 ||
        (nargs == 2 && pyx_utf8(args[1], &r->params, "params") < 0))
        return -1;
    if (!r->family) {
        PyErr_SetString(PyExc_TypeError, "family must be a str");
        return -1;
    }
    PyObject *words = PyList_New(0);
    if (!words)
        return -1;
    if (r->params && PyList_Append(words, args[1]) < 0)
        goto fail;
    Py_ssize_t keywords = kwnames ? PyTuple_Size(kwnames) : 0;
    for (Py_ssize_t i = 0; i < keywords; i++) {
        PyObject *name = PyTuple_GetItem(kwnames, i), *value = args[nargs + i];
        if (is_keyword(name, "compile_options")) {
            if (pyx_utf8(value, &r->options, "compile_options") < 0)
                goto fail;
        } else if (is_keyword(name, "problem")) {
            if (pyx_utf8(value, &r->problem, "problem") < 0)
                goto fail;
        } else {
            PyObject *word = param_word(name, value);
            if (!word || PyList_Append(words, word) < 0) {
                Py_XDECREF(word);
                goto fail;
            }
            Py_DECREF(word);
        }
    }
    if (keywords > 0) {
        PyObject *space = PyUnicode_FromString(" ");
        r->params_text = space ? PyUnicode_Join(space, words) : NULL;
        Py_XDECREF(space);
        if (!r->params_text || pyx_utf8(r->params_text, &r->params, "params") < 0)
            goto fail;
    }
    Py_DECREF(words);
    r->memo = !r->problem && !(r->params && strstr(r->params, "auto"));
    return 0;
fail:
    Py_DECREF(words);
    return -1;
}

static ptxjit_status get_kernel(ptxjit_kernel **out, ptxjit_context *context, const request *r,
                                ptxjit_origin *origin)
{
    if (r->problem && r->options) /* the tuned path takes the context's options only */
        return PTXJIT_ERR_UNSUPPORTED;
    if (r->problem)
        return ptxjit_get_kernel_tuned(out, context, r->family, r->params, r->problem, origin);
    return ptxjit_get_kernel_ex(out, context, r->family, r->params, r->options, origin);
}

/* The memo's key: every argument and keyword as given. NULL (no exception) when a value
 * cannot be a key, and the request is then answered without the memo. */
static PyObject *memo_key(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t keywords = kwnames ? PyTuple_Size(kwnames) : 0;
    PyObject *key = PyTuple_New(nargs + 1 + keywords);
    if (!key)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs + keywords; i++)
        PyTuple_SetItem(key, i, Py_NewRef(args[i]));
    PyTuple_SetItem(key, nargs + keywords, Py_NewRef(kwnames ? kwnames : Py_None));
    return key;
}

static PyObject *request_kernel(pyx_context *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames, PyObject *key)
{
    request r;
    if (read_request(&r, args, nargs, kwnames) < 0)
        return NULL;
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin = PTXJIT_ORIGIN_MEMORY;
    ptxjit_status status;
    PYX_BUSY_BEGIN(self);
    Py_BEGIN_ALLOW_THREADS
    status = get_kernel(&kernel, self->context, &r, &origin);
    Py_END_ALLOW_THREADS
    PyObject *wrapper = NULL;
    if (status == PTXJIT_ERR_UNSUPPORTED && r.problem && r.options)
        pyx_raise_message(status, "kernel(): problem= (auto parameters) takes no "
                                  "compile_options=; give the context's compile_options instead");
    else if (status != PTXJIT_OK)
        pyx_raise(status);
    else /* still busy: a close waiting in another thread must not free it under us */
        wrapper = pyx_context_wrap_kernel(self, kernel, origin);
    PYX_BUSY_END(self);
    if (wrapper && key && r.memo && PyDict_SetItem(self->memo, key, wrapper) < 0)
        PyErr_Clear();
    Py_XDECREF(r.params_text);
    return wrapper;
}

static PyObject *context_kernel(PyObject *object, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    pyx_context *self = (pyx_context *)object;
    if (!pyx_context_open(self))
        return NULL;
    PyObject *key = memo_key(args, nargs, kwnames);
    PyObject *hit = key ? PyDict_GetItemWithError(self->memo, key) : NULL;
    if (hit) {
        Py_DECREF(key);
        return Py_NewRef(hit);
    }
    if (PyErr_Occurred()) { /* an unhashable value: no memo for this request */
        PyErr_Clear();
        Py_CLEAR(key);
    }
    PyObject *kernel = request_kernel(self, args, nargs, kwnames, key);
    Py_XDECREF(key);
    return kernel;
}

static PyMethodDef context_methods[] = {
    {"kernel", (PyCFunction)(void (*)(void))context_kernel, METH_FASTCALL | METH_KEYWORDS,
     "kernel(family, params=None, *, compile_options=None, problem=None, **params): the "
     "compiled kernel for the request (params as a string, keywords, or both); problem= "
     "resolves PARAM=auto from the tuning records"},
    {"close", context_close, METH_NOARGS, "close(): frees the context and its kernels"},
    {"register_aot", context_register_aot, METH_O,
     "register_aot(address): registers the ptxjit_aot_table at address (ctypes.addressof)"},
    {"__enter__", context_enter, METH_NOARGS, NULL},
    {"__exit__", context_exit, METH_VARARGS, NULL},
    {"cache_stats", pyx_cache_stats, METH_NOARGS, "cache_stats(): the disk cache's counters"},
    {"cache_clear", pyx_cache_clear, METH_NOARGS, "cache_clear(): removes every entry; returns "
     "how many"},
    {"cache_trim", pyx_cache_trim, METH_NOARGS, "cache_trim(): evicts to the cap; returns "
     "(evicted, temp_files)"},
    {"cache_export", (PyCFunction)(void (*)(void))pyx_cache_export, METH_VARARGS | METH_KEYWORDS,
     "cache_export(path, families=None): writes a bundle (tar) of entries and tuning records"},
    {"cache_import", pyx_cache_import, METH_VARARGS, "cache_import(path): publishes a bundle's "
     "members into the cache"},
    {"warm", (PyCFunction)(void (*)(void))pyx_warm, METH_VARARGS | METH_KEYWORDS,
     "warm(requests, threads=0, progress=None): compiles \"FAMILY key=value\" requests into "
     "the caches"},
    {"_tune", (PyCFunction)(void (*)(void))pyx_tune, METH_VARARGS | METH_KEYWORDS, NULL},
    {"tune_list", pyx_tune_list, METH_NOARGS, "tune_list(): the tuning records on disk"},
    {"tune_clear", pyx_tune_clear, METH_NOARGS, "tune_clear(): removes every tuning record"},
    {"_reduce", pyx_op_reduce, METH_VARARGS, NULL},
    {"_transpose", pyx_op_transpose, METH_VARARGS, NULL},
    {"_softmax", pyx_op_softmax, METH_VARARGS, NULL},
    {"_matmul", pyx_op_matmul, METH_VARARGS, NULL},
    {"_alloc", pyx_alloc, METH_VARARGS, NULL},
    {"_free", pyx_free, METH_VARARGS, NULL},
    {"_copy_to_device", pyx_copy_to_device, METH_VARARGS, NULL},
    {"_copy_to_host", pyx_copy_to_host, METH_VARARGS, NULL},
    {"synchronize", pyx_synchronize, METH_VARARGS,
     "synchronize(stream=None): waits for the stream's work (None: the whole device)"},
    {NULL},
};

static PyType_Slot context_slots[] = {
    {Py_tp_init, context_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, context_dealloc},
    {Py_tp_traverse, context_traverse},
    {Py_tp_clear, context_clear},
    {Py_tp_finalize, context_finalize},
    {Py_tp_methods, NULL}, /* every method: set by pyx_context_register */
    {Py_tp_getset, pyx_context_getset},
    {Py_tp_doc, "Context(arch=None, cache_dir=None, templates=None, compile_options=None, "
                "use_gpu=None, device=0, backend=None, disk_cache=None, ...): a ptxjit context "
                "(ptxjit_open's options as keywords)."},
    {0, NULL},
};

static PyType_Spec context_spec = {"ptxjit._ptxjit.Context", sizeof(pyx_context), 0,
                                   Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                                   context_slots};

/* This file's methods and context_catalog.c's in one table. */
static PyMethodDef all_methods[64];

static int join_methods(void)
{
    size_t count = 0;
    const PyMethodDef *parts[] = {context_methods, pyx_context_catalog_methods};
    for (size_t p = 0; p < 2; p++)
        for (const PyMethodDef *m = parts[p]; m->ml_name; m++) {
            if (count + 1 >= sizeof all_methods / sizeof all_methods[0])
                return -1;
            all_methods[count++] = *m;
        }
    return 0;
}

int pyx_context_register(PyObject *module)
{
    if (join_methods() < 0) {
        PyErr_SetString(PyExc_SystemError, "_ptxjit: too many Context methods");
        return -1;
    }
    for (PyType_Slot *slot = context_slots; slot->slot; slot++)
        if (slot->slot == Py_tp_methods)
            slot->pfunc = all_methods;
    pyx_context_type = (PyTypeObject *)PyType_FromSpec(&context_spec);
    if (!pyx_context_type)
        return -1;
    return PyModule_AddObjectRef(module, "Context", (PyObject *)pyx_context_type);
}
