/* test_launch_api.c — entry parameters read from PTX and cubin, and launches checked against
 * them, without a GPU: the built-in kernels' layouts, a user template's against the C struct
 * of its arguments, the PTX reader on hand-written and cut text, the cubin's records against
 * the PTX (both routes, which must agree) and on cut and changed bytes, the refusals of
 * ptxjit_launch_checked and ptxjit_launch that come before the GPU, and the stream calls'
 * refusals. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "request/route_llvm.h"
#include "launch_api.h"
#include "binary/cubin_params.h"
#include "binary/ptx_params.h"
#include "test_util.h"

ptxjit_context *launch_probe_open(char **dir, int use_gpu)
{
    *dir = test_mkdtemp();
    char path[4096];
    snprintf(path, sizeof path, "%s/launch_probe.cu", *dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs(LAUNCH_PROBE_TEMPLATE, file);
    fclose(file);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = use_gpu;
    options.disk_cache = 0;
    options.template_path = *dir;
    if (!use_gpu)
        options.arch = "sm_90a";
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static ptxjit_kernel *get(ptxjit_context *context, const char *family, const char *params)
{
    ptxjit_kernel *kernel = NULL;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, family, params, NULL) == PTXJIT_OK,
                  "%s %s: %s", family, params, ptxjit_last_error());
    return kernel;
}

typedef struct {
    size_t offset, size, align;
} expected_param;

static void expect_layout(const ptxjit_kernel *kernel, const char *entry,
                          const expected_param *want, int count)
{
    int n = -1;
    ck_assert_msg(ptxjit_kernel_param_count(&n, kernel, entry) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    ck_assert_int_eq(n, count);
    for (int i = 0; i < count; i++) {
        ptxjit_param_layout got;
        ck_assert_int_eq(ptxjit_kernel_param_layout(&got, kernel, entry, i), PTXJIT_OK);
        ck_assert_msg(got.offset == want[i].offset && got.size == want[i].size &&
                          got.align == want[i].align,
                      "%s %s parameter %d: offset %zu size %zu align %zu, want %zu %zu %zu",
                      ptxjit_kernel_family(kernel), entry ? entry : "(first)", i, got.offset,
                      got.size, got.align, want[i].offset, want[i].size, want[i].align);
    }
}

START_TEST(builtin_layouts_from_ptx)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    /* reduce(const T *in, T *out, unsigned long long n) */
    const expected_param reduce[] = {{0, 8, 8}, {8, 8, 8}, {16, 8, 8}};
    expect_layout(get(context, "reduce", ""), "reduce_kernel", reduce, 3);
    /* transpose(in, out, unsigned h, unsigned w, const __grid_constant__ CUtensorMap x2):
     * the maps are `.param .align 64 .b8 [128]`. The buffer starts at 0x210 of its constant
     * bank on sm_90 (a multiple of 16, not 64), so the first map is at 48 (0x240), not 64, as
     * the driver reports (the GPU suite checks every entry against cuFuncGetParamInfo). */
    const expected_param transpose[] = {{0, 8, 8},     {8, 8, 8},      {16, 4, 4},
                                        {20, 4, 4},    {48, 128, 64},  {176, 128, 64}};
    expect_layout(get(context, "transpose", "variant=tma"), NULL, transpose, 6);
    /* matmul(a, b, c, int m, int n, int k, CUtensorMap x3, the epilogue's values: a struct of
     * two floats and a pointer, .align 8 .b8[16]; the batch's layout: a long long, four
     * ints, split-K's two pointers, sched=gemv's four long longs and an int, .align 8
     * .b8[80]) */
    const expected_param matmul[] = {{0, 8, 8},     {8, 8, 8},     {16, 8, 8},
                                     {24, 4, 4},    {28, 4, 4},    {32, 4, 4},
                                     {48, 128, 64}, {176, 128, 64}, {304, 128, 64},
                                     {432, 16, 8},  {448, 80, 8}};
    expect_layout(get(context, "matmul", "variant=naive"), NULL, matmul, 11);
    /* softmax(in, out, unsigned long long rows, unsigned cols) */
    const expected_param softmax[] = {{0, 8, 8}, {8, 8, 8}, {16, 8, 8}, {24, 4, 4}};
    expect_layout(get(context, "softmax", ""), NULL, softmax, 4);
    ptxjit_close(context);
}
END_TEST

