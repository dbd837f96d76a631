/* rotq_quantize, its workspace query and rotq_dequantize: validation and dispatch. */
#include <math.h>

#include "validate.h"

static rotq_dtype quant_dtype(rotq_quant_kind kind) {
    switch (kind) {
    case ROTQ_QUANT_INT8_ROW: return ROTQ_DTYPE_I8;
    case ROTQ_QUANT_FP8_ROW:
    case ROTQ_QUANT_FP8_TENSOR: return ROTQ_DTYPE_FP8_E4M3;
    default: return ROTQ_DTYPE_I4X2;
    }
}

/* Number of scales the kind reads or writes for a rows x cols matrix (0: none). */
static int64_t scale_count(const rotq_quant_params *p, int64_t rows, int64_t cols) {
    switch (p->kind) {
    case ROTQ_QUANT_INT8_ROW:
    case ROTQ_QUANT_FP8_ROW: return rows;
    case ROTQ_QUANT_INT4_GROUP: return rows * (cols / p->group_size); /* <= rows * cols: fits */
    default: return 0;
    }
}

/*
 * The checks quantize and dequantize share that need no matrix: kind, the
 * presence of scales and row_sums (unless outputs_known is 0: the workspace
 * query, which has neither), group size value, static scale.
 */
static rotq_status check_quant_params(const rotq_quant_params *p, const void *scales, const int32_t *row_sums,
                                      int outputs_known) {
    if ((unsigned)p->kind >= (unsigned)ROTQ_QUANT_KIND_COUNT) return ROTQ_ERR_INVALID_FLAGS;
    int wants_scales = p->kind != ROTQ_QUANT_FP8_TENSOR;
    if (outputs_known && wants_scales && !scales) return ROTQ_ERR_NULL_POINTER;
    if (!wants_scales && scales) return ROTQ_ERR_INVALID_ARGUMENT;
    if (row_sums && p->kind != ROTQ_QUANT_INT8_ROW) return ROTQ_ERR_INVALID_ARGUMENT;
    if (p->kind == ROTQ_QUANT_INT4_GROUP) {
        if (p->group_size != 32 && p->group_size != 64 && p->group_size != 128) return ROTQ_ERR_INVALID_GROUP;
    } else if (p->group_size != 0) {
        return ROTQ_ERR_INVALID_GROUP;
    }
    if (p->kind == ROTQ_QUANT_FP8_TENSOR) {
        if (!(isfinite(p->static_scale) && p->static_scale > 0.0f)) return ROTQ_ERR_INVALID_SCALE;
    } else if (p->static_scale != 0.0f) {
        return ROTQ_ERR_INVALID_SCALE; /* also catches NaN */
    }
    return ROTQ_OK;
}

/* Shape, group divisibility and stride of the float matrix f and the quantized matrix q. */
static rotq_status check_quant_matrices(const rotq_quant_params *p, const rotq_matrix *f, const rotq_matrix *q,
                                        int32_t rotate_size) {
    rotq_status st;
    if (!rotq__dtype_is_float(f->dtype) || q->dtype != quant_dtype(p->kind)) return ROTQ_ERR_UNSUPPORTED_DTYPE;
    if ((st = rotq__check_shape(f)) != ROTQ_OK) return st;
    if (q->rows != f->rows || q->cols != f->cols) return ROTQ_ERR_INVALID_SHAPE;
    if (rotate_size > 0 && f->cols % rotate_size != 0) return ROTQ_ERR_INVALID_SHAPE;
    if (p->kind == ROTQ_QUANT_INT4_GROUP && f->cols % p->group_size != 0) return ROTQ_ERR_INVALID_GROUP;
    if ((st = rotq__check_stride(f)) != ROTQ_OK) return st;
    if ((st = rotq__check_stride(q)) != ROTQ_OK) return st;
    return ROTQ_OK;
}

/* A validated rotq_quantize call: the rotation's plan (rotate NULL: none) and the
   byte extents of x, q, scales, row_sums and the signs. */
typedef struct quant_call {
    rotq__hadamard_plan plan;
    const rotq__hadamard_plan *rotate;
    rotq__span s[5];
} quant_call;

/* Every check of rotq_quantize, in the documented order (the last: backend
   availability), shared with rotq_quantize_workspace_size (outputs_known 0,
   scales and row_sums NULL). */
static rotq_status validate_quantize(const rotq_exec *exec, const rotq_quant_params *p, const rotq_matrix *x,
                                     const rotq_matrix *q, const float *scales, const int32_t *row_sums,
                                     int outputs_known, quant_call *call) {
    if (!exec || !p || !x || !q || !x->data || !q->data) return ROTQ_ERR_NULL_POINTER;
    rotq_status st = rotq__check_backend(exec);
    if (st != ROTQ_OK) return st;
    if ((st = check_quant_params(p, scales, row_sums, outputs_known)) != ROTQ_OK) return st;

    call->rotate = NULL;
    if (p->rotate) {
        if ((st = rotq__hadamard_plan_init(p->rotate, &call->plan)) != ROTQ_OK) return st;
        call->rotate = &call->plan;
    }
    const rotq__hadamard_plan *rotate = call->rotate;
    if ((st = check_quant_matrices(p, x, q, rotate ? rotate->size : 0)) != ROTQ_OK) return st;

    rotq__span *xs = &call->s[0], *qs = &call->s[1], *ss = &call->s[2], *rs = &call->s[3], *gs = &call->s[4];
    if ((st = rotq__matrix_span(x, xs)) != ROTQ_OK) return st;
    if ((st = rotq__matrix_span(q, qs)) != ROTQ_OK) return st;
    if ((st = rotq__array_span(scales, scale_count(p, x->rows, x->cols), 4, ss)) != ROTQ_OK) return st;
    if ((st = rotq__array_span(row_sums, x->rows, 4, rs)) != ROTQ_OK) return st;
    if ((st = rotq__array_span(rotate ? rotate->signs : NULL, x->cols, 1, gs)) != ROTQ_OK) return st;

    if ((st = rotq__check_matrix_aligned(x)) != ROTQ_OK) return st;
    if ((st = rotq__check_aligned(scales, 4)) != ROTQ_OK) return st;
    if ((st = rotq__check_aligned(row_sums, 4)) != ROTQ_OK) return st;

    /* outputs q, scales, row_sums: disjoint from each other and from the inputs x, signs */
    if (rotq__spans_overlap(*qs, *xs) || rotq__spans_overlap(*ss, *xs) || rotq__spans_overlap(*rs, *xs) ||
        rotq__spans_overlap(*qs, *ss) || rotq__spans_overlap(*qs, *rs) || rotq__spans_overlap(*ss, *rs) ||
        rotq__spans_overlap(*gs, *qs) || rotq__spans_overlap(*gs, *ss) || rotq__spans_overlap(*gs, *rs))
        return ROTQ_ERR_OVERLAP;

    return rotq__backend_ready(exec->backend);
}

