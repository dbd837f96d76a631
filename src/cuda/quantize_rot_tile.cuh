// Fused power-of-two rotation + quantize on the Hadamard kernel's pipeline
// (hadamard_pow2.cuh): a persistent block walks over tiles of TILE_CTA
// elements, staged global -> shared (by TMA on sm_90 for dense inputs, else
// 16-byte cp.async) and double-buffered (rotq_stage_tile); phase 0 from the
// stage, later phases through the padded fp32 buffer W, in the same stage order
// as the Hadamard kernel and the CPU backend (ascending bits, then * scale).
// Instead of storing the rotated values, the last phase writes them (scaled)
// back to W and the block quantizes the tile's rows from W (quantize_tile.cuh),
// except for int8 / fp8 rows of exactly 2^L elements (L >= 6), int4 rows of
// one group (2^6, 2^7), and int4 groups of 32..128 in rows of 2^11 or 2^12 (after
// the Hadamard kernel's pair exchanges), which are quantized straight from the
// last phase's registers (rotq_qt_reg_epilogue, rotq_qt_i4_pair_epilogue: no W
// round trip, barriers only where a row spans warps, coalesced code stores, and
// a short path for warps without NaN / Inf).
//
// Used when a row (cols = blocks_per_row * 2^L) is a power of two of at most
// TILE_CTA elements and at least 8, so a tile holds TILE_CTA / cols whole rows;
// other shapes take quantize_rot.cu's kernel.
#pragma once
#include "hadamard_pow2.cuh" // rotq_stage_tile, rotq_read_stage32, rotq_phase, plan, smem layout

// The input tiles' TMA loads marked evict-first in L2 (the input is read once).
// Same-run A/B on the H100, f16, 2^25 elements: int4 g128 at n = 128 40.1 -> 38.1
// us (-5%), int8 at 128 -1%, int4 at 4096 -1%, the rest within 0.5%. (For the
// Hadamard kernel at 2^27 it measured 1-4% slower: power-of-two v24.) 0: A/B switch.
#ifndef ROTQ_QT_EVICT_FIRST
#define ROTQ_QT_EVICT_FIRST 1
#endif
#include "quantize_launch.cuh"
#include "quantize_tile.cuh"

// ---- register epilogue ---------------------------------------------------------
// Rows of exactly 2^L elements (cols == n) with per-row or static codes (int8,
// fp8): the values of the last phase are quantized where they are, without the
// round trip through W. In the last phase (lo = plan::lo(PHASES - 1) >= 5) a
// thread's register r holds address dep(tid, lo) | r << lo: the CB low register
// bits are column bits, the others (NR > 1, only for L < 10) row bits; the lanes
// hold 32 consecutive columns and a row spans WPR warps (2^(L-10) for L > 10).

// 4 x 4 byte transpose across the 4 lanes of a quad: lane q holds byte j =
// code of register j at column q of the quad; afterwards byte c = code of
// register q at column c. sel2, sel1: the lane's byte_perm selectors of the
// two steps (rotq_qt_quad_sel), so a step is one shuffle and one PRMT.
__device__ __forceinline__ uint32_t rotq_qt_quad_transpose(uint32_t w, uint32_t sel2, uint32_t sel1) {
    w = __byte_perm(w, __shfl_xor_sync(0xffffffffu, w, 2), sel2);
    return __byte_perm(w, __shfl_xor_sync(0xffffffffu, w, 1), sel1);
}

__device__ __forceinline__ void rotq_qt_quad_sel(unsigned lane, uint32_t *sel2, uint32_t *sel1) {
    *sel2 = (lane & 2) ? 0x3276u : 0x5410u;
    *sel1 = (lane & 1) ? 0x3715u : 0x6240u;
}

// Reduce-scatter over the lanes of a warp: m[rr] is this lane's part of row
// rr (NR = 2^k rows); afterwards every lane holds the reduction of row
// lane >> (5 - k) over the whole warp (lane rr << (5 - k) holds row rr's).
template <int NR, class T, class OP>
__device__ __forceinline__ T rotq_qt_reduce_scatter(T m[NR], unsigned lane, OP op) {
#pragma unroll
    for (int j = 0; j < (NR >= 16 ? 4 : NR >= 8 ? 3 : NR >= 4 ? 2 : NR >= 2 ? 1 : 0); j++) {
        const int h = NR >> (j + 1), o = 16 >> j;
        const bool hi = (lane & (unsigned)o) != 0;
#pragma unroll
        for (int i = 0; i < h; i++) {
            const T send = hi ? m[i] : m[i + h];
            const T keep = hi ? m[i + h] : m[i];
            m[i] = op(keep, __shfl_xor_sync(0xffffffffu, send, o));
        }
    }
    T x = m[0];
    if constexpr (NR == 1) {
        return op.warp(x); // the whole warp: one redux
    } else {
#pragma unroll
        for (int o = 16 / NR; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(0xffffffffu, x, o));
        return x;
    }
}

// The reductions' operators; warp(x): over the whole warp at once. The max is
// taken of finite-only absmaxes (finite, >= 0).
struct rotq_qt_max_op {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
    __device__ __forceinline__ float warp(float x) const { return rotq_warp_max_nonneg(x); }
};
struct rotq_qt_add_op {
    __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const { return a + b; }
    __device__ __forceinline__ uint32_t warp(uint32_t x) const { return rotq_warp_sum_u32(x); }
};

// Reduction of x over the WPR warps of a row (WPR > 1) through red; every
// thread of the block takes part (one barrier). From 8 warps on, lane l reads
// warp (l mod WPR)'s part and a butterfly finishes (log2 WPR shuffles rather
// than WPR reads).
template <int WPR, class T, class OP>
__device__ __forceinline__ T rotq_qt_row_combine(T x, uint32_t *red, OP op) {
    if (WPR == 1) return x;
    const unsigned warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31u) == 0) red[warp] = *(uint32_t *)&x;
    __syncthreads();
    const unsigned w0 = warp & ~(unsigned)(WPR - 1);
    if (WPR >= 8) {
        uint32_t u = red[w0 + (threadIdx.x & (unsigned)(WPR - 1))];
        x = *(T *)&u;
#pragma unroll
        for (int o = WPR / 2; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(0xffffffffu, x, o));
        return x;
    }
    uint32_t u = red[w0];
    x = *(T *)&u;
