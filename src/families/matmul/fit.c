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
 * (a 128-row tile of a 64-row C is half empty). The 64 x 128 tile takes nine stages, the most
 * that fit (C then leaves directly): a decoding's products stream B, and a ninth stage in
 * flight ran 1 x 14336 x 4096 at 0.988 of cuBLAS against 0.932 with eight in the same rounds
 * (0.926 against 0.902 across two calls), 16 x 4096 x 4096 in four parts 0.849 against 0.842
 * (H200, L2 emptied by a read; docs/PERFORMANCE.md, 2026-11-29). */
#define TILE_128x192 "mma=m64n192k16 stages=4"
#define TILE_128x128 "mma=m64n128k16 stages=6 sched=grid"
#define TILE_64x192 "bm=64 consumers=1 mma=m64n192k16 stages=6"
#define TILE_64x128 "bm=64 consumers=1 mma=m64n128k16 stages=9"
#define TILE_64x64 "bm=64 consumers=1 mma=m64n64k16 stages=8"
static const pj_matmul_fit_tile smaller_tiles[] = {
    {128, 192, TILE_128x192, 1}, {128, 128, TILE_128x128, 1}, {64, 192, TILE_64x192, 1},
    {64, 128, TILE_64x128, 1},   {64, 64, TILE_64x64, 1},
};

/* fp8 takes the 128 x 128 tile with persistent blocks, not sched=grid: on the H200 at 256 x 8192
 * x 4096 grid ran at 0.931 of cuBLASLt and persistent at 0.995, at 256 x 14336 x 4096 0.798
 * against 0.900 (docs/PERFORMANCE.md, 2026-11-29 09:00). And where the fit keeps the default
 * tile for a product of FP8_ROW_TILES_MIN to FP8_ROW_TILES_MAX row tiles of 128, fp8 takes it
 * too: its K loop runs twice as fast as bf16's over the same bytes, and the default's three
 * stages (the 64 KiB tile of C for the TMA stores leaves room for no more) kept less of B in
 * flight than 128 x 128's six. Measured against the default at 15 shapes (the same rounds):
 * from 2 to 12 row tiles it won at 200 / 256 / 384 / 1024 / 1536 rows (256 x 14336 x 4096
 * 0.801 -> 0.900, 256 x 57344 x 4096 0.772 -> 0.913, 1024 x 14336 x 4096 0.821 -> 0.899),
 * tied at 768, lost 1-3% at 192 and 512 (their spreads); it lost at one row tile (128 x 32000 x
 * 4096 0.971 -> 0.931) and at 16 or more (2048 / 4096 x 14336 x 4096 0.920 -> 0.892, 0.914 ->
 * 0.873), where B is read from L2 by many row tiles and the wider tile's fewer loads win. On
 * shapes not used to set the rule (09:13) it won at 512 / 768 x 28672 x 4096 (0.815 -> 0.906,
 * 0.851 -> 0.890) and 1280 x 14336 x 4096 (0.817 -> 0.882); at 384 x 11008 x 4096 it was
 * 0.928 against 0.946, their spreads overlapping. bf16 keeps the default (0.986 against 1.014
 * at 256 x 14336 x 4096). */
#define TILE_128x128_FP8 "mma=m64n128k16 stages=6"
static const pj_matmul_fit_tile fp8_tile = {128, 128, TILE_128x128_FP8, 1};
/* ... or 128 x 112, where its tiles fill the same number of waves (more than one) fuller and
 * the last row tile is more than FP8_112_LAST_ROWS_MIN rows: 256 x 14336 x 4096 makes 224 tiles
 * of 128 x 128 on 132 SMs, a second wave 70% full, and 256 of 128 x 112, 94%. On the H200 (L2
 * emptied by a read, 5 rounds against cuBLASLt; docs/PERFORMANCE.md, 2026-11-29 16:24-16:36):
 * 256 x 14336 x 4096 0.953 against 0.859, 512 x 14336 x 4096 0.949 against 0.871, and held out
 * 768 x 14336 x 4096 0.902 against 0.844, 256 x 28672 x 4096 0.944 against 0.901; at 200 x
 * 14336 x 4096 (a last row tile of 72) it lost, 0.716 against 0.779. (In the twelve LLM shapes'
 * run of 16:31, 256 x 14336 x 4096 was 0.902, rounds 0.899-0.955.) Its C leaves through seven
 * 32-byte boxes per 64 rows (with 128-byte boxes only it was stored directly, and lost), so
 * only a 16-bit C takes it: an f32 tile of C does not fit beside the six stages. */
