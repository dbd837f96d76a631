// int4 groups in the tile epilogue (quantize_tile.cuh). A lane takes units of
// CPL consecutive chunks (8 CPL values) of one group, so a group's multiplier
// costs one division per unit, and a group of G values lies in
// lpu = G / (8 CPL) consecutive lanes (CPL = 4: 1, 2, 4 for G = 32, 64, 128).
// From the padded fp32 W, 32 aligned values are contiguous (one address, and
// lanes 33 floats apart hit distinct banks); from the staged input the lanes
// read their chunks in a rotated order (SRC::I4_ROT, against bank conflicts)
// and the code words are rotated back before the store.
//
// The absmax is a NaN-propagating max (one instruction per value): finite for a
// group without NaN / Inf, and then it is formats.h's finite-only absmax and the
// codes need no NaN or range handling. Groups with a NaN or an Inf take the
// slow path (the finite-only absmax again, and clamped codes).
#pragma once
#include "quantize_row.cuh"

#define ROTQ_QT_I4_CPL_W 4 // chunks per unit from W (the host's team width uses it)

// w[j] = w[(j - rot) mod 4]: slot i held chunk (i + rot) mod 4 (8 SEL).
__device__ __forceinline__ void rotq_qt_unrotate4(uint32_t w[4], unsigned rot) {
    uint32_t s[4];
#pragma unroll
    for (int j = 0; j < 4; j++) s[j] = (rot & 1u) ? w[(j + 3) & 3] : w[j];
#pragma unroll
    for (int j = 0; j < 4; j++) w[j] = (rot & 2u) ? s[(j + 2) & 3] : s[j];
}

// N = 8 (or 4) codes of x = v * inv as int4 nibbles, element 0 in the low one
// (N = 4: the low 16 bits). F2IP
// rounds to nearest even, saturates to s8 and packs: the even elements go to
// the bytes of e, the odd ones to those of o, and a shift and a LOP3 merge the
// nibbles. Without SAFE, |x| < 7.5 is required: true for a finite group scaled
// by its own inv = RN(7 / absmax), where |x| <= RN(7 (1 + 2^-24)) <= 7 + 2^-21
// (or x = 0 when the group is flushed). SAFE is formats.h's rotq_quant_i4:
// max.NaN / min.NaN clamp to +-7 and keep a NaN, which the conversion makes 0.
template <bool SAFE, int N = 8>
__device__ __forceinline__ uint32_t rotq_qt_i4x8(const float *v, float inv) {
    static_assert(N == 8 || N == 4, "8 or 4 codes");
    int q[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        if (k >= N) {
            q[k] = 0;
            continue;
        }
        float x = __fmul_rn(v[k], inv);
        if (SAFE) x = ptx_min_nan_f32(ptx_max_nan_f32(x, -ROTQ_I4_QMAX), ROTQ_I4_QMAX);
        q[k] = __float2int_rn(x);
    }
    const uint32_t e = ptx_cvt_pack_s8(q[2], q[0], N == 8 ? ptx_cvt_pack_s8(q[6], q[4], 0u) : 0u);
    const uint32_t o = ptx_cvt_pack_s8(q[3], q[1], N == 8 ? ptx_cvt_pack_s8(q[7], q[5], 0u) : 0u);
    return ptx_bitselect(e, o << 4, 0x0f0f0f0fu);
}

// Max over the lpu lanes of a group (lpu <= MAXL, a power of two); gmask: the
// lanes taking part (the group's, or the whole warp when converged).
template <int MAXL, bool NAN_MAX>
__device__ __forceinline__ float rotq_qt_group_max(float m, unsigned lpu, unsigned gmask) {
#pragma unroll
    for (unsigned o = MAXL / 2; o > 0; o >>= 1) {
        if (o < lpu) {
            const float p = __shfl_xor_sync(gmask, m, o);
            m = NAN_MAX ? ptx_max_nan_f32(m, p) : fmaxf(m, p);
        }
    }
    return m;
}

// The lane's chunk rotation (SRC::I4_ROT), read afresh where used (register
// pressure: the plain kernel's 64-register cap).
template <class SRC, int CPL>
__device__ __forceinline__ unsigned rotq_qt_i4_rot(void) {
    return SRC::I4_ROT ? (ptx_lane_id() >> 1) & (CPL - 1u) : 0u;
}

