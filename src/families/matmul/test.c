/* test_matmul.c — the matmul family without a GPU: defaults per variant, schema constraints,
 * the instructions each variant is about, shape rules, element conversions, the reference. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "families/matmul/fit.h"
#include "families/matmul/layout_plan.h"
#include "families/matmul/op.h"
#include "families/matmul/stage.h"
#include "request/plan.h"
#include "test_util.h"

static void expect_canonical(ptxjit_context *context, const char *params, const char *want)
{
    char *canonical = NULL;
    ck_assert_msg(ptxjit_canonical_params(&canonical, context, "matmul", params) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    ck_assert_str_eq(canonical, want);
    free(canonical);
}

START_TEST(matmul_defaults_follow_the_variant)
{
    ptxjit_context *context = test_open_offline(NULL);
    expect_canonical(context, "variant=naive", "bm=32 bn=32 dtype=f32 group=1 out=f32 variant=naive");
    expect_canonical(context, "variant=tiled", "bk=32 bm=32 bn=32 dtype=f32 group=1 out=f32 variant=tiled");
    expect_canonical(context, "variant=tiled_register",
                     "bk=8 bm=64 bn=64 dtype=f32 group=1 out=f32 tm=8 variant=tiled_register");
    expect_canonical(context, "variant=block_tiled",
                     "bk=8 bm=128 bn=128 dtype=f32 group=1 out=f32 tm=8 tn=8 variant=block_tiled");
    expect_canonical(context, "variant=tensor_core load=cp_async",
                     "bk=32 bm=128 bn=128 dtype=f32 group=8 load=cp_async mma=m16n8k8 out=f32 "
                     "prefetch=1 stages=3 variant=tensor_core wm=64 wn=32");
    /* sm_90: TMA loads by default, with the tile that measured fastest on the H100
     * (docs/PERFORMANCE.md); the write-up's cp.async step elsewhere. */
    expect_canonical(context, "variant=tensor_core",
                     "bk=32 bm=256 bn=128 dtype=f32 group=8 load=tma mma=m16n8k8 out=f32 "
                     "prefetch=1 stages=4 variant=tensor_core wm=64 wn=64");
    ptxjit_context *ampere = test_open_offline("sm_80");
    expect_canonical(ampere, "variant=tensor_core",
                     "bk=32 bm=128 bn=128 dtype=f32 group=8 load=cp_async mma=m16n8k8 out=f32 "
                     "prefetch=1 stages=3 variant=tensor_core wm=64 wn=32");
    ptxjit_close(ampere);
    expect_canonical(context, "variant=tensor_core load=tma",
                     "bk=32 bm=256 bn=128 dtype=f32 group=8 load=tma mma=m16n8k8 out=f32 "
                     "prefetch=1 stages=4 variant=tensor_core wm=64 wn=64");
    /* wgmma: persistent blocks, and TMA stores where C's tile fits beside the stages (the
     * fastest on the H100, docs/PERFORMANCE.md). */
    expect_canonical(context, "", "act=none alpha=none b_layout=kn beta=none bias=none bm=128 "
                                  "cluster=1 consumers=2 dtype=bf16 group=8 mma=m64n256k16 "
                                  "out=bf16 sched=persistent splits=1 stages=3 store=tma swap=0 variant=wgmma");
    expect_canonical(context, "dtype=f16", "act=none alpha=none b_layout=kn beta=none bias=none "
                                           "bm=128 cluster=1 consumers=2 dtype=f16 group=8 "
                                           "mma=m64n256k16 out=f16 sched=persistent splits=1 stages=3 "
                                           "store=tma swap=0 variant=wgmma");
    expect_canonical(context, "out=f32", "act=none alpha=none b_layout=kn beta=none bias=none "
                                         "bm=128 cluster=1 consumers=2 dtype=bf16 group=8 "
                                         "mma=m64n256k16 out=f32 sched=persistent splits=1 stages=3 "
                                         "store=direct swap=0 variant=wgmma"); /* 128 KiB: no room */
    expect_canonical(context, "mma=m64n200k16", "act=none alpha=none b_layout=kn beta=none "
                                                "bias=none bm=128 cluster=1 consumers=2 "
                                                "dtype=bf16 group=8 mma=m64n200k16 out=bf16 "
                                                "sched=persistent splits=1 stages=3 store=direct "
                                                "swap=0 variant=wgmma"); /* not whole boxes */
    /* tf32 and fp8 through wgmma: B K-major by default (their only layout), fp8 out bf16. */
    expect_canonical(context, "variant=wgmma_tf32",
                     "act=none alpha=none b_layout=nk beta=none bias=none bm=128 cluster=1 "
                     "consumers=2 dtype=f32 group=8 mma=m64n256k16 out=f32 sched=persistent "
                     "splits=1 stages=4 store=direct swap=0 variant=wgmma_tf32");
    expect_canonical(context, "variant=wgmma_fp8",
                     "act=none alpha=none b_layout=nk beta=none bias=none bm=128 cluster=1 "
                     "consumers=2 fp8=e4m3 group=8 mma=m64n256k16 out=bf16 sched=persistent "
                     "splits=1 stages=3 store=tma swap=0 variant=wgmma_fp8");
    /* sched=gemv: B K-major and direct stores by default (no shared memory for a C tile). */
    expect_canonical(context, "variant=wgmma sched=gemv",
                     "act=none alpha=none b_layout=nk beta=none bias=none bm=128 cluster=1 "
                     "consumers=2 dtype=bf16 group=8 mma=m64n256k16 out=bf16 sched=gemv "
                     "splits=1 stages=3 store=direct swap=0 variant=wgmma");
    expect_canonical(context, "variant=block_tiled_vectorized",
                     "bk=16 bm=128 bn=128 dtype=f32 group=1 out=f32 tm=8 tn=8 "
                     "variant=block_tiled_vectorized");
    ptxjit_close(context);
}
END_TEST

static void expect_refused(const char *params, const char *needle, const char *arch)
{
    test_expect_refused("matmul", params, needle, arch);
}

START_TEST(matmul_constraints_fail_early_with_the_fix)
{
    expect_refused("variant=block_tiled dtype=bf16", "take dtype=f32; wgmma takes", NULL);
    expect_refused("dtype=f32", "take dtype=f32; wgmma takes", NULL);
    expect_refused("variant=wgmma_tf32 dtype=bf16", "take dtype=f32; wgmma takes", NULL);
    expect_refused("variant=tiled out=f16", "out is f32, or for the wgmma variants", NULL);
    expect_refused("variant=tensor_core load=cp_async mma=m64n64k16", "tensor_core issues mma.sync m16n8k8", NULL);
    expect_refused("mma=m16n8k8", "take mma=m64nNk16", NULL);
    expect_refused("", "need an sm_90a target", "sm_80");
    expect_refused("variant=wgmma_fp8", "need an sm_90a target", "sm_80");
    expect_refused("variant=tensor_core load=cp_async", "needs sm_80 or newer", "sm_75");
    expect_refused("variant=naive bm=64 bn=32", "bm * bn must be at most 1024", NULL);
    expect_refused("variant=block_tiled tm=16 tn=16 bm=32 bn=32", "32..1024 threads", NULL);
    expect_refused("variant=block_tiled_vectorized tm=2", "multiples of 4", NULL);
    expect_refused("variant=block_tiled_vectorized bk=64", "fit 48 KiB", NULL);
    expect_refused("variant=tensor_core load=cp_async wm=24", "power of two", NULL);
    expect_refused("variant=tensor_core load=cp_async wm=128 wn=128", "at most 32 mma tiles", NULL);
    expect_refused("variant=tensor_core load=cp_async stages=8 bk=64", "227 KiB", NULL);
    expect_refused("variant=tensor_core load=tma", "tensor memory accelerator of sm_90", "sm_80");
    expect_refused("variant=tensor_core load=tma bk=64", "swizzle span of 32, 64 or 128 bytes", NULL);
    expect_refused("variant=tensor_core load=tma bn=16 wn=16", "boxes of 32 columns", NULL);
    expect_refused("variant=tensor_core load=tma stages=8", "227 KiB", NULL);
    expect_refused("variant=naive load=tma", "does not apply", NULL);
    expect_refused("variant=tensor_core load=cp_async cluster=2", "does not apply", NULL);
    expect_refused("bm=64", "bm = 64 or 128 times consumers", NULL);
    expect_refused("bm=256", "at most 128 accumulators", NULL);
    expect_refused("stages=5", "227 KiB", NULL);
    expect_refused("mma=m64n260k16", "one of m16n8k8", NULL);
    expect_refused("variant=wgmma bn=128", "'bn' does not apply", NULL);
    /* The wgmma variants' own parameters. */
    expect_refused("variant=wgmma_tf32 b_layout=kn", "give B as its transpose", NULL);
    expect_refused("variant=wgmma_fp8 b_layout=kn", "give B as its transpose", NULL);
    expect_refused("variant=wgmma_fp8 dtype=bf16", "does not apply", NULL);
    expect_refused("fp8=e5m2", "does not apply", NULL);
    expect_refused("variant=tensor_core sched=persistent", "does not apply", NULL);
    expect_refused("variant=naive act=relu", "does not apply", NULL);
    expect_refused("sched=gemv b_layout=kn", "sched=gemv reads B K-major", NULL);
    expect_refused("variant=wgmma_fp8 sched=gemv store=tma", "store=direct", NULL);
    expect_refused("variant=wgmma_fp8 sched=gemv splits=2", "splits=1", NULL);
    expect_refused("variant=wgmma_fp8 sched=gemv swap=1", "swap=0", NULL);
    expect_refused("variant=wgmma_fp8 sched=gemv cluster=2", "cluster=1", NULL);
    expect_refused("store=tma mma=m64n200k16", "boxes of 32, 64 or 128 bytes", NULL);
    expect_refused("store=tma mma=m64n24k16 consumers=1 bm=64", "boxes of 32, 64 or 128 bytes",
                   NULL);
    expect_refused("store=tma stages=4", "227 KiB", NULL);
    expect_refused("store=tma out=f32", "227 KiB", NULL); /* named: no fallback to direct */
    expect_refused("store=tma out=f32 stages=3", "227 KiB", NULL);
    expect_refused("act=tanh", "one of none", NULL);
    /* Accepted: every N of wgmma, one consumer, 128 rows per consumer. */
    ptxjit_context *context = test_open_offline(NULL);
    static const char *const fine[] = {"mma=m64n8k16", "mma=m64n200k16 consumers=1 bm=64",
                                       "mma=m64n128k16 bm=256", "mma=m64n64k16 stages=8",
                                       "store=tma stages=3", "store=tma out=f32 stages=2",
                                       "out=f16", "dtype=f16 out=bf16 b_layout=nk",
                                       "variant=wgmma_fp8 fp8=e5m2 out=f32",
                                       "variant=wgmma_tf32 out=bf16 sched=persistent",
                                       "sched=persistent cluster=2 store=tma mma=m64n128k16",
                                       "store=tma mma=m64n112k16", /* 32-byte boxes of C */
                                       "store=tma out=f32 mma=m64n48k16 consumers=1 bm=64"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(fine); i++) {
        char *canonical = NULL;
        ck_assert_msg(ptxjit_canonical_params(&canonical, context, "matmul", fine[i]) == PTXJIT_OK,
                      "%s: %s", fine[i], ptxjit_last_error());
        free(canonical);
    }
    ptxjit_close(context);
}
END_TEST

