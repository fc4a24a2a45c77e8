/* ir.h — the builder layer over the LLVM C API that the kernel generators are written in:
 * one kernel per module, variables as allocas (the passes promote them to registers), structured
 * if/while, the PTX special registers, barriers, shuffles, atomics, shared arrays, global and
 * vector memory, tensor cores (mma.sync, ldmatrix, cp.async, wgmma), and inline PTX for what
 * LLVM 19 has no intrinsic for (TMA, mbarrier, fences, clusters, wgmma).
 * Generators unroll by running C loops over their parameters: each iteration emits its code,
 * like Mojo's `@parameter for`. Prefix ir_. */
#ifndef PTXJIT_LLVM_IR_H
#define PTXJIT_LLVM_IR_H

#include <llvm-c/Core.h>
#include <stddef.h>

/* The most parameters a kernel may have here, and operands an inline-asm statement: wgmma
 * m64n256k16 reads and writes 128 accumulators and takes two descriptors (130). */
#define IR_MAX_PARAMS 16
#define IR_MAX_ASM_OPERANDS 136

/* NVPTX address spaces. */
enum { IR_GENERIC = 0, IR_GLOBAL = 1, IR_SHARED = 3, IR_PARAM = 101 };

typedef struct {
    LLVMContextRef context;
    LLVMModuleRef module;
    LLVMBuilderRef builder;
    LLVMValueRef function;   /* the kernel being built */
    LLVMBasicBlockRef entry; /* where variables' allocas go */
    LLVMTypeRef void_type, i1, i8, i16, i32, i64, f32, f64;
    LLVMTypeRef global_ptr, shared_ptr, generic_ptr;
} ir_builder;

/* ---- ir_module.c: the module and the kernel ---- */
void ir_open(ir_builder *ir, const char *module_name);
void ir_close(ir_builder *ir);

/* A kernel parameter: its type, and for a pointer whether it is the only way to its memory
 * (noalias, __restrict__) and only read (readonly). byval_bytes > 0 makes it a struct of that
 * many bytes passed by value and read in place (__grid_constant__: a TMA descriptor). */
typedef struct {
    const char *name;
    LLVMTypeRef type;
    int noalias, readonly;
    unsigned byval_bytes, byval_align;
} ir_param_spec;

/* Starts the kernel: PTX kernel calling convention, .maxntid max_threads (the template's
 * __launch_bounds__), parameters as given; the builder is placed in its entry block. */
void ir_kernel(ir_builder *ir, const char *name, const ir_param_spec *params, int count,
               int max_threads);
/* .minnctapersm blocks: the second argument of the template's __launch_bounds__, which lets
 * ptxas cap registers so that that many blocks fit on an SM. */
void ir_kernel_min_blocks(ir_builder *ir, int blocks);
LLVMValueRef ir_param(ir_builder *ir, int index);
/* Ends the kernel with ret void. */
void ir_kernel_end(ir_builder *ir);
/* The module as text (LLVMDisposeMessage frees it), and its verification (NULL if valid;
 * else the message, freed with LLVMDisposeMessage). */
char *ir_text(ir_builder *ir);
char *ir_verify(ir_builder *ir);
/* Calls intrinsic name, declared on first use; overloads: the types an overloaded intrinsic
 * is instantiated for (NULL, 0 for a plain one). */
LLVMValueRef ir_intrinsic(ir_builder *ir, const char *name, LLVMTypeRef *overloads,
                          int overload_count, LLVMValueRef *args, int count);
/* Marks a call convergent: every thread of the warp (warpgroup) must reach it together, so the
 * passes may not move it into or duplicate it across divergent paths (.sync.aligned). */
void ir_convergent(ir_builder *ir, LLVMValueRef call);

