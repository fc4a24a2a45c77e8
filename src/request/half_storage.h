/* half_storage.h — the prelude's f16 and bf16 storage types, for templates that declare
 * `//@ptxjit nvrtc half_storage`: 2-byte structs named as the toolkit's (__half,
 * __nv_bfloat16) with the headers' conversions, each the very instruction sequence that
 * cuda_fp16.hpp / cuda_bf16.hpp emit on the device, so that a template that only stores and
 * converts them compiles to the same PTX and cubin without NVRTC parsing either header (about
 * 20 ms of a matmul wgmma compile). Arithmetic on them is not declared: a template that needs
 * it leaves the directive out and gets the headers. */
#ifndef PTXJIT_HALF_STORAGE_H
#define PTXJIT_HALF_STORAGE_H

/* R = the bf16 bits of the float with bits X (unsigned), rounded to nearest even, any NaN
 * to 0x7fff: cuda_bf16.hpp's code where cvt.rn.bf16.f32 is missing (before sm_80), in its
 * shape, so that sm_75 gets its very instructions. Written once, as C that the host test
 * runs over every bf16 and the special floats, and as the prelude's text (stringified). */
#define PJ_BF16_ROUND(X, R)                                                                   \
    do {                                                                                      \
        unsigned remainder_;                                                                  \
        if (((X) & 0x7fffffffU) > 0x7f800000U) {                                              \
            (R) = 0x7fffU;                                                                    \
            remainder_ = 0U;                                                                  \
        } else {                                                                              \
            remainder_ = (X) << 16U;                                                          \
            (R) = (unsigned short)((X) >> 16U);                                               \
        }                                                                                     \
        if ((remainder_ > 0x80000000U) || ((remainder_ == 0x80000000U) && (((R) & 0x1U) != 0U))) \
            (R)++;                                                                            \
    } while (0)

#define PJ_HALF_STORAGE_STRINGIFY_(...) #__VA_ARGS__
#define PJ_HALF_STORAGE_STRINGIFY(...) PJ_HALF_STORAGE_STRINGIFY_(__VA_ARGS__)

/* The asm strings are the headers' own, braces and spacing included, so the PTX is too. */
#define PJ_F16_STORAGE_PRELUDE                                                                \
    "struct alignas(2) __half { unsigned short __x; };\n"                                     \
    "__device__ __forceinline__ __half __ushort_as_half(unsigned short b) { __half h; h.__x " \
    "= b; return h; }\n"                                                                      \
    "__device__ __forceinline__ unsigned short __half_as_ushort(__half h) { return h.__x; }\n" \
    "__device__ __forceinline__ __half __float2half_rn(float f) { __half h; asm(\"{  "        \
    "cvt.rn.f16.f32 %0, %1;}\\n\" : \"=h\"(h.__x) : \"f\"(f)); return h; }\n"                  \
    "__device__ __forceinline__ __half __float2half(float f) { return __float2half_rn(f); }\n" \
    "__device__ __forceinline__ float __half2float(__half h) { float f; asm(\"{  "            \
    "cvt.f32.f16 %0, %1;}\\n\" : \"=f\"(f) : \"h\"(h.__x)); return f; }\n"

#define PJ_BF16_STORAGE_PRELUDE                                                               \
    "struct alignas(2) __nv_bfloat16 { unsigned short __x; };\n"                              \
    "__device__ __forceinline__ __nv_bfloat16 __ushort_as_bfloat16(unsigned short b) { "      \
    "__nv_bfloat16 h; h.__x = b; return h; }\n"                                               \
    "__device__ __forceinline__ unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { "      \
    "return h.__x; }\n"                                                                       \
    "__device__ __forceinline__ __nv_bfloat16 __float2bfloat16_rn(float f)\n{\n"              \
    "    __nv_bfloat16 h;\n"                                                                  \
    "#if __CUDA_ARCH__ >= 800\n"                                                              \
    "    asm(\"{  cvt.rn.bf16.f32 %0, %1;}\\n\" : \"=h\"(h.__x) : \"f\"(f));\n"                \
    "#else\n"                                                                                 \
    "    const unsigned x = __float_as_uint(f);\n"                                            \
    "    " PJ_HALF_STORAGE_STRINGIFY(PJ_BF16_ROUND(x, h.__x)) ";\n"                            \
    "#endif\n"                                                                                \
    "    return h;\n}\n"                                                                      \
    "__device__ __forceinline__ __nv_bfloat16 __float2bfloat16(float f) { return "           \
    "__float2bfloat16_rn(f); }\n"                                                             \
    "__device__ __forceinline__ float __bfloat162float(__nv_bfloat16 h)\n{\n"                 \
    "    float f;\n"                                                                          \
    "#if __CUDA_ARCH__ >= 900\n"                                                              \
    "    asm(\"{ cvt.f32.bf16 %0, %1;}\\n\" : \"=f\"(f) : \"h\"(h.__x));\n"                    \
    "#else\n"                                                                                 \
    "    asm(\"{ mov.b32 %0, {0,%1};}\\n\" : \"=f\"(f) : \"h\"(h.__x));\n"                     \
    "#endif\n"                                                                                \
    "    return f;\n}\n"

#endif
