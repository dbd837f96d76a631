// Entry points of CUDA quantization: resolve the arguments (validated by
// src/api/quantize.c) into kernel arguments, check which vector accesses the
// pointers and strides allow, and pick the path:
//   no rotation                     -> quantize_plain.cu (any shape)
//   rotation with K = 1 (n = 2^m)   -> quantize_small.cu (fused, decode sizes:
//                                      rows * cols <= 2^17, cols a power of two)
//                                      or quantize_rot.cu (fused; rows that fit in
//                                      shared memory as fp32)
//   rotation with a factor K > 1    -> quantize_rot_factor.cu: fused on the
//                                      factor Hadamard kernel (16-bit inputs, one
//                                      rotation block per row), else
//   any other rotation (f32 input, block-diagonal K, longer rows)
//                                   -> quantize_rot_factor.cu (Hadamard into an
//                                      fp32 buffer, then the plain kernels)
// and dequantize -> quantize_dequant.cu.
#include <string.h>

#include "quantize_launch.cuh"

static int rotq_q_log2(int32_t v) {
    int s = 0;
    while ((1 << s) < v) s++;
    return s;
}

extern "C" rotq_status rotq__cuda_quantize(const rotq_exec *exec, const rotq_quant_params *p,
                                           const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                           const rotq_matrix *q, float *scales, int32_t *row_sums) {
    rotq_status st = ROTQ_OK;
    const rotq_cuda_device_info *dev = rotq_cuda_current_device(&st);
    if (!dev) return st;
    const int es = x->dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    const int int4 = p->kind == ROTQ_QUANT_INT4_GROUP;
    rotq_q_args a;
    memset(&a, 0, sizeof a);
    a.x = x->data;
    a.x_stride = x->stride;
    a.in_dtype = x->dtype;
    a.q = q->data;
    a.q_stride = int4 ? q->stride / 2 : q->stride;
    a.scales = scales;
    a.row_sums = p->kind == ROTQ_QUANT_INT8_ROW ? row_sums : NULL;
    a.rows = x->rows;
    a.cols = x->cols;
    if (int4) {
        a.group = p->group_size;
        a.group_shift = rotq_q_log2(p->group_size);
        a.groups_per_row = x->cols / p->group_size;
    }
    if (p->kind == ROTQ_QUANT_FP8_TENSOR) a.static_inv = rotq_static_inv(p->static_scale);
    // Row starts must keep the alignment of the data pointer (any stride for one row).
    a.vec_x = rotq_q_aligned(x->data, 16) && (x->rows == 1 || (x->stride * es) % 16 == 0);
    const uintptr_t qa = int4 ? 4 : 8;
    a.vec_q = rotq_q_aligned(q->data, qa) && (x->rows == 1 || a.q_stride % (int64_t)qa == 0);
    cudaStream_t stream = rotq_cuda_stream(exec);
    if (!rotate) return rotq_q_launch_plain(p->kind, a, stream, dev);
    if (rotate->k != 1) {
        st = rotq_q_launch_rot_factor(p->kind, a, rotate, x, stream, dev);
        if (st == ROTQ_ERR_NOT_SUPPORTED) st = rotq_cuda_quantize_two_step(exec, p, rotate, x, q, scales, row_sums);
        return st;
    }
    a.signs = rotate->signs;
    a.vec_signs = rotate->signs && rotq_q_aligned(rotate->signs, 8);
    a.rot_scale = rotate->scale;
    a.log2n = rotate->log2_pow2;
    st = rotq_q_launch_small(p->kind, a, stream, dev);
    if (st == ROTQ_ERR_NOT_SUPPORTED) st = rotq_q_launch_rot(p->kind, a, stream, dev);
    // Rows too long for the fused kernel's shared memory: rotate, then quantize.
    if (st == ROTQ_ERR_NOT_SUPPORTED) st = rotq_cuda_quantize_two_step(exec, p, rotate, x, q, scales, row_sums);
    return st;
}

extern "C" rotq_status rotq__cuda_dequantize(const rotq_exec *exec, const rotq_quant_params *p,
                                             const rotq_matrix *q, const float *scales, const rotq_matrix *y) {
    rotq_status st = ROTQ_OK;
    const rotq_cuda_device_info *dev = rotq_cuda_current_device(&st);
    if (!dev) return st;
    return rotq_q_launch_dequant(p, q, scales, y, rotq_cuda_stream(exec), dev);
}