#define TILE_128x112_FP8 "mma=m64n112k16 stages=6"
static const pj_matmul_fit_tile fp8_tile_112 = {128, 112, TILE_128x112_FP8, 1};
#define FP8_112_LAST_ROWS_MIN 96
#define FP8_ROW_TILES_MIN 2
#define FP8_ROW_TILES_MAX 12
/* ... whose last row tile is more than half full: at 160 rows (a last tile of 32) 128 x 128
 * lost, 0.680 -> 0.610, at 192 (64) 0.737 -> 0.715, at 200 (72) it won, 0.724 -> 0.772. */
#define FP8_LAST_ROWS_MIN 64

/* Ping-pong consumers (sched=pingpong): each of the two consumer warpgroups takes whole tiles
 * of 128 rows in turn, so one stores its tile while the other multiplies, where the default's
 * two consumers split one tile and the tensor cores wait while they store it together. Under
 * Nsight Compute at fp8 4096 x 14336 x 4096 (H200, docs/PERFORMANCE.md, 2026-11-29 21:03) the
 * default kept the tensor pipe busy 85.7% of the kernel's time, the searched cuBLASLt's kernel
 * (nvjet 176x128, 5 stages, clusters of 2) 96.1%. A consumer's tile is 128 x 128 with six
 * stages or, for fp8, 128 x 176 with four (176 accumulators a thread); the fit takes ping-pong
 * where each block has two tiles or more (a lone tile has nothing to overlap: fp8 256 x 14336 x
 * 4096, 164 tiles of 128 x 176 on 132 SMs, ran at 0.700 against the fit's 0.897), C is 16-bit
 * (an f32 tile of C leaves too few stages) and the fit would otherwise keep the default or,
 * for fp8, its 128-row tiles. Measured against the searched cuBLASLt / cuBLAS in 3 rounds on the
 * H200 (21:20-21:30; the fit before in brackets): fp8 4096 x 14336 x 4096 0.964 (0.914),
 * 2048 x 14336 x 4096 0.966 (0.916), 1024 x 14336 x 4096 0.971 (0.900), 8192^3 1.035 (0.984),
 * 4096^3 0.964 with 128 x 128 (0.953), 2048 x 4096 x 4096 0.962 (0.951); 3072 x 8192 x 8192 lost
 * (0.945 against 0.959); bf16 with 128 x 128: 1024 x 14336 x 4096 0.992 (0.887), 4096 x 14336
 * x 4096 1.012 (0.991), 8192^3 1.008 (0.998), 2048 x 4096 x 4096 0.982 (0.991). bf16's 128 x
 * 176 lost (0.964 at 4096 x 14336 x 4096). fp8 takes 128 x 176 where it is predicted at most
 * PINGPONG_WIDE_TAKING of 128 x 128's time: waves of tiles times a tile's time, PINGPONG_WIDE_
 * EXPONENT of the area ratio (the wider tile loads fewer bytes a flop: at 4096 x 14336 x 4096 its
 * 20 waves ran 4.5% faster than 128 x 128's 28 at 128 / 176 of its area each). It won where N
 * = 14336 (82 columns of tiles, 99% full) and lost 1-3% at N = 4096 and 8192 (24 and 47
 * columns, the last 27% and 55% full). Not with a bias: its loads push 128 x 176's epilogue
 * past the consumers' 232 registers (36-72 bytes spilled, never measured), 128 x 128's not. */