// Tile row rs (matrix row `row`, stored when live) as int4 groups of
// a.group <= 128 values: thread t of the team (TS lanes, a multiple of lpu)
// takes units t, t + TS, ... The loop runs over the units of the team's part
// of the warp, so that every lane of the warp makes the same trips (the fast
// path's shuffles are over the converged warp); a lane past the row's last
// unit (TS > 32 and nu not a multiple of TS: whole groups) redoes unit ub and
// stores nothing.
template <int CPL, class SRC>
__device__ __forceinline__ void rotq_qt_i4_row(const rotq_q_args &a, const SRC &src, unsigned rs, int64_t row,
                                               bool live, unsigned t, unsigned TS) {
    static_assert(CPL == 4 || !SRC::I4_ROT, "rotq_qt_unrotate4 handles four chunks");
    constexpr int MAXL = 16 / CPL;
    const unsigned lpu = (unsigned)a.group / (8u * CPL);
    const unsigned nu = (unsigned)a.nch / CPL;
    const unsigned tw = t & ((TS < 32 ? TS : 32u) - 1u);
    uint8_t *qrow = (uint8_t *)a.q + (live ? row : 0) * a.q_stride;
    float *srow = a.scales + (live ? row : 0) * a.groups_per_row;
    for (unsigned ub = t - tw; ub < nu; ub += TS) {
        const bool ok = ub + tw < nu;
        const unsigned u = ok ? ub + tw : ub;
        float v[8 * CPL];
        src.template load_run<CPL>(rs, u * CPL, v, rotq_qt_i4_rot<SRC, CPL>());
        float gm = rotq_qt_group_max<MAXL, true>(rotq_qt_maxabs_nan<8 * CPL, 4>(v), lpu, 0xffffffffu);
        const bool finite = gm < INFINITY; // the same in every lane of the group
        if (!finite) {
            gm = 0.0f;
#pragma unroll
            for (int k = 0; k < 8 * CPL; k++) gm = rotq_qt_absmax(gm, v[k]);
            gm = rotq_qt_group_max<MAXL, false>(gm, lpu, rotq_qt_team_mask(lpu));
        }
        // inv and scale as rotq_quant_inv / rotq_quant_scale; inv is 0 exactly
        // when the group flushes. With two or more lanes per group, lane 1
        // divides for the scale while the others divide for inv (one division
        // sequence per lane instead of two), and takes inv from lane 0.
        const unsigned j = u & (lpu - 1u);
        const bool sl = j == 1u;
        const float num = sl ? gm : ROTQ_I4_QMAX, den = sl ? ROTQ_I4_QMAX : gm;
        const float d = num / den;
        float inv = gm > 0.0f && d < INFINITY ? d : 0.0f;
        float scale;
        if (lpu > 1u) {
            const float inv0 = __shfl_xor_sync(0xffffffffu, inv, 1);
            if (sl) inv = inv0;
            scale = inv == 0.0f ? 0.0f : d;
        } else {
            scale = inv == 0.0f ? 0.0f : gm / ROTQ_I4_QMAX;
        }
        const bool st = live && ok;
        if (st && j == (lpu > 1u ? 1u : 0u)) srow[(u * CPL) >> (a.group_shift - 3)] = scale;
        uint32_t w[CPL];
        if (finite) {
#pragma unroll
            for (int i = 0; i < CPL; i++) w[i] = rotq_qt_i4x8<false>(v + 8 * i, inv);
        } else {
#pragma unroll
            for (int i = 0; i < CPL; i++) w[i] = rotq_qt_i4x8<true>(v + 8 * i, inv);
        }
        if (!st) continue;
        if (SRC::I4_ROT) rotq_qt_unrotate4(w, rotq_qt_i4_rot<SRC, CPL>());
        uint8_t *p = qrow + u * (4u * CPL);
        if (CPL == 4 && ((uintptr_t)qrow & 15u) == 0) { // code rows need only 4-byte alignment
            *(uint4 *)p = make_uint4(w[0], w[CPL > 1 ? 1 : 0], w[CPL > 2 ? 2 : 0], w[CPL > 3 ? 3 : 0]);
        } else {
#pragma unroll
            for (int i = 0; i < CPL; i++) *(uint32_t *)(p + 4 * i) = w[i];
        }
    }
}
