// Quantize epilogues of the warpgroup kernel (hadamard_factor_wg.cuh, fused
// rotate + quantize with K > 16 at 2^6 and 2^7): a warp holds 16 finished K
// rows of the tile (one quantize row), v[q][4 nt + 2 h + c] = row r0w + g + 8h,
// column 64 q + 8 nt + 2 t + c, lane (g, t) = (lane / 4, lane mod 4), unscaled.
// The codes go to the warp's 2 KB staging area at their place in the row,
// then out as contiguous 16- or 4-byte stores: the warp's 16 rows are one
// contiguous run of the code row. The rules are formats.h's, through the
// tile epilogues' helpers (quantize_common.cuh, quantize_tile_i4.cuh).
#pragma once
#include "quantize_tile.cuh"

// Byte `b` of staged row r (RB bytes a row): 16-byte chunk c at c ^ (r >> SH)
// (mod RB / 16), SH = log2(128 / RB), so that the 2- and 1-byte code stores of
// the warp's 8 rows g (lanes t sharing a word) fall in distinct banks.
template <int RB>
__device__ __forceinline__ unsigned rotq_wgq_off(unsigned r, unsigned b) {
    constexpr unsigned CPR = RB / 16, SH = RB >= 128 ? 0 : RB == 64 ? 1 : 2;
    return r * RB + ((((b >> 4) ^ (r >> SH)) & (CPR - 1)) << 4) + (b & 15u);
}

// The warp's staged codes (16 rows of RB bytes) to q, the code bytes of row
// r0w of the tile, rows r0w + r < K only. v16: q and the code row stride are
// 16-byte aligned (else 4-byte stores: the caller's vec_q).
template <int RB>
__device__ __forceinline__ void rotq_wgq_flush(const char *stage, uint8_t *q, int rows_left, bool v16) {
    constexpr unsigned CPR = RB / 16;
    const unsigned lane = ptx_lane_id();
    __syncwarp();
#pragma unroll
    for (unsigned u = lane; u < 16 * CPR; u += 32) {
        const unsigned r = u / CPR, c = u % CPR;
        if ((int)r >= rows_left) continue;
        const uint4 w = *(const uint4 *)(stage + rotq_wgq_off<RB>(r, 16 * c));
        uint8_t *d = q + r * RB + 16 * c;
        if (v16) {
            *(uint4 *)d = w;
        } else {
            uint32_t *d4 = (uint32_t *)d;
            d4[0] = w.x, d4[1] = w.y, d4[2] = w.z, d4[3] = w.w;
        }
    }
    __syncwarp(); // the reads before the next tile's code stores
}

// The 8 values of (q, h, half): columns 64 q + 32 half + 8 i + 2 t + c, i < 4.
template <int NQ>
__device__ __forceinline__ void rotq_wgq_gather8(const float (&v)[NQ][32], int q, int h, int half, float x[8]) {
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int c = 0; c < 2; c++) x[2 * i + c] = v[q][4 * (4 * half + i) + 2 * h + c];
}

// int8 / fp8 codes of the warp's values, x = v * inv, staged; int8 adds the
// codes to *sum. SAFE: rotq_q_codes8.
template <int L, bool FP8, bool SAFE = true>
__device__ __forceinline__ void rotq_wgq_codes8(const float (&v)[1 << (L - 6)][32], float inv, char *stage,
                                                uint32_t *sum) {
    constexpr int NQ = 1 << (L - 6), RB = 64 * NQ;
    const unsigned lane = ptx_lane_id(), g = lane >> 2, t = lane & 3u;
#pragma unroll
    for (int q = 0; q < NQ; q++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                float x[8];
                rotq_wgq_gather8<NQ>(v, q, h, half, x);
                uint32_t w[2];
                rotq_q_codes8<FP8, SAFE>(x, inv, &w[0], &w[1], sum);
#pragma unroll
                for (int i = 0; i < 4; i++) { // column pair of nt = 4 half + i
                    const unsigned b = (unsigned)(64 * q + 8 * (4 * half + i)) + 2 * t;
                    *(uint16_t *)(stage + rotq_wgq_off<RB>(g + 8u * h, b)) = (uint16_t)(w[i >> 1] >> (16 * (i & 1)));
                }
            }
}

