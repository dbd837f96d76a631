// Shared pieces of the quantization kernels: the argument block, 8-element
// chunk loads and code stores, and reductions over a row team.
//
// A row is cut into chunks of 8 consecutive elements. A *team* of threads (a
// power-of-two group of 8..32 lanes inside a warp, or the whole block) owns a
// row; its thread t holds chunks t, t + ts, t + 2 ts, ... so lanes read and
// write consecutive chunks (coalesced), and an int4 group (32..128 elements,
// 4..16 chunks) lies in consecutive lanes of one warp.
#pragma once
#include "common.cuh"
#include "ptx.cuh"

#define ROTQ_Q_NCH 4 // chunks of 8 values a thread holds per window

// Arguments of every quantize kernel, resolved on the host (quantize*.cu).
typedef struct rotq_q_args {
    const void *x;
    int64_t x_stride; // elements
    int32_t in_dtype;
    void *q;
    int64_t q_stride; // bytes between rows of q
    float *scales;
    int32_t *row_sums; // INT8_ROW only; may be NULL
    int64_t rows, cols;
    int32_t group, group_shift; // INT4_GROUP: group size and its log2
    int64_t groups_per_row;     // INT4_GROUP: cols / group
    float static_inv;           // FP8_TENSOR: 1 / static_scale
    int32_t team;               // threads per row: 8, 16, 32, or blockDim.x (one row per block)
    int32_t vec_x, vec_q;       // 16-byte input loads / 8- (4- for int4) byte code stores allowed
    // Fused rotation (quantize_rot.cuh).
    const int8_t *signs;
    int32_t vec_signs; // 8-byte sign loads allowed
    float rot_scale;
    int32_t log2n;    // block size 2^log2n
    int32_t rot_rows; // rows per block (a multiple of blockDim.x / team)
    int32_t w_stride; // floats between rows in W: cols rounded up to 8
    int32_t w_elems;  // floats of W: rot_rows * w_stride rounded up to max(2^log2n, 32)
    // Tile kernels (quantize_tile.cuh).
    int32_t kind;      // rotq_quant_kind (fused tile kernel: runtime switch)
    int32_t nch;       // chunks of 8 per row
    int32_t ts_log;    // team width log2
    int32_t tile_rows; // rows per tile
    int32_t passes;    // team passes per tile
    int32_t cols_log;  // fused: log2(cols)
    int32_t scale_mode; // fused register epilogue: rot_scale's ROTQ_QT_SCALE_* class
} rotq_q_args;

// Classes of the rotation scale s for the fused register epilogue
// (quantize_rot_tile.cuh): |s| <= 1; |s| <= 1 and a power of two (a normal
// float); |s| > 1.
#define ROTQ_QT_SCALE_SMALL 0
#define ROTQ_QT_SCALE_POW2 1
#define ROTQ_QT_SCALE_LARGE 2

// rotq_absmax_update (formats.h) in three instructions: the max of the finite
// |v| (am >= 0, so a NaN or infinite v, mapped to 0, leaves am as it is).
__device__ __forceinline__ float rotq_qt_absmax(float am, float v) {
    const float a = fabsf(v);
    return fmaxf(am, a < INFINITY ? a : 0.0f);
}

// Codes of two values x = v * inv, packed (lo byte: b, hi byte: a) | c << 16.
//
// int8: round to nearest even and saturate, one F2IP per pair (the conversion
// maps NaN to 0 and saturates +Inf to 127). SAFE adds rotq_quant_i8's other
// cases: max.NaN keeps a NaN for the conversion while -127 stops -127.5 .. -Inf
// from giving -128. Without SAFE the values must be finite and |x| < 127.5,
// which holds for the finite values of a row scaled by that row's own inv
// (|x| <= 127 (1 + 2^-23), or 0 for a flushed row).
template <bool SAFE>
__device__ __forceinline__ uint32_t rotq_qt_i8x2(float a, float b, uint32_t c) {
    if (SAFE) a = ptx_max_nan_f32(a, -ROTQ_I8_QMAX), b = ptx_max_nan_f32(b, -ROTQ_I8_QMAX);
    return ptx_cvt_pack_s8(__float2int_rn(a), __float2int_rn(b), c);
}

// fp8 e4m3: the saturating hardware conversion from sm_89 on (the CPU's
// rounding; a NaN is fixed up to 0x7f by rotq_qt_fp8_fix), the CPU's encoder
// (formats.h) on sm_80.
__device__ __forceinline__ uint32_t rotq_qt_fp8x2(float a, float b, uint32_t c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    return ptx_cvt_e4m3x2(a, b) | c << 16;
#else
    return (uint32_t)rotq_f32_to_fp8_e4m3(b) | ((uint32_t)rotq_f32_to_fp8_e4m3(a) << 8) | c << 16;
#endif
}

