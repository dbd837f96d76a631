// Global-memory side of the Hadamard kernels: where a row block lives, its
// sign vector, and the kernel arguments.
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
    int32_t tma_out;             // tiles leave by TMA (rotq_store_small: n <= 1024; factor kernel: 2^L <= 128)
    int32_t y_packed;            // row blocks of y back to back (y_stride == n * blocks_per_row)
    uint32_t *tiles_next;        // NULL, or the persistent kernels' dynamic tile counter (rotq_cuda_tile_counter)
} rotq_had_args;

// The common case that the Hadamard kernels (and the decode quantize kernel) are
// also built for, with these arguments as compile-time constants (their
// template parameter DT >= 0): input and output of the 16-bit dtype dt, 16-byte
// loads, 16-byte stores where the kernel uses them (vec_out), no signs, one row
// block a row. A launch fetches its code after the bench's L2 flush; those
// builds are a third to a half of the generic code (docs/hadamard.md).
__host__ __device__ inline bool rotq_had_fast_case(const rotq_had_args &a, int dt, bool vec_out) {
    return a.in_dtype == dt && a.out_dtype == dt && a.vec_in && (!vec_out || a.vec_out) && !a.signs &&
           a.blocks_per_row == 1;
}
// In such a build: the arguments of rotq_had_fast_case as constants.
__device__ __forceinline__ void rotq_had_fast_args(rotq_had_args &a, int dt, bool vec_out) {
    a.in_dtype = a.out_dtype = dt;
    a.vec_in = 1;
    a.vec_out = vec_out;
    a.signs = NULL;
    a.blocks_per_row = 1;
}

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

// Sign bits in pair order: the sign of element r of a run at bit
// rotq_sign_pair_bit(r), element 2p at bit p and 2p + 1 at bit 16 + p, so one
// shift lines up a 16-bit pair's two signs with its sign bits 15 and 31:
// rotq_sign_pair_mask(bits, p) is the XOR mask of pair p (p < 16).
__device__ __forceinline__ unsigned rotq_sign_pair_bit(int r) { return (unsigned)(r >> 1) + 16u * (unsigned)(r & 1); }
__device__ __forceinline__ uint32_t rotq_sign_pair_mask(uint32_t bits, int p) {
    return (bits << (15 - p)) & 0x80008000u;
}

// The signs of 32 consecutive elements, sg 16-byte aligned: two 16-byte loads,
// and each sign byte's bit 7 XORed into its value's sign bit, which is what
// rotq_apply_sign's negation does (NaN included). Per element the loads were
// 32 byte loads a thread and tile.
__device__ __forceinline__ void rotq_apply_signs32_v16(const int8_t *sg, float v[32]) {
    const uint4 s0 = __ldg((const uint4 *)sg), s1 = __ldg((const uint4 *)sg + 1);
    const uint32_t w[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
    for (int r = 0; r < 32; r++)
        v[r] = __uint_as_float(__float_as_uint(v[r]) ^ ((w[r >> 2] << (24 - 8 * (r & 3))) & 0x80000000u));
}
