/* stage.h — the matrices of a product where its kernel cannot read or write them as they lie.
 * The template's wgmma kernels read A and B through 3-D tensor maps (a matrix per product of
 * a batch) and write C at any pitch, but the TMA takes only rows and strides of whole 16-byte
 * units from 16-byte aligned buffers (k = 4095 bf16, a matrix inside a larger one at an odd
 * offset); the llvm backend's wgmma kernels take such pitches for A and B but write C dense;
 * the SIMT and tensor_core kernels read and write dense rows only. The op copies each operand
 * its kernel cannot take into scratch (one launch of the module's matmul_stage_rows for all its
 * products on the caller's stream, in memory the stream allocates and frees in order), runs
 * the product on the copies, and copies C back. Padded rows' tails are never read: the tensor
 * maps give the true sizes, and the TMA fills what lies outside a map with zeros. */
#ifndef PTXJIT_MATMUL_STAGE_H
#define PTXJIT_MATMUL_STAGE_H

#include "families/matmul/config.h"
#include "driver/driver.h"

/* How a kernel takes the layout of a product. */
typedef enum {
    PJ_MATMUL_TAKES_BATCH, /* the template's wgmma: 3-D maps, C's pitch, one launch */
    PJ_MATMUL_TAKES_PITCH, /* the llvm wgmma: 2-D maps of A and B, C dense; a launch per product */
    PJ_MATMUL_TAKES_DENSE, /* SIMT and tensor_core: dense rows; a launch per product */
} pj_matmul_takes;

pj_matmul_takes pj_matmul_takes_of(const matmul_config *config, pj_backend backend);

/* A product's layout with every default resolved (ptxjit_matmul_layout's: no zero ld, batch
 * at least 1); strides in elements. */
typedef struct {
    size_t m, n, k;
    size_t lda, ldb, ldc;
    size_t batch, stride_a, stride_b, stride_c;
} pj_matmul_layout;

/* layout (NULL: dense, one product) resolved for config's B layout; PTXJIT_ERR_INVALID_ARGUMENT
 * naming the value when it cannot hold the product. */
ptxjit_status pj_matmul_layout_resolve(pj_matmul_layout *out, const matmul_config *config,
                                       const ptxjit_matmul_layout *layout, size_t m, size_t n,
                                       size_t k);

/* Which operands a product stages (no GPU needed: `--plan` says it too). */
typedef struct {
    int a, b, c;
    size_t c_pitch; /* elements per row of the C the kernel writes: ldc, or n padded */
    int c_dense;    /* C is staged only because the kernel writes dense rows (llvm's) */
} pj_matmul_stage_need;

pj_matmul_stage_need pj_matmul_stage_needed(const matmul_config *config, pj_matmul_takes takes,
                                            uint64_t a, uint64_t b, uint64_t c,
                                            const pj_matmul_layout *l);
/* One sentence for a plan, "A (k = 4095 bf16: rows of 8190 bytes) is copied ...", into out;
 * "" when nothing is staged. */
void pj_matmul_stage_describe(char *out, size_t size, const matmul_config *config,
                              pj_matmul_stage_need need, const pj_matmul_layout *l);

/* `count` matrices of rows x width bytes copied from src (rows src_pitch bytes apart, matrices
 * src_stride apart) to dst (dst_pitch, dst_stride) on stream, in one launch of the kernel's
 * module's matmul_stage_rows (every built-in matmul module has it): what the op stages with,
 * for any caller that must pad a matrix as the op does (the bench's padded peer). */
ptxjit_status pj_matmul_stage_copy(ptxjit_kernel *kernel, uint64_t dst, size_t dst_pitch,
                                   size_t dst_stride, uint64_t src, size_t src_pitch,
                                   size_t src_stride, size_t count, size_t rows, size_t width,
                                   void *stream);

/* The product as the kernel sees it, and the scratch that holds the staged operands. */
typedef struct {
    uint64_t a, b, c, bias;           /* what the kernel reads and writes */
    size_t a_pitch, b_pitch, c_pitch; /* elements per row of each, as the maps and N give them */
    size_t a_stride, b_stride, c_stride; /* elements between products (0: one matrix) */
    size_t n_kernel;                  /* the columns the kernel computes: n, or c_pitch */
    pj_matmul_stage_need need;
    uint64_t scratch[4];
    int scratch_count;
    uint64_t user_c; /* C, when the kernel writes a copy of it */
    pj_matmul_layout layout;
    int out_bytes;
} pj_matmul_staged;

/* Stages what the product needs on stream: A and B copied in, C copied in when beta reads it,
 * bias padded when C is. *bias becomes the staged one. */
ptxjit_status pj_matmul_stage_in(pj_matmul_staged *out, ptxjit_kernel *kernel,
                                 const matmul_config *config, pj_matmul_takes takes, uint64_t a,
                                 uint64_t b, uint64_t c, uint64_t *bias,
                                 const pj_matmul_layout *l, void *stream);
/* After the launches (launched: their status): C copied back when it was staged and they
 * went; the scratch freed on stream whatever happened. Returns launched, or the copy's
 * failure. */
ptxjit_status pj_matmul_stage_out(pj_matmul_staged *staged, ptxjit_kernel *kernel,
                                  ptxjit_status launched, void *stream);

#endif
