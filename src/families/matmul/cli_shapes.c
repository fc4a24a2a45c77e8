/* cli_shapes.c — `ptxjit bench matmul shapes=MxNxK,BxMxNxK,... [rounds=R] ["PARAMS" ...]`:
 * each shape, each parameter set (default: wgmma's defaults), against the fastest peer of its
 * input type measured in the same process — cublasGemmEx with its workspace, and every
 * algorithm (up to 16) that cuBLASLt's heuristic ranks for the product, both B layouts for
 * tf32 — in R rounds that alternate which side runs first (peer, ours; ours, peer; ...), each
 * side a median of runs; the ratio is the median of the rounds' ratios, with their spread. A
 * shape of four parts is a strided batch of B dense products, each right after the last: ours
 * through ptxjit_matmul_strided, the peers cublasGemmStridedBatchedEx and cuBLASLt with the
 * batch on each matrix layout. A shape a set cannot run is reported and the table goes on. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/libcuda.h"
#include "cli/timing.h"
#include "families/matmul/cli_shapes.h"

typedef struct {
    size_t batch, m, n, k; /* batch 1: one product */
} bench_shape;

/* One shape's parts ("8192x8192x8192": M x N x K; "32x1024x1024x128": B x M x N x K) into
 * out, *text moved past them; 0 when they are not such a shape. */
static int parse_shape(bench_shape *out, const char **text)
{
    unsigned long long v[4];
    int parts = 0;
    for (const char *at = *text;; at++) {
        char *end;
        if (parts == 4 || !isdigit((unsigned char)*at))
            return 0;
        v[parts] = strtoull(at, &end, 10);
        if (v[parts++] == 0)
            return 0;
        at = end;
        if (*at != 'x') {
            *text = at;
            break;
        }
    }
    if (parts < 3)
        return 0;
    *out = parts == 4 ? (bench_shape){v[0], v[1], v[2], v[3]} : (bench_shape){1, v[0], v[1], v[2]};
    return 1;
}

/* "8192x8192x8192,32x1024x1024x128" (M x N x K, or B x M x N x K, each); 0 when the text is
 * not such a list. */
static int parse_shapes(bench_shape *out, int capacity, const char *text)
{
    int count = 0;
    while (*text && count < capacity) {
        if (!parse_shape(&out[count++], &text))
            return 0;
        if (*text == ',')
            text++;
        else if (*text)
            return 0;
    }
    return *text ? 0 : count;
}

/* The peer found for a product: its job (kept for the rounds) and what it is. */
typedef struct {
    matmul_job job;
    double tflops;
    char name[96];
    char config[96]; /* cuBLASLt's numbering of its tile, stages and cluster, or empty */
    cublas_lt_product *lt[2]; /* one per B layout searched */
    cublas_lt_product *lt_padded; /* fp8 cuBLASLt takes only padded: the padded product */
    matmul_padding pad;           /* its copies */
} peer_choice;

/* cuBLAS's input and output of a type, for GemmEx (0: none) and cuBLASLt. */
static int peer_types(cublas_gemm *gemm, int *has_gemm, cublas_lt_input *lt, int *lt_out,
                      pj_dtype type)
{
    *has_gemm = 1;
    switch ((int)type) {
    case PJ_DTYPE_bf16:
        *gemm = CUBLAS_GEMM_BF16, *lt = CUBLAS_LT_BF16, *lt_out = 1;
        return 1;
    case PJ_DTYPE_f16:
        *gemm = CUBLAS_GEMM_F16, *lt = CUBLAS_LT_F16, *lt_out = 2;
        return 1;
    case PJ_DTYPE_f32:
        *gemm = CUBLAS_SGEMM_TF32, *lt = CUBLAS_LT_TF32, *lt_out = 0;
        return 1;
    case PJ_MATMUL_E4M3:
    case PJ_MATMUL_E5M2: /* cuBLASLt only, fast accumulation as wgmma_fp8, bf16 out */
        *has_gemm = 0;
        *lt = type == PJ_MATMUL_E4M3 ? CUBLAS_LT_E4M3 : CUBLAS_LT_E5M2, *lt_out = 1;
        return 1;
    }
    return 0;
}

