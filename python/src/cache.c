/* cache.c — the disk cache from Python: counters, clearing and trimming, bundles (export and
 * import), and warm-up of a list of requests. Each call that reads or writes many files or
 * compiles runs with the GIL released. */
#include <stdlib.h>

#include "ext.h"

static ptxjit_context *open_of(PyObject *self)
{
    return pyx_context_open((pyx_context *)self);
}

PyObject *pyx_cache_stats(PyObject *self, PyObject *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    if (!context)
        return NULL;
    ptxjit_cache_stats s;
    ptxjit_status status;
    /* Without the GIL: the counters wait for the context's copier to store its queue, and its
     * events (an eviction) take the GIL. */
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_cache_stats_get(&s, context);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    if (status != PTXJIT_OK)
        return pyx_raise(status);
    return Py_BuildValue(
        "{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:O,s:K,s:K,s:K,s:K,s:K}",
        "entries", s.entries, "bytes", s.bytes, "hits", s.hits, "misses", s.misses, "stores",
        s.stores, "corrupt", s.corrupt, "evicted", s.evicted, "max_bytes", s.max_bytes,
        "tune_records", s.tune_records, "remote_hits", s.remote_hits, "remote_misses",
        s.remote_misses, "remote_rejected", s.remote_rejected, "remote_errors", s.remote_errors,
        "remote_publishes", s.remote_publishes, "remote_ms", s.remote_ms, "remote_configured",
        s.remote_configured ? Py_True : Py_False, "compile_waits", s.compile_waits,
        "compile_wait_timeouts", s.compile_wait_timeouts, "lease_wins", s.lease_wins,
        "lease_waits", s.lease_waits, "lease_timeouts", s.lease_timeouts);
}

PyObject *pyx_cache_clear(PyObject *self, PyObject *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    if (!context)
        return NULL;
    uint64_t removed = 0;
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_cache_clear(context, &removed);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    return status == PTXJIT_OK ? PyLong_FromUnsignedLongLong(removed) : pyx_raise(status);
}

PyObject *pyx_cache_trim(PyObject *self, PyObject *unused)
{
    (void)unused;
    ptxjit_context *context = open_of(self);
    if (!context)
        return NULL;
    uint64_t evicted = 0, temp_files = 0;
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_cache_trim(context, &evicted, &temp_files);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    return status == PTXJIT_OK ? Py_BuildValue("(KK)", evicted, temp_files) : pyx_raise(status);
}

static PyObject *bundle_dict(const ptxjit_bundle_stats *s)
{
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "entries", s->entries, "records",
                         s->records, "corrupt", s->corrupt, "foreign", s->foreign, "unsafe",
                         s->unsafe, "untrusted", s->untrusted, "duplicates", s->duplicates);
}

/* families as a NULL-terminated array of UTF-8 names kept alive by *keep (a list). */
static int name_array(PyObject *sequence, const char ***out, int *count, PyObject **keep)
{
    *out = NULL, *count = 0, *keep = NULL;
    if (!sequence || sequence == Py_None)
        return 0;
    if (PyUnicode_Check(sequence)) {
        PyErr_SetString(PyExc_TypeError, "expected a list of str, not a str");
        return -1;
    }
    *keep = PySequence_List(sequence);
    if (!*keep)
        return -1;
    Py_ssize_t n = PyList_Size(*keep);
    *out = calloc((size_t)n + 1, sizeof **out);
    if (!*out) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (pyx_utf8(PyList_GetItem(*keep, i), &(*out)[i], "each item") < 0)
            return -1;
        if (!(*out)[i]) {
            PyErr_SetString(PyExc_TypeError, "each item must be a str");
            return -1;
        }
    }
    *count = (int)n;
    return 0;
}

