/* tune.c — ptxjit_tune from Python (Context.tune wraps it): a built-in family tunes on its own
 * op, a user family through Python callables: run(kernel, stream) launches a candidate,
 * check(kernel, stream) says whether its result is right. The library calls them on its own
 * threads' behalf with the GIL released around the whole tuning; each call takes the GIL. */
#include <stdarg.h>
#include <string.h>

#include "ext.h"

/* libptxjit's internal setter of the thread's last error (src/internal.h), the one internal
 * the extension uses: a callback's exception becomes the candidate's message. */
ptxjit_status pj_error(ptxjit_status status, const char *format, ...);

typedef struct {
    pyx_context *owner;
    PyObject *run, *check;
} callbacks;

/* The status and message of the exception being handled (cleared). */
static ptxjit_status exception_status(const char *what)
{
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_NormalizeException(&type, &value, &trace);
    ptxjit_status status = PTXJIT_ERR_INVALID_ARGUMENT;
    PyObject *number = value ? PyObject_GetAttrString(value, "status") : NULL;
    if (number && PyLong_Check(number))
        status = (ptxjit_status)PyLong_AsLong(number);
    PyErr_Clear();
    Py_XDECREF(number);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    PyObject *name = type ? PyObject_GetAttrString(type, "__name__") : NULL;
    const char *message = text ? PyUnicode_AsUTF8AndSize(text, NULL) : NULL;
    const char *kind = name ? PyUnicode_AsUTF8AndSize(name, NULL) : NULL;
    PyErr_Clear();
    if (status == PTXJIT_OK)
        status = PTXJIT_ERR_INVALID_ARGUMENT;
    pj_error(status, "%s raised %s: %s", what, kind ? kind : "an exception",
             message ? message : "");
    Py_XDECREF(text);
    Py_XDECREF(name);
    Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(trace);
    return status;
}

static ptxjit_status call_back(callbacks *c, PyObject *function, ptxjit_kernel *kernel,
                               void *stream, const char *what)
{
    PyGILState_STATE state = PyGILState_Ensure();
    PyObject *wrapper = pyx_context_wrap_kernel(c->owner, kernel, PTXJIT_ORIGIN_COMPILED);
    PyObject *result = wrapper ? PyObject_CallFunction(function, "ON", wrapper,
                                                       PyLong_FromVoidPtr(stream))
                               : NULL;
    ptxjit_status status = PTXJIT_OK;
    if (!result)
        status = exception_status(what);
    else if (result == Py_False)
        status = pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "%s returned False: the result of %s "
                          "is wrong", what, ptxjit_kernel_params(kernel));
    Py_XDECREF(result);
    Py_XDECREF(wrapper);
    PyGILState_Release(state);
    return status;
}

static ptxjit_status run_callback(void *user, ptxjit_kernel *kernel, void *stream)
{
    callbacks *c = user;
    return call_back(c, c->run, kernel, stream, "run");
}

static ptxjit_status check_callback(void *user, ptxjit_kernel *kernel, void *stream)
{
    callbacks *c = user;
    return call_back(c, c->check, kernel, stream, "check");
}

static PyObject *text(const char *value)
{
    return value ? PyUnicode_FromString(value) : Py_NewRef(Py_None);
}

static PyObject *candidate_dict(const ptxjit_tune_result *result, int index)
{
    ptxjit_tune_candidate c;
    ptxjit_status status = ptxjit_tune_result_candidate(&c, result, index);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    return Py_BuildValue("{s:s,s:s,s:s,s:d,s:d,s:i,s:O,s:O,s:O,s:i}", "params", c.params,
                         "status", ptxjit_status_name(c.status), "message",
                         c.message ? c.message : "", "median_ms", c.median_ms, "spread",
                         c.spread, "runs", c.runs, "abandoned", c.abandoned ? Py_True : Py_False,
                         "winner", c.winner ? Py_True : Py_False, "pruned",
                         c.pruned ? Py_True : Py_False, "rounds", c.rounds);
}