#define TILE_PINGPONG_128 "mma=m64n128k16 stages=6 sched=pingpong"
#define TILE_PINGPONG_176 "mma=m64n176k16 stages=4 sched=pingpong"
static const pj_matmul_fit_tile pingpong_tiles[] = {
    {128, 128, TILE_PINGPONG_128, 1},
    {128, 176, TILE_PINGPONG_176, 1},
};
#define PINGPONG_TILES_PER_SM 2
#define PINGPONG_WIDE_EXPONENT 0.89
#define PINGPONG_WIDE_TAKING 0.97
/* fp8 also takes 128 x 176 where 128 x 128's last column of tiles would hold a sliver of C, at
 * most PINGPONG_SLIVER_MAX columns: each row of tiles then multiplies a whole tile for almost
 * nothing, which cost more than the waves model counts. Against the searched cuBLASLt on the
 * H200 (3 rounds, L2 emptied; docs/PERFORMANCE.md, 2026-11-30 04:10), 128 x 176 against 128 x
 * 128: 4093 x 4097 x 4095 (a last column of 1) 0.940 against 0.892, 4096 x 4100 x 4096 (4)
 * 2.554 against 2.433, 2047 x 4097 x 4095 0.926 against 0.918; it lost with 11 (3001 x 5003 x
 * 4096, 1.070 against 1.096) and with none (4096 x 4096 x 4095, 1.087 against 1.121). */
#define PINGPONG_SLIVER_MAX 8

/* ... and for fp8 the cooperative 128 x 224 (three stages, C through the TMA) in ping-pong's
 * place where its tiles make two waves and ping-pong's four: 512 x 14336 x 4096 is 448 tiles of
 * 128 x 128 on 132 SMs (a fourth wave 39% full, and 128 x 176's third 48%) and 256 of 128 x 224
 * (a second wave 94% full). Against the searched cuBLASLt on the H200 (3 rounds, L2 emptied; docs/PERFORMANCE.md,
 * 2026-11-29 22:38-23:33), 128 x 224 against ping-pong 128 x 128: 512 x 14336 x 4096 0.964 /
 * 0.973 against 0.924 / 0.913, 1024 x 7168 x 4096 0.949 (0.906), 768 x 9216 x 4096 0.923
 * (0.863), 2048 x 3584 x 4096 0.949 (0.910); it lost at 256 x 28672 x 4096 (0.869 against
 * 0.917: two row tiles, each wave reading half of B's 117 MB at once) and at one wave (256 x
 * 14336 x 4096, 0.821 against 128 x 112's 0.907). So it is taken for four row tiles or more
 * where its two waves are predicted at most FP8_224_TAKING of ping-pong's time (the same model:
 * all four wins were predicted at 0.823). On shapes not used to set it: 1664 x 4096 x 4096
 * 0.928 against 0.874, 1152 x 6144 x 4096 0.946 (0.900), 896 x 8192 x 4096 0.964 (0.912), 640 x
 * 11008 x 4096 0.931 (0.883), 1280 x 5120 x 4096 0.928 (0.874). Not with a bias (unmeasured). */
#define TILE_128x224_FP8 "mma=m64n224k16 stages=3"
static const pj_matmul_fit_tile fp8_tile_224 = {128, 224, TILE_128x224_FP8, 1};
#define FP8_224_ROW_TILES_MIN 4
#define FP8_224_TAKING 0.85

/* Split-K (the template's splits=): where few rows make few tiles (a decoding's, or up to 128
 * rows: SPLIT_ROWS_MAX below), each tile's K loop is cut into parts run by different blocks.
 * The tiles and counts a fit takes, as literal words (the fit hands out words that live as
 * long as the library). Measured on the H200
 * (docs/PERFORMANCE.md, 2026-11-28 15:19) at 1 and 16 x 4096 x 4096: 64 x 128 tiles in 4 parts
 * 0.966 / 0.903 of cuBLAS, in 2 parts 0.959 / 0.895, 64 x 64 in 2 parts 0.937 / 0.849, 64 x 192
 * in 4 parts 0.927 / 0.819; 6 or more parts lost at every shape (8: 0.57-0.68), the adding
 * growing with the parts. A wider tile's K loop issues fewer, larger wgmma for the same bytes.
 * Those figures had L2 left dirty by the bench's old fill; with it emptied by a read (2026-11-29)
 * 16 x 4096 x 4096 in four parts was 0.849 and unsplit with nine stages 0.743 in the bench, but
 * Nsight Compute timed the kernels 15.7 and 14.7 us: the split stays until a longer run
 * settles it. */
#define SPLIT_COUNTS(X, BN, WORDS) X(BN, WORDS, 2) X(BN, WORDS, 3) X(BN, WORDS, 4)
/* store=direct: the adding writes C itself (a tile of C in shared memory would only sit unused
 * beside the stages, and C is staged for 16-byte rows only where its pairs need it). */
