/* test_llvm.c — the reduce generator without a GPU: every request the schema allows becomes
 * PTX that nvJitLink turns into an sm_90a cubin, with the template's entry and launch bound,
 * and each variant's IR and PTX hold the instructions the variant is about. */
#include <stdio.h>
#include <string.h>

#include "llvm_util.h"

/* Every context here compiles through the llvm route by default. */
static ptxjit_kernel *compile(ptxjit_context *context, const char *params)
{
    return test_compile(context, "reduce", params);
}

static void check_cubin(ptxjit_kernel *kernel, int tpb)
{
    size_t size = 0;
    const unsigned char *cubin = ptxjit_kernel_cubin(kernel, &size);
    ck_assert_msg(cubin && size > 4 && memcmp(cubin, "\177ELF", 4) == 0, "%s: no cubin",
                  ptxjit_kernel_params(kernel));
    const char *ptx = ptxjit_kernel_ptx(kernel);
    char bound[64];
    snprintf(bound, sizeof bound, ".maxntid %d, 1, 1", tpb);
    ck_assert_msg(strstr(ptx, ".target sm_90a") && strstr(ptx, ".entry reduce_kernel(") &&
                      strstr(ptx, bound),
                  "%s: PTX lacks the target, the entry or %s", ptxjit_kernel_params(kernel),
                  bound);
}

/* One request of the sweep: compiled and checked if the sweep's stride takes it. */
static void sweep_one(ptxjit_context *context, const char *params, int tpb, int *requests,
                      int *kernels)
{
    if (!test_sweep_takes((size_t)(*requests)++))
        return;
    check_cubin(compile(context, params), tpb);
    (*kernels)++;
}

START_TEST(every_reduce_request_becomes_an_sm_90a_cubin)
{
    static const char *const strided[] = {"two_pass", "warp_shuffle", "one_pass"};
    static const char *const dtypes[] = {"i32", "f32"};
    ptxjit_context *context = test_open_sm_90a("llvm");
    int requests = 0, kernels = 0;
    for (int tpb = 32; tpb <= 1024; tpb *= 2)
        for (int d = 0; d < 2; d++) {
            char params[128];
            for (int v = 0; v < 3; v++) {
                snprintf(params, sizeof params, "variant=%s tpb=%d dtype=%s", strided[v], tpb,
                         dtypes[d]);
                sweep_one(context, params, tpb, &requests, &kernels);
            }
            for (int batch = 1; batch <= 64; batch++) {
                snprintf(params, sizeof params, "variant=batched tpb=%d batch=%d dtype=%s", tpb,
                         batch, dtypes[d]);
                sweep_one(context, params, tpb, &requests, &kernels);
                if (batch > 16)
                    continue;
                snprintf(params, sizeof params, "variant=vectorized tpb=%d batch=%d dtype=%s",
                         tpb, batch, dtypes[d]);
                sweep_one(context, params, tpb, &requests, &kernels);
            }
        }
    ck_assert_int_eq(requests, 6 * 2 * (3 + 64 + 16));
    printf("llvm reduce sweep: %d kernels of %d requests\n", kernels, requests);
    ptxjit_close(context);
}
END_TEST

START_TEST(tree_variants_use_barriers_and_write_partials_without_atomics)
{
    ptxjit_context *context = test_open_sm_90a("llvm");
    ptxjit_kernel *two_pass = compile(context, "variant=two_pass tpb=256");
    const char *ptx = ptxjit_kernel_ptx(two_pass);
    /* 256 -> 1: eight levels, each closed by a barrier, after the first store. */
    ck_assert_int_eq(test_count(ptx, "bar.sync"), 9);
    ck_assert_int_eq(test_count(ptx, "shfl.sync"), 0);
    ck_assert_int_eq(test_count(ptx, "atom.global") + test_count(ptx, "red.global"), 0);
    ck_assert_ptr_nonnull(strstr(ptx, "ld.global.nc.u32"));
    /* Step 2 stops at 64 partials and finishes with five shuffles: three barriers fewer... */
    ptxjit_kernel *warp = compile(context, "variant=warp_shuffle tpb=256");
    ptx = ptxjit_kernel_ptx(warp);
    ck_assert_int_eq(test_count(ptx, "bar.sync"), 3);
    ck_assert_int_eq(test_count(ptx, "shfl.sync.down.b32"), 5);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_source(warp), "@llvm.nvvm.shfl.sync.down.i32"));
    ptxjit_close(context);
}
END_TEST

