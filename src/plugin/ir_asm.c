/* ir_asm.c — inline PTX for the Hopper instructions LLVM 19 has no intrinsics for: mbarrier
 * waits with transaction counts, the async-proxy fence, TMA (cp.async.bulk.tensor, multicast
 * too) and thread-block clusters (remote arrivals, the cluster barrier); and the warp barrier
 * and cluster rank that go with them (NVVM intrinsics).
 * Labels use ${:uid}, which LLVM makes unique per asm statement, so a helper can be emitted
 * many times in one kernel. The tensor-core helpers are in ir_tensor.c. */
#include <string.h>

#include "ir.h"

static LLVMValueRef asm_call(ir_builder *ir, LLVMTypeRef result, const char *text,
                             const char *constraints, LLVMValueRef *args, int count,
                             int side_effects)
{
    LLVMTypeRef types[IR_MAX_ASM_OPERANDS];
    count = count < IR_MAX_ASM_OPERANDS ? count : IR_MAX_ASM_OPERANDS;
    for (int i = 0; i < count; i++)
        types[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef type = LLVMFunctionType(result, types, (unsigned)count, 0);
    LLVMValueRef code = LLVMGetInlineAsm(type, text, strlen(text), constraints,
                                         strlen(constraints), side_effects, 0,
                                         LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(ir->builder, type, code, args, (unsigned)count, "");
}

LLVMValueRef ir_asm(ir_builder *ir, LLVMTypeRef result, const char *text,
                    const char *constraints, LLVMValueRef *args, int count)
{
    return asm_call(ir, result, text, constraints, args, count, 1);
}

LLVMValueRef ir_asm_pure(ir_builder *ir, LLVMTypeRef result, const char *text,
                         const char *constraints, LLVMValueRef *args, int count)
{
    return asm_call(ir, result, text, constraints, args, count, 0);
}

void ir_mbarrier_init(ir_builder *ir, LLVMValueRef barrier, int count)
{
    LLVMValueRef args[] = {barrier, ir_i32(ir, count)};
    ir_asm(ir, ir->void_type, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}", args,
           2);
}

void ir_mbarrier_arrive(ir_builder *ir, LLVMValueRef barrier)
{
    ir_asm(ir, ir->void_type, "mbarrier.arrive.shared::cta.b64 _, [$0];", "r,~{memory}",
           &barrier, 1);
}

void ir_fence_mbarrier_init(ir_builder *ir)
{
    ir_asm(ir, ir->void_type, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL, 0);
}

void ir_mbarrier_arrive_expect_tx(ir_builder *ir, LLVMValueRef barrier, unsigned bytes)
{
    LLVMValueRef args[] = {barrier, ir_i32(ir, bytes)};
    ir_asm(ir, ir->void_type, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;",
           "r,r,~{memory}", args, 2);
}

void ir_mbarrier_wait(ir_builder *ir, LLVMValueRef barrier, LLVMValueRef parity)
{
    LLVMValueRef args[] = {barrier, parity};
    ir_asm(ir, ir->void_type,
           "{\n\t.reg .pred done;\n"
           "wait_${:uid}:\n\t"
           "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n\t"
           "@!done bra wait_${:uid};\n}",
           "r,r,~{memory}", args, 2);
}

void ir_fence_proxy_async_shared(ir_builder *ir)
{
    ir_asm(ir, ir->void_type, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
}

void ir_prefetch_tensormap(ir_builder *ir, LLVMValueRef tensor_map)
{
    LLVMValueRef args[] = {tensor_map};
    ir_asm(ir, ir->void_type, "prefetch.tensormap [$0];", "l,~{memory}", args, 1);
}

void ir_tma_load_2d(ir_builder *ir, LLVMValueRef shared_dst, LLVMValueRef tensor_map,
                    LLVMValueRef x, LLVMValueRef y, LLVMValueRef barrier)
{
    LLVMValueRef args[] = {shared_dst, tensor_map, x, y, barrier};
    ir_asm(ir, ir->void_type,
           "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
           " [$0], [$1, {$2, $3}], [$4];",
           "r,l,r,r,r,~{memory}", args, 5);
}

void ir_tma_store_2d(ir_builder *ir, LLVMValueRef tensor_map, LLVMValueRef x, LLVMValueRef y,
                     LLVMValueRef shared_src)
{
    LLVMValueRef args[] = {tensor_map, x, y, shared_src};
    ir_asm(ir, ir->void_type,
           "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];",
           "l,r,r,r,~{memory}", args, 4);
}

void ir_tma_store_commit(ir_builder *ir)
{
    ir_asm(ir, ir->void_type, "cp.async.bulk.commit_group;", "~{memory}", NULL, 0);
}

void ir_tma_store_wait_read(ir_builder *ir)
{
    ir_asm(ir, ir->void_type, "cp.async.bulk.wait_group.read 0;", "~{memory}", NULL, 0);
}

void ir_syncwarp(ir_builder *ir)
{
    LLVMValueRef all = ir_i32(ir, -1);
    ir_convergent(ir, ir_intrinsic(ir, "llvm.nvvm.bar.warp.sync", NULL, 0, &all, 1));
}

void ir_tma_load_2d_multicast(ir_builder *ir, LLVMValueRef shared_dst, LLVMValueRef tensor_map,
                              LLVMValueRef x, LLVMValueRef y, LLVMValueRef barrier,
                              unsigned cta_mask)
{
    LLVMValueRef args[] = {shared_dst, tensor_map, x, y, barrier,
                           LLVMConstInt(ir->i16, cta_mask, 0)};
    ir_asm(ir, ir->void_type,
           "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
           ".multicast::cluster [$0], [$1, {$2, $3}], [$4], $5;",
           "r,l,r,r,r,h,~{memory}", args, 6);
}

LLVMValueRef ir_cluster_rank(ir_builder *ir)
{
    return ir_intrinsic(ir, "llvm.nvvm.read.ptx.sreg.cluster.ctarank", NULL, 0, NULL, 0);
}

/* Default semantics (release at CTA scope), as the template's barrier_arrive_in: a
 * cluster-scope release per warp and stage measured 2.4x slower on wgmma cluster=2. */
void ir_mbarrier_arrive_cluster(ir_builder *ir, LLVMValueRef barrier, LLVMValueRef rank)
{
    LLVMValueRef args[] = {barrier, rank};
    ir_asm(ir, ir->void_type,
           "{\n\t.reg .b32 remote;\n\t"
           "mapa.shared::cluster.u32 remote, $0, $1;\n\t"
           "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}",
           "r,r,~{memory}", args, 2);
}

void ir_cluster_sync(ir_builder *ir)
{
    ir_convergent(ir, ir_asm(ir, ir->void_type,
                             "barrier.cluster.arrive.release.aligned;\n\t"
                             "barrier.cluster.wait.acquire.aligned;",
                             "~{memory}", NULL, 0));
}
