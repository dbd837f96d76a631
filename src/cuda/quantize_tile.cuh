// Tile epilogue of the fast quantize kernels (quantize_plain.cu, quantize_rot_tile.cuh):
// a block holds a tile of whole rows in shared memory (the staged input, or the
// rotated fp32 rows) and quantizes them.
//
// Rows are cut into chunks of 8 consecutive values. A team of TS = 2^ts_log
// threads (1 .. blockDim.x) owns a row; for int8 / fp8 2^ts_log may also
// exceed a block that is not a power of two (384 threads): the team is then
// the whole block, TS = blockDim.x. Thread t of the team takes chunks
// t, t + TS, ... so the lanes of a warp read consecutive 16-byte pieces of
// shared memory and write consecutive code words (8 bytes). int4 groups take
// units of several chunks per lane instead (quantize_tile_i4.cuh).
// Per-row kinds make two passes over shared memory (absmax, then codes); no
// values are kept in registers between them. The arithmetic is the CPU
// backend's (formats.h), as in quantize_row.cuh.
//
// The host (rotq_qt_team) sets: nch (chunks per row), ts_log, tile_rows (R),
// passes (R / (blockDim.x / TS), at least 1: rows r = pass * teams + team).
#pragma once
#include "ptx.cuh"
#include "quantize_row.cuh"
#include "quantize_tile_i4.cuh"

// Team reductions. Every thread of the block calls them the same number of
// times (teams wider than a warp go through red and two barriers).
__device__ __forceinline__ float rotq_qt_team_max(float x, unsigned ts_log, uint32_t *red) {
    const unsigned ts = min(1u << ts_log, blockDim.x);
    const unsigned width = ts < 32 ? ts : 32;
    const unsigned mask = rotq_qt_team_mask(ts);
    for (unsigned o = width / 2; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(mask, x, o));
    if (ts <= 32) return x;
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = __float_as_uint(x);
    __syncthreads();
    const unsigned w0 = (threadIdx.x >> ts_log) << (ts_log - 5);
    x = __uint_as_float(red[w0]);
    for (unsigned w = 1; w < (ts >> 5); w++) x = fmaxf(x, __uint_as_float(red[w0 + w]));
    __syncthreads(); // red is free again
    return x;
}

// Wrapping int32 sum (the CPU backend's uint32 accumulation).
__device__ __forceinline__ uint32_t rotq_qt_team_sum(uint32_t x, unsigned ts_log, uint32_t *red) {
    const unsigned ts = min(1u << ts_log, blockDim.x);
    const unsigned width = ts < 32 ? ts : 32;
    const unsigned mask = rotq_qt_team_mask(ts);
    for (unsigned o = width / 2; o > 0; o >>= 1) x += __shfl_xor_sync(mask, x, o);
    if (ts <= 32) return x;
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = x;
    __syncthreads();
    const unsigned w0 = (threadIdx.x >> ts_log) << (ts_log - 5);
    x = 0;
    for (unsigned w = 0; w < (ts >> 5); w++) x += red[w0 + w];
    __syncthreads();
    return x;
}

