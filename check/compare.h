/* Error metrics and the tolerances they are held to (derivations in compare.c). */
#ifndef ROTQ_CHECK_COMPARE_H
#define ROTQ_CHECK_COMPARE_H

#include <stdint.h>

#include "ck.h"

/* Unit roundoff of a float dtype under RNE: 2^-24 (f32), 2^-11 (f16), 2^-8 (bf16). */
double ck_unit_roundoff(rotq_dtype dt);

/* Relative (norm-wise) float32 compute error allowed for a Hadamard of size k*2^m. */
double ck_had_compute_err(int32_t k, int32_t m);

typedef struct ck_tol {
    double norm; /* bound on ||got - ref|| / ||ref|| */
    double max;  /* bound on max|got - ref| / max|ref|, and on every element's error */
} ck_tol;

/* Tolerance of a Hadamard (or anything computed like one) written in dtype out. */
ck_tol ck_had_tol(rotq_dtype out, int32_t k, int32_t m);

/*
 * Compares got[] with ref[] (n values, row-major with `cols` per row, for the
 * index printed on failure): NaN/Inf where ref is finite fails; then the norm
 * and max criteria. Appends the metrics as a note and any failure to r.
 */
void ck_compare(ck_result *r, const double *got, const double *ref, int64_t n, int64_t cols,
                ck_tol tol);

#endif
