/* stage.c — operands the TMA cannot take as they are, copied into padded scratch on the
 * caller's stream (stage.h). */
#include <stdio.h>
#include <string.h>

#include "families/matmul/stage.h"

/* A row the TMA takes: a whole number of 16-byte units, from a 16-byte aligned buffer. */
static int tma_row(uint64_t address, size_t elements, int bytes)
{
    return address % 16 == 0 && (uint64_t)elements * (uint64_t)bytes % 16 == 0;
}

static size_t padded(size_t elements, int bytes)
{
    const size_t unit = (size_t)(16 / bytes);
    return (elements + unit - 1) / unit * unit;
}

pj_matmul_stage_need pj_matmul_stage_needed(const matmul_config *config, uint64_t a, uint64_t b,
                                            uint64_t c, size_t m, size_t n, size_t k)
{
    (void)m;
    pj_matmul_stage_need need = {0, 0, 0, n};
    if (!pj_matmul_is_wgmma(config->variant))
        return need;
    const int in = pj_matmul_type_bytes(config->dtype), out = pj_dtype_bytes(config->out);
    need.a = !tma_row(a, k, in);
    need.b = !tma_row(b, config->b_nk ? k : n, in);
    /* TMA stores take 16-byte rows; the direct stores write pairs of elements, which need
     * an even row and a buffer aligned to the pair. */
    need.c = config->store_tma ? !tma_row(c, n, out) : n % 2 || c % (uint64_t)(2 * out);
    if (need.c)
        need.c_pitch = padded(n, out);
    return need;
}

void pj_matmul_stage_describe(char *out, size_t size, const matmul_config *config,
                              pj_matmul_stage_need need, size_t m, size_t n, size_t k)
{
    const int in = pj_matmul_type_bytes(config->dtype), bytes = pj_dtype_bytes(config->out);
    const char *type = pj_matmul_type_name(config->dtype);
    size_t used = 0;
    out[0] = '\0';
    if (need.a)
        used += (size_t)snprintf(out + used, size - used, "%sA's rows (k = %zu %s: %zu bytes) "
                                 "are copied into rows of %zu bytes", used ? "; " : "", k, type,
                                 k * (size_t)in, padded(k, in) * (size_t)in);
    if (need.b && used < size) {
        const size_t row = config->b_nk ? k : n;
        used += (size_t)snprintf(out + used, size - used, "%sB's rows (%s = %zu %s: %zu bytes) "
                                 "are copied into rows of %zu bytes", used ? "; " : "",
                                 config->b_nk ? "k" : "n", row, type, row * (size_t)in,
                                 padded(row, in) * (size_t)in);
    }
    if (need.c && used < size)
        used += (size_t)snprintf(out + used, size - used, "%sC (n = %zu %s: rows of %zu bytes) "
                                 "is computed in rows of %zu bytes and copied back (%zu rows)",
                                 used ? "; " : "", n, pj_dtype_name(config->out),
                                 n * (size_t)bytes, need.c_pitch * (size_t)bytes, m);
    if (used && used < size)
        snprintf(out + used, size - used, ": the TMA reads and writes rows of 16n bytes from "
                 "16-byte aligned buffers, and the copies on the stream make them so");
}

/* A pitched copy of rows x width_bytes on stream. */
static ptxjit_status copy_rows(const pj_driver *d, uint64_t dst, size_t dst_pitch, uint64_t src,
                               size_t src_pitch, size_t width_bytes, size_t rows, void *stream)
{
    if (!d->cuMemcpy2DAsync)
        return pj_error(PTXJIT_ERR_CUDA, "matmul: this driver lacks cuMemcpy2DAsync, which "
                        "copies a matrix whose rows the TMA cannot read; pad its rows to 16 "
                        "bytes and align the buffers to 16 bytes");
    CUDA_MEMCPY2D copy;
    memset(&copy, 0, sizeof copy);
    copy.srcMemoryType = copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.srcDevice = (CUdeviceptr)src;
    copy.srcPitch = src_pitch;
    copy.dstDevice = (CUdeviceptr)dst;
    copy.dstPitch = dst_pitch;
    copy.WidthInBytes = width_bytes;
    copy.Height = rows;
    return PJ_CU(d->cuMemcpy2DAsync(&copy, (CUstream)stream), "cuMemcpy2DAsync");
}