/* The scratch a validated call takes on its backend (none on the CPU). */
static rotq_status quantize_need(const rotq_exec *exec, const rotq_quant_params *p, const quant_call *call,
                                 const rotq_matrix *x, const rotq_matrix *q, const float *scales,
                                 const int32_t *row_sums, rotq__workspace_need *need) {
    need->preferred = need->minimum = 0;
#ifdef ROTQ_WITH_CUDA
    if (exec->backend == ROTQ_BACKEND_CUDA)
        return rotq__cuda_quantize_workspace(p, call->rotate, x, q, scales, row_sums, need);
#else
    (void)exec, (void)p, (void)call, (void)x, (void)q, (void)scales, (void)row_sums;
#endif
    return ROTQ_OK;
}

rotq_status rotq_quantize(const rotq_exec *exec, const rotq_quant_params *p, const rotq_matrix *x,
                          const rotq_matrix *q, float *scales, int32_t *row_sums) {
    quant_call call;
    rotq_status st = validate_quantize(exec, p, x, q, scales, row_sums, 1, &call);
    if (st != ROTQ_OK) return st;
    switch (exec->backend) {
    case ROTQ_BACKEND_CPU: return rotq__cpu_quantize(exec, p, call.rotate, x, q, scales, row_sums);
#ifdef ROTQ_WITH_CUDA
    case ROTQ_BACKEND_CUDA: {
        if (exec->workspace) { /* else the pool, if anything */
            rotq__workspace_need need;
            if ((st = quantize_need(exec, p, &call, x, q, scales, row_sums, &need)) != ROTQ_OK) return st;
            if ((st = rotq__check_workspace(exec, &need, call.s, 5)) != ROTQ_OK) return st;
        }
        return rotq__cuda_quantize(exec, p, call.rotate, x, q, scales, row_sums);
    }
#endif
    default: return ROTQ_ERR_BACKEND_UNAVAILABLE;
    }
}

rotq_status rotq_quantize_workspace_size(const rotq_exec *exec, const rotq_quant_params *p, const rotq_matrix *x,
                                         const rotq_matrix *q, size_t *bytes) {
    if (!bytes) return ROTQ_ERR_NULL_POINTER;
    quant_call call;
    rotq_status st = validate_quantize(exec, p, x, q, NULL, NULL, 0, &call);
    if (st != ROTQ_OK) return st;
    rotq__workspace_need need;
    if ((st = quantize_need(exec, p, &call, x, q, NULL, NULL, &need)) != ROTQ_OK) return st;
    *bytes = need.preferred;
    return ROTQ_OK;
}

rotq_status rotq_dequantize(const rotq_exec *exec, const rotq_quant_params *p, const rotq_matrix *q,
                            const float *scales, const rotq_matrix *y) {
    if (!exec || !p || !q || !y || !q->data || !y->data) return ROTQ_ERR_NULL_POINTER;
    rotq_status st = rotq__check_backend(exec);
    if (st != ROTQ_OK) return st;
    if ((st = check_quant_params(p, scales, NULL, 1)) != ROTQ_OK) return st;
    if (p->rotate) return ROTQ_ERR_INVALID_ARGUMENT;
    if ((st = check_quant_matrices(p, y, q, 0)) != ROTQ_OK) return st;

    rotq__span ys, qs, ss;
    if ((st = rotq__matrix_span(y, &ys)) != ROTQ_OK) return st;
    if ((st = rotq__matrix_span(q, &qs)) != ROTQ_OK) return st;
    if ((st = rotq__array_span(scales, scale_count(p, y->rows, y->cols), 4, &ss)) != ROTQ_OK) return st;

    if ((st = rotq__check_matrix_aligned(y)) != ROTQ_OK) return st;
    if ((st = rotq__check_aligned(scales, 4)) != ROTQ_OK) return st;

    if (rotq__spans_overlap(ys, qs) || rotq__spans_overlap(ys, ss)) return ROTQ_ERR_OVERLAP;

    if ((st = rotq__backend_ready(exec->backend)) != ROTQ_OK) return st;
    switch (exec->backend) {
    case ROTQ_BACKEND_CPU: return rotq__cpu_dequantize(exec, p, q, scales, y);
#ifdef ROTQ_WITH_CUDA
    case ROTQ_BACKEND_CUDA: return rotq__cuda_dequantize(exec, p, q, scales, y);
#endif
    default: return ROTQ_ERR_BACKEND_UNAVAILABLE;
    }
}