/* ---- ir_values.c: constants, variables, arithmetic spelled once ---- */
LLVMValueRef ir_i32(ir_builder *ir, long long value);
LLVMValueRef ir_i64(ir_builder *ir, long long value);
LLVMValueRef ir_zero(LLVMTypeRef type);
/* A mutable variable of type, initialized to init (may be NULL): an alloca in the entry block. */
LLVMValueRef ir_var(ir_builder *ir, LLVMTypeRef type, LLVMValueRef init, const char *name);
LLVMValueRef ir_get(ir_builder *ir, LLVMValueRef var);
void ir_set(ir_builder *ir, LLVMValueRef var, LLVMValueRef value);
/* Integer or float by the operands' type; integers wrap (no nsw), floats in IEEE order. */
LLVMValueRef ir_add(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_mul(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_sub(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
/* a * b + c rounded once (llvm.fma: fma.rn), as NVRTC contracts `acc += a * b`. */
LLVMValueRef ir_fma(ir_builder *ir, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c);
/* f32 only: 2^x by ex2.approx.ftz.f32 (the MUFU unit: about 2 ulp, subnormals flushed), and
 * fmaxf (max.f32: the other operand when one is NaN). */
LLVMValueRef ir_ex2_approx(ir_builder *ir, LLVMValueRef x);
LLVMValueRef ir_fmax(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
/* Field index of a struct value (an intrinsic's or asm statement's several results). */
LLVMValueRef ir_field(ir_builder *ir, LLVMValueRef aggregate, int index);
/* The same bits as another type of the same size (float <-> i32, <4 x float> <-> <4 x i32>). */
LLVMValueRef ir_bitcast(ir_builder *ir, LLVMValueRef value, LLVMTypeRef type);
/* Integer add and multiply that never wrap (nuw nsw): offsets within a block's tile, which
 * lets the passes fold constant parts into addressing, as C's signed int arithmetic does. */
LLVMValueRef ir_add_nw(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_mul_nw(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
/* Unsigned integer division, remainder and comparisons. */
LLVMValueRef ir_udiv(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_urem(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_ult(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_eq(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_and(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_or(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_xor(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_shl(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_lshr(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_umin(ir_builder *ir, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef ir_select(ir_builder *ir, LLVMValueRef cond, LLVMValueRef a, LLVMValueRef b);
/* Zero-extends an unsigned integer to i64 (or truncates/extends to any integer type). */
LLVMValueRef ir_zext(ir_builder *ir, LLVMValueRef value, LLVMTypeRef type);
LLVMValueRef ir_trunc(ir_builder *ir, LLVMValueRef value, LLVMTypeRef type);

/* ---- ir_flow.c: structured control flow ---- */
typedef struct {
    LLVMBasicBlockRef otherwise, end;
} ir_if_state;
/* if (cond) { ... [ir_else ...] ir_end_if } */
void ir_if(ir_builder *ir, ir_if_state *state, LLVMValueRef cond);
void ir_else(ir_builder *ir, ir_if_state *state);
void ir_end_if(ir_builder *ir, ir_if_state *state);

/* Who unrolls a loop: the passes as they see fit, only ptxas, or no one. Only ptxas is
 * llvm.loop.unroll.runtime.disable; no one is llvm.loop.unroll.disable, which NVPTX prints as
 * `.pragma "nounroll"` for ptxas (so does a count, which LLVM marks disabled once applied). */
typedef enum { IR_UNROLL_ANY, IR_UNROLL_BY_PTXAS, IR_UNROLL_NONE } ir_unroll;
typedef struct {
    LLVMBasicBlockRef header, body, exit;
    ir_unroll unroll; /* IR_UNROLL_ANY unless set before ir_end_while */
} ir_loop_state;
/* ir_while(&s); cond = ...; ir_do(&s, cond); body ...; ir_end_while(&s): the condition is
 * computed in the loop's header block, before each iteration. */
void ir_while(ir_builder *ir, ir_loop_state *state);
void ir_do(ir_builder *ir, ir_loop_state *state, LLVMValueRef cond);
void ir_end_while(ir_builder *ir, ir_loop_state *state);

/* ---- ir_thread.c: the thread's place, barriers, warp shuffles, atomics ---- */
typedef enum {
    IR_TID_X, IR_TID_Y, IR_CTAID_X, IR_CTAID_Y, IR_CTAID_Z, IR_NCTAID_X, IR_NCTAID_Y,
    IR_NCTAID_Z, IR_NTID_X
} ir_sreg_kind;
/* The special register as an i32. */
LLVMValueRef ir_sreg(ir_builder *ir, ir_sreg_kind which);
/* __syncthreads(): bar.sync 0. */
void ir_barrier(ir_builder *ir);
/* __shfl_down_sync(0xffffffff, value, offset): i32 or f32. */
LLVMValueRef ir_shfl_down(ir_builder *ir, LLVMValueRef value, int offset);
/* __shfl_xor_sync(0xffffffff, value, mask): the value of lane (this lane ^ mask), i32 or f32
 * (shfl.sync.bfly); with mask below 2^k it stays within aligned groups of 2^k lanes. */
LLVMValueRef ir_shfl_xor(ir_builder *ir, LLVMValueRef value, int mask);
/* Lane `lane`'s i32 value, for the whole warp: a value every lane holds alike becomes one the
 * compiler knows is warp-uniform (it may then keep it in uniform registers). */
LLVMValueRef ir_shfl_idx(ir_builder *ir, LLVMValueRef value, int lane);
/* atomicAdd(pointer, value) with no result (red.global.add: relaxed, gpu scope), i32
 * (wrapping) or f32; pointer in the global address space. */
void ir_atomic_add(ir_builder *ir, LLVMValueRef pointer, LLVMValueRef value);

/* ---- ir_memory.c: shared arrays, addresses, loads and stores ---- */
/* A block-wide __shared__ array of count elements, aligned to align bytes. */
LLVMValueRef ir_shared_array(ir_builder *ir, const char *name, LLVMTypeRef element,
                             unsigned count, unsigned align);
/* The block's dynamic shared memory (extern __shared__ char name[]): its size is the
 * launch's. */
LLVMValueRef ir_dynamic_shared(ir_builder *ir, const char *name, unsigned align);
/* &base[index] (index any integer type), in base's address space. */
LLVMValueRef ir_at(ir_builder *ir, LLVMTypeRef element, LLVMValueRef base, LLVMValueRef index);
/* base + bytes, as a pointer in base's address space. */
LLVMValueRef ir_byte_offset(ir_builder *ir, LLVMValueRef base, LLVMValueRef bytes);
LLVMValueRef ir_load(ir_builder *ir, LLVMTypeRef type, LLVMValueRef pointer, unsigned align);
/* A load of memory no thread writes during the kernel (const __restrict__ input): marked
 * invariant, so NVPTX reads it through the non-coherent path (ld.global.nc). */
LLVMValueRef ir_load_readonly(ir_builder *ir, LLVMTypeRef type, LLVMValueRef pointer,
                              unsigned align);
void ir_store(ir_builder *ir, LLVMValueRef value, LLVMValueRef pointer, unsigned align);
/* A shared-memory pointer as the 32-bit address that PTX's shared-space operands take
 * (__cvta_generic_to_shared). */
LLVMValueRef ir_shared_address(ir_builder *ir, LLVMValueRef shared_pointer);
/* The address of a by-value kernel parameter (a __grid_constant__ TMA descriptor) as the
 * 64-bit generic address PTX instructions take. */
LLVMValueRef ir_param_address(ir_builder *ir, LLVMValueRef param);
/* A vector's element, and the vector with one element replaced. */
LLVMValueRef ir_element(ir_builder *ir, LLVMValueRef vector, int index);
LLVMValueRef ir_with_element(ir_builder *ir, LLVMValueRef vector, LLVMValueRef value, int index);

/* ---- ir_asm.c: inline PTX for what LLVM 19 lacks intrinsics for ---- */
/* One inline-asm statement: constraints in LLVM's syntax ("r,l,~{memory}"); result type
 * void_type for none. Always volatile (has side effects). */
LLVMValueRef ir_asm(ir_builder *ir, LLVMTypeRef result, const char *text,
                    const char *constraints, LLVMValueRef *args, int count);
/* The same without side effects: a pure function of its operands, which the passes may move,
 * merge or drop like arithmetic. */
LLVMValueRef ir_asm_pure(ir_builder *ir, LLVMTypeRef result, const char *text,
                         const char *constraints, LLVMValueRef *args, int count);
/* mbarrier.init.shared::cta.b64 [bar], count. */
void ir_mbarrier_init(ir_builder *ir, LLVMValueRef barrier, int count);
/* mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes. */
void ir_mbarrier_arrive_expect_tx(ir_builder *ir, LLVMValueRef barrier, unsigned bytes);
/* Spins on mbarrier.try_wait.parity until the phase of parity (an i32, 0 or 1) completes. */
void ir_mbarrier_wait(ir_builder *ir, LLVMValueRef barrier, LLVMValueRef parity);
/* fence.proxy.async.shared::cta: generic-proxy shared writes become visible to the TMA. */
void ir_fence_proxy_async_shared(ir_builder *ir);
/* prefetch.tensormap: a tensor map (a kernel parameter's address) into the TMA's descriptor
 * cache before its first use. */
void ir_prefetch_tensormap(ir_builder *ir, LLVMValueRef tensor_map);
/* cp.async.bulk.tensor.2d global → shared, completing on the mbarrier's transaction count. */
void ir_tma_load_2d(ir_builder *ir, LLVMValueRef shared_dst, LLVMValueRef tensor_map,
                    LLVMValueRef x, LLVMValueRef y, LLVMValueRef barrier);
/* cp.async.bulk.tensor.2d shared → global, in the thread's bulk group. */
void ir_tma_store_2d(ir_builder *ir, LLVMValueRef tensor_map, LLVMValueRef x, LLVMValueRef y,
                     LLVMValueRef shared_src);
/* cp.async.bulk.commit_group: closes the thread's bulk group of stores. */
void ir_tma_store_commit(ir_builder *ir);
/* cp.async.bulk.wait_group.read 0: the shared sources of all committed stores were read. */
void ir_tma_store_wait_read(ir_builder *ir);

/* mbarrier.arrive.shared::cta.b64 _, [bar]: one arrival, no transaction bytes. */
void ir_mbarrier_arrive(ir_builder *ir, LLVMValueRef barrier);
/* fence.mbarrier_init.release.cluster: initialized mbarriers visible to the async proxy. */
void ir_fence_mbarrier_init(ir_builder *ir);
/* __syncwarp(): bar.warp.sync -1, every lane's earlier shared accesses done (before one lane
 * arrives on an mbarrier for the warp). */
void ir_syncwarp(ir_builder *ir);
/* Thread-block clusters (sm_90). The multicast form of ir_tma_load_2d: the box lands at the
 * same offset in the shared memory of every block in cta_mask (bit r: rank r) and completes
 * bytes on each one's mbarrier at barrier's offset. */
void ir_tma_load_2d_multicast(ir_builder *ir, LLVMValueRef shared_dst, LLVMValueRef tensor_map,
                              LLVMValueRef x, LLVMValueRef y, LLVMValueRef barrier,
                              unsigned cta_mask);
/* %cluster_ctarank: the block's rank in its cluster (i32). */
LLVMValueRef ir_cluster_rank(ir_builder *ir);
/* One arrival (release, cluster scope) on the mbarrier at barrier's offset in the shared
 * memory of block `rank` (an i32) of the cluster: mapa, then mbarrier.arrive.shared::cluster. */
void ir_mbarrier_arrive_cluster(ir_builder *ir, LLVMValueRef barrier, LLVMValueRef rank);
/* barrier.cluster.arrive.release + wait.acquire, .aligned: every thread of every block of the
 * cluster. */
void ir_cluster_sync(ir_builder *ir);

/* ---- ir_tensor.c: tensor cores and asynchronous copies (sm_80 mma.sync, sm_90a wgmma) ---- */
/* cp.async.cg.shared.global [dst], [src], 16, src_bytes: 16 bytes global → shared without
 * registers, the last 16 - src_bytes of them zeros (src_bytes 0: zeros, src not read). */
void ir_cp_async_16(ir_builder *ir, LLVMValueRef shared_dst, LLVMValueRef global_src,
                    LLVMValueRef src_bytes);
/* cp.async.commit_group, and cp.async.wait_group pending (at most that many groups in
 * flight). */
void ir_cp_async_commit(ir_builder *ir);
void ir_cp_async_wait(ir_builder *ir, int pending);
/* ldmatrix.sync.aligned.m8n8.x4.shared.b16: four 8 x 8 matrices of 16-bit pairs, each lane
 * giving one row's address; out[i] gets this lane's 32 bits of matrix i. */
void ir_ldmatrix_x4(ir_builder *ir, LLVMValueRef shared_row, LLVMValueRef out[4]);
/* mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: acc (4 f32) += a (4 i32) x b (2 i32). */
void ir_mma_tf32(ir_builder *ir, LLVMValueRef acc[4], const LLVMValueRef a[4],
                 const LLVMValueRef b[2]);
/* wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{types} over n / 2 accumulators (f32, in and
 * out), A and B from shared memory through descriptors (i64), B transposed (N-major):
 * types is "bf16.bf16" or "f16.f16"; n a multiple of 8 up to 256 (else nothing is emitted).
 * accumulate 1: D = A B + D; 0: D = A B (scale-d 0; the accumulators' values are not read). */
void ir_wgmma(ir_builder *ir, int n, const char *types, LLVMValueRef *acc, LLVMValueRef a_desc,
              LLVMValueRef b_desc, int accumulate);
/* wgmma.fence / commit_group / wait_group pending, all .sync.aligned. */
void ir_wgmma_fence(ir_builder *ir);
void ir_wgmma_commit(ir_builder *ir);
void ir_wgmma_wait(ir_builder *ir, int pending);
/* cvt.rn.bf16x2.f32 (bfloat) or cvt.rn.f16x2.f32: two floats rounded to 16 bits and packed
 * in an i32, lo in the low half (the lower address once stored). */
LLVMValueRef ir_pack_half2(ir_builder *ir, LLVMValueRef lo, LLVMValueRef hi, int bfloat);
/* setmaxnreg.{inc,dec}.sync.aligned.u32 count: the warpgroup's register budget moved. */
void ir_setmaxnreg(ir_builder *ir, int increase, int count);

/* ---- ir_target.c: NVPTX ---- */
/* Optimizes the module with PJ_LLVM_PASSES for arch and prints PTX into *ptx (free()).
 * Returns NULL on success, else a message (free()). Times in ms. */
char *ir_emit_ptx(ir_builder *ir, const char *arch, char **ptx, double *optimize_ms,
                  double *emit_ms);
/* Whether LLVM's NVPTX backend knows arch ("sm_90a"). */
int ir_arch_supported(const char *arch);

#endif
