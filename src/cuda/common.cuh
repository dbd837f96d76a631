// Shared helpers of the CUDA backend: status mapping, the per-device cache,
// element load/store by dtype.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "formats.h"
#include "internal.h"

// Properties read once per device (src/cuda/device.cu).
typedef struct rotq_cuda_device_info {
    int device;         // the CUDA device index
    int sm_count;
    int max_smem_optin; // bytes of shared memory a block may opt into
    int smem_per_sm;    // bytes of shared memory of an SM
    int cc_major, cc_minor;
} rotq_cuda_device_info;

// The current device's cached properties; NULL on failure (status in *st).
const rotq_cuda_device_info *rotq_cuda_current_device(rotq_status *st);

// The counter pair of the persistent power-of-two kernels' dynamic tile order
// on this stream (device.cu): word 0 hands out tiles, word 1 counts the blocks
// that are done, and the last block sets both back to zero, so that the next
// launch on the stream finds them so. One pair per stream (by its id), so
// launches that may run at once never share one. NULL where the kernels must
// keep the static order: a stream being captured (a graph's replays may run
// beside live launches on that stream), no stream id, or every pair taken.
uint32_t *rotq_cuda_tile_counter(const rotq_cuda_device_info *dev, cudaStream_t stream);

// Blocks of a persistent kernel whose block b takes tiles b, b + grid, ...:
// as many as cover the same ceil(ntiles / grid) rounds with every block busy
// in every round. With `grid` blocks the last round is left to ntiles mod grid
// of them (n = 32768 at 2^27 elements on one block per SM: a 32nd round of
// 4 rows on 4 SMs). Used where a block has an SM to itself and takes its tiles
// in a fixed order: with several blocks per SM, fewer blocks measured slower
// (perf-notes, power-of-two v26), and with the power-of-two kernel's dynamic
// order every SM's block is faster (v38).
static inline int64_t rotq_balanced_grid(int64_t grid, int64_t ntiles) {
    if (grid < 1 || ntiles <= grid) return grid;
    const int64_t rounds = (ntiles + grid - 1) / grid;
    return (ntiles + rounds - 1) / rounds;
}

static inline cudaStream_t rotq_cuda_stream(const rotq_exec *exec) { return (cudaStream_t)exec->stream; }

// Lets `kernel` take up to the device's opt-in maximum less `reserve` bytes
// (room for its static shared memory) of dynamic shared memory. Above 48 KB,
// static included, that needs cudaFuncSetAttribute: once per (kernel, device),
// remembered in *done. Every call sets the same value (the maximum), so
// concurrent callers cannot lower the limit under one another's launch.
// ROTQ_ERR_NOT_SUPPORTED when smem does not fit.
static inline rotq_status rotq_cuda_smem_optin(const void *kernel, size_t smem, size_t reserve, int *done,
                                               const rotq_cuda_device_info *dev) {
    const size_t limit = (size_t)dev->max_smem_optin - reserve;
    if (smem > limit) return ROTQ_ERR_NOT_SUPPORTED;
    if (smem + reserve <= 48 * 1024 || __atomic_load_n(done, __ATOMIC_ACQUIRE)) return ROTQ_OK;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)limit) != cudaSuccess) {
        cudaGetLastError();
        return ROTQ_ERR_CUDA;
    }
    __atomic_store_n(done, 1, __ATOMIC_RELEASE);
    return ROTQ_OK;
}

// A launch error becomes ROTQ_ERR_CUDA; the sticky error state is cleared where possible.
static inline rotq_status rotq_cuda_check_launch(void) {
    return cudaGetLastError() == cudaSuccess ? ROTQ_OK : ROTQ_ERR_CUDA;
}

// ---- element access by runtime dtype (uniform branches) -------------------

__device__ __forceinline__ float rotq_load_elem(const void *p, int64_t i, int dtype) {
    if (dtype == ROTQ_DTYPE_F32) return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    return dtype == ROTQ_DTYPE_F16 ? __half2float(__ushort_as_half(h))
                                   : __bfloat162float(__ushort_as_bfloat16(h));
}

__device__ __forceinline__ float rotq_from_16(uint16_t h, int dtype) {
    return dtype == ROTQ_DTYPE_F16 ? __half2float(__ushort_as_half(h))
                                   : __bfloat162float(__ushort_as_bfloat16(h));
}

// The low / high 16-bit value of a word as float. bf16 is a shift or a mask (one
// instruction each; through rotq_from_16 the high half took a shift and a second
// one), f16 one HADD2.F32 on either half.
__device__ __forceinline__ float rotq_from_16_lo(uint32_t w, int dtype) {
    return dtype == ROTQ_DTYPE_F16 ? __half2float(__ushort_as_half((uint16_t)(w & 0xffffu))) : __uint_as_float(w << 16);
}
__device__ __forceinline__ float rotq_from_16_hi(uint32_t w, int dtype) {
    return dtype == ROTQ_DTYPE_F16 ? __half2float(__ushort_as_half((uint16_t)(w >> 16)))
                                   : __uint_as_float(w & 0xffff0000u);
}

__device__ __forceinline__ uint16_t rotq_to_16(float v, int dtype) {
    return dtype == ROTQ_DTYPE_F16 ? __half_as_ushort(__float2half_rn(v))
                                   : __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

// Two floats rounded to the 16-bit dtype (as rotq_to_16), a in the low half:
// one F2FP for both.
__device__ __forceinline__ uint32_t rotq_pack_16x2(float a, float b, int dtype) {
    if (dtype == ROTQ_DTYPE_F16) {
        const __half2 h = __floats2half2_rn(a, b);
        return *(const uint32_t *)&h;
    }
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *(const uint32_t *)&h;
}

__device__ __forceinline__ void rotq_store_elem(void *p, int64_t i, int dtype, float v) {
    if (dtype == ROTQ_DTYPE_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = rotq_to_16(v, dtype);
}
