/* test_llvm.c — the matmul generator without a GPU: a sample of every variant's parameter
 * space (each value of each parameter at least once) becomes PTX that nvJitLink turns into an
 * sm_90a cubin without local memory; each variant's kernel has the template kernel's
 * signature, launch bounds and shared memory (in the PTX and in the cubin), a stack frame only
 * where the template's has one, and the instructions its step is about. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "request/context.h"
#include "families/matmul/op.h"
#include "llvm_util.h"

static ptxjit_kernel *compile(ptxjit_context *context, const char *params)
{
    return test_compile(context, "matmul", params);
}

static const char *llvm_ptx(ptxjit_context *context, const char *params)
{
    char request[512];
    snprintf(request, sizeof request, "backend=llvm %s", params);
    return ptxjit_kernel_ptx(compile(context, request));
}

/* ---- the sweep ---- */

/* The parameters a variant varies, each with the values the schema allows. */
typedef struct {
    const char *format; /* " bm=%d", or " mma=m64n%dk16"; NULL: the dtype pairs */
    int values[32], count;
} axis;

enum { BM, BN, BK, TM, TN, WM, WN, STAGES, PREFETCH, MMA_N, CONSUMERS, CLUSTER, TYPES, AXES };
static const axis axes[AXES] = {
    [BM] = {" bm=%d", {16, 32, 64, 128, 256}, 5},
    [BN] = {" bn=%d", {16, 32, 64, 128, 256}, 5},
    [BK] = {" bk=%d", {4, 8, 16, 32, 64}, 5},
    [TM] = {" tm=%d", {1, 2, 4, 8, 16}, 5},
    [TN] = {" tn=%d", {1, 2, 4, 8, 16}, 5},
    [WM] = {" wm=%d", {16, 32, 64, 128}, 4},
    [WN] = {" wn=%d", {8, 16, 32, 64, 128}, 5},
    [STAGES] = {" stages=%d", {2, 3, 4, 5, 6, 7, 8, 9, 13, 16}, 10},
    [PREFETCH] = {" prefetch=%d", {0, 1}, 2},
    [MMA_N] = {" mma=m64n%dk16", {8,   16,  24,  32,  40,  48,  56,  64,  72,  80,  88,
                                  96,  104, 112, 120, 128, 136, 144, 152, 160, 168, 176,
                                  184, 192, 200, 208, 216, 224, 232, 240, 248, 256}, 32},
    [CONSUMERS] = {" consumers=%d", {1, 2}, 2},
    [CLUSTER] = {" cluster=%d", {1, 2}, 2},
    [TYPES] = {NULL, {0, 1, 2, 3}, 4},
};
static const char *const type_pairs[] = {" dtype=bf16 out=bf16", " dtype=bf16 out=f32",
                                         " dtype=f16 out=f16", " dtype=f16 out=f32"};
static const int groups[] = {1, 2, 4, 8, 16, 32, 64};

/* Each variant (and any fixed parameters), the axes it varies, and every how many valid
 * requests the sample takes one (besides any request holding a value not sampled yet): about
 * 540 kernels, ~70 s on 2 cores. */
static const struct {
    const char *variant;
    int axes[8], axis_count, stride;
} plans[] = {
    {"naive", {BM, BN}, 2, 1},
    {"coalescing", {BM, BN}, 2, 1},
    {"tiled", {BM, BN, BK}, 3, 1},
    {"tiled_register", {BM, BN, BK, TM}, 4, 7},
    {"block_tiled", {BM, BN, BK, TM, TN}, 5, 41},
    {"block_tiled_vectorized", {BM, BN, BK, TM, TN}, 5, 5},
    {"tensor_core load=cp_async", {BM, BN, BK, WM, WN, STAGES, PREFETCH}, 7, 113},
    {"tensor_core load=tma", {BM, BN, BK, WM, WN, STAGES, PREFETCH}, 7, 113},
    {"wgmma", {MMA_N, CONSUMERS, BM, STAGES, TYPES, CLUSTER}, 6, 37},
};

typedef struct {
    char (*requests)[256];
    int count, capacity;
} request_list;

static void add_request(request_list *list, const char *params)
{
    if (list->count == list->capacity) {
        list->capacity = list->capacity ? 2 * list->capacity : 256;
        list->requests = realloc(list->requests, (size_t)list->capacity * sizeof *list->requests);
        ck_assert_ptr_nonnull(list->requests);
    }
    snprintf(list->requests[list->count++], sizeof *list->requests, "%s", params);
}

