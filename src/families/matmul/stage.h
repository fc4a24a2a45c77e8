/* stage.h — a wgmma product whose rows the TMA cannot read or write as they are: a row of A,
 * B or C that is not a whole number of 16-byte units (k = 4095 bf16), or a buffer that is
 * not 16-byte aligned (a matrix inside a larger one). The op copies such an operand into
 * scratch whose rows are padded to 16 bytes (a pitched copy on the caller's stream, from
 * memory the stream allocates and frees in order), runs the product on the copies, and
 * copies C back. The tensor maps give the true sizes and the padded pitch, so the padding is
 * read as zeros (the TMA fills what lies outside a map) and never needs clearing. */
#ifndef PTXJIT_MATMUL_STAGE_H
#define PTXJIT_MATMUL_STAGE_H

#include "families/matmul/config.h"
#include "driver/driver.h"

/* Which operands a product stages (no GPU needed: `--plan` says it too). */
typedef struct {
    int a, b, c;
    size_t c_pitch; /* elements per row of the C the kernel writes: n, or n padded */
} pj_matmul_stage_need;

pj_matmul_stage_need pj_matmul_stage_needed(const matmul_config *config, uint64_t a, uint64_t b,
                                            uint64_t c, size_t m, size_t n, size_t k);
/* One sentence for a plan, "A (k = 4095 bf16: rows of 8190 bytes) is copied ...", into out;
 * "" when nothing is staged. */
void pj_matmul_stage_describe(char *out, size_t size, const matmul_config *config,
                              pj_matmul_stage_need need, size_t m, size_t n, size_t k);

/* The product as the kernel sees it, and the scratch that holds the staged operands. */
typedef struct {
    uint64_t a, b, c, bias;           /* what the kernel reads and writes */
    size_t a_pitch, b_pitch, c_pitch; /* elements per row of each, as the maps and N give them */
    pj_matmul_stage_need need;
    uint64_t scratch[4];
    int scratch_count;
    uint64_t user_c; /* C, when the kernel writes a copy of it */
    size_t m, n;
    int out_bytes;
} pj_matmul_staged;

/* Stages what the product needs on stream: A and B copied in, C copied in when beta reads it,
 * bias padded when C is. *values' bias is the staged one. */
ptxjit_status pj_matmul_stage_in(pj_matmul_staged *out, const pj_driver *d,
                                 const matmul_config *config, uint64_t a, uint64_t b, uint64_t c,
                                 uint64_t *bias, size_t m, size_t n, size_t k, void *stream);
/* After the launch (launched: its status): C copied back when it was staged and the launch
 * went; the scratch freed on stream whatever happened. Returns launched, or the copy's
 * failure. */
ptxjit_status pj_matmul_stage_out(pj_matmul_staged *staged, const pj_driver *d,
                                  ptxjit_status launched, void *stream);

#endif
