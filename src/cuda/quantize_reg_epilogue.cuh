// Quantizing the last Hadamard phase's values where they sit, in registers
// (no round trip through shared memory): the fused tile kernel
// (quantize_rot_tile.cuh) for int8 / fp8 rows of exactly 2^L elements
// (rotq_qt_reg_epilogue), int4 groups of 32..128 in rows of 2^11 / 2^12 after the
// pair exchanges (rotq_qt_i4_pair_epilogue) and rows of 2^7 in the quad layout
// (rotq_qt_quad_epilogue); the decode kernel (quantize_small.cuh) takes the
// reductions and code helpers. Rounding, clamping and NaN / Inf as the formats
// header and the CPU backend (bit-exact where both compute the same scale).
#pragma once
#include "hadamard_pow2.cuh" // the power-of-two plans, rotq_w4_index, lane helpers
#include "quantize_tile.cuh" // rotq_qt_maxabs_nan and co., rotq_q_args

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