static int format_request(char *out, size_t size, int plan, const int *digit)
{
    int length = snprintf(out, size, "backend=llvm variant=%s", plans[plan].variant);
    for (int a = 0; a < plans[plan].axis_count; a++) {
        const axis *x = &axes[plans[plan].axes[a]];
        if (x->format)
            length += snprintf(out + length, size - (size_t)length, x->format,
                               x->values[digit[a]]);
        else
            length += snprintf(out + length, size - (size_t)length, "%s",
                               type_pairs[x->values[digit[a]]]);
    }
    return length;
}

/* Walks every combination of the plan's axes and samples the valid ones: every stride-th, and
 * any that holds a value of an axis not sampled yet, so that each value a valid request can
 * have is in the sample; group rotates through its values. Returns the valid combinations. */
static int sample_plan(request_list *list, ptxjit_context *context, int plan)
{
    int digit[8] = {0}, valid_count = 0, sampled = 0;
    int taken[8][32] = {{0}}, group_taken[7] = {0};
    const int n = plans[plan].axis_count;
    for (;;) {
        char params[256];
        int length = format_request(params, sizeof params, plan, digit);
        if (test_valid(context, "matmul", params)) {
            int fresh = 0;
            for (int a = 0; a < n; a++)
                fresh |= !taken[a][digit[a]];
            if (fresh || valid_count % plans[plan].stride == 0) {
                const int g = sampled % 7;
                snprintf(params + length, sizeof params - (size_t)length, " group=%d", groups[g]);
                ck_assert_msg(test_valid(context, "matmul", params), "%s: %s", params,
                              ptxjit_last_error());
                add_request(list, params);
                for (int a = 0; a < n; a++)
                    taken[a][digit[a]] = 1;
                group_taken[g] = 1;
                sampled++;
            }
            valid_count++;
        }
        int a = 0;
        while (a < n && ++digit[a] == axes[plans[plan].axes[a]].count)
            digit[a++] = 0;
        if (a == n)
            break;
    }
    for (int g = 0; g < 7 && sampled >= 7; g++)
        ck_assert(group_taken[g]);
    return valid_count;
}

typedef struct {
    ptxjit_context *context;
    const request_list *list;
    pthread_mutex_t lock;
    int next, stride, failures;
    char failure[1024];
} sweep;

static void sweep_failed(sweep *s, const char *params, const char *what)
{
    pthread_mutex_lock(&s->lock);
    if (!s->failures++)
        snprintf(s->failure, sizeof s->failure, "%s: %s", params, what);
    pthread_mutex_unlock(&s->lock);
}

/* Compiles requests until none are left; failures are recorded, not asserted: Check's
 * assertions belong to the test's own thread. */
static void *sweep_worker(void *arg)
{
    sweep *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        int i = s->next;
        s->next += s->stride;
        pthread_mutex_unlock(&s->lock);
        if (i >= s->list->count)
            return NULL;
        const char *params = s->list->requests[i];
        ptxjit_kernel *kernel = NULL;
        if (ptxjit_get_kernel(&kernel, s->context, "matmul", params, NULL) != PTXJIT_OK) {
            sweep_failed(s, params, ptxjit_last_error());
            continue;
        }
        size_t size = 0;
        const unsigned char *cubin = ptxjit_kernel_cubin(kernel, &size);
        const char *ptx = ptxjit_kernel_ptx(kernel);
        if (!cubin || size < 4 || memcmp(cubin, "\177ELF", 4) != 0)
            sweep_failed(s, params, "no cubin");
        else if (!strstr(ptx, ".entry matmul_kernel("))
            sweep_failed(s, params, "no matmul_kernel entry");
        else if (strstr(ptx, ".local"))
            sweep_failed(s, params, "local memory in the PTX (a variable not in registers)");
    }
}

START_TEST(a_sample_of_every_matmul_variants_requests_becomes_an_sm_90a_cubin)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    request_list list = {0};
    for (size_t p = 0; p < PJ_ARRAY_SIZE(plans); p++) {
        int before = list.count, all = sample_plan(&list, context, (int)p);
        printf("llvm matmul sweep: %s %d of %d requests\n", plans[p].variant, list.count - before,
               all);
    }
    sweep s = {.context = context, .list = &list, .next = test_sweep_offset(),
               .stride = test_sweep_stride()};
    pthread_mutex_init(&s.lock, NULL);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int workers = cores < 1 ? 1 : cores > 8 ? 8 : (int)cores;
    pthread_t threads[8];
    for (int i = 0; i < workers; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, sweep_worker, &s), 0);
    for (int i = 0; i < workers; i++)
        pthread_join(threads[i], NULL);
    ck_assert_msg(s.failures == 0, "%d of %d kernels failed; the first: %s", s.failures,
                  list.count, s.failure);
    ck_assert_int_gt(list.count, 300);
    printf("llvm matmul sweep: %zu kernels of %d requests on %d threads\n",
           test_sweep_taken((size_t)list.count), list.count, workers);
    pthread_mutex_destroy(&s.lock);
    free(list.requests);
    ptxjit_close(context);
}
END_TEST