/* Scratch of bytes on stream, noted for pj_matmul_stage_out. */
static ptxjit_status scratch(uint64_t *out, pj_matmul_staged *s, const pj_driver *d,
                             size_t bytes, const char *what, void *stream)
{
    CUdeviceptr p = 0;
    ptxjit_status status = PJ_CU(d->cuMemAllocAsync(&p, bytes ? bytes : 16, (CUstream)stream),
                                 "cuMemAllocAsync");
    if (status != PTXJIT_OK)
        return pj_error_wrap(status, "matmul: staging %s (%zu bytes, rows padded to 16 bytes)",
                             what, bytes);
    s->scratch[s->scratch_count++] = p;
    *out = p;
    return PTXJIT_OK;
}

/* A rows x cols matrix of e-byte elements at src copied into scratch of rows padded to 16
 * bytes; *pitch its elements per row. */
static ptxjit_status stage_matrix(uint64_t *out, size_t *pitch, pj_matmul_staged *s,
                                  const pj_driver *d, uint64_t src, size_t rows, size_t cols,
                                  int e, const char *what, void *stream)
{
    *pitch = padded(cols, e);
    ptxjit_status status = scratch(out, s, d, rows * *pitch * (size_t)e, what, stream);
    return status == PTXJIT_OK ? copy_rows(d, *out, *pitch * (size_t)e, src, cols * (size_t)e,
                                           cols * (size_t)e, rows, stream)
                               : status;
}

ptxjit_status pj_matmul_stage_in(pj_matmul_staged *s, const pj_driver *d,
                                 const matmul_config *config, uint64_t a, uint64_t b, uint64_t c,
                                 uint64_t *bias, size_t m, size_t n, size_t k, void *stream)
{
    const int in = pj_matmul_type_bytes(config->dtype), out = pj_dtype_bytes(config->out);
    memset(s, 0, sizeof *s);
    s->need = pj_matmul_stage_needed(config, a, b, c, m, n, k);
    s->a = a, s->b = b, s->c = c, s->bias = *bias;
    s->a_pitch = k, s->b_pitch = config->b_nk ? k : n, s->c_pitch = n;
    s->m = m, s->n = n, s->out_bytes = out;
    ptxjit_status status = PTXJIT_OK;
    if (s->need.a)
        status = stage_matrix(&s->a, &s->a_pitch, s, d, a, m, k, in, "A", stream);
    if (status == PTXJIT_OK && s->need.b)
        status = config->b_nk ? stage_matrix(&s->b, &s->b_pitch, s, d, b, n, k, in, "B", stream)
                              : stage_matrix(&s->b, &s->b_pitch, s, d, b, k, n, in, "B", stream);
    if (status == PTXJIT_OK && s->need.c) {
        s->user_c = c;
        s->c_pitch = s->need.c_pitch;
        status = scratch(&s->c, s, d, m * s->c_pitch * (size_t)out, "C", stream);
        /* beta reads C: its values go in first; the padding columns are never copied back. */
        if (status == PTXJIT_OK && config->beta)
            status = copy_rows(d, s->c, s->c_pitch * (size_t)out, c, n * (size_t)out,
                               n * (size_t)out, m, stream);
        /* The kernel reads bias[j] for every column it writes, padding included. */
        if (status == PTXJIT_OK && config->bias) {
            status = scratch(&s->bias, s, d, s->c_pitch * 4, "the bias", stream);
            if (status == PTXJIT_OK)
                status = PJ_CU(d->cuMemsetD32Async((CUdeviceptr)s->bias, 0, s->c_pitch,
                                                   (CUstream)stream),
                               "cuMemsetD32Async");
            if (status == PTXJIT_OK)
                status = PJ_CU(d->cuMemcpyDtoDAsync((CUdeviceptr)s->bias, (CUdeviceptr)*bias,
                                                    n * 4, (CUstream)stream),
                               "cuMemcpyDtoDAsync");
        }
    }
    *bias = s->bias;
    return status;
}

ptxjit_status pj_matmul_stage_out(pj_matmul_staged *s, const pj_driver *d,
                                  ptxjit_status launched, void *stream)
{
    ptxjit_status status = launched;
    if (launched == PTXJIT_OK && s->need.c)
        status = copy_rows(d, s->user_c, s->n * (size_t)s->out_bytes, s->c,
                           s->c_pitch * (size_t)s->out_bytes, s->n * (size_t)s->out_bytes, s->m,
                           stream);
    for (int i = 0; i < s->scratch_count; i++)
        (void)d->cuMemFreeAsync((CUdeviceptr)s->scratch[i], (CUstream)stream);
    s->scratch_count = 0;
    return status;
}
