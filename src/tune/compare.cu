// compare.cu — the tuner's own kernels, loaded as PTX (compare_ptx.c, generated from this file):
// random inputs made on the GPU, the check of a candidate's result against the reference's,
// and the read that empties L2 before a timed run.
// pj_tune_compare counts the elements of got that differ from want (exactly, or beyond
// rel * |want| + abs) and keeps the first such index.
#include <cuda_fp16.h>
extern "C" __global__ void pj_tune_compare(const void *got, const void *want, unsigned long long n,
                                           int kind, float rel, float abs_tol,
                                           unsigned long long *out)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += stride) {
        bool bad;
        if (kind == 0) {
            bad = ((const unsigned *)got)[i] != ((const unsigned *)want)[i];
        } else {
            float a, b;
            if (kind == 1) {
                a = ((const float *)got)[i];
                b = ((const float *)want)[i];
            } else if (kind == 2) {
                a = __half2float(((const __half *)got)[i]);
                b = __half2float(((const __half *)want)[i]);
            } else {
                a = __uint_as_float((unsigned)((const unsigned short *)got)[i] << 16);
                b = __uint_as_float((unsigned)((const unsigned short *)want)[i] << 16);
            }
            bad = !(fabsf(a - b) <= rel * fabsf(b) + abs_tol);
        }
        if (bad) {
            atomicAdd(&out[0], 1ull);
            atomicMin(&out[1], i);
        }
    }
}

// Fills n elements with random values of seed: kind 0 random 32-bit words, 1 f32, 2 f16, 3 bf16
// (floats uniform in [-1, 1)); the same (seed, index) gives the same value.
__device__ __forceinline__ unsigned mix(unsigned long long i, unsigned seed)
{
    unsigned long long x = i * 0x9e3779b97f4a7c15ull + seed;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    return (unsigned)(x >> 32);
}

extern "C" __global__ void pj_tune_fill(void *data, unsigned long long n, int kind, unsigned seed)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += stride) {
        unsigned bits = mix(i, seed);
        float value = (float)(bits >> 8) * (1.0f / 8388608.0f) - 1.0f;
        if (kind == 0)
            ((unsigned *)data)[i] = bits;
        else if (kind == 1)
            ((float *)data)[i] = value;
        else if (kind == 2)
            ((__half *)data)[i] = __float2half_rn(value);
        else
            ((unsigned short *)data)[i] = (unsigned short)(__float_as_uint(value) >> 16);
    }
}

// Reads n 16-byte words: L2 emptied of what a run left there by filling it with clean lines of
// another buffer (a fill would leave dirty lines, whose write-back lands in the next timed
// run). The words' sum is stored only where it equals key, which the caller makes unlikely:
// the reads cannot be left out.
extern "C" __global__ void pj_tune_read(const uint4 *data, unsigned long long n, unsigned key,
                                        unsigned *sink)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned sum = 0;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += stride) {
        const uint4 v = data[i];
        sum += v.x ^ v.y ^ v.z ^ v.w;
    }
    if (sum == key)
        *sink = sum;
}