/* ---- against the template's kernel ---- */

/* Bytes of the static shared arrays the PTX declares (".shared .align 4 .b8 As[4096];"). */
static long static_shared_bytes(const char *ptx)
{
    long total = 0;
    for (const char *s = strstr(ptx, "\n\t.shared "); s; s = strstr(s + 1, "\n\t.shared ")) {
        const char *open = strchr(s, '['), *end = strchr(s, ';');
        if (open && end && open < end)
            total += strtol(open + 1, NULL, 10);
    }
    for (const char *s = strstr(ptx, "\n.shared "); s; s = strstr(s + 1, "\n.shared ")) {
        const char *open = strchr(s, '['), *end = strchr(s, ';');
        if (open && end && open < end)
            total += strtol(open + 1, NULL, 10);
    }
    return total;
}

static uint64_t read_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t read_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint16_t read_u16(const unsigned char *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* The header of section `name` of an ELF64 cubin, or NULL. */
static const unsigned char *cubin_section(const unsigned char *elf, size_t size, const char *name)
{
    if (!elf || size < 64 || memcmp(elf, "\177ELF", 4) != 0 || elf[4] != 2)
        return NULL;
    uint64_t table = read_u64(elf + 0x28);
    unsigned entry = read_u16(elf + 0x3a), sections = read_u16(elf + 0x3c),
             names = read_u16(elf + 0x3e);
    if (entry < 0x40 || table + (uint64_t)sections * entry > size || names >= sections)
        return NULL;
    uint64_t strings = read_u64(elf + table + (uint64_t)names * entry + 0x18);
    for (unsigned i = 0; i < sections; i++) {
        const unsigned char *header = elf + table + (uint64_t)i * entry;
        uint64_t at = strings + read_u32(header);
        if (at + strlen(name) < size && strcmp((const char *)elf + at, name) == 0)
            return header;
    }
    return NULL;
}

/* A section's size (shared memory is NOBITS: a size without bytes in the file), or -1. */
static long cubin_section_size(const unsigned char *elf, size_t size, const char *name)
{
    const unsigned char *header = cubin_section(elf, size, name);
    return header ? (long)read_u64(header + 0x20) : -1;
}

/* The per-thread stack frame ptxas gave the kernel (spills, stack arrays): EIATTR_FRAME_SIZE
 * (0x11) in .nv.info, whose entries are a format byte, an attribute byte and a payload
 * (format 4: a 16-bit length, then the bytes: here the function's symbol and the size). -1 if
 * absent. */
static long cubin_frame_bytes(const unsigned char *elf, size_t size)
{
    const unsigned char *header = cubin_section(elf, size, ".nv.info");
    if (!header)
        return -1;
    uint64_t offset = read_u64(header + 0x18), length = read_u64(header + 0x20);
    if (offset + length > size)
        return -1;
    const unsigned char *info = elf + offset;
    for (uint64_t i = 0; i + 4 <= length;) {
        unsigned format = info[i], attribute = info[i + 1];
        uint64_t payload = format == 4 ? read_u16(info + i + 2) : 0;
        if (format == 4 && attribute == 0x11 && payload == 8 && i + 12 <= length)
            return read_u32(info + i + 8);
        i += 4 + payload;
    }
    return -1;
}

/* What the host op relies on, and the resources ptxas gave each kernel. */
static void same_needs_as_nvrtc(ptxjit_context *context, const char *params)
{
    char llvm_params[512];
    snprintf(llvm_params, sizeof llvm_params, "%s backend=llvm", params);
    ptxjit_kernel *llvm = compile(context, llvm_params), *nvrtc = compile(context, params);
    const char *ours = ptxjit_kernel_ptx(llvm), *theirs = ptxjit_kernel_ptx(nvrtc);
    static const char *const bounds[] = {".maxntid ", ".minnctapersm "};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(bounds); i++) {
        long our_bound = test_number_after(ours, bounds[i]);
        long their_bound = test_number_after(theirs, bounds[i]);
        ck_assert_msg(our_bound == their_bound, "%s: %s%ld, the template's kernel %ld", params,
                      bounds[i], our_bound, their_bound);
    }
    static const char *const signature[] = {
        ".param .u64 matmul_kernel_param_2,", ".param .u32 matmul_kernel_param_5,",
        ".param .align 64 .b8 matmul_kernel_param_6[128],",
        ".param .align 64 .b8 matmul_kernel_param_7[128],",
        ".param .align 64 .b8 matmul_kernel_param_8[128],",
        ".param .align 8 .b8 matmul_kernel_param_9[16]",
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(signature); i++)
        ck_assert_msg(strstr(ours, signature[i]) && strstr(theirs, signature[i]),
                      "%s: '%s' missing", params, signature[i]);
    ck_assert_msg(static_shared_bytes(ours) == static_shared_bytes(theirs),
                  "%s: %ld bytes of static shared memory, the template's kernel %ld", params,
                  static_shared_bytes(ours), static_shared_bytes(theirs));
    ck_assert_msg(!strstr(ours, ".extern .shared") == !strstr(theirs, ".extern .shared"),
                  "%s: dynamic shared memory in one kernel only", params);
    size_t our_size = 0, their_size = 0;
    const unsigned char *our_cubin = ptxjit_kernel_cubin(llvm, &our_size);
    const unsigned char *their_cubin = ptxjit_kernel_cubin(nvrtc, &their_size);
    ck_assert_int_gt(cubin_section_size(our_cubin, our_size, ".text.matmul_kernel"), 0);
    long our_shared = cubin_section_size(our_cubin, our_size, ".nv.shared.matmul_kernel");
    long their_shared = cubin_section_size(their_cubin, their_size, ".nv.shared.matmul_kernel");
    ck_assert_msg(our_shared == their_shared, "%s: cubin shared %ld bytes, the template's %ld",
                  params, our_shared, their_shared);
    long our_frame = cubin_frame_bytes(our_cubin, our_size);
    long their_frame = cubin_frame_bytes(their_cubin, their_size);
    ck_assert_msg(our_frame >= 0 && their_frame >= 0, "%s: no frame size in a cubin", params);
    ck_assert_msg(their_frame > 0 || our_frame == 0,
                  "%s: a %ld-byte stack frame (spills) where the template's kernel has none",
                  params, our_frame);
    ck_assert_msg(!strstr(ours, ".local"), "%s: local memory in the PTX", params);
}