static void expect_in_ptx(ptxjit_context *context, const char *params, const char *needle)
{
    ptxjit_kernel *kernel;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "matmul", params, NULL) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    ck_assert_msg(strstr(ptxjit_kernel_ptx(kernel), needle), "%s: no '%s' in the PTX", params,
                  needle);
}

/* Each step's idea is in its PTX; every N of wgmma and both 16-bit types compile. */
START_TEST(matmul_variants_compile_to_their_instructions)
{
    ptxjit_context *context = test_open_offline(NULL);
    expect_in_ptx(context, "variant=tiled", "bar.sync");
    expect_in_ptx(context, "variant=block_tiled_vectorized", "ld.global.nc.v4.f32");
    expect_in_ptx(context, "variant=block_tiled_vectorized", "ld.shared.v4.f32");
    expect_in_ptx(context, "variant=tensor_core load=cp_async", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
    expect_in_ptx(context, "variant=tensor_core load=cp_async", "ldmatrix.sync.aligned.m8n8.x4.shared.b16");
    expect_in_ptx(context, "variant=tensor_core load=cp_async", "cp.async.cg.shared.global");
    expect_in_ptx(context, "variant=tensor_core load=cp_async", "ld.shared.v4.u32"); /* B fragments */
    expect_in_ptx(context, "variant=tensor_core load=tma",
                  "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes");
    expect_in_ptx(context, "variant=tensor_core load=tma", "mbarrier.try_wait.parity");
    expect_in_ptx(context, "variant=tensor_core load=tma", "ldmatrix.sync.aligned.m8n8.x4.shared.b16");
    expect_in_ptx(context, "variant=tensor_core load=tma bk=8 wm=16 wn=8 bm=32 bn=32",
                  "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
    expect_in_ptx(context, "", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16");
    expect_in_ptx(context, "", "cp.async.bulk.tensor.3d.shared::cluster.global");
    expect_in_ptx(context, "", "setmaxnreg.inc.sync.aligned.u32 232");
    expect_in_ptx(context, "", "cvt.rn.bf16x2.f32");
    expect_in_ptx(context, "dtype=f16 out=f32 mma=m64n200k16 stages=3",
                  "wgmma.mma_async.sync.aligned.m64n200k16.f32.f16.f16");
    expect_in_ptx(context, "mma=m64n8k16 consumers=1 bm=64", "m64n8k16");
    expect_in_ptx(context, "cluster=2", ".multicast::cluster");
    expect_in_ptx(context, "cluster=2", "mbarrier.arrive.shared::cluster.b64");
    expect_in_ptx(context, "cluster=2", "barrier.cluster.wait.acquire.aligned");
    ptxjit_close(context);
}
END_TEST

static void expect_not_in_ptx(ptxjit_context *context, const char *params, const char *needle)
{
    ptxjit_kernel *kernel;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "matmul", params, NULL) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    ck_assert_msg(!strstr(ptxjit_kernel_ptx(kernel), needle), "%s: '%s' in the PTX", params,
                  needle);
}

/* The wgmma variants' new instructions and what each parameter adds: tf32 and fp8 shapes (K
 * per instruction 8 and 32), B K-major (imm-trans-b 0), a group kept in flight, the
 * persistent loop over tiles, TMA stores through shared memory, the epilogue's terms. Every
 * kernel here also became an sm_90a cubin (ptxjit_get_kernel compiles to one). */
START_TEST(matmul_wgmma_variants_compile_to_their_instructions)
{
    ptxjit_context *context = test_open_offline(NULL);
    expect_in_ptx(context, "variant=wgmma_tf32", "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32");
    expect_in_ptx(context, "variant=wgmma_tf32 mma=m64n128k16 out=bf16",
                  "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32");
    expect_in_ptx(context, "variant=wgmma_fp8", "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3");
    expect_in_ptx(context, "variant=wgmma_fp8 fp8=e5m2 mma=m64n64k16 consumers=1 bm=64",
                  "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2");
    expect_in_ptx(context, "", "1, 1, 1, 0, 1;"); /* B N-major */
    expect_in_ptx(context, "b_layout=nk", "1, 1, 1, 0, 0;");
    expect_in_ptx(context, "", "wgmma.wait_group.sync.aligned 1;");
    expect_in_ptx(context, "", "%nctaid.x"); /* persistent by default */
    expect_not_in_ptx(context, "sched=grid", "%nctaid.x");
    expect_in_ptx(context, "store=tma", "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group");
    expect_in_ptx(context, "store=tma", "fence.proxy.async.shared::cta");
    expect_in_ptx(context, "store=tma", "cp.async.bulk.wait_group.read 0");
    expect_in_ptx(context, "store=tma out=f32 stages=2", "st.shared.v2.f32");
    expect_in_ptx(context, "", "cp.async.bulk.tensor.3d.global.shared::cta"); /* the default */
    expect_not_in_ptx(context, "store=direct", "cp.async.bulk.tensor.3d.global.shared::cta");
    expect_in_ptx(context, "act=relu", "max.f32");
    expect_in_ptx(context, "act=gelu", "ex2.approx");
    expect_not_in_ptx(context, "", "ex2.approx");
    expect_in_ptx(context, "bias=column", "ld.global.nc.f32");
    expect_in_ptx(context, "variant=wgmma_fp8 out=f16", "cvt.rn.f16x2.f32");
    /* sched=gemv: mma.sync of each type straight from global loads; no wgmma, no TMA. */
    expect_in_ptx(context, "variant=wgmma_fp8 sched=gemv",
                  "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32");
    expect_in_ptx(context, "variant=wgmma_fp8 sched=gemv fp8=e5m2",
                  "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32");
    expect_in_ptx(context, "variant=wgmma sched=gemv",
                  "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
    /* the block the host launches (PJ_MATMUL_GEMV_THREADS) is the kernel's: fewer threads
     * would leave warps' shares of K out of the sums */
    {
        char bound[32];
        snprintf(bound, sizeof bound, ".maxntid %d,", PJ_MATMUL_GEMV_THREADS);
        expect_in_ptx(context, "variant=wgmma sched=gemv", bound);
    }
    expect_in_ptx(context, "variant=wgmma sched=gemv dtype=f16 out=f16",
                  "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
    expect_in_ptx(context, "variant=wgmma_tf32 sched=gemv",
                  "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
    ptxjit_kernel *gemv = NULL;
    ck_assert_int_eq(ptxjit_get_kernel(&gemv, context, "matmul", "variant=wgmma_fp8 sched=gemv",
                                       NULL), PTXJIT_OK);
    ck_assert_ptr_null(strstr(ptxjit_kernel_ptx(gemv), "wgmma.mma_async"));
    ck_assert_ptr_null(strstr(ptxjit_kernel_ptx(gemv), "cp.async.bulk.tensor"));
    expect_in_ptx(context, "out=f16", "cvt.rn.f16x2.f32"); /* bf16 in, f16 out */
    /* The tensor maps prefetched. Split-K: the parts' count, their sums through L2 only (in
     * quads), none of it without splits. */
    expect_in_ptx(context, "", "prefetch.tensormap");
    expect_in_ptx(context, "splits=4", "atom.global.add.u32");
    expect_in_ptx(context, "splits=3 store=direct bm=64 consumers=1 mma=m64n128k16", "ld.global.cg.v4.f32");
    expect_not_in_ptx(context, "", "atom.global.add.u32");
    expect_in_ptx(context, "variant=wgmma_fp8 sched=persistent store=tma cluster=2 alpha=scaled "
                           "beta=scaled bias=column act=gelu mma=m64n128k16",
                  ".multicast::cluster");
    ptxjit_close(context);
}
END_TEST

/* The epilogue's values (parameter 9) are read only where a parameter asks for a term that
 * needs them (alpha, wgmma_fp8's scales, beta, bias): the others compile to nothing. */
START_TEST(matmul_epilogue_terms_follow_the_params)
{
    ptxjit_context *context = test_open_offline(NULL);
    expect_not_in_ptx(context, "", "matmul_kernel_param_9;");
    expect_not_in_ptx(context, "act=relu store=direct", "matmul_kernel_param_9;");
    expect_in_ptx(context, "alpha=scaled", "matmul_kernel_param_9;");
    expect_in_ptx(context, "variant=wgmma_fp8", "matmul_kernel_param_9;");
    expect_in_ptx(context, "beta=scaled", "matmul_kernel_param_9;");
    expect_in_ptx(context, "bias=column", "matmul_kernel_param_9;");
    ptxjit_close(context);
}
END_TEST

/* Tiles smaller than another variant's vectors or warps: the unused code must still compile,
 * without warnings (a zero-sized array or a division by zero once broke it). */
START_TEST(matmul_small_tiles_compile_cleanly)
{
    ptxjit_context *context = test_open_offline(NULL);
    static const char *const small[] = {"variant=tiled bm=16 bn=16 bk=4",
                                        "variant=block_tiled bm=16 bn=16 bk=4 tm=1 tn=1",
                                        "variant=naive bm=16 bn=16",
                                        "variant=tiled_register bm=16 bn=16 bk=4 tm=1"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(small); i++) {
        ptxjit_kernel *kernel;
        ck_assert_msg(ptxjit_get_kernel(&kernel, context, "matmul", small[i], NULL) == PTXJIT_OK,
                      "%s: %s", small[i], ptxjit_last_error());
        ck_assert_msg(!strstr(ptxjit_kernel_log(kernel), "warning"), "%s: %s", small[i],
                      ptxjit_kernel_log(kernel));
    }
    ptxjit_close(context);
}
END_TEST

/* The configuration of a request, read without compiling it (a matmul compile costs seconds
 * under memcheck). */
static matmul_config config_of(const char *params)
{
    ptxjit_context *context = test_open_offline(NULL);
    const pj_schema *schema;
    pj_request request;
    matmul_config config;
    ck_assert_int_eq(pj_context_schema(&schema, context, "matmul"), PTXJIT_OK);
    ck_assert_msg(pj_request_parse(&request, schema, params, pj_context_sm(context)) ==
                      PTXJIT_OK, "%s: %s", params, ptxjit_last_error());
    ck_assert_int_eq(pj_matmul_config_from(&config, &request), PTXJIT_OK);
    pj_request_free(&request);
    ptxjit_close(context);
    return config;
}

START_TEST(matmul_launch_geometry_follows_the_params)
{
    matmul_config c = config_of("variant=block_tiled_vectorized");
    ck_assert_int_eq(c.threads, 256);
    ck_assert_uint_eq(c.shared_bytes, 0);
    c = config_of("variant=tensor_core load=cp_async");
    ck_assert_int_eq(c.threads, 256);
    ck_assert_uint_eq(c.shared_bytes, 3 * (128 * 36 + 32 * 136) * 4);
    ck_assert_int_eq(c.tma, 0);
    c = config_of("variant=tensor_core load=tma");
    ck_assert_int_eq(c.threads, 256); /* 4 x 2 warps of 64 x 64 */
    ck_assert_int_eq(c.tma, 1);
    ck_assert_uint_eq(c.shared_bytes, 4 * (256 + 128) * 32 * 4 + 1024); /* unpadded, aligned */
    c = config_of("store=direct");
    ck_assert_int_eq(c.threads, 384);
    ck_assert_int_eq(c.tile_n, 256);
    ck_assert_uint_eq(c.shared_bytes, 3 * (128 + 256) * 128 + 1024);
    c = config_of("mma=m64n200k16 consumers=1 bm=64 stages=2");
    ck_assert_int_eq(c.threads, 256);
    ck_assert_int_eq(c.tile_n, 200);
    ck_assert_uint_eq(c.shared_bytes, 2 * (64 + 256) * 128 + 1024); /* B boxes of 64 columns */
    ck_assert_int_eq(c.cluster, 1);
    ck_assert_uint_eq(pj_matmul_blocks(&c, 130, 400), 3 * 2);
    /* store=tma: the tile of C after the stages (bm x N of out). */
    c = config_of("store=tma");
    ck_assert_int_eq(c.store_tma, 1);
    ck_assert_uint_eq(c.shared_bytes, 3 * (128 + 256) * 128 + 128 * 256 * 2 + 1024);
    c = config_of("store=tma out=f32 stages=2 sched=persistent");
    ck_assert_uint_eq(c.shared_bytes, 2 * (128 + 256) * 128 + 128 * 256 * 4 + 1024);
    ck_assert_int_eq(c.persistent, 1);
    /* tf32 and fp8: a stage is still 128 bytes of K per row: 32 and 128 elements. */
    c = config_of("variant=wgmma_tf32");
    ck_assert_int_eq(c.bk, 32);
    ck_assert_int_eq(c.dtype, PJ_DTYPE_f32);
    ck_assert_int_eq(c.b_nk, 1);
    ck_assert_uint_eq(c.shared_bytes, 4 * (128 + 256) * 128 + 1024); /* 4 stages by default */
    /* K-major B: its N rows exactly, one box alone or a share per block of a cluster, where the
     * shares are whole 8-row atoms; else 64-row boxes. */
    c = config_of("variant=wgmma_fp8 out=bf16 mma=m64n176k16 sched=pingpong store=tma stages=4");
    ck_assert_uint_eq(c.shared_bytes, 4 * (128 + 176) * 128 + 64 * 176 * 2 + 1024);
    c = config_of("variant=wgmma_fp8 out=bf16 mma=m64n176k16 sched=pingpong store=tma stages=4 cluster=2");
    ck_assert_uint_eq(c.shared_bytes, 4 * (128 + 176) * 128 + 64 * 176 * 2 + 1024);
    c = config_of("variant=wgmma_fp8 mma=m64n72k16 store=direct stages=4 cluster=2");
    ck_assert_uint_eq(c.shared_bytes, 4 * (128 + 128) * 128 + 1024);
    c = config_of("variant=wgmma_fp8 mma=m64n72k16 store=direct stages=4");
    ck_assert_uint_eq(c.shared_bytes, 4 * (128 + 72) * 128 + 1024);
    ck_assert_int_eq(pj_matmul_b_box_rows(1, 176, 2), 88);
    ck_assert_int_eq(pj_matmul_b_box_rows(1, 8, 2), 8);
    ck_assert_int_eq(pj_matmul_b_box_rows(0, 176, 1), 64);
    /* sched=gemv: 128 threads (four warps splitting K), no dynamic shared memory. */
    c = config_of("variant=wgmma_fp8 sched=gemv");
    ck_assert_int_eq(c.gemv, 1);
    ck_assert_int_eq(c.persistent, 0);
    ck_assert_int_eq(c.threads, 128);
    ck_assert_uint_eq(c.shared_bytes, 0);
    c = config_of("variant=wgmma_fp8 fp8=e5m2 alpha=scaled beta=scaled bias=column act=gelu");
    ck_assert_int_eq(c.bk, 128);
    ck_assert_int_eq(c.dtype, PJ_MATMUL_E5M2);
    ck_assert_int_eq(c.out, PJ_DTYPE_bf16);
    ck_assert(c.alpha && c.beta && c.bias && c.act == 2);
    ck_assert_int_eq(config_of("act=relu").act, 1);
    c = config_of("cluster=2");
    ck_assert_int_eq(c.cluster, 2);
    ck_assert_int_eq(c.persistent, 1);
    ck_assert_int_eq(config_of("sched=grid").persistent, 0);
    ck_assert_uint_eq(pj_matmul_blocks(&c, 4096, 4096), 32 * 16);
    ck_assert_uint_eq(pj_matmul_blocks(&c, 130, 300), 2 * 2); /* one cluster of row tiles, half empty */
}
END_TEST

START_TEST(matmul_shape_rules_name_the_fix)
{
    matmul_config c = config_of("variant=tensor_core load=cp_async");
    ck_assert_int_eq(pj_matmul_check_shape(&c, 0x1000, 0x2000, 0x3000, 127, 129, 64),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "multiples of 4"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "block_tiled_vectorized"));
    ck_assert_int_eq(pj_matmul_check_shape(&c, 0x1000, 0x2000, 0x3000, 127, 132, 68), PTXJIT_OK);
    /* The wgmma variants take any rows; those the TMA cannot take are staged (stage.h). */
    c = config_of("");
    ck_assert_int_eq(pj_matmul_check_shape(&c, 0x1000, 0x2000, 0x3000, 5, 132, 64), PTXJIT_OK);
    ck_assert_int_eq(pj_matmul_check_shape(&c, 0x1008, 0x2002, 0x3002, 5, 13, 15), PTXJIT_OK);
    ck_assert_int_eq(pj_matmul_check_shape(&c, 0x1001, 0x2000, 0x3000, 5, 16, 16),
                     PTXJIT_ERR_INVALID_ARGUMENT); /* not aligned to its elements */
    c = config_of("variant=naive");
    ck_assert_int_eq(pj_matmul_check_shape(&c, 0x1000, 0x2000, 0x3000, 1, 1, 1), PTXJIT_OK);
    ck_assert_int_eq(pj_matmul_check_shape(&c, 0x1000, 0x2000, 0x3000, 0, 1, 1),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(pj_matmul_check_shape(&c, 0x1000, 0x2000, 0x3000, 1, (size_t)1 << 31, 1),
                     PTXJIT_ERR_INVALID_ARGUMENT);
}
END_TEST

/* What the TMA cannot take as it is, and only that, is staged. */
/* What the op stages for the template's kernel of c on the product at a, b, c. */
static pj_matmul_stage_need needed(const matmul_config *c, uint64_t a, uint64_t b, uint64_t cc,
                                   size_t m, size_t n, size_t k,
                                   const ptxjit_matmul_layout *layout)
{
    pj_matmul_layout l;
    ck_assert_int_eq(pj_matmul_layout_resolve(&l, c, layout, m, n, k), PTXJIT_OK);
    return pj_matmul_stage_needed(c, pj_matmul_takes_of(c, PJ_BACKEND_NVRTC), a, b, cc, &l);
}

START_TEST(matmul_stage_covers_what_the_tma_cannot_take)
{
    struct {
        const char *params;
        uint64_t a, b, c;
        size_t m, n, k;
        int want_a, want_b, want_c;
        size_t c_pitch;
    } cases[] = {
        {"", 0x1000, 0x2000, 0x3000, 5, 136, 64, 0, 0, 0, 136},
        {"", 0x1000, 0x2000, 0x3000, 5, 136, 63, 1, 0, 0, 136},   /* k: A's rows */
        {"", 0x1000, 0x2000, 0x3000, 5, 130, 64, 0, 1, 1, 136},   /* n: B's and C's */
        {"", 0x1002, 0x2000, 0x3000, 5, 136, 64, 1, 0, 0, 136},   /* a inside a larger matrix */
        {"store=direct", 0x1000, 0x2000, 0x3004, 5, 130, 64, 0, 1, 0, 130}, /* pairs fit */
        {"store=direct", 0x1000, 0x2000, 0x3002, 5, 136, 64, 0, 0, 1, 136}, /* pair unaligned */
        {"store=direct", 0x1000, 0x2000, 0x3000, 5, 131, 64, 0, 1, 1, 136}, /* odd n */
        {"b_layout=nk", 0x1000, 0x2000, 0x3000, 5, 130, 64, 0, 0, 1, 136}, /* B's rows are k */
        {"variant=wgmma_fp8", 0x1000, 0x2000, 0x3000, 5, 136, 72, 1, 1, 0, 136},
        {"variant=wgmma_tf32", 0x1000, 0x2000, 0x3000, 5, 136, 66, 1, 1, 0, 136},
        {"variant=naive", 0x1001, 0x2001, 0x3001, 5, 3, 3, 0, 0, 0, 3}, /* no TMA */
        /* gemv's 16-byte loads take A and B as the TMA does; C, of single stores, any way */
        {"variant=wgmma_fp8 sched=gemv", 0x1000, 0x2000, 0x3002, 5, 131, 64, 0, 0, 0, 131},
        {"variant=wgmma_fp8 sched=gemv", 0x1000, 0x2000, 0x3000, 5, 136, 63, 1, 1, 0, 136},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        matmul_config c = config_of(cases[i].params);
        pj_matmul_stage_need need = needed(&c, cases[i].a, cases[i].b, cases[i].c, cases[i].m,
                                           cases[i].n, cases[i].k, NULL);
        ck_assert_msg(need.a == cases[i].want_a && need.b == cases[i].want_b &&
                          need.c == cases[i].want_c && need.c_pitch == cases[i].c_pitch,
                      "case %zu (%s): staged a %d b %d c %d pitch %zu", i, cases[i].params,
                      need.a, need.b, need.c, need.c_pitch);
    }
    char text[512];
    matmul_config c = config_of("");
    pj_matmul_layout l;
    ck_assert_int_eq(pj_matmul_layout_resolve(&l, &c, NULL, 5, 130, 63), PTXJIT_OK);
    pj_matmul_stage_describe(text, sizeof text, &c,
                             pj_matmul_stage_needed(&c, PJ_MATMUL_TAKES_BATCH, 0x1000, 0x2000,
                                                    0x3000, &l), &l);
    ck_assert_msg(strstr(text, "A's rows (k = 63 bf16: 126 bytes) are copied into rows of 128 "
                               "bytes") && strstr(text, "C (n = 130 bf16"),
                  "%s", text);
}
END_TEST

/* Leading dimensions and batch strides: the template's kernels take any of 16-byte units in
 * place; the llvm backend's write C dense; the SIMT kernels read and write dense rows. */
START_TEST(matmul_stages_what_a_layout_breaks)
{
    struct {
        const char *params;
        pj_backend backend;
        size_t lda, ldb, ldc, batch, sa, sb, sc;
        int want_a, want_b, want_c;
        size_t c_pitch;
    } cases[] = {
        {"", PJ_BACKEND_NVRTC, 72, 136, 200, 1, 0, 0, 0, 0, 0, 0, 200},    /* 16-byte pitches */
        {"", PJ_BACKEND_NVRTC, 65, 136, 136, 1, 0, 0, 0, 1, 0, 0, 136},    /* lda: 130 bytes */
        {"", PJ_BACKEND_NVRTC, 64, 140, 136, 1, 0, 0, 0, 0, 1, 0, 136},    /* ldb: 280 bytes */
        {"", PJ_BACKEND_NVRTC, 64, 136, 140, 1, 0, 0, 0, 0, 0, 1, 136},    /* ldc: 280 bytes */
        {"store=direct", PJ_BACKEND_NVRTC, 64, 136, 140, 1, 0, 0, 0, 0, 0, 0, 140}, /* pairs */
        {"", PJ_BACKEND_NVRTC, 64, 136, 136, 4, 320, 0, 680, 0, 0, 0, 136}, /* strided, shared B */
        {"", PJ_BACKEND_NVRTC, 64, 136, 136, 4, 324, 0, 680, 1, 0, 0, 136}, /* stride_a 648 bytes */
        {"", PJ_BACKEND_NVRTC, 64, 136, 136, 4, 320, 8708, 684, 0, 1, 1, 136},
        {"", PJ_BACKEND_NVRTC, 64, 136, 136, 1, 324, 8708, 1, 0, 0, 0, 136}, /* one product */
        {"", PJ_BACKEND_LLVM, 72, 144, 136, 4, 360, 9216, 680, 0, 0, 0, 136}, /* pitches */
        {"", PJ_BACKEND_LLVM, 64, 136, 144, 1, 0, 0, 0, 0, 0, 1, 136},  /* C must be dense */
        {"variant=naive", PJ_BACKEND_NVRTC, 64, 136, 136, 3, 320, 8704, 680, 0, 0, 0, 136},
        {"variant=naive", PJ_BACKEND_NVRTC, 65, 137, 140, 1, 0, 0, 0, 1, 1, 1, 136},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        matmul_config c = config_of(cases[i].params);
        ptxjit_matmul_layout layout = {cases[i].lda, cases[i].ldb, cases[i].ldc, cases[i].batch,
                                       cases[i].sa, cases[i].sb, cases[i].sc};
        pj_matmul_layout l;
        ck_assert_int_eq(pj_matmul_layout_resolve(&l, &c, &layout, 5, 136, 64), PTXJIT_OK);
        pj_matmul_stage_need need = pj_matmul_stage_needed(
            &c, pj_matmul_takes_of(&c, cases[i].backend), 0x1000, 0x20000, 0x30000, &l);
        ck_assert_msg(need.a == cases[i].want_a && need.b == cases[i].want_b &&
                          need.c == cases[i].want_c && need.c_pitch == cases[i].c_pitch,
                      "case %zu (%s): staged a %d b %d c %d pitch %zu", i, cases[i].params,
                      need.a, need.b, need.c, need.c_pitch);
    }
    /* C's rows in 16-byte units but not its N (201 bf16 in rows of 208): store=tma's C is
     * staged (the TMA wrote past such a row on the H200); 200 are not. */
    matmul_config c = config_of("");
    ptxjit_matmul_layout layout = {1000, 208, 208, 1, 0, 0, 0};
    pj_matmul_layout l;
    for (size_t n = 200; n <= 201; n++) {
        ck_assert_int_eq(pj_matmul_layout_resolve(&l, &c, &layout, 70, n, 1000), PTXJIT_OK);
        pj_matmul_stage_need need =
            pj_matmul_stage_needed(&c, PJ_MATMUL_TAKES_BATCH, 0x1000, 0x20000, 0x30000, &l);
        ck_assert(need.c == (n == 201) && need.c_pitch == 208);
    }
}
END_TEST

/* A layout that cannot hold the product is refused, naming the value. */
START_TEST(matmul_refuses_a_layout_that_cannot_hold_the_product)
{
    struct {
        ptxjit_matmul_layout layout;
        const char *params, *names;
    } cases[] = {
        {{63, 0, 0, 1, 0, 0, 0}, "", "lda = 63"},
        {{0, 100, 0, 1, 0, 0, 0}, "", "ldb = 100"},
        {{0, 63, 0, 1, 0, 0, 0}, "b_layout=nk", "ldb = 63"},
        {{0, 0, 135, 1, 0, 0, 0}, "", "ldc = 135"},
        {{0, 0, 0, 2, 0, 0, 0}, "", "stride_c = 0"},
        {{0, 0, 0, 2, 0, 0, 543}, "", "stride_c = 543"}, /* (5 - 1) * 136 + 136 = 680 */
        {{0, 0, 0x80000000u, 1, 0, 0, 0}, "", "ldc = 2147483648"},
        {{0, 0, 0, 3, (size_t)1 << 61, 0, 680}, "", "past 2^62"},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        matmul_config c = config_of(cases[i].params);
        pj_matmul_layout l;
        ck_assert_int_eq(pj_matmul_layout_resolve(&l, &c, &cases[i].layout, 5, 136, 64),
                         PTXJIT_ERR_INVALID_ARGUMENT);
        ck_assert_msg(strstr(ptxjit_last_error(), cases[i].names), "case %zu: %s", i,
                      ptxjit_last_error());
    }
    /* stride_c exactly (m - 1) * ldc + n, and overlapping reads, are fine */
    matmul_config c = config_of("");
    ptxjit_matmul_layout fits = {0, 0, 0, 3, 0, 0, 680};
    pj_matmul_layout l;
    ck_assert_int_eq(pj_matmul_layout_resolve(&l, &c, &fits, 5, 136, 64), PTXJIT_OK);
    ck_assert(l.lda == 64 && l.ldb == 136 && l.ldc == 136 && l.batch == 3 && l.stride_c == 680);
}
END_TEST

/* The plan of a layout's why for params on batch x 130 x 200 x 72 (the layout's own batch).
 * *why is the caller's; the status is returned. */
static ptxjit_status layout_why(char **why, ptxjit_context *context, const char *params,
                                const ptxjit_matmul_layout *layout)
{
    pj_matmul_layout_plan plan;
    ptxjit_status status =
        pj_matmul_layout_plan_make(&plan, context, params, 130, 200, 72, layout->batch);
    ck_assert_msg(status == PTXJIT_OK, "%s: %s", params, ptxjit_last_error());
    status = pj_matmul_layout_plan_why(why, &plan, layout, 130, 200, 72);
    pj_matmul_layout_plan_free(&plan);
    return status;
}

/* The plan of a batch (layout_plan.h), with no GPU: how the products run on each kind of
 * kernel, what the layout makes the op stage, and a layout that cannot hold the product
 * refused as the op refuses it. */
START_TEST(matmul_layout_plan_says_how_a_batch_runs)
{
    ptxjit_context *context = test_open_offline(NULL);
    const struct {
        const char *params;
        ptxjit_matmul_layout layout;
        const char *says, *not_says;
    } cases[] = {
        /* 16-byte units, one B for all: in place, one launch */
        {"", {80, 208, 216, 4, 10400, 0, 28080}, "The 4 products run in one launch", "copied"},
        {"", {80, 208, 216, 4, 10400, 0, 28080}, "(one B for all)", NULL},
        {"", {80, 0, 0, 4, 0, 0, 26000}, "(one A and one B for all)", NULL},
        /* lda of 150 bytes: A staged, its rows and stride named */
        {"", {75, 0, 0, 4, 9750, 14400, 26000},
         "A's rows (k = 72 bf16: 144 bytes, 75 elements apart, products 9750 elements apart) "
         "are copied into rows of 144 bytes", "B's rows"},
        /* one product inside larger matrices: no launch sentence */
        {"", {0, 0, 210, 1, 0, 0, 0}, "C (n = 200 bf16: rows of 400 bytes, 210 elements apart)",
         "products run"},
        {"variant=naive", {80, 0, 0, 3, 10400, 14400, 26000},
         "This variant runs once per product (3 launches), on dense rows. A's rows", NULL},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        char *why = NULL;
        ck_assert_int_eq(layout_why(&why, context, cases[i].params, &cases[i].layout),
                         PTXJIT_OK);
        ck_assert_msg(why && strstr(why, cases[i].says), "case %zu: '%s' lacks '%s'", i,
                      why ? why : "(none)", cases[i].says);
        ck_assert_msg(!cases[i].not_says || !strstr(why, cases[i].not_says),
                      "case %zu: '%s' has '%s'", i, why, cases[i].not_says);
        free(why);
    }
    /* Dense and one product, nothing fitted: as asked. */
    ptxjit_matmul_layout dense;
    ptxjit_matmul_layout_init(&dense);
    pj_matmul_layout_plan plan;
    char *why = (char *)"poison";
    ck_assert_int_eq(pj_matmul_layout_plan_make(&plan, context, "", 128, 32000, 4096, 1),
                     PTXJIT_OK);
    ck_assert_int_eq(pj_matmul_layout_plan_why(&why, &plan, &dense, 128, 32000, 4096),
                     PTXJIT_OK);
    ck_assert_ptr_null(why);
    pj_matmul_layout_plan_free(&plan);
    /* The tile is fitted to every product's rows, as the op fits it. */
    ptxjit_matmul_layout batch = dense;
    batch.batch = 32;
    const uint64_t rows[] = {pj_matmul_plan_rows(1024, &batch), 1024, 128};
    pj_plan alone;
    ck_assert_int_eq(pj_plan_make(&alone, context, &pj_family_matmul, "", rows), PTXJIT_OK);
    ck_assert_int_eq(pj_matmul_layout_plan_make(&plan, context, "", 1024, 1024, 128, 32),
                     PTXJIT_OK);
    ck_assert_str_eq(plan.plan.params, alone.params);
    pj_plan_free(&alone);
    pj_matmul_layout_plan_free(&plan);
    /* A layout that cannot hold the product: the op's refusal. */
    const ptxjit_matmul_layout overlapping = {0, 0, 0, 3, 0, 0, 5}, short_rows = {3, 0, 0, 1, 0,
                                                                                  0, 0};
    ck_assert_int_eq(layout_why(&why, context, "", &overlapping), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), "stride_c = 5"), "%s", ptxjit_last_error());
    ck_assert_ptr_null(why);
    ck_assert_int_eq(layout_why(&why, context, "", &short_rows), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), "lda = 3"), "%s", ptxjit_last_error());
    /* A batch of more rows than 31 bits holds plans (the fit sees full waves), and one of more
     * tiles than the grid counts is refused naming the batch, not an M it was never given. */
    ck_assert_uint_eq(pj_matmul_plan_rows(100, &(ptxjit_matmul_layout){.batch = 30000000}),
                      PJ_MATMUL_PLAN_ROWS_MAX);
    ck_assert_int_eq(pj_matmul_layout_plan_make(&plan, context, "", 100, 8, 16, 30000000),
                     PTXJIT_OK);
    pj_matmul_layout_plan_free(&plan);
    ck_assert_int_eq(pj_matmul_layout_plan_make(&plan, context, "", 100, 8, 16, 2000000000),
                     PTXJIT_OK);
    ptxjit_matmul_layout huge = dense;
    huge.batch = 2000000000;
    huge.stride_a = 100 * 16, huge.stride_b = 16 * 8, huge.stride_c = 100 * 8;
    ck_assert_int_eq(pj_matmul_layout_plan_why(&why, &plan, &huge, 100, 8, 16),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), "2000000000 products of 2 tiles each"), "%s",
                  ptxjit_last_error());
    pj_matmul_layout_plan_free(&plan);
    ptxjit_close(context);
}
END_TEST

