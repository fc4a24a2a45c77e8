/* fit.c — the wgmma tile for the product's shape, where the request leaves the tile to the
 * defaults. The default tile (128 rows × N = 256, three stages, persistent blocks) is the
 * fastest where its tiles fill whole waves of SMs; a product with few rows — M of a few
 * hundred, as in a language model's decoding — has fewer tiles than SMs, and one just over a
 * whole number of waves leaves most SMs idle in its last. On the H100, 128 × 8192 × 8192 ran at
 * 0.62× cuBLAS with the default tile and 1.00× with a 64 × 128 one, 768 × 8192 × 8192 at 0.80×
 * and 1.02× with a 128 × 192 one (docs/PERFORMANCE.md, "2026-11-24 21:12" and "22:12"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "families/matmul/fit.h"

/* Smaller tiles, largest first, each with the pipeline that measured fastest for it: deeper
 * rings as the stages shrink, and 64-row blocks of one consumer warpgroup where M is small
 * (a 128-row tile of a 64-row C is half empty). */
#define TILE_128x192 "mma=m64n192k16 stages=4"
#define TILE_128x128 "mma=m64n128k16 stages=6 sched=grid"
#define TILE_64x192 "bm=64 consumers=1 mma=m64n192k16 stages=6"
#define TILE_64x128 "bm=64 consumers=1 mma=m64n128k16 stages=8"
#define TILE_64x64 "bm=64 consumers=1 mma=m64n64k16 stages=8"
static const pj_matmul_fit_tile smaller_tiles[] = {
    {128, 192, TILE_128x192, 1}, {128, 128, TILE_128x128, 1}, {64, 192, TILE_64x192, 1},
    {64, 128, TILE_64x128, 1},   {64, 64, TILE_64x64, 1},
};

/* Split-K (the template's splits=): where a product's tiles fill less than half the SMs, as a
 * decoding's few rows do, each tile's K loop is cut into parts run by different blocks. The
 * counts a fit takes, and their words with the request's own tile (bm 0) and each smaller
 * one, as literals: the fit hands out words that live as long as the library. */
#define SPLIT_COUNTS(X, BM, BN, WORDS) \
    X(BM, BN, WORDS, 2) X(BM, BN, WORDS, 3) X(BM, BN, WORDS, 4) X(BM, BN, WORDS, 6) \
    X(BM, BN, WORDS, 8) X(BM, BN, WORDS, 12) X(BM, BN, WORDS, 16)
/* store=direct: the adding writes C itself (a tile of C in shared memory would only sit unused
 * beside the stages, and C is staged for 16-byte rows only where its pairs need it). */
#define SPLIT_ALONE(BM, BN, WORDS, S) {BM, BN, "splits=" #S " store=direct", S},
#define SPLIT_WITH(BM, BN, WORDS, S) {BM, BN, WORDS " splits=" #S " store=direct", S},
static const pj_matmul_fit_tile split_tiles[] = {
    SPLIT_COUNTS(SPLIT_ALONE, 0, 0, "")
    SPLIT_COUNTS(SPLIT_WITH, 128, 192, TILE_128x192)
    SPLIT_COUNTS(SPLIT_WITH, 128, 128, TILE_128x128)
    SPLIT_COUNTS(SPLIT_WITH, 64, 192, TILE_64x192)
    SPLIT_COUNTS(SPLIT_WITH, 64, 128, TILE_64x128)
    SPLIT_COUNTS(SPLIT_WITH, 64, 64, TILE_64x64)
};
/* A part's K loop is at least this many k tiles (of 128 bytes of K): shorter ones spend more
 * on filling the pipeline and adding the parts than the parallelism gains. */
#define MIN_PART_K_TILES 4
/* Split only products of this many rows at most (a decoding's): the last part adds
 * rows x tile width x parts sums, which for a full tile of rows costs as much as the product's
 * own loads. To be widened by measurement. */
#define SPLIT_ROWS_MAX 32
/* A split is taken where its wave is this much fuller than the best 64-row tile's unsplit, and
 * fills within SPLIT_TIE of the fullest count as equal (fewer parts then win). */
#define SPLIT_GAIN 1.1
#define SPLIT_TIE 0.05

/* The time of a product, in units of one wave of default tiles: its waves of tiles (a wave:
 * one tile per SM) times a tile's time, which shrinks more slowly than its area — a smaller
 * tile loads more bytes per flop. TILE_TIME_EXPONENT fits the H100's times at 384 × 8192 × 8192
 * (0.74–0.91 from four tiles; docs/PERFORMANCE.md, "2026-11-24 22:12") and predicted the
 * gains at 320, 640 and 768 rows within 3 %. */
#define TILE_TIME_EXPONENT 0.8
/* A smaller tile is taken only where it is predicted at most this share of the default's
 * time: the model is a fit, and near-ties (large products, where the default's waves are
 * nearly full) keep the default. */
#define WORTH_TAKING 0.85

/* The words that set the tile or its pipeline: a request that names any of them (or tunes
 * one: PARAM=auto) is taken as written. */
static const char *const tile_words[] = {"mma",   "bm",      "consumers", "stages", "sched",
                                         "group", "cluster", "store",     "splits"};

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