static const char *const template_configs[] = {
    "variant=naive", "variant=naive bm=16 bn=64 group=4", "variant=coalescing",
    "variant=coalescing bm=64 bn=16", "variant=tiled", "variant=tiled bk=8 bm=16 bn=16",
    "variant=tiled_register", "variant=tiled_register bm=32 bn=32 bk=16 tm=4",
    "variant=block_tiled", "variant=block_tiled bm=64 bn=64 tm=4 tn=4 bk=16 group=8",
    /* many tile loads per thread (128, 8 of them A's with 1024 threads): no spills either */
    "variant=block_tiled bm=128 bn=16 bk=64 tm=8 tn=4", "variant=block_tiled bm=32 bn=128 bk=64 tm=4 tn=1",
    "variant=block_tiled bm=64 bn=128 bk=64 tm=2 tn=16",
    "variant=block_tiled_vectorized",
    "variant=block_tiled_vectorized bk=16 tm=4 tn=8 bm=64 bn=128",
    "variant=block_tiled_vectorized bk=8 tm=8 tn=4 bm=64 bn=64",
    "variant=tensor_core load=cp_async", "variant=tensor_core load=cp_async stages=2", "variant=tensor_core load=cp_async stages=4 bk=16",
    "variant=tensor_core load=cp_async bm=64 bn=64 wm=32 wn=32", "variant=tensor_core load=cp_async wm=32 wn=64 bk=32 stages=2",
    "variant=tensor_core load=cp_async wm=64 wn=64 bn=256", "variant=tensor_core load=cp_async wm=64 wn=16",
    "variant=tensor_core load=cp_async wm=16 wn=8 bm=32 bn=32", "variant=tensor_core load=cp_async prefetch=0 group=1",
    /* load=tma: A rows of 32, 64 and 128 bytes; B fragments 1, 2 and 4 at a time, 16 a thread */
    "variant=tensor_core load=tma", "variant=tensor_core load=tma bk=16 stages=4",
    "variant=tensor_core load=tma bk=8 stages=6", "variant=tensor_core load=tma prefetch=1",
    "variant=tensor_core load=tma bm=256 wm=64 wn=32", "variant=tensor_core load=tma stages=2",
    "variant=tensor_core load=tma wm=64 wn=64 bn=256 bk=16",
    "variant=tensor_core load=tma wm=32 wn=16 bm=64 bn=64",
    "variant=tensor_core load=tma wm=16 wn=8 bm=32 bn=32 bk=8 stages=8",
    "variant=tensor_core load=tma wm=32 wn=128 bm=64 bn=128 group=1",
    "variant=wgmma", "variant=wgmma out=f32", "variant=wgmma dtype=f16",
    "variant=wgmma dtype=f16 out=f32", "variant=wgmma mma=m64n128k16",
    "variant=wgmma mma=m64n64k16 consumers=1 bm=64", "variant=wgmma mma=m64n200k16 stages=3",
    "variant=wgmma mma=m64n8k16 consumers=1 bm=128", "variant=wgmma mma=m64n128k16 bm=256",
    "variant=wgmma stages=2 group=1", "variant=wgmma mma=m64n96k16 consumers=1 bm=64 stages=8",
    "variant=wgmma cluster=2", "variant=wgmma cluster=2 out=f32 dtype=f16",
    "variant=wgmma cluster=2 mma=m64n64k16 consumers=1 bm=64",
    "variant=wgmma cluster=2 mma=m64n120k16 stages=4 group=1",
};