// The hardware gives NaN as S.1111.111; the CPU backend writes 0x7f for every
// NaN. Only NaN has the low 7 bits all set (satfinite never produces it
// otherwise): their + 1 carries into bit 7 (never into the next byte), and
// where the sign is set too it is cleared (three instructions).
__device__ __forceinline__ uint32_t rotq_qt_fp8_fix(uint32_t w) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    const uint32_t t = (w & 0x7f7f7f7fu) + 0x01010101u;
    return w ^ (t & w & 0x80808080u);
#else
    return w;
#endif
}

// The codes of 8 values x = v * inv (int8 or fp8 e4m3, with every case of
// formats.h: NaN, Inf, saturation), bytes 0..3 in lo and 4..7 in hi; for int8
// the codes are added to *sum (dp4a). Four conversions and two packs per 8
// values instead of a clamped conversion per value.
// SAFE = false: the values and inv are finite and |v * inv| <= qmax (to
// rounding), so neither the int8 clamp nor the fp8 NaN fix-up can change a code.
template <bool FP8, bool SAFE = true>
__device__ __forceinline__ void rotq_q_codes8(const float v[8], float inv, uint32_t *lo, uint32_t *hi,
                                              uint32_t *sum) {
    float x[8];
#pragma unroll
    for (int k = 0; k < 8; k++) x[k] = __fmul_rn(v[k], inv);
    if (FP8) {
        *lo = rotq_qt_fp8x2(x[1], x[0], rotq_qt_fp8x2(x[3], x[2], 0u));
        *hi = rotq_qt_fp8x2(x[5], x[4], rotq_qt_fp8x2(x[7], x[6], 0u));
        if (SAFE) *lo = rotq_qt_fp8_fix(*lo), *hi = rotq_qt_fp8_fix(*hi);
    } else {
        *lo = rotq_qt_i8x2<SAFE>(x[1], x[0], rotq_qt_i8x2<SAFE>(x[3], x[2], 0u));
        *hi = rotq_qt_i8x2<SAFE>(x[5], x[4], rotq_qt_i8x2<SAFE>(x[7], x[6], 0u));
        *sum = (uint32_t)__dp4a((int)*hi, 0x01010101, __dp4a((int)*lo, 0x01010101, (int)*sum));
    }
}

// Lanes of this thread's team (TS < 32), or the whole warp.
__device__ __forceinline__ unsigned rotq_qt_team_mask(unsigned ts) {
    if (ts >= 32) return 0xffffffffu;
    const unsigned lane = threadIdx.x & 31u;
    return ((1u << ts) - 1u) << (lane & ~(ts - 1u));
}

// max |v[i]| over N values, NaN if any is NaN (else +Inf if any is infinite):
// one instruction per value, in P chains for latency.
template <int N, int P>
__device__ __forceinline__ float rotq_qt_maxabs_nan(const float *v) {
    float t[P];
#pragma unroll
    for (int i = 0; i < P; i++) t[i] = fabsf(v[i]);
#pragma unroll
    for (int i = P; i < N; i++) t[i % P] = ptx_max_nan_f32(t[i % P], fabsf(v[i]));
#pragma unroll
    for (int i = 1; i < P; i++) t[0] = ptx_max_nan_f32(t[0], t[i]);
    return t[0];
}

// Warp reductions by one redux.sync (sm_80+) where five shuffle levels took
// ten dependent instructions: the max of finite values >= 0 (ordered as their
// bits) and the wrapping uint32 sum, in every lane.
__device__ __forceinline__ float rotq_warp_max_nonneg(float x) {
    return __uint_as_float(__reduce_max_sync(0xffffffffu, __float_as_uint(x)));
}
__device__ __forceinline__ uint32_t rotq_warp_sum_u32(uint32_t x) { return __reduce_add_sync(0xffffffffu, x); }

// rotq_quant_inv (formats.h) from a quotient qmax / am already divided: 0
// exactly where the row or group flushes (am not > 0, or the quotient not
// finite); the matching scale is 0 where this is, am / qmax otherwise.
__device__ __forceinline__ float rotq_qt_inv_of(float am, float quotient) {
    return am > 0.0f && quotient < INFINITY ? quotient : 0.0f;
}

// rotq_quant_inv and rotq_quant_scale split over lane pairs (lane, lane ^ 1),
// one division a lane: a lane with sl set divides for the scale and returns
// it, taking inv (*inv) from lane ^ 1 by a shuffle; a lane without divides for
// inv and returns it (and in *inv). Every lane of the warp calls this; the
// partner of an sl lane has sl clear and the same absmax.
__device__ __forceinline__ float rotq_qt_inv_or_scale(float am, float qmax, bool sl, float *inv) {
    const float d = (sl ? am : qmax) / (sl ? qmax : am);
    const float i = rotq_qt_inv_of(am, d);
    const float ip = __shfl_xor_sync(0xffffffffu, i, 1);
    *inv = sl ? ip : i;
    return sl ? (ip == 0.0f ? 0.0f : d) : i;
}