/* Times one candidate (checked); keeps it where it is the fastest so far. */
static ptxjit_status try_candidate(peer_choice *best, matmul_job job, const char *name,
                                   const char *config, pj_dtype out, double tolerance, int runs)
{
    measurement r;
    ptxjit_status status = cli_matmul_measure(&r, &job, out, tolerance, runs);
    if (status != PTXJIT_OK) {
        pj_error_clear(); /* an algorithm that fails is no peer */
        return PTXJIT_OK;
    }
    if (r.correct && r.tflops > best->tflops) {
        best->job = job;
        best->tflops = r.tflops;
        snprintf(best->name, sizeof best->name, "%s", name);
        snprintf(best->config, sizeof best->config, "%s", config);
    }
    return PTXJIT_OK;
}

/* n and k padded for cuBLASLt's fp8 kernels, which take rows of whole 16-element units. */
static size_t to16(size_t x)
{
    return (x + 15) / 16 * 16;
}

/* A, B and C of d padded to rows of whole 16-element units, zeros past d's (matmul_padding),
 * and the copy that fills them: any matmul module's. */
static ptxjit_status padding_make(matmul_padding *p, const matmul_data *d, int b_nk,
                                  int out_bytes)
{
    memset(p, 0, sizeof *p);
    p->np = to16(d->n), p->kp = to16(d->k), p->in_bytes = 1, p->out_bytes = out_bytes;
    const size_t bytes[3] = {d->m * p->kp, (b_nk ? p->np * p->kp : p->kp * p->np),
                             d->m * p->np * (size_t)out_bytes};
    ptxjit_devptr *where[3] = {&p->a, &p->b, &p->c};
    ptxjit_status status = ptxjit_get_kernel(&p->copy, d->context, "matmul", "variant=naive",
                                             NULL);
    for (int i = 0; i < 3 && status == PTXJIT_OK; i++) {
        status = ptxjit_alloc(where[i], d->context, bytes[i]);
        if (status == PTXJIT_OK) /* on the default stream, before every copy into them */
            status = ptxjit_memset_d8_async(d->context, *where[i], 0, bytes[i], NULL);
    }
    return status;
}

static void padding_free(matmul_padding *p, ptxjit_context *context)
{
    if (p->a)
        ptxjit_free(context, p->a);
    if (p->b)
        ptxjit_free(context, p->b);
    if (p->c)
        ptxjit_free(context, p->c);
    memset(p, 0, sizeof *p);
}

/* fp8 whose k or n cuBLASLt's kernels refuse: its ranked algorithms on the product padded to
 * rows of whole 16-element units, the copies in and out timed with each (matmul_padding).
 * Only B K-major (TN), the one layout its fp8 kernels take. */