START_TEST(each_variant_needs_what_the_template_kernel_needs)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    /* Both backends compile each. Under the sanitizers and valgrind, a sample: the first
     * configuration of each variant and every stride-th. */
    for (size_t i = 0; i < PJ_ARRAY_SIZE(template_configs); i++) {
        const char *config = template_configs[i], *before = i ? template_configs[i - 1] : "";
        size_t variant = strcspn(config, " ");
        if (test_sweep_takes(i) || strncmp(config, before, variant) != 0 ||
            (before[variant] != ' ' && before[variant] != '\0'))
            same_needs_as_nvrtc(context, config);
    }
    ptxjit_close(context);
}
END_TEST

/* ---- each step's idea ---- */

START_TEST(variants_hold_the_instructions_they_are_about)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    const char *naive = llvm_ptx(context, "variant=naive");
    ck_assert(strstr(naive, "ld.global.nc.f32") && strstr(naive, "fma.rn.f32"));
    ck_assert(!strstr(naive, "bar.sync") && !strstr(naive, ".shared"));
    const char *tiled = llvm_ptx(context, "variant=tiled");
    ck_assert_int_eq(test_count(tiled, "bar.sync"), 2);
    ck_assert_int_eq(test_count(tiled, "fma.rn.f32"), 32); /* BK multiply-adds per tile, unrolled */
    ck_assert_int_eq(test_count(llvm_ptx(context, "variant=block_tiled"), "fma.rn.f32"), 8 * 8 * 8);
    const char *vectorized = llvm_ptx(context, "variant=block_tiled_vectorized");
    static const char *const vector_ops[] = {"ld.global.nc.v4.f32", "ld.shared.v4.f32",
                                             "st.shared.v4.f32", "st.global.v4.f32"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(vector_ops); i++)
        ck_assert_msg(strstr(vectorized, vector_ops[i]), "no %s", vector_ops[i]);
    /* Scalar loads too: the path for rows that are no whole vectors. */
    ck_assert_ptr_nonnull(strstr(vectorized, "ld.global.nc.f32"));
    const char *tc = llvm_ptx(context, "variant=tensor_core load=cp_async");
    /* 128 x 128 x 32 per block of 8 warps, 64 x 32 each: 4 x 4 mma tiles, 4 k steps. */
    ck_assert_int_eq(test_count(tc, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), 64);
    ck_assert_int_eq(test_count(tc, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), 16);
    ck_assert_int_eq(test_count(tc, "ld.shared.v4.u32"), 8); /* permuted B columns: 4 at once */
    ck_assert_ptr_nonnull(strstr(tc, "cp.async.cg.shared.global"));
    ck_assert_ptr_nonnull(strstr(tc, "cp.async.wait_group 1;")); /* stages - 2 */
    ck_assert_ptr_nonnull(strstr(tc, ", 4096;")); /* tf32 rounding: + 0x1000 */
    ck_assert_ptr_null(strstr(tc, "cvt.rna.tf32"));
    ck_assert_int_eq(test_count(llvm_ptx(context, "variant=tensor_core load=cp_async wm=64 wn=16"),
                                "ld.shared.v2.u32"),
                     8);
    const char *wgmma = llvm_ptx(context, "variant=wgmma");
    static const char *const hopper[] = {
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "wgmma.fence.sync.aligned",
        "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0",
        "cp.async.bulk.tensor.2d.shared::cluster.global", "setmaxnreg.inc.sync.aligned.u32 232",
        "setmaxnreg.dec.sync.aligned.u32 40", "mbarrier.try_wait.parity",
        "mbarrier.arrive.expect_tx", "fence.mbarrier_init.release.cluster", "cvt.rn.bf16x2.f32",
        "cvta.param.u64", "prefetch.tensormap"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(hopper); i++)
        ck_assert_msg(strstr(wgmma, hopper[i]), "no %s", hopper[i]);
    /* 4 B boxes of 64 columns and one A box per stage. */
    ck_assert_int_ge(test_count(wgmma, "cp.async.bulk.tensor.2d"), 5);
    ck_assert_ptr_nonnull(strstr(llvm_ptx(context, "variant=wgmma dtype=f16"), "cvt.rn.f16x2.f32"));
    ck_assert_ptr_nonnull(strstr(llvm_ptx(context, "variant=wgmma out=f32"), "st.global.v2.f32"));
    ck_assert_ptr_nonnull(strstr(llvm_ptx(context, "variant=wgmma dtype=f16 mma=m64n200k16 stages=3"),
                                 "wgmma.mma_async.sync.aligned.m64n200k16.f32.f16.f16"));
    ptxjit_close(context);
}
END_TEST