/* Chars, shorts, structs by value (.align 8 .b8[16]), an __align__(16) struct, float2: the
 * offsets C gives the same arguments in a struct. */
START_TEST(user_template_layouts_match_c_struct)
{
    char *dir;
    ptxjit_context *context = launch_probe_open(&dir, 0);
    ptxjit_kernel *kernel = get(context, "launch_probe", "");
    const expected_param probe[] = {
        {offsetof(struct probe_args, a), 1, 1},
        {offsetof(struct probe_args, b), 2, 2},
        {offsetof(struct probe_args, c), 4, 4},
        {offsetof(struct probe_args, p), sizeof(struct probe_pair), alignof(struct probe_pair)},
        {offsetof(struct probe_args, d), 8, 8},
        {offsetof(struct probe_args, w), sizeof(struct probe_wide), alignof(struct probe_wide)},
        {offsetof(struct probe_args, e), 1, 1},
        {offsetof(struct probe_args, f), sizeof(struct probe_float2),
         alignof(struct probe_float2)},
        {offsetof(struct probe_args, g), 8, 8}};
    expect_layout(kernel, "probe_kernel", probe, 9);
    expect_layout(kernel, NULL, probe, 9); /* NULL: the first entry */
    const expected_param saxpy[] = {{0, 8, 8}, {8, 8, 8}, {16, 4, 4}, {20, 4, 4}};
    expect_layout(kernel, "saxpy_kernel", saxpy, 4);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

static const char tricky_ptx[] =
    "// .entry commented(.param .u64 no)\n"
    ".version 8.0\n.target sm_90a\n.address_size 64\n"
    ".file 1 \"/tmp/a/*odd*/b.cu\"\n"
    "/* .entry also_commented( .param .u64 x ) */\n"
    ".visible .entry firstx(.param .u8 q)\n{ ret; }\n"
    ".visible .entry first(\n"
    "\t.param .u8 a,\n"
    "\t.param .u64 .ptr .global .align 16 b,\n"
    "\t.param .f32 c,\n"
    "\t.param .align 8 .b8 d[12],\n"
    "\t.param .align 64 .b8 tmap[128], // a CUtensorMap\n"
    "\t.param .b16 e,\n"
    "\t.param .v2 .f32 v,\n"
    "\t.param .u32 arr[3][2],\n"
    "\t.param .u64 .ptr .align 32 p /* the pointee's alignment */\n"
    ")\n.maxntid 128, 1, 1\n{\n\tret;\n}\n"
    ".entry noparams\n{ ret; }\n"
    ".weak .entry empty()\n{ ret; }\n"
    ".entry spaced ( .param .s32 x , .param .f64 y )\n{ ret; }\n";

static void expect_params(const pj_ptx_entry *entry, const expected_param *want, int count)
{
    ck_assert_int_eq(entry->count, count);
    for (int i = 0; i < count; i++)
        ck_assert_msg(entry->params[i].offset == want[i].offset &&
                          entry->params[i].size == want[i].size &&
                          entry->params[i].align == want[i].align,
                      "parameter %d (%s): %zu %zu %zu, want %zu %zu %zu", i,
                      entry->params[i].type, entry->params[i].offset, entry->params[i].size,
                      entry->params[i].align, want[i].offset, want[i].size, want[i].align);
}

START_TEST(ptx_reader_tricky_forms)
{
    pj_ptx_entry entry;
    ck_assert_msg(pj_ptx_entry_params(&entry, tricky_ptx, "first") == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    /* .align after .ptr is the pointee's: b and p stay 8-byte parameters. */
    const expected_param first[] = {{0, 1, 1},     {8, 8, 8},    {16, 4, 4},
                                    {24, 12, 8},   {64, 128, 64}, {192, 2, 2},
                                    {200, 8, 8},   {208, 24, 4}, {232, 8, 8}};
    expect_params(&entry, first, 9);
    ck_assert_str_eq(entry.params[4].type, ".align 64 .b8[128]");
    ck_assert_str_eq(entry.params[7].type, ".u32[3][2]");
    ck_assert_str_eq(entry.params[6].type, ".v2 .f32");
    pj_ptx_entry_free(&entry);
    const expected_param firstx[] = {{0, 1, 1}};
    ck_assert_int_eq(pj_ptx_entry_params(&entry, tricky_ptx, "firstx"), PTXJIT_OK);
    expect_params(&entry, firstx, 1);
    pj_ptx_entry_free(&entry);
    ck_assert_int_eq(pj_ptx_entry_params(&entry, tricky_ptx, "noparams"), PTXJIT_OK);
    ck_assert_int_eq(entry.count, 0);
    ck_assert_int_eq(pj_ptx_entry_params(&entry, tricky_ptx, "empty"), PTXJIT_OK);
    ck_assert_int_eq(entry.count, 0);
    const expected_param spaced[] = {{0, 4, 4}, {8, 8, 8}};
    ck_assert_int_eq(pj_ptx_entry_params(&entry, tricky_ptx, "spaced"), PTXJIT_OK);
    expect_params(&entry, spaced, 2);
    pj_ptx_entry_free(&entry);
    /* Commented-out entries are not entries; the refusal lists the real ones. */
    ck_assert_int_eq(pj_ptx_entry_params(&entry, tricky_ptx, "commented"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "firstx, first, noparams, empty, spaced"));
    ck_assert_int_eq(pj_ptx_entry_params(&entry, tricky_ptx, "also_commented"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(entry.count, 0);
}
END_TEST

START_TEST(ptx_reader_refuses_what_it_cannot_read)
{
    /* Each the second parameter, after one that reads. */
    static const char *const lists[] = {
        ".param .pred p)",              /* no such parameter type */
        ".param .u32 x[])",             /* unsized */
        ".param .align 3 .b8 z[4])",    /* not a power of two */
        ".param .u32 a",                /* no closing parenthesis */
        ", .param .u32 b)",             /* an empty declaration */
        ".param .u32)",                 /* no name */
        ".param .b8 huge[4000000])",    /* past any parameter buffer */
        ".param .u32 .ptr .ptr x)",     /* .ptr twice */
        ".reg .u32 x)"};                /* not a parameter */
    for (size_t i = 0; i < PJ_ARRAY_SIZE(lists); i++) {
        char ptx[256];
        snprintf(ptx, sizeof ptx, ".entry k(.param .u64 fine, %s\n{ ret; }\n", lists[i]);
        pj_ptx_entry entry;
        ck_assert_msg(pj_ptx_entry_params(&entry, ptx, "k") == PTXJIT_ERR_UNSUPPORTED,
                      "'%s' was read", lists[i]);
        ck_assert_int_eq(entry.count, 0);
        ck_assert_ptr_null(entry.params);
        ck_assert_msg(strstr(ptxjit_last_error(), "entry k: parameter 1 is declared as"),
                      "%s", ptxjit_last_error());
        ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "ptxjit_launch"));
    }
}
END_TEST

/* Every prefix of the text, and the text with each byte changed: no crash or read past the
 * end (the sanitizer builds check), and a reading is either whole or refused. */
START_TEST(ptx_reader_survives_cut_and_changed_text)
{
    size_t length = strlen(tricky_ptx);
    char *copy = malloc(length + 1);
    ck_assert_ptr_nonnull(copy);
    for (size_t cut = 0; cut <= length; cut++) {
        memcpy(copy, tricky_ptx, cut);
        copy[cut] = '\0';
        pj_ptx_entry entry;
        ptxjit_status status = pj_ptx_entry_params(&entry, copy, "first");
        ck_assert(status == PTXJIT_OK || entry.count == 0);
        pj_ptx_entry_free(&entry);
    }
    static const char changes[] = {'(', ')', ',', '[', ']', '.', '/', '*', '"', ' ', '9', 'x'};
    const size_t step = test_sweep_stride() > 1 ? 7 : 1; /* sanitizers and valgrind: a sample */
    for (size_t at = 0; at < length; at += step)
        for (size_t c = 0; c < sizeof changes; c++) {
            memcpy(copy, tricky_ptx, length + 1);
            copy[at] = changes[c];
            pj_ptx_entry entry;
            ptxjit_status status = pj_ptx_entry_params(&entry, copy, "first");
            ck_assert(status == PTXJIT_OK || entry.count == 0);
            for (int i = 0; status == PTXJIT_OK && i < entry.count; i++)
                ck_assert(entry.params[i].offset % entry.params[i].align == 0);
            pj_ptx_entry_free(&entry);
        }
    free(copy);
}
END_TEST

START_TEST(unknown_entry_and_index_refused)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    ptxjit_kernel *kernel = get(context, "reduce", "");
    int count = -1;
    ck_assert_int_eq(ptxjit_kernel_param_count(&count, kernel, "nope"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "no entry 'nope'"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "its entries: reduce_kernel"));
    ptxjit_param_layout layout;
    ck_assert_int_eq(ptxjit_kernel_param_layout(&layout, kernel, NULL, 3),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "entry reduce_kernel has 3 parameters"));
    ck_assert_int_eq(ptxjit_kernel_param_layout(&layout, kernel, NULL, -1),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_kernel_param_count(NULL, kernel, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_kernel_param_count(&count, NULL, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_kernel_param_layout(NULL, kernel, NULL, 0),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_launch_checked(NULL, NULL, (ptxjit_dim3){1, 1, 1},
                                           (ptxjit_dim3){1, 1, 1}, 0, NULL, 0, NULL, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
}
END_TEST

START_TEST(checked_launch_refuses_wrong_arguments_without_a_gpu)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    ptxjit_kernel *kernel = get(context, "reduce", "");
    ptxjit_devptr in = 0x1000, out = 0x2000;
    unsigned n32 = 10;
    unsigned long long n = 10;
    void *args[] = {&in, &out, &n};
    size_t sizes[] = {sizeof in, sizeof out, sizeof n};
    const ptxjit_dim3 grid = {4, 1, 1}, block = {256, 1, 1};
    ck_assert_int_eq(ptxjit_launch_checked(kernel, NULL, grid, block, 0, NULL, 2, args, sizes),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(),
                         "entry reduce_kernel of reduce takes 3 arguments, 2 given"),
                  "%s", ptxjit_last_error());
    void *short_args[] = {&in, &out, &n32};
    size_t short_sizes[] = {sizeof in, sizeof out, sizeof n32};
    ck_assert_int_eq(ptxjit_launch_checked(kernel, "reduce_kernel", grid, block, 0, NULL, 3,
                                           short_args, short_sizes),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(),
                         "argument 2 of entry reduce_kernel is 8 bytes (.u64), 4 given"),
                  "%s", ptxjit_last_error());
    void *null_args[] = {&in, NULL, &n};
    ck_assert_int_eq(ptxjit_launch_checked(kernel, NULL, grid, block, 0, NULL, 3, null_args,
                                           sizes),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "argument 1 of entry reduce_kernel is NULL"));
    ck_assert_int_eq(ptxjit_launch_checked(kernel, NULL, grid, block, 0, NULL, 3, args, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_launch_checked(kernel, "nope", grid, block, 0, NULL, 3, args, sizes),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "its entries: reduce_kernel"));
    /* Right arguments get as far as the GPU, which this context has not. */
    ck_assert_int_eq(ptxjit_launch_checked(kernel, NULL, grid, block, 0, NULL, 3, args, sizes),
                     PTXJIT_ERR_NO_DRIVER);
    ptxjit_close(context);
}
END_TEST