static void search_padded(peer_choice *best, matmul_data *d, cublas_peer *cublas,
                          ptxjit_devptr workspace, int nk, cublas_lt_input input, int lt_out,
                          double tolerance, int runs, int *timed)
{
    matmul_padding pad;
    const pj_dtype out = lt_out == 1 ? PJ_DTYPE_bf16 : PJ_DTYPE_f16;
    if (padding_make(&pad, d, nk, pj_dtype_bytes(out)) != PTXJIT_OK) {
        printf("cuBLASLt padded: not searched (%s)\n", ptxjit_last_error());
        pj_error_clear();
        padding_free(&pad, d->context);
        return;
    }
    const char *why = cublas_lt_product_make(&best->lt_padded, cublas, input, lt_out, d->m, pad.np,
                                             pad.kp, nk, 1, NULL, CLI_MATMUL_LT_WORKSPACE,
                                             CUBLAS_LT_MAX_ALGORITHMS);
    if (why) {
        printf("cuBLASLt padded to %zu x %zu x %zu: not searched (%s)\n", d->m, pad.np, pad.kp,
               why);
        padding_free(&pad, d->context);
        return;
    }
    best->pad = pad;
    const double before = best->tflops;
    for (int a = 0; a < cublas_lt_product_count(best->lt_padded); a++, (*timed)++) {
        char name[96], config[96];
        snprintf(name, sizeof name, "cuBLASLt%s algorithm %d of %d on %zu x %zu x %zu padded",
                 nk ? " TN" : "", a + 1, cublas_lt_product_count(best->lt_padded), d->m, pad.np,
                 pad.kp);
        cublas_lt_product_describe(best->lt_padded, a, config, sizeof config);
        matmul_job job = {.data = d, .cublas = cublas, .b_nk = nk, .workspace = workspace,
                          .lt = best->lt_padded, .lt_algorithm = a, .pad = &best->pad};
        try_candidate(best, job, name, config, out, tolerance, runs);
    }
    if (best->tflops > before)
        printf("peer's padding: A, B and C copied into rows of %zu and %zu elements and C "
               "back, by ptxjit's staging copy, in every timed run\n", pad.kp, pad.np);
}

/* The fastest peer of d's type: GemmEx and cuBLASLt's ranked algorithms, in the layout of our
 * sets (and, for tf32, the other too); for fp8 that cuBLASLt takes only padded, its
 * algorithms on the padded product with the copies timed. */
static ptxjit_status search_peer(peer_choice *best, matmul_data *d, cublas_peer *cublas,
                                 ptxjit_devptr workspace, int b_nk, int runs)
{
    cublas_gemm gemm;
    cublas_lt_input lt_input;
    int has_gemm, lt_out;
    memset(best, 0, sizeof *best);
    if (!cublas || !peer_types(&gemm, &has_gemm, &lt_input, &lt_out, d->dtype))
        return PTXJIT_OK;
    const int f32 = d->dtype == PJ_DTYPE_f32;
    const double tolerance = f32 ? 2e-3 : 1e-2;
    const pj_dtype out = lt_out == 0 ? PJ_DTYPE_f32 : lt_out == 1 ? PJ_DTYPE_bf16 : PJ_DTYPE_f16;
    int timed = 0;
    const ptxjit_matmul_layout *l = &d->layout;
    const cublas_batch batch = {l->batch, l->stride_a, l->stride_b, l->stride_c};
    for (int layout = 0; layout < 2; layout++) {
        const int nk = layout ? !b_nk : b_nk;
        if (layout && !f32)
            break; /* the inputs' layout is the sets': only tf32 compares both */
        char name[96], config[96];
        if (has_gemm) {
            snprintf(name, sizeof name, "%s%s",
                     l->batch > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx",
                     nk ? " TN" : "");
            matmul_job job = {.data = d, .cublas = cublas, .kind = gemm, .b_nk = nk};
            try_candidate(best, job, name, "", out, tolerance, runs);
            timed++;
        }
        const char *why = cublas_lt_product_make(&best->lt[layout], cublas, lt_input, lt_out,
                                                 d->m, d->n, d->k, nk, 1,
                                                 l->batch > 1 ? &batch : NULL,
                                                 CLI_MATMUL_LT_WORKSPACE,
                                                 CUBLAS_LT_MAX_ALGORITHMS);
        if (why) {
            printf("cuBLASLt%s: not searched (%s)\n", nk ? " TN" : "", why);
            if (!has_gemm && nk && l->batch == 1 && (d->k % 16 || d->n % 16))
                search_padded(best, d, cublas, workspace, nk, lt_input, lt_out, tolerance,
                              runs, &timed);
            continue;
        }
        for (int a = 0; a < cublas_lt_product_count(best->lt[layout]); a++, timed++) {
            snprintf(name, sizeof name, "cuBLASLt%s algorithm %d of %d", nk ? " TN" : "", a + 1,
                     cublas_lt_product_count(best->lt[layout]));
            cublas_lt_product_describe(best->lt[layout], a, config, sizeof config);
            matmul_job job = {.data = d, .cublas = cublas, .b_nk = nk, .workspace = workspace,
                              .lt = best->lt[layout], .lt_algorithm = a};
            try_candidate(best, job, name, config, out, tolerance, runs);
        }
    }
    if (best->tflops > 0)
        printf("peer: %s, %.1f GFLOP/s in its search (the fastest of %d cuBLAS candidates; "
               "/peer: each round's pair)\n", best->name, best->tflops * 1e3, timed);
    /* cuBLASLt's numbering names the kernel the figures are against (cublasLt.h decodes it). */
    if (best->tflops > 0 && *best->config)
        printf("peer's algorithm: %s (cublasLt.h's cublasLtMatmulTile_t, cublasLtMatmulStages_t, "
               "cublasLtClusterShape_t)\n", best->config);
    return PTXJIT_OK;
}

