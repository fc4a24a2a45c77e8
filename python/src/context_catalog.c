/* context_catalog.c — what a Context tells about itself and its families: target, cache
 * directory, GPU, the families and their schemas, canonical parameters, specialized sources,
 * op plans, and its templates (added from text, reloaded from disk, the problems found). */
#include <stdlib.h>

#include "ext.h"

static ptxjit_context *open_of(PyObject *self)
{
    return pyx_context_open((pyx_context *)self);
}

/* A str the caller frees with free(), as a Python str (NULL stays None). */
static PyObject *owned_text(char *text)
{
    PyObject *result = text ? PyUnicode_FromString(text) : Py_NewRef(Py_None);
    free(text);
    return result;
}

static PyObject *families(PyObject *self, PyObject *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    if (!context)
        return NULL;
    int count = ptxjit_family_count(context);
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < count; i++) {
        PyObject *name = PyUnicode_FromString(ptxjit_family_name(context, i));
        if (!name || PyList_Append(list, name) < 0)
            Py_CLEAR(list);
        Py_XDECREF(name);
    }
    return list;
}

static PyObject *info(PyObject *self, PyObject *args)
{
    const char *family;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "s", &family) || !(context = open_of(self)))
        return NULL;
    return pyx_family_info(context, family);
}

static PyObject *describe(PyObject *self, PyObject *args)
{
    const char *family, *text = NULL;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "s", &family) || !(context = open_of(self)))
        return NULL;
    ptxjit_status status = ptxjit_family_describe(&text, context, family);
    return status == PTXJIT_OK ? PyUnicode_FromString(text) : pyx_raise(status);
}

static PyObject *canonical(PyObject *self, PyObject *args)
{
    const char *family, *params = NULL;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "s|z", &family, &params) || !(context = open_of(self)))
        return NULL;
    char *out = NULL;
    ptxjit_status status = ptxjit_canonical_params(&out, context, family, params);
    return status == PTXJIT_OK ? owned_text(out) : pyx_raise(status);
}

static PyObject *specialize(PyObject *self, PyObject *args)
{
    const char *family, *params = NULL;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "s|z", &family, &params) || !(context = open_of(self)))
        return NULL;
    char *out = NULL;
    ptxjit_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_specialize(&out, context, family, params);
    Py_END_ALLOW_THREADS
    return status == PTXJIT_OK ? owned_text(out) : pyx_raise(status);
}

/* explain(family, params=None, compile_options=None): ptxjit_explain's report; it scans the
 * disk cache and may ask the remote tier, so without the GIL. */
static PyObject *explain(PyObject *self, PyObject *args)
{
    const char *family, *params = NULL, *options = NULL;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "s|zz", &family, &params, &options) ||
        !(context = open_of(self)))
        return NULL;
    char *out = NULL;
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_explain(&out, context, family, params, options);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    return status == PTXJIT_OK ? owned_text(out) : pyx_raise(status);
}

static PyObject *plan(PyObject *self, PyObject *args)
{
    const char *family, *params, *problem;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "szs", &family, &params, &problem) || !(context = open_of(self)))
        return NULL;
    char *request = NULL, *why = NULL;
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_plan(&request, &why, context, family, params, problem);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    PyObject *request_text = owned_text(request), *why_text = owned_text(why);
    PyObject *pair = request_text && why_text ? PyTuple_Pack(2, request_text, why_text) : NULL;
    Py_XDECREF(request_text);
    Py_XDECREF(why_text);
    return pair;
}

static PyObject *add_template(PyObject *self, PyObject *args)
{
    const char *name, *text;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "ss", &name, &text) || !(context = open_of(self)))
        return NULL;
    ptxjit_status status = ptxjit_add_template(context, name, text);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    PyDict_Clear(((pyx_context *)self)->memo); /* a family's requests may mean another kernel */
    Py_RETURN_NONE;
}