START_TEST(one_pass_variants_shuffle_and_add_with_red_not_atom)
{
    /* red, not an atom whose result goes unused: nvJitLink's relocatable ptxas keeps such an
     * atom as ATOMG (a reply per block), where NVRTC's whole-program one becomes REDG. */
    ptxjit_context *context = test_open_sm_90a("llvm");
    ptxjit_kernel *i32 = compile(context, "variant=one_pass tpb=512 dtype=i32");
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_source(i32), "red.global.add.u32"));
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(i32), "shfl.sync.down.b32"), 10);
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(i32), "red.global.add.u32"), 1);
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(i32), "atom."), 0);
    ptxjit_kernel *f32 = compile(context, "variant=one_pass tpb=512 dtype=f32");
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(f32), "red.global.add.f32"), 1);
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(f32), "atom."), 0);
    ptxjit_kernel *vectorized = compile(context, "variant=vectorized dtype=i32");
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(vectorized), "red.global.add.u32"), 1);
    /* One warp per block needs no shared slot and no barrier. */
    ptxjit_kernel *warp = compile(context, "variant=one_pass tpb=32");
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(warp), "bar.sync"), 0);
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(warp), "shfl.sync.down.b32"), 5);
    ptxjit_close(context);
}
END_TEST

START_TEST(batched_loads_each_batch_item_once_per_tile_and_once_in_the_tail)
{
    ptxjit_context *context = test_open_sm_90a("llvm");
    ptxjit_kernel *kernel = compile(context, "variant=batched batch=8 dtype=f32");
    /* The batch is unrolled: 8 loads in the tile loop, 8 guarded ones for the last tile. */
    ck_assert_int_eq(test_count(ptxjit_kernel_source(kernel), "load float, ptr addrspace(1)"), 16);
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(kernel), "ld.global.nc.f32"), 16);
    ptxjit_close(context);
}
END_TEST

START_TEST(vectorized_loads_16_bytes_and_adds_head_and_tail_elements)
{
    ptxjit_context *context = test_open_sm_90a("llvm");
    ptxjit_kernel *i32 = compile(context, "variant=vectorized batch=4 dtype=i32");
    const char *ir = ptxjit_kernel_source(i32);
    ck_assert_int_eq(test_count(ir, "load <4 x i32>, ptr addrspace(1)"), 8);
    ck_assert_ptr_nonnull(strstr(ir, "align 16, !invariant.load"));
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(i32), "ld.global.nc.v4.u32"), 8);
    /* Head and tail: two scalar loads in block 0. */
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(i32), "ld.global.nc.u32"), 2);
    ptxjit_kernel *f32 = compile(context, "variant=vectorized batch=16 dtype=f32");
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(f32), "ld.global.nc.v4.f32"), 32);
    ptxjit_close(context);
}
END_TEST

Suite *suite_llvm_reduce(void)
{
    Suite *s = suite_create("llvm_reduce");
    TCase *tc = tcase_create("generator");
    tcase_add_test(tc, tree_variants_use_barriers_and_write_partials_without_atomics);
    tcase_add_test(tc, one_pass_variants_shuffle_and_add_with_red_not_atom);
    tcase_add_test(tc, batched_loads_each_batch_item_once_per_tile_and_once_in_the_tail);
    tcase_add_test(tc, vectorized_loads_16_bytes_and_adds_head_and_tail_elements);
    suite_add_tcase(s, tc);
    TCase *sweep = tcase_create("sweep");
    tcase_set_tags(sweep, "sweep"); /* CI's plain run leaves the whole sweep out (mk/hardening.mk) */
    tcase_set_timeout(sweep, 600);
    tcase_add_test(sweep, every_reduce_request_becomes_an_sm_90a_cubin);
    suite_add_tcase(s, sweep);
    return s;
}
