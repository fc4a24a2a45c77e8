/* ext.h — what the files of the _ptxjit extension share: the stable ABI (one build imports on
 * every CPython from 3.11 on), the Context and Kernel objects, and each file's entry points.
 * The extension is a client of libptxjit (linked statically) through ptxjit.h. */
#ifndef PTXJIT_EXT_H
#define PTXJIT_EXT_H

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "ptxjit.h"

/* ---- context.c: ptxjit.Context ---- */
typedef struct {
    PyObject_HEAD
    ptxjit_context *context;  /* NULL once closed */
    PyObject *memo;           /* request tuple -> Kernel: ctx.kernel() answered without the C
                                 call (cleared when templates change) */
    PyObject *by_pointer;     /* int(ptxjit_kernel *) -> Kernel: one wrapper per kernel */
    int busy;                 /* calls running with the GIL released; close() waits for 0 */
    int device;
    PyObject *on_event;       /* the callable given as on_event (NULL: none); released only
                                 after ptxjit_close, whose threads may still call it */
} pyx_context;

extern PyTypeObject *pyx_context_type;
int pyx_context_register(PyObject *module);
/* The open context of self, or NULL with an exception set (closed). */
ptxjit_context *pyx_context_open(pyx_context *self);
/* The Kernel object wrapping kernel (made once per kernel), new reference. */
PyObject *pyx_context_wrap_kernel(pyx_context *self, ptxjit_kernel *kernel, ptxjit_origin origin);
/* Brackets a call that releases the GIL: close() waits until none is running. */
#define PYX_BUSY_BEGIN(ctx) ((ctx)->busy++)
#define PYX_BUSY_END(ctx) ((ctx)->busy--)

/* ---- context_catalog.c: Context's methods and properties beyond requests ---- */
extern PyMethodDef pyx_context_catalog_methods[];
extern PyGetSetDef pyx_context_getset[];

/* ---- schema.c: families as data ---- */
PyObject *pyx_family_info(ptxjit_context *context, const char *family);

/* ---- layout.c: an entry's parameters, read once per kernel ---- */
enum { PYX_PARAM_INT, PYX_PARAM_FLOAT, PYX_PARAM_BYTES };
typedef struct {
    uint32_t size;
    uint8_t kind;     /* PYX_PARAM_* from the PTX type */
    char type[8];     /* the PTX type without its dot: "u64", "f32", "b8" */
} pyx_param;
typedef struct {
    char *name;
    PyObject *py_name; /* str, compared with entry= */
    int count;
    pyx_param *params;
} pyx_entry;
/* Fills entries[0..count) for kernel; 0, or -1 with an exception set. */
int pyx_layout_read(pyx_entry **entries, int *count, ptxjit_kernel *kernel);
void pyx_layout_free(pyx_entry *entries, int count);
/* "(u64 a, u64 b, f32 c)"-like description of an entry's parameters for messages. */
PyObject *pyx_layout_describe(const pyx_entry *entry);

/* ---- events.c: Context(on_event=...) ---- */
/* The ptxjit_event_fn: user is the callable. */
void pyx_event_call(void *user, const ptxjit_event *event);
/* _stop_events(): from interpreter exit on, events are dropped. */
PyObject *pyx_events_stop(PyObject *module, PyObject *unused);

/* ---- kernel.c: ptxjit.Kernel ---- */
typedef struct {
    PyObject_HEAD
    pyx_context *owner;       /* strong reference: the kernel lives in its context */
    ptxjit_kernel *kernel;
    ptxjit_origin origin;     /* how the first request for it was answered */
    int entry_count;
    pyx_entry *entries;
} pyx_kernel;

extern PyTypeObject *pyx_kernel_type;
int pyx_kernel_register(PyObject *module);
PyObject *pyx_kernel_new(pyx_context *owner, ptxjit_kernel *kernel, ptxjit_origin origin);

/* ---- launch.c: calling a Kernel ---- */
PyObject *pyx_kernel_call(PyObject *self, PyObject *args, PyObject *kwargs);
int pyx_launch_init(void);

/* ---- pointers.c: device pointers and streams of other libraries' objects ---- */
/* The device address of an array object (torch, CuPy, __cuda_array_interface__, __dlpack__);
 * 0 with no exception for an object that is none of these; -1 with an exception. */
int pyx_device_pointer(PyObject *object, uint64_t *out);
/* A stream handle from None, an int, a torch or CuPy stream, or __cuda_stream__; -1 with an
 * exception. */
int pyx_stream_handle(PyObject *object, void **out);
int pyx_pointers_init(void);
void pyx_pointers_clear(void);

/* ---- errors.c: ptxjit_status as exceptions ---- */
int pyx_errors_register(PyObject *module);
/* Sets the exception for status with ptxjit_last_error() (and the compile log and source for
 * a compile error); returns NULL for `return pyx_raise(status);`. */
PyObject *pyx_raise(ptxjit_status status);
/* The same with a message of the extension's own. */
PyObject *pyx_raise_message(ptxjit_status status, const char *format, ...);
/* ptxjit.ParamError etc., borrowed. */
PyObject *pyx_exception_for(ptxjit_status status);

/* ---- cache.c, tune.c, ops.c, memory.c: the rest of the API, as Context methods ---- */
PyObject *pyx_cache_stats(PyObject *self, PyObject *unused);
PyObject *pyx_cache_clear(PyObject *self, PyObject *unused);
PyObject *pyx_cache_trim(PyObject *self, PyObject *unused);
PyObject *pyx_cache_export(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pyx_cache_import(PyObject *self, PyObject *args);
PyObject *pyx_warm(PyObject *self, PyObject *args, PyObject *kwargs);
void pyx_progress_call(void *user, int done, int total, const char *params);
PyObject *pyx_tune(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pyx_tune_list(PyObject *self, PyObject *unused);
PyObject *pyx_tune_result_dict(const ptxjit_tune_result *result);
PyObject *pyx_tune_clear(PyObject *self, PyObject *unused);
PyObject *pyx_op_reduce(PyObject *self, PyObject *args);
PyObject *pyx_op_transpose(PyObject *self, PyObject *args);
PyObject *pyx_op_softmax(PyObject *self, PyObject *args);
PyObject *pyx_op_matmul(PyObject *self, PyObject *args);
PyObject *pyx_alloc(PyObject *self, PyObject *args);
PyObject *pyx_free(PyObject *self, PyObject *args);
PyObject *pyx_copy_to_device(PyObject *self, PyObject *args);
PyObject *pyx_copy_to_host(PyObject *self, PyObject *args);
PyObject *pyx_synchronize(PyObject *self, PyObject *args);

/* *out: a str argument as UTF-8, valid while object lives (NULL for None or a NULL object);
 * 0, or -1 with a TypeError naming what for anything else. */
int pyx_utf8(PyObject *object, const char **out, const char *what);

#endif
