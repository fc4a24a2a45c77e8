/* module.c — the _ptxjit extension module: its types, exceptions and module-level functions.
 * Single-phase initialization: one module per process, whose types and exception classes
 * live as long as it (the files keep them in static variables). */
#include "ext.h"

int pyx_utf8(PyObject *object, const char **out, const char *what)
{
    *out = NULL;
    if (!object || object == Py_None)
        return 0;
    if (!PyUnicode_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %S", what,
                     (PyObject *)Py_TYPE(object));
        return -1;
    }
    *out = PyUnicode_AsUTF8AndSize(object, NULL);
    return *out ? 0 : -1;
}

static PyObject *device_count(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    int count = 0;
    ptxjit_status status;
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_device_count(&count);
    Py_END_ALLOW_THREADS
    (void)status; /* no driver or no device: 0 */
    return PyLong_FromLong(count);
}

static PyObject *status_name(PyObject *module, PyObject *args)
{
    (void)module;
    int status;
    if (!PyArg_ParseTuple(args, "i", &status))
        return NULL;
    return PyUnicode_FromString(ptxjit_status_name((ptxjit_status)status));
}

static PyMethodDef module_functions[] = {
    {"device_count", device_count, METH_NOARGS,
     "device_count(): CUDA devices ptxjit can use (0 without a driver or device)"},
    {"status_name", status_name, METH_VARARGS, "status_name(n): \"PTXJIT_ERR_PARAM\" and the like"},
    {"_stop_events", pyx_events_stop, METH_NOARGS,
     "_stop_events(): drop events from now on (called at interpreter exit)"},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_ptxjit",
    "The C core of the ptxjit package, over libptxjit (stable ABI).", -1, module_functions,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__ptxjit(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (!module)
        return NULL;
    if (pyx_errors_register(module) < 0 || pyx_context_register(module) < 0 ||
        pyx_kernel_register(module) < 0 || pyx_pointers_init() < 0 || pyx_launch_init() < 0 ||
        PyModule_AddStringConstant(module, "version", PTXJIT_VERSION) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
