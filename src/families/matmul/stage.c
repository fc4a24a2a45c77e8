/* stage.c — operands the TMA cannot take as they are, copied into padded scratch on the
 * caller's stream (stage.h). */
#include <stdio.h>
#include <string.h>

#include "families/matmul/stage.h"

pj_matmul_takes pj_matmul_takes_of(const matmul_config *config, pj_backend backend)
{
    if (!pj_matmul_is_wgmma(config->variant))
        return PJ_MATMUL_TAKES_DENSE;
    return backend == PJ_BACKEND_LLVM ? PJ_MATMUL_TAKES_PITCH : PJ_MATMUL_TAKES_BATCH;
}

/* Here, with the layout's resolution, rather than in op.c: op.c uses this file, and a file of
 * the library uses no file that uses it (tests/house.sh). */
void ptxjit_matmul_layout_init(ptxjit_matmul_layout *layout)
{
    if (layout)
        memset(layout, 0, sizeof *layout);
}

static ptxjit_status layout_error(const char *what, size_t value, const char *rule)
{
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "matmul: %s = %zu %s", what, value, rule);
}

/* 1 when the last element of `count` matrices of rows x cols, rows ld apart and matrices
 * stride apart, lies within 2^62 elements (no offset the kernels or copies make overflows). */
static int addressable(size_t count, size_t stride, size_t rows, size_t ld, size_t cols)
{
    const unsigned __int128 last = (unsigned __int128)(count - 1) * stride +
                                   (unsigned __int128)(rows - 1) * ld + cols;
    return last < ((unsigned __int128)1 << 62);
}

ptxjit_status pj_matmul_layout_resolve(pj_matmul_layout *out, const matmul_config *config,
                                       const ptxjit_matmul_layout *layout, size_t m, size_t n,
                                       size_t k)
{
    ptxjit_matmul_layout dense;
    ptxjit_matmul_layout_init(&dense);
    const ptxjit_matmul_layout *l = layout ? layout : &dense;
    const size_t b_rows = config->b_nk ? n : k, b_cols = config->b_nk ? k : n;
    *out = (pj_matmul_layout){m, n, k, l->lda ? l->lda : k, l->ldb ? l->ldb : b_cols,
                              l->ldc ? l->ldc : n, l->batch ? l->batch : 1, 0, 0, 0};
    if (out->lda < k)
        return layout_error("lda", out->lda, "is shorter than a row of A (k); give lda >= k, "
                            "or 0 for dense rows");
    if (out->ldb < b_cols)
        return layout_error("ldb", out->ldb, config->b_nk
                            ? "is shorter than a row of B (k, b_layout=nk); give ldb >= k, or 0"
                            : "is shorter than a row of B (n); give ldb >= n, or 0");
    if (out->ldc < n)
        return layout_error("ldc", out->ldc, "is shorter than a row of C (n); give ldc >= n, "
                            "or 0 for dense rows");
    if (out->ldc > 0x7fffffff)
        return layout_error("ldc", out->ldc, "is beyond the kernels' 32-bit pitch of C (at "
                            "most 2^31 - 1)");
    if (out->batch > 0x7fffffff)
        return layout_error("batch", out->batch, "is beyond the kernels' 32-bit count (at "
                            "most 2^31 - 1)");
    if (out->batch > 1) {
        out->stride_a = l->stride_a, out->stride_b = l->stride_b, out->stride_c = l->stride_c;
        if (out->stride_c < (m - 1) * out->ldc + n)
            return layout_error("stride_c", out->stride_c, "makes products' C overlap (every "
                                "product writes its own C: give stride_c >= (m - 1) * ldc + n, "
                                "e.g. m * ldc)");
    }
    if (!addressable(out->batch, out->stride_a, m, out->lda, k) ||
        !addressable(out->batch, out->stride_b, b_rows, out->ldb, b_cols) ||
        !addressable(out->batch, out->stride_c, m, out->ldc, n))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "matmul: the layout reaches past 2^62 "
                        "elements (batch %zu, strides %zu, %zu, %zu): check its values",
                        out->batch, out->stride_a, out->stride_b, out->stride_c);
    return PTXJIT_OK;
}

/* Rows the TMA takes: a pitch (and, between products, a stride) of whole 16-byte units from a
 * 16-byte aligned buffer. */
static int tma_rows(uint64_t address, size_t pitch, size_t stride, int bytes)
{
    return address % 16 == 0 && (uint64_t)pitch * (uint64_t)bytes % 16 == 0 &&
           (uint64_t)stride * (uint64_t)bytes % 16 == 0;
}

static size_t padded(size_t elements, int bytes)
{
    const size_t unit = (size_t)(16 / bytes);
    return (elements + unit - 1) / unit * unit;
}