static void peer_free(peer_choice *p, ptxjit_context *context)
{
    cublas_lt_product_free(p->lt[0]);
    cublas_lt_product_free(p->lt[1]);
    cublas_lt_product_free(p->lt_padded);
    padding_free(&p->pad, context);
}

static ptxjit_status timed(double *ms, matmul_job *job, int runs)
{
    return time_median_ms_flushed(ms, job->data->context, cli_matmul_once, job, 1, runs,
                                  job->data->flush);
}

/* One set against the peer in rounds that alternate which side goes first. */
static ptxjit_status set_rounds(matmul_data *d, peer_choice *peer, const char *params,
                                int runs, int rounds, int *all_ok)
{
    matmul_config config;
    const pj_matmul_fit_tile *fitted = NULL;
    ptxjit_status status = cli_matmul_config_for(&config, &fitted, d, params);
    matmul_job ours = {.data = d, .params = params, .b_nk = config.b_nk, .config = &config};
    measurement checked;
    if (status == PTXJIT_OK) /* checked once against float64 */
        status = cli_matmul_measure(&checked, &ours, config.out,
                                    cli_matmul_tolerance(&config), runs);
    if (status != PTXJIT_OK)
        return status;
    double ratio[64], speed[64], peer_speed[64];
    int done = 0;
    for (int r = 0; r < rounds && r < 64 && status == PTXJIT_OK; r++, done++) {
        double ours_ms = checked.ms, peer_ms = 0;
        for (int side = 0; side < 2 && status == PTXJIT_OK; side++) {
            const int peer_now = (side == 0) == (r % 2 == 0);
            if (peer_now && peer->tflops > 0)
                status = timed(&peer_ms, &peer->job, runs);
            else if (!peer_now)
                status = timed(&ours_ms, &ours, runs);
        }
        speed[r] = 2.0 * (double)d->layout.batch * d->m * d->n * d->k / (ours_ms * 1e6);
        ratio[r] = peer_ms > 0 ? peer_ms / ours_ms : 0;
        peer_speed[r] = ratio[r] > 0 ? speed[r] / ratio[r] : 0; /* ratio: ours over the peer */
    }
    if (status != PTXJIT_OK)
        return status;
    double low = ratio[0], high = ratio[0];
    for (int r = 1; r < done; r++) {
        low = ratio[r] < low ? ratio[r] : low;
        high = ratio[r] > high ? ratio[r] : high;
    }
    char label[160];
    snprintf(label, sizeof label, "%s%s%s", params, fitted ? " + " : "",
             fitted ? fitted->words : "");
    printf("%-58s %10.1f %8.3f %6.3f-%-6.3f %9.2e %s\n", label, median_of(speed, done),
           median_of(ratio, done), low, high, checked.error, checked.correct ? "ok" : "WRONG");
    fflush(stdout);
    /* The tick: the peer's speed in these rounds (its search ran earlier, at other clocks). */
    cli_chart_bar(label, median_of(speed, done), median_of(peer_speed, done));
    *all_ok &= checked.correct;
    return PTXJIT_OK;
}

