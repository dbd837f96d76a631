// Launchers of the quantization kernels (one file each), called by the entry
// points in quantize.cu. Each returns ROTQ_OK, ROTQ_ERR_NOT_SUPPORTED or ROTQ_ERR_CUDA.
// Those of the rotated paths take `dry`: decide only, launch nothing (ROTQ_OK
// where the launch would go ahead), for the workspace query (quantize.cu).
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
rotq_status rotq_q_launch_rot(int kind, rotq_q_args a, cudaStream_t stream, const rotq_cuda_device_info *dev,
                              bool dry);

// Fused power-of-two rotation + quantize for decode sizes (quantize_small.cu):
// ROTQ_ERR_NOT_SUPPORTED for shapes it does not take (the caller goes on to
// rotq_q_launch_rot). a: as for rotq_q_launch_rot.
rotq_status rotq_q_launch_small(int kind, rotq_q_args a, cudaStream_t stream, const rotq_cuda_device_info *dev,
                                bool dry);

// y = q * scale.
rotq_status rotq_q_launch_dequant(const rotq_quant_params *p, const rotq_matrix *q, const float *scales,
                                  const rotq_matrix *y, cudaStream_t stream, const rotq_cuda_device_info *dev);

// Fused K*2^m rotation + quantize on the factor Hadamard kernel: 16-bit inputs,
// rows of one rotation block (cols == rotate->size), vector code stores; else
// ROTQ_ERR_NOT_SUPPORTED. a: as for plain (quantize_rot_factor.cu).
rotq_status rotq_q_launch_rot_factor(int kind, rotq_q_args a, const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                     cudaStream_t stream, const rotq_cuda_device_info *dev, bool dry);

// Quantize with a rotation the fused kernels do not cover (a K*2^m factor, or
// rows too long for them): Hadamard into an fp32 buffer, then the plain kernels
// (quantize_rot_factor.cu). The buffer: exec->workspace, else the pool.
rotq_status rotq_cuda_quantize_two_step(const rotq_exec *exec, const rotq_quant_params *p,
                                        const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                        const rotq_matrix *q, float *scales, int32_t *row_sums,
                                        const rotq_cuda_device_info *dev);
// Buffers of the two-step path (workspace.cuh): 1, or 2 when its Hadamard of x
// itself takes two passes (a second fp32 buffer, for that pass).
rotq_status rotq_cuda_quantize_two_step_parts(const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                              const rotq_cuda_device_info *dev, int *parts);
