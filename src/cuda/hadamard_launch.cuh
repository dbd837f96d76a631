// Launchers of the Hadamard kernels. The instantiations are spread over
// hadamard_inst_*.cu so that they compile in parallel.
#pragma once
#include "hadamard_factor.cuh"

static inline rotq_status rotq_set_smem(const void *kernel, size_t smem, const rotq_cuda_device_info *dev) {
    if (smem > (size_t)dev->max_smem_optin) return ROTQ_ERR_NOT_SUPPORTED;
    if (smem > 48 * 1024 &&
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess) {
        cudaGetLastError();
        return ROTQ_ERR_CUDA;
    }
    return ROTQ_OK;
}

// Blocks of a persistent kernel: enough to fill every SM, at most one per tile.
// The occupancy query runs once per (kernel, device).
static inline int rotq_persistent_blocks(const void *kernel, int threads, size_t smem, int *cache,
                                         const rotq_cuda_device_info *dev) {
    int per_sm = __atomic_load_n(cache, __ATOMIC_RELAXED);
    if (per_sm <= 0) {
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) != cudaSuccess ||
            per_sm <= 0) {
            cudaGetLastError();
            per_sm = 1;
        }
        __atomic_store_n(cache, per_sm, __ATOMIC_RELAXED);
    }
    return per_sm * dev->sm_count;
}

template <int L, int ES>
static rotq_status rotq_launch_pow2(const rotq_had_args &a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    typedef rotq_pow2_plan<L> plan;
    typedef rotq_pow2_smem<L, ES> sm;
    static int occupancy[64]; // per device; 0 = not asked yet
    const void *kernel = (const void *)rotq_had_pow2<L, ES>;
    rotq_status st = rotq_set_smem(kernel, sm::BYTES, dev);
    if (st != ROTQ_OK) return st;
    int device = 0;
    cudaGetDevice(&device);
    const int64_t total = a.groups << L;
    const int64_t ntiles = (total + sm::TILE_CTA - 1) / sm::TILE_CTA;
    int64_t grid = rotq_persistent_blocks(kernel, plan::THREADS, sm::BYTES, &occupancy[device & 63], dev);
    if (grid > ntiles) grid = ntiles;
    rotq_had_pow2<L, ES><<<(unsigned)grid, plan::THREADS, sm::BYTES, stream>>>(a);
    return rotq_cuda_check_launch();
}

// Shared memory of the factor kernel with `stages` staging buffers.
template <int L, int ES>
static size_t rotq_factor_smem(const rotq_had_args &a, const rotq_had_factor &f, int stages) {
    typedef rotq_pow2_plan<L> plan;
    const int64_t elems = (int64_t)f.groups_per_block * a.n;
    const int64_t pass = (int64_t)plan::TILE * (ROTQ_FACTOR_THREADS / plan::SUB_THREADS); // W per pass
    const int64_t w_elems = (elems + pass - 1) / pass * pass;
    return (size_t)f.kt * f.kt * 512 + 128 + stages * rotq_factor_stage_bytes(f.groups_per_block, a.n, ES) +
           (size_t)w_elems * 4;
}

template <int L, int ES>
static rotq_status rotq_launch_factor(const rotq_had_args &a, rotq_had_factor &f, cudaStream_t stream,
                                      const rotq_cuda_device_info *dev) {
    static int occupancy[2][64]; // per stage count and device; 0 = not asked yet
    const void *kernel = (const void *)rotq_had_factor_kernel<L, ES>;
    // Two blocks per SM without prefetch beat one block with it: take the
    // single stage when that is what lets a second block fit.
    const size_t smem2 = rotq_factor_smem<L, ES>(a, f, 2), smem1 = rotq_factor_smem<L, ES>(a, f, 1);
    const size_t per_sm = (size_t)dev->max_smem_optin + 1024;
    f.stages = (per_sm / (smem2 + 1024) < 2 && per_sm / (smem1 + 1024) >= 2) || smem2 > (size_t)dev->max_smem_optin ? 1 : 2;
    const size_t smem = f.stages == 2 ? smem2 : smem1;
    rotq_status st = rotq_set_smem(kernel, smem, dev);
    if (st != ROTQ_OK) return st;
    int device = 0;
    cudaGetDevice(&device);
    const int64_t ntiles = (a.groups + f.groups_per_block - 1) / f.groups_per_block;
    int64_t grid = rotq_persistent_blocks(kernel, ROTQ_FACTOR_THREADS, smem, &occupancy[f.stages - 1][device & 63], dev);
    if (grid > ntiles) grid = ntiles;
    rotq_had_factor_kernel<L, ES><<<(unsigned)grid, ROTQ_FACTOR_THREADS, smem, stream>>>(a, f);
    return rotq_cuda_check_launch();
}

// One per input element size (2: f16/bf16, 4: f32); ROTQ_ERR_NOT_SUPPORTED for
// sizes without a kernel.
rotq_status rotq_dispatch_pow2_es2(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d);
rotq_status rotq_dispatch_pow2_es4(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d);
rotq_status rotq_dispatch_factor_es2(int L, const rotq_had_args &a, rotq_had_factor &f, cudaStream_t s,
                                     const rotq_cuda_device_info *d);
rotq_status rotq_dispatch_factor_es4(int L, const rotq_had_args &a, rotq_had_factor &f, cudaStream_t s,
                                     const rotq_cuda_device_info *d);
// Second pass of the two-pass transform for n = K * 2^L > 32768 (hadamard_kcols.cuh):
// H_K applied to the first pass's output x (element size es; only 4 is built) into y.
rotq_status rotq_launch_kcols(int es, const rotq_had_args &a, int L, const rotq_had_factor &f, cudaStream_t s,
                              const rotq_cuda_device_info *d);