/* The llvm backend's wgmma kernel runs a batch once per product and writes C dense: a C with
 * longer rows is staged, and the plan says both. */
START_TEST(matmul_layout_plan_of_the_llvm_backend)
{
    if (!test_llvm_or_skip("matmul_layout_plan_of_the_llvm_backend"))
        return;
    ptxjit_context *context = test_open_offline(NULL);
    const ptxjit_matmul_layout layout = {0, 0, 208, 3, 9360, 14400, 27040};
    char *why = NULL;
    ck_assert_int_eq(layout_why(&why, context, "backend=llvm", &layout), PTXJIT_OK);
    ck_assert_msg(why && strstr(why, "The llvm backend's kernel runs once per product (3 "
                                     "launches)") &&
                      strstr(why, "C (n = 200 bf16: rows of 400 bytes, 208 elements apart)") &&
                      strstr(why, "the llvm backend's kernel writes C in dense rows, and the "
                                  "copy on the stream puts them at ldc") &&
                      !strstr(why, "16n bytes"), /* its rows are whole 16-byte units */
                  "%s", why ? why : "(none)");
    free(why);
    ptxjit_close(context);
}
END_TEST

START_TEST(matmul_elements_round_to_nearest_even)
{
    uint16_t h[4];
    pj_matmul_set_element(h, PJ_DTYPE_bf16, 0, 1.0f);
    ck_assert_uint_eq(h[0], 0x3f80);
    pj_matmul_set_element(h, PJ_DTYPE_bf16, 1, -0.333333f);
    ck_assert(fabs(pj_matmul_element(h, PJ_DTYPE_bf16, 1) + 0.333333) < 0.002);
    pj_matmul_set_element(h, PJ_DTYPE_f16, 2, 1.0f);
    ck_assert_uint_eq(h[2], 0x3c00);
    pj_matmul_set_element(h, PJ_DTYPE_f16, 3, -0.1f);
    ck_assert_uint_eq(h[3], 0xae66); /* -0.1 rounded to the nearest half */
    ck_assert(fabs(pj_matmul_element(h, PJ_DTYPE_f16, 3) + 0.0999755859375) < 1e-12);
    pj_matmul_set_element(h, PJ_DTYPE_f16, 0, 1e-6f); /* subnormal: 17 units of 2^-24 */
    ck_assert_uint_eq(h[0], 17);
    /* 1 + 2^-8 lies halfway between two bf16 values: ties go to the even one, 1.0. */
    pj_matmul_set_element(h, PJ_DTYPE_bf16, 0, 1.00390625f);
    ck_assert_uint_eq(h[0], 0x3f80);
}
END_TEST

