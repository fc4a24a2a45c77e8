/* ops.c — the built-in families' ops on device addresses (ptxjit.ops turns arrays into these
 * arguments): reduce, transpose, softmax and the strided matmul with its epilogue, each on a
 * stream, with the GIL released (the first call of a shape may compile). */
#include "ext.h"

/* Runs call with the GIL released while the context counts it busy. */
#define RUN_RELEASED(self, status, call)                                                  \
    do {                                                                                  \
        PYX_BUSY_BEGIN((pyx_context *)(self));                                            \
        Py_BEGIN_ALLOW_THREADS status = (call);                                           \
        Py_END_ALLOW_THREADS PYX_BUSY_END((pyx_context *)(self));                         \
    } while (0)

static PyObject *done(ptxjit_status status)
{
    return status == PTXJIT_OK ? Py_NewRef(Py_None) : pyx_raise(status);
}

/* _reduce(params, input, n, result, stream): the sum lands at result on stream. */
PyObject *pyx_op_reduce(PyObject *self, PyObject *args)
{
    const char *params;
    unsigned long long input, n, result, stream;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "zKKKK", &params, &input, &n, &result, &stream) ||
        !(context = pyx_context_open((pyx_context *)self)))
        return NULL;
    ptxjit_status status;
    RUN_RELEASED(self, status, ptxjit_reduce_async(context, params, input, (size_t)n, result,
                                                   (void *)(uintptr_t)stream));
    return done(status);
}

/* _transpose(params, input, output, rows, cols, stream) */
PyObject *pyx_op_transpose(PyObject *self, PyObject *args)
{
    const char *params;
    unsigned long long input, output, rows, cols, stream;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "zKKKKK", &params, &input, &output, &rows, &cols, &stream) ||
        !(context = pyx_context_open((pyx_context *)self)))
        return NULL;
    ptxjit_status status;
    RUN_RELEASED(self, status, ptxjit_transpose(context, params, input, output, (size_t)rows,
                                                (size_t)cols, (void *)(uintptr_t)stream));
    return done(status);
}

/* _softmax(params, input, output, rows, cols, stream) */
PyObject *pyx_op_softmax(PyObject *self, PyObject *args)
{
    const char *params;
    unsigned long long input, output, rows, cols, stream;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "zKKKKK", &params, &input, &output, &rows, &cols, &stream) ||
        !(context = pyx_context_open((pyx_context *)self)))
        return NULL;
    ptxjit_status status;
    RUN_RELEASED(self, status, ptxjit_softmax(context, params, input, output, (size_t)rows,
                                              (size_t)cols, (void *)(uintptr_t)stream));
    return done(status);
}

/* _matmul(params, a, b, c, m, n, k, (lda, ldb, ldc, batch, stride_a, stride_b, stride_c),
 *         (alpha, beta, bias), stream) */
PyObject *pyx_op_matmul(PyObject *self, PyObject *args)
{
    const char *params;
    unsigned long long a, b, c, m, n, k, stream, bias;
    unsigned long long lda, ldb, ldc, batch, stride_a, stride_b, stride_c;
    float alpha, beta;
    ptxjit_context *context;
    if (!PyArg_ParseTuple(args, "zKKKKKK(KKKKKKK)(ffK)K", &params, &a, &b, &c, &m, &n, &k, &lda,
                          &ldb, &ldc, &batch, &stride_a, &stride_b, &stride_c, &alpha, &beta,
                          &bias, &stream) ||
        !(context = pyx_context_open((pyx_context *)self)))
        return NULL;
    ptxjit_matmul_layout layout = {lda, ldb, ldc, batch, stride_a, stride_b, stride_c};
    ptxjit_matmul_epilogue epilogue;
    ptxjit_matmul_epilogue_init(&epilogue);
    epilogue.alpha = alpha, epilogue.beta = beta, epilogue.bias = bias;
    ptxjit_status status;
    RUN_RELEASED(self, status,
                 ptxjit_matmul_strided(context, params, a, b, c, (size_t)m, (size_t)n, (size_t)k,
                                       &layout, &epilogue, (void *)(uintptr_t)stream));
    return done(status);
}
