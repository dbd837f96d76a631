/*
 * Argument validation shared by the API entry points. Every check returns the
 * status the public header documents for its failure; the entry points call
 * them in a fixed order and touch no output before all have passed.
 */
#ifndef ROTQ_API_VALIDATE_H
#define ROTQ_API_VALIDATE_H

#include <stdint.h>

#include "internal.h"

/* A byte range [begin, end); begin == end is empty and overlaps nothing. */
typedef struct rotq__span {
    uintptr_t begin;
    uintptr_t end;
} rotq__span;

/* dtype.c */
int rotq__dtype_is_float(rotq_dtype dtype); /* F32, F16, BF16 */

/* backend.c */
/* The backend enum (INVALID_BACKEND); for CUDA, a workspace size without a pointer
   (INVALID_ARGUMENT). The CPU backend ignores the workspace fields. */
rotq_status rotq__check_backend(const rotq_exec *exec);
rotq_status rotq__backend_ready(rotq_backend backend);   /* compiled in and a device present */

/* validate.c */
int rotq__is_pow2(int64_t v);
int rotq__log2(int64_t pow2);

/* rows > 0 and cols > 0 (INVALID_SHAPE). */
rotq_status rotq__check_shape(const rotq_matrix *m);
/* stride >= cols, and even for I4X2 (INVALID_STRIDE). */
rotq_status rotq__check_stride(const rotq_matrix *m);
/* The byte extent of a matrix with a valid dtype, shape and stride;
   INVALID_SHAPE when it overflows int64 or the address space. */
rotq_status rotq__matrix_span(const rotq_matrix *m, rotq__span *span);
/* The byte extent of count elements of elem_size bytes at p (empty for NULL). */
rotq_status rotq__array_span(const void *p, int64_t count, int64_t elem_size, rotq__span *span);
int rotq__spans_overlap(rotq__span a, rotq__span b);
/* Data pointer aligned to the dtype's element size (MISALIGNED). */
rotq_status rotq__check_matrix_aligned(const rotq_matrix *m);
rotq_status rotq__check_aligned(const void *p, uintptr_t align);
/* Finite and nonzero (INVALID_SCALE). */
int rotq__scale_ok(float scale);

/*
 * A caller workspace (exec->workspace) against what the call needs: OK when there
 * is none (the pool serves) or the call needs none (it is ignored); WORKSPACE when
 * it is not ROTQ__WORKSPACE_ALIGN-aligned or smaller than need->minimum;
 * INVALID_ARGUMENT when its extent overflows the address space; OVERLAP when it
 * overlaps one of the call's `count` buffer spans.
 */
rotq_status rotq__check_workspace(const rotq_exec *exec, const rotq__workspace_need *need, const rotq__span *spans,
                                  int count);

/*
 * Validates the matrix-independent part of a Hadamard request (flags, size and
 * factor, scale) and fills plan: INVALID_FLAGS, UNSUPPORTED_SIZE, INVALID_FACTOR,
 * INVALID_SCALE. The caller still checks that plan->size divides cols.
 */
rotq_status rotq__hadamard_plan_init(const rotq_hadamard_params *p, rotq__hadamard_plan *plan);

#endif /* ROTQ_API_VALIDATE_H */
