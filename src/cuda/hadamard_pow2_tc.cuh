// Phase 0 of the power-of-two plan on tensor cores, for 16-bit stages without
// a sign vector: address bits 0..3 by one 16-point Sylvester product per group
// of 16 consecutive elements (mma.m16n8k16, H_16 as the B operand, fp32
// accumulators), bit 4 by one FADD level on the C fragments, then the values
// go to W in the pair layout of rotq_pow2_pair_plan (8-byte stores), where the
// FADD phase 0 leaves them. Per thread and tile, 4 LDSM + 8 HMMA + 32 FADD in
// place of 4 LDS.128 + 32 conversions + 160 FADD: for the issue-bound fused
// quantize build at 2^12 (the power-of-two Hadamard kernel, which is not
// issue-bound, measured 0.5-3% slower with such a phase 0: perf-notes,
// power-of-two v27).
//
// Layout. Warp w owns the subtile's elements 1024 w .. 1024 w + 1023 (as in
// the FADD phase 0); within them group G (address bits 4..9) holds 16
// elements. The warp's four m16 tiles j = 0..3 take 16 groups each: A row rho
// (lane-row g = rho mod 8, half hm = rho / 8) of tile j is group
//     G = hm + 2 j0 + 4 g2 + 8 g0 + 16 g1 + 32 j1      (j = j0 + 2 j1, g = g0 + 2 g1 + 4 g2)
// chosen so that (a) hm is address bit 4 (the FADD level pairs d0/d2, d1/d3 of
// one fragment), (b) the eight rows of each ldmatrix matrix (g = 0..7) fall in
// eight distinct 16-byte bank groups under the stage's chunk swizzle (g2, g0,
// g1 are chunk bits 3, 4, 5), and (c) each half-warp's 8-byte W stores hit 16
// distinct bank pairs (rotq_w2_index: lane (g, t) at pair 4 g0 + 8 g1 + t
// + const mod 16). Register r = 8 j + 4 hn + 2 hm + pb of lane (g, t) is then
// the element at address 16 G + 8 hn + 2 t + pb (hn: the n8 half of the
// outputs, pb: the fragment pair's bit).
#pragma once
#include "hadamard_plan.cuh"
#include "ptx.cuh"

// B fragments of H_16 for lane (g, t), H_16[k][n] = (-1)^popc(k & n), as +-1 in
// the input's 16-bit type (f16 0x3c00, bf16 0x3f80; sign bit 0x8000): b[hn]
// holds columns n = g + 8 hn, register kb of it rows k = 2t + 8 kb + (0, 1)
// (low, high half). popc(k & n) = popc((2t + e) & g) + kb hn, so one word w
// serves (hn, kb) = (0, 0), (0, 1), (1, 0), and w with both signs flipped (1, 1).
__device__ __forceinline__ void rotq_tc_h16_b(bool bf16, uint32_t b[2][2]) {
    const unsigned lane = ptx_lane_id(), g = lane >> 2, t = lane & 3u;
    const uint32_t one = bf16 ? 0x3f80u : 0x3c00u;
    const uint32_t w = (one | (uint32_t)(__popc((2u * t) & g) & 1) << 15) |
                       ((one | (uint32_t)(__popc((2u * t + 1u) & g) & 1) << 15) << 16);
    b[0][0] = b[0][1] = b[1][0] = w;
    b[1][1] = w ^ 0x80008000u;
}

// Shared address of this lane's ldmatrix row for tile j = 0 of its warp:
// matrix i = lane / 8 (hm = i & 1, column half kh = i >> 1), row g = lane & 7,
// chunk C = sub_base / 8 + 128 w + 2 G + kh. Tile j adds 4 j0 + 64 j1 to C:
// chunk bit 2 (zero for j = 0) flips byte bit 6 of the swizzled address, and
// chunk bit 6 is past the swizzle (+1024 bytes).
__device__ __forceinline__ uint32_t rotq_tc_ldm_base(const char *stage, unsigned sub_base, unsigned tid) {
    const unsigned lane = ptx_lane_id(), w = ptx_opaque_u32(tid) >> 5, i = lane >> 3, g = lane & 7u;
    const unsigned G = (i & 1u) + 4u * (g >> 2) + 8u * (g & 1u) + 16u * ((g >> 1) & 1u);
    const unsigned C = sub_base / 8u + 128u * w + 2u * G + (i >> 1);
    return ptx_smem_addr(stage) + rotq_chunk_swizzle(C) * 16u;
}

// Bits 0..4 of the warp's 1024 elements (the stage of 16-bit values, f16 or
// BF16, 1024-byte aligned as TMA's swizzle needs) into v, in the layout above.
// tid: the thread's index in its subtile.
template <bool BF16>
__device__ __forceinline__ void rotq_tc_phase0(const char *stage, unsigned sub_base, unsigned tid, float v[32]) {
    const uint32_t a0 = rotq_tc_ldm_base(stage, sub_base, tid);
    uint32_t B[2][2];
    rotq_tc_h16_b(BF16, B);
    // (Lane-derived values are read afresh, ptx_lane_id, so that the compiler
    // does not hoist them and hold them live across the whole tile loop.)
    // Each tile's fragments loaded one tile ahead of its mma (asm volatile keeps
    // this order): two tiles' A registers live, not four (the build at seven
    // blocks an SM has 72 registers).
    uint32_t A[2][4];
    ptx_ldmatrix_x4(A[0], a0);
#pragma unroll
    for (int j = 0; j < 4; j++) {
        if (j < 3) ptx_ldmatrix_x4(A[(j + 1) & 1], ((j + 1) & 1 ? a0 ^ 64u : a0) + ((j + 1) >> 1) * 1024u);
#pragma unroll
        for (int hn = 0; hn < 2; hn++) {
            float *d = v + 8 * j + 4 * hn;
            d[0] = d[1] = d[2] = d[3] = 0.0f;
            if (BF16)
                ptx_mma_bf16_16816(d, A[j & 1], B[hn]);
            else
                ptx_mma_f16_16816(d, A[j & 1], B[hn]);
        }
    }
    rotq_butterfly<1>(v); // register bit 1 = hm = address bit 4
}

// v (the layout above) to W in the pair layout: register pairs (r, r + 1) with
// r = 8 j + 4 hn + 2 hm at address 1024 w + 16 G + 8 hn + 2 t of the subtile
// (rotq_w2_index is additive over disjoint bits: one base a lane, constant
// offsets).
__device__ __forceinline__ void rotq_tc_store_w2(float *W, unsigned sub_base, unsigned tid, const float v[32]) {
    const unsigned lane = ptx_lane_id(), w = ptx_opaque_u32(tid) >> 5, g = lane >> 2, t = lane & 3u;
    const unsigned lane_addr = 1024u * w + 64u * (g >> 2) + 128u * (g & 1u) + 256u * ((g >> 1) & 1u) + 2u * t;
    float *base = W + rotq_w2_index(sub_base | lane_addr);
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int hn = 0; hn < 2; hn++)
#pragma unroll
            for (int hm = 0; hm < 2; hm++) {
                const unsigned reg_addr = 16u * (unsigned)hm + 32u * (unsigned)(j & 1) + 512u * (unsigned)(j >> 1) +
                                          8u * (unsigned)hn;
                const int r = 8 * j + 4 * hn + 2 * hm;
                *(float2 *)(base + rotq_w2_index(reg_addr)) = make_float2(v[r], v[r + 1]);
            }
}
