// Latency kernel of the fused power-of-two rotation + quantize for small
// problems (decode sizes), on the small Hadamard kernel (hadamard_small.cuh).
//
// One block per tile of 2^LE elements (whole rows: cols is a power of two that
// divides the tile), no staging and no loop: the thread loads its V consecutive
// elements, runs the rounds of rotq_small_rounds, writes y = RN(v * s) (the
// rotation's scale, exactly as the CPU applies it) back to W in the last
// round's layout (the slots it has just read: no barrier before) and reads the
// round-0 layout again (one barrier). Each thread then holds V consecutive
// elements of one row (cols >= V), so the epilogue is the CPU's on y: a row
// spans cols / V consecutive threads (shuffles, and one barrier through red
// when it spans warps), an int4 group g / V consecutive lanes. Codes are
// stored V bytes (V / 2 for int4) per thread.
//
// Used when rows * cols <= ROTQ_SMALL_MAX_ELEMENTS, cols is a power of two with
// 8 <= cols <= 2^LE (so n = 2^L divides it: block-diagonal rotations of up to
// 1024 columns too) and the code rows allow 8-byte (int4: 4-byte) stores;
// anything else returns ROTQ_ERR_NOT_SUPPORTED and takes quantize_rot.cu.
#pragma once
#include <string.h>

#include "hadamard_small.cuh"
#include "quantize_reg_epilogue.cuh" // reductions and code helpers; rotq_qt_i8x2 and co. (quantize_common.cuh)

// The decode kernels' arguments: the fields of rotq_q_args and rotq_had_args
// that they read (272 bytes as the two structs, 104 here). Kernel parameter
// blocks past about 200 bytes cost a decode launch up to 0.75 us on every other
// launch in some states of the process (H100, CUDA 13: perf-notes, "Kernel
// parameter size"); 160 bytes and less measured none.
typedef struct rotq_qs_args {
    const void *x;
    void *q;
    float *scales;
    int32_t *row_sums; // INT8_ROW only; may be NULL
    const int8_t *signs;
    int64_t x_stride;  // elements
    int64_t q_stride;  // bytes
    uint32_t groups;   // row blocks of the rotation: rows * blocks_per_row (<= ROTQ_SMALL_MAX_ELEMENTS)
    uint32_t blocks_per_row;
    int32_t n, in_dtype, vec_in, kind, cols_log;
    float scale; // the rotation's
    int32_t group, group_shift, groups_per_row;
    float static_inv;
} rotq_qs_args;
static_assert(sizeof(rotq_qs_args) <= 160, "rotq_qs_args: keep the decode kernels' parameters small");

// The fields of rotq_qs_args, once: X(source struct, field), the same name in
// both. a: rotq_had_args, qa: rotq_q_args.
#define ROTQ_QS_FIELDS(X)                                                                                  \
    X(a, x) X(qa, q) X(qa, scales) X(qa, row_sums) X(a, signs) X(a, x_stride) X(qa, q_stride) X(a, groups) \
    X(a, blocks_per_row) X(a, n) X(a, in_dtype) X(a, vec_in) X(qa, kind) X(qa, cols_log) X(a, scale)      \
    X(qa, group) X(qa, group_shift) X(qa, groups_per_row) X(qa, static_inv)

static inline rotq_qs_args rotq_qs_pack(const rotq_q_args &qa, const rotq_had_args &a) {
    rotq_qs_args p; // every field set (no padding: 104 bytes)
#define ROTQ_QS_PACK(src, f) p.f = (decltype(p.f))src.f;
    ROTQ_QS_FIELDS(ROTQ_QS_PACK)
#undef ROTQ_QS_PACK
    return p;
}

// The two structs back in the kernel, in registers: the fields the decode kernels
// read (and out_dtype = in_dtype), the others zero.
__device__ __forceinline__ void rotq_qs_unpack(const rotq_qs_args &p, rotq_q_args &qa, rotq_had_args &a) {
    memset(&qa, 0, sizeof qa);
    memset(&a, 0, sizeof a);
#define ROTQ_QS_UNPACK(dst, f) dst.f = p.f;
    ROTQ_QS_FIELDS(ROTQ_QS_UNPACK)
#undef ROTQ_QS_UNPACK
    a.out_dtype = p.in_dtype;
}

