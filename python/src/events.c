/* events.c — Context(on_event=fn): the library's events (include/ptxjit.h, "Events") handed to
 * a Python callable as dicts. The library calls from whatever thread met the event (a request's,
 * a pool's, the copier's), outside its locks, so the callback takes the GIL itself; every call
 * that can emit an event, or wait for a library thread that can (a compile in flight, the
 * copier's queue), runs with the GIL released (context.c, ops.c, tune.c, cache.c,
 * context_catalog.c), so none waits for a thread that waits for the GIL. From interpreter exit on, events are dropped: a thread
 * of the library must not ask a finalizing interpreter for its GIL. */
#include "ext.h"

static int stopped; /* atomic: set once the interpreter exits (ptxjit/__init__.py, atexit) */

static const char *kind_name(ptxjit_event_kind kind)
{
    static const char *const names[] = {
        "",          "request_start",  "request_end", "compile_start",
        "compile_end", "remote_error", "remote_backoff", "eviction",
        "tune_start", "tune_progress", "tune_end",
    };
    return (unsigned)kind < sizeof names / sizeof *names ? names[kind] : "unknown";
}

/* The event as a dict of every field, names as in the C struct (kind and tier as names, status
 * as "PTXJIT_OK"-like text). */
static PyObject *event_dict(const ptxjit_event *e)
{
    return Py_BuildValue(
        "{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:d,s:(dddd),s:s,s:K,s:K,s:i,s:i}", "kind",
        kind_name(e->kind), "tier", ptxjit_tier_name(e->tier), "status",
        ptxjit_status_name(e->status), "family", e->family, "params", e->params, "options",
        e->options, "key", e->key, "ms", e->ms, "stage_ms", e->stage_ms[0], e->stage_ms[1],
        e->stage_ms[2], e->stage_ms[3], "detail", e->detail ? e->detail : "", "count",
        (unsigned long long)e->count, "bytes", (unsigned long long)e->bytes, "done", e->done,
        "total", e->total);
}

void pyx_event_call(void *user, const ptxjit_event *event)
{
    if (__atomic_load_n(&stopped, __ATOMIC_ACQUIRE))
        return;
    PyGILState_STATE state = PyGILState_Ensure();
    PyObject *dict = event_dict(event);
    PyObject *result = dict ? PyObject_CallFunctionObjArgs((PyObject *)user, dict, NULL) : NULL;
    if (!result) /* the request goes on: an exception cannot cross the library */
        PyErr_WriteUnraisable((PyObject *)user);
    Py_XDECREF(result);
    Py_XDECREF(dict);
    PyGILState_Release(state);
}

PyObject *pyx_events_stop(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    __atomic_store_n(&stopped, 1, __ATOMIC_RELEASE);
    Py_RETURN_NONE;
}
