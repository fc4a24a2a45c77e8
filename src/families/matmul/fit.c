/* fit.c — the wgmma tile for the product's shape, where the request leaves the tile to the
 * defaults. The default tile (128 rows × N = 256, three stages, persistent blocks) is the
 * fastest where C has a tile for every SM; a product with few rows — M of a few hundred, as in
 * a language model's decoding — has fewer tiles than SMs, and the rest of the GPU idles. On the
 * H100, 128 × 8192 × 8192 ran at 0.62× cuBLAS with the default tile and 1.00× with a 64 × 128
 * one (docs/PERFORMANCE.md, "2026-11-24 21:12"). */
#include <stdlib.h>
#include <string.h>

#include "families/matmul/fit.h"

/* Smaller tiles, largest first, each with the pipeline that measured fastest for it: a deeper
 * ring, since each stage is smaller, and 64-row blocks of one consumer warpgroup where even
 * 128 × 128 tiles leave SMs idle or M is at most 64 (half of a 128-row tile would be empty). */
static const pj_matmul_fit_tile smaller_tiles[] = {
    {128, 128, "mma=m64n128k16 stages=6 sched=grid"},
    {64, 128, "bm=64 consumers=1 mma=m64n128k16 stages=8"},
    {64, 64, "bm=64 consumers=1 mma=m64n64k16 stages=8"},
};

/* How much more of the GPU a smaller tile must keep busy to be taken. A smaller tile loads
 * more bytes per flop: at 384 × 8192 × 8192 (bf16) the 64 × 128 tile's 1.33 times the share ran
 * no faster than the default, tf32 11 % slower; every shape that gained had 2 times or more. */
#define CLEARLY_BETTER 1.5

/* The words that set the tile or its pipeline: a request that names any of them (or tunes
 * one: PARAM=auto) is taken as written. */
static const char *const tile_words[] = {"mma",  "bm",    "consumers", "stages",
                                         "sched", "group", "cluster",   "store"};

int pj_matmul_fit_names_tile(const char *params)
{
    for (const char *at = params ? params : ""; *at;) {
        at += strspn(at, " \t\n");
        size_t word = strcspn(at, " \t\n"), name = strcspn(at, "= \t\n");
        for (size_t i = 0; name < word && i < PJ_ARRAY_SIZE(tile_words); i++)
            if (strlen(tile_words[i]) == name && strncmp(at, tile_words[i], name) == 0)
                return 1;
        at += word;
    }
    return 0;
}

/* The share of the SMs' time spent on C: tiles over whole waves of SMs, times the share of
 * the tiles' rows and columns that lie inside C. */
static double useful_share(uint64_t m, uint64_t n, int bm, int bn, int sms)
{
    const uint64_t rows = (m + (uint64_t)bm - 1) / (uint64_t)bm;
    const uint64_t cols = (n + (uint64_t)bn - 1) / (uint64_t)bn;
    const uint64_t tiles = rows * cols, waves = (tiles + (uint64_t)sms - 1) / (uint64_t)sms;
    return (double)tiles / ((double)waves * sms) * ((double)m / ((double)rows * bm)) *
           ((double)n / ((double)cols * bn));
}

const pj_matmul_fit_tile *pj_matmul_fit_choose(uint64_t m, uint64_t n, int bm, int bn, int sms)
{
    if (sms < 1 || bm < 1 || bn < 1 || !m || !n)
        return NULL;
    const uint64_t tiles =
        (m + (uint64_t)bm - 1) / (uint64_t)bm * ((n + (uint64_t)bn - 1) / (uint64_t)bn);
    if (tiles >= (uint64_t)sms)
        return NULL; /* every SM has a tile: the default's larger tiles do more per load */
    const pj_matmul_fit_tile *best = NULL;
    double best_share = useful_share(m, n, bm, bn, sms);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(smaller_tiles); i++) {
        const pj_matmul_fit_tile *t = &smaller_tiles[i];
        if (t->bm * t->bn >= bm * bn)
            continue;
        double share = useful_share(m, n, t->bm, t->bn, sms);
        if (share >= CLEARLY_BETTER * best_share) {
            best = t;
            best_share = share;
        }
    }
    return best;
}

ptxjit_status pj_matmul_fit(ptxjit_kernel **kernel, matmul_config *config,
                            const pj_matmul_fit_tile **chosen, ptxjit_context *context,
                            const char *params, size_t m, size_t n)
{
    if (chosen)
        *chosen = NULL;
    if (!pj_matmul_is_wgmma(config->variant) || config->cluster != 1 ||
        pj_matmul_fit_names_tile(params))
        return PTXJIT_OK;
    const pj_matmul_fit_tile *tile =
        pj_matmul_fit_choose(m, n, config->bm, config->tile_n, context->sm_count);
    if (!tile)
        return PTXJIT_OK;
    pj_strbuf sb;
    pj_sb_init(&sb);
    if (params && *params) {
        pj_sb_append(&sb, params);
        pj_sb_append(&sb, " ");
    }
    pj_sb_append(&sb, tile->words);
    char *text = pj_sb_take(&sb);
    if (!text)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_kernel *fitted;
    matmul_config fitted_config;
    ptxjit_status status = ptxjit_get_kernel(&fitted, context, "matmul", text, NULL);
    if (status == PTXJIT_OK)
        status = pj_matmul_config_of(&fitted_config, fitted);
    free(text);
    if (status == PTXJIT_ERR_PARAM) {
        /* A template of its own (PTXJIT_TEMPLATE_PATH) without these parameters or values:
         * its defaults, as the request asked. */
        pj_error_clear();
        return PTXJIT_OK;
    }
    if (status == PTXJIT_OK) {
        *kernel = fitted;
        *config = fitted_config;
        if (chosen)
            *chosen = tile;
    }
    return status;
}