START_TEST(empty_or_oversized_launches_refused_without_a_gpu)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    ptxjit_kernel *kernel = get(context, "reduce", "");
    ptxjit_devptr in = 0x1000, out = 0x2000;
    unsigned long long n = 10;
    void *args[] = {&in, &out, &n};
    size_t sizes[] = {sizeof in, sizeof out, sizeof n};
    const ptxjit_dim3 one = {1, 1, 1};
    ck_assert_int_eq(ptxjit_launch(kernel, NULL, (ptxjit_dim3){0, 1, 1}, one, 0, NULL, args),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), "reduce entry reduce_kernel: grid 0 x 1 x 1"),
                  "%s", ptxjit_last_error());
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "no zero dimension"));
    ck_assert_int_eq(ptxjit_launch(kernel, NULL, one, (ptxjit_dim3){1024, 2, 1}, 0, NULL, args),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), "a block of 1024 x 2 x 1 is 2048 threads"), "%s",
                  ptxjit_last_error());
    /* 2^22 x 2^22 x 2^20 threads wrap 64 bits to 0: still refused as too many, not as none. */
    ck_assert_int_eq(ptxjit_launch(kernel, NULL, one, (ptxjit_dim3){1u << 22, 1u << 22, 1u << 20},
                                   0, NULL, args),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), "is 18446744073709551616 threads, more than"),
                  "%s", ptxjit_last_error());
    ck_assert_int_eq(ptxjit_launch_checked(kernel, NULL, one, (ptxjit_dim3){32, 0, 1}, 0, NULL,
                                           3, args, sizes),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "block 32 x 0 x 1"));
    ck_assert_int_eq(ptxjit_launch_cluster(kernel, NULL, (ptxjit_dim3){2, 0, 1}, one,
                                           (ptxjit_dim3){2, 1, 1}, 0, NULL, args),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_launch(NULL, NULL, one, one, 0, NULL, args),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    /* A launch that passes the checks needs the GPU. */
    ck_assert_int_eq(ptxjit_launch(kernel, NULL, one, (ptxjit_dim3){1024, 1, 1}, 0, NULL, args),
                     PTXJIT_ERR_NO_DRIVER);
    ptxjit_close(context);
}
END_TEST

