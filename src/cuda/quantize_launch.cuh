// Launchers of the quantization kernels (one file each), called by the entry
// points in quantize.cu. Each returns ROTQ_OK, ROTQ_ERR_NOT_SUPPORTED or ROTQ_ERR_CUDA.
#pragma once
#include "quantize_common.cuh"

// Host-side alignment tests.
static inline int rotq_q_aligned(const void *p, uintptr_t align) { return ((uintptr_t)p & (align - 1)) == 0; }

// Smallest power of two >= v (v >= 1).
static inline int64_t rotq_q_pow2_ceil(int64_t v) {
    int64_t p = 1;
    while (p < v) p <<= 1;
    return p;
}

// Quantize without rotation. a: everything but the rotation fields and team.
rotq_status rotq_q_launch_plain(int kind, rotq_q_args a, cudaStream_t stream, const rotq_cuda_device_info *dev);

// Fused power-of-two rotation + quantize. a: as for plain plus signs, rot_scale, log2n.
rotq_status rotq_q_launch_rot(int kind, rotq_q_args a, cudaStream_t stream, const rotq_cuda_device_info *dev);

// y = q * scale.
rotq_status rotq_q_launch_dequant(const rotq_quant_params *p, const rotq_matrix *q, const float *scales,
                                  const rotq_matrix *y, cudaStream_t stream, const rotq_cuda_device_info *dev);