/* tensor_core load=tma: thread 0 fills the stages with TMA (an expect_tx, one A box and bn / 32
 * B boxes per stage: all stages first, then one refill a turn), warps wait on "full" mbarriers
 * and release stages on "empty" ones after a warp barrier; no cp.async, one block barrier
 * (after the barriers' initialization). Fragments are read from the swizzled stages as with
 * cp.async: ldmatrix for A, B_VECTOR words a load for B. The passes may unroll the k loop
 * (small tiles: twice), so counts are per copy of its body (one arrival on "empty" each). */
START_TEST(tensor_core_tma_fills_stages_with_tma_and_mbarriers)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    static const struct {
        const char *params;
        int ldmatrix, b_loads; /* per k step of 8 */
        const char *b_load;
    } configs[] = {
        {"variant=tensor_core load=tma", 4, 4, "ld.shared.v4.u32"},
        {"variant=tensor_core load=tma bk=16 stages=4", 4, 4, "ld.shared.v4.u32"},
        {"variant=tensor_core load=tma bk=8 stages=6", 4, 4, "ld.shared.v4.u32"},
        {"variant=tensor_core load=tma bm=256 wm=64 wn=32", 4, 2, "ld.shared.v4.u32"},
        {"variant=tensor_core load=tma wm=32 wn=16 bm=64 bn=64", 2, 2, "ld.shared.v2.u32"},
        {"variant=tensor_core load=tma wm=16 wn=8 bm=32 bn=32 bk=8", 1, 2, "ld.shared.u32"},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(configs); i++) {
        const char *params = configs[i].params, *ptx = llvm_ptx(context, params);
        matmul_config config;
        ck_assert_int_eq(pj_matmul_config_of(&config, compile(context, params)), PTXJIT_OK);
        const int steps = config.bk / 8, b_boxes = config.tile_n / 32;
        const int issues = test_count(ptx, "mbarrier.arrive.expect_tx.shared::cta.b64");
        const int copies = test_count(ptx, "mbarrier.arrive.shared::cta.b64");
        ck_assert_msg(issues > config.stages, "%s: %d stage loads", params, issues);
        ck_assert_msg(test_count(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global") ==
                          issues * (1 + b_boxes),
                      "%s: %d TMA loads for %d stage loads", params,
                      test_count(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global"), issues);
        ck_assert_int_eq(test_count(ptx, "mbarrier.init.shared::cta.b64"), 2 * config.stages);
        ck_assert_int_ge(copies, 1);
        ck_assert_int_ge(test_count(ptx, "mbarrier.try_wait.parity.shared::cta.b64"), copies + 1);
        ck_assert_int_eq(test_count(ptx, "bar.warp.sync"), copies);
        ck_assert_int_eq(test_count(ptx, "bar.sync"), 1);
        ck_assert_ptr_null(strstr(ptx, "cp.async.cg"));
        ck_assert_ptr_null(strstr(ptx, "cp.async.wait_group"));
        ck_assert_msg(test_count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") ==
                          copies * configs[i].ldmatrix * steps,
                      "%s: %d ldmatrix in %d copies", params,
                      test_count(ptx, "ldmatrix.sync.aligned.m8n8.x4"), copies);
        char needle[64];
        snprintf(needle, sizeof needle, "\t%s \t", configs[i].b_load);
        ck_assert_msg(test_count(ptx, needle) == copies * configs[i].b_loads * steps,
                      "%s: %d '%s' in %d copies", params, test_count(ptx, needle),
                      configs[i].b_load, copies);
    }
    ptxjit_close(context);
}
END_TEST

/* wgmma cluster=2: the producer reads its rank and multicasts its share of the B boxes to both
 * blocks; consumer warps arrive on the "empty" barriers of both blocks; the cluster barrier
 * replaces the block barrier after initialization and ends the kernel. */
START_TEST(wgmma_cluster_multicasts_b_and_arrives_in_both_blocks)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    const char *ptx = llvm_ptx(context, "variant=wgmma cluster=2");
    static const char *const cluster_ops[] = {
        "%cluster_ctarank", "mapa.shared::cluster.u32",
        "mbarrier.arrive.shared::cluster.b64",
        ".multicast::cluster [", "fence.mbarrier_init.release.cluster"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cluster_ops); i++)
        ck_assert_msg(strstr(ptx, cluster_ops[i]), "no %s", cluster_ops[i]);
    ck_assert_int_eq(test_count(ptx, "barrier.cluster.arrive.release.aligned"), 2);
    ck_assert_int_eq(test_count(ptx, "barrier.cluster.wait.acquire.aligned"), 2);
    ck_assert_ptr_null(strstr(ptx, "bar.sync \t0;")); /* only the consumers' named barriers */
    /* arrivals on both blocks' barriers, none on the block's own alone */
    ck_assert_int_eq(test_count(ptx, "mapa.shared::cluster.u32") % 2, 0);
    ck_assert_ptr_null(strstr(ptx, "mbarrier.arrive.shared::cta.b64"));
    /* cluster=1 keeps the block barrier and plain loads */
    const char *single = llvm_ptx(context, "variant=wgmma");
    ck_assert_ptr_null(strstr(single, ".multicast::cluster"));
    ck_assert_ptr_null(strstr(single, "barrier.cluster"));
    ck_assert_ptr_nonnull(strstr(single, "bar.sync \t0;"));
    ptxjit_close(context);
}
END_TEST