#pragma unroll
    for (int w = 1; w < WPR; w++) {
        u = red[w0 + w];
        x = op(x, *(T *)&u);
    }
    return x;
}

// Whether x = RN(v * m), m = s * inv, equals the CPU's RN(RN(v * s) * inv)
// for every v, s a power of two with |s| <= 1: v * s is exact unless it is
// subnormal, and m is exact when normal (or 0, for a flushed row: then both
// give v times a zero of s's sign). With inv <= 2^100 a value whose v * s is
// subnormal has |x| < 2^-126 * 2^100, far below half the smallest code step:
// a zero code (of v * s's sign, for fp8) both ways.
__device__ __forceinline__ bool rotq_qt_fold(float inv, float m) {
    return (inv == 0.0f) | ((inv <= 0x1p100f) & (fabsf(m) >= 0x1p-126f));
}

// |s| > 1 (ROTQ_QT_SCALE_LARGE): y = RN(v * s) before the absmax, since the
// scaling may overflow; the other classes scale later (rotq_qt_multiplier).
__device__ __forceinline__ void rotq_qt_scale_first(float v[32], float s, int mode) {
    if (mode == ROTQ_QT_SCALE_LARGE) {
#pragma unroll
        for (int r = 0; r < 32; r++) v[r] = __fmul_rn(v[r], s);
    }
}

// The multiplier of the codes for this lane's row or group scale inv (the
// epilogue's x = RN(RN(v * s) * inv)): s * inv in one product where rotq_qt_fold
// allows it in the whole warp (a power-of-two s), else inv, with v scaled by s
// here unless the caller did so first (|s| > 1, ROTQ_QT_SCALE_LARGE).
__device__ __forceinline__ float rotq_qt_multiplier(float v[32], float s, float inv, int mode) {
    const float sinv = __fmul_rn(s, inv);
    if (mode == ROTQ_QT_SCALE_POW2 && __all_sync(0xffffffffu, rotq_qt_fold(inv, sinv))) return sinv;
    if (mode != ROTQ_QT_SCALE_LARGE) {
#pragma unroll
        for (int r = 0; r < 32; r++) v[r] = __fmul_rn(v[r], s);
    }
    return inv;
}

// Whether the register epilogue computes a scale per row: the per-row kinds, and
// int4 with one group per row (the only int4 shape it takes).
template <int KIND>
__host__ __device__ constexpr bool rotq_qt_row_scaled(void) {
    return rotq_q_kind<KIND>::PER_ROW || KIND == ROTQ_QUANT_INT4_GROUP;
}

// The codes of the thread's 32 values into cw (byte j of cw[g]: register
// 4g + j). inv: NR == 1: the row's; NR > 1: row lane >> CB's (PER_ROW kinds;
// the static inv otherwise). SAFE: see rotq_qt_i8x2; fp8 NaN fix-up.
template <int KIND, int CB, bool SAFE>
__device__ __forceinline__ void rotq_qt_codes(float v[32], float inv, uint32_t cw[8]) {
    typedef rotq_q_kind<KIND> K;
    constexpr int NR = 1 << (5 - CB);
#pragma unroll
    for (int rr = 0; rr < NR; rr++) {
        const float f = (rotq_qt_row_scaled<KIND>() && NR > 1) ? __shfl_sync(0xffffffffu, inv, rr << CB) : inv;
#pragma unroll
        for (int c = 0; c < (1 << CB); c++) v[(rr << CB) | c] = __fmul_rn(v[(rr << CB) | c], f);
    }
#pragma unroll
    for (int g = 0; g < 8; g++) {
        const float *x = v + 4 * g;
        if (K::FP8) {
            cw[g] = rotq_qt_fp8x2(x[1], x[0], rotq_qt_fp8x2(x[3], x[2], 0u));
            if (SAFE) cw[g] = rotq_qt_fp8_fix(cw[g]);
        } else if (KIND == ROTQ_QUANT_INT4_GROUP) {
            // int4 codes as bytes (nibbled at the store): formats.h's
            // rotq_quant_i4, the clamp only where the group holds NaN / Inf
            float c[4] = {x[0], x[1], x[2], x[3]};
            if (SAFE) {
#pragma unroll
                for (int k = 0; k < 4; k++)
                    c[k] = ptx_min_nan_f32(ptx_max_nan_f32(c[k], -ROTQ_I4_QMAX), ROTQ_I4_QMAX);
            }
            cw[g] = rotq_qt_i8x2<false>(c[1], c[0], rotq_qt_i8x2<false>(c[3], c[2], 0u));
        } else {
            cw[g] = rotq_qt_i8x2<SAFE>(x[1], x[0], rotq_qt_i8x2<SAFE>(x[3], x[2], 0u));
        }
    }
}

