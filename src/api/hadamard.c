/* rotq_hadamard: validation and dispatch. */
#include "validate.h"

rotq_status rotq_hadamard(const rotq_exec *exec, const rotq_hadamard_params *p, const rotq_matrix *x,
                          const rotq_matrix *y) {
    if (!exec || !p || !x || !y || !x->data || !y->data) return ROTQ_ERR_NULL_POINTER;
    rotq_status st = rotq__check_backend(exec);
    if (st != ROTQ_OK) return st;

    rotq__hadamard_plan plan;
    if ((st = rotq__hadamard_plan_init(p, &plan)) != ROTQ_OK) return st;

    if (!rotq__dtype_is_float(x->dtype) || !rotq__dtype_is_float(y->dtype)) return ROTQ_ERR_UNSUPPORTED_DTYPE;

    if ((st = rotq__check_shape(x)) != ROTQ_OK) return st;
    if (y->rows != x->rows || y->cols != x->cols) return ROTQ_ERR_INVALID_SHAPE;
    if (x->cols % plan.size != 0) return ROTQ_ERR_INVALID_SHAPE;

    if ((st = rotq__check_stride(x)) != ROTQ_OK) return st;
    if ((st = rotq__check_stride(y)) != ROTQ_OK) return st;

    rotq__span xs, ys, ss;
    if ((st = rotq__matrix_span(x, &xs)) != ROTQ_OK) return st;
    if ((st = rotq__matrix_span(y, &ys)) != ROTQ_OK) return st;
    if ((st = rotq__array_span(plan.signs, x->cols, 1, &ss)) != ROTQ_OK) return st;

    if ((st = rotq__check_matrix_aligned(x)) != ROTQ_OK) return st;
    if ((st = rotq__check_matrix_aligned(y)) != ROTQ_OK) return st;

    int in_place = x->data == y->data && x->dtype == y->dtype && x->stride == y->stride;
    if (!in_place && rotq__spans_overlap(xs, ys)) return ROTQ_ERR_OVERLAP;
    if (rotq__spans_overlap(ss, ys)) return ROTQ_ERR_OVERLAP; /* the signs are read while y is written */

    if ((st = rotq__backend_ready(exec->backend)) != ROTQ_OK) return st;
    switch (exec->backend) {
    case ROTQ_BACKEND_CPU: return rotq__cpu_hadamard(exec, &plan, x, y);
#ifdef ROTQ_WITH_CUDA
    case ROTQ_BACKEND_CUDA: return rotq__cuda_hadamard(exec, &plan, x, y);
#endif
    default: return ROTQ_ERR_BACKEND_UNAVAILABLE;
    }
}
