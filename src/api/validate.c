/* Argument validation shared by the API entry points (see validate.h). */
#include "validate.h"

#include <math.h>

int rotq__is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int rotq__log2(int64_t pow2) {
    int m = 0;
    while (((int64_t)1 << m) < pow2) ++m;
    return m;
}

rotq_status rotq__check_shape(const rotq_matrix *m) {
    return (m->rows > 0 && m->cols > 0) ? ROTQ_OK : ROTQ_ERR_INVALID_SHAPE;
}

rotq_status rotq__check_stride(const rotq_matrix *m) {
    if (m->stride < m->cols) return ROTQ_ERR_INVALID_STRIDE;
    if (m->dtype == ROTQ_DTYPE_I4X2 && (m->stride & 1)) return ROTQ_ERR_INVALID_STRIDE;
    return ROTQ_OK;
}

/* count * elem_bits / 8 bytes starting at p, rounded up; INVALID_SHAPE on overflow. */
static rotq_status span_bits(const void *p, int64_t count, int64_t elem_bits, rotq__span *span) {
    if (count < 0 || elem_bits <= 0 || count > INT64_MAX / elem_bits) return ROTQ_ERR_INVALID_SHAPE;
    int64_t bits = count * elem_bits;
    uint64_t bytes = (uint64_t)(bits / 8 + (bits % 8 != 0));
    uintptr_t begin = (uintptr_t)p;
    if (bytes > (uint64_t)SIZE_MAX || bytes > (uint64_t)(UINTPTR_MAX - begin)) return ROTQ_ERR_INVALID_SHAPE;
    span->begin = begin;
    span->end = begin + (uintptr_t)bytes;
    return ROTQ_OK;
}

rotq_status rotq__matrix_span(const rotq_matrix *m, rotq__span *span) {
    /* elements = (rows - 1) * stride + cols, computed without overflow */
    int64_t rows_m1 = m->rows - 1;
    if (rows_m1 > 0 && rows_m1 > (INT64_MAX - m->cols) / m->stride) return ROTQ_ERR_INVALID_SHAPE;
    int64_t elems = rows_m1 * m->stride + m->cols;
    return span_bits(m->data, elems, rotq_dtype_bits(m->dtype), span);
}

rotq_status rotq__array_span(const void *p, int64_t count, int64_t elem_size, rotq__span *span) {
    if (!p) {
        span->begin = span->end = 0;
        return ROTQ_OK;
    }
    if (elem_size <= 0 || elem_size > INT64_MAX / 8) return ROTQ_ERR_INVALID_SHAPE;
    return span_bits(p, count, elem_size * 8, span);
}

int rotq__spans_overlap(rotq__span a, rotq__span b) {
    return a.begin < a.end && b.begin < b.end && a.begin < b.end && b.begin < a.end;
}

rotq_status rotq__check_aligned(const void *p, uintptr_t align) {
    return ((uintptr_t)p % align == 0) ? ROTQ_OK : ROTQ_ERR_MISALIGNED;
}

rotq_status rotq__check_matrix_aligned(const rotq_matrix *m) {
    int bits = rotq_dtype_bits(m->dtype);
    return rotq__check_aligned(m->data, bits >= 8 ? (uintptr_t)(bits / 8) : 1u);
}

int rotq__scale_ok(float scale) { return isfinite(scale) && scale != 0.0f; }

rotq_status rotq__check_workspace(const rotq_exec *exec, const rotq__workspace_need *need, const rotq__span *spans,
                                  int count) {
    if (!exec->workspace || need->minimum == 0) return ROTQ_OK;
    const uintptr_t begin = (uintptr_t)exec->workspace;
    if (begin % ROTQ__WORKSPACE_ALIGN != 0 || exec->workspace_bytes < need->minimum) return ROTQ_ERR_WORKSPACE;
    if (exec->workspace_bytes > (size_t)(UINTPTR_MAX - begin)) return ROTQ_ERR_INVALID_ARGUMENT;
    const rotq__span ws = {begin, begin + (uintptr_t)exec->workspace_bytes};
    for (int i = 0; i < count; ++i)
        if (rotq__spans_overlap(ws, spans[i])) return ROTQ_ERR_OVERLAP;
    return ROTQ_OK;
}

rotq_status rotq__hadamard_plan_init(const rotq_hadamard_params *p, rotq__hadamard_plan *plan) {
    if (p->flags & ~(uint32_t)ROTQ_HADAMARD_TRANSPOSE_FACTOR) return ROTQ_ERR_INVALID_FLAGS;
    int32_t k = 0, m = 0;
    rotq_status st = rotq_hadamard_resolve(p->size, p->factor, &k, &m);
    if (st != ROTQ_OK) return st;
    if (!rotq__scale_ok(p->scale)) return ROTQ_ERR_INVALID_SCALE;
    plan->size = p->size;
    plan->k = k;
    plan->log2_pow2 = m;
    plan->transpose_k = (p->flags & ROTQ_HADAMARD_TRANSPOSE_FACTOR) ? 1 : 0;
    plan->scale = p->scale;
    plan->signs = p->signs;
    return ROTQ_OK;
}
