/* tuner.c — ptxjit_tune: the space, a record if one exists, else the candidates compiled,
 * pruned and timed (loop.c, rounds.c), the pick (pick.c), and the record stored; the result's
 * accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune/tune.h"
#include "util/nvtx.h"

#define DEFAULT_RUNS 10
#define MAX_RUNS 1000

pj_tune_bench_factory *pj_tune_bench_override;

void ptxjit_tune_options_init(ptxjit_tune_options *options)
{
    if (options)
        memset(options, 0, sizeof *options);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- setup ---- */

static ptxjit_status check_options(ptxjit_context *context, const char *family,
                                   const ptxjit_tune_options *options, const pj_family **builtin)
{
    if (!context || !family || !options)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_tune: context, family and options must be given (fill the "
                        "options with ptxjit_tune_options_init)");
    if (options->runs < 0 || options->runs > MAX_RUNS || options->threads < 0)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_tune: runs must be 0..%d and threads 0 or more", MAX_RUNS);
    if (options->check && !options->run)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_tune: a check callback needs the run callback it checks");
    if (options->bucket != PTXJIT_TUNE_BUCKET_EXACT && options->bucket != PTXJIT_TUNE_BUCKET_POW2)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_tune: bucket must be PTXJIT_TUNE_BUCKET_EXACT (0) or "
                        "PTXJIT_TUNE_BUCKET_POW2 (1), not %d", options->bucket);
    const pj_family *f = pj_family_find(family);
    *builtin = f && f->tune && !options->run ? f : NULL;
    if (!*builtin && !options->run && !options->compile_only)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_tune: family '%s' has no built-in op to time; pass a run "
                        "callback that launches a candidate (options.run), or compile_only",
                        family);
    return PTXJIT_OK;
}