/* Waves of bm x bn tiles over an m x n C on sms SMs, times a tile's time relative to one of
 * area_1 (the default's). */
static double predicted_time(uint64_t m, uint64_t n, int bm, int bn, int sms, double area_1)
{
    const uint64_t tiles =
        (m + (uint64_t)bm - 1) / (uint64_t)bm * ((n + (uint64_t)bn - 1) / (uint64_t)bn);
    const uint64_t waves = (tiles + (uint64_t)sms - 1) / (uint64_t)sms;
    return (double)waves * pow((double)bm * bn / area_1, TILE_TIME_EXPONENT);
}

const pj_matmul_fit_tile *pj_matmul_fit_choose(uint64_t m, uint64_t n, int bm, int bn, int sms)
{
    if (sms < 1 || bm < 1 || bn < 1 || !m || !n)
        return NULL;
    const double area = (double)bm * bn;
    const double limit = WORTH_TAKING * predicted_time(m, n, bm, bn, sms, area);
    const pj_matmul_fit_tile *best = NULL;
    double best_time = 0;
    for (size_t i = 0; i < PJ_ARRAY_SIZE(smaller_tiles); i++) {
        const pj_matmul_fit_tile *t = &smaller_tiles[i];
        if (t->bm * t->bn >= bm * bn)
            continue;
        double time = predicted_time(m, n, t->bm, t->bn, sms, area);
        if (time <= limit && (!best || time < best_time)) { /* a tie keeps the larger tile */
            best = t;
            best_time = time;
        }
    }
    return best;
}

const pj_matmul_fit_tile *pj_matmul_fit_split(uint64_t m, uint64_t n, uint64_t k_tiles, int sms)
{
    if (sms < 1 || !m || !n || m > SPLIT_ROWS_MAX || m >= (1ull << 31) || n >= (1ull << 31))
        return NULL;
    double fill[PJ_ARRAY_SIZE(split_tiles)], most = 0, unsplit = 0;
    for (size_t i = 0; i < PJ_ARRAY_SIZE(split_tiles); i++) {
        const pj_matmul_fit_tile *t = &split_tiles[i];
        const uint64_t tiles = (m + 63) / 64 * ((n + (uint64_t)t->bn - 1) / (uint64_t)t->bn);
        fill[i] = 0;
        if (t->bm != 64) /* a decoding's rows: one 64-row consumer */
            continue;
        if (tiles <= (uint64_t)sms)
            unsplit = fmax(unsplit, (double)tiles / sms);
        /* One wave at most: parts of a tile run side by side, never after each other. */
        if ((uint64_t)t->splits * MIN_PART_K_TILES <= k_tiles &&
            tiles * (uint64_t)t->splits <= (uint64_t)sms)
            fill[i] = (double)(tiles * (uint64_t)t->splits) / sms;
        most = fmax(most, fill[i]);
    }
    /* Of the fullest (within SPLIT_TIE), the fewest parts (the least to add), then the widest
     * tile. */
    const pj_matmul_fit_tile *best = NULL;
    for (size_t i = 0; i < PJ_ARRAY_SIZE(split_tiles); i++) {
        const pj_matmul_fit_tile *t = &split_tiles[i];
        if (fill[i] > 0 && fill[i] >= most - SPLIT_TIE &&
            (!best || t->splits < best->splits || (t->splits == best->splits && t->bn > best->bn)))
            best = t;
    }
    return best && most >= SPLIT_GAIN * unsplit ? best : NULL;
}

const char *pj_matmul_fit_words(const pj_request *request, const char *params,
                                const uint64_t *sizes, int sms, int llvm)
{
    matmul_config config;
    if (pj_matmul_config_from(&config, request) != PTXJIT_OK) {
        pj_error_clear(); /* a template of its own: the op says what it lacks */
        return NULL;
    }
    if (!pj_matmul_is_wgmma(config.variant) || config.cluster != 1 ||
        pj_matmul_fit_names_tile(params))
        return NULL;
    const pj_matmul_fit_tile *tile =
        pj_matmul_fit_choose(sizes[0], sizes[1], config.bm, config.tile_n, sms);
    /* The llvm backend's generator builds no split-K; nor does a template without it. */
    const pj_param_reader reader = pj_request_reader(request);
    if (llvm || !pj_read(&reader, "splits").present)
        return tile ? tile->words : NULL;
    const uint64_t k_tiles = (sizes[2] + (uint64_t)config.bk - 1) / (uint64_t)config.bk;
    const pj_matmul_fit_tile *split = pj_matmul_fit_split(sizes[0], sizes[1], k_tiles, sms);
    tile = split ? split : tile;
    return tile ? tile->words : NULL;
}

const pj_matmul_fit_tile *pj_matmul_fit_tile_of(const char *words)
{
    for (size_t i = 0; words && i < PJ_ARRAY_SIZE(smaller_tiles); i++)
        if (smaller_tiles[i].words == words)
            return &smaller_tiles[i];
    for (size_t i = 0; words && i < PJ_ARRAY_SIZE(split_tiles); i++)
        if (split_tiles[i].words == words)
            return &split_tiles[i];
    return NULL;
}
