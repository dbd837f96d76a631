// CUDA quantization: not implemented yet (issue: fused rotate + quantize).
#include "common.cuh"

extern "C" rotq_status rotq__cuda_quantize(const rotq_exec *exec, const rotq_quant_params *p,
                                           const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                           const rotq_matrix *q, float *scales, int32_t *row_sums) {
    return ROTQ_ERR_NOT_SUPPORTED;
}

extern "C" rotq_status rotq__cuda_dequantize(const rotq_exec *exec, const rotq_quant_params *p,
                                             const rotq_matrix *q, const float *scales, const rotq_matrix *y) {
    return ROTQ_ERR_NOT_SUPPORTED;
}