// From the last round's layout to round 0's (thread t: tile elements
// t * V .. t * V + V - 1), scaled by s on the way.
template <int L>
__device__ __forceinline__ void rotq_qs_to_rows(float *W, unsigned t, float *v, float s) {
    typedef rotq_small_plan<L> P;
    constexpr int K = P::ROUNDS - 1;
    if constexpr (K == 0) { // one round: the values never left round 0's layout
#pragma unroll
        for (int r = 0; r < P::V; r++) v[r] = __fmul_rn(v[r], s);
    } else {
        const unsigned wb = P::pad(rotq_small_dep<L, K>(t));
#pragma unroll
        for (int r = 0; r < P::V; r++) W[wb + P::pad((unsigned)r << P::lo(K))] = __fmul_rn(v[r], s);
        __syncthreads();
        const unsigned rb = P::pad(rotq_small_dep<L, 0>(t));
#pragma unroll
        for (int r = 0; r < P::V; r++) v[r] = W[rb + P::pad((unsigned)r)];
    }
}

// Reductions over the tpr consecutive threads of a row (a power of two; every
// thread of the block calls them with the same tpr). Past a warp, through
// red (one barrier; each call needs its own red): lane l reads the part of
// the row's warp l mod (tpr / 32), and a butterfly finishes (one load, not one per warp).
__device__ __forceinline__ float rotq_qs_row_max(float x, unsigned tpr, uint32_t *red) {
#pragma unroll
    for (int i = 0; i < 5; i++)
        if ((1u << i) < tpr) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1 << i));
    if (tpr <= 32) return x;
    const unsigned warp = threadIdx.x >> 5, w0 = warp & ~((tpr >> 5) - 1u);
    if ((threadIdx.x & 31u) == 0) red[warp] = __float_as_uint(x);
    __syncthreads();
    x = __uint_as_float(red[w0 + (threadIdx.x & ((tpr >> 5) - 1u))]);
#pragma unroll
    for (int i = 0; i < 5; i++)
        if ((32u << i) < tpr) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1 << i));
    return x;
}

__device__ __forceinline__ uint32_t rotq_qs_row_sum(uint32_t x, unsigned tpr, uint32_t *red) {
#pragma unroll
    for (int i = 0; i < 5; i++)
        if ((1u << i) < tpr) x += __shfl_xor_sync(0xffffffffu, x, 1 << i);
    if (tpr <= 32) return x;
    const unsigned warp = threadIdx.x >> 5, w0 = warp & ~((tpr >> 5) - 1u);
    if ((threadIdx.x & 31u) == 0) red[warp] = x;
    __syncthreads();
    x = red[w0 + (threadIdx.x & ((tpr >> 5) - 1u))];
#pragma unroll
    for (int i = 0; i < 5; i++)
        if ((32u << i) < tpr) x += __shfl_xor_sync(0xffffffffu, x, 1 << i);
    return x;
}

// The finite-only absmax of V values whose NaN-propagating max |v| is m.
template <int V>
__device__ __forceinline__ float rotq_qs_absmax(const float *v, float m) {
    if (m < INFINITY) return m;
    m = 0.0f;
#pragma unroll
    for (int r = 0; r < V; r++) m = rotq_qt_absmax(m, v[r]);
    return m;
}

// int4 groups: a group spans g / V lanes (V <= 32 <= g). Codes eight at a time
// by rotq_qt_i4x8: without the clamp where the thread's values are finite
// (|v * ginv| < 7.5 then), with formats.h's rules otherwise.
template <int V>
__device__ __forceinline__ void rotq_qs_int4(const rotq_q_args &qa, const float *v, float m, bool live,
                                             uint32_t row, uint32_t col) {
    float gm = rotq_qs_absmax<V>(v, m);
    const unsigned lpg = (unsigned)qa.group / V;
#pragma unroll
    for (int i = 0; i < 4; i++)
        if ((1u << i) < lpg) gm = fmaxf(gm, __shfl_xor_sync(0xffffffffu, gm, 1 << i));
    float ginv;
    const int64_t si = (int64_t)row * qa.groups_per_row + (col >> qa.group_shift);
    // Two or more lanes a group (always where V <= 16, groups being >= 32 values,
    // which the compiler then knows): inv and the scale split over lane pairs as in
    // rotq_qs_bytes, and the group's second lane stores the scale.
    if (V <= 16 || lpg >= 2) {
        const float gs = rotq_qt_inv_or_scale(gm, ROTQ_I4_QMAX, (threadIdx.x & 1u) != 0, &ginv);
        if (live && (col & ((unsigned)qa.group - 1u)) == V) qa.scales[si] = gs;
    } else {
        ginv = rotq_quant_inv(gm, ROTQ_I4_QMAX);
        if (live && (col & ((unsigned)qa.group - 1u)) == 0) qa.scales[si] = rotq_quant_scale(gm, ROTQ_I4_QMAX);
    }
    uint32_t w[V / 8];
    if (m < INFINITY) {
#pragma unroll
        for (int i = 0; i < V / 8; i++) w[i] = rotq_qt_i4x8<false>(v + 8 * i, ginv);
    } else {
#pragma unroll
        for (int i = 0; i < V / 8; i++) w[i] = rotq_qt_i4x8<true>(v + 8 * i, ginv);
    }
    if (!live) return;
    uint32_t *p = (uint32_t *)((uint8_t *)qa.q + (int64_t)row * qa.q_stride + (col >> 1));
#pragma unroll
    for (int i = 0; i < V / 8; i++) p[i] = w[i];
}