// Source: the staged input (raw dtype; row r at r * row_bytes).
template <int ES>
struct rotq_qt_stage_src {
    static constexpr int I4_CPL = 4;     // int4 chunks per lane and unit (quantize_tile_i4.cuh)
    static constexpr bool I4_ROT = true; // their order rotated by lane (bank conflicts)
    const char *base;
    unsigned row_bytes;
    int dtype;
    // N chunks from chunk c, a multiple of N: v[8i ..] = chunk c + ((i + rot) mod N).
    // Lanes 64 (ES 2) or 128 bytes apart hit one bank group at a time; with
    // rot = (lane / 2) mod 4 the 8 lanes of a 16-byte access phase hit 8
    // different ones (ES 2; two lanes per group for ES 4).
    template <int N>
    __device__ __forceinline__ void load_run(unsigned r, unsigned c, float *v, unsigned rot) const {
#pragma unroll
        for (int i = 0; i < N; i++) load(r, c + (((unsigned)i + rot) & (N - 1u)), v + 8 * i);
    }
    __device__ __forceinline__ void load(unsigned r, unsigned c, float v[8]) const {
        const char *p = base + r * row_bytes + c * (8u * ES);
        if (ES == 4) {
            const uint4 u0 = *(const uint4 *)p, u1 = *(const uint4 *)(p + 16);
            v[0] = __uint_as_float(u0.x), v[1] = __uint_as_float(u0.y);
            v[2] = __uint_as_float(u0.z), v[3] = __uint_as_float(u0.w);
            v[4] = __uint_as_float(u1.x), v[5] = __uint_as_float(u1.y);
            v[6] = __uint_as_float(u1.z), v[7] = __uint_as_float(u1.w);
        } else {
            const uint4 u = *(const uint4 *)p;
            const uint32_t w[4] = {u.x, u.y, u.z, u.w};
            if (dtype == ROTQ_DTYPE_F16) {
#pragma unroll
                for (int k = 0; k < 4; k++)
                    v[2 * k] = rotq_from_16_lo(w[k], ROTQ_DTYPE_F16), v[2 * k + 1] = rotq_from_16_hi(w[k], ROTQ_DTYPE_F16);
            } else {
#pragma unroll
                for (int k = 0; k < 4; k++)
                    v[2 * k] = rotq_from_16_lo(w[k], ROTQ_DTYPE_BF16), v[2 * k + 1] = rotq_from_16_hi(w[k], ROTQ_DTYPE_BF16);
            }
        }
    }
};

// Source: rotated fp32 rows in W, element e at W[rotq_w_index(e)] (the
// Hadamard kernels' padded layout: 8 aligned consecutive elements are at
// base + i). Row r starts at element r * cols (a multiple of 8; of 32 when
// int4 reads whole units).
struct rotq_qt_w_src {
    static constexpr int I4_CPL = ROTQ_QT_I4_CPL_W;
    static constexpr bool I4_ROT = false; // rot is 0: lanes 33 floats apart do not conflict
    const float *W;
    unsigned cols;
    // N = 1, 2 or 4 chunks from chunk c, a multiple of N (rows of at least 8N
    // elements): 8N consecutive elements inside an aligned 32, so contiguous in W.
    template <int N>
    __device__ __forceinline__ void load_run(unsigned r, unsigned c, float *v, unsigned rot = 0) const {
        const unsigned e = r * cols + c * 8u;
        const unsigned b = e + (e >> 5) + (e >> 10) + (e >> 15); // rotq_w_index(e)
#pragma unroll
        for (int i = 0; i < 8 * N; i++) v[i] = W[b + (unsigned)i];
    }
    __device__ __forceinline__ void load(unsigned r, unsigned c, float v[8]) const { load_run<1>(r, c, v); }
};