// v: the last phase's values before the rotation's scale s, which is applied
// here as the CPU does: y = RN(v * s), then x = RN(y * inv). For |s| <= 1 no
// finite y overflows and |y| = RN(|v| |s|) grows with |v|, so the absmax (and
// the NaN / Inf test) is taken on v and scaled once; for a power-of-two s the
// two products fold into one where rotq_qt_fold allows (qa.scale_mode).
//
// int4 (KIND == ROTQ_QUANT_INT4_GROUP) only with one group per row (group = 2^L):
// the row's absmax is the group's, its scale the row's only one, and the codes
// are stored as nibbles, two bytes (4 columns) a lane.
template <int KIND, int L, bool SUMS, bool PAIRS>
__device__ __forceinline__ void rotq_qt_reg_epilogue(const rotq_q_args &qa, float v[32], float s, unsigned sub,
                                                     unsigned tid, int64_t row0, unsigned rv, uint32_t *red,
                                                     uint32_t *red2) {
    typedef rotq_pow2_plan<L> plan;
    typedef rotq_q_kind<KIND> K;
    constexpr bool I4 = KIND == ROTQ_QUANT_INT4_GROUP;
    constexpr bool ROW_AM = rotq_qt_row_scaled<KIND>();
    constexpr int lo = plan::lo(plan::PHASES - 1);
    constexpr int CB = L - lo < 5 ? L - lo : 5;
    constexpr int NR = 1 << (5 - CB);
    constexpr int WPR = NR > 1 ? 1 : plan::SUB_THREADS / 32;
    constexpr unsigned CM = (1u << CB) - 1u;
    const unsigned lane = threadIdx.x & 31u;
    // Tile-local row of register row rr: every subtile holds TILE / 2^L rows.
    const unsigned srow = sub * (unsigned)(plan::TILE >> L);
    // The row factor: NR == 1: of the thread's row; NR > 1: of row lane >> CB
    // (after a reduce-scatter: one division per lane, not per row).
    float inv_l = qa.static_inv;
    const int mode = qa.scale_mode;
    rotq_qt_scale_first(v, s, mode);
    // Whether the warp's values are all finite: then the codes need no NaN or
    // range handling, and the NaN-propagating max is the finite-only absmax.
    bool finite = false;
    if (ROW_AM) {
        float m[NR];
#pragma unroll
        for (int rr = 0; rr < NR; rr++) m[rr] = rotq_qt_maxabs_nan<1 << CB, NR >= 4 ? 1 : 4 / NR>(v + (rr << CB));
        float all = m[0];
#pragma unroll
        for (int rr = 1; rr < NR; rr++) all = ptx_max_nan_f32(all, m[rr]);
        finite = __all_sync(0xffffffffu, all < INFINITY);
        if (!finite) {
#pragma unroll
            for (int rr = 0; rr < NR; rr++) {
                m[rr] = 0.0f;
#pragma unroll
                for (int c = 0; c < (1 << CB); c++) m[rr] = rotq_qt_absmax(m[rr], v[(rr << CB) | c]);
            }
        }
        float am = rotq_qt_reduce_scatter<NR>(m, lane, rotq_qt_max_op());
        am = rotq_qt_row_combine<WPR>(am, red, rotq_qt_max_op());
        if (mode != ROTQ_QT_SCALE_LARGE) am = __fmul_rn(am, fabsf(s));
        inv_l = rotq_quant_inv(am, K::QMAX);
        const unsigned lr = srow + (NR > 1 ? lane >> CB : 0u);
        const bool writer = NR > 1 ? (lane & CM) == 0 : tid == 0;
        if (writer && lr < rv) qa.scales[row0 + lr] = rotq_quant_scale(am, K::QMAX);
    }
    const float mul = rotq_qt_multiplier(v, s, inv_l, mode);
    uint32_t cw[8];
    if (finite)
        rotq_qt_codes<KIND, CB, false>(v, mul, cw);
    else
        rotq_qt_codes<KIND, CB, true>(v, mul, cw);
    if (KIND == ROTQ_QUANT_INT8_ROW && SUMS) {
        // Row sums by dp4a on the code words (a word spans two rows when CB == 1).
        uint32_t sums[NR];
#pragma unroll
        for (int rr = 0; rr < NR; rr++) sums[rr] = 0;
#pragma unroll
        for (int g = 0; g < 8; g++) {
            if (CB >= 2) {
                sums[(4 * g) >> CB] = (uint32_t)__dp4a((int)cw[g], 0x01010101, (int)sums[(4 * g) >> CB]);
            } else {
                sums[2 * g] = (uint32_t)__dp4a((int)cw[g], 0x00000101, (int)sums[2 * g]);
                sums[2 * g + 1] = (uint32_t)__dp4a((int)cw[g], 0x01010000, (int)sums[2 * g + 1]);
            }
        }
        uint32_t sum = rotq_qt_reduce_scatter<NR>(sums, lane, rotq_qt_add_op());
        sum = rotq_qt_row_combine<WPR>(sum, red2, rotq_qt_add_op());
        const unsigned lr = srow + (NR > 1 ? lane >> CB : 0u);
        const bool writer = NR > 1 ? (lane & CM) == 0 : tid == 0;
        if (writer && lr < rv) qa.row_sums[row0 + lr] = (int32_t)sum;
    }
    if (PAIRS) {
        // The pair layout (rotq_pow2_pair_phases, P >= 2): word g is already 4
        // consecutive codes, columns dep2(tid) + addr2(4g), lanes contiguous.
        typedef rotq_pow2_pair_plan<L> pp;
        static_assert(!PAIRS || (pp::ON && pp::P >= 2 && NR == 1 && !I4), "pair epilogue: rows of 2^11, 2^12");
        if (srow < rv) {
            uint8_t *qrow = (uint8_t *)qa.q + (row0 + srow) * qa.q_stride + pp::dep2(tid);
#pragma unroll
            for (int g = 0; g < 8; g++) *(uint32_t *)(qrow + pp::addr2(4 * g)) = cw[g];
        }
        return;
    }
    // A quad transpose per word, so each lane stores 4 consecutive codes of
    // register r = 4g + q (the warp: 4 x 32 contiguous bytes). r's row is
    // (4g >> CB) + (q >> CB), its column bits (4g & CM) + (q & CM): one base
    // pointer per thread, the g parts as constant offsets and row steps.
    const unsigned q4 = lane & 3u;
    uint32_t sel2, sel1;
    // Loop invariants that ptxas keeps live across the tile loop; where that
    // spills (L = 9, 14, 15: measured) they are recomputed per tile instead.
    rotq_qt_quad_sel(L == 9 || L >= 14 ? ptx_lane_id() : lane, &sel2, &sel1);
    const unsigned dep = rotq_phase_dep(tid, lo);
    const unsigned lrow = srow + (q4 >> CB);
    const unsigned col = (dep & ((1u << L) - 1u) & ~3u) | ((q4 & CM) << lo);
    uint8_t *qrow = (uint8_t *)qa.q + (row0 + lrow) * qa.q_stride + (I4 ? col >> 1 : col);
#pragma unroll
    for (int g = 0; g < 8; g++) {
        const uint32_t w = rotq_qt_quad_transpose(cw[g], sel2, sel1);
        const unsigned rg = (unsigned)(4 * g) >> CB;
        // rows advance by 4 >> CB per word (2 when CB == 1), or by 1 every 2^CB / 4 words
        if (g > 0) qrow += (int64_t)(rg - ((unsigned)(4 * g - 4) >> CB)) * qa.q_stride;
        if (lrow + rg < rv) {
            if (I4) {
                // bytes c0..c3 -> nibbles, the even column low: (c & 0xf) | (c' & 0xf) << 4
                const uint32_t n = w & 0x0f0f0f0fu;
                const uint32_t p = __byte_perm(n | (n >> 4), 0u, 0x0020u);
                *(uint16_t *)(qrow + ((((unsigned)(4 * g) & CM) << lo) >> 1)) = (uint16_t)p;
            } else {
                *(uint32_t *)(qrow + (((unsigned)(4 * g) & CM) << lo)) = w;
            }
        }
    }
}