#define SPLIT_WITH(BN, WORDS, S) {64, BN, WORDS " splits=" #S " store=direct", S},
static const pj_matmul_fit_tile split_tiles[] = {
    SPLIT_COUNTS(SPLIT_WITH, 128, TILE_64x128)
    SPLIT_COUNTS(SPLIT_WITH, 64, TILE_64x64)
};
/* fp8's 64 x 64 tile, unsplit and in parts, takes 13 stages (the most that fit beside
 * store=tma's tile of C) for bf16's 8, for the same reason as its 128 x 128 tile's six (a stage
 * lasts half as long), measured on the H200 in 7 rounds (docs/PERFORMANCE.md, 2026-11-29
 * 09:00): 128 x 4096 x 4096 0.914 -> 0.983,
 * 64 x 8192 x 4096 0.951 -> 0.987, 96 x 4096 x 4096 0.844 -> 0.877, 128 x 1024 x 4096 in four
 * parts 0.836 -> 0.899 (0.914 -> 0.994 at 128 x 4096 x 4096 in a call before); bf16 at 13
 * stages 0.979 against 1.046, 0.880 against 0.933 at 128 and 96 x 4096 x 4096. */
#define TILE_64x64_FP8 "bm=64 consumers=1 mma=m64n64k16 stages=13"
static const pj_matmul_fit_tile fp8_tile_64x64 = {64, 64, TILE_64x64_FP8, 1};
/* fp8's split-K also has a 64 x 32 tile (16 stages), and takes the fewest parts before the
 * widest tile: an fp8 part's K loop runs twice as fast over the same bytes, so adding the parts
 * weighs twice as much. On the H200 (docs/PERFORMANCE.md, 2026-11-29 18:33-19:02, 7 and 9
 * rounds against the searched cuBLASLt, TFLOP/s against the widest-first pick's): 128 x 1024 x
 * 4096 64 x 32 in 2 parts 116.9-118.1 against 64 x 64 in 4 106.2-110.7, 128 x 768 x 4096 89.9
 * against 81.6-86.0, 80 x 2048 x 4096 64 x 64 in 2 123.7 against 64 x 128 in 4 113.7-114.1;
 * 96 x 1024 x 4096 tied (81.3 against 80.4-83.9), 128 x 1024 x 8192 191.7 against 196.2. bf16
 * lost with either (64 x 32 in 2: 94.5 against 100.5-101.4 at 128 x 1024 x 4096). */
#define TILE_64x32_FP8 "bm=64 consumers=1 mma=m64n32k16 stages=16"
static const pj_matmul_fit_tile fp8_split_tiles[] = {
    SPLIT_COUNTS(SPLIT_WITH, 128, TILE_64x128)
    SPLIT_COUNTS(SPLIT_WITH, 64, TILE_64x64_FP8)
    SPLIT_COUNTS(SPLIT_WITH, 32, TILE_64x32_FP8)
};

/* A decoding's product as C's transpose (swap=1, the template's): few rows of A make 64-row
 * tiles of mostly zeros, and cuBLAS runs such products with the weights (B's rows) on wgmma's
 * 64-row side and 8 or 16 rows of A on its N side (cuBLASLt's kernel at fp8 16 x 4096 x 4096: a
 * 64 x 8 tile, 16 stages; docs/PERFORMANCE.md, 2026-11-29 01:55). The swapped tile holds all of
 * A's rows up to 32 (8, 16 or 32 of them), 32 for up to 64, with 16 stages of 9 to 12 KiB,
 * unsplit. On the H200 (2026-11-29 10:50-11:04, 3 rounds each, against the fit before):
 *   fp8  1 x 4096 x 4096 1.075 (0.852), 16 x 4096 x 4096 1.057 (0.844), 64 x 4096 x 4096
 *        0.896 (0.692), 1 x 8192 x 4096 1.062;
 *   bf16 1 x 4096 x 4096 1.007 (0.922), 1 x 14336 x 4096 0.948 (0.921), 16 x 4096 x 4096 0.976
 *        (0.907), 32 x 4096 x 4096 0.945 (0.896), 64 x 4096 x 4096 0.778 (0.734);
 *   tf32 1 x 8192 x 4096 0.945 (0.829), 16 x 4096 x 4096 1.032 (1.015).
 * Where fp8's swapped tiles are more than one wave they lost (1 x 14336 x 4096 0.932 against
 * 0.968, 16 x 14336 x 4096 0.953 against 0.995: 224 tiles on 132 SMs), bf16's did not. Swapped
 * tiles in parts lost everywhere (0.49-0.90), and at 128 x 1024 x 4096 bf16 lost (0.715 against
 * split-K's 0.912) and fp8 tied (0.913 / 0.830 against 0.879): past 64 rows the fit keeps the
 * others. */