// The finite-only absmax (formats.h) of the warp's N values a lane, in every
// lane: a NaN-propagating max first (one instruction a value), the finite-only
// one only where that is not finite.
// *finite (when given): whether every value of the warp is finite.
template <int N = 32>
__device__ __forceinline__ float rotq_qt_warp_absmax(const float *v, bool *finite = nullptr) {
    float m = rotq_qt_maxabs_nan<N, 4>(v);
    const bool fin = __all_sync(0xffffffffu, m < INFINITY);
    if (finite) *finite = fin;
    if (!fin) {
        m = 0.0f;
#pragma unroll
        for (int r = 0; r < N; r++) m = rotq_qt_absmax(m, v[r]);
    }
    return rotq_warp_max_nonneg(m); // no NaN or Inf left: finite, >= 0
}

// ---- 8-element chunks ------------------------------------------------------

// Elements j .. j+7 of a row as floats (0 past cols). vec: the row start is
// 16-byte aligned, so a full chunk is one (16-bit) or two (f32) 16-byte loads.
template <int ES>
__device__ __forceinline__ void rotq_q_load8(const void *row, int64_t j, int64_t cols, int dtype, int vec,
                                             float v[8]) {
    if (vec && j + 8 <= cols) {
        if (ES == 4) {
            const uint4 *p = (const uint4 *)((const float *)row + j);
            const uint4 u0 = __ldg(p), u1 = __ldg(p + 1);
            v[0] = __uint_as_float(u0.x), v[1] = __uint_as_float(u0.y);
            v[2] = __uint_as_float(u0.z), v[3] = __uint_as_float(u0.w);
            v[4] = __uint_as_float(u1.x), v[5] = __uint_as_float(u1.y);
            v[6] = __uint_as_float(u1.z), v[7] = __uint_as_float(u1.w);
        } else {
            const uint4 u = __ldg((const uint4 *)((const uint16_t *)row + j));
            const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
            for (int k = 0; k < 4; k++) {
                v[2 * k] = rotq_from_16_lo(w[k], dtype);
                v[2 * k + 1] = rotq_from_16_hi(w[k], dtype);
            }
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        float f = 0.0f;
        if (j + i < cols) {
            if (ES == 4)
                f = __ldg((const float *)row + j + i);
            else
                f = rotq_from_16(__ldg((const unsigned short *)row + j + i), dtype);
        }
        v[i] = f;
    }
}

// Negates v[i] where signs[j + i] < 0 (as the CPU backend does before the transform).
__device__ __forceinline__ void rotq_q_signs8(const int8_t *signs, int64_t j, int64_t cols, int vec, float v[8]) {
    if (vec && j + 8 <= cols) {
        const uint2 s = __ldg((const uint2 *)(signs + j));
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const uint32_t w = i < 4 ? s.x : s.y;
            if ((w >> (8 * (i & 3) + 7)) & 1u) v[i] = -v[i];
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; i++)
        if (j + i < cols && signs[j + i] < 0) v[i] = -v[i];
}

// Eight one-byte codes (packed little-endian in lo, hi) to elements j .. j+7.
__device__ __forceinline__ void rotq_q_store8(uint8_t *qrow, int64_t j, int64_t cols, int vec, uint32_t lo,
                                              uint32_t hi) {
    if (vec && j + 8 <= cols) {
        *(uint2 *)(qrow + j) = make_uint2(lo, hi);
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; i++)
        if (j + i < cols) qrow[j + i] = (uint8_t)(((i < 4 ? lo : hi) >> (8 * (i & 3))) & 0xffu);
}

// ---- team reductions ---------------------------------------------------------
// Every lane of the warp (every thread of the block for a block team) must call
// these, with the same ts. red: 32 words of shared scratch (block teams only).

__device__ __forceinline__ float rotq_q_team_max(float x, unsigned ts, uint32_t *red) {
    if (ts >= 32) {
        x = rotq_warp_max_nonneg(x); // a finite-only absmax: finite, >= 0
    } else {
        for (unsigned o = ts / 2; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    }
    if (ts <= 32) return x;
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = __float_as_uint(x);
    __syncthreads();
    x = __uint_as_float(red[0]);
    for (unsigned w = 1; w < blockDim.x / 32; w++) x = fmaxf(x, __uint_as_float(red[w]));
    __syncthreads(); // red is free again
    return x;
}

// Wrapping int32 sum (as the CPU backend's uint32 accumulation).
__device__ __forceinline__ uint32_t rotq_q_team_sum(uint32_t x, unsigned ts, uint32_t *red) {
    if (ts >= 32) {
        x = rotq_warp_sum_u32(x);
    } else {
        for (unsigned o = ts / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    }
    if (ts <= 32) return x;
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = x;
    __syncthreads();
    x = 0;
    for (unsigned w = 0; w < blockDim.x / 32; w++) x += red[w];
    __syncthreads();
    return x;
}