// int8 / fp8 rows (per row or static): codes four per word, row sums by dp4a.
template <int KIND, int V>
__device__ __forceinline__ void rotq_qs_bytes(const rotq_q_args &qa, float *v, float m, bool live, uint32_t row,
                                              uint32_t col, unsigned tpr, uint32_t *red, uint32_t *red2) {
    typedef rotq_q_kind<KIND> K;
    const bool finite = m < INFINITY;
    float inv = qa.static_inv;
    if (K::PER_ROW) {
        const float am = rotq_qs_row_max(rotq_qs_absmax<V>(v, m), tpr, red);
        if (tpr >= 2) {
            // One division a lane, inv in the even lanes and the scale in the odd
            // ones (rotq_qt_inv_or_scale), so the row's second lane stores the
            // scale: the first lane's own block of two more divisions, which the
            // rest of its warp waited for, is gone.
            const float sc = rotq_qt_inv_or_scale(am, K::QMAX, (threadIdx.x & 1u) != 0, &inv);
            if (live && col == V) qa.scales[row] = sc;
        } else {
            inv = rotq_quant_inv(am, K::QMAX);
            if (live) qa.scales[row] = rotq_quant_scale(am, K::QMAX);
        }
    }
#pragma unroll
    for (int r = 0; r < V; r++) v[r] = __fmul_rn(v[r], inv);
    uint32_t cw[V / 4];
    if (K::FP8) {
        // No NaN can come out of a finite row scaled by its own (finite) inv.
        const bool fix = !(K::PER_ROW && finite);
#pragma unroll
        for (int g = 0; g < V / 4; g++) {
            const float *x = v + 4 * g;
            cw[g] = rotq_qt_fp8x2(x[1], x[0], rotq_qt_fp8x2(x[3], x[2], 0u));
            if (fix) cw[g] = rotq_qt_fp8_fix(cw[g]);
        }
    } else if (finite) { // |x| < 127.5: see rotq_qt_i8x2
#pragma unroll
        for (int g = 0; g < V / 4; g++) {
            const float *x = v + 4 * g;
            cw[g] = rotq_qt_i8x2<false>(x[1], x[0], rotq_qt_i8x2<false>(x[3], x[2], 0u));
        }
    } else {
#pragma unroll
        for (int g = 0; g < V / 4; g++) {
            const float *x = v + 4 * g;
            cw[g] = rotq_qt_i8x2<true>(x[1], x[0], rotq_qt_i8x2<true>(x[3], x[2], 0u));
        }
    }
    if (KIND == ROTQ_QUANT_INT8_ROW && qa.row_sums) {
        uint32_t sum = 0;
#pragma unroll
        for (int g = 0; g < V / 4; g++) sum = (uint32_t)__dp4a((int)cw[g], 0x01010101, (int)sum);
        sum = rotq_qs_row_sum(sum, tpr, red2);
        if (live && col == 0) qa.row_sums[row] = (int32_t)sum;
    }
    if (!live) return;
    uint2 *p = (uint2 *)((uint8_t *)qa.q + (int64_t)row * qa.q_stride + col);
#pragma unroll
    for (int i = 0; i < V / 8; i++) p[i] = make_uint2(cw[2 * i], cw[2 * i + 1]);
}

