// Global-memory side of the Hadamard kernels: where a row block lives, its
// sign vector, and 32-element loads and stores in any supported dtype.
#pragma once
#include "common.cuh"
#include "ptx.cuh"

// Kernel arguments, validated and resolved on the host (src/cuda/hadamard.cu).
typedef struct rotq_had_args {
    const void *x;
    void *y;
    int64_t x_stride, y_stride;  // elements
    int64_t groups;              // row blocks of n elements: rows * blocks_per_row
    int64_t blocks_per_row;      // cols / n (block-diagonal mode when > 1)
    int32_t n;                   // block size K * 2^L
    int32_t in_dtype, out_dtype;
    float scale;
    const int8_t *signs;         // NULL or one per column
    int32_t vec_in, vec_out;     // 16-byte vector access allowed (checked on the host)
    int32_t tma;                 // tiles arrive by TMA (the persistent kernels' launchers set it)
    int32_t tma_out;             // n <= 128: tiles leave by TMA (rotq_store_small)
} rotq_had_args;

// Element offset of row block g in a matrix with the given row stride.
__device__ __forceinline__ int64_t rotq_group_base(const rotq_had_args &a, int64_t g, int64_t stride) {
    if (a.blocks_per_row == 1) return g * stride;
    int64_t row = g / a.blocks_per_row;
    return row * stride + (g - row * a.blocks_per_row) * a.n;
}

// Index into the sign vector of column 0 of row block g.
__device__ __forceinline__ int64_t rotq_sign_base(const rotq_had_args &a, int64_t g) {
    return a.blocks_per_row == 1 ? 0 : (g % a.blocks_per_row) * a.n;
}

__device__ __forceinline__ float rotq_apply_sign(const int8_t *signs, int64_t i, float v) {
    return signs[i] < 0 ? -v : v;
}

// 32 consecutive elements from 16-byte aligned memory; ES is the input element size.
template <int ES>
__device__ __forceinline__ void rotq_load32_vec(const void *p, int dtype, float v[32]) {
    const uint4 *q = (const uint4 *)p;
    if (ES == 4) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            uint4 u = ptx_ld_stream_16(q + i);
            v[4 * i + 0] = __uint_as_float(u.x);
            v[4 * i + 1] = __uint_as_float(u.y);
            v[4 * i + 2] = __uint_as_float(u.z);
            v[4 * i + 3] = __uint_as_float(u.w);
        }
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            uint4 u = ptx_ld_stream_16(q + i);
            uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
            for (int j = 0; j < 4; j++) {
                v[8 * i + 2 * j + 0] = rotq_from_16((uint16_t)(w[j] & 0xffffu), dtype);
                v[8 * i + 2 * j + 1] = rotq_from_16((uint16_t)(w[j] >> 16), dtype);
            }
        }
    }
}

// 32 consecutive elements to 16-byte aligned memory in dtype.
__device__ __forceinline__ void rotq_store32_vec(void *p, int dtype, const float v[32]) {
    uint4 *q = (uint4 *)p;
    if (dtype == ROTQ_DTYPE_F32) {
#pragma unroll
        for (int i = 0; i < 8; i++)
            ptx_st_stream_16(q + i, make_uint4(__float_as_uint(v[4 * i]), __float_as_uint(v[4 * i + 1]),
                                               __float_as_uint(v[4 * i + 2]), __float_as_uint(v[4 * i + 3])));
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            uint32_t w[4];
#pragma unroll
            for (int j = 0; j < 4; j++)
                w[j] = (uint32_t)rotq_to_16(v[8 * i + 2 * j], dtype) |
                       ((uint32_t)rotq_to_16(v[8 * i + 2 * j + 1], dtype) << 16);
            ptx_st_stream_16(q + i, make_uint4(w[0], w[1], w[2], w[3]));
        }
    }
}