// The group of (q, h, half) for int4 groups of 2^GS (rotq_wgq_int4).
template <int GS>
__device__ __forceinline__ constexpr int rotq_wgq_group(int q, int h, int half) {
    return GS == 5 ? (q * 2 + h) * 2 + half : GS == 6 ? q * 2 + h : h;
}

// The absmax of each of the lane's NGL int4 groups, over the quad (and, PAIR,
// lanes 4 apart): NaN-propagating (NAN_MAX: one instruction a value) or
// formats.h's finite-only one.
template <int L, int GS, int NGL, bool PAIR, bool NAN_MAX>
__device__ __forceinline__ void rotq_wgq_group_max(const float (&v)[1 << (L - 6)][32], float (&gm)[NGL]) {
    constexpr int NQ = 1 << (L - 6);
#pragma unroll
    for (int j = 0; j < NGL; j++) gm[j] = 0.0f;
#pragma unroll
    for (int q = 0; q < NQ; q++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                float x[8];
                rotq_wgq_gather8<NQ>(v, q, h, half, x);
                const int j = rotq_wgq_group<GS>(q, h, half);
                if (NAN_MAX) {
                    gm[j] = ptx_max_nan_f32(gm[j], rotq_qt_maxabs_nan<8, 2>(x));
                } else {
#pragma unroll
                    for (int i = 0; i < 8; i++) gm[j] = rotq_qt_absmax(gm[j], x[i]);
                }
            }
#pragma unroll
    for (int j = 0; j < NGL; j++)
#pragma unroll
        for (int o = 1; o <= (PAIR ? 4 : 2); o <<= 1) {
            const float p = __shfl_xor_sync(0xffffffffu, gm[j], o);
            gm[j] = NAN_MAX ? ptx_max_nan_f32(gm[j], p) : fmaxf(gm[j], p);
        }
}

// int4 groups of 2^GS values: a group is (q, h, half) for GS = 5, (q, h) for
// 6, h for 7 at 2^7 (the row) and, at 2^6, h over the rows g, g ^ 1 (lanes 4
// apart: g even holds the group's first 64 values); every group spans the
// quad's 4 lanes. The values are unscaled and fs (> 0, <= 1) is folded in as
// in rotq_fq_int4_g. Lane t divides for the groups j = t, t + 4 of its quad
// (inv and the scale), the others take inv by a shuffle. Codes staged,
// scales to scales[] (rows < K only: krow is the lane's row r0w + g).
template <int L, int GS>
__device__ __forceinline__ void rotq_wgq_int4(const float (&v)[1 << (L - 6)][32], float fs, char *stage,
                                              float *scales, int64_t krow, int K) {
    constexpr int NQ = 1 << (L - 6), RB = 32 * NQ;
    constexpr int NGL = GS == 5 ? 4 * NQ : GS == 6 ? 2 * NQ : 2; // groups a lane holds
    constexpr bool PAIR = GS == 7 && L == 6;                     // a group over two rows
    const unsigned lane = ptx_lane_id(), g = lane >> 2, t = lane & 3u;
    float gm[NGL];
    rotq_wgq_group_max<L, GS, NGL, PAIR, true>(v, gm);
    float all = 0.0f;
#pragma unroll
    for (int j = 0; j < NGL; j++) all = ptx_max_nan_f32(all, gm[j]);
    const bool finite = __all_sync(0xffffffffu, all < INFINITY);
    if (!finite) rotq_wgq_group_max<L, GS, NGL, PAIR, false>(v, gm); // NaN / Inf in the warp
#pragma unroll
    for (int j = 0; j < NGL; j++) gm[j] *= fs; // the scaled values' absmax
    constexpr int DPL = (NGL + 3) / 4;         // groups a lane divides for
    float dinv[DPL], dsc[DPL];
#pragma unroll
    for (int i = 0; i < DPL; i++) {
        // gm[t + 4i] as masks: a select chain here became an indexed local array.
        uint32_t mb = 0u;
#pragma unroll
        for (int j = 0; j < NGL; j++) mb |= __float_as_uint(gm[j]) & (0u - (uint32_t)(j == (int)t + 4 * i));
        const float m = __uint_as_float(mb);
        dinv[i] = rotq_quant_inv(m, ROTQ_I4_QMAX);
        dsc[i] = rotq_quant_scale(m, ROTQ_I4_QMAX);
    }
    const unsigned base = lane & ~3u;
#pragma unroll
    for (int q = 0; q < NQ; q++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int j = rotq_wgq_group<GS>(q, h, half);
                const float inv = __shfl_sync(0xffffffffu, dinv[j >> 2], base + (unsigned)(j & 3));
                float x[8];
                rotq_wgq_gather8<NQ>(v, q, h, half, x);
                // A finite group scaled by its own inv needs no clamp (rotq_qt_i4x8).
                const uint32_t w = finite ? rotq_qt_i4x8<false>(x, fs * inv) : rotq_qt_i4x8<true>(x, fs * inv);
#pragma unroll
                for (int i = 0; i < 4; i++) // the byte of nt = 4 half + i: columns 8 nt + 2t, + 1
                    *(uint8_t *)(stage + rotq_wgq_off<RB>(g + 8u * h, (unsigned)(32 * q + 4 * (4 * half + i)) + t)) =
                        (uint8_t)(w >> (8 * i));
            }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int64_t k = krow + 8 * h;
        if (k >= K || (PAIR && (g & 1u))) continue;
#pragma unroll
        for (int q = 0; q < NQ; q++)
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int j = rotq_wgq_group<GS>(q, h, half);
                if ((GS == 5 || half == 0) && (GS != 7 || q == 0) && t == (unsigned)(j & 3))
                    scales[((k << L) + 64 * q + 32 * half) >> GS] = dsc[j >> 2];
            }
    }
}

