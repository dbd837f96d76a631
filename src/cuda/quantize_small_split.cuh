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