// ---- int4 groups from the pair layout -----------------------------------------
// Rows of 2^11 or 2^12 with int4 groups of G = 32, 64 or 128, after
// rotq_pow2_pair_phases (unscaled): register group h (V = 2^P consecutive
// columns, P = 3 or 2) of thread t lies at columns dep2(t) + 512 h, so for every
// h a group is 2^LB = G / V consecutive lanes of one warp. Per h a
// NaN-propagating max over the lane's V values, a reduce-scatter over the LB
// group lane bits (lane l ends with value idx(l) = (l >> (LB - K)) & (H - 1)
// of its group, H = 2^K values), the scale and the multiplier there, one
// shuffle per h back, and the codes as nibbles: V / 2 bytes per h, lanes
// contiguous. Rounding, NaN / Inf handling and the scale's place are those of
// the W path (quantize_tile_i4.cuh) and formats.h.

// Max over the group's lanes of m[0..H) by a reduce-scatter (see above); NAN_MAX:
// NaN-propagating, else fmaxf (finite-only values).
template <int H, int LB, bool NAN_MAX>
__device__ __forceinline__ float rotq_qt_group_scatter_max(float m[H], unsigned lane) {
#pragma unroll
    for (int j = 0; j < LB; j++) {
        const unsigned o = 1u << (LB - 1 - j);
        const int cnt = H >> j; // values left before this round
        if (cnt > 1) {
            const bool hi = (lane & o) != 0;
#pragma unroll
            for (int i = 0; i < cnt / 2; i++) {
                const float send = hi ? m[i] : m[i + cnt / 2];
                const float keep = hi ? m[i + cnt / 2] : m[i];
                const float p = __shfl_xor_sync(0xffffffffu, send, o);
                m[i] = NAN_MAX ? ptx_max_nan_f32(keep, p) : fmaxf(keep, p);
            }
        } else {
            const float p = __shfl_xor_sync(0xffffffffu, m[0], o);
            m[0] = NAN_MAX ? ptx_max_nan_f32(m[0], p) : fmaxf(m[0], p);
        }
    }
    return m[0];
}

template <int L, int LB, bool SAFE>
__device__ __forceinline__ void rotq_qt_i4_pair_codes(uint8_t *qp, const float v[32], float mul, unsigned lane) {
    typedef rotq_pow2_pair_plan<L> pp;
    constexpr int V = 1 << pp::P, H = 32 / V, K = H == 8 ? 3 : 2;
#pragma unroll
    for (int h = 0; h < H; h++) {
        const float f = __shfl_sync(0xffffffffu, mul, (lane & ~((1u << LB) - 1u)) | ((unsigned)h << (LB - K)));
        if (V == 4)
            *(uint16_t *)(qp + (h << 8)) = (uint16_t)rotq_qt_i4x8<SAFE, 4>(v + 4 * h, f);
        else
            *(uint32_t *)(qp + (h << 8)) = rotq_qt_i4x8<SAFE>(v + 8 * h, f);
    }
}

// v: the last phase's values before the rotation's scale s (applied as
// rotq_qt_reg_epilogue does: the absmax on v scaled once, s folded into the
// multiplier where rotq_qt_fold allows). Groups of 2^(LB + P).
template <int L, int LB>
__device__ __forceinline__ void rotq_qt_i4_pair_epilogue(const rotq_q_args &qa, float v[32], float s, unsigned sub,
                                                         unsigned tid, int64_t row0, unsigned rv) {
    typedef rotq_pow2_pair_plan<L> pp;
    constexpr int V = 1 << pp::P, H = 32 / V, K = H == 8 ? 3 : 2;
    static_assert(pp::ON && pp::P >= 2 && LB >= K && LB <= 5, "groups of 32..128 at 2^11, 2^12");
    const unsigned lane = threadIdx.x & 31u;
    const int mode = qa.scale_mode;
    rotq_qt_scale_first(v, s, mode);
    float m[H];
#pragma unroll
    for (int h = 0; h < H; h++) m[h] = rotq_qt_maxabs_nan<V, 2>(v + V * h);
    float am = rotq_qt_group_scatter_max<H, LB, true>(m, lane);
    const bool finite = __all_sync(0xffffffffu, am < INFINITY);
    if (!finite) { // the finite-only absmax (formats.h), for the whole warp
#pragma unroll
        for (int h = 0; h < H; h++) {
            m[h] = 0.0f;
#pragma unroll
            for (int i = 0; i < V; i++) m[h] = rotq_qt_absmax(m[h], v[V * h + i]);
        }
        am = rotq_qt_group_scatter_max<H, LB, false>(m, lane);
    }
    if (mode != ROTQ_QT_SCALE_LARGE) am = __fmul_rn(am, fabsf(s));
    // The multiplier comes from the lowest lane of each (group, h) slot. With
    // two or more lanes a slot, its lane 1 divides for the scale instead of inv
    // and stores it (one division a lane); else the lowest lane does both.
    constexpr bool SPLIT = LB > K;
    constexpr unsigned SW = SPLIT ? 1u : 0u; // the slot lane that stores the scale
    float inv;
    const float d = SPLIT ? rotq_qt_inv_or_scale(am, ROTQ_I4_QMAX, (lane & ((1u << (LB - K)) - 1u)) == 1u, &inv)
                          : (inv = rotq_quant_inv(am, ROTQ_I4_QMAX));
    const unsigned srow = sub; // one row per subtile
    if ((lane & ((1u << (LB - K)) - 1u)) == SW && srow < rv) {
        const unsigned h = (lane >> (LB - K)) & (H - 1u);
        const unsigned col = pp::dep2(tid) + (h << 9);
        qa.scales[(row0 + srow) * qa.groups_per_row + (col >> (LB + pp::P))] =
            SPLIT ? d : rotq_quant_scale(am, ROTQ_I4_QMAX);
    }
    const float mul = rotq_qt_multiplier(v, s, inv, mode);
    if (srow >= rv) return; // after the warp-wide shuffles
    uint8_t *qp = (uint8_t *)qa.q + (row0 + srow) * qa.q_stride + (pp::dep2(tid) >> 1);
    if (finite)
        rotq_qt_i4_pair_codes<L, LB, false>(qp, v, mul, lane);
    else
        rotq_qt_i4_pair_codes<L, LB, true>(qp, v, mul, lane);
}