// Row blocks a slot of the warpgroup kernel holds at most (its packed tiles):
// the per-row buffers' stride.
#define ROTQ_WG_MAX_PACK 4

// The quantize epilogue of one warp's rows (r0w .. r0w + 15 of row block
// tile0 + blk: the group's k-th slot holds row blocks tile0 .. tile0 + T - 1;
// rows past K are padding and read as 0). fs: the rotation
// scale, folded into the multipliers where it is in (0, 1] (rotq_frag_quant_b),
// else applied to the values first. Per-row int8 / fp8: the warp's absmax
// into am3[k mod 3][blk] (a shared atomic max), the group's barrier (bar_id,
// bar_threads), then the codes; the group's designated thread writes, for
// the slot before (prev_tile0, k > 0: T row blocks, all present since only a
// launch's last slot can be partial), the row sums that
// its warps added to rs3[(k - 1) mod 3][.], and
// clears those buffers and am3 of the same index (read by every warp before
// this barrier; next written after the barrier of slot k + 1, which the
// designated thread reaches after the clear). The caller writes the last
// slot's row sums after one more group barrier. A warp whose rows are all
// padding (r0w >= K) only takes part in the barrier. The first warp of a row
// block writes its scale. With four packed row blocks (16 rows each) a row
// block is one warp's: its absmax, scale and row sum need no exchange, no
// barrier and no buffer.
template <int L, int T = 1>
__device__ __forceinline__ void rotq_wg_quant(const rotq_q_args &qa, uint32_t *am3, uint32_t *rs3, int bar_id,
                                              int bar_threads, bool designated, unsigned k, int64_t tile0,
                                              int64_t prev_tile0, int blk, int K, int r0w,
                                              float (&v)[1 << (L - 6)][32], char *stage, float fs) {
    constexpr int NQ = 1 << (L - 6);
    const int64_t tile = tile0 + blk;
    const bool per_row = qa.kind == ROTQ_QUANT_INT8_ROW || qa.kind == ROTQ_QUANT_FP8_ROW;
    if (r0w >= K) {
        if (per_row && T != ROTQ_WG_MAX_PACK) ptx_bar_sync(bar_id, bar_threads);
        return;
    }
    const unsigned lane = ptx_lane_id(), g = lane >> 2;
#pragma unroll
    for (int h = 0; h < 2; h++)
        if (r0w + (int)g + 8 * h >= K)
#pragma unroll
            for (int q = 0; q < NQ; q++)
#pragma unroll
                for (int nt = 0; nt < 8; nt++) v[q][4 * nt + 2 * h] = v[q][4 * nt + 2 * h + 1] = 0.0f;
    if (!(fs > 0.0f && fs <= 1.0f)) {
#pragma unroll
        for (int q = 0; q < NQ; q++)
#pragma unroll
            for (int r = 0; r < 32; r++) v[q][r] *= fs;
        fs = 1.0f;
    }
    const bool v16 = ((uintptr_t)qa.q & 15u) == 0 && qa.q_stride % 16 == 0;
    uint8_t *qrow = (uint8_t *)qa.q + tile * qa.q_stride;
    const int rows_left = K - r0w;
    if (qa.kind == ROTQ_QUANT_INT4_GROUP) {
        float *sc = qa.scales + tile * qa.groups_per_row;
        if (qa.group_shift == 5)
            rotq_wgq_int4<L, 5>(v, fs, stage, sc, r0w + (int)g, K);
        else if (qa.group_shift == 6)
            rotq_wgq_int4<L, 6>(v, fs, stage, sc, r0w + (int)g, K);
        else
            rotq_wgq_int4<L, 7>(v, fs, stage, sc, r0w + (int)g, K);
        rotq_wgq_flush<32 * NQ>(stage, qrow + r0w * (32 * NQ), rows_left, v16);
        return;
    }
    uint32_t sum = 0;
    if (qa.kind == ROTQ_QUANT_FP8_TENSOR) {
        rotq_wgq_codes8<L, true>(v, fs * qa.static_inv, stage, &sum);
        rotq_wgq_flush<64 * NQ>(stage, qrow + r0w * (64 * NQ), rows_left, v16);
        return;
    }
    const unsigned p = (k % 3u) * ROTQ_WG_MAX_PACK, pc = ((k + 2u) % 3u) * ROTQ_WG_MAX_PACK;
    bool finite;
    const float m = rotq_qt_warp_absmax<32 * NQ>(&v[0][0], &finite); // both column blocks
    const bool fp8 = qa.kind == ROTQ_QUANT_FP8_ROW;
    const float qmax = fp8 ? ROTQ_FP8_E4M3_MAX : ROTQ_I8_QMAX;
    float am;
    if constexpr (T == ROTQ_WG_MAX_PACK) { // 16-row row blocks: the row is this warp's
        am = fs * m;
    } else {
        if (lane == 0) atomicMax(&am3[p + blk], __float_as_uint(m)); // finite, >= 0: ordered as its bits
        ptx_bar_sync(bar_id, bar_threads);
        am = fs * __uint_as_float(*(volatile uint32_t *)&am3[p + blk]);
        if (designated) {
#pragma unroll
            for (int i = 0; i < T; i++) {
                if (!fp8 && qa.row_sums && k > 0)
                    qa.row_sums[prev_tile0 + i] = (int32_t) * (volatile uint32_t *)&rs3[pc + i];
                rs3[pc + i] = 0u, am3[pc + i] = 0u;
            }
        }
    }
    // The scale by the row block's first warp (its first rows), one division a row.
    if (r0w == 0 && lane == 0) qa.scales[tile] = rotq_quant_scale(am, qmax);
    const float inv = fs * rotq_quant_inv(am, qmax);
    // A warp of finite values needs no clamp or NaN fix-up (rotq_q_codes8).
    if (fp8) {
        if (finite)
            rotq_wgq_codes8<L, true, false>(v, inv, stage, &sum);
        else
            rotq_wgq_codes8<L, true>(v, inv, stage, &sum);
    } else {
        if (finite)
            rotq_wgq_codes8<L, false, false>(v, inv, stage, &sum);
        else
            rotq_wgq_codes8<L, false>(v, inv, stage, &sum);
        if (qa.row_sums) {
            sum = rotq_warp_sum_u32(sum);
            if (T == ROTQ_WG_MAX_PACK && lane == 0)
                qa.row_sums[tile] = (int32_t)sum;
            else if (lane == 0)
                atomicAdd(&rs3[p + blk], sum); // wrapping, as the CPU's uint32 sum
        }
    }
    rotq_wgq_flush<64 * NQ>(stage, qrow + r0w * (64 * NQ), rows_left, v16);
}