/* The input type and B layout of a set (f32 for one that does not read: its row says why). */
static void set_kind(pj_dtype *type, int *b_nk, ptxjit_context *context, const char *params)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    *type = PJ_DTYPE_f32;
    *b_nk = 0;
    if (ptxjit_get_kernel(&kernel, context, "matmul", params, NULL) == PTXJIT_OK &&
        pj_matmul_config_of(&config, kernel) == PTXJIT_OK) {
        *type = config.dtype;
        *b_nk = config.b_nk;
    }
}

/* The line that opens a shape's table. */
static void print_shape(bench_shape s, int rounds)
{
    if (s.batch > 1)
        printf("\nmatmul %zu x %zu x %zu x %zu (B x M x N x K: a strided batch of dense "
               "products), %d round%s\n", s.batch, s.m, s.n, s.k, rounds,
               rounds == 1 ? "" : "s (peer and ours alternating which goes first)");
    else
        printf("\nmatmul %zu x %zu x %zu (M x N x K), %d round%s\n", s.m, s.n, s.k, rounds,
               rounds == 1 ? "" : "s (peer and ours alternating which goes first)");
}

/* One shape: per input type and B layout of the sets (in the order they first come), random
 * inputs, the peer searched, then each set of it in rounds. */
static ptxjit_status shape_rows(ptxjit_context *context, cublas_peer *cublas,
                                ptxjit_devptr workspace, const cli_l2_flush *flush,
                                bench_shape s, int runs, int rounds, const char *const *sets,
                                int set_count, int *all_ok)
{
    ptxjit_status status = PTXJIT_OK;
    int done[64] = {0};
    print_shape(s, rounds);
    for (int i = 0; i < set_count && i < 64 && status == PTXJIT_OK; i++) {
        if (done[i])
            continue;
        pj_dtype type;
        int b_nk;
        set_kind(&type, &b_nk, context, sets[i]);
        matmul_data d;
        peer_choice peer;
        memset(&peer, 0, sizeof peer);
        const ptxjit_matmul_layout batch = cli_matmul_dense_batch(s.batch, s.m, s.n, s.k);
        status = cli_matmul_data_make_layout(&d, context, s.m, s.n, s.k, type, &batch, b_nk);
        d.flush = flush;
        if (status == PTXJIT_OK)
            status = search_peer(&peer, &d, cublas, workspace, b_nk, runs);
        if (status == PTXJIT_OK) {
            printf("%-58s %10s %8s %-13s %9s\n", "params", "GFLOP/s", "/peer", "spread",
                   "rel.err");
            char title[200];
            int at = snprintf(title, sizeof title, "matmul ");
            if (s.batch > 1)
                at += snprintf(title + at, sizeof title - (size_t)at, "%zu x ", s.batch);
            snprintf(title + at, sizeof title - (size_t)at, "%zu x %zu x %zu, %s%s", s.m, s.n,
                     s.k, pj_matmul_type_name(type), b_nk ? ", B transposed" : "");
            cli_chart_table(title, "GFLOP/s", NULL);
            char searched[160];
            snprintf(searched, sizeof searched, "%s, in its search", peer.name);
            if (peer.tflops > 0)
                cli_chart_reference(searched, peer.tflops * 1e3);
            cli_chart_mark_label("the peer in the same rounds (median)");
        }
        for (int j = i; j < set_count && j < 64 && status == PTXJIT_OK; j++) {
            pj_dtype other;
            int other_nk;
            set_kind(&other, &other_nk, context, sets[j]);
            if (other != type || other_nk != b_nk)
                continue;
            status = set_rounds(&d, &peer, sets[j], runs, rounds, all_ok);
            done[j] = 1;
        }
        peer_free(&peer, context);
        cli_matmul_data_free(&d);
    }
    return status;
}

/* L2 emptied before every timed run of ours and the peer's (issue 30: the operands of the
 * smaller shapes stay in the L2 from one run to the next, which flatters both sides
 * unequally), as mode says (timing.h): a buffer of twice the L2, filled once and read (or
 * filled) outside the events; the read's kernel is made here, so that no sample waits for it. */
