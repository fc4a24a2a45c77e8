/* test_hit_path.c — what a fresh process's disk hit does, kept cheap without losing a check:
 * the compiler memo read without stdio (its version is what the key uses; a damaged memo is
 * probed again and rewritten); an existing cache opened with its root's and v<N>'s trust
 * checked from one stat each (an untrusted root still disables the cache, a read-only v<N>
 * too); an entry decoded in place (no copy of its PTX and cubin) equal to the one encoded,
 * its cubin on a 16-byte boundary whatever the lengths before it; numbers and hashes written
 * without printf as printf writes them. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/disk.h"
#include "cache/entry.h"
#include "request/context.h"
#include "test_util.h"

typedef struct {
    int warnings;
    char last[2048];
} log_capture;

static void capture(void *user, ptxjit_log_level level, const char *message)
{
    log_capture *c = user;
    if (level == PTXJIT_LOG_WARNING) {
        c->warnings++;
        snprintf(c->last, sizeof c->last, "%s", message);
    }
}

static ptxjit_context *open_cached(const char *dir, log_capture *log)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = dir;
    options.log = capture;
    options.log_user = log;
    ptxjit_context *context = NULL;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    return context;
}

/* One request of reduce tpb=128 in a new context on dir: its origin. */
static ptxjit_origin request_in_new_context(const char *dir, log_capture *log)
{
    ptxjit_context *context = open_cached(dir, log);
    ck_assert_ptr_nonnull(ptxjit_cache_dir(context));
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "tpb=128", &origin),
                     PTXJIT_OK);
    ptxjit_close(context);
    return origin;
}

static char *read_text(const char *path)
{
    char *text = NULL;
    size_t size = 0;
    ck_assert_int_eq(pj_read_file(&text, &size, path), PTXJIT_OK);
    return text;
}

static void write_text(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs(text, file);
    ck_assert_int_eq(fclose(file), 0);
}

/* The memo's version is the one the key takes: a memo naming another version (the library
 * otherwise the same) gives another key, so no disk hit; the compile then finds the
 * compiler differs, keeps the kernel off the disk and drops the memo. A damaged memo is no
 * memo: the version is asked of NVRTC, the entry found, and the memo written again. */
