// Decode-size transforms of long row blocks (n = 2^L, L >= ROTQ_SPLIT_MIN_L),
// out of place, over 2^T blocks a row block that never communicate.
//
// Sylvester's H_n = H_{2^T} (x) H_{2^LP} (LP = L - T): with x_j the j-th slice of
// 2^LP columns of a row block, output slice p is
//     y_p = H_{2^LP} z_p,   z_p = sum_j (-1)^popc(p & j) x_j.
// Block p of the row block's 2^T blocks reads the whole row block (2^T slices,
// the same columns of each: a thread's V values of slice j are its round-0
// values of the local plan), combines them into z_p (2^T - 1 FFMA a value, top
// bits first in ascending order) and runs the one-block kernel's rounds of
// rotq_small_plan<LP> on it. The cluster kernel (hadamard_small_cluster.cuh)
// splits the same work by a DSMEM exchange of the top bits after the local
// rounds; here the exchange is replaced by reading the row block 2^T times (all
// but the first from L2), which costs no synchronization at all. Out of place
// only: block p writes slice p while the others are still reading it.
#pragma once
#include "hadamard_small.cuh"

// Row blocks of at least 2^ROTQ_SPLIT_MIN_L elements take this kernel (out of
// place, while the blocks fit one wave: rotq_split_fits). n = 2048 on two
// blocks: 2048 x 32 rows 4.32-4.54 -> 4.19-4.38 us in a same-run A/B (decode v16).
#ifndef ROTQ_SPLIT_MIN_L
#define ROTQ_SPLIT_MIN_L 11
#endif
// Blocks a row block: 2^T with T = L - 10, so that the local plan is 2^10
// columns (128 threads of 8 values, the smallest whole-block plan), as long as a
// thread's 2^T slices of V values (fp32 after the conversion) stay within
// ROTQ_SPLIT_MAX_VALUES (n = 32768: T = 3, local plans of 2^12; at T = 4 the
// generic build spilled 288 bytes) and T <= ROTQ_SPLIT_MAX_T (both A/B switches).
// Same-run A/Bs on the H100 (perf-notes, decode v10, v13, v16): n = 4096 x 1 in
// four blocks (T = 2) 4.51-4.77 -> 4.13-4.32 us, in two (T = 1) 4.16-4.58;
// n = 16384 x 4 rows 5.38-5.55 (cluster kernel) -> 5.12-5.22 with T = 2,
// 5.06-5.28 with T = 3, 4.85-5.17 with T = 4; n = 32768 x 2 with T = 5 (256
// values) 0.2 us faster than T = 3 in the f16 build, not taken for the spills.
#ifndef ROTQ_SPLIT_MAX_T
#define ROTQ_SPLIT_MAX_T 4
#endif
#ifndef ROTQ_SPLIT_MAX_VALUES
#define ROTQ_SPLIT_MAX_VALUES 128
#endif

// log2 of the blocks a row block of 2^L (L >= 11).
__host__ __device__ constexpr int rotq_split_t(int L) {
    int t = L - 10 < ROTQ_SPLIT_MAX_T ? L - 10 : ROTQ_SPLIT_MAX_T;
    while (t > 1 && (1 << (t + rotq_small_logv(L - t))) > ROTQ_SPLIT_MAX_VALUES) t--;
    return t;
}

template <int L>
struct rotq_split_plan {
    static constexpr int T = rotq_split_t(L); // blocks a row block: 2^T
    static constexpr int LP = L - T;
    typedef rotq_small_plan<LP> local;
    static constexpr int THREADS = local::THREADS;
    static constexpr int SMEM = local::W_WORDS * 4;
    static constexpr bool valid() { return T >= 1 && local::LE == LP; }
};

// Whether the 2^T blocks of each of `groups` row blocks of 2^L all start in
// the first wave (one block an SM at most).
static inline bool rotq_split_one_wave(int L, int64_t groups, const rotq_cuda_device_info *dev) {
    return (groups << rotq_split_t(L)) <= (int64_t)dev->sm_count;
}

