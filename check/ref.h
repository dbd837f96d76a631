/*
 * float64 references. The Hadamard reference follows the definition in rotq.h
 * directly; the quantization reference follows formats.h (see ref_quant.c).
 */
#ifndef ROTQ_CHECK_REF_H
#define ROTQ_CHECK_REF_H

#include <stdint.h>

#include "rotq.h"

/* The K a project's order picks for size n: 1 for a power of two up to 2^15,
   0 when there is none. Written from the orders in rotq.h, not from the library. */
int32_t ck_ref_pick_factor(int32_t size, rotq_factor_order order);

/* A resolved Hadamard transform for the reference. */
typedef struct ck_had_ref {
    int32_t size, k, m;  /* size = k << m */
    int8_t *hk;          /* k*k entries, +-1, already transposed when the flag asks */
    double scale;        /* the float scale the op received, exactly */
    const int8_t *signs; /* host copy, cols entries, or NULL */
} ck_had_ref;

/* Fills h from params (factor AUTO/POW2/K, flags, scale, host signs). Returns 0,
   or -1 when the request has no construction (or H_K could not be read). */
int ck_had_ref_init(ck_had_ref *h, const rotq_hadamard_params *p, const int8_t *host_signs);
void ck_had_ref_free(ck_had_ref *h);

/* out[0..cols) = the transform of in[0..cols) (cols a multiple of size); in == out allowed. */
void ck_ref_hadamard_row(const ck_had_ref *h, int64_t cols, const double *in, double *out);

/* In-place natural-order (Sylvester) fast Walsh-Hadamard transform of length 2^m. */
void ck_ref_fwht(double *v, int32_t m);

#endif

/* ---- quantization (ref_quant.c) ---- */

/* What a quant kind produces: its q dtype, QMAX (0 for FP8_TENSOR's static scale)
   and whether its codes are fp8. */
rotq_dtype ck_quant_qdtype(rotq_quant_kind kind);
float ck_quant_qmax(rotq_quant_kind kind);
int ck_quant_is_fp8(rotq_quant_kind kind);
/* Elements per scale: cols for the per-row kinds, group_size for INT4_GROUP, 0 for FP8_TENSOR. */
int64_t ck_quant_group(const rotq_quant_params *p, int64_t cols);

/* Raw code (I8 byte, FP8 byte, I4 nibble) of an already scaled float value, formats.h rules. */
uint32_t ck_quant_code(rotq_quant_kind kind, float scaled);
/* The value a code stands for (I8/I4 signed integers, FP8 decoded; NaN for FP8 NaN codes). */
double ck_quant_code_value(rotq_quant_kind kind, uint32_t code);
/* Whether a scaled value within dl of sref can round to code `got` where sref itself
   rounds to `ref` (the comparison of rotated quantize results, case_quant.c). */
int ck_quant_code_within(rotq_quant_kind kind, uint32_t got, uint32_t ref, double sref, double dl);

/*
 * Exact reference for one group of float inputs, formats.h step by step in float:
 * absmax over finite values, scale and inv by correctly rounded float division,
 * code = convert(v * inv). FP8_TENSOR uses inv = 1/static_scale and writes no scale.
 */
void ck_ref_quant_f32(rotq_quant_kind kind, float static_scale, const float *v, int64_t n,
                      uint32_t *codes, float *scale, float *inv);

/*
 * Reference for one group of float64 values (a rotated row): the float absmax is
 * the double absmax rounded to float, scale and inv follow from it in float as
 * above, s[i] = r[i] * inv in double, and codes[i] = convert((float)s[i]).
 */
void ck_ref_quant_f64(rotq_quant_kind kind, float static_scale, const double *r, int64_t n,
                      uint32_t *codes, double *s, float *scale, float *inv);

/* Dequantized value of one element in float, as the op computes it: value(code) * scale. */
float ck_ref_dequant(rotq_quant_kind kind, uint32_t code, float scale);