// Groups of 32, 64, 128 (qa.group_shift 5..7).
template <int L>
__device__ __forceinline__ void rotq_qt_i4_pair_any(const rotq_q_args &qa, float v[32], float s, unsigned sub,
                                                    unsigned tid, int64_t row0, unsigned rv) {
    constexpr int P = rotq_pow2_pair_plan<L>::P;
    if (qa.group_shift == 5)
        rotq_qt_i4_pair_epilogue<L, 5 - P>(qa, v, s, sub, tid, row0, rv);
    else if (qa.group_shift == 6)
        rotq_qt_i4_pair_epilogue<L, 6 - P>(qa, v, s, sub, tid, row0, rv);
    else
        rotq_qt_i4_pair_epilogue<L, 7 - P>(qa, v, s, sub, tid, row0, rv);
}

// ---- rows of 2^7: the quad layout ----------------------------------------------
// A one-warp subtile holds 8 rows of 128. After phase 0 (bits 0..4) the values
// go through W in 16-byte chunks (address bits 0, 1 stay in registers) and come
// back with the registers on address bits {0, 1, 5, 6, 7} (register bits 0, 1 ->
// a0, a1; 2, 3 -> a5, a6, butterflied; 4 -> a7, a row bit) and the lanes on
// {2, 3, 4, 8, 9} (lane bits 0..2 -> a2..a4; 3, 4 -> a8, a9: rows). A row is 8
// lanes x 16 values, and each register quad is 4 consecutive columns, so the
// codes are stored as they are: 8 four-byte stores a lane, each warp instruction
// 4 runs of 32 bytes. Against the 32-bit exchange (lanes on columns): 8 + 8
// 16-byte shared accesses instead of 32 + 32, and no quad transpose of the codes.
struct rotq_qt_quad_plan {
    __device__ static constexpr unsigned addr(int r) { // subtile address of register r
        return ((unsigned)r & 3u) | ((((unsigned)r >> 2) & 3u) << 5) | (((unsigned)r >> 4) << 7);
    }
    __device__ static unsigned dep(unsigned lane) { return ((lane & 7u) << 2) | ((lane >> 3) << 8); }
};

// Phase 1 at 2^7 in the quad layout (unscaled), from the phase-0 values.
__device__ __forceinline__ void rotq_qt_quad_exchange(float *W, unsigned sub_base, unsigned lane, float v[32]) {
    const unsigned b0 = rotq_w4_index(sub_base | (lane << 5));
#pragma unroll
    for (int c = 0; c < 8; c++)
        *(float4 *)(W + b0 + rotq_w4_index(4u * c)) = make_float4(v[4 * c], v[4 * c + 1], v[4 * c + 2], v[4 * c + 3]);
    __syncwarp();
    const unsigned b1 = rotq_w4_index(sub_base | rotq_qt_quad_plan::dep(lane));
#pragma unroll
    for (int c = 0; c < 8; c++) {
        const float4 t = *(const float4 *)(W + b1 + rotq_w4_index(rotq_qt_quad_plan::addr(4 * c)));
        v[4 * c] = t.x, v[4 * c + 1] = t.y, v[4 * c + 2] = t.z, v[4 * c + 3] = t.w;
    }
    rotq_butterfly<2>(v);
    rotq_butterfly<3>(v);
}

// Max (OP) of a row's per-lane parts over its 8 lanes: m[0], m[1] are this
// lane's parts of its rows 2 (lane >> 3) and + 1; lane l ends with row
// (l >> 2) & 1's result.
template <class T, class OP>
__device__ __forceinline__ T rotq_qt_quad_reduce(T m0, T m1, unsigned lane, OP op) {
    const bool hi = (lane & 4u) != 0;
    T x = op(hi ? m1 : m0, __shfl_xor_sync(0xffffffffu, hi ? m0 : m1, 4));
    x = op(x, __shfl_xor_sync(0xffffffffu, x, 2));
    return op(x, __shfl_xor_sync(0xffffffffu, x, 1));
}

// The codes of register quad g (4 consecutive columns) times f: int8 / fp8
// bytes, or int4 nibbles in the low 16 bits.
template <int KIND, bool SAFE>
__device__ __forceinline__ uint32_t rotq_qt_quad_code(const float *v, float f) {
    if (KIND == ROTQ_QUANT_INT4_GROUP) return rotq_qt_i4x8<SAFE, 4>(v, f);
    const float x0 = __fmul_rn(v[0], f), x1 = __fmul_rn(v[1], f), x2 = __fmul_rn(v[2], f), x3 = __fmul_rn(v[3], f);
    if (rotq_q_kind<KIND>::FP8) {
        const uint32_t w = rotq_qt_fp8x2(x1, x0, rotq_qt_fp8x2(x3, x2, 0u));
        return SAFE ? rotq_qt_fp8_fix(w) : w;
    }
    return rotq_qt_i8x2<SAFE>(x1, x0, rotq_qt_i8x2<SAFE>(x3, x2, 0u));
}