START_TEST(stream_and_handle_calls_refuse_before_the_gpu)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    void *handle = (void *)1;
    ck_assert_int_eq(ptxjit_stream_create(&handle, context, 0), PTXJIT_ERR_NO_DRIVER);
    ck_assert_ptr_null(handle);
    ck_assert_int_eq(ptxjit_stream_create(NULL, context, 0), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_stream_create(&handle, context, 7), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "PTXJIT_STREAM_NON_BLOCKING"));
    ck_assert_int_eq(ptxjit_stream_destroy(context, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_stream_synchronize(context, NULL), PTXJIT_ERR_NO_DRIVER);
    ck_assert_int_eq(ptxjit_event_create(&handle, context), PTXJIT_ERR_NO_DRIVER);
    ck_assert_int_eq(ptxjit_event_record(context, NULL, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    float ms;
    ck_assert_int_eq(ptxjit_event_elapsed_ms(&ms, context, NULL, handle),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    char host[8];
    ck_assert_int_eq(ptxjit_copy_to_device_async(context, 0, host, 8, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_copy_to_host_async(context, host, 0x1000, 8, NULL),
                     PTXJIT_ERR_NO_DRIVER);
    ck_assert_int_eq(ptxjit_memset_d32_async(context, 0x1002, 0, 4, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "not 4-byte aligned"));
    ck_assert_int_eq(ptxjit_memset_d8_async(context, 0x1002, 0, 4, NULL), PTXJIT_ERR_NO_DRIVER);
    ck_assert_int_eq(ptxjit_cuda_context(&handle, context), PTXJIT_ERR_NO_DRIVER);
    ck_assert_ptr_null(handle);
    ptxjit_kernel *kernel = get(context, "reduce", "");
    handle = (void *)1;
    ck_assert_int_eq(ptxjit_kernel_function(&handle, kernel, NULL), PTXJIT_ERR_NO_DRIVER);
    ck_assert_ptr_null(handle);
    ck_assert_int_eq(ptxjit_kernel_module(&handle, kernel), PTXJIT_ERR_NO_DRIVER);
    ck_assert_int_eq(ptxjit_kernel_module(NULL, kernel), PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
}
END_TEST

/* The cubin's records (what the driver reads) against the PTX laid out from where the cubin
 * says the buffer starts: the two must agree on every entry the routes build, or the PTX
 * reader's model of the driver is wrong. */
static void expect_cubin_agrees(const ptxjit_kernel *kernel)
{
    size_t bytes = 0;
    const void *cubin = ptxjit_kernel_cubin(kernel, &bytes);
    for (int e = 0; e < ptxjit_kernel_entry_count(kernel); e++) {
        const char *name = ptxjit_kernel_entry_name(kernel, e);
        pj_ptx_entry ptx;
        pj_cubin_param_list records;
        ck_assert_int_eq(pj_ptx_entry_params(&ptx, ptxjit_kernel_ptx(kernel), name), PTXJIT_OK);
        ck_assert_msg(pj_cubin_entry_params(&records, cubin, bytes, name) == PTXJIT_OK, "%s",
                      ptxjit_last_error());
        ck_assert(records.has_bank);
        ck_assert_uint_eq(records.bank_offset, 0x210); /* sm_90 */
        pj_ptx_entry_layout(&ptx, records.bank_offset);
        ck_assert_int_eq(records.count, ptx.count);
        for (int i = 0; i < ptx.count; i++)
            ck_assert_msg(records.params[i].offset == ptx.params[i].offset &&
                              records.params[i].size == ptx.params[i].size,
                          "%s (%s) %s parameter %d: cubin %zu+%zu, PTX %zu+%zu",
                          ptxjit_kernel_family(kernel), ptxjit_kernel_params(kernel), name, i,
                          records.params[i].offset, records.params[i].size,
                          ptx.params[i].offset, ptx.params[i].size);
        pj_ptx_entry_free(&ptx);
        pj_cubin_param_list_free(&records);
    }
}

/* Both routes declare the same parameters: the same layouts through the public calls. */
static void expect_same_layouts(const ptxjit_kernel *a, const ptxjit_kernel *b)
{
    int na = 0, nb = 0;
    ck_assert_int_eq(ptxjit_kernel_param_count(&na, a, NULL), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_kernel_param_count(&nb, b, NULL), PTXJIT_OK);
    ck_assert_int_eq(na, nb);
    for (int i = 0; i < na; i++) {
        ptxjit_param_layout la, lb;
        ck_assert_int_eq(ptxjit_kernel_param_layout(&la, a, NULL, i), PTXJIT_OK);
        ck_assert_int_eq(ptxjit_kernel_param_layout(&lb, b, NULL, i), PTXJIT_OK);
        ck_assert_msg(la.offset == lb.offset && la.size == lb.size && la.align == lb.align,
                      "%s parameter %d differs between the routes", ptxjit_kernel_family(a), i);
    }
}

START_TEST(cubin_records_agree_with_the_ptx)
{
    char *dir;
    ptxjit_context *context = launch_probe_open(&dir, 0);
    /* Every family through both routes; matmul's default (wgmma) takes long to compile under
     * valgrind, so a smaller kernel with the same parameters stands in (the GPU suite takes
     * every default). */
    int routes_compared = 0;
    for (int f = 0; f < ptxjit_family_count(context); f++) {
        const char *family = ptxjit_family_name(context, f);
        const char *params = strcmp(family, "matmul") == 0 ? "variant=tensor_core" : "";
        ptxjit_kernel *nvrtc = get(context, family, params);
        expect_cubin_agrees(nvrtc);
        char llvm[128];
        snprintf(llvm, sizeof llvm, "backend=llvm %s", params);
        ptxjit_kernel *kernel = NULL;
        if (pj_llvm_built() &&
            ptxjit_get_kernel(&kernel, context, family, llvm, NULL) == PTXJIT_OK) {
            expect_cubin_agrees(kernel);
            expect_same_layouts(nvrtc, kernel);
            routes_compared++;
        }
    }
    ck_assert_int_ge(routes_compared, pj_llvm_built() ? 4 : 0);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* Not an ELF, a cut cubin, changed bytes: refused or read, never read past the end (the
 * sanitizer builds check), and a reading names every ordinal once. */
START_TEST(cubin_reader_survives_cut_and_changed_bytes)
{
    pj_cubin_param_list records;
    ck_assert_int_eq(pj_cubin_entry_params(&records, "not an ELF", 10, "k"),
                     PTXJIT_ERR_UNSUPPORTED);
    ck_assert_int_eq(pj_cubin_entry_params(&records, NULL, 0, "k"), PTXJIT_ERR_UNSUPPORTED);
    ptxjit_context *context = test_open_offline("sm_90a");
    ptxjit_kernel *kernel = get(context, "transpose", "variant=tma");
    size_t bytes = 0;
    const unsigned char *cubin = ptxjit_kernel_cubin(kernel, &bytes);
    ck_assert_int_eq(pj_cubin_entry_params(&records, cubin, bytes, "no_such_entry"),
                     PTXJIT_ERR_UNSUPPORTED);
    unsigned char *copy = malloc(bytes);
    ck_assert_ptr_nonnull(copy);
    for (size_t cut = 0; cut < bytes; cut += 1 + cut / 64) {
        memcpy(copy, cubin, cut);
        if (pj_cubin_entry_params(&records, copy, cut, "transpose_kernel") == PTXJIT_OK)
            ck_assert_int_le(records.count, 6);
        pj_cubin_param_list_free(&records);
    }
    uint64_t state = 0x9e3779b97f4a7c15ull;
    const int rounds = test_sweep_stride() > 1 ? 400 : 4000; /* sanitizers and valgrind: fewer */
    for (int round = 0; round < rounds; round++) {
        memcpy(copy, cubin, bytes);
        for (int k = 0; k < 4; k++) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            copy[state % bytes] = (unsigned char)(state >> 40);
        }
        if (pj_cubin_entry_params(&records, copy, bytes, "transpose_kernel") == PTXJIT_OK)
            for (int i = 0; i < records.count; i++)
                ck_assert_uint_gt(records.params[i].size, 0);
        pj_cubin_param_list_free(&records);
    }
    free(copy);
    ptxjit_close(context);
}
END_TEST

typedef struct {
    ptxjit_kernel *kernel;
    ptxjit_param_layout layout;
    int count;
} reader;

static void *read_layout(void *arg)
{
    reader *r = arg;
    if (ptxjit_kernel_param_count(&r->count, r->kernel, NULL) == PTXJIT_OK)
        ptxjit_kernel_param_layout(&r->layout, r->kernel, NULL, 5);
    return NULL;
}

/* Threads that ask a fresh kernel at once all get the one reading (the tsan build checks). */
START_TEST(layouts_read_once_across_threads)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    ptxjit_kernel *kernel = get(context, "transpose", "variant=tma");
    enum { THREADS = 8 };
    pthread_t threads[THREADS];
    reader readers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        readers[i] = (reader){kernel, {0, 0, 0}, 0};
        ck_assert_int_eq(pthread_create(&threads[i], NULL, read_layout, &readers[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        ck_assert_int_eq(readers[i].count, 6);
        ck_assert_uint_eq(readers[i].layout.offset, 176);
        ck_assert_uint_eq(readers[i].layout.size, 128);
        ck_assert_uint_eq(readers[i].layout.align, 64);
    }
    ptxjit_close(context);
}
END_TEST

Suite *suite_launch_api(void)
{
    Suite *s = suite_create("launch_api");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, user_template_layouts_match_c_struct);
    tcase_add_test(t, ptx_reader_tricky_forms);
    tcase_add_test(t, ptx_reader_refuses_what_it_cannot_read);
    tcase_add_test(t, ptx_reader_survives_cut_and_changed_text);
    tcase_add_test(t, cubin_reader_survives_cut_and_changed_bytes);
    tcase_add_test(t, unknown_entry_and_index_refused);
    tcase_add_test(t, checked_launch_refuses_wrong_arguments_without_a_gpu);
    tcase_add_test(t, empty_or_oversized_launches_refused_without_a_gpu);
    tcase_add_test(t, stream_and_handle_calls_refuse_before_the_gpu);
    tcase_add_test(t, layouts_read_once_across_threads);
    suite_add_tcase(s, t);
    TCase *many = test_many_compiles_case(s, 300);
    tcase_add_test(many, cubin_records_agree_with_the_ptx);
    tcase_add_test(many, builtin_layouts_from_ptx);
    return s;
}
