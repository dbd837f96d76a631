// Fused rotation + int4 group quantize at decode sizes for rows of one rotation
// block of n = 2^L >= 4096, on the split Hadamard kernel
// (hadamard_small_split.cuh): 2^T blocks a row, block p reads the whole row,
// forms z_p and runs the rounds of the n / 2^T plan, then quantizes its slice as
// the one-block kernel (quantize_small.cuh) quantizes a row. A group (at most 128
// columns) lies inside a slice, so the blocks need nothing from each other.
//
// Not for the per-row kinds: their row absmax and row sum span the slices. Built
// with the row's blocks as a cluster trading their parts by st.async (4 bytes a
// block), int8 / fp8 at n = 4096 measured 0.35-0.4 us slower than the one-block
// kernel, where int4 gained 0.3 us (perf-notes, decode v11).
//
// Built for the common case only (16-bit input, 16-byte loads, no signs, one
// rotation block a row: rotq_had_fast_case); every other call takes
// quantize_small.cuh's kernels.
#pragma once
#include "hadamard_small_split.cuh"
#include "quantize_small.cuh"

// The smallest and largest rotation the split quantize kernel is built for.
#define ROTQ_QS_SPLIT_MIN_L 12
#define ROTQ_QS_SPLIT_MAX_L 14

// One block an SM, as rotq_had_split (all of a thread's loads in flight at once).
template <int L, int DT>
__global__ void __launch_bounds__(rotq_split_plan<L>::THREADS, 1) rotq_qs_split_int4(rotq_qs_args args) {
    typedef rotq_split_plan<L> S;
    typedef typename S::local P;
    rotq_q_args qa;
    rotq_had_args a;
    rotq_qs_unpack(args, qa, a);
    rotq_had_fast_args(a, DT, false);
    extern __shared__ float rotq_qs_w[];
    const unsigned t = threadIdx.x;
    const uint32_t row = blockIdx.x >> S::T, p = blockIdx.x & ((1u << S::T) - 1u);
    float v[P::V];
    rotq_split_load<L>(a, row, p, t, v);
    rotq_small_rounds<S::LP>(rotq_qs_w, t, v);
    rotq_qs_to_rows<S::LP>(rotq_qs_w, t, v, a.scale);
    rotq_qs_int4<P::V>(qa, v, rotq_qt_maxabs_nan<P::V, 4>(v), true, row, (p << S::LP) | (t << P::LOGV));
}

// The per-row int8 / fp8 kinds on the split: the row's 2^T blocks are one
// cluster (L <= ROTQ_QS_SPLIT_ROW_MAX_L: 4 or 8 blocks, the portable sizes).
// Each warp sends its finite-only absmax to every block of the cluster (st.async,
// 4 bytes on the receiver's mbarrier: no block barrier before it), and each
// block takes the row absmax from the 2^T * WARPS words it receives. The int8
// row sum goes to global memory by one atomic add a warp (a fire-and-forget
// RED), on a word that block 0 zeroed before its cluster arrival (release), which
// every add follows (the cluster wait, acquire). An A/B switch: 0 keeps these
// kinds on the one-block kernel (quantize_small.cuh).
#ifndef ROTQ_QS_SPLIT_ROW
#define ROTQ_QS_SPLIT_ROW 0
#endif
#define ROTQ_QS_SPLIT_ROW_MAX_L 13

template <int L, int DT, int KIND>
__global__ void __launch_bounds__(rotq_split_plan<L>::THREADS, 1) rotq_qs_split_row(rotq_qs_args args) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 // launched only where clusters exist
    typedef rotq_split_plan<L> S;
    typedef typename S::local P;
    typedef rotq_q_kind<KIND> K;
    constexpr int WARPS = S::THREADS / 32, SLOTS = WARPS << S::T;
    rotq_q_args qa;
    rotq_had_args a;
    rotq_qs_unpack(args, qa, a);
    rotq_had_fast_args(a, DT, false);
    extern __shared__ float rotq_qs_w[];
    __shared__ float slot[SLOTS];  // the cluster's warp absmaxes, at p * WARPS + warp
    __shared__ uint64_t mbar_word; // complete once every slot has arrived
    const unsigned t = threadIdx.x, warp = t >> 5, lane = t & 31u;
    const uint32_t row = blockIdx.x >> S::T, p = ptx_cluster_ctarank();
    const uint32_t mbar = ptx_smem_addr(&mbar_word);
    int32_t *rs = KIND == ROTQ_QUANT_INT8_ROW ? qa.row_sums : nullptr;
    if (t == 0) {
        ptx_mbarrier_init(mbar, 1);
        ptx_fence_mbarrier_init();
        if (rs && p == 0) rs[row] = 0;
    }
    __syncthreads(); // racecheck: the initialization before any use
    if (t == 0) ptx_mbarrier_arrive_expect_tx(mbar, 4u * SLOTS);
    ptx_cluster_arrive(); // releases the mbarrier's initialization and block 0's zero
    float v[P::V];
    rotq_split_load<L>(a, row, p, t, v);
    rotq_small_rounds<S::LP>(rotq_qs_w, t, v);
    rotq_qs_to_rows<S::LP>(rotq_qs_w, t, v, a.scale);
    const float m = rotq_qt_maxabs_nan<P::V, 4>(v);
    const float wam = rotq_warp_max_nonneg(rotq_qs_absmax<P::V>(v, m));
    ptx_cluster_wait(); // every block has initialized its mbarrier (and block 0 zeroed the sum)
    if (lane < (1u << S::T))
        ptx_st_async_f32(ptx_mapa_shared(ptx_smem_addr(&slot[p * WARPS + warp]), lane), wam,
                         ptx_mapa_shared(mbar, lane));
    // Once every slot has arrived no block writes here any more: this block may exit after reading them.
    while (!ptx_mbarrier_try_wait(mbar, 0)) {
    }
    float am = slot[0];