static PyObject *reload_templates(PyObject *self, PyObject *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    if (!context)
        return NULL;
    ptxjit_status status = ptxjit_reload_templates(context);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    PyDict_Clear(((pyx_context *)self)->memo);
    Py_RETURN_NONE;
}

static PyObject *template_problems(PyObject *self, PyObject *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    if (!context)
        return NULL;
    int count = ptxjit_template_problem_count(context);
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < count; i++) {
        PyObject *problem = PyUnicode_FromString(ptxjit_template_problem(context, i));
        if (!problem || PyList_Append(list, problem) < 0)
            Py_CLEAR(list);
        Py_XDECREF(problem);
    }
    return list;
}

/* None when kernels can be launched, else the message saying why not. */
static PyObject *gpu_status(PyObject *self, PyObject *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    if (!context)
        return NULL;
    if (ptxjit_gpu_status(context) == PTXJIT_OK)
        Py_RETURN_NONE;
    return PyUnicode_FromString(ptxjit_last_error());
}

PyMethodDef pyx_context_catalog_methods[] = {
    {"families", families, METH_NOARGS, "families(): the family names"},
    {"info", info, METH_VARARGS, "info(family): the schema as a dict"},
    {"describe", describe, METH_VARARGS, "describe(family): the schema as text"},
    {"canonical", canonical, METH_VARARGS,
     "canonical(family, params=None): the request validated, defaults filled, sorted"},
    {"specialize", specialize, METH_VARARGS,
     "specialize(family, params=None): the source the route compiles, without compiling"},
    {"explain", explain, METH_VARARGS,
     "explain(family, params=None, compile_options=None): the request's key components and, "
     "when it would miss, the nearest cached entries with what differs (ptxjit explain)"},
    {"plan", plan, METH_VARARGS,
     "plan(family, params, problem): (the request an op launches, why it differs or None)"},
    {"add_template", add_template, METH_VARARGS,
     "add_template(name, text): registers a template from text (origin memory:NAME)"},
    {"reload_templates", reload_templates, METH_NOARGS,
     "reload_templates(): reads the template directories again"},
    {"template_problems", template_problems, METH_NOARGS,
     "template_problems(): the templates that could not be used, \"PATH: message\" each"},
    {"gpu_status", gpu_status, METH_NOARGS,
     "gpu_status(): None when kernels can launch here, else why not"},
    {NULL},
};

static PyObject *get_arch(PyObject *self, void *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    return context ? PyUnicode_FromString(ptxjit_arch(context)) : NULL;
}

static PyObject *get_cache_dir(PyObject *self, void *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    const char *dir = context ? ptxjit_cache_dir(context) : NULL;
    if (!context)
        return NULL;
    return dir ? PyUnicode_FromString(dir) : Py_NewRef(Py_None);
}

static PyObject *get_device(PyObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromLong(((pyx_context *)self)->device);
}

static PyObject *get_closed(PyObject *self, void *unused)
{
    (void)unused;
    return PyBool_FromLong(((pyx_context *)self)->context == NULL);
}

static PyObject *get_cuda_context(PyObject *self, void *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    void *handle = NULL;
    if (!context)
        return NULL;
    ptxjit_status status = ptxjit_cuda_context(&handle, context);
    return status == PTXJIT_OK ? PyLong_FromVoidPtr(handle) : pyx_raise(status);
}

PyGetSetDef pyx_context_getset[] = {
    {"arch", get_arch, NULL, "the target architecture, \"sm_90a\"", NULL},
    {"cache_dir", get_cache_dir, NULL, "the disk cache's root (None: memory only)", NULL},
    {"device", get_device, NULL, "the CUDA device ordinal", NULL},
    {"closed", get_closed, NULL, "True once closed", NULL},
    {"cuda_context", get_cuda_context, NULL,
     "the CUcontext ptxjit works in (the device's primary context), as an int", NULL},
    {NULL},
};