/* The direct stores write pairs of elements: an even row length, pitch and stride, from a
 * buffer aligned to the pair. */
static int pair_rows(uint64_t address, size_t n, size_t pitch, size_t stride, int bytes)
{
    return n % 2 == 0 && pitch % 2 == 0 && stride % 2 == 0 && address % (uint64_t)(2 * bytes) == 0;
}

pj_matmul_stage_need pj_matmul_stage_needed(const matmul_config *config, pj_matmul_takes takes,
                                            uint64_t a, uint64_t b, uint64_t c,
                                            const pj_matmul_layout *l)
{
    const size_t b_cols = config->b_nk ? l->k : l->n;
    pj_matmul_stage_need need = {0, 0, 0, l->ldc, 0};
    if (takes == PJ_MATMUL_TAKES_DENSE) {
        need.a = l->lda != l->k, need.b = l->ldb != b_cols, need.c = l->ldc != l->n;
        need.c_pitch = l->n;
        return need;
    }
    const int in = pj_matmul_type_bytes(config->dtype), out = pj_dtype_bytes(config->out);
    need.a = !tma_rows(a, l->lda, l->stride_a, in);
    need.b = !tma_rows(b, l->ldb, l->stride_b, in);
    /* store=tma also wants C's rows themselves whole 16-byte units: past an odd N of bf16 in
     * rows of 208, the H200's TMA stores wrote the element beyond the row (2026-11-28), where
     * the map's width should have clipped them. */
    need.c = config->store_tma ? !tma_rows(c, l->ldc, l->stride_c, out) ||
                                     (uint64_t)l->n * (uint64_t)out % 16 != 0
             : config->swap || config->gemv ? 0 /* their stores are of single elements */
                               : !pair_rows(c, l->n, l->ldc, l->stride_c, out);
    if (takes == PJ_MATMUL_TAKES_PITCH && l->ldc != l->n) {
        need.c_dense = !need.c; /* its kernels write C dense */
        need.c = 1;
    }
    if (need.c)
        need.c_pitch = padded(l->n, out);
    return need;
}

/* "A's rows (k = 4095 bf16: 8190 bytes)" or "A's rows (lda = 4100) ..." : why an operand is
 * copied, into out at used. */
static size_t describe_operand(char *out, size_t size, size_t used, const char *name,
                               const char *dim, size_t cols, size_t ld, size_t stride,
                               int bytes, const char *type, size_t to_pitch)
{
    if (used >= size)
        return used;
    char where[96] = "";
    if (ld != cols)
        snprintf(where, sizeof where, ", %zu elements apart", ld);
    if (stride)
        snprintf(where + strlen(where), sizeof where - strlen(where),
                 ", products %zu elements apart", stride);
    return used + (size_t)snprintf(out + used, size - used, "%s%s's rows (%s = %zu %s: %zu "
                                   "bytes%s) are copied into rows of %zu bytes", used ? "; " : "",
                                   name, dim, cols, type, cols * (size_t)bytes, where,
                                   to_pitch * (size_t)bytes);
}

void pj_matmul_stage_describe(char *out, size_t size, const matmul_config *config,
                              pj_matmul_stage_need need, const pj_matmul_layout *l)
{
    const int in = pj_matmul_type_bytes(config->dtype), bytes = pj_dtype_bytes(config->out);
    const int dense = !pj_matmul_is_wgmma(config->variant);
    const char *type = pj_matmul_type_name(config->dtype);
    const size_t b_cols = config->b_nk ? l->k : l->n;
    size_t used = 0;
    out[0] = '\0';
    if (need.a)
        used = describe_operand(out, size, used, "A", "k", l->k, l->lda, l->stride_a, in, type,
                                dense ? l->k : padded(l->k, in));
    if (need.b)
        used = describe_operand(out, size, used, "B", config->b_nk ? "k" : "n", b_cols, l->ldb,
                                l->stride_b, in, type, dense ? b_cols : padded(b_cols, in));
    if (need.c && used < size) {
        char where[64] = "";
        if (l->ldc != l->n)
            snprintf(where, sizeof where, ", %zu elements apart", l->ldc);
        used += (size_t)snprintf(out + used, size - used, "%sC (n = %zu %s: rows of %zu "
                                 "bytes%s) is computed in rows of %zu bytes and copied back "
                                 "(%zu rows%s)", used ? "; " : "", l->n,
                                 pj_dtype_name(config->out), l->n * (size_t)bytes, where,
                                 need.c_pitch * (size_t)bytes, l->m,
                                 l->batch > 1 ? " a product" : "");
    }
    if (need.c_dense && !need.a && !need.b && used < size)
        snprintf(out + used, size - used, ": the llvm backend's kernel writes C in dense rows, "
                 "and the copy on the stream puts them at ldc");
    else if (used && used < size)
        snprintf(out + used, size - used, "%s", dense
                 ? ": this variant reads and writes dense rows, and the copies on the stream "
                   "make them so"
                 : config->gemv
                 ? ": sched=gemv's 16-byte loads read rows of 16n bytes from 16-byte aligned "
                   "buffers, and the copies on the stream make them so"
                 : ": the TMA reads and writes rows of 16n bytes from 16-byte aligned buffers, "
                   "and the copies on the stream make them so");
}