/* nvJitLink's ptxas compiles relocatable code: it merges neighbouring shared reads into 16-byte
 * ones only as far as the arrays' declared alignment lets it (block_tiled: 32 LDS.128 a tile
 * instead of 128 LDS). */
START_TEST(shared_tiles_are_declared_16_byte_aligned)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    static const char *const tiled[] = {"variant=tiled", "variant=tiled_register",
                                        "variant=block_tiled"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(tiled); i++) {
        const char *ptx = llvm_ptx(context, tiled[i]);
        ck_assert_msg(strstr(ptx, ".shared .align 16 .b8 As[") &&
                          strstr(ptx, ".shared .align 16 .b8 Bs["),
                      "%s: As and Bs not 16-byte aligned", tiled[i]);
    }
    ptxjit_close(context);
}
END_TEST

/* The k loop of one thread per element of C has the shape NVVM gives the template's: 4 steps
 * an iteration left for ptxas to unroll further (no "nounroll" on it), then a remainder loop
 * of single steps marked "nounroll". */
START_TEST(dot_product_loop_takes_four_steps_and_leaves_unrolling_to_ptxas)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    static const char *const simple[] = {"variant=naive", "variant=coalescing"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(simple); i++) {
        const char *ptx = llvm_ptx(context, simple[i]);
        ck_assert_msg(test_count(ptx, "fma.rn.f32") == 4 + 1, "%s: %d multiply-adds", simple[i],
                      test_count(ptx, "fma.rn.f32"));
        ck_assert_int_eq(test_count(ptx, ".pragma \"nounroll\""), 1);
    }
    ptxjit_close(context);
}
END_TEST

START_TEST(matmul_description_lists_the_variants_llvm_builds)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    const char *text = NULL;
    ck_assert_int_eq(ptxjit_family_describe(&text, context, "matmul"), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(text, "llvm   variants naive,coalescing,tiled,tiled_register,"
                                       "block_tiled,block_tiled_vectorized,tensor_core,wgmma"));
    ptxjit_close(context);
}
END_TEST