#define TILE_SWAP_8 "swap=1 bm=64 consumers=1 mma=m64n8k16 stages=16"
#define TILE_SWAP_16 "swap=1 bm=64 consumers=1 mma=m64n16k16 stages=16"
#define TILE_SWAP_32 "swap=1 bm=64 consumers=1 mma=m64n32k16 stages=16"
static const pj_matmul_fit_tile swap_tiles[] = {
    {64, 8, TILE_SWAP_8, 1},
    {64, 16, TILE_SWAP_16, 1},
    {64, 32, TILE_SWAP_32, 1},
};
#define SWAP_ROWS_MAX 64

/* A part's K loop is at least this many k tiles (of 128 bytes of K): shorter ones spend more
 * on filling the pipeline and adding the parts than the parallelism gains. */
#define MIN_PART_K_TILES 4
/* Split only products of this many rows at most; past a decoding's DECODE_ROWS, only where
 * even 64 x 64 tiles leave more than half the SMs without a tile, where the
 * parts' blocks put idle SMs to work. Where the tiles already fill a wave the parts only add
 * work: on the H200 (L2 emptied by a read; docs/PERFORMANCE.md, 2026-11-29 04:40) 128 x 1024 x
 * 4096 (32 tiles) ran at 0.893 of cuBLAS in four parts against 0.695 unsplit, 128 x 4096 x 4096
 * (128 tiles) at 0.723 in two against 0.969. Before the last part's adding loaded its sums in
 * quads, several deep (the template's wg_add_quads), no split of 128 x 1024 x 4096 won and
 * splits stopped at 32 rows. */
#define SPLIT_ROWS_MAX 128
#define DECODE_ROWS 32
/* Fills within SPLIT_TIE of the fullest count as equal (bf16 and the others: the wider tile,
 * then fewer parts win; fp8: fewer parts, then the wider tile). */
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
static const char *const tile_words[] = {"mma",     "bm",    "consumers", "stages",
                                         "sched",   "group", "cluster",   "store",
                                         "splits",  "swap"};

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

/* Waves of tiles on sms SMs. */
static uint64_t waves_of(uint64_t tiles, int sms)
{
    return (tiles + (uint64_t)sms - 1) / (uint64_t)sms;
}

/* Waves of bm x bn tiles over an m x n C on sms SMs, times a tile's time relative to one of
 * area_1: the area ratio to the power exponent. */
static double waves_time(uint64_t m, uint64_t n, int bm, int bn, int sms, double area_1,
                         double exponent)
{
    const uint64_t tiles =
        (m + (uint64_t)bm - 1) / (uint64_t)bm * ((n + (uint64_t)bn - 1) / (uint64_t)bn);
    return (double)waves_of(tiles, sms) * pow((double)bm * bn / area_1, exponent);
}