/* fp8: e4m3 (bias 7, 3 mantissa bits, no infinities, largest 448) and e5m2 (bias 15, 2 bits,
 * largest finite 57344), rounded to nearest even and saturated. */
START_TEST(matmul_fp8_elements_round_and_saturate)
{
    uint8_t b[8];
    pj_matmul_set_element(b, PJ_MATMUL_E4M3, 0, 1.0f);
    ck_assert_uint_eq(b[0], 0x38);
    pj_matmul_set_element(b, PJ_MATMUL_E4M3, 1, -0.1f);
    ck_assert_uint_eq(b[1], 0x9d); /* -1.625 * 2^-4 */
    ck_assert(pj_matmul_element(b, PJ_MATMUL_E4M3, 1) == -0.1015625);
    pj_matmul_set_element(b, PJ_MATMUL_E4M3, 2, 1000.0f);
    ck_assert_uint_eq(b[2], 0x7e);
    ck_assert(pj_matmul_element(b, PJ_MATMUL_E4M3, 2) == 448.0);
    pj_matmul_set_element(b, PJ_MATMUL_E4M3, 3, 1.0625f); /* halfway: to the even 1.0 */
    ck_assert_uint_eq(b[3], 0x38);
    pj_matmul_set_element(b, PJ_MATMUL_E4M3, 4, 0x1p-9f); /* the smallest subnormal */
    ck_assert_uint_eq(b[4], 0x01);
    pj_matmul_set_element(b, PJ_MATMUL_E4M3, 5, 0.96875f); /* 0.9375 | 1.0: ties to 1.0 */
    ck_assert_uint_eq(b[5], 0x38);
    b[6] = 0x7f;
    ck_assert(isnan(pj_matmul_element(b, PJ_MATMUL_E4M3, 6)));
    pj_matmul_set_element(b, PJ_MATMUL_E5M2, 0, 1.0f);
    ck_assert_uint_eq(b[0], 0x3c);
    pj_matmul_set_element(b, PJ_MATMUL_E5M2, 1, -1e6f);
    ck_assert_uint_eq(b[1], 0xfb);
    ck_assert(pj_matmul_element(b, PJ_MATMUL_E5M2, 1) == -57344.0);
    pj_matmul_set_element(b, PJ_MATMUL_E5M2, 2, 0.3f); /* 1.25 * 2^-2 = 0.3125 */
    ck_assert(pj_matmul_element(b, PJ_MATMUL_E5M2, 2) == 0.3125);
    b[3] = 0x7c;
    ck_assert(isinf(pj_matmul_element(b, PJ_MATMUL_E5M2, 3)));
    ck_assert_int_eq(pj_matmul_type_bytes(PJ_MATMUL_E4M3), 1);
    ck_assert_str_eq(pj_matmul_type_name(PJ_MATMUL_E5M2), "e5m2");
    /* Every finite e4m3 code decodes and encodes back to itself. */
    for (int code = 0; code < 256; code++) {
        uint8_t in = (uint8_t)code, out;
        double v = pj_matmul_element(&in, PJ_MATMUL_E4M3, 0);
        if (isnan(v))
            continue;
        pj_matmul_set_element(&out, PJ_MATMUL_E4M3, 0, (float)v);
        ck_assert_msg(out == in || (v == 0 && (out & 0x7f) == 0), "code 0x%02x -> %g -> 0x%02x",
                      code, v, out);
    }
}
END_TEST

