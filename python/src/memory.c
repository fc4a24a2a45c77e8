/* memory.c — device memory through ptxjit for programs with no CUDA library of their own
 * (ptxjit.DeviceArray is built on these), and waiting for a stream or the device. */
#include "ext.h"

static ptxjit_context *open_of(PyObject *self)
{
    return pyx_context_open((pyx_context *)self);
}

PyObject *pyx_alloc(PyObject *self, PyObject *args)
{
    Py_ssize_t bytes;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "n", &bytes) || !(context = open_of(self)))
        return NULL;
    ptxjit_devptr pointer = 0;
    ptxjit_status status = ptxjit_alloc(&pointer, context, (size_t)(bytes > 0 ? bytes : 1));
    return status == PTXJIT_OK ? PyLong_FromUnsignedLongLong(pointer) : pyx_raise(status);
}

PyObject *pyx_free(PyObject *self, PyObject *args)
{
    unsigned long long pointer;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "K", &pointer))
        return NULL;
    if (!(context = ((pyx_context *)self)->context)) /* closing freed it with the context */
        Py_RETURN_NONE;
    ptxjit_status status = ptxjit_free(context, pointer);
    return status == PTXJIT_OK ? Py_NewRef(Py_None) : pyx_raise(status);
}

PyObject *pyx_copy_to_device(PyObject *self, PyObject *args)
{
    unsigned long long pointer;
    Py_buffer data;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "Ky*", &pointer, &data))
        return NULL;
    ptxjit_status status = PTXJIT_OK;
    if ((context = open_of(self))) {
        Py_BEGIN_ALLOW_THREADS
        status = ptxjit_copy_to_device(context, pointer, data.buf, (size_t)data.len);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&data);
    if (!context)
        return NULL;
    return status == PTXJIT_OK ? Py_NewRef(Py_None) : pyx_raise(status);
}

PyObject *pyx_copy_to_host(PyObject *self, PyObject *args)
{
    unsigned long long pointer;
    Py_ssize_t bytes;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "Kn", &pointer, &bytes) || !(context = open_of(self)))
        return NULL;
    PyObject *buffer = PyByteArray_FromStringAndSize(NULL, bytes);
    if (!buffer)
        return NULL;
    ptxjit_status status;
    char *into = PyByteArray_AsString(buffer);
    Py_BEGIN_ALLOW_THREADS
    status = ptxjit_copy_to_host(context, into, pointer, (size_t)bytes);
    Py_END_ALLOW_THREADS
    if (status == PTXJIT_OK)
        return buffer;
    Py_DECREF(buffer);
    return pyx_raise(status);
}

PyObject *pyx_synchronize(PyObject *self, PyObject *args)
{
    PyObject *stream_object = Py_None;
    void *stream = NULL;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "|O", &stream_object) ||
        pyx_stream_handle(stream_object, &stream) < 0 || !(context = open_of(self)))
        return NULL;
    ptxjit_status status;
    PYX_BUSY_BEGIN((pyx_context *)self);
    Py_BEGIN_ALLOW_THREADS
    status = stream_object == Py_None ? ptxjit_synchronize(context)
                                      : ptxjit_stream_synchronize(context, stream);
    Py_END_ALLOW_THREADS
    PYX_BUSY_END((pyx_context *)self);
    return status == PTXJIT_OK ? Py_NewRef(Py_None) : pyx_raise(status);
}