// args: rotq_qs_pack of the quantize arguments (with kind and cols_log) and the
// rotation's Hadamard arguments (groups = rows * blocks_per_row row blocks of
// n = 2^L). DT >= 0: a build for rotq_had_fast_case (16-bit input of dtype DT; no y) and
// one kind, KIND, with those as compile-time constants (quantize_small_fast.cu).
template <int L, int DT = -1, int KIND = -1>
__global__ void __launch_bounds__(rotq_small_plan<L>::THREADS) rotq_qs_kernel(rotq_qs_args args) {
    typedef rotq_small_plan<L> P;
    rotq_q_args qa;
    rotq_had_args a;
    rotq_qs_unpack(args, qa, a);
    if (DT >= 0) {
        rotq_had_fast_args(a, DT, false);
        qa.cols_log = L; // rows of one rotation block: a row's threads are a constant
    }
    if (KIND >= 0) qa.kind = KIND;
    extern __shared__ float rotq_qs_w[];
    __shared__ uint32_t red[32], red2[32];
    const unsigned t = threadIdx.x;
    const uint32_t total = (uint32_t)a.groups << L; // rows * cols <= ROTQ_SMALL_MAX_ELEMENTS
    const uint32_t e0 = (blockIdx.x << P::LE) + (t << P::LOGV);
    float v[P::V];
    rotq_small_load<L>(a, e0, total, v);
    rotq_small_rounds<L>(rotq_qs_w, t, v);
    rotq_qs_to_rows<L>(rotq_qs_w, t, v, a.scale);
    const unsigned cl = (unsigned)qa.cols_log; // >= LOGV
    const uint32_t row = e0 >> cl, col = e0 & ((1u << cl) - 1u);
    const bool live = e0 < total;
    const unsigned tpr = 1u << (cl - P::LOGV);
    const float m = rotq_qt_maxabs_nan<P::V, 4>(v);
    switch (qa.kind) {
    case ROTQ_QUANT_INT8_ROW: rotq_qs_bytes<ROTQ_QUANT_INT8_ROW, P::V>(qa, v, m, live, row, col, tpr, red, red2); break;
    case ROTQ_QUANT_FP8_ROW: rotq_qs_bytes<ROTQ_QUANT_FP8_ROW, P::V>(qa, v, m, live, row, col, tpr, red, red2); break;
    case ROTQ_QUANT_FP8_TENSOR:
        rotq_qs_bytes<ROTQ_QUANT_FP8_TENSOR, P::V>(qa, v, m, live, row, col, tpr, red, red2);
        break;
    default: rotq_qs_int4<P::V>(qa, v, m, live, row, col); break;
    }
}

// Launch of plan L; the caller (quantize_small.cu) checked the shape. dry: stop
// where the launch would go ahead (ROTQ_OK), launching nothing.
template <int L, int DT = -1, int KIND = -1>
static rotq_status rotq_qs_launch(const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t stream,
                                  const rotq_cuda_device_info *dev, bool dry) {
    typedef rotq_small_plan<L> P;
    constexpr size_t smem = (size_t)P::W_WORDS * 4;
    if (qa.cols < P::V || qa.cols > (1 << P::LE)) return ROTQ_ERR_NOT_SUPPORTED;
    static int ready[64]; // per device; 0 = limit not raised yet (256 bytes of static red, red2)
    const rotq_status st =
        rotq_cuda_smem_optin((const void *)rotq_qs_kernel<L, DT, KIND>, smem, 256, &ready[dev->device & 63], dev);
    if (st != ROTQ_OK || dry) return st;
    const int64_t total = a.groups << L;
    const unsigned grid = (unsigned)((total + (1 << P::LE) - 1) >> P::LE);
    rotq_qs_kernel<L, DT, KIND><<<grid, P::THREADS, smem, stream>>>(rotq_qs_pack(qa, a));
    return rotq_cuda_check_launch();
}

// The builds for rotq_had_fast_case (16-bit input, 16-byte loads, no signs,
// one rotation block a row) and the per-row or per-group kinds
// (quantize_small_fast.cu); ROTQ_ERR_NOT_SUPPORTED for any other call. a.kind
// and a.cols_log set; h: the rotation's arguments.
rotq_status rotq_qs_launch_fast(const rotq_q_args &a, const rotq_had_args &h, cudaStream_t stream,
                                const rotq_cuda_device_info *dev, bool dry);