/* The nearest finite code of `type` to v by search over all of them: ties to the even code,
 * past the largest the largest (the rule the encoder must keep, written the slow way). */
static uint8_t fp8_nearest(double v, pj_dtype type)
{
    int best = -1, largest = 0;
    double best_gap = INFINITY;
    for (int code = 0; code < 128; code++) {
        uint8_t c = (uint8_t)code;
        const double value = pj_matmul_element(&c, type, 0);
        if (!isfinite(value))
            continue;
        largest = code;
        const double gap = fabs(fabs(v) - value);
        if (gap < best_gap || (gap == best_gap && code % 2 == 0))
            best = code, best_gap = gap;
    }
    uint8_t top = (uint8_t)largest;
    if (fabs(v) >= pj_matmul_element(&top, type, 0))
        best = largest;
    return (uint8_t)((signbit(v) ? 0x80 : 0) | best);
}

/* The bit-level encoder against that search: every midpoint between neighbouring codes and a
 * float either side of it, then floats spread over the whole range (subnormals included). */
START_TEST(matmul_fp8_encoder_matches_the_nearest_code)
{
    const pj_dtype types[] = {PJ_MATMUL_E4M3, PJ_MATMUL_E5M2};
    for (int t = 0; t < 2; t++) {
        for (int code = 0; code < 127; code++) {
            uint8_t low = (uint8_t)code, high = (uint8_t)(code + 1);
            const double a = pj_matmul_element(&low, types[t], 0),
                         b = pj_matmul_element(&high, types[t], 0);
            if (!isfinite(a) || !isfinite(b))
                continue;
            const float mid = (float)((a + b) / 2);
            const float near[] = {mid, nextafterf(mid, 0), nextafterf(mid, INFINITY), -mid};
            for (int i = 0; i < 4; i++) {
                uint8_t out;
                pj_matmul_set_element(&out, types[t], 0, near[i]);
                ck_assert_msg(out == fp8_nearest(near[i], types[t]), "%s %a -> 0x%02x, not 0x%02x",
                              pj_matmul_type_name(types[t]), (double)near[i], out,
                              fp8_nearest(near[i], types[t]));
            }
        }
        for (uint32_t bits = 0; bits < 0x7f800000u; bits += 40009) {
            float v;
            memcpy(&v, &bits, sizeof v);
            uint8_t out;
            pj_matmul_set_element(&out, types[t], 0, v);
            ck_assert_msg(out == fp8_nearest(v, types[t]), "%s %a -> 0x%02x, not 0x%02x",
                          pj_matmul_type_name(types[t]), (double)v, out, fp8_nearest(v, types[t]));
        }
        uint8_t out;
        pj_matmul_set_element(&out, types[t], 0, -INFINITY);
        ck_assert_uint_eq(out, types[t] == PJ_MATMUL_E4M3 ? 0xfe : 0xfb);
        pj_matmul_set_element(&out, types[t], 0, NAN);
        ck_assert(isnan(pj_matmul_element(&out, types[t], 0)));
    }
}
END_TEST

/* The epilogue of the reference: act(alpha * a_scale * b_scale * AB + beta * C + bias). */
START_TEST(matmul_reference_epilogue_applies_each_term)
{
    matmul_config c = config_of("alpha=scaled beta=scaled bias=column act=relu");
    ptxjit_matmul_epilogue e;
    ptxjit_matmul_epilogue_init(&e);
    ck_assert(e.alpha == 1.0f && e.beta == 0.0f && e.bias == 0 && e.a_scale == 1.0f &&
              e.b_scale == 1.0f);
    e.alpha = 2.0f;
    e.beta = 0.5f;
    double row[3] = {1, -3, 0.25};
    const double old[3] = {4, 2, -8};
    const float bias[3] = {0.5f, 1, 2};
    pj_matmul_reference_epilogue(row, 3, &c, &e, old, bias);
    ck_assert(row[0] == 2 + 2 + 0.5 && row[1] == 0 && row[2] == 0); /* -6+1+1, 0.5-4+2: relu */
    c = config_of("act=gelu");
    double g[2] = {1, -1};
    pj_matmul_reference_epilogue(g, 2, &c, NULL, NULL, NULL);
    ck_assert(fabs(g[0] - 0.8411919906082768) < 1e-12 && fabs(g[1] + 0.15880800939172324) < 1e-12);
    c = config_of("variant=wgmma_fp8");
    e.a_scale = 0.5f;
    e.b_scale = 3.0f;
    double f[1] = {2};
    pj_matmul_reference_epilogue(f, 1, &c, &e, NULL, NULL);
    ck_assert(f[0] == 3); /* scales only; alpha=none */
}
END_TEST

START_TEST(matmul_reference_row_is_the_product)
{
    const float a[6] = {1, 2, 3, 4, 5, 6};    /* 2 x 3 */
    const float b[6] = {7, 8, 9, 10, 11, 12}; /* 3 x 2 */
    double row[2];
    pj_matmul_reference_row(row, a, b, PJ_DTYPE_f32, 2, 3, 1);
    ck_assert(row[0] == 4 * 7 + 5 * 9 + 6 * 11 && row[1] == 4 * 8 + 5 * 10 + 6 * 12);
    const float bt[6] = {7, 9, 11, 8, 10, 12}; /* the same B, given as its transpose */
    pj_matmul_reference_row_layout(row, a, bt, PJ_DTYPE_f32, 2, 3, 1, 1);
    ck_assert(row[0] == 4 * 7 + 5 * 9 + 6 * 11 && row[1] == 4 * 8 + 5 * 10 + 6 * 12);
}
END_TEST

/* The words that fix the tile turn the fit off; others (types, epilogue, backend) do not. */
START_TEST(matmul_fit_leaves_a_named_tile_alone)
{
    static const char *const named[] = {"mma=m64n64k16", "variant=wgmma stages=4", "bm=64",
                                        "consumers=1 bm=64", "sched=grid", "group=4",
                                        "cluster=2", "store=direct", "  dtype=f16\tgroup=16 ",
                                        "splits=1"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(named); i++)
        ck_assert_msg(pj_matmul_fit_names_tile(named[i]), "%s", named[i]);
    static const char *const open[] = {NULL, "", "variant=wgmma", "dtype=f16 out=f32",
                                       "variant=wgmma_fp8 fp8=e5m2", "backend=llvm",
                                       "alpha=scaled act=gelu b_layout=nk", "mmax=1 stage=2",
                                       "groups=4"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(open); i++)
        ck_assert_msg(!pj_matmul_fit_names_tile(open[i]), "%s", open[i] ? open[i] : "NULL");
}
END_TEST