// The register epilogue of rotq_qt_reg_epilogue (the same scale handling, NaN /
// Inf rules and rounding) in the quad layout: rows of 128 with a scale per row
// (int8, fp8, int4 with group 128) or the static fp8 scale.
template <int KIND, bool SUMS>
__device__ __forceinline__ void rotq_qt_quad_epilogue(const rotq_q_args &qa, float v[32], float s, unsigned sub,
                                                      unsigned lane, int64_t row0, unsigned rv) {
    typedef rotq_q_kind<KIND> K;
    constexpr bool I4 = KIND == ROTQ_QUANT_INT4_GROUP;
    constexpr bool ROW_AM = rotq_qt_row_scaled<KIND>();
    const int mode = qa.scale_mode;
    const unsigned rbase = sub * 8u + 2u * (lane >> 3); // the lane's rows: rbase + (register bit 4)
    const unsigned lr = rbase + ((lane >> 2) & 1u);     // the row whose reductions the lane ends with
    rotq_qt_scale_first(v, s, mode);
    float inv_l = qa.static_inv;
    bool finite = false;
    if (ROW_AM) {
        float m0 = rotq_qt_maxabs_nan<16, 4>(v), m1 = rotq_qt_maxabs_nan<16, 4>(v + 16);
        finite = __all_sync(0xffffffffu, ptx_max_nan_f32(m0, m1) < INFINITY);
        if (!finite) {
            m0 = m1 = 0.0f;
#pragma unroll
            for (int i = 0; i < 16; i++) m0 = rotq_qt_absmax(m0, v[i]), m1 = rotq_qt_absmax(m1, v[16 + i]);
        }
        float am = rotq_qt_quad_reduce(m0, m1, lane, rotq_qt_max_op());
        if (mode != ROTQ_QT_SCALE_LARGE) am = __fmul_rn(am, fabsf(s));
        // One division a lane: lanes 4k divide for inv (the multiplier comes from
        // them), lanes 4k + 1 for the scale, which they store.
        const float d = rotq_qt_inv_or_scale(am, K::QMAX, (lane & 3u) == 1u, &inv_l);
        if ((lane & 3u) == 1u && lr < rv) qa.scales[row0 + lr] = d;
    }
    const float mul = rotq_qt_multiplier(v, s, inv_l, mode);
    float f[2];
#pragma unroll
    for (int rr = 0; rr < 2; rr++)
        f[rr] = ROW_AM ? __shfl_sync(0xffffffffu, mul, (lane & 24u) | ((unsigned)rr << 2)) : mul;
    // Two loops (not a select per word): with the select, ptxas computed the
    // fp8 NaN fix-up for every word and selected it away for finite warps.
    uint32_t cw[8];
    if (finite) {
#pragma unroll
        for (int g = 0; g < 8; g++) cw[g] = rotq_qt_quad_code<KIND, false>(v + 4 * g, f[g >> 2]);
    } else {
#pragma unroll
        for (int g = 0; g < 8; g++) cw[g] = rotq_qt_quad_code<KIND, true>(v + 4 * g, f[g >> 2]);
    }
    if (KIND == ROTQ_QUANT_INT8_ROW && SUMS) {
        uint32_t s0 = 0, s1 = 0;
#pragma unroll
        for (int g = 0; g < 4; g++) {
            s0 = (uint32_t)__dp4a((int)cw[g], 0x01010101, (int)s0);
            s1 = (uint32_t)__dp4a((int)cw[g + 4], 0x01010101, (int)s1);
        }
        const uint32_t sum = rotq_qt_quad_reduce(s0, s1, lane, rotq_qt_add_op());
        if ((lane & 3u) == 0 && lr < rv) qa.row_sums[row0 + lr] = (int32_t)sum;
    }
    const unsigned col = (lane & 7u) << 2;
#pragma unroll
    for (int rr = 0; rr < 2; rr++) {
        if (rbase + rr >= rv) continue;
        uint8_t *qrow = (uint8_t *)qa.q + (row0 + rbase + rr) * qa.q_stride;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            if (I4)
                *(uint16_t *)(qrow + ((col + 32u * j) >> 1)) = (uint16_t)cw[4 * rr + j];
            else
                *(uint32_t *)(qrow + col + 32u * j) = cw[4 * rr + j];
        }
    }
}

// Rows of the tile starting at matrix row row0 that exist (R or fewer).
__device__ __forceinline__ unsigned rotq_qt_tile_rows(const rotq_q_args &qa, int64_t row0, unsigned R) {
    const int64_t left = qa.rows - row0;
    return left < (int64_t)R ? (unsigned)left : R;
}

// Register cap: 768 threads per SM for L = 6..13 (three 256-thread blocks or
// six of 128; 80 registers: no spills, and faster on the H100 than 64 with
// spills or 128 with two blocks); single-phase sizes (L <= 5) keep four
// blocks; L = 14, 15 have 64 by block size.
template <int L, int BT>
struct rotq_qt_min_blocks {
    static constexpr int value =
        L >= 6 && L <= 13 ? 768 / rotq_pow2_plan<L, BT>::THREADS : rotq_pow2_min_blocks<L>::value;
};

// Block threads of the fused kernel where a row fits a 128-thread block's tile:
// 2^7 and 2^12 (the rows of the bench, measured). Half the tile a block, twice
// the blocks an SM, the same threads: a persistent grid's last, partial round
// of tiles is half as long. Same-run A/B on the H100, f16 at 2^25: int4 g128
// n = 4096 45.5 -> 42.8 us, int8 / fp8 n = 128 -2 / -2.3%, int8 / fp8 n = 4096
// -0.8%; at 2^27 int4 n = 4096 -6%, the rest within +-0.7%. (The Hadamard
// kernel with 128-thread blocks: 2^27 +0.5 to +0.8% at n <= 1024, 2^23 +5% at
// 256..1024; it keeps 256.)
template <int L>
__host__ __device__ constexpr int rotq_qt_small_bt(void) {
    return L == 7 || L == 12 ? 128 : 256;
}

// A build of the kernel for int4 groups on the pair epilogue at 2^12 alone
// (SPEC == ROTQ_QT_SPEC_INT4): its tile loop holds only that path, where the
// run-time choice spreads a tile's 820 warp instructions over six regions of a
// 9000-instruction kernel (ncu at n = 4096: 15% of the stall samples waiting
// for instructions). Same-run A/B on the H100, f16: int4 g128 n = 4096 43.0 ->
// 42.3 us at 2^25, 150.5 -> 147.2 at 2^27; the same builds for int8 / fp8 at
// 2^12 and for every kind at 2^7 measured within the noise (int4 at 2^7 +0.6%),
// so only this one is built. 0: A/B switch.
#ifndef ROTQ_QT_SPEC
#define ROTQ_QT_SPEC 1
#endif
enum { ROTQ_QT_SPEC_ANY = 0, ROTQ_QT_SPEC_INT4 = 1 };