PyObject *pyx_tune_result_dict(const ptxjit_tune_result *result)
{
    ptxjit_tune_info i;
    ptxjit_status status = ptxjit_tune_result_info(&i, result);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    PyObject *candidates = PyList_New(0);
    for (int n = 0; candidates && n < i.candidate_count; n++) {
        PyObject *c = candidate_dict(result, n);
        if (!c || PyList_Append(candidates, c) < 0)
            Py_CLEAR(candidates);
        Py_XDECREF(c);
    }
    if (!candidates)
        return NULL;
    return Py_BuildValue(
        "{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:O,s:N,s:i,s:i,s:i,s:i,s:d,s:d,s:d,s:i,s:i,s:i,s:i,s:N}",
        "family", text(i.family), "problem", text(i.problem), "fixed", text(i.fixed), "space",
        text(i.space), "winner", text(i.winner), "reference", text(i.reference), "device",
        text(i.device), "from_record", i.from_record ? Py_True : Py_False, "record_path",
        text(i.record_path), "candidate_count", i.candidate_count, "points_considered",
        i.points_considered, "points_refused", i.points_refused, "points_merged",
        i.points_merged, "best_ms", i.best_ms, "noise", i.noise, "wall_ms", i.wall_ms,
        "compile_processes", i.compile_processes, "candidates_pruned", i.candidates_pruned,
        "candidates_timed", i.candidates_timed, "rounds", i.rounds, "candidates", candidates);
}

static int optional_callable(PyObject *value, const char *name)
{
    if (value == Py_None || PyCallable_Check(value))
        return 0;
    PyErr_Format(PyExc_TypeError, "%s must be callable or None", name);
    return -1;
}

PyObject *pyx_tune(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"family", "problem", "fixed", "space", "run", "check", "threads",
                               "runs", "retune", "compile_only", "exhaustive", "progress",
                               "bucket", NULL};
    const char *family, *problem, *fixed = NULL, *space = NULL;
    PyObject *run = Py_None, *check = Py_None, *progress = Py_None;
    ptxjit_tune_options o;
    ptxjit_tune_options_init(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ss|zzOOiipppOi", keywords, &family, &problem,
                                     &fixed, &space, &run, &check, &o.threads, &o.runs,
                                     &o.retune, &o.compile_only, &o.exhaustive, &progress,
                                     &o.bucket) ||
        optional_callable(run, "run") < 0 || optional_callable(check, "check") < 0 ||
        optional_callable(progress, "progress") < 0)
        return NULL;
    pyx_context *owner = (pyx_context *)self;
    ptxjit_context *context = pyx_context_open(owner);
    if (!context)
        return NULL;
    callbacks c = {owner, run, check};
    o.problem = problem, o.fixed = fixed, o.space = space, o.user = &c;
    o.run = run != Py_None ? run_callback : NULL;
    o.check = check != Py_None ? check_callback : NULL;
    if (progress != Py_None)
        o.progress = pyx_progress_call, o.progress_user = progress;
    ptxjit_tune_result *result = NULL;
    ptxjit_status status;
    PYX_BUSY_BEGIN(owner);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_tune(&result, context, family, &o);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END(owner);
    PyObject *dict = status == PTXJIT_OK ? pyx_tune_result_dict(result) : pyx_raise(status);
    ptxjit_tune_result_free(result);
    return dict;
}

PyObject *pyx_tune_list(PyObject *self, PyObject *unused)
{
    (void)unused;
    ptxjit_context *context = pyx_context_open((pyx_context *)self);
    if (!context)
        return NULL;
    ptxjit_tune_result **list = NULL;
    int count = 0;
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_tune_list(&list, &count, context);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    PyObject *records = PyList_New(0);
    for (int i = 0; records && i < count; i++) {
        PyObject *record = pyx_tune_result_dict(list[i]);
        if (!record || PyList_Append(records, record) < 0)
            Py_CLEAR(records);
        Py_XDECREF(record);
    }
    ptxjit_tune_list_free(list, count);
    return records;
}

PyObject *pyx_tune_clear(PyObject *self, PyObject *unused)
{
    (void)unused;
    ptxjit_context *context = pyx_context_open((pyx_context *)self);
    if (!context)
        return NULL;
    uint64_t removed = 0;
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_tune_clear(context, &removed);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    return status == PTXJIT_OK ? PyLong_FromUnsignedLongLong(removed) : pyx_raise(status);
}
