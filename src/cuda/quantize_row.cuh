// One row quantized by a team (see quantize_common.cuh), from any source of
// fp32 chunks: the input in global memory (quantize_plain.cu) or the rotated
// row in shared memory (quantize_rot.cuh).
//
// The row is walked in windows of ts * NCH chunks, each thread holding NCH
// chunks of 8 values. Per-row kinds make two walks (absmax, then codes); when
// the row is one window its values stay in registers and the source is read
// once. The arithmetic is exactly the CPU backend's (formats.h):
// absmax over finite values, scale and inv by float division, codes from x*inv.
#pragma once
#include "quantize_common.cuh"

template <int KIND>
struct rotq_q_kind {
    static constexpr bool PER_ROW = KIND == ROTQ_QUANT_INT8_ROW || KIND == ROTQ_QUANT_FP8_ROW;
    static constexpr bool FP8 = KIND == ROTQ_QUANT_FP8_ROW || KIND == ROTQ_QUANT_FP8_TENSOR;
    static constexpr float QMAX = KIND == ROTQ_QUANT_INT8_ROW  ? ROTQ_I8_QMAX
                                  : KIND == ROTQ_QUANT_INT4_GROUP ? ROTQ_I4_QMAX
                                                                  : ROTQ_FP8_E4M3_MAX;
};

// Loads window w of the team's row: chunk c = (w * NCH + i) * ts + t goes to v[i].
template <int NCH, class SRC>
__device__ __forceinline__ void rotq_q_window(const SRC &src, bool valid, int w, unsigned t, unsigned ts,
                                              float v[NCH][8]) {
#pragma unroll
    for (int i = 0; i < NCH; i++) {
        const int64_t c = ((int64_t)w * NCH + i) * ts + t;
        if (valid) {
            src.load(c, v[i]);
        } else {
#pragma unroll
            for (int k = 0; k < 8; k++) v[i][k] = 0.0f;
        }
    }
}

// SRC::load(c, v) fills v with chunk c of the row (elements 8c .. 8c+7; zeros
// past cols, including whole chunks past the end). Teams whose row is past the
// matrix (valid false) still run every shuffle and barrier, with zeros.
template <int KIND, int NCH, class SRC>
__device__ __forceinline__ void rotq_q_row(const rotq_q_args &a, const SRC &src, int64_t row, bool valid,
                                           unsigned t, unsigned ts, uint32_t *red) {
    typedef rotq_q_kind<KIND> K;
    const int64_t nch = (a.cols + 7) >> 3;
    const int64_t span = (int64_t)ts * NCH;
    const int nwin = (int)((nch + span - 1) / span);
    float v[NCH][8];
    float inv = 0.0f, scale = 0.0f;
    if (K::PER_ROW) {
        float am = 0.0f;
        for (int w = 0; w < nwin; w++) {
            rotq_q_window<NCH>(src, valid, w, t, ts, v);
#pragma unroll
            for (int i = 0; i < NCH; i++)
#pragma unroll
                for (int k = 0; k < 8; k++) am = rotq_absmax_update(am, v[i][k]);
        }
        am = rotq_q_team_max(am, ts, red);
        inv = rotq_quant_inv(am, K::QMAX);
        scale = rotq_quant_scale(am, K::QMAX);
    } else if (KIND == ROTQ_QUANT_FP8_TENSOR) {
        inv = a.static_inv;
    }
    uint8_t *qrow = (uint8_t *)a.q + (valid ? row : 0) * a.q_stride;
    uint32_t sum = 0;
    for (int w = 0; w < nwin; w++) {
        if (!K::PER_ROW || nwin > 1) rotq_q_window<NCH>(src, valid, w, t, ts, v);
#pragma unroll
        for (int i = 0; i < NCH; i++) {
            const int64_t c = ((int64_t)w * NCH + i) * ts + t;
            const int64_t j = c * 8;
            const bool live = valid && c < nch;
            if (KIND == ROTQ_QUANT_INT4_GROUP) {
                // Group absmax over the group / 8 consecutive lanes that hold it.
                float gm = 0.0f;
#pragma unroll
                for (int k = 0; k < 8; k++) gm = rotq_absmax_update(gm, v[i][k]);
                for (int o = a.group >> 4; o > 0; o >>= 1) gm = fmaxf(gm, __shfl_xor_sync(0xffffffffu, gm, o));
                const float ginv = rotq_quant_inv(gm, ROTQ_I4_QMAX);
                if (live && (c & ((a.group >> 3) - 1)) == 0)
                    a.scales[row * a.groups_per_row + (j >> a.group_shift)] = rotq_quant_scale(gm, ROTQ_I4_QMAX);
                uint32_t packed = 0;
#pragma unroll
                for (int k = 0; k < 4; k++)
                    packed |= (uint32_t)rotq_i4_pack(rotq_quant_i4(v[i][2 * k] * ginv),
                                                     rotq_quant_i4(v[i][2 * k + 1] * ginv))
                              << (8 * k);
                if (live) {
                    // cols is a multiple of the group, so chunks are whole.
                    if (a.vec_q) {
                        *(uint32_t *)(qrow + (j >> 1)) = packed;
                    } else {
#pragma unroll
                        for (int k = 0; k < 4; k++) qrow[(j >> 1) + k] = (uint8_t)(packed >> (8 * k));
                    }
                }
            } else {
                uint32_t lo, hi;
                rotq_q_codes8<K::FP8>(v[i], inv, &lo, &hi, &sum); // zeros past cols add nothing
                if (live) rotq_q_store8(qrow, j, a.cols, a.vec_q, lo, hi);
            }
        }
    }
    if (K::PER_ROW && valid && t == 0) a.scales[row] = scale;
    if (KIND == ROTQ_QUANT_INT8_ROW && a.row_sums) {
        sum = rotq_q_team_sum(sum, ts, red);
        if (valid && t == 0) a.row_sums[row] = (int32_t)sum;
    }
}