template <int L, int ES, int BT>
__host__ __device__ constexpr bool rotq_qt_spec_built(void) {
    return ROTQ_QT_SPEC != 0 && ES == 2 && BT == 128 && L == 12;
}

// Whether the kernel quantizes a tile from the last phase's registers: rows of
// exactly 2^L int8 / fp8 codes, or int4 rows of one group (2^6, 2^7: n = group);
// at 2^11 and 2^12 the Hadamard kernel's pair exchanges (rotq_pow2_pair_plan)
// bring a lane 8 or 4 consecutive columns: no quad transpose for the codes, and
// int4 groups of 32..128 from registers too.
template <int L>
__host__ __device__ __forceinline__ bool rotq_qt_reg_path(const rotq_q_args &qa) {
    constexpr bool PAIRS = rotq_pow2_pair_plan<L>::ON && rotq_pow2_pair_plan<L>::P >= 2;
    return qa.cols_log == L &&
           (qa.kind != ROTQ_QUANT_INT4_GROUP || (L <= 7 && qa.group == (1 << L)) ||
            (PAIRS && qa.group_shift >= 5 && qa.group_shift <= 7));
}

template <int L, int ES, int BT, int SPEC = ROTQ_QT_SPEC_ANY>
__global__ void __launch_bounds__(rotq_pow2_plan<L, BT>::THREADS, rotq_qt_min_blocks<L, BT>::value)
    rotq_qt_rot_kernel(rotq_q_args qa, rotq_had_args a, const __grid_constant__ CUtensorMap tmap) {
    typedef rotq_pow2_plan<L, BT> plan;
    typedef rotq_pow2_smem<L, ES, BT> sm;
    extern __shared__ __align__(1024) char rotq_smem[];
    __shared__ uint32_t red[32], red2[32];
    const unsigned sub = threadIdx.x / plan::SUB_THREADS;
    const unsigned tid = threadIdx.x % plan::SUB_THREADS;
    const unsigned sub_base = sub * plan::TILE;
    const unsigned local0 = sub_base + tid * 32; // phase 0: 32 consecutive elements
    const int64_t total = a.groups << L;
    const int64_t ntiles = (total + sm::TILE_CTA - 1) / sm::TILE_CTA;
    const unsigned R = (unsigned)qa.tile_rows; // TILE_CTA / cols
    const unsigned cmask = (1u << qa.cols_log) - 1u;

    unsigned it = 0;
    rotq_pow2_init_tma<L, ES, BT>(a, rotq_smem);
    rotq_pow2_first_tile<L, ES, (ROTQ_QT_EVICT_FIRST != 0), BT>(a, ntiles, total, rotq_smem, &tmap);
    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x, it++) {
        char *cur =
            rotq_pow2_tile_stage<L, ES, (ROTQ_QT_EVICT_FIRST != 0), BT>(a, tile, ntiles, total, rotq_smem, &tmap, it);
        float v[32];
        rotq_read_stage32<ES>(cur, local0, a.in_dtype, v);
        if (a.signs) {
            // Tiles start at a row, so the column of tile element e is e & cmask.
            const unsigned col0 = local0 & cmask;
#pragma unroll
            for (int r = 0; r < 32; r++) {
                const int8_t sg = __ldg(a.signs + ((col0 + (unsigned)r) & cmask));
                if (sg < 0) v[r] = -v[r];
            }
        }
        rotq_phase<L>(0, v);
        __syncthreads(); // every thread has read the stage that W overwrites
        float *W = rotq_pow2_tile_w<L, ES, BT>(rotq_smem, it, cur);
        if (plan::PHASES == 1) {
            const unsigned b = rotq_w_index(local0); // local0: a multiple of 32
#pragma unroll
            for (int r = 0; r < 32; r++) W[b + (unsigned)r] = v[r] * a.scale;
        } else {
            constexpr bool PAIRS = rotq_pow2_pair_plan<L>::ON && rotq_pow2_pair_plan<L>::P >= 2;
            // quantized from the last phase's registers where rotq_qt_reg_path holds
            const bool reg = SPEC != ROTQ_QT_SPEC_ANY || rotq_qt_reg_path<L>(qa);
            const int kind = SPEC == ROTQ_QT_SPEC_INT4 ? ROTQ_QUANT_INT4_GROUP : qa.kind;
            const bool sums = SPEC == ROTQ_QT_SPEC_ANY && qa.row_sums;
            if (L == 7 && reg) {
                // rows of 128: the quad layout (rotq_qt_quad_plan)
                rotq_qt_quad_exchange(W, sub_base, tid, v);
                const int64_t row0 = tile * R;
                const unsigned rv = rotq_qt_tile_rows(qa, row0, R);
                switch (kind) {
                case ROTQ_QUANT_INT8_ROW:
                    if (sums)
                        rotq_qt_quad_epilogue<ROTQ_QUANT_INT8_ROW, true>(qa, v, a.scale, sub, tid, row0, rv);
                    else
                        rotq_qt_quad_epilogue<ROTQ_QUANT_INT8_ROW, false>(qa, v, a.scale, sub, tid, row0, rv);
                    break;
                case ROTQ_QUANT_FP8_ROW:
                    rotq_qt_quad_epilogue<ROTQ_QUANT_FP8_ROW, false>(qa, v, a.scale, sub, tid, row0, rv);
                    break;
                case ROTQ_QUANT_INT4_GROUP:
                    rotq_qt_quad_epilogue<ROTQ_QUANT_INT4_GROUP, false>(qa, v, a.scale, sub, tid, row0, rv);
                    break;
                default: rotq_qt_quad_epilogue<ROTQ_QUANT_FP8_TENSOR, false>(qa, v, a.scale, sub, tid, row0, rv); break;
                }
                continue;
            }
            if (PAIRS && reg)
                rotq_pow2_pair_phases<L, false>(W, sub_base, tid, v);
            else
                rotq_pow2_exchanges<L>(W, sub_base, tid, v);
            if (plan::PHASES > 1 && L != 7 && reg) { // (rows of 128 took the quad epilogue above)
                const int64_t row0 = tile * R;
                const unsigned rv = rotq_qt_tile_rows(qa, row0, R);
                switch (kind) {
                case ROTQ_QUANT_INT8_ROW:
                    if (sums)
                        rotq_qt_reg_epilogue<ROTQ_QUANT_INT8_ROW, L, true, PAIRS>(qa, v, a.scale, sub, tid, row0, rv, red, red2);
                    else
                        rotq_qt_reg_epilogue<ROTQ_QUANT_INT8_ROW, L, false, PAIRS>(qa, v, a.scale, sub, tid, row0, rv, red, red2);
                    break;
                case ROTQ_QUANT_FP8_ROW:
                    rotq_qt_reg_epilogue<ROTQ_QUANT_FP8_ROW, L, false, PAIRS>(qa, v, a.scale, sub, tid, row0, rv, red, red2);
                    break;
                case ROTQ_QUANT_INT4_GROUP:
                    if (PAIRS) { // groups of 32..128 (rotq_qt_i4_pair_epilogue)
                        rotq_qt_i4_pair_any<PAIRS ? L : 12>(qa, v, a.scale, sub, tid, row0, rv);
                        break;
                    }
                    // built for L <= 7 only (another kind's build stands in, never run)
                    rotq_qt_reg_epilogue<(L <= 7 ? ROTQ_QUANT_INT4_GROUP : ROTQ_QUANT_FP8_TENSOR), L, false, PAIRS>(
                        qa, v, a.scale, sub, tid, row0, rv, red, red2);
                    break;
                default: rotq_qt_reg_epilogue<ROTQ_QUANT_FP8_TENSOR, L, false, PAIRS>(qa, v, a.scale, sub, tid, row0, rv, red, red2); break;
                }
                continue;
            }
            rotq_pow2_store_w<L>(W, sub_base, tid, v, a.scale);
        }
        __syncthreads();
        const int64_t row0 = tile * R;
        const unsigned rv = rotq_qt_tile_rows(qa, row0, R);
        rotq_qt_w_src src;
        src.W = W;
        src.cols = 1u << qa.cols_log;
        rotq_qt_tile_any(qa, src, row0, rv, red);
    }
    ptx_cp_async_wait<0>();
}

