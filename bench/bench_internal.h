/* Shared by the files of rotq_bench; not installed. */
#ifndef ROTQ_BENCH_INTERNAL_H
#define ROTQ_BENCH_INTERNAL_H

#include "bench.h"

/* One bench run: options, output and results, and the group being printed. */
typedef struct rotq__bench {
    const rotq_bench_options *opt;
    FILE *table;
    rotq_bench_results *res;
    const char *group;  /* current group name */
    const char *what;   /* its description, printed above its first row */
    size_t group_first; /* index in res->rows of the current group's first row */
} rotq__bench;

/* Group framing: a header before the first row (none for a group whose rows
   were all filtered out), a geometric-mean line after. */
void rotq__bench_group_begin(rotq__bench *b, const char *group, const char *what);
void rotq__bench_group_end(rotq__bench *b);

/* Whether the row passes opt->filter. */
int rotq__bench_selected(const rotq__bench *b, const char *op, const char *dtype, int32_t n,
                         int64_t elements);

/* Appends a row of the current group (state OK, numbers zero); NULL when out of
   memory. The pointer stays valid until the next rotq__bench_new_row. */
rotq_bench_row *rotq__bench_new_row(rotq__bench *b, const char *op, const char *dtype, int32_t n,
                                    int64_t elements, double bytes, const char *baseline,
                                    double target);
/* Fills gbps and ratio from us, bytes and baseline_us, counts failures, prints. */
void rotq__bench_finish_row(rotq__bench *b, rotq_bench_row *row);
/* Marks a row as failed with a printf-style note. */
void rotq__bench_row_fail(rotq_bench_row *row, rotq_bench_state state, rotq_status st,
                          const char *fmt, ...);

/* Median of v[0..n) (sorts v). */
double rotq__bench_median(double *v, int n);

/* Deterministic pseudo-normal values (mean 0, standard deviation 1). */
void rotq__bench_fill_normal(float *dst, size_t n, uint64_t seed);
/* float -> F32/F16/BF16 host buffer, and back. */
void rotq__bench_from_f32(const float *src, void *dst, rotq_dtype dt, size_t n);
void rotq__bench_to_f32(const void *src, rotq_dtype dt, float *dst, size_t n);
/* Bytes of n elements of dt (I4X2: n/2). */
size_t rotq__bench_bytes(rotq_dtype dt, int64_t n);

/*
 * Sanity checks on one row of output, so that a fast but wrong kernel cannot
 * post a good number. Both compare energies (sum of squares), which an
 * orthonormal rotation preserves: Parseval for the transform, and "the
 * dequantized row has about the energy of the input row" for quantization.
 * x, y, q are host copies of one row; return 0 when plausible, else write why.
 */
int rotq__bench_check_hadamard_row(const void *x, const void *y, rotq_dtype dt, int32_t n,
                                   char *why, size_t why_len);
int rotq__bench_check_quant_row(const void *x, rotq_dtype xdt, const rotq_quant_params *qp,
                                const void *q, rotq_dtype qdt, const float *scales, int32_t n,
                                char *why, size_t why_len);

/* Quantization configurations timed by both backends. */
typedef struct rotq__bench_quant_kind {
    const char *name; /* "int8", "fp8", "int4g128" */
    rotq_quant_kind kind;
    rotq_dtype qdtype;
    int32_t group_size;
} rotq__bench_quant_kind;
extern const rotq__bench_quant_kind rotq__bench_quant_kinds[3];
/* Number of scale floats for rows x n. */
int64_t rotq__bench_scale_count(const rotq__bench_quant_kind *k, int64_t rows, int32_t n);

int rotq__bench_cpu(rotq__bench *b);
#ifdef ROTQ_WITH_CUDA
int rotq__bench_cuda(rotq__bench *b);
#endif

#endif
