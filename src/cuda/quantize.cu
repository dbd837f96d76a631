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
// and dequantize -> quantize_dequant.cu. The workspace query runs the same
// choice without launching (rotq__cuda_quantize_workspace).
#include <string.h>

#include "quantize_launch.cuh"
#include "workspace.cuh"

static int rotq_q_log2(int32_t v) {
    int s = 0;
    while ((1 << s) < v) s++;
    return s;
}

// Kernel arguments of a quantize call, with the vector access the pointers and
// strides allow (the rotation fields are the rotated paths' own).
static void rotq_q_args_for(const rotq_quant_params *p, const rotq_matrix *x, const rotq_matrix *q, float *scales,
                            int32_t *row_sums, rotq_q_args *a) {
    const int es = x->dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    const int int4 = p->kind == ROTQ_QUANT_INT4_GROUP;
    memset(a, 0, sizeof *a);
    a->x = x->data;
    a->x_stride = x->stride;
    a->in_dtype = x->dtype;
    a->q = q->data;
    a->q_stride = int4 ? q->stride / 2 : q->stride;
    a->scales = scales;
    a->row_sums = p->kind == ROTQ_QUANT_INT8_ROW ? row_sums : NULL;
    a->rows = x->rows;
    a->cols = x->cols;
    if (int4) {
        a->group = p->group_size;
        a->group_shift = rotq_q_log2(p->group_size);
        a->groups_per_row = x->cols / p->group_size;
    }
    if (p->kind == ROTQ_QUANT_FP8_TENSOR) a->static_inv = rotq_static_inv(p->static_scale);
    // Row starts must keep the alignment of the data pointer (any stride for one row).
    a->vec_x = rotq_q_aligned(x->data, 16) && (x->rows == 1 || (x->stride * es) % 16 == 0);
    const uintptr_t qa = int4 ? 4 : 8;
    a->vec_q = rotq_q_aligned(q->data, qa) && (x->rows == 1 || a->q_stride % (int64_t)qa == 0);
}

// The fused kernels of a rotated quantize: ROTQ_ERR_NOT_SUPPORTED when none takes
// the call (it goes through the two-step path). dry: decide only, launch nothing;
// the workspace query runs this same function that way.
static rotq_status rotq_q_rotated(int kind, rotq_q_args a, const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                  cudaStream_t stream, const rotq_cuda_device_info *dev, bool dry) {
    if (rotate->k != 1) return rotq_q_launch_rot_factor(kind, a, rotate, x, stream, dev, dry);
    a.signs = rotate->signs;
    a.vec_signs = rotate->signs && rotq_q_aligned(rotate->signs, 8);
    a.rot_scale = rotate->scale;
    a.log2n = rotate->log2_pow2;
    rotq_status st = rotq_q_launch_small(kind, a, stream, dev, dry);
    if (st == ROTQ_ERR_NOT_SUPPORTED) st = rotq_q_launch_rot(kind, a, stream, dev, dry);
    return st; // NOT_SUPPORTED: rows too long for the fused kernel's shared memory
}

extern "C" rotq_status rotq__cuda_quantize(const rotq_exec *exec, const rotq_quant_params *p,
                                           const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                           const rotq_matrix *q, float *scales, int32_t *row_sums) {
    rotq_status st = ROTQ_OK;
    const rotq_cuda_device_info *dev = rotq_cuda_current_device(&st);
    if (!dev) return st;
    rotq_q_args a;
    rotq_q_args_for(p, x, q, scales, row_sums, &a);
    cudaStream_t stream = rotq_cuda_stream(exec);
    if (!rotate) return rotq_q_launch_plain(p->kind, a, stream, dev);
    st = rotq_q_rotated(p->kind, a, rotate, x, stream, dev, false);
    // Rotate into an fp32 buffer, then quantize.
    if (st == ROTQ_ERR_NOT_SUPPORTED) st = rotq_cuda_quantize_two_step(exec, p, rotate, x, q, scales, row_sums, dev);
    return st;
}

extern "C" rotq_status rotq__cuda_quantize_workspace(const rotq_quant_params *p, const rotq__hadamard_plan *rotate,
                                                     const rotq_matrix *x, const rotq_matrix *q,
                                                     const float *scales, const int32_t *row_sums,
                                                     rotq__workspace_need *need) {
    need->preferred = need->minimum = 0;
    if (!rotate) return ROTQ_OK; // the plain kernels: no scratch
    rotq_status st = ROTQ_OK;
    const rotq_cuda_device_info *dev = rotq_cuda_current_device(&st);
    if (!dev) return st;
    rotq_q_args a;
    rotq_q_args_for(p, x, q, (float *)scales, (int32_t *)row_sums, &a); // read only: nothing is launched
    st = rotq_q_rotated(p->kind, a, rotate, x, (cudaStream_t)0, dev, true);
    if (st != ROTQ_ERR_NOT_SUPPORTED) return st; // a fused kernel (ROTQ_OK), or an error
    int parts = 1;
    if ((st = rotq_cuda_quantize_two_step_parts(rotate, x, dev, &parts)) != ROTQ_OK) return st;
    *need = rotq_ws_need(x->rows, x->cols, parts);
    return ROTQ_OK;
}

extern "C" rotq_status rotq__cuda_dequantize(const rotq_exec *exec, const rotq_quant_params *p,
                                             const rotq_matrix *q, const float *scales, const rotq_matrix *y) {
    rotq_status st = ROTQ_OK;
    const rotq_cuda_device_info *dev = rotq_cuda_current_device(&st);
    if (!dev) return st;
    return rotq_q_launch_dequant(p, q, scales, y, rotq_cuda_stream(exec), dev);
}