// qa: as for quantize_rot.cu plus kind and cols_log; a: the rotation's
// Hadamard arguments (x, stride, groups, blocks_per_row, n, in_dtype, scale,
// signs, vec_in).
template <int L, int ES, int BT>
static rotq_status rotq_qt_rot_launch_bt(rotq_q_args qa, const rotq_had_args &a, cudaStream_t stream,
                                         const rotq_cuda_device_info *dev) {
    typedef rotq_pow2_plan<L, BT> plan;
    typedef rotq_pow2_smem<L, ES, BT> sm;
    static unsigned long long occupancy[2][64];
    static int optin[2][64];
    if (qa.cols > sm::TILE_CTA) return ROTQ_ERR_NOT_SUPPORTED; // the caller falls back
    int spec = ROTQ_QT_SPEC_ANY;
    const void *kernel = (const void *)rotq_qt_rot_kernel<L, ES, BT>;
    if constexpr (rotq_qt_spec_built<L, ES, BT>()) {
        if (qa.kind == ROTQ_QUANT_INT4_GROUP && rotq_qt_reg_path<L>(qa)) {
            spec = ROTQ_QT_SPEC_INT4;
            kernel = (const void *)rotq_qt_rot_kernel<L, ES, BT, ROTQ_QT_SPEC_INT4>;
        }
    }
    const int device = dev->device; // resolved once per call by the entry point
    rotq_status st = rotq_cuda_smem_optin(kernel, sm::BYTES, 1024, &optin[spec][device & 63], dev); // 1 KB: static red
    if (st != ROTQ_OK) return st;
    const int lpg = qa.kind == ROTQ_QUANT_INT4_GROUP ? qa.group / (8 * ROTQ_QT_I4_CPL_W) : 1;
    qa.nch = (int32_t)(qa.cols / 8);
    qa.ts_log = rotq_qt_ts_log(qa.nch, plan::THREADS, lpg);
    const int64_t teams = plan::THREADS >> qa.ts_log;
    qa.tile_rows = (int32_t)(sm::TILE_CTA / qa.cols);
    qa.passes = (int32_t)(qa.tile_rows > teams ? qa.tile_rows / teams : 1);
    const int64_t total = a.groups << L;
    const int64_t ntiles = (total + sm::TILE_CTA - 1) / sm::TILE_CTA;
    int64_t grid = (int64_t)rotq_qt_per_sm(kernel, plan::THREADS, sm::BYTES, &occupancy[spec][device & 63]) * dev->sm_count;
    if (grid > ntiles) grid = ntiles;
    if (grid < 1) return ROTQ_OK;
    rotq_had_args t = a;
    CUtensorMap map;
    rotq_pow2_tma_setup<L, ES, BT>(t, &map, NULL, ntiles, grid, dev);
    void *args[] = {&qa, &t, &map};
    if (cudaLaunchKernel(kernel, dim3((unsigned)grid), dim3(plan::THREADS), args, sm::BYTES, stream) != cudaSuccess) {
        cudaGetLastError();
        return ROTQ_ERR_CUDA;
    }
    return ROTQ_OK;
}

// The 128-thread build where the row fits its tile (rotq_qt_small_bt), else
// the 256-thread one.
template <int L, int ES>
static rotq_status rotq_qt_rot_launch(const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t stream,
                                      const rotq_cuda_device_info *dev) {
    constexpr int BT = rotq_qt_small_bt<L>();
    if (BT != 256 && qa.cols <= rotq_pow2_smem<L, ES, BT>::TILE_CTA)
        return rotq_qt_rot_launch_bt<L, ES, BT>(qa, a, stream, dev);
    return rotq_qt_rot_launch_bt<L, ES, 256>(qa, a, stream, dev);
}

// One per input element size (quantize_rot_es2.cu, quantize_rot_es4.cu).
rotq_status rotq_qt_rot_dispatch_es2(int L, const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t s,
                                     const rotq_cuda_device_info *d);
rotq_status rotq_qt_rot_dispatch_es4(int L, const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t s,
                                     const rotq_cuda_device_info *d);