PyObject *pyx_cache_export(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"path", "families", NULL};
    PyObject *path_object, *families_object = Py_None, *path = NULL, *keep = NULL;
    const char **families = NULL, *path_text;
    int count = 0;
    ptxjit_context *context;
    PyObject *result = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O", keywords, &path_object,
                                     &families_object) ||
        !(context = open_of(self)) || !(path = PyOS_FSPath(path_object)) ||
        pyx_utf8(path, &path_text, "path") < 0 ||
        name_array(families_object, &families, &count, &keep) < 0)
        goto done;
    ptxjit_bundle_stats stats = {0};
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_cache_export(context, path_text, families, count, &stats);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    result = status == PTXJIT_OK ? bundle_dict(&stats) : pyx_raise(status);
done:
    free(families);
    Py_XDECREF(keep);
    Py_XDECREF(path);
    return result;
}

PyObject *pyx_cache_import(PyObject *self, PyObject *args)
{
    PyObject *path_object, *path = NULL;
    const char *path_text;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "O", &path_object) || !(context = open_of(self)) ||
        !(path = PyOS_FSPath(path_object)) || pyx_utf8(path, &path_text, "path") < 0) {
        Py_XDECREF(path);
        return NULL;
    }
    ptxjit_bundle_stats stats = {0};
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_cache_import(context, path_text, &stats);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    Py_DECREF(path);
    return status == PTXJIT_OK ? bundle_dict(&stats) : pyx_raise(status);
}

static const char *origin_name(ptxjit_origin origin)
{
    static const char *const names[] = {"compiled", "disk", "memory", "remote", "shared"};
    return (unsigned)origin < 5 ? names[origin] : "unknown";
}

/* progress(done, total, params), called by the library's threads: takes the GIL; an
 * exception it raises is reported as unraisable (it cannot stop the compiles). */
void pyx_progress_call(void *user, int done, int total, const char *params)
{
    PyGILState_STATE state = PyGILState_Ensure();
    PyObject *result = PyObject_CallFunction((PyObject *)user, "iis", done, total,
                                             params ? params : "");
    if (!result)
        PyErr_WriteUnraisable((PyObject *)user);
    Py_XDECREF(result);
    PyGILState_Release(state);
}

static PyObject *warm_result(const ptxjit_warm_result *r)
{
    PyObject *items = PyList_New(0);
    for (int i = 0; items && i < r->count; i++) {
        const ptxjit_warm_item *item = &r->items[i];
        PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:s}", "request", item->request, "status",
                                    ptxjit_status_name(item->status), "origin",
                                    origin_name(item->origin), "message",
                                    item->message ? item->message : "");
        if (!d || PyList_Append(items, d) < 0)
            Py_CLEAR(items);
        Py_XDECREF(d);
    }
    if (!items)
        return NULL;
    PyObject *result = Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:d,s:O}", "count", r->count,
                                     "compiled", r->compiled, "cached", r->cached, "refused",
                                     r->refused, "compile_processes", r->compile_processes,
                                     "wall_ms", r->wall_ms, "items", items);
    Py_DECREF(items);
    return result;
}

PyObject *pyx_warm(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"requests", "threads", "progress", NULL};
    PyObject *requests_object, *progress = Py_None, *keep = NULL, *result = NULL;
    int threads = 0, count = 0;
    const char **requests = NULL;
    ptxjit_context *context;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|iO", keywords, &requests_object, &threads,
                                     &progress) ||
        !(context = open_of(self)) || name_array(requests_object, &requests, &count, &keep) < 0)
        goto done;
    ptxjit_warm_options options = {.threads = threads};
    if (progress != Py_None) {
        options.progress = pyx_progress_call;
        options.progress_user = progress;
    }
    ptxjit_warm_result *warmed = NULL;
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_warm(&warmed, context, requests, count, &options);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    result = status == PTXJIT_OK ? warm_result(warmed) : pyx_raise(status);
    ptxjit_warm_result_free(warmed);
done:
    free(requests);
    Py_XDECREF(keep);
    return result;
}