// Whether a Hadamard call takes the split kernel: out of place, in one wave.
static inline bool rotq_split_fits(int L, const rotq_had_args &a, const rotq_cuda_device_info *dev) {
    if (L < ROTQ_SPLIT_MIN_L || L > 15 || a.x == (const void *)a.y) return false;
    return rotq_split_one_wave(L, a.groups, dev);
}

// Thread t's round-0 values of z_p (the local plan's V consecutive columns) for
// row block g, signs applied: its columns of every slice, then the slice bits
// in ascending order, bit b with the sign (-1)^(bit b of p) (+-1 factors are exact).
template <int L>
__device__ __forceinline__ void rotq_split_load(const rotq_had_args &a, uint32_t g, uint32_t p, unsigned t,
                                                float *v) {
    typedef rotq_split_plan<L> S;
    typedef typename S::local P;
    static_assert(S::valid(), "rotq_split_plan: the local plan is not one row block a block");
    float x[1 << S::T][P::V];
    if (a.in_dtype != ROTQ_DTYPE_F32 && a.vec_in && !a.signs) {
        // 16-bit vectors (every fast build): every slice's loads first, from one
        // base, then the conversions, so that all 2^T loads are in flight at
        // once. Loaded and converted slice by slice (a 64-bit address each),
        // ptxas issued them in batches, each waiting for the one before
        // (perf-notes, decode v15; the kernels' launch bounds matter too).
        uint32_t sb;
        const uint4 *xr = (const uint4 *)((const uint16_t *)a.x + rotq_small_base(a, g, a.x_stride, &sb) +
                                          (t << P::LOGV));
        uint4 raw[1 << S::T][P::V / 8];
#pragma unroll
        for (int j = 0; j < (1 << S::T); j++)
#pragma unroll
            for (int i = 0; i < P::V / 8; i++) raw[j][i] = xr[((size_t)j << (S::LP - 3)) + i];
#pragma unroll
        for (int j = 0; j < (1 << S::T); j++)
            rotq_small_unpack16<P::V / 2>((const uint32_t *)raw[j], a.in_dtype == ROTQ_DTYPE_F16, x[j]);
    } else {
#pragma unroll
        for (int j = 0; j < (1 << S::T); j++)
            rotq_small_load_row<P::V>(a, g, ((uint32_t)j << S::LP) | (t << P::LOGV), x[j]);
    }
#pragma unroll
    for (int b = 0; b < S::T; b++) {
        const float sg = (p >> b) & 1u ? -1.0f : 1.0f;
#pragma unroll
        for (int j = 0; j < (1 << S::T); j += 2 << b)
#pragma unroll
            for (int r = 0; r < P::V; r++) x[j][r] = fmaf(sg, x[j + (1 << b)][r], x[j][r]);
    }
#pragma unroll
    for (int r = 0; r < P::V; r++) v[r] = x[0][r];
}

// DT >= 0: the build for rotq_had_fast_case with vector output. One block an SM
// (the launch is one wave): with no minimum, ptxas kept registers down by
// sinking the later slices' loads below the first slices' conversions.
template <int L, int DT = -1>
__global__ void __launch_bounds__(rotq_split_plan<L>::THREADS, 1) rotq_had_split(rotq_had_args a) {
    typedef rotq_split_plan<L> S;
    typedef typename S::local P;
    if (DT >= 0) rotq_had_fast_args(a, DT, true);
    extern __shared__ float rotq_small_w[];
    const unsigned t = threadIdx.x;
    const uint32_t g = blockIdx.x >> S::T, p = blockIdx.x & ((1u << S::T) - 1u);
    float v[P::V];
    rotq_split_load<L>(a, g, p, t, v);
    rotq_small_rounds<S::LP>(rotq_small_w, t, v);
    constexpr int K = P::ROUNDS - 1;
#pragma unroll
    for (int r = 0; r < P::V; r++) v[r] *= a.scale;
    uint32_t sb;
    const int64_t off = rotq_small_base(a, g, a.y_stride, &sb) + ((int64_t)p << S::LP) + rotq_small_dep<S::LP, K>(t);
    rotq_small_write<P::V, 1 << P::lo(K)>(a, off, a.vec_out != 0, v);
}