// Quantizes rows row0 .. row0 + rows_valid - 1 of the tile (tile row r = row
// row0 + r). Rows r >= rows_valid are computed from clamped tile rows and not stored.
// row_am: null, or the per-row kinds' absmax of each tile row (float bits),
// taken by the caller: then the first pass and its team reduction are left out.
template <int KIND, class SRC>
__device__ __forceinline__ void rotq_qt_tile(const rotq_q_args &a, const SRC &src, int64_t row0,
                                             unsigned rows_valid, uint32_t *red, const uint32_t *row_am) {
    typedef rotq_q_kind<KIND> K;
    const unsigned ts_log = (unsigned)a.ts_log, TS = min(1u << ts_log, blockDim.x);
    const unsigned team = threadIdx.x >> ts_log, t = threadIdx.x & ((1u << ts_log) - 1u);
    const unsigned teams = blockDim.x >> ts_log > 0 ? blockDim.x >> ts_log : 1u;
    const unsigned nch = (unsigned)a.nch, R = (unsigned)a.tile_rows;
    for (int pass = 0; pass < a.passes; pass++) {
        const unsigned r = (unsigned)pass * teams + team;
        const bool live = r < rows_valid;
        const unsigned rs = r < R ? r : R - 1u;
        const int64_t row = row0 + r;
        if (KIND == ROTQ_QUANT_INT4_GROUP) {
            rotq_qt_i4_row<SRC::I4_CPL>(a, src, rs, row, live, t, TS);
            continue;
        }
        float inv = 0.0f, scale = 0.0f;
        if (K::PER_ROW) {
            float am = 0.0f;
            if (row_am) {
                am = __uint_as_float(row_am[rs]);
            } else {
                for (unsigned c = t; c < nch; c += TS) {
                    float v[8];
                    src.load(rs, c, v);
#pragma unroll
                    for (int k = 0; k < 8; k++) am = rotq_qt_absmax(am, v[k]);
                }
                am = rotq_qt_team_max(am, ts_log, red);
            }
            inv = rotq_quant_inv(am, K::QMAX);
            scale = rotq_quant_scale(am, K::QMAX);
        } else if (KIND == ROTQ_QUANT_FP8_TENSOR) {
            inv = a.static_inv;
        }
        uint8_t *qrow = (uint8_t *)a.q + (live ? row : 0) * a.q_stride;
        uint32_t sum = 0;
        for (unsigned c = t; c < nch; c += TS) {
            float v[8];
            src.load(rs, c, v);
            uint32_t lo, hi;
            rotq_q_codes8<K::FP8>(v, inv, &lo, &hi, &sum);
            if (live) *(uint2 *)(qrow + c * 8u) = make_uint2(lo, hi);
        }
        if (K::PER_ROW && live && t == 0) a.scales[row] = scale;
        if (KIND == ROTQ_QUANT_INT8_ROW && a.row_sums) {
            sum = rotq_qt_team_sum(sum, ts_log, red);
            if (live && t == 0) a.row_sums[row] = (int32_t)sum;
        }
    }
}

// rotq_qt_tile with the kind taken from a.kind at run time (the fused kernels
// build one body for every kind).
template <class SRC>
__device__ __forceinline__ void rotq_qt_tile_any(const rotq_q_args &a, const SRC &src, int64_t row0,
                                                 unsigned rows_valid, uint32_t *red,
                                                 const uint32_t *row_am = nullptr) {
    switch (a.kind) {
    case ROTQ_QUANT_INT8_ROW: rotq_qt_tile<ROTQ_QUANT_INT8_ROW>(a, src, row0, rows_valid, red, row_am); break;
    case ROTQ_QUANT_FP8_ROW: rotq_qt_tile<ROTQ_QUANT_FP8_ROW>(a, src, row0, rows_valid, red, row_am); break;
    case ROTQ_QUANT_FP8_TENSOR: rotq_qt_tile<ROTQ_QUANT_FP8_TENSOR>(a, src, row0, rows_valid, red, nullptr); break;
    default: rotq_qt_tile<ROTQ_QUANT_INT4_GROUP>(a, src, row0, rows_valid, red, nullptr); break;
    }
}

// ---- host side -----------------------------------------------------------------

// Team width for rows of nch chunks on a block of `threads`: about 4 chunks per
// thread per row, at least the lanes of an int4 group (lpg: group / (8 * the
// source's I4_CPL); 1 otherwise).
static inline int rotq_qt_ts_log(int64_t nch, int threads, int lpg) {
    int64_t want = (nch + 3) / 4;
    int lg = 0;
    while ((1ll << lg) < want) lg++;
    while ((1 << lg) < lpg) lg++;
    while ((1 << lg) > threads) lg--;
    return lg;
}

// Blocks of a persistent kernel per SM for (kernel, dynamic smem), cached per
// device as smem << 32 | blocks (a new smem value asks again).
static inline int rotq_qt_per_sm(const void *kernel, int threads, size_t smem, unsigned long long *cache) {
    const unsigned long long c = __atomic_load_n(cache, __ATOMIC_RELAXED);
    if (c != 0 && (c >> 32) == (unsigned long long)smem) return (int)(c & 0xffffffffu);
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) != cudaSuccess || per_sm <= 0) {
        cudaGetLastError();
        per_sm = 1;
    }
    __atomic_store_n(cache, ((unsigned long long)smem << 32) | (unsigned)per_sm, __ATOMIC_RELAXED);
    return per_sm;
}