/* The choices on a 132-SM H100 for the shapes measured there (docs/PERFORMANCE.md, the
 * default 128 x 256 tile): a smaller tile where C's default tiles leave SMs idle (fewer tiles
 * than SMs, or most of a last wave empty) and the smaller one is predicted at most 0.85 of the
 * time; the default where its waves are (nearly) full. */
START_TEST(matmul_fit_chooses_by_shape)
{
    static const struct {
        uint64_t m, n;
        int bm, bn; /* 0: the default */
    } cases[] = {
        {64, 8192, 64, 64},    {96, 8192, 64, 128},   {128, 8192, 64, 128}, {192, 8192, 64, 192},
        {256, 8192, 128, 128}, {320, 8192, 128, 192}, {384, 8192, 128, 192}, {448, 8192, 0, 0},
        {512, 8192, 0, 0},     {640, 8192, 128, 192}, {768, 8192, 128, 192}, {1024, 8192, 0, 0},
        {8192, 8192, 0, 0},    {64, 4096, 64, 64},    {128, 4096, 64, 64},  {256, 4096, 64, 128},
        {384, 4096, 64, 192},  {100, 1000, 64, 64},   {1, 8, 64, 64},       {128, 28672, 0, 0},
        {192, 28672, 0, 0},    {256, 14336, 0, 0},    {384, 14336, 128, 192}, {4096, 4096, 0, 0},
        {16384, 8192, 0, 0},   {4096, 14336, 0, 0},   {2048, 4096, 0, 0},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        const pj_matmul_fit_tile *t = pj_matmul_fit_choose(cases[i].m, cases[i].n, 128, 256, 132);
        ck_assert_msg(cases[i].bm ? t && t->bm == cases[i].bm && t->bn == cases[i].bn : !t,
                      "%llu x %llu: %s", (unsigned long long)cases[i].m,
                      (unsigned long long)cases[i].n, t ? t->words : "the default");
    }
    /* Whole waves on a smaller GPU; no GPU, no shape; a tile already as small. */
    ck_assert_ptr_null(pj_matmul_fit_choose(128, 8192, 128, 256, 16));
    ck_assert_ptr_null(pj_matmul_fit_choose(128, 8192, 128, 256, 0));
    ck_assert_ptr_null(pj_matmul_fit_choose(0, 8192, 128, 256, 132));
    ck_assert_ptr_null(pj_matmul_fit_choose(64, 64, 64, 64, 132));
}
END_TEST

/* fp8 takes 128 x 128 with persistent blocks where the fit takes 128 x 128, and in place of the
 * default 128 x 256 for 2 to 12 row tiles of 128 whose last holds more than 64 rows; 64 x 64
 * (unsplit or in parts) with 13 stages; other choices, and other tiles asked for, stand. */
/* store=tma's boxes of C: the widest of 128, 64 and 32 bytes that a tile's row divides into
 * (the template's C_SPAN and the llvm generator's use the same rule). */
START_TEST(matmul_c_boxes_are_the_widest_span_the_row_divides_into)
{
    static const struct {
        int tile_n, out_bytes, span;
    } cases[] = {{256, 2, 128}, {64, 2, 128}, {192, 2, 128}, {96, 2, 64},  {224, 2, 64},
                 {112, 2, 32},  {16, 2, 32},  {32, 4, 128},  {48, 4, 64},  {40, 4, 32},
                 {8, 4, 32},    {200, 4, 32}, {256, 4, 128}, {80, 2, 32},  {160, 4, 128}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++)
        ck_assert_msg(pj_matmul_c_span(cases[i].tile_n, cases[i].out_bytes) == cases[i].span,
                      "N = %d of %d bytes", cases[i].tile_n, cases[i].out_bytes);
}
END_TEST

START_TEST(matmul_fit_fp8_tile)
{
    static const struct {
        uint64_t m, n;
        int bm, bn; /* 0: the default; else 128 x 128 (or 112) persistent, no sched= */
    } cases[] = {
        {256, 14336, 128, 112},  {129, 14336, 0, 0},  {1536, 14336, 128, 128},
        {1537, 14336, 0, 0},     {4096, 14336, 0, 0}, {128, 32000, 0, 0},
        {200, 14336, 128, 128},  {192, 14336, 0, 0},  {160, 14336, 0, 0},
        {224, 14336, 128, 128},  /* the last row tile of 96 rows: 128 x 128; of 97: 112 */
        {225, 14336, 128, 112},
        {512, 14336, 128, 112},  /* 512 tiles of 128 x 112 fill 4 waves, 448 of 128 x 128 too */
        {1024, 14336, 128, 128}, /* 1024 would make 8 waves where 896 make 7 */
        {1500, 14336, 128, 128}, /* 12 row tiles, the last of 92 rows: taken */
        {1430, 14336, 0, 0},     /* ... the last of 22: not */
        {256, 8192, 128, 128},   /* the fit's 128 x 128, persistent for fp8 */
        {128, 14336, 128, 128},  {320, 8192, 128, 192}, {256, 4096, 64, 128},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        const pj_matmul_fit_tile *t =
            pj_matmul_fit_fp8(pj_matmul_fit_choose(cases[i].m, cases[i].n, 128, 256, 132),
                              cases[i].m, cases[i].n, 128, 256, 2, 132);
        ck_assert_msg(cases[i].bm ? t && t->bm == cases[i].bm && t->bn == cases[i].bn &&
                                        !strstr(t->words, "sched=")
                                  : !t,
                      "%llu x %llu: %s", (unsigned long long)cases[i].m,
                      (unsigned long long)cases[i].n, t ? t->words : "the default");
        if (t)
            ck_assert_ptr_eq(pj_matmul_fit_tile_of(t->words), t);
    }
    /* 64 x 64 unsplit (128 x 4096): 13 stages. */
    const pj_matmul_fit_tile *t = pj_matmul_fit_fp8(pj_matmul_fit_choose(128, 4096, 128, 256, 132),
                                                    128, 4096, 128, 256, 2, 132);
    ck_assert(t && t->bm == 64 && t->bn == 64 && t->splits == 1 && strstr(t->words, "stages=13"));
    ck_assert_ptr_eq(pj_matmul_fit_tile_of(t->words), t);
    /* fp8's split-K tiles pass through unchanged. */
    t = pj_matmul_fit_fp8(pj_matmul_fit_split_fp8(128, 1024, 32, 132), 128, 1024, 128, 256, 2,
                          132);
    ck_assert(t && t->bm == 64 && t->bn == 32 && t->splits == 2 &&
              strstr(t->words, "stages=16 splits=2"));
    ck_assert_ptr_eq(pj_matmul_fit_tile_of(t->words), t);
    /* 128 x 112 only for a 16-bit C (an f32 tile of C leaves no room for its six stages), past
     * one wave of 128 x 128 tiles (3 x 41 = 123 on 123 SMs: one wave, kept), and with SMs. */
    t = pj_matmul_fit_fp8(NULL, 256, 14336, 128, 256, 4, 132);
    ck_assert(t && t->bn == 128);
    t = pj_matmul_fit_fp8(NULL, 384, 5248, 128, 256, 2, 123);
    ck_assert(t && t->bn == 128);
    t = pj_matmul_fit_fp8(NULL, 384, 5248, 128, 256, 2, 122);
    ck_assert(t && t->bn == 112); /* 123 tiles on 122 SMs: 2 waves, 141 of 128 x 112 too */
    t = pj_matmul_fit_fp8(NULL, 256, 14336, 128, 256, 2, 0);
    ck_assert(t && t->bn == 128);
    /* A request that asks for another tile (bm=64: NULL from the fit) keeps it. */
    ck_assert_ptr_null(pj_matmul_fit_fp8(NULL, 256, 14336, 64, 256, 2, 132));
    ck_assert_ptr_null(pj_matmul_fit_fp8(NULL, 256, 14336, 128, 128, 2, 132));
}
END_TEST

/* Split-K for a decoding's product, or one of up to 128 rows whose 64 x 64 tiles leave most
 * SMs idle: the 64-row tile (64 x 128 or 64 x 64) and 2 to 4 parts whose one wave fills 132
 * SMs best (within 0.05: the wider tile, then fewer parts). */
START_TEST(matmul_fit_splits_k_where_tiles_are_few)
{
    static const struct {
        uint64_t m, n, k_tiles;
        int sms, bn, parts; /* parts 0: no split */
    } cases[] = {
        {1, 4096, 64, 132, 128, 4},    /* 32 x 4 = 128: as full as 64 x 2, the wider tile */
        {16, 6144, 64, 132, 128, 2},   /* 48 x 2 = 96; 64 x 64 in 2 parts is past one wave */
        {1, 14336, 64, 132, 0, 0},     /* 112 tiles of 64 x 128: no split in one wave */
        {16, 1024, 64, 132, 64, 4},    /* 16 x 4 = 64 against 8 x 4 = 32 */
        {1, 4096, 8, 132, 64, 2},      /* parts of at least 4 k tiles: 2 at most, 64 x 2 = 128 */
        {1, 4096, 7, 132, 0, 0},       /* ... and none below 8 */
        {129, 1024, 64, 132, 0, 0},    /* more rows than split-K takes */
        {33, 4096, 64, 132, 128, 4},   /* past a decoding's rows: 64 tiles of 64 x 64, half idle */
        {128, 1024, 64, 132, 64, 4},   /* 32 tiles of 64 x 64 fill a quarter: 4 parts, 128 */
        {128, 4096, 64, 132, 0, 0},    /* 128 tiles of 64 x 64 fill a wave */
        {64, 4224, 64, 132, 0, 0},     /* 66 tiles: half the SMs, none idle past half */
        {64, 4160, 64, 132, 128, 4},   /* 65 tiles: 64 x 128 (33) in 4 parts, 132 */
        {1, 4096, 64, 0, 0, 0},        /* no SMs known */
        {1, 201, 64, 132, 64, 3},      /* 4 tiles: 3 parts (12) tie with 4 (16), fewer parts */
        {8, 4096, 64, 114, 128, 3},    /* 114 SMs: 32 x 3 = 96; 4 parts or 64 x 64 overflow */
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        const pj_matmul_fit_tile *t =
            pj_matmul_fit_split(cases[i].m, cases[i].n, cases[i].k_tiles, cases[i].sms);
        ck_assert_msg(cases[i].parts ? t && t->bn == cases[i].bn && t->splits == cases[i].parts
                                     : t == NULL,
                      "%llux%llu, %llu k tiles on %d SMs: %s", (unsigned long long)cases[i].m,
                      (unsigned long long)cases[i].n, (unsigned long long)cases[i].k_tiles,
                      cases[i].sms, t ? t->words : "no split");
    }
}
END_TEST

/* fp8's split-K: 64 x 32 (16 stages), 64 x 64 (13) and 64 x 128 (9) tiles, the fullest fill
 * within 0.05 and then the fewest parts before the widest tile. */
