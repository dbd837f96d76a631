/* rotq_hadamard and its workspace query: validation and dispatch. */
#include "validate.h"

/* The byte extents of a validated call's buffers: x, y and the signs. */
typedef struct hadamard_spans {
    rotq__span s[3];
} hadamard_spans;

/* Every check of rotq_hadamard, in the documented order (the last: backend
   availability), shared with rotq_hadamard_workspace_size. Fills plan and spans. */
static rotq_status validate_hadamard(const rotq_exec *exec, const rotq_hadamard_params *p, const rotq_matrix *x,
                                     const rotq_matrix *y, rotq__hadamard_plan *plan, hadamard_spans *spans) {
    if (!exec || !p || !x || !y || !x->data || !y->data) return ROTQ_ERR_NULL_POINTER;
    rotq_status st = rotq__check_backend(exec);
    if (st != ROTQ_OK) return st;

    if ((st = rotq__hadamard_plan_init(p, plan)) != ROTQ_OK) return st;

    if (!rotq__dtype_is_float(x->dtype) || !rotq__dtype_is_float(y->dtype)) return ROTQ_ERR_UNSUPPORTED_DTYPE;

    if ((st = rotq__check_shape(x)) != ROTQ_OK) return st;
    if (y->rows != x->rows || y->cols != x->cols) return ROTQ_ERR_INVALID_SHAPE;
    if (x->cols % plan->size != 0) return ROTQ_ERR_INVALID_SHAPE;

    if ((st = rotq__check_stride(x)) != ROTQ_OK) return st;
    if ((st = rotq__check_stride(y)) != ROTQ_OK) return st;

    rotq__span *xs = &spans->s[0], *ys = &spans->s[1], *ss = &spans->s[2];
    if ((st = rotq__matrix_span(x, xs)) != ROTQ_OK) return st;
    if ((st = rotq__matrix_span(y, ys)) != ROTQ_OK) return st;
    if ((st = rotq__array_span(plan->signs, x->cols, 1, ss)) != ROTQ_OK) return st;

    if ((st = rotq__check_matrix_aligned(x)) != ROTQ_OK) return st;
    if ((st = rotq__check_matrix_aligned(y)) != ROTQ_OK) return st;

    int in_place = x->data == y->data && x->dtype == y->dtype && x->stride == y->stride;
    if (!in_place && rotq__spans_overlap(*xs, *ys)) return ROTQ_ERR_OVERLAP;
    if (rotq__spans_overlap(*ss, *ys)) return ROTQ_ERR_OVERLAP; /* the signs are read while y is written */

    return rotq__backend_ready(exec->backend);
}

/* The scratch a validated call takes on its backend (none on the CPU). */
static rotq_status hadamard_need(const rotq_exec *exec, const rotq__hadamard_plan *plan, const rotq_matrix *x,
                                 const rotq_matrix *y, rotq__workspace_need *need) {
    need->preferred = need->minimum = 0;
#ifdef ROTQ_WITH_CUDA
    if (exec->backend == ROTQ_BACKEND_CUDA) return rotq__cuda_hadamard_workspace(plan, x, y, need);
#else
    (void)exec, (void)plan, (void)x, (void)y;
#endif
    return ROTQ_OK;
}

rotq_status rotq_hadamard(const rotq_exec *exec, const rotq_hadamard_params *p, const rotq_matrix *x,
                          const rotq_matrix *y) {
    rotq__hadamard_plan plan;
    hadamard_spans spans;
    rotq_status st = validate_hadamard(exec, p, x, y, &plan, &spans);
    if (st != ROTQ_OK) return st;
    switch (exec->backend) {
    case ROTQ_BACKEND_CPU: return rotq__cpu_hadamard(exec, &plan, x, y);
#ifdef ROTQ_WITH_CUDA
    case ROTQ_BACKEND_CUDA: {
        if (exec->workspace) { /* else the pool, if anything */
            rotq__workspace_need need;
            if ((st = hadamard_need(exec, &plan, x, y, &need)) != ROTQ_OK) return st;
            if ((st = rotq__check_workspace(exec, &need, spans.s, 3)) != ROTQ_OK) return st;
        }
        return rotq__cuda_hadamard(exec, &plan, x, y);
    }
#endif
    default: return ROTQ_ERR_BACKEND_UNAVAILABLE;
    }
}

rotq_status rotq_hadamard_workspace_size(const rotq_exec *exec, const rotq_hadamard_params *p, const rotq_matrix *x,
                                         const rotq_matrix *y, size_t *bytes) {
    if (!bytes) return ROTQ_ERR_NULL_POINTER;
    rotq__hadamard_plan plan;
    hadamard_spans spans;
    rotq_status st = validate_hadamard(exec, p, x, y, &plan, &spans);
    if (st != ROTQ_OK) return st;
    rotq__workspace_need need;
    if ((st = hadamard_need(exec, &plan, x, y, &need)) != ROTQ_OK) return st;
    *bytes = need.preferred;
    return ROTQ_OK;
}