/* What the generator does not build is refused with PTXJIT_ERR_UNSUPPORTED naming
 * backend=nvrtc: the tf32 and fp8 wgmma variants before any compiler loads, and the wgmma
 * parameters it lacks (B's transpose, the fused epilogue, a 16-bit output of the other type)
 * by the generator. Both schedules and both stores it builds, as the template does. */
START_TEST(llvm_refuses_the_wgmma_features_it_does_not_build)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    static const struct {
        const char *params, *needle;
    } refused[] = {
        {"variant=wgmma_tf32", "matmul variant=wgmma_tf32 is not supported by the llvm backend"},
        {"variant=wgmma_fp8", "matmul variant=wgmma_fp8 is not supported by the llvm backend"},
        {"b_layout=nk", "matmul variant=wgmma b_layout=nk is not supported by the llvm backend; use backend=nvrtc"},
        {"alpha=scaled", "alpha=scaled is not supported by the llvm backend"},
        {"beta=scaled", "beta=scaled is not supported by the llvm backend"},
        {"bias=column", "bias=column is not supported by the llvm backend"},
        {"act=gelu", "act=gelu is not supported by the llvm backend"},
        {"splits=4", "matmul variant=wgmma splits=4 is not supported by the llvm backend"},
        {"swap=1", "matmul variant=wgmma swap=1 is not supported by the llvm backend"},
        {"sched=pingpong mma=m64n128k16",
         "matmul variant=wgmma sched=pingpong is not supported by the llvm backend"},
        {"out=f16", "not supported by the llvm backend"},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(refused); i++) {
        char params[160];
        ptxjit_kernel *kernel;
        snprintf(params, sizeof params, "backend=llvm %s", refused[i].params);
        ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "matmul", params, NULL),
                         PTXJIT_ERR_UNSUPPORTED);
        ck_assert_msg(strstr(ptxjit_last_error(), refused[i].needle), "%s: %s", params,
                      ptxjit_last_error());
        ck_assert_msg(strstr(ptxjit_last_error(), "use backend=nvrtc"), "%s: %s", params,
                      ptxjit_last_error());
    }
    static const char *const built[] = {"sched=grid store=direct", "sched=persistent store=direct",
                                        "sched=grid store=tma", "store=tma out=f32 stages=2"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(built); i++) {
        char params[160];
        ptxjit_kernel *kernel;
        snprintf(params, sizeof params, "backend=llvm %s", built[i]);
        ck_assert_msg(ptxjit_get_kernel(&kernel, context, "matmul", params, NULL) == PTXJIT_OK,
                      "%s: %s", params, ptxjit_last_error());
    }
    ptxjit_close(context);
}
END_TEST

Suite *suite_llvm_matmul(void)
{
    Suite *s = suite_create("llvm_matmul");
    /* Against the template's kernel: each compiled by both routes, the NVRTC side seconds a
     * compile under memcheck, which valgrind-llvm leaves out by this tag (mk/hardening.mk);
     * the generators run there in the cases below. */
    TCase *against = tcase_create("against_template");
    tcase_set_tags(against, "ptx_content");
    tcase_set_timeout(against, 300);
    tcase_add_test(against, each_variant_needs_what_the_template_kernel_needs);
    tcase_add_test(against, tensor_core_tma_fills_stages_with_tma_and_mbarriers);
    suite_add_tcase(s, against);
    TCase *tc = tcase_create("generator");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, dot_product_loop_takes_four_steps_and_leaves_unrolling_to_ptxas);
    tcase_add_test(tc, matmul_description_lists_the_variants_llvm_builds);
    suite_add_tcase(s, tc);
    TCase *sweep = tcase_create("sweep");
    tcase_set_tags(sweep, "sweep"); /* CI's plain run leaves the whole sweep out (mk/hardening.mk) */
    tcase_set_timeout(sweep, 900);
    tcase_add_test(sweep, a_sample_of_every_matmul_variants_requests_becomes_an_sm_90a_cubin);
    suite_add_tcase(s, sweep);
    TCase *many = test_many_compiles_case(s, 300);
    tcase_add_test(many, variants_hold_the_instructions_they_are_about);
    tcase_add_test(many, llvm_refuses_the_wgmma_features_it_does_not_build);
    tcase_add_test(many, shared_tiles_are_declared_16_byte_aligned);
    tcase_add_test(many, wgmma_cluster_multicasts_b_and_arrives_in_both_blocks);
    return s;
}