/* The smaller tiles' model: area_1 the default's. */
static double predicted_time(uint64_t m, uint64_t n, int bm, int bn, int sms, double area_1)
{
    return waves_time(m, n, bm, bn, sms, area_1, TILE_TIME_EXPONENT);
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

/* The share of sms SMs that t's units (tiles of m x n times parts) keep busy, or 0 where they
 * are more than one wave (parts of a tile run side by side, never after each other) or a part
 * would be shorter than MIN_PART_K_TILES of the k_tiles. */
static double split_fill(const pj_matmul_fit_tile *t, uint64_t m, uint64_t n, uint64_t k_tiles,
                         int sms)
{
    const uint64_t units =
        (m + 63) / 64 * ((n + (uint64_t)t->bn - 1) / (uint64_t)t->bn) * (uint64_t)t->splits;
    return (uint64_t)t->splits * MIN_PART_K_TILES <= k_tiles && units <= (uint64_t)sms
               ? (double)units / sms
               : 0;
}

/* Whether t goes before best (NULL: nothing yet) among equally full splits: the wider tile, then
 * the fewer parts (the least to add); with fewest_first the fewer parts, then the wider tile. */
static int split_prefers(const pj_matmul_fit_tile *t, const pj_matmul_fit_tile *best,
                         int fewest_first)
{
    if (!best)
        return 1;
    if (fewest_first && t->splits != best->splits)
        return t->splits < best->splits;
    return t->bn != best->bn ? t->bn > best->bn : t->splits < best->splits;
}

/* Of tiles (count of them), the tile and parts for split-K whose units (tiles x parts, one
 * wave at most, parts of MIN_PART_K_TILES or more) fill the sms SMs best; of the fills within
 * SPLIT_TIE of that, the widest tile and then the fewest parts, or with fewest_first the fewest
 * parts and then the widest tile. */
static const pj_matmul_fit_tile *split_of(const pj_matmul_fit_tile *tiles, size_t count,
                                          uint64_t m, uint64_t n, uint64_t k_tiles, int sms,
                                          int fewest_first)
{
    if (sms < 1 || !m || !n || m > SPLIT_ROWS_MAX || m >= (1ull << 31) || n >= (1ull << 31))
        return NULL;
    if (m > DECODE_ROWS && (m + 63) / 64 * ((n + 63) / 64) * 2 >= (uint64_t)sms)
        return NULL; /* 64 x 64 tiles fill half the SMs or more */
    double most = 0;
    for (size_t i = 0; i < count; i++)
        most = fmax(most, split_fill(&tiles[i], m, n, k_tiles, sms));
    const pj_matmul_fit_tile *best = NULL;
    for (size_t i = 0; i < count; i++) {
        const pj_matmul_fit_tile *t = &tiles[i];
        const double fill = split_fill(t, m, n, k_tiles, sms);
        if (fill <= 0 || fill < most - SPLIT_TIE)
            continue;
        if (split_prefers(t, best, fewest_first))
            best = t;
    }
    return best;
}

const pj_matmul_fit_tile *pj_matmul_fit_split(uint64_t m, uint64_t n, uint64_t k_tiles, int sms)
{
    return split_of(split_tiles, PJ_ARRAY_SIZE(split_tiles), m, n, k_tiles, sms, 0);
}

const pj_matmul_fit_tile *pj_matmul_fit_split_fp8(uint64_t m, uint64_t n, uint64_t k_tiles,
                                                  int sms)
{
    return split_of(fp8_split_tiles, PJ_ARRAY_SIZE(fp8_split_tiles), m, n, k_tiles, sms, 1);
}

/* A decoding's product without wgmma (sched=gemv): B's bytes read once by mma.sync from global
 * memory, 16 of its rows a block of four warps. Taken for bf16 and f16 (2-byte elements) with
 * GEMV_ROWS_MAX rows or fewer where B is K-major and a row's bytes fit the kernel's 32-bit
 * count (GEMV_ROW_BYTES_MAX, as the op checks). On the H200 (docs/PERFORMANCE.md, 2026-11-30
 * 05:45) bf16 with K-major B at 1, 4 and 8 rows beat the swapped 64 x 8 tile by 2-8% in three
 * calls, and lost at 16 rows (0.86 against 0.92); fp8's, whose mma.sync ptxas widens to f16
 * HMMA, moved from call to call and mostly trailed (8 x 4096: 0.91-0.99 against the swapped
 * tile's 1.06-1.12), and tf32's was not measured, so both keep the swapped tiles. */
#define GEMV_ROWS_MAX 8
static const pj_matmul_fit_tile gemv_tile = {16, 16, "sched=gemv", 1};

const pj_matmul_fit_tile *pj_matmul_fit_gemv(uint64_t m, uint64_t n, uint64_t k_bytes,
                                             int in_bytes, int b_k_major)
{
    return in_bytes == 2 && b_k_major && m >= 1 && m <= GEMV_ROWS_MAX && n >= 1 &&
                   k_bytes >= 1 && k_bytes <= PJ_MATMUL_GEMV_ROW_BYTES_MAX
               ? &gemv_tile
               : NULL;
}

const pj_matmul_fit_tile *pj_matmul_fit_swap(uint64_t m, uint64_t n, int sms, int one_wave)
{
    if (sms < 1 || !m || !n || m > SWAP_ROWS_MAX || n >= (1ull << 31))
        return NULL;
    const pj_matmul_fit_tile *t = &swap_tiles[m <= 8 ? 0 : m <= 16 ? 1 : 2];
    const uint64_t tiles = (n + 63) / 64 * ((m + (uint64_t)t->bn - 1) / (uint64_t)t->bn);
    return !one_wave || tiles <= (uint64_t)sms ? t : NULL;
}

/* Waves of 128 x bn tiles over an m x n C on sms SMs times a tile's time, that of a 128 x 128
 * tile the unit (ping-pong's model). */
static double pingpong_time(uint64_t m, uint64_t n, int bn, int sms)
{
    return waves_time(m, n, 128, bn, sms, 128.0 * 128.0, PINGPONG_WIDE_EXPONENT);
}

const pj_matmul_fit_tile *pj_matmul_fit_two_waves(const pj_matmul_fit_tile *pingpong,
                                                  uint64_t m, uint64_t n, int sms)
{
    if (!pingpong || sms < 1)
        return pingpong;
    const uint64_t rows = (m + 127) / 128, tiles = rows * ((n + 223) / 224);
    if (rows < FP8_224_ROW_TILES_MIN || tiles <= (uint64_t)sms || tiles > 2 * (uint64_t)sms)
        return pingpong;
    return pingpong_time(m, n, 224, sms) <=
                   FP8_224_TAKING * pingpong_time(m, n, pingpong->bn, sms)
               ? &fp8_tile_224
               : pingpong;
}

const pj_matmul_fit_tile *pj_matmul_fit_pingpong(uint64_t m, uint64_t n, int wide, int sms)
{
    if (sms < 1 || !m || !n)
        return NULL;
    const uint64_t rows = (m + 127) / 128, narrow = rows * ((n + 127) / 128),
                   wide_tiles = rows * ((n + 175) / 176),
                   least = (uint64_t)PINGPONG_TILES_PER_SM * (uint64_t)sms;
    if (narrow < least)
        return NULL;
    const int sliver = n % 128 != 0 && n % 128 <= PINGPONG_SLIVER_MAX;
    return wide && wide_tiles >= least &&
                   (sliver || pingpong_time(m, n, 176, sms) <=
                                  PINGPONG_WIDE_TAKING * pingpong_time(m, n, 128, sms))
               ? &pingpong_tiles[1]
               : &pingpong_tiles[0];
}

/* Whether the request's template has sched=`value` (an older one may not). */
static int has_sched(const pj_request *request, const char *value)
{
    const int at = pj_schema_param_index(request->schema, "sched");
    return at >= 0 && request->schema->params[at].kind == PJ_PARAM_ENUM &&
           pj_param_value_index(&request->schema->params[at], value) >= 0;
}

/* fp8's 128 x 128 tile, or 128 x 112 where more of them fill the same waves (past one), its
 * last row tile is more than 3/4 full and C's elements are 16-bit (out_bytes 2). */
static const pj_matmul_fit_tile *fp8_128(uint64_t m, uint64_t n, int out_bytes, int sms)
{
    const uint64_t rows = (m + 127) / 128, wide = rows * ((n + 127) / 128),
                   narrow = rows * ((n + 111) / 112), last_rows = m - (rows - 1) * 128;
    return out_bytes == 2 && sms > 0 && wide > (uint64_t)sms && narrow > wide &&
                   waves_of(narrow, sms) == waves_of(wide, sms) &&
                   last_rows > FP8_112_LAST_ROWS_MIN
               ? &fp8_tile_112
               : &fp8_tile;
}

const pj_matmul_fit_tile *pj_matmul_fit_fp8(const pj_matmul_fit_tile *chosen, uint64_t m,
                                            uint64_t n, int bm, int bn, int out_bytes, int sms)
{
    if (chosen && chosen->bm == 128 && chosen->bn == 128 && chosen->splits == 1)
        return fp8_128(m, n, out_bytes, sms);
    if (chosen && chosen->bm == 64 && chosen->bn == 64 && chosen->splits == 1)
        return &fp8_tile_64x64;
    const uint64_t row_tiles = (m + 127) / 128, last_rows = m - (row_tiles - 1) * 128;
    if (!chosen && bm == 128 && bn == 256 && row_tiles >= FP8_ROW_TILES_MIN &&
        row_tiles <= FP8_ROW_TILES_MAX && last_rows > FP8_LAST_ROWS_MIN)
        return fp8_128(m, n, out_bytes, sms);
    return chosen;
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
    /* The llvm backend's generator builds neither swapped operands nor split-K; nor does a
     * template without them. */
    const pj_param_reader reader = pj_request_reader(request);
    const int fp8 = config.variant == MATMUL_WGMMA_FP8;
    const int in_bytes = pj_matmul_type_bytes(config.dtype);
    const pj_matmul_fit_tile *gemv =
        !llvm && has_sched(request, "gemv")
            ? pj_matmul_fit_gemv(sizes[0], sizes[1], sizes[2] * (uint64_t)in_bytes, in_bytes,
                                 config.b_nk)
            : NULL;
    if (gemv)
        return gemv->words;
    const pj_matmul_fit_tile *swapped = !llvm && pj_read(&reader, "swap").present
                                            ? pj_matmul_fit_swap(sizes[0], sizes[1], sms, fp8)
                                            : NULL;
    if (swapped)
        return swapped->words;
    const pj_matmul_fit_tile *tile =
        pj_matmul_fit_choose(sizes[0], sizes[1], config.bm, config.tile_n, sms);
    if (!llvm && pj_read(&reader, "splits").present) {
        const uint64_t k_tiles = (sizes[2] + (uint64_t)config.bk - 1) / (uint64_t)config.bk;
        const pj_matmul_fit_tile *split =
            fp8 ? pj_matmul_fit_split_fp8(sizes[0], sizes[1], k_tiles, sms)
                : pj_matmul_fit_split(sizes[0], sizes[1], k_tiles, sms);
        tile = split ? split : tile;
    }
    if (fp8)
        tile = pj_matmul_fit_fp8(tile, sizes[0], sizes[1], config.bm, config.tile_n,
                                 pj_dtype_bytes(config.out), sms);
    /* Ping-pong in place of the default or fp8's 128-row tiles (not for the llvm backend). */
    const int rows_128 = !tile || tile == &fp8_tile || tile == &fp8_tile_112;
    if (!llvm && rows_128 && config.bm == 128 && config.tile_n == 256 &&
        pj_dtype_bytes(config.out) == 2 && config.variant != MATMUL_WGMMA_TF32 &&
        has_sched(request, "pingpong")) {
        const int wide = fp8 && !config.bias;
        const pj_matmul_fit_tile *pingpong = pj_matmul_fit_pingpong(sizes[0], sizes[1], wide, sms);
        if (wide)
            pingpong = pj_matmul_fit_two_waves(pingpong, sizes[0], sizes[1], sms);
        tile = pingpong ? pingpong : tile;
    }
    return tile ? tile->words : NULL;
}

const pj_matmul_fit_tile *pj_matmul_fit_tile_of(const char *words)
{
    for (size_t i = 0; words && i < PJ_ARRAY_SIZE(smaller_tiles); i++)
        if (smaller_tiles[i].words == words)
            return &smaller_tiles[i];
    if (words && words == fp8_tile.words)
        return &fp8_tile;
    if (words && words == fp8_tile_112.words)
        return &fp8_tile_112;
    if (words && words == fp8_tile_64x64.words)
        return &fp8_tile_64x64;
    if (words && words == fp8_tile_224.words)
        return &fp8_tile_224;
    if (words && words == gemv_tile.words)
        return &gemv_tile;
    for (size_t i = 0; words && i < PJ_ARRAY_SIZE(pingpong_tiles); i++)
        if (pingpong_tiles[i].words == words)
            return &pingpong_tiles[i];
    /* bf16's split tiles before fp8's: their 64 x 128 words are the same literals, which the
     * compiler may merge (either entry then describes the same tile). */
    for (size_t i = 0; words && i < PJ_ARRAY_SIZE(split_tiles); i++)
        if (split_tiles[i].words == words)
            return &split_tiles[i];
    for (size_t i = 0; words && i < PJ_ARRAY_SIZE(fp8_split_tiles); i++)
        if (fp8_split_tiles[i].words == words)
            return &fp8_split_tiles[i];
    for (size_t i = 0; words && i < PJ_ARRAY_SIZE(swap_tiles); i++)
        if (swap_tiles[i].words == words)
            return &swap_tiles[i];
    return NULL;
}
