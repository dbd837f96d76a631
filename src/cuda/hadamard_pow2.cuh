// Power-of-two Hadamard kernels (K = 1). See hadamard_plan.cuh for the layout.
#pragma once
#include "hadamard_io.cuh"
#include "hadamard_plan.cuh"

// Butterflies of phase p for the register bits that are active in it.
template <int L>
__device__ __forceinline__ void rotq_phase(int p, float v[32]) {
    typedef rotq_pow2_plan<L> plan;
    if (plan::active(p, 0)) rotq_butterfly<0>(v);
    if (plan::active(p, 1)) rotq_butterfly<1>(v);
    if (plan::active(p, 2)) rotq_butterfly<2>(v);
    if (plan::active(p, 3)) rotq_butterfly<3>(v);
    if (plan::active(p, 4)) rotq_butterfly<4>(v);
}

// Loads the 32 elements e0..e0+31 (all inside one row block when contiguous),
// applying the sign vector. Elements past `total` read as 0.
template <int L, int ES>
__device__ __forceinline__ void rotq_load_run(const rotq_had_args &a, int64_t e0, int64_t total, bool vec,
                                              float v[32]) {
    const int64_t mask = (1 << L) - 1;
    if (vec && e0 + 32 <= total) {
        int64_t base = rotq_group_base(a, e0 >> L, a.x_stride) + (e0 & mask);
        rotq_load32_vec<ES>((const char *)a.x + base * ES, a.in_dtype, v);
    } else {
#pragma unroll
        for (int r = 0; r < 32; r++) {
            int64_t e = e0 + r;
            v[r] = e < total ? rotq_load_elem(a.x, rotq_group_base(a, e >> L, a.x_stride) + (e & mask), a.in_dtype)
                             : 0.0f;
        }
    }
    if (a.signs) {
#pragma unroll
        for (int r = 0; r < 32; r++) {
            int64_t e = e0 + r;
            if (e < total) v[r] = rotq_apply_sign(a.signs, rotq_sign_base(a, e >> L) + (e & mask), v[r]);
        }
    }
}

// Small sizes (n <= 32): each thread owns 32 consecutive elements, whole row
// blocks, so the transform needs no data exchange at all.
template <int L, int ES>
__global__ void __launch_bounds__(256) rotq_had_pow2_small(rotq_had_args a) {
    const int64_t total = a.groups << L;
    const int64_t e0 = ((int64_t)blockIdx.x * 256 + threadIdx.x) * 32;
    if (e0 >= total) return;
    float v[32];
    rotq_load_run<L, ES>(a, e0, total, a.vec_in != 0, v);
    if (L > 0) rotq_butterfly<0>(v);
    if (L > 1) rotq_butterfly<1>(v);
    if (L > 2) rotq_butterfly<2>(v);
    if (L > 3) rotq_butterfly<3>(v);
    if (L > 4) rotq_butterfly<4>(v);
#pragma unroll
    for (int r = 0; r < 32; r++) v[r] *= a.scale;
    const int64_t mask = (1 << L) - 1;
    if (a.vec_out && e0 + 32 <= total) {
        int64_t base = rotq_group_base(a, e0 >> L, a.y_stride) + (e0 & mask);
        int osz = a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2;
        rotq_store32_vec((char *)a.y + base * osz, a.out_dtype, v);
    } else {
#pragma unroll
        for (int r = 0; r < 32; r++) {
            int64_t e = e0 + r;
            if (e < total) rotq_store_elem(a.y, rotq_group_base(a, e >> L, a.y_stride) + (e & mask), a.out_dtype, v[r]);
        }
    }
}

// Block-wide or warp-wide barrier between phases, depending on the subtile size.
template <int SUB_THREADS>
__device__ __forceinline__ void rotq_subtile_sync(void) {
    if (SUB_THREADS == 32)
        __syncwarp();
    else
        __syncthreads();
}

// Where element e of a subtile sequence goes. Power-of-two kernels: e indexes
// row blocks of 2^L. Factor kernels (KF): e indexes the K*G rows of 2^L that a
// block holds in W, G row blocks of n = K*2^L starting at row block g0.
template <int L, bool KF>
__device__ __forceinline__ void rotq_store_one(const rotq_had_args &a, int64_t e, int64_t total, int32_t k,
                                               int64_t g0, float v) {
    const int64_t mask = (1 << L) - 1;
    if (e >= total) return;
    if (!KF) {
        rotq_store_elem(a.y, rotq_group_base(a, e >> L, a.y_stride) + (e & mask), a.out_dtype, v);
    } else {
        int32_t krow = (int32_t)(e >> L);
        int32_t gl = krow / k;
        int64_t g = g0 + gl;
        if (g < a.groups)
            rotq_store_elem(a.y, rotq_group_base(a, g, a.y_stride) + ((int64_t)(krow - gl * k) << L) + (e & mask),
                            a.out_dtype, v);
    }
}

// The phases after phase 0, run on values already in registers (phase-0
// layout); the last phase scales and stores to global memory.
template <int L, bool KF>
__device__ __forceinline__ void rotq_pow2_phases(const rotq_had_args &a, float *W, unsigned tid, int64_t e_tile,
                                                 int64_t total, int32_t k, int64_t g0, float v[32]) {
    typedef rotq_pow2_plan<L> plan;
#pragma unroll
    for (int p = 1; p < plan::PHASES; p++) {
        const unsigned wbase = rotq_phase_base(tid, plan::lo(p - 1));
#pragma unroll
        for (int r = 0; r < 32; r++) W[wbase ^ rotq_w_swizzle((unsigned)r << plan::lo(p - 1))] = v[r];
        rotq_subtile_sync<plan::SUB_THREADS>();
        const unsigned rbase = rotq_phase_base(tid, plan::lo(p));
#pragma unroll
        for (int r = 0; r < 32; r++) v[r] = W[rbase ^ rotq_w_swizzle((unsigned)r << plan::lo(p))];
        rotq_phase<L>(p, v);
        // No barrier before the next phase's writes: each thread writes back
        // exactly the W slots it has just read.
    }
    // Store: in phases >= 1 lanes hold consecutive columns, so warp stores coalesce.
    const int lo = plan::lo(plan::PHASES - 1);
    const unsigned dep = (tid & ((1u << lo) - 1u)) | ((tid >> lo) << (lo + 5));
#pragma unroll
    for (int r = 0; r < 32; r++)
        rotq_store_one<L, KF>(a, e_tile + (int64_t)(dep | ((unsigned)r << lo)), total, k, g0, v[r] * a.scale);
}

// Sizes 64 .. 32768: subtiles of 2^LT elements, phases through shared memory.
template <int L, int ES>
__global__ void __launch_bounds__(rotq_pow2_plan<L>::THREADS) rotq_had_pow2_tiled(rotq_had_args a) {
    typedef rotq_pow2_plan<L> plan;
    extern __shared__ float rotq_smem[];
    const unsigned sub = threadIdx.x / plan::SUB_THREADS;
    const unsigned tid = threadIdx.x % plan::SUB_THREADS;
    float *W = rotq_smem + sub * plan::TILE;
    const int64_t total = a.groups << L;
    const int64_t e_tile = ((int64_t)blockIdx.x * plan::SUBTILES + sub) << plan::LOG_TILE;
    // Phase 0: 32 consecutive elements of one row block (2^L >= 64), 16-byte loads.
    float v[32];
    rotq_load_run<L, ES>(a, e_tile + tid * 32, total, a.vec_in != 0, v);
    rotq_phase<L>(0, v);
    rotq_pow2_phases<L, false>(a, W, tid, e_tile, total, 1, 0, v);
}