#pragma unroll
    for (int i = 1; i < SLOTS; i++) am = fmaxf(am, slot[i]);
    float inv;
    const float sc = rotq_qt_inv_or_scale(am, K::QMAX, (t & 1u) != 0, &inv);
    if (p == 0 && t == 1) qa.scales[row] = sc; // the row's second thread, as rotq_qs_bytes
    uint32_t cw[P::V / 4], sum = 0;
    if (m < INFINITY) {
#pragma unroll
        for (int i = 0; i < P::V / 8; i++) rotq_q_codes8<K::FP8, false>(v + 8 * i, inv, &cw[2 * i], &cw[2 * i + 1], &sum);
    } else {
#pragma unroll
        for (int i = 0; i < P::V / 8; i++) rotq_q_codes8<K::FP8, true>(v + 8 * i, inv, &cw[2 * i], &cw[2 * i + 1], &sum);
    }
    if (rs) {
        sum = rotq_warp_sum_u32(sum);
        if (lane == 0) atomicAdd((unsigned *)&rs[row], sum);
    }
    uint2 *q = (uint2 *)((uint8_t *)qa.q + (int64_t)row * qa.q_stride + ((p << S::LP) | (t << P::LOGV)));
#pragma unroll
    for (int i = 0; i < P::V / 8; i++) q[i] = make_uint2(cw[2 * i], cw[2 * i + 1]);
#endif
}

// The per-row kinds' launch: a cluster of 2^T blocks a row, while they fit one
// wave, where the device has clusters and the loaded code is sm_90's (checked
// once per device, as rotq_launch_cluster); else ROTQ_ERR_NOT_SUPPORTED.
template <int L, int DT, int KIND>
static rotq_status rotq_qs_split_row_launch(const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t stream,
                                            const rotq_cuda_device_info *dev, bool dry) {
    typedef rotq_split_plan<L> S;
    static_assert(S::SMEM <= 48 * 1024, "rotq_qs_split_row_launch: W past the default shared-memory limit");
    if (qa.cols_log != L || !rotq_split_one_wave(L, a.groups, dev)) return ROTQ_ERR_NOT_SUPPORTED;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1u << S::T;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3((unsigned)(a.groups << S::T));
    cfg.blockDim = dim3(S::THREADS);
    cfg.dynamicSmemBytes = S::SMEM;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    static int usable[64]; // per device: 0 not checked yet, 1 yes, -1 no
    int *slot = &usable[dev->device & 63];
    int u = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (u == 0) {
        cudaFuncAttributes fa;
        int clusters = 0;
        u = dev->cc_major >= 9 &&
                    cudaFuncGetAttributes(&fa, (const void *)rotq_qs_split_row<L, DT, KIND>) == cudaSuccess &&
                    fa.ptxVersion >= 90 &&
                    cudaOccupancyMaxActiveClusters(&clusters, (const void *)rotq_qs_split_row<L, DT, KIND>, &cfg) ==
                        cudaSuccess &&
                    clusters > 0
                ? 1
                : -1;
        cudaGetLastError();
        __atomic_store_n(slot, u, __ATOMIC_RELEASE);
    }
    if (u < 0) return ROTQ_ERR_NOT_SUPPORTED;
    if (dry) return ROTQ_OK;
    cudaLaunchKernelEx(&cfg, rotq_qs_split_row<L, DT, KIND>, rotq_qs_pack(qa, a));
    return rotq_cuda_check_launch();
}

// Rows of one rotation block of 2^L (L in ROTQ_QS_SPLIT_MIN_L .. _MAX_L) whose
// 2^T blocks fit one wave; else ROTQ_ERR_NOT_SUPPORTED. qa: cols_log set.
template <int L, int DT>
static rotq_status rotq_qs_split_launch(const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t stream,
                                        const rotq_cuda_device_info *dev, bool dry) {
    typedef rotq_split_plan<L> S;
    static_assert(S::SMEM <= 48 * 1024, "rotq_qs_split_launch: W past the default shared-memory limit");
    if (qa.cols_log != L || !rotq_split_one_wave(L, a.groups, dev)) return ROTQ_ERR_NOT_SUPPORTED;
    if (dry) return ROTQ_OK;
    rotq_qs_split_int4<L, DT><<<(unsigned)(a.groups << S::T), S::THREADS, S::SMEM, stream>>>(rotq_qs_pack(qa, a));
    return rotq_cuda_check_launch();
}
