/* tune_bound.c — the least time a matmul configuration can take on a problem, from work it
 * cannot avoid: every tile of C is computed by one block, so on one SM, and an SM multiplies
 * at most at its peak rate. The SM with the most whole tiles (at least ⌈whole tiles / SMs⌉ of
 * them, by pigeonhole, whatever the schedule: grid, persistent or clusters) needs
 * 2 · bm · N · K flops for each, and no SM can do better than an equal share of the problem's
 * 2 · M · N · K. Only whole tiles count (a ragged edge tile may skip work), K is not rounded
 * up, and the peaks are the highest of any GPU each variant runs on, at the device's highest
 * clock: so the bound is never above a real run's time. It prunes tiles that leave SMs idle
 * (a skinny problem's wide tiles), never a tile that merely measures slower. swap=1's tiles
 * are of C's transpose (n x m); split-K's parts of one tile run on several SMs, and sched=gemv
 * has no bm x N tiles (a block takes 16 columns of every row), so there only the equal share
 * counts. */
#include "families/matmul/config.h"
#include "families/matmul/tune_bound.h"

/* Dense multiply-add peaks, flops per clock per SM (an FMA is 2): Hopper's tensor cores give
 * 4096 for bf16/f16 (H100 SXM: 989.4 TFLOPS at 1830 MHz on 132 SMs), half that for tf32,
 * twice for fp8; the wgmma variants run on sm_90 alone. tensor_core's mma.sync tf32 runs on
 * sm_80 and later: 4096 covers every such GPU's tf32 rate. The SIMT steps use the 128 fp32
 * lanes every SM since sm_80 has. */
static double peak_flops_per_clock(matmul_variant variant)
{
    switch (variant) {
    case MATMUL_WGMMA: return 4096;
    case MATMUL_WGMMA_TF32: return 2048;
    case MATMUL_WGMMA_FP8: return 8192;
    case MATMUL_TENSOR_CORE: return 4096;
    default: return 256;
    }
}

double pj_matmul_tune_bound(const pj_request *request, const uint64_t *sizes, int sms,
                            int clock_khz)
{
    matmul_config c;
    if (pj_matmul_config_from(&c, request) != PTXJIT_OK || sms <= 0 || clock_khz <= 0 ||
        c.bm <= 0 || c.tile_n <= 0)
        return 0;
    double m = (double)sizes[0], n = (double)sizes[1], k = (double)sizes[2];
    const uint64_t rows = c.swap ? sizes[1] : sizes[0], cols = c.swap ? sizes[0] : sizes[1];
    double whole = (double)(rows / (uint64_t)c.bm) * (double)(cols / (uint64_t)c.tile_n);
    double busiest = c.splits > 1 || c.gemv ? 0
                     : (double)(uint64_t)((whole + sms - 1) / sms) * 2.0 * c.bm * c.tile_n * k;
    double share = 2.0 * m * n * k / sms;
    double flops = busiest > share ? busiest : share;
    /* flops / (flops per clock x clocks per ms) */
    return flops / (peak_flops_per_clock(c.variant) * clock_khz);
}
