// Decode-size transforms of large row blocks (n = 2^L, L >= ROTQ_CLUSTER_MIN_L)
// over a thread block cluster (sm_90+). On one SM a row block costs at least
// n * L / 128 issue cycles of FADD alone (1792 at n = 16384), so the row block
// is split over 2^S blocks (S = 3: 8 blocks, the portable cluster size).
//
// Block c of the cluster loads columns c * 2^LP .. (c + 1) * 2^LP - 1 (LP = L - S)
// and does bits 0 .. LP-1 exactly as the one-block kernel does a row block of 2^LP
// (rotq_small_rounds<LP>). Its thread t then holds in register r the column
// t | r << TB | c << LP (TB thread bits: the last local round has its lanes on
// bits 0..4, so t maps to itself). The top S bits go through the other blocks'
// shared memory (DSMEM, st.async counted on the receiver's mbarrier): register r
// goes to block r mod 2^S, same thread t, as register q = r >> S | c << (LOGV - S). Block c' then holds in thread t register
// q the column t | c' << TB | q << (L - LOGV): register bits LOGV-S .. LOGV-1 are
// the top column bits, butterflied there, and the stores (stride 2^(L - LOGV))
// are coalesced over the lanes as in the last round of the one-block kernel.
#pragma once
#include "hadamard_small.cuh"

// Row blocks of at least 2^ROTQ_CLUSTER_MIN_L elements use clusters where the
// device and the loaded code allow them (see rotq_launch_cluster). 12 to 15;
// n = 4096 (12) is built too, for an A/B run (-DROTQ_CLUSTER_MIN_L=12 in
// CMAKE_CUDA_FLAGS; docs/perf-notes.md).
#ifndef ROTQ_CLUSTER_MIN_L
#define ROTQ_CLUSTER_MIN_L 13
#endif

template <int L>
struct rotq_cluster_plan {
    static constexpr int S = L - 10 < 3 ? L - 10 : 3; // blocks per cluster: 2^S
    static constexpr int LP = L - S;                  // columns per block: 2^LP
    typedef rotq_small_plan<LP> local;
    static constexpr int TB = local::TBITS;
    static constexpr int THREADS = local::THREADS;
    static constexpr int SMEM = 2 * local::W_WORDS * 4 + 8; // local W, the DSMEM exchange's, its mbarrier
    // One row block of 2^LP per block, the last local round's thread bits in place,
    // and room for the S top bits among the registers.
    __host__ __device__ static constexpr bool valid() {
        return S >= 1 && local::LE == LP && S <= local::LOGV && local::ROUNDS > 1 && local::deposit(local::ROUNDS - 1).runs == 1 &&
               local::deposit(local::ROUNDS - 1).src[0] == 0 && local::deposit(local::ROUNDS - 1).dst[0] == 0;
    }
};

// DT >= 0: the build for rotq_had_fast_case with vector output.
template <int L, int DT = -1>
__global__ void __launch_bounds__(rotq_cluster_plan<L>::THREADS) rotq_had_cluster(rotq_had_args a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 // launched only where clusters exist
    if (DT >= 0) rotq_had_fast_args(a, DT, true);
    typedef rotq_cluster_plan<L> C;
    typedef typename C::local P;
    static_assert(C::valid(), "rotq_cluster_plan: the local plan does not fit the DSMEM exchange");
    extern __shared__ float rotq_small_w[];
    float *Wx = rotq_small_w + P::W_WORDS; // written only by the DSMEM exchange: no reuse hazard
    const uint32_t mbar = ptx_smem_addr(rotq_small_w + 2 * P::W_WORDS); // 8-byte aligned
    const unsigned t = threadIdx.x, c = ptx_cluster_ctarank();
    if (t == 0) {
        ptx_mbarrier_init(mbar, 1);
        ptx_fence_mbarrier_init();
    }
    // A block barrier between the initialization and the first use: without it
    // compute-sanitizer's racecheck reports the two as a hazard.
    __syncthreads();
    // Complete when the whole of Wx (2^LP floats) has arrived from the cluster.
    if (t == 0) ptx_mbarrier_arrive_expect_tx(mbar, 4u << C::LP);
    // Matched by the wait before the first DSMEM store. Releasing (not relaxed,
    // which fence.mbarrier_init allows) so that compute-sanitizer's racecheck
    // sees the mbarrier initialization ordered before the remote arrivals;
    // nothing else is in flight here, so the release costs little.
    ptx_cluster_arrive();
    const uint32_t g = blockIdx.x >> C::S; // one cluster per row block
    float v[P::V];
    rotq_small_load_row<P::V>(a, g, (c << C::LP) | (t << P::LOGV), v);
    rotq_small_rounds<C::LP>(rotq_small_w, t, v);

    // DSMEM exchange: register r to block r mod 2^S, slot pad(t | q << TB), by
    // st.async counted on the receiver's mbarrier (no cluster-wide fence).
    const uint32_t xb = ptx_smem_addr(Wx) + 4u * (P::pad(t) + P::pad(c << (C::TB + P::LOGV - C::S)));
    uint32_t dst[1 << C::S], dbar[1 << C::S];
    ptx_cluster_wait(); // every block has started and initialized its mbarrier
#pragma unroll
    for (int d = 0; d < (1 << C::S); d++) dst[d] = ptx_mapa_shared(xb, d), dbar[d] = ptx_mapa_shared(mbar, d);
#pragma unroll
    for (int r = 0; r < P::V; r++)
        ptx_st_async_f32(dst[r & ((1 << C::S) - 1)] + 4u * P::pad((unsigned)(r >> C::S) << C::TB), v[r],
                         dbar[r & ((1 << C::S) - 1)]);
    // Once Wx is complete no block writes here any more: this block may exit after reading it.
    while (!ptx_mbarrier_try_wait(mbar, 0)) {
    }
    const unsigned rb = P::pad(t);
#pragma unroll
    for (int q = 0; q < P::V; q++) v[q] = Wx[rb + P::pad((unsigned)q << C::TB)];
#pragma unroll
    for (int i = P::LOGV - C::S; i < P::LOGV; i++)
#pragma unroll
        for (int q = 0; q < P::V; q++) {
            if (q & (1 << i)) continue;
            const float x = v[q], y = v[q | (1 << i)];
            v[q] = x + y;
            v[q | (1 << i)] = x - y;
        }
#pragma unroll
    for (int q = 0; q < P::V; q++) v[q] *= a.scale;
    uint32_t sb;
    rotq_small_write<P::V, 1 << (L - P::LOGV)>(a, rotq_small_base(a, g, a.y_stride, &sb) + (t | (c << C::TB)), false, v);
#endif
}
