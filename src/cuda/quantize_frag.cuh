// Quantize epilogues of the fragment kernel's B tasks (hadamard_factor_frag.cuh,
// fused rotate + quantize with a K * 2^m rotation): a warp holds 32 rotated,
// scaled values of one or two K rows, v[8 grp + c] at column jl + 64 grp + c of
// its row (jl: the lane's column bits 3..5 and 8..), and writes their codes.
// The rules are formats.h's, through the tile epilogues' helpers
// (quantize_common.cuh, quantize_tile_i4.cuh).
#pragma once
#include "quantize_tile.cuh"

// int8 / fp8 codes of the 32 values, x = v * inv, 8 bytes at q + jl + 64 grp
// (8-byte aligned rows); int8 adds the codes to *sum. SAFE: rotq_q_codes8.
template <bool FP8, bool SAFE = true>
__device__ __forceinline__ void rotq_fq_codes(const float v[32], float inv, uint8_t *q, uint32_t *sum) {
#pragma unroll
    for (int grp = 0; grp < 4; grp++) {
        uint32_t lo, hi;
        rotq_q_codes8<FP8, SAFE>(v + 8 * grp, inv, &lo, &hi, sum);
        *(uint2 *)(q + 64 * grp) = make_uint2(lo, hi);
    }
}

// Max over the lanes of a group: lane bits 0 .. log2(lpu) - 1 (column bits 3..).
template <bool NAN_MAX>
__device__ __forceinline__ float rotq_fq_group_max(float m, int lpu) {
#pragma unroll
    for (int o = 1; o < 8; o <<= 1) {
        if (o < lpu) {
            const float p = __shfl_xor_sync(0xffffffffu, m, o);
            m = NAN_MAX ? ptx_max_nan_f32(m, p) : fmaxf(m, p);
        }
    }
    return m;
}

// int4 groups of G = 32, 64 or 128 values (G == 2^GS): a group is column bits
// 0 .. GS - 1, i.e. the lane's 8 consecutive values, lane bits 0 .. GS - 4
// and, for 128, register bit 3 (grp pairs). Codes (nibbles, 4 bytes per 8
// values) at q + (col0 + 64 grp) / 2; the group's scale at scales[(col0 + 64
// grp) >> GS]. col0: the lane's first column in the row. The values are
// unscaled and fs (> 0, <= 1) is the rotation scale, folded in as in
// rotq_frag_quant_b. The lane reductions run once per group, and the
// divisions once per lane (two at G = 32): the lpu lanes of a group hold the
// same absmaxes, so lane j of them divides for inv (j even) or the scale (j
// odd) of group j / 2, and the others take inv by a shuffle.
template <int GS>
__device__ __forceinline__ void rotq_fq_int4_g(const float v[32], float fs, uint8_t *q, float *scales,
                                               int64_t col0) {
    constexpr int lpu = 1 << (GS - 3 < 3 ? GS - 3 : 3); // lanes per group along column bits 3..5
    constexpr int step = GS == 7 ? 2 : 1;               // G = 128: a group spans grp 2p, 2p + 1
    constexpr int NG = 4 / step;                        // groups a lane holds
    constexpr int ND = 2 * NG;                          // divisions of the lpu lanes: inv, scale a group
    constexpr int DPL = ND > lpu ? ND / lpu : 1;        // divisions a lane
    float gm[NG];
#pragma unroll
    for (int g = 0; g < NG; g++) {
        const int grp = g * step;
        gm[g] = rotq_qt_maxabs_nan<8, 2>(v + 8 * grp);
        if (step == 2) gm[g] = ptx_max_nan_f32(gm[g], rotq_qt_maxabs_nan<8, 2>(v + 8 * grp + 8));
        gm[g] = rotq_fq_group_max<true>(gm[g], lpu);
    }
    float all = gm[0]; // NaN-propagating: NaN < INFINITY is false
#pragma unroll
    for (int g = 1; g < NG; g++) all = ptx_max_nan_f32(all, gm[g]);
    const bool finite = __all_sync(0xffffffffu, all < INFINITY);
    if (!finite) { // NaN / Inf somewhere in the warp: formats.h's finite-only absmax
#pragma unroll
        for (int g = 0; g < NG; g++) {
            float m = 0.0f;
#pragma unroll
            for (int c = 0; c < 8 * step; c++) m = rotq_qt_absmax(m, v[8 * g * step + c]);
            gm[g] = rotq_fq_group_max<false>(m, lpu);
        }
    }
#pragma unroll
    for (int g = 0; g < NG; g++) gm[g] *= fs; // the scaled values' absmax
    const unsigned lane = ptx_lane_id(), j = lane & (unsigned)(lpu - 1), base = lane - j;
    float d[DPL];
#pragma unroll
    for (int k = 0; k < DPL; k++) {
        const unsigned di = (j + (unsigned)(lpu * k)) & (unsigned)(ND - 1), gi = di >> 1;
        float m = gm[0];
#pragma unroll
        for (int g = 1; g < NG; g++) m = gi == (unsigned)g ? gm[g] : m;
        const bool sl = di & 1u;
        d[k] = (sl ? m : ROTQ_I4_QMAX) / (sl ? ROTQ_I4_QMAX : m);
    }
    // col0 is a multiple of 8 and 64 grp one of the group size wherever a
    // group starts (grp even at G = 128), so the code and scale addresses are
    // one base each plus constant offsets: (col0 + 64 grp) / 2 = col0 / 2 + 32
    // grp, (col0 + 64 grp) >> GS = (col0 >> GS) + (64 grp >> GS).
    uint8_t *qb = q + (col0 >> 1);
    float *sb = scales + (col0 >> GS);
    float icode[NG], sc[NG];
#pragma unroll
    for (int g = 0; g < NG; g++) {
        const float inv = rotq_qt_inv_of(
            gm[g], __shfl_sync(0xffffffffu, d[(2 * g) / lpu], base + (unsigned)((2 * g) & (lpu - 1))));
        icode[g] = fs * inv;
        sc[g] = inv == 0.0f ? 0.0f : d[(2 * g + 1) / lpu];
    }
    // One branch for all codes (the finite warp needs no clamp).
    if (finite) {
#pragma unroll
        for (int i = 0; i < 4; i++)
            *(uint32_t *)(qb + 32 * i) = rotq_qt_i4x8<false>(v + 8 * i, icode[i / step]);
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++)
            *(uint32_t *)(qb + 32 * i) = rotq_qt_i4x8<true>(v + 8 * i, icode[i / step]);
    }
#pragma unroll
    for (int g = 0; g < NG; g++)
        if (j == (unsigned)((2 * g + 1) & (lpu - 1))) sb[(64 * g * step) >> GS] = sc[g];
}
__device__ __forceinline__ void rotq_fq_int4(const float v[32], float fs, int gs, uint8_t *q, float *scales,
                                             int64_t col0) {
    if (gs == 5)
        rotq_fq_int4_g<5>(v, fs, q, scales, col0);
    else if (gs == 6)
        rotq_fq_int4_g<6>(v, fs, q, scales, col0);
    else
        rotq_fq_int4_g<7>(v, fs, q, scales, col0);
}
