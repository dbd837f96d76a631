/*
 * The contract between the API layer (src/api) and the backends (src/cpu,
 * src/cuda). The API layer validates every argument and resolves the Hadamard
 * factor; a backend function receives only valid, resolved arguments and may
 * assume them. Backend functions return ROTQ_OK, ROTQ_ERR_NOT_SUPPORTED,
 * ROTQ_ERR_OUT_OF_MEMORY or ROTQ_ERR_CUDA. A CUDA call's exec->workspace, when
 * not NULL, has been checked against what rotq__cuda_<op>_workspace reports
 * (aligned, at least the minimum), before anything was enqueued.
 */
#ifndef ROTQ_INTERNAL_H
#define ROTQ_INTERNAL_H

#include "rotq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A validated Hadamard request with its factor resolved: size = k << log2_pow2. */
typedef struct rotq__hadamard_plan {
    int32_t size;         /* block size n */
    int32_t k;            /* 1, or one of the factors 12..172 */
    int32_t log2_pow2;    /* m */
    int32_t transpose_k;  /* nonzero: use H_K^T */
    float scale;
    const int8_t *signs;  /* NULL or cols entries (backend memory space) */
} rotq__hadamard_plan;

/* The device scratch a CUDA call takes beyond its arguments (src/cuda/workspace.cuh). */
#define ROTQ__WORKSPACE_ALIGN 256 /* rotq_exec.workspace and each part of it */
typedef struct rotq__workspace_need {
    size_t preferred; /* what the call draws from the pool: 0 when it needs no scratch */
    size_t minimum;   /* the smallest caller workspace it takes (chunks of one row) */
} rotq__workspace_need;

/* Factor matrices (src/common/hadamard_factors.c, generated table). */
int rotq__factor_index(int32_t k); /* -1 when k is not a factor */
/* Entry (r, c) of H_K as +1 or -1; k must be a factor, r and c < k. */
int rotq__factor_entry(int32_t k, int32_t r, int32_t c);
/* Packed rows of H_K: word w of row r holds columns 32w..32w+31, bit set = -1. */
const uint32_t *rotq__factor_bits(int32_t k, int32_t *words_per_row);

/* CPU backend */
rotq_status rotq__cpu_hadamard(const rotq_exec *exec, const rotq__hadamard_plan *plan,
                               const rotq_matrix *x, const rotq_matrix *y);
rotq_status rotq__cpu_quantize(const rotq_exec *exec, const rotq_quant_params *p,
                               const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                               const rotq_matrix *q, float *scales, int32_t *row_sums);
rotq_status rotq__cpu_dequantize(const rotq_exec *exec, const rotq_quant_params *p,
                                 const rotq_matrix *q, const float *scales,
                                 const rotq_matrix *y);

/* CUDA backend (compiled only with ROTQ_WITH_CUDA) */
int rotq__cuda_available(void);
rotq_status rotq__cuda_device_count(int *count);
rotq_status rotq__cuda_device_describe(int device, char *buf, size_t buf_size);
rotq_status rotq__cuda_hadamard(const rotq_exec *exec, const rotq__hadamard_plan *plan,
                                const rotq_matrix *x, const rotq_matrix *y);
rotq_status rotq__cuda_quantize(const rotq_exec *exec, const rotq_quant_params *p,
                                const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                const rotq_matrix *q, float *scales, int32_t *row_sums);
rotq_status rotq__cuda_dequantize(const rotq_exec *exec, const rotq_quant_params *p,
                                  const rotq_matrix *q, const float *scales,
                                  const rotq_matrix *y);
/* What rotq__cuda_hadamard / rotq__cuda_quantize would take for these arguments,
   decided by the same dispatch code run without launching anything (the
   quantize scales and row_sums may be NULL: they do not change the path).
   ROTQ_OK, or ROTQ_ERR_CUDA when the device cannot be queried. */
rotq_status rotq__cuda_hadamard_workspace(const rotq__hadamard_plan *plan, const rotq_matrix *x,
                                          const rotq_matrix *y, rotq__workspace_need *need);
rotq_status rotq__cuda_quantize_workspace(const rotq_quant_params *p, const rotq__hadamard_plan *rotate,
                                          const rotq_matrix *x, const rotq_matrix *q,
                                          const float *scales, const int32_t *row_sums,
                                          rotq__workspace_need *need);

#ifdef __cplusplus
}
#endif

#endif /* ROTQ_INTERNAL_H */