/* The kernel's module's staging copy (templates/matmul.cu, matmul_stage_rows): every module
 * of the built-in template and generator has it (a cache or AOT entry of another entry list is
 * not taken); a matmul template of the user's own (--templates) may not. */
static const char stage_entry[] = "matmul_stage_rows";

static int has_stage_entry(const ptxjit_kernel *kernel)
{
    for (int i = 0; i < kernel->artifact.entry_count; i++)
        if (strcmp(kernel->artifact.entries[i], stage_entry) == 0)
            return 1;
    return 0;
}

/* The driver's pitched copy of rows x width_bytes on stream: about a quarter of the copy's
 * bandwidth where pitches are not whole 16-byte units, so only where the module lacks its
 * own. */
static ptxjit_status driver_copy_rows(const pj_driver *d, uint64_t dst, size_t dst_pitch,
                                      uint64_t src, size_t src_pitch, size_t width_bytes,
                                      size_t rows, void *stream)
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

/* A thread per 16 destination bytes of a row (a row's pieces: width / 16, and one more at
 * each end where it is not aligned), a block row per row of a matrix (y) and per matrix (z),
 * each at most 65535 (the rest looped). */
ptxjit_status pj_matmul_stage_copy(ptxjit_kernel *kernel, uint64_t dst, size_t dst_pitch,
                                   size_t dst_stride, uint64_t src, size_t src_pitch,
                                   size_t src_stride, size_t count, size_t rows, size_t width,
                                   void *stream)
{
    enum { THREADS = 128, MAX_GRID_YZ = 65535 };
    unsigned long long values[9] = {dst, src, width, rows, count, dst_pitch, dst_stride,
                                    src_pitch, src_stride};
    void *args[9];
    for (int i = 0; i < 9; i++)
        args[i] = &values[i];
    const size_t pieces = width / 16 + 2;
    const ptxjit_dim3 grid = {(unsigned)((pieces + THREADS - 1) / THREADS),
                              (unsigned)(rows < MAX_GRID_YZ ? rows : MAX_GRID_YZ),
                              (unsigned)(count < MAX_GRID_YZ ? count : MAX_GRID_YZ)};
    const ptxjit_dim3 block = {THREADS, 1, 1};
    return ptxjit_launch(kernel, stage_entry, grid, block, 0, stream, args);
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

/* `count` matrices of rows x cols e-byte elements copied between src (rows src_ld apart,
 * matrices src_stride apart) and dst (dst_ld, dst_stride), on stream: one launch of the
 * module's copy; else the driver's, one pitched copy where both sides' matrices follow each
 * other row after row, else one per matrix. */
static ptxjit_status copy_matrices(ptxjit_kernel *kernel, uint64_t dst, size_t dst_ld,
                                   size_t dst_stride, uint64_t src, size_t src_ld,
                                   size_t src_stride, size_t count, size_t rows, size_t cols,
                                   int e, void *stream)
{
    const size_t width = cols * (size_t)e, b = (size_t)e;
    if (has_stage_entry(kernel) && width / 16 / 128 < 0x7fffffff)
        return pj_matmul_stage_copy(kernel, dst, dst_ld * b, dst_stride * b, src, src_ld * b,
                                    src_stride * b, count, rows, width, stream);
    const pj_driver *d = kernel->context->driver;
    if (count == 1 || (src_stride == rows * src_ld && dst_stride == rows * dst_ld))
        return driver_copy_rows(d, dst, dst_ld * b, src, src_ld * b, width, count * rows,
                                stream);
    ptxjit_status status = PTXJIT_OK;
    for (size_t i = 0; i < count && status == PTXJIT_OK; i++)
        status = driver_copy_rows(d, dst + i * dst_stride * (uint64_t)e, dst_ld * b,
                                  src + i * src_stride * (uint64_t)e, src_ld * b, width, rows,
                                  stream);
    return status;
}

/* An operand's matrices (one where stride is 0) copied into scratch of rows `pitch` apart
 * (dense: the row's length; else padded to 16 bytes); *address, *pitch and *stride become
 * the copy's. */
static ptxjit_status stage_operand(uint64_t *address, size_t *pitch, size_t *stride,
                                   pj_matmul_staged *s, ptxjit_kernel *kernel, int dense,
                                   size_t batch, size_t rows, size_t cols, int e,
                                   const char *what, void *stream)
{
    const size_t count = *stride ? batch : 1, to = dense ? cols : padded(cols, e);
    uint64_t copy;
    ptxjit_status status = scratch(&copy, s, kernel->context->driver,
                                   count * rows * to * (size_t)e, what, stream);
    if (status == PTXJIT_OK)
        status = copy_matrices(kernel, copy, to, rows * to, *address, *pitch, *stride, count,
                               rows, cols, e, stream);
    *address = copy, *pitch = to, *stride = count > 1 ? rows * to : 0;
    return status;
}

ptxjit_status pj_matmul_stage_in(pj_matmul_staged *s, ptxjit_kernel *kernel,
                                 const matmul_config *config, pj_matmul_takes takes, uint64_t a,
                                 uint64_t b, uint64_t c, uint64_t *bias,
                                 const pj_matmul_layout *l, void *stream)
{
    const int in = pj_matmul_type_bytes(config->dtype), out = pj_dtype_bytes(config->out);
    const int dense = takes == PJ_MATMUL_TAKES_DENSE;
    const pj_driver *d = kernel->context->driver;
    const size_t b_rows = config->b_nk ? l->n : l->k, b_cols = config->b_nk ? l->k : l->n;
    memset(s, 0, sizeof *s);
    s->layout = *l;
    s->need = pj_matmul_stage_needed(config, takes, a, b, c, l);
    s->a = a, s->b = b, s->c = c, s->bias = *bias;
    s->a_pitch = l->lda, s->b_pitch = l->ldb, s->c_pitch = l->ldc;
    s->a_stride = l->stride_a, s->b_stride = l->stride_b, s->c_stride = l->stride_c;
    s->out_bytes = out;
    ptxjit_status status = PTXJIT_OK;
    if (s->need.a)
        status = stage_operand(&s->a, &s->a_pitch, &s->a_stride, s, kernel, dense, l->batch,
                               l->m, l->k, in, "A", stream);
    if (status == PTXJIT_OK && s->need.b)
        status = stage_operand(&s->b, &s->b_pitch, &s->b_stride, s, kernel, dense, l->batch,
                               b_rows, b_cols, in, "B", stream);
    if (status == PTXJIT_OK && s->need.c) {
        s->user_c = c;
        s->c_pitch = s->need.c_pitch;
        s->c_stride = l->batch > 1 ? l->m * s->c_pitch : 0;
        status = scratch(&s->c, s, d, l->batch * l->m * s->c_pitch * (size_t)out, "C", stream);
        /* beta reads C: its values go in first; the padding columns are never copied back. */
        if (status == PTXJIT_OK && config->beta)
            status = copy_matrices(kernel, s->c, s->c_pitch, s->c_stride, c, l->ldc, l->stride_c,
                                   l->batch, l->m, l->n, out, stream);
        /* The kernel reads bias[j] for every column it writes, padding included. */
        if (status == PTXJIT_OK && config->bias && s->c_pitch > l->n) {
            status = scratch(&s->bias, s, d, s->c_pitch * 4, "the bias", stream);
            if (status == PTXJIT_OK)
                status = PJ_CU(d->cuMemsetD32Async((CUdeviceptr)s->bias, 0, s->c_pitch,
                                                   (CUstream)stream),
                               "cuMemsetD32Async");
            if (status == PTXJIT_OK)
                status = PJ_CU(d->cuMemcpyDtoDAsync((CUdeviceptr)s->bias, (CUdeviceptr)*bias,
                                                    l->n * 4, (CUstream)stream),
                               "cuMemcpyDtoDAsync");
        }
    }
    /* The template's wgmma kernels compute n columns into C's pitch; the others compute the
     * pitch's columns (a staged C's padding is computed and dropped). */
    s->n_kernel = takes == PJ_MATMUL_TAKES_BATCH && !s->need.c ? l->n : s->c_pitch;
    *bias = s->bias;
    return status;
}

ptxjit_status pj_matmul_stage_out(pj_matmul_staged *s, ptxjit_kernel *kernel,
                                  ptxjit_status launched, void *stream)
{
    const pj_driver *d = kernel->context->driver;
    ptxjit_status status = launched;
    const pj_matmul_layout *l = &s->layout;
    if (launched == PTXJIT_OK && s->need.c)
        status = copy_matrices(kernel, s->user_c, l->ldc, l->stride_c, s->c, s->c_pitch,
                               s->c_stride, l->batch, l->m, l->n, s->out_bytes, stream);
    for (int i = 0; i < s->scratch_count; i++)
        (void)d->cuMemFreeAsync((CUdeviceptr)s->scratch[i], (CUstream)stream);
    s->scratch_count = 0;
    return status;
}