START_TEST(memo_version_is_what_the_key_takes)
{
    char *dir = test_mkdtemp(), memo[4200];
    log_capture log = {0, ""};
    ck_assert_int_eq(request_in_new_context(dir, &log), PTXJIT_ORIGIN_COMPILED);
    ck_assert_int_eq(request_in_new_context(dir, &log), PTXJIT_ORIGIN_DISK);
    snprintf(memo, sizeof memo, "%s/v%d/compiler", dir, PJ_DISK_FORMAT_VERSION);
    char *good = read_text(memo);
    ck_assert_ptr_nonnull(strstr(good, "\nversion nvrtc "));
    /* The same memo with another version line. */
    char *other = malloc(strlen(good) + 32);
    ck_assert_ptr_nonnull(other);
    memcpy(other, good, (size_t)(strstr(good, "\nversion ") - good));
    strcpy(other + (strstr(good, "\nversion ") - good), "\nversion nvrtc 0.1 (a test)\n");
    write_text(memo, other);
    ck_assert_int_eq(request_in_new_context(dir, &log), PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_nonnull(strstr(log.last, "the cache remembered nvrtc 0.1 (a test)"));
    ck_assert_int_eq(access(memo, F_OK), -1);
    /* Damaged memos: each is probed again and rewritten whole. */
    const char *damaged[] = {"", "library\n", "garbage without lines",
                             "library /x\nsize 12x\nmtime 1\nenvironment e\nversion v\n"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(damaged); i++) {
        write_text(memo, damaged[i]);
        ck_assert_int_eq(request_in_new_context(dir, &log), PTXJIT_ORIGIN_DISK);
        char *again = read_text(memo);
        ck_assert_str_eq(again, good);
        free(again);
    }
    free(other);
    free(good);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* An existing cache whose root its group can write is still refused at open (the root's
 * stat), and so is one whose v<N> cannot be written; nothing is made inside. */
START_TEST(existing_cache_still_checks_root_and_writability)
{
    char *dir = test_mkdtemp(), v1[4200];
    log_capture log = {0, ""};
    ck_assert_int_eq(request_in_new_context(dir, &log), PTXJIT_ORIGIN_COMPILED);
    snprintf(v1, sizeof v1, "%s/v%d", dir, PJ_DISK_FORMAT_VERSION);
    ck_assert_int_eq(chmod(dir, 0770), 0);
    ptxjit_context *context = open_cached(dir, &log);
    ck_assert_ptr_null(ptxjit_cache_dir(context));
    ck_assert_ptr_nonnull(strstr(log.last, "disk cache disabled"));
    ck_assert_ptr_nonnull(strstr(log.last, "writable by its group"));
    ck_assert_ptr_nonnull(strstr(log.last, dir));
    ck_assert_ptr_null(strstr(log.last, v1));
    ptxjit_close(context);
    ck_assert_int_eq(chmod(dir, 0700), 0);
    ck_assert_int_eq(chmod(v1, 0720), 0); /* v<N> itself */
    context = open_cached(dir, &log);
    ck_assert_ptr_null(ptxjit_cache_dir(context));
    ck_assert_ptr_nonnull(strstr(log.last, v1));
    ptxjit_close(context);
    ck_assert_int_eq(chmod(v1, 0700), 0);
    if (geteuid() != 0) { /* root writes through permissions */
        ck_assert_int_eq(chmod(v1, 0500), 0);
        context = open_cached(dir, &log);
        ck_assert_ptr_null(ptxjit_cache_dir(context));
        ck_assert_ptr_nonnull(strstr(log.last, "writable directory"));
        ptxjit_close(context);
        ck_assert_int_eq(chmod(v1, 0700), 0);
    }
    ck_assert_int_eq(request_in_new_context(dir, &log), PTXJIT_ORIGIN_DISK);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* Every cubin offset modulo 16 (the params' length moves it): the fields come back equal, the
 * cubin aligned, and a flipped byte is refused as the copying decoder refuses it. */
START_TEST(entry_decoded_in_place_equals_the_one_encoded)
{
    const char *key = "0123456789abcdef0123456789abcdef";
    uint8_t cubin[77];
    for (size_t i = 0; i < sizeof cubin; i++)
        cubin[i] = (uint8_t)(i * 7 + 1);
    char *names[] = {"first_entry", "second"};
    for (int extra = 0; extra < 16; extra++) {
        char params[64];
        snprintf(params, sizeof params, "tpb=128%.*s", extra, "xxxxxxxxxxxxxxxx");
        pj_artifact a = {"reduce", params, "-DX=1", ".entry first_entry(\n", cubin,
                         sizeof cubin, "", names, 2, NULL, 0};
        size_t size = 0;
        char *bytes = pj_entry_encode(&size, key, &a);
        ck_assert_ptr_nonnull(bytes);
        char *buffer = malloc(size + PJ_ENTRY_DECODE_SLACK);
        ck_assert_ptr_nonnull(buffer);
        memcpy(buffer, bytes, size);
        pj_artifact got;
        const char *why = NULL;
        ck_assert_int_eq(pj_entry_decode_in_place(&got, &why, buffer, size, key), PTXJIT_OK);
        ck_assert_ptr_eq(got.storage, buffer);
        ck_assert_str_eq(got.family, "reduce");
        ck_assert_str_eq(got.params, params);
        ck_assert_str_eq(got.options, "-DX=1");
        ck_assert_str_eq(got.ptx, ".entry first_entry(\n");
        ck_assert_str_eq(got.log, "");
        ck_assert_uint_eq(got.cubin_size, sizeof cubin);
        ck_assert_uint_eq((uintptr_t)got.cubin % 16, 0);
        ck_assert_int_eq(memcmp(got.cubin, cubin, sizeof cubin), 0);
        ck_assert_int_eq(got.entry_count, 2);
        ck_assert_str_eq(got.entries[0], "first_entry");
        ck_assert_str_eq(got.entries[1], "second");
        size_t again_size = 0;
        char *again = pj_entry_encode(&again_size, key, &got);
        ck_assert(again && again_size == size && memcmp(again, bytes, size) == 0);
        free(again);
        pj_artifact_free(&got); /* frees buffer */
        bytes[100] ^= 1;
        buffer = malloc(size + PJ_ENTRY_DECODE_SLACK);
        ck_assert_ptr_nonnull(buffer);
        memcpy(buffer, bytes, size);
        ck_assert_int_eq(pj_entry_decode_in_place(&got, &why, buffer, size, key),
                         PTXJIT_ERR_CACHE);
        ck_assert_str_eq(why, "checksum mismatch");
        ck_assert_ptr_null(got.storage);
        free(buffer);
        free(bytes);
    }
}
END_TEST

/* The hit path formats without printf; what it writes is what printf would. */
START_TEST(formatting_without_printf_equals_printf)
{
    const long long values[] = {0, 7, -1, 512, 1024, -987654321, 9223372036854775807LL,
                                -9223372036854775807LL - 1};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(values); i++) {
        char ours[24], theirs[32];
        snprintf(theirs, sizeof theirs, "%lld", values[i]);
        ck_assert_str_eq(pj_format_int(ours, values[i]), theirs);
    }
    const pj_hash128 hashes[] = {{0, 0}, {1, 2}, {0xfedcba9876543210ull, 0x0123456789abcdefull},
                                 {~0ull, ~0ull}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(hashes); i++) {
        char ours[33], theirs[40];
        pj_hash_hex(&hashes[i], ours);
        snprintf(theirs, sizeof theirs, "%016llx%016llx", (unsigned long long)hashes[i].high,
                 (unsigned long long)hashes[i].low);
        ck_assert_str_eq(ours, theirs);
    }
    char cut[8];
    pj_copy_string(cut, sizeof cut, "sm_90a-and-more");
    ck_assert_str_eq(cut, "sm_90a-");
    pj_copy_string(cut, sizeof cut, "");
    ck_assert_str_eq(cut, "");
}
END_TEST

/* Disk hits are counted in memory and merged into the counters file later (at a store, a
 * stats call, the close). A child of fork() has a copy of the parent's unmerged counts: it
 * must not merge them as well, or `cache stats` counts each hit twice. */
START_TEST(a_forked_child_does_not_merge_its_parents_counts)
{
    char *dir = test_mkdtemp();
    log_capture log = {0};
    ck_assert_int_eq(request_in_new_context(dir, &log), PTXJIT_ORIGIN_COMPILED);
    ptxjit_context *context = open_cached(dir, &log);
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "tpb=128", &origin),
                     PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_DISK); /* one hit, pending */
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        ptxjit_close(context); /* merges what this process counted: nothing */
        free(dir);
        _exit(0);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_uint_eq(stats.hits, 1);
    ck_assert_uint_eq(stats.misses, 1);
    ck_assert_uint_eq(stats.stores, 1);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A template of one constant, cheap to compile (NVRTC under valgrind too). */
#define FRONT_TEMPLATE                                                                     \
    "//@ptxjit family front\n"                                                             \
    "//@ptxjit entry front_kernel\n"                                                       \
    "//@ptxjit param factor int(1..100000) default=3\n"                                    \
    "//@ptxjit param name enum(a,bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" \
    "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb) default=a\n"                         \
    "extern \"C\" __global__ void front_kernel(int *x) { x[0] = FACTOR * 7 + NAME; }\n"

static ptxjit_kernel *front_get(ptxjit_context *context, const char *params,
                                ptxjit_origin expected)
{
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "front", params, &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, expected);
    ck_assert_str_eq(ptxjit_kernel_family(kernel), "front");
    ck_assert_ptr_eq(kernel->context, context);
    return kernel;
}

/* The per-thread front of exact requests (front.c) answers only for the text it noted, in
 * the context it noted it in, until the context's templates change: a caller's buffer
 * rewritten with other parameters gets their kernel, not the one its address saw before; a
 * template added for the family makes the same text compile again; a context opened where a
 * closed one was (calloc gives the address back) never gets the closed one's kernels; a
 * request longer than a slot goes the alias way and is still answered. */
START_TEST(the_front_answers_only_for_its_text_context_and_templates)
{
    ptxjit_context *context = test_open_offline(NULL);
    ck_assert_int_eq(ptxjit_add_template(context, "front.cu", FRONT_TEMPLATE), PTXJIT_OK);
    char params[64];
    strcpy(params, "factor=5");
    ptxjit_kernel *five = front_get(context, params, PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), five); /* alias */
    ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), five); /* front */
    ck_assert_ptr_eq(front_get(context, "factor=5", PTXJIT_ORIGIN_MEMORY), five);
    strcpy(params, "factor=6");
    ptxjit_kernel *six = front_get(context, params, PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_ne(six, five);
    ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), six);
    ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), six);
    strcpy(params, "factor=5");
    ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), five);
    strcpy(params, "factor=50"); /* the noted text followed by more */
    ck_assert_ptr_ne(front_get(context, params, PTXJIT_ORIGIN_COMPILED), five);
    strcpy(params, "factor=5"); /* and the family, or the options, differing */
    ptxjit_kernel *other = NULL;
    ck_assert_int_eq(ptxjit_get_kernel(&other, context, "reduce", params, NULL),
                     PTXJIT_ERR_PARAM);
    ck_assert_int_eq(ptxjit_get_kernel_ex(&other, context, "front", params, "-DX=1", NULL),
                     PTXJIT_OK);
    ck_assert_ptr_ne(other, five);

    /* Longer than a slot: answered through the aliases each time. */
    const char *name = "name=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
                       "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb factor=5";
    ptxjit_kernel *longer = front_get(context, name, PTXJIT_ORIGIN_COMPILED);
    for (int i = 0; i < 3; i++)
        ck_assert_ptr_eq(front_get(context, name, PTXJIT_ORIGIN_MEMORY), longer);

    /* A new template for the family: the text the front knows compiles again. */
    ck_assert_int_eq(ptxjit_add_template(context, "front2.cu", FRONT_TEMPLATE "// two\n"),
                     PTXJIT_OK);
    ptxjit_kernel *again = front_get(context, params, PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_ne(again, five);
    ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), again);
    ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), again);
    ck_assert_int_eq(ptxjit_reload_templates(context), PTXJIT_OK);
    ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), again); /* alias again */
    ptxjit_close(context);

    /* The next contexts: never the closed ones' kernels, wherever they are allocated. */
    for (int i = 0; i < 3; i++) {
        context = test_open_offline(NULL);
        ck_assert_int_eq(ptxjit_add_template(context, "front.cu", FRONT_TEMPLATE), PTXJIT_OK);
        ptxjit_kernel *fresh = front_get(context, params, PTXJIT_ORIGIN_COMPILED);
        ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), fresh);
        ck_assert_ptr_eq(front_get(context, params, PTXJIT_ORIGIN_MEMORY), fresh);
        ptxjit_close(context);
    }
}
END_TEST

Suite *suite_hit_path(void)
{
    Suite *s = suite_create("hit_path");
    TCase *tc = tcase_create("hit_path");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, memo_version_is_what_the_key_takes);
    tcase_add_test(tc, existing_cache_still_checks_root_and_writability);
    tcase_add_test(tc, entry_decoded_in_place_equals_the_one_encoded);
    tcase_add_test(tc, formatting_without_printf_equals_printf);
    tcase_add_test(tc, the_front_answers_only_for_its_text_context_and_templates);
    tcase_add_test(tc, a_forked_child_does_not_merge_its_parents_counts);
    suite_add_tcase(s, tc);
    return s;
}