START_TEST(matmul_fit_fp8_splits_into_fewest_parts)
{
    static const struct {
        uint64_t m, n, k_tiles;
        int bn, parts; /* parts 0: no split */
        const char *stages;
    } cases[] = {
        {128, 1024, 32, 32, 2, "stages=16"}, /* 64 x 32 in 2 (128) before 64 x 64 in 4 (128) */
        {128, 768, 32, 32, 2, "stages=16"},  /* 96 either way */
        {80, 2048, 32, 64, 2, "stages=13"},  /* 64 x 64 in 2 before 64 x 128 in 4 */
        {16, 6144, 32, 128, 2, "stages=9"},  /* only 64 x 128 fits one wave */
        {128, 640, 32, 32, 3, "stages=16"},  /* 40 x 3 = 120 */
        {1, 201, 64, 32, 4, "stages=16"},    /* 28 units in 4 parts; 21 in 3 is past the tie */
        {1, 4480, 32, 128, 3, "stages=9"},   /* 105; 64 x 64 in 2 would be 140 */
        {1, 4096, 8, 64, 2, "stages=13"},    /* parts of 4 k tiles at least: 2 */
        {128, 4096, 32, 0, 0, NULL},         /* 64 x 64 tiles fill a wave */
        {1, 14336, 32, 0, 0, NULL},          /* nothing fits one wave */
        {129, 1024, 32, 0, 0, NULL},         /* more rows than split-K takes */
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        const pj_matmul_fit_tile *t =
            pj_matmul_fit_split_fp8(cases[i].m, cases[i].n, cases[i].k_tiles, 132);
        ck_assert_msg(cases[i].parts ? t && t->bm == 64 && t->bn == cases[i].bn &&
                                           t->splits == cases[i].parts &&
                                           strstr(t->words, cases[i].stages)
                                     : t == NULL,
                      "%llux%llu, %llu k tiles: %s", (unsigned long long)cases[i].m,
                      (unsigned long long)cases[i].n, (unsigned long long)cases[i].k_tiles,
                      t ? t->words : "no split");
        if (t)
            ck_assert(pj_matmul_fit_tile_of(t->words) &&
                      pj_matmul_fit_tile_of(t->words)->splits == t->splits);
    }
}
END_TEST

/* Ping-pong consumers where their 128-row tiles give each block two or more: 128 x 128, or for
 * fp8 128 x 176 where its waves are predicted shorter (N = 14336: 82 columns of tiles, 99%
 * full) or 128 x 128 would leave a sliver of C in its last column (N = 4097, 4100); none for
 * fewer tiles, no shape or no GPU. */
START_TEST(matmul_fit_takes_pingpong_where_blocks_have_two_tiles)
{
    static const struct {
        uint64_t m, n;
        int fp8, bn; /* bn 0: none */
    } cases[] = {
        {4096, 14336, 1, 176}, {1024, 14336, 1, 176}, {2048, 14336, 1, 176}, {8192, 8192, 1, 176},
        {2048, 4096, 1, 128},  {4096, 4096, 1, 128},  {1792, 4096, 1, 128},  {3072, 8192, 1, 128},
        {4096, 14336, 0, 128}, {8192, 8192, 0, 128},  {1024, 14336, 0, 128}, {256, 14336, 1, 0},
        {256, 14336, 0, 0},    {500, 4096, 1, 0},     {128, 32000, 1, 0},    {384, 11008, 1, 0},
        {4093, 4097, 1, 176},  {4096, 4100, 1, 176},  {4093, 4097, 0, 128},  {3001, 5003, 1, 128},
        {4093, 8191, 1, 128},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        const pj_matmul_fit_tile *t =
            pj_matmul_fit_pingpong(cases[i].m, cases[i].n, cases[i].fp8, 132);
        ck_assert_msg(cases[i].bn ? t && t->bm == 128 && t->bn == cases[i].bn &&
                                        strstr(t->words, "sched=pingpong")
                                  : t == NULL,
                      "%s %llu x %llu: %s", cases[i].fp8 ? "fp8" : "bf16",
                      (unsigned long long)cases[i].m, (unsigned long long)cases[i].n,
                      t ? t->words : "none");
        if (t)
            ck_assert_ptr_eq(pj_matmul_fit_tile_of(t->words), t);
    }
    ck_assert_ptr_null(pj_matmul_fit_pingpong(0, 4096, 1, 132));
    ck_assert_ptr_null(pj_matmul_fit_pingpong(4096, 4096, 1, 0));
}
END_TEST

/* fp8's cooperative 128 x 224 in ping-pong's place where its tiles make two waves and
 * ping-pong's four, for four row tiles or more; ping-pong's tile elsewhere. */
START_TEST(matmul_fit_takes_128x224_for_two_waves)
{
    static const struct {
        uint64_t m, n;
        int bn; /* 0: no ping-pong tile to map */
    } cases[] = {
        {512, 14336, 224},  {1024, 7168, 224}, {768, 9216, 224},  {2048, 3584, 224},
        {640, 11008, 224},  {256, 28672, 128}, {4096, 14336, 176}, {2048, 4096, 128},
        {1536, 4096, 128},  {1024, 14336, 176}, {256, 14336, 0},   {500, 4096, 0},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        const pj_matmul_fit_tile *t = pj_matmul_fit_two_waves(
            pj_matmul_fit_pingpong(cases[i].m, cases[i].n, 1, 132), cases[i].m, cases[i].n, 132);
        ck_assert_msg(cases[i].bn ? t && t->bm == 128 && t->bn == cases[i].bn : t == NULL,
                      "%llu x %llu: %s", (unsigned long long)cases[i].m,
                      (unsigned long long)cases[i].n, t ? t->words : "none");
        if (t) {
            ck_assert_ptr_eq(pj_matmul_fit_tile_of(t->words), t);
            ck_assert_int_eq(strstr(t->words, "sched=pingpong") != NULL, t->bn != 224);
        }
    }
    ck_assert_ptr_null(pj_matmul_fit_two_waves(NULL, 512, 14336, 132));
    const pj_matmul_fit_tile *pp = pj_matmul_fit_pingpong(512, 14336, 1, 132);
    ck_assert_ptr_eq(pj_matmul_fit_two_waves(pp, 512, 14336, 0), pp);
}
END_TEST

/* A decoding's product swaps the operands (C's transpose, the weights on wgmma's 64-row side):
 * 8 rows of A a tile up to 8 rows, 16 up to 16, else 32; not past 64 rows; fp8 only where the
 * swapped tiles are one wave at most. */
START_TEST(matmul_fit_swaps_a_decoding)
{
    static const struct {
        uint64_t m, n;
        int bn, fp8_bn; /* rows of A a tile, 16-bit and tf32 / fp8; 0: not swapped */
    } cases[] = {
        {1, 4096, 8, 8},     {8, 4096, 8, 8},       {9, 4096, 16, 16},   {16, 4096, 16, 16},
        {17, 4096, 32, 32},  {32, 4096, 32, 32},    {64, 4096, 32, 32},  {65, 4096, 0, 0},
        {1, 8448, 8, 8},     {1, 8449, 8, 0},       {1, 14336, 8, 0},    {16, 14336, 16, 0},
        {64, 4224, 32, 32},  {64, 4225, 32, 0},     {5, 1000, 8, 8},     {1, 8, 8, 8},
        {128, 1024, 0, 0},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++)
        for (int fp8 = 0; fp8 < 2; fp8++) {
            const pj_matmul_fit_tile *t = pj_matmul_fit_swap(cases[i].m, cases[i].n, 132, fp8);
            const int bn = fp8 ? cases[i].fp8_bn : cases[i].bn;
            ck_assert_msg(bn ? t && t->bm == 64 && t->bn == bn && strstr(t->words, "swap=1")
                             : !t,
                          "%llu x %llu%s: %s", (unsigned long long)cases[i].m,
                          (unsigned long long)cases[i].n, fp8 ? " fp8" : "",
                          t ? t->words : "not swapped");
            if (t)
                ck_assert_ptr_eq(pj_matmul_fit_tile_of(t->words), t);
        }
    ck_assert_ptr_null(pj_matmul_fit_swap(1, 4096, 0, 0)); /* no SMs counted */
    ck_assert_ptr_null(pj_matmul_fit_swap(0, 4096, 132, 0));
}
END_TEST

/* The plan of a product of few tiles splits K (with NVRTC, not with the llvm backend, which
 * builds none), counts the parts as the kernel does (none empty), and leaves a named splits= and
 * a full product alone. */
/* Whether params holds word whole ("splits=1" is not in "splits=12"). */
static int has_word(const char *params, const char *word)
{
    const size_t n = strlen(word);
    for (const char *at = params; (at = strstr(at, word)); at += n)
        if ((at == params || at[-1] == ' ') && (at[n] == ' ' || at[n] == '\0'))
            return 1;
    return 0;
}

/* sched=gemv counts a row's bytes in 32 bits, with room for its last step's offsets: rows up to
 * PJ_MATMUL_GEMV_ROW_BYTES_MAX bytes are planned, one element more is refused naming it. */
START_TEST(matmul_gemv_refuses_rows_past_its_byte_count)
{
    ptxjit_context *context = test_open_offline(NULL);
    const uint64_t longest = PJ_MATMUL_GEMV_ROW_BYTES_MAX / 2; /* bf16 elements */
    const uint64_t fits[] = {1, 16, longest}, past[] = {1, 16, longest + 1};
    pj_plan plan;
    ck_assert_msg(pj_plan_make(&plan, context, &pj_family_matmul, "variant=wgmma sched=gemv",
                               fits) == PTXJIT_OK,
                  "%s", ptxjit_last_error());
    ck_assert(has_word(plan.params, "sched=gemv"));
    pj_plan_free(&plan);
    ck_assert_int_ne(
        pj_plan_make(&plan, context, &pj_family_matmul, "variant=wgmma sched=gemv", past),
        PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "counts a row's bytes in 32 bits"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "use sched=persistent"));
    ptxjit_close(context);
}
END_TEST