static ptxjit_status flush_make(cli_l2_flush *flush, ptxjit_context *context,
                                cli_flush_mode mode)
{
    const size_t l2 = cli_cuda_l2_bytes(context);
    flush->mode = mode;
    flush->buffer = 0;
    flush->bytes = 2 * (l2 ? l2 : (size_t)50 << 20);
    if (mode == CLI_FLUSH_NONE) {
        printf("L2 not emptied between runs (flush=none): operands that fit stay in it\n");
        return PTXJIT_OK;
    }
    ptxjit_status status = ptxjit_alloc(&flush->buffer, context, flush->bytes + 256);
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d8_async(context, flush->buffer, 0x5a, flush->bytes, NULL);
    if (status == PTXJIT_OK && mode == CLI_FLUSH_READ)
        status = ptxjit_reduce_async(context, "dtype=i32", flush->buffer, flush->bytes / 4,
                                     flush->buffer + flush->bytes, NULL);
    if (status == PTXJIT_OK)
        status = ptxjit_synchronize(context);
    if (status == PTXJIT_OK)
        printf("L2 (%zu MB) emptied before every timed run of each side, outside the events: "
               "%s\n", l2 >> 20,
               mode == CLI_FLUSH_READ ? "a sum read over twice its size (flush=read: clean lines "
                                        "left; flush=write fills it instead)"
                                      : "twice its size filled (flush=write: dirty lines left, "
                                        "written back during the timed run)");
    return status;
}

ptxjit_status cli_matmul_shapes_bench(ptxjit_context *context, cublas_peer *cublas,
                                      const char *list, int runs, int rounds,
                                      cli_flush_mode mode,
                                      const char *const *sets, int set_count, int *all_ok)
{
    static const char *const defaults[] = {"variant=wgmma"};
    bench_shape shapes[32];
    int count = parse_shapes(shapes, 32, list);
    if (!count)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "bench matmul: shapes=%s is not a list of "
                        "MxNxK or BxMxNxK, a strided batch of B products (e.g. "
                        "shapes=8192x8192x8192,32x1024x1024x128)", list);
    if (!set_count) {
        sets = defaults;
        set_count = (int)PJ_ARRAY_SIZE(defaults);
    }
    ptxjit_devptr workspace = 0;
    cli_l2_flush flush = {CLI_FLUSH_NONE, 0, 0};
    ptxjit_status status = ptxjit_alloc(&workspace, context, CLI_MATMUL_LT_WORKSPACE);
    if (status == PTXJIT_OK)
        status = flush_make(&flush, context, mode);
    /* A shape a set cannot run is reported and the table goes on: the bench shows which. With
     * the table going to a file and stderr a terminal, a progress line there says which shape
     * is being measured (a shape's peer search and rounds take seconds to minutes); with both
     * on the terminal the rows are the progress, and in a pipe nothing extra is written. */
    const int progress = isatty(STDERR_FILENO) && !isatty(STDOUT_FILENO);
    for (int i = 0; i < count && status == PTXJIT_OK; i++) {
        if (progress) {
            char what[96];
            snprintf(what, sizeof what, "shape %zux%zux%zu", shapes[i].m, shapes[i].n,
                     shapes[i].k);
            cli_progress_bar(NULL, i, count, what);
        }
        status = shape_rows(context, cublas, workspace, &flush, shapes[i], runs, rounds, sets,
                            set_count, all_ok);
        if (status == PTXJIT_ERR_INVALID_ARGUMENT || status == PTXJIT_ERR_PARAM) {
            printf("  refused: %s\n", ptxjit_last_error());
            *all_ok = 0;
            status = PTXJIT_OK;
        }
    }
    if (progress)
        cli_progress_bar(NULL, count, count, ""); /* done: the line erased */
    if (workspace)
        ptxjit_free(context, workspace);
    if (flush.buffer)
        ptxjit_free(context, flush.buffer);
    return status;
}