/* The problem's canonical text, and a built-in family's sizes of it. */
static ptxjit_status canonical_problem(char **out, uint64_t *sizes, const pj_family *builtin,
                                       const char *problem)
{
    if (builtin)
        return pj_tune_problem_canonical(out, sizes, problem ? problem : "", builtin->name,
                                         builtin->tune->problem_names);
    *out = pj_strdup(problem ? problem : "");
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* Ends pruning early (a failure): the points from next on, not looked at, join the kept ones,
 * so that every point left in the space is freed once, with it. */
static ptxjit_status stop_pruning(pj_tuning *t, int kept, int next, ptxjit_status status)
{
    for (int i = next; i < t->space.count; i++)
        t->space.points[kept++] = t->space.points[i];
    t->space.count = kept;
    return status;
}

/* Points the problem cannot run at all are pruned before anything compiles. */
static ptxjit_status prune_by_problem(pj_tuning *t, const pj_schema *schema,
                                      const pj_family *builtin)
{
    int kept = 0;
    for (int i = 0; i < t->space.count; i++) {
        pj_request request;
        pj_backend backend;
        char *rest = NULL;
        ptxjit_status status = pj_backend_take(&backend, &rest, t->space.points[i],
                                               t->context->default_backend);
        if (status == PTXJIT_OK)
            status = pj_request_parse(&request, schema, rest, pj_context_sm(t->context));
        free(rest);
        if (status != PTXJIT_OK)
            return stop_pruning(t, kept, i, status);
        status = builtin->tune->admits(&request, t->sizes);
        pj_request_free(&request);
        if (status == PTXJIT_OK) {
            t->space.points[kept++] = t->space.points[i];
        } else if (status == PTXJIT_ERR_OUT_OF_MEMORY) {
            return stop_pruning(t, kept, i, status);
        } else {
            if (!t->space.refused++) {
                free(t->space.refusal);
                t->space.refusal = pj_strdup(ptxjit_last_error());
            }
            free(t->space.points[i]);
        }
    }
    t->space.count = kept;
    if (kept == 0)
        return pj_error(PTXJIT_ERR_PARAM, "%s: no point of the space %s can run the problem %s; "
                        "the first refused because: %s", schema->family, t->space.space,
                        t->record.problem, t->space.refusal ? t->space.refusal : "?");
    return PTXJIT_OK;
}

/* The op's fitted request for the problem joins the template's space where it is not a
 * point of it (plan_point.c): not with the caller's space (--space), the space asked for. */
static ptxjit_status add_plan_point(pj_tuning *t, const pj_schema *schema,
                                    const pj_family *builtin, pj_backend backend)
{
    if (t->options->space && *t->options->space)
        return PTXJIT_OK;
    char *canonical = NULL;
    ptxjit_status status = pj_tune_plan_point(&canonical, t->context, schema, builtin,
                                              t->space.fixed, backend, t->sizes);
    return canonical ? pj_tune_space_add(&t->space, canonical) : status;
}

/* The compile list: the reference first, then the points. The reference runs first, its
 * result kept, whether or not it is a point too (its point's compile is then a memory hit):
 * the points are taken as their compiles finish, in no fixed order, and each must be checked
 * against the same result. compile_only compiles the points alone. */
static ptxjit_status plan_compiles(pj_tuning *t)
{
    t->offset = 1;
    t->compiles = calloc((size_t)t->space.count + 1, sizeof *t->compiles);
    t->record.rows = calloc((size_t)t->space.count + 1, sizeof *t->record.rows);
    if (!t->compiles || !t->record.rows)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (t->offset)
        t->compiles[0] = (pj_compile_request){t->family, t->space.reference};
    for (int i = 0; i < t->space.count; i++)
        t->compiles[i + t->offset] = (pj_compile_request){t->family, t->space.points[i]};
    return PTXJIT_OK;
}

static ptxjit_status fill_record_head(pj_tuning *t, const char *problem, pj_backend backend)
{
    pj_tune_record *r = &t->record;
    r->family = pj_strdup(t->family);
    r->problem = pj_strdup(problem);
    r->fixed = pj_strdup(t->space.fixed);
    r->space = pj_strdup(t->space.space);
    r->backend = pj_strdup(pj_backend_name(backend));
    r->reference = pj_strdup(t->space.reference);
    r->considered = t->space.considered;
    r->refused = t->space.refused;
    r->merged = t->space.merged;
    return r->family && r->problem && r->fixed && r->space && r->backend && r->reference
               ? PTXJIT_OK
               : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

static ptxjit_status make_result(ptxjit_tune_result **out, pj_tune_record *record,
                                 int from_record, int compile_only, int processes, char *path)
{
    ptxjit_tune_result *result = calloc(1, sizeof *result);
    if (!result) {
        free(path);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    result->record = *record;
    memset(record, 0, sizeof *record);
    result->from_record = from_record;
    result->compile_only = compile_only;
    result->processes = processes;
    result->record_path = path;
    *out = result;
    return PTXJIT_OK;
}

/* A record of this tuning already kept (context, then disk)? */
static int find_record(pj_tuning *t, const char *key, const char *problem, pj_tune_record *out,
                       char **path)
{
    *path = NULL;
    if (pj_tune_memo_find(pj_tune_memo_of(t->context), key, out)) {
        if (t->context->disk)
            *path = pj_disk_cache_record_path(t->context->disk, key);
        return 1;
    }
    int found = 0;
    if (t->context->disk &&
        pj_tune_record_load(t->context->disk, t->context->remote, key, t->family, out,
                            &found) == PTXJIT_OK && found &&
        strcmp(out->problem, problem) == 0 && strcmp(out->space, t->space.space) == 0 &&
        strcmp(out->fixed, t->space.fixed) == 0) {
        pj_tune_memo_put(pj_tune_memo_of(t->context), key, out);
        *path = pj_disk_cache_record_path(t->context->disk, key);
        return 1;
    }
    if (found)
        pj_tune_record_free(out); /* another tuning's record under our key: not ours */
    return 0;
}

/* The record under the space's key and the latest key (what auto finds); a failure to store
 * only costs a later tuning. */
static char *keep_record(pj_tuning *t, const char *key, const char *latest_key)
{
    char *path = NULL;
    ptxjit_status status = PTXJIT_OK;
    pj_tune_memo *memo = pj_tune_memo_of(t->context);
    pj_tune_memo_put(memo, key, &t->record);
    t->record.latest = 1;
    pj_tune_memo_put(memo, latest_key, &t->record);
    if (t->context->disk)
        status = pj_tune_record_store(t->context->disk, t->context->remote, latest_key,
                                      &t->record, NULL);
    t->record.latest = 0;
    if (t->context->disk && status == PTXJIT_OK)
        status = pj_tune_record_store(t->context->disk, t->context->remote, key, &t->record,
                                      &path);
    if (status != PTXJIT_OK)
        pj_log(&t->context->logger, PTXJIT_LOG_WARNING,
               "%s: the tuning record was not saved to the disk cache: %s", t->family,
               ptxjit_last_error());
    return path;
}

static ptxjit_status finish_tuning(pj_tuning *t, double started)
{
    double noise = 0;
    int winner = pj_tune_pick(t->record.rows, t->record.row_count, pj_tune_floor(t), &noise);
    if (winner < 0) {
        const char *why = t->record.row_count ? t->record.rows[0].message : "no candidate";
        return pj_error(PTXJIT_ERR_CUDA,
                        "%s: no candidate of the space %s ran right on %s (the first: %s); see "
                        "the candidates' errors", t->family, t->space.space, t->record.problem,
                        why);
    }
    t->record.winner = pj_strdup(t->record.rows[winner].params);
    t->record.noise = noise;
    t->record.best_ms = t->best_ms;
    t->record.wall_ms = now_ms() - started;
    t->record.tuned_at = (int64_t)time(NULL);
    if (t->reference_row >= 0) { /* the reference was a point: name it */
        free(t->record.reference);
        t->record.reference = pj_strdup(t->record.rows[t->reference_row].params);
    }
    return t->record.winner && t->record.reference
               ? PTXJIT_OK
               : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* The record of this tuning when one is kept: *out made from it, and 1. Asked before the
 * space's points are enumerated, so that a hit costs a key and a file read. */
static int find_existing(ptxjit_tune_result **out, pj_tuning *t, const pj_schema *schema,
                         const char *problem, pj_backend backend)
{
    char key[33], *path = NULL;
    pj_tune_record found;
    if (pj_tune_key(key, t->context, schema, t->space.fixed, t->space.space, problem, backend) !=
            PTXJIT_OK ||
        !find_record(t, key, problem, &found, &path))
        return 0;
    return make_result(out, &found, 1, 0, 0, path) == PTXJIT_OK;
}

static ptxjit_status make_bench(pj_tuning *t, const pj_schema *schema, const pj_family *builtin)
{
    pj_request reference;
    pj_backend backend;
    char *rest = NULL;
    ptxjit_status status = pj_backend_take(&backend, &rest, t->space.reference,
                                           t->context->default_backend);
    if (status == PTXJIT_OK)
        status = pj_request_parse(&reference, schema, rest, pj_context_sm(t->context));
    free(rest);
    if (status != PTXJIT_OK)
        return status;
    pj_tune_bench_spec spec = {t->context, t->family, builtin, t->sizes, &reference,
                               t->options};
    status = pj_tune_bench_override ? pj_tune_bench_override(&t->bench, &spec)
                                    : pj_tune_bench_gpu(&t->bench, &spec);
    pj_request_free(&reference);
    return status;
}

static void tuning_free(pj_tuning *t)
{
    if (t->bench.release)
        t->bench.release(&t->bench);
    free(t->compiles);
    free(t->states);
    free(t->kernels);
    free(t->first);
    free(t->facts);
    pj_tune_space_free(&t->space);
    pj_tune_record_free(&t->record);
}

/* Tunes (or finds the record) once the space and the problem are known. */
static ptxjit_status tune_space(ptxjit_tune_result **out, pj_tuning *t, const pj_schema *schema,
                                const pj_family *builtin, pj_backend backend, double started)
{
    if (t->options->compile_only) {
        ptxjit_status status = plan_compiles(t);
        if (status == PTXJIT_OK)
            status = pj_tune_compile_all(t);
        return status == PTXJIT_OK ? make_result(out, &t->record, 0, 1, t->processes, NULL)
                                   : status;
    }
    char key[33], latest[33], device[256];
    ptxjit_status status = pj_tune_device_identity(device, t->context);
    if (status == PTXJIT_OK)
        status = pj_tune_key(key, t->context, schema, t->space.fixed, t->space.space,
                             t->record.problem, backend);
    if (status == PTXJIT_OK)
        status = pj_tune_key(latest, t->context, schema, t->space.fixed, NULL,
                             t->record.problem, backend);
    if (status == PTXJIT_ERR_NO_DRIVER || status == PTXJIT_ERR_NO_DEVICE) {
        char why[1024];
        snprintf(why, sizeof why, "%s", ptxjit_last_error());
        return pj_error(PTXJIT_ERR_NO_DEVICE,
                        "%s: timing candidates needs a GPU (%s); without one, compile_only "
                        "compiles the whole space", t->family, why);
    }
    if (status != PTXJIT_OK)
        return status;
    char *path = NULL;
    if (!(t->record.device = pj_strdup(device)))
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    status = plan_compiles(t);
    if (status == PTXJIT_OK)
        status = make_bench(t, schema, builtin);
    if (status == PTXJIT_OK)
        status = pj_tune_run_all(t);
    if (status == PTXJIT_OK)
        status = finish_tuning(t, started);
    if (status != PTXJIT_OK)
        return status;
    path = keep_record(t, key, latest);
    return make_result(out, &t->record, 0, 0, t->processes, path);
}

static ptxjit_status tune(ptxjit_tune_result **out, ptxjit_context *context, const char *family,
                          const ptxjit_tune_options *options)
{
    double started = now_ms();
    const pj_family *builtin = NULL;
    if (!out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_tune: out is NULL");
    *out = NULL;
    ptxjit_status status = check_options(context, family, options, &builtin);
    const pj_schema *schema = NULL;
    if (status == PTXJIT_OK)
        status = pj_context_schema(&schema, context, family);
    if (status != PTXJIT_OK)
        return status;
    pj_tuning t = {.context = context, .family = schema->family, .options = options,
                   .builtin = builtin, .runs = options->runs ? options->runs : DEFAULT_RUNS,
                   .reference_row = -1};
    pj_backend backend;
    char *rest = NULL, *measured = NULL, *problem = NULL;
    status = pj_backend_take(&backend, &rest, options->fixed ? options->fixed : "",
                             context->default_backend);
    free(rest);
    if (status == PTXJIT_OK)
        status = canonical_problem(&measured, t.sizes, builtin, options->problem);
    /* The record is of the problem, or of its bucket (tuned at the problem). */
    if (status == PTXJIT_OK)
        status = options->bucket == PTXJIT_TUNE_BUCKET_POW2 ? pj_tune_bucket(&problem, measured)
                 : (problem = pj_strdup(measured)) ? PTXJIT_OK
                                                  : pj_error(PTXJIT_ERR_OUT_OF_MEMORY,
                                                             "out of memory");
    t.measured = measured;
    /* A record needs only the space's text: the points are enumerated on a miss. */
    if (status == PTXJIT_OK)
        status = pj_tune_space_describe(&t.space, schema, options->fixed, options->space,
                                        pj_context_sm(context), context->default_backend);
    if (status == PTXJIT_OK && !options->compile_only && !options->retune &&
        !options->exhaustive && find_existing(out, &t, schema, problem, backend))
        status = PTXJIT_OK;
    else if (status == PTXJIT_OK) {
        pj_tune_space_free(&t.space);
        status = pj_tune_space_build(&t.space, schema, options->fixed, options->space,
                                     pj_context_sm(context), context->default_backend);
        if (status == PTXJIT_OK)
            status = fill_record_head(&t, problem, backend);
        if (status == PTXJIT_OK && builtin)
            status = prune_by_problem(&t, schema, builtin);
        if (status == PTXJIT_OK && builtin)
            status = add_plan_point(&t, schema, builtin, backend);
        if (status == PTXJIT_OK) {
            t.record.considered = t.space.considered;
            t.record.refused = t.space.refused;
            status = tune_space(out, &t, schema, builtin, backend, started);
        }
    }
    free(problem);
    free(measured);
    tuning_free(&t);
    return status;
}

/* ---- results ---- */

ptxjit_status ptxjit_tune_result_info(ptxjit_tune_info *out, const ptxjit_tune_result *result)
{
    if (!out || !result)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_tune_result_info: out and result "
                        "must be given");
    const pj_tune_record *r = &result->record;
    int pruned = 0, timed = 0, rounds = 0;
    for (int i = 0; i < r->row_count; i++) {
        pruned += r->rows[i].pruned;
        timed += r->rows[i].rounds > 0 && r->rows[i].status == PTXJIT_OK;
        rounds = r->rows[i].rounds > rounds ? r->rows[i].rounds : rounds;
    }
    *out = (ptxjit_tune_info){
        .family = r->family,
        .problem = r->problem,
        .fixed = r->fixed,
        .space = r->space,
        .winner = result->compile_only ? NULL : r->winner,
        .reference = r->reference,
        .device = r->device ? r->device : "",
        .from_record = result->from_record,
        .record_path = result->record_path,
        .candidate_count = r->row_count,
        .points_considered = r->considered,
        .points_refused = r->refused,
        .points_merged = r->merged,
        .best_ms = r->best_ms,
        .noise = r->noise,
        .wall_ms = r->wall_ms,
        .compile_processes = result->processes,
        .candidates_pruned = pruned,
        .candidates_timed = timed,
        .rounds = rounds,
    };
    return PTXJIT_OK;
}

ptxjit_status ptxjit_tune_result_candidate(ptxjit_tune_candidate *out,
                                           const ptxjit_tune_result *result, int index)
{
    if (!out || !result)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_tune_result_candidate: out and "
                        "result must be given");
    if (index < 0 || index >= result->record.row_count)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "candidate index %d is out of range: the result has %d; take the count "
                        "from ptxjit_tune_result_info", index, result->record.row_count);
    const pj_tune_row *row = &result->record.rows[index];
    *out = (ptxjit_tune_candidate){
        .params = row->params,
        .status = row->status,
        .message = row->message,
        .median_ms = row->median_ms,
        .spread = row->spread,
        .runs = row->runs,
        .abandoned = row->abandoned,
        .winner = !result->compile_only && result->record.winner &&
                  strcmp(row->params, result->record.winner) == 0,
        .pruned = row->pruned,
        .rounds = row->rounds,
    };
    return PTXJIT_OK;
}

void ptxjit_tune_result_free(ptxjit_tune_result *result)
{
    if (!result)
        return;
    pj_tune_record_free(&result->record);
    free(result->record_path);
    free(result);
}

/* TUNE_START and TUNE_END for the context's event callback (its candidates' compiles and
 * TUNE_PROGRESS come between them). */
static void tell_tune(const ptxjit_context *context, ptxjit_event_kind kind, const char *family,
                      const ptxjit_tune_options *options, const ptxjit_tune_result *result,
                      ptxjit_status status, double ms)
{
    ptxjit_event event = {.kind = kind, .status = status, .family = family, .ms = ms};
    if (kind == PTXJIT_EVENT_TUNE_START)
        event.detail = options ? options->problem : NULL;
    if (result) {
        event.family = result->record.family;
        event.detail = result->record.problem;
        event.params = result->compile_only ? NULL : result->record.winner;
        event.total = result->record.row_count;
    }
    pj_notify(&context->logger, event);
}

/* The whole search is one NVTX range, "ptxjit tune FAMILY" (its compiles nest in it). */
ptxjit_status ptxjit_tune(ptxjit_tune_result **out, ptxjit_context *context, const char *family,
                          const ptxjit_tune_options *options)
{
    int tell = context && context->logger.on_event && family;
    double started = now_ms();
    if (tell)
        tell_tune(context, PTXJIT_EVENT_TUNE_START, family, options, NULL, PTXJIT_OK, 0);
    pj_nvtx_push("tune", family);
    ptxjit_status status = tune(out, context, family, options);
    pj_nvtx_pop();
    if (tell)
        tell_tune(context, PTXJIT_EVENT_TUNE_END, family, options,
                  status == PTXJIT_OK && out ? *out : NULL, status, now_ms() - started);
    return status;
}