START_TEST(matmul_plan_splits_k_for_few_tiles)
{
    ptxjit_context *context = test_open_offline(NULL);
    static const struct {
        const char *params;
        uint64_t m, n, k;
        const char *want; /* in the plan's request; NULL: no splits= but splits=1 */
    } cases[] = {
        {"", 1, 4096, 4096, "swap=1"}, /* a decoding's: swapped, not split */
        {"", 100, 1024, 4096, "splits=4"},
        {"", 128, 1024, 4096, "splits=4"}, /* 32 tiles of 64 x 64: split */
        {"", 128, 4096, 4096, NULL},       /* 128 tiles fill a wave: not split */
        {"", 256, 1024, 4096, NULL},       /* more rows than split-K takes */
        /* K-major bf16 and f16 B up to 8 rows: gemv, not split; past them, swapped */
        {"variant=wgmma b_layout=nk", 1, 4096, 4096, "sched=gemv"},
        {"variant=wgmma b_layout=nk", 8, 14336, 4096, "sched=gemv"},
        {"variant=wgmma dtype=f16 out=f16 b_layout=nk", 3, 100, 1000, "sched=gemv"},
        {"variant=wgmma b_layout=nk", 9, 4096, 4096, "swap=1"},
        /* fp8 and tf32 (K-major B always): swapped, where gemv did not win or was not measured */
        {"variant=wgmma_fp8", 1, 4096, 4096, "swap=1"},
        {"variant=wgmma_tf32", 1, 4096, 4096, "swap=1"},
        /* rows past gemv's 32-bit byte count: swapped */
        {"variant=wgmma b_layout=nk", 1, 64, 1100000000, "swap=1"},
        /* fp8: the fewest parts first, 64 x 32 in 2 */
        {"variant=wgmma_fp8", 128, 1024, 4096, "mma=m64n32k16"},
        {"variant=wgmma_fp8", 128, 1024, 4096, "splits=2"},
        {"variant=wgmma_tf32", 64, 1024, 4096, "swap=1"},
        {"", 8192, 8192, 8192, NULL},
        {"backend=llvm", 1, 4096, 4096, NULL},
        {"splits=1", 1, 4096, 4096, NULL},
        {"splits=3", 1, 4096, 4096, "splits=3"},
        {"", 1, 4096, 64, NULL}, /* one k tile: nothing to split */
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        pj_plan plan;
        const uint64_t sizes[] = {cases[i].m, cases[i].n, cases[i].k};
        ck_assert_msg(pj_plan_make(&plan, context, &pj_family_matmul, cases[i].params, sizes) ==
                          PTXJIT_OK,
                      "%s: %s", cases[i].params, ptxjit_last_error());
        ck_assert_msg(cases[i].want ? has_word(plan.params, cases[i].want)
                                    : !strstr(plan.params, "splits=") ||
                                          has_word(plan.params, "splits=1"),
                      "%s on %llux%llux%llu: %s", cases[i].params, (unsigned long long)cases[i].m,
                      (unsigned long long)cases[i].n, (unsigned long long)cases[i].k, plan.params);
        /* A swapped product, or gemv's, says so in the plan's sentence. */
        ck_assert(!has_word(plan.params, "swap=1") ||
                  (plan.why && strstr(plan.why, "C is computed as its transpose (swap=1)")));
        ck_assert(!has_word(plan.params, "sched=gemv") ||
                  (plan.why && strstr(plan.why, "are dot products (sched=gemv)")));
        pj_plan_free(&plan);
    }
    matmul_config config = {.variant = MATMUL_WGMMA, .bk = 64, .splits = 5};
    ck_assert_uint_eq(pj_matmul_parts(&config, 1000), 4); /* 16 k tiles: 4 + 4 + 4 + 4 */
    ck_assert_uint_eq(pj_matmul_parts(&config, 64 * 5), 5);
    ck_assert_uint_eq(pj_matmul_parts(&config, 64 * 3), 3);
    ck_assert_uint_eq(pj_matmul_parts(&config, 1), 1);
    config.splits = 1;
    ck_assert_uint_eq(pj_matmul_parts(&config, 4096), 1);
    char *canonical = NULL;
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, context, "matmul", "splits=2 cluster=2"),
                     PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "use cluster=1"));
    ptxjit_close(context);
}
END_TEST

/* The request with the fit's words added is a valid set of parameters. */
static void expect_words_suit(ptxjit_context *context, const char *request,
                              const pj_matmul_fit_tile *t)
{
    char params[256], *canonical = NULL;
    snprintf(params, sizeof params, "%s %s", request, t->words);
    ck_assert_msg(ptxjit_canonical_params(&canonical, context, "matmul", params) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    free(canonical);
}

/* Each tile's words are a valid request for every wgmma type, output and epilogue: the fit
 * adds them to what the caller asked. */
START_TEST(matmul_fit_tiles_suit_every_wgmma_request)
{
    ptxjit_context *context = test_open_offline(NULL);
    static const char *const requests[] = {
        "", "variant=wgmma out=f32", "dtype=f16", "dtype=f16 out=f32", "b_layout=nk",
        "alpha=scaled beta=scaled bias=column act=gelu out=f32", "variant=wgmma_tf32",
        "variant=wgmma_tf32 out=bf16", "variant=wgmma_fp8", "variant=wgmma_fp8 fp8=e5m2 out=f32"};
    static const uint64_t rows[] = {384, 256, 192, 128, 64}; /* one per tile, n = 8192 */
    for (size_t r = 0; r < PJ_ARRAY_SIZE(requests); r++)
        for (size_t i = 0; i < PJ_ARRAY_SIZE(rows); i++) {
            const pj_matmul_fit_tile *t = pj_matmul_fit_choose(rows[i], 8192, 128, 256, 132);
            ck_assert_ptr_nonnull(t);
            if (strstr(requests[r], "wgmma_fp8"))
                t = pj_matmul_fit_fp8(t, rows[i], 8192, 128, 256, 2, 132);
            expect_words_suit(context, requests[r], t);
        }
    /* fp8's own: 128 x 128 for the default's rows, 128 x 112 where it fills the waves, split-K's
     * 64 x 32, 64 x 64 and 64 x 128 in 2, 3 and 4 parts (4 parts of the wider two only on fewer
     * SMs: 78, an H20's). */
    const pj_matmul_fit_tile *fp8[] = {
        pj_matmul_fit_fp8(NULL, 256, 8192, 128, 256, 2, 132),
        pj_matmul_fit_fp8(NULL, 256, 14336, 128, 256, 2, 132),
        pj_matmul_fit_split_fp8(128, 1024, 32, 132), /* 64 x 32 in 2 */
        pj_matmul_fit_split_fp8(128, 640, 32, 132),  /* 64 x 32 in 3 */
        pj_matmul_fit_split_fp8(16, 1024, 64, 132),  /* 64 x 32 in 4 */
        pj_matmul_fit_split_fp8(1, 4096, 8, 132),    /* 64 x 64 in 2 */
        pj_matmul_fit_split_fp8(1, 2816, 64, 132),   /* 64 x 64 in 3 */
        pj_matmul_fit_split_fp8(16, 6144, 32, 132),  /* 64 x 128 in 2 */
        pj_matmul_fit_split_fp8(1, 4480, 32, 132),   /* 64 x 128 in 3 */
        pj_matmul_fit_split_fp8(65, 456, 32, 78),    /* 64 x 64 in 4 */
        pj_matmul_fit_split_fp8(80, 960, 32, 78)};   /* 64 x 128 in 4 */
    static const int bn[] = {128, 112, 32, 32, 32, 64, 64, 128, 128, 64, 128},
                     parts[] = {1, 1, 2, 3, 4, 2, 3, 2, 3, 4, 4};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(fp8); i++) {
        ck_assert_msg(fp8[i] && fp8[i]->bn == bn[i] && fp8[i]->splits == parts[i], "fp8 tile %zu",
                      i);
        expect_words_suit(context, "variant=wgmma_fp8", fp8[i]);
        expect_words_suit(context, "variant=wgmma_fp8 fp8=e5m2 out=f32", fp8[i]);
    }
    /* The ping-pong tiles, for the 16-bit outputs the fit gives them. */
    static const char *const sixteen[] = {"", "dtype=f16", "b_layout=nk", "variant=wgmma_fp8",
                                          "variant=wgmma_fp8 fp8=e5m2 out=f16",
                                          "alpha=scaled beta=scaled bias=column act=gelu"};
    const pj_matmul_fit_tile *pingpong[] = {pj_matmul_fit_pingpong(4096, 4096, 0, 132),
                                            pj_matmul_fit_pingpong(4096, 14336, 1, 132)};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(pingpong); i++)
        for (size_t r = 0; r < PJ_ARRAY_SIZE(sixteen); r++)
            expect_words_suit(context, sixteen[r], pingpong[i]);
    /* fp8's 128 x 224 for two waves, with either fp8 format and 16-bit C. */
    const pj_matmul_fit_tile *two_waves =
        pj_matmul_fit_two_waves(pj_matmul_fit_pingpong(512, 14336, 1, 132), 512, 14336, 132);
    expect_words_suit(context, "variant=wgmma_fp8", two_waves);
    expect_words_suit(context, "variant=wgmma_fp8 fp8=e5m2 out=f16", two_waves);
    /* The swapped tiles, with every epilogue term. */
    const pj_matmul_fit_tile *swapped[] = {pj_matmul_fit_swap(1, 4096, 132, 0),
                                           pj_matmul_fit_swap(16, 4096, 132, 0),
                                           pj_matmul_fit_swap(64, 4096, 132, 0)};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(swapped); i++) {
        ck_assert(swapped[i] && strstr(swapped[i]->words, "swap=1"));
        for (size_t r = 0; r < PJ_ARRAY_SIZE(requests); r++)
            expect_words_suit(context, requests[r], swapped[i]);
    }
    ptxjit_close(context);
}
END_TEST

Suite *suite_matmul(void)
{
    Suite *suite = suite_create("matmul");
    TCase *tc = tcase_create("schema");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, matmul_defaults_follow_the_variant);
    tcase_add_test(tc, matmul_constraints_fail_early_with_the_fix);
    tcase_add_test(tc, matmul_launch_geometry_follows_the_params);
    tcase_add_test(tc, matmul_shape_rules_name_the_fix);
    tcase_add_test(tc, matmul_stage_covers_what_the_tma_cannot_take);
    tcase_add_test(tc, matmul_stages_what_a_layout_breaks);
    tcase_add_test(tc, matmul_refuses_a_layout_that_cannot_hold_the_product);
    tcase_add_test(tc, matmul_layout_plan_says_how_a_batch_runs);
    tcase_add_test(tc, matmul_layout_plan_of_the_llvm_backend);
    tcase_add_test(tc, matmul_elements_round_to_nearest_even);
    tcase_add_test(tc, matmul_fp8_elements_round_and_saturate);
    tcase_add_test(tc, matmul_fp8_encoder_matches_the_nearest_code);
    tcase_add_test(tc, matmul_reference_epilogue_applies_each_term);
    tcase_add_test(tc, matmul_reference_row_is_the_product);
    tcase_add_test(tc, matmul_fit_leaves_a_named_tile_alone);
    tcase_add_test(tc, matmul_fit_swaps_a_decoding);
    tcase_add_test(tc, matmul_fit_chooses_by_shape);
    tcase_add_test(tc, matmul_fit_takes_pingpong_where_blocks_have_two_tiles);
    tcase_add_test(tc, matmul_fit_takes_128x224_for_two_waves);
    tcase_add_test(tc, matmul_fit_tiles_suit_every_wgmma_request);
    tcase_add_test(tc, matmul_c_boxes_are_the_widest_span_the_row_divides_into);
    tcase_add_test(tc, matmul_fit_fp8_tile);
    tcase_add_test(tc, matmul_fit_splits_k_where_tiles_are_few);
    tcase_add_test(tc, matmul_fit_fp8_splits_into_fewest_parts);
    tcase_add_test(tc, matmul_plan_splits_k_for_few_tiles);
    tcase_add_test(tc, matmul_gemv_refuses_rows_past_its_byte_count);
    suite_add_tcase(suite, tc);
    /* What each variant's PTX holds: some forty compiles of the matmul template, seconds each
     * under memcheck, which valgrind-families leaves out by this tag (mk/hardening.mk); the
     * library's side of a compile is the same for every template, which memcheck checks in
     * the other suites' compiles. */
    TCase *ptx = tcase_create("ptx");
    tcase_set_tags(ptx, "ptx_content");
    tcase_set_timeout(ptx, 120);
    tcase_add_test(ptx, matmul_variants_compile_to_their_instructions);
    tcase_add_test(ptx, matmul_wgmma_variants_compile_to_their_instructions);
    tcase_add_test(ptx, matmul_epilogue_terms_follow_the_params);
    suite_add_tcase(suite, ptx);
    TCase *many = test_many_compiles_case(suite, 120);
    tcase_add_test(many, matmul_small_tiles_compile_cleanly);
    return suite;
}
