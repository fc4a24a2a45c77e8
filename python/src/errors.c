/* errors.c — each ptxjit_status as a Python exception under ptxjit.Error, carrying the
 * library's message (what failed, why, the fix) and, for a failed compile, the whole log, the
 * specialized source and the template line the first error names. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"

/* The exception classes, made once at import: the module keeps them alive. */
static PyObject *error_base;
static PyObject *by_status[PTXJIT_ERR_UNSUPPORTED + 1];

typedef struct {
    const char *name;       /* ptxjit.NAME */
    const char *builtin;    /* a built-in base beside ptxjit.Error, or NULL */
    const char *parent;     /* a ptxjit base beside Error, or NULL */
    const char *doc;
} exception_spec;

/* Each status's class; several statuses share one (UNKNOWN_FAMILY and INVALID_ARGUMENT are
 * bad requests too). */
static const struct {
    ptxjit_status status;
    exception_spec spec;
} classes[] = {
    {PTXJIT_ERR_PARAM, {"ParamError", "ValueError", NULL,
                        "A request ptxjit refuses: the message names the parameter or argument "
                        "and the fix."}},
    {PTXJIT_ERR_TEMPLATE, {"TemplateError", NULL, NULL,
                           "A template that cannot be used (does not parse, unreadable, a "
                           "refused include)."}},
    {PTXJIT_ERR_NO_COMPILER, {"NoCompilerError", NULL, NULL,
                              "NVRTC, nvJitLink or the LLVM plugin could not be loaded."}},
    {PTXJIT_ERR_COMPILE, {"CompileError", NULL, NULL,
                          "A failed compile: .log is the compiler's whole log, .source what it "
                          "was given, .line the template line of the first error (or None)."}},
    {PTXJIT_ERR_CACHE, {"CacheError", NULL, NULL, "The cache could not be used."}},
    {PTXJIT_ERR_CUDA, {"GPUError", NULL, NULL, "A CUDA driver call failed."}},
    {PTXJIT_ERR_NO_DRIVER, {"NoGPUError", NULL, "GPUError",
                            "No CUDA driver or no device: kernels cannot be loaded here."}},
    {PTXJIT_ERR_OUT_OF_MEMORY, {"OutOfMemoryError", "MemoryError", NULL, "Out of memory."}},
    {PTXJIT_ERR_IO, {"FileError", "OSError", NULL, "A file could not be read or written."}},
    {PTXJIT_ERR_UNSUPPORTED, {"UnsupportedError", NULL, NULL,
                              "An operation this build or route does not support."}},
};

static PyObject *make_class(PyObject *module, const exception_spec *spec)
{
    PyObject *bases = NULL, *builtins = PyEval_GetBuiltins(), *cls = NULL;
    PyObject *extra = spec->builtin ? PyDict_GetItemString(builtins, spec->builtin)
                      : spec->parent ? PyObject_GetAttrString(module, spec->parent)
                                     : NULL;
    if (spec->parent && !extra)
        return NULL;
    if (!spec->builtin && spec->parent)
        bases = PyTuple_Pack(1, extra); /* the parent already derives from Error */
    else
        bases = extra ? PyTuple_Pack(2, error_base, extra) : PyTuple_Pack(1, error_base);
    if (spec->parent)
        Py_DECREF(extra);
    char qualified[96];
    snprintf(qualified, sizeof qualified, "ptxjit.%s", spec->name);
    if (bases)
        cls = PyErr_NewExceptionWithDoc(qualified, spec->doc, bases, NULL);
    Py_XDECREF(bases);
    if (cls && PyModule_AddObjectRef(module, spec->name, cls) < 0)
        Py_CLEAR(cls);
    return cls;
}

int pyx_errors_register(PyObject *module)
{
    error_base = PyErr_NewExceptionWithDoc(
        "ptxjit.Error",
        "Every error ptxjit raises: .status is the ptxjit_status number, .status_name its "
        "name (\"PTXJIT_ERR_PARAM\").",
        NULL, NULL);
    if (!error_base || PyModule_AddObjectRef(module, "Error", error_base) < 0)
        return -1;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        PyObject *cls = make_class(module, &classes[i].spec);
        if (!cls)
            return -1;
        by_status[classes[i].status] = cls; /* the module holds the reference */
        Py_DECREF(cls);
    }
    by_status[PTXJIT_ERR_INVALID_ARGUMENT] = by_status[PTXJIT_ERR_PARAM];
    by_status[PTXJIT_ERR_UNKNOWN_FAMILY] = by_status[PTXJIT_ERR_PARAM];
    by_status[PTXJIT_ERR_NO_DEVICE] = by_status[PTXJIT_ERR_NO_DRIVER];
    return 0;
}

PyObject *pyx_exception_for(ptxjit_status status)
{
    if ((int)status > 0 && (int)status <= PTXJIT_ERR_UNSUPPORTED && by_status[status])
        return by_status[status];
    return error_base;
}

/* The template line of the first "FILE(LINE): error" of a compile log; 0 if none. */
static long first_error_line(const char *log)
{
    for (const char *at = strstr(log, "): error"); at; at = strstr(at + 1, "): error")) {
        const char *open = at;
        while (open > log && open[-1] != '(' && open[-1] != '\n')
            open--;
        if (open > log && open[-1] == '(')
            return strtol(open, NULL, 10);
    }
    return 0;
}

static int set_attributes(PyObject *error, ptxjit_status status)
{
    PyObject *number = PyLong_FromLong((long)status);
    PyObject *name = PyUnicode_FromString(ptxjit_status_name(status));
    int failed = !number || !name || PyObject_SetAttrString(error, "status", number) < 0 ||
                 PyObject_SetAttrString(error, "status_name", name) < 0;
    Py_XDECREF(number);
    Py_XDECREF(name);
    if (failed || status != PTXJIT_ERR_COMPILE)
        return failed ? -1 : 0;
    const char *log = ptxjit_last_compile_log();
    long line = first_error_line(log);
    PyObject *py_log = PyUnicode_DecodeUTF8(log, (Py_ssize_t)strlen(log), "replace");
    const char *source = ptxjit_last_compile_source();
    PyObject *py_source = PyUnicode_DecodeUTF8(source, (Py_ssize_t)strlen(source), "replace");
    PyObject *py_line = line > 0 ? PyLong_FromLong(line) : Py_NewRef(Py_None);
    failed = !py_log || !py_source || !py_line || PyObject_SetAttrString(error, "log", py_log) < 0 ||
             PyObject_SetAttrString(error, "source", py_source) < 0 ||
             PyObject_SetAttrString(error, "line", py_line) < 0;
    Py_XDECREF(py_log);
    Py_XDECREF(py_source);
    Py_XDECREF(py_line);
    return failed ? -1 : 0;
}

static PyObject *raise_text(ptxjit_status status, const char *text)
{
    PyObject *cls = pyx_exception_for(status);
    PyObject *message = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
    PyObject *error = message ? PyObject_CallFunctionObjArgs(cls, message, NULL) : NULL;
    Py_XDECREF(message);
    if (error && set_attributes(error, status) == 0)
        PyErr_SetObject(cls, error);
    Py_XDECREF(error);
    return NULL;
}

PyObject *pyx_raise(ptxjit_status status)
{
    const char *text = ptxjit_last_error();
    return raise_text(status, *text ? text : ptxjit_status_name(status));
}

PyObject *pyx_raise_message(ptxjit_status status, const char *format, ...)
{
    char text[2048];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    return raise_text(status, text);
}
