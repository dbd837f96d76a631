/*
 * CPU backend internals: float32 row kernels shared by the Hadamard transform
 * and the fused rotate+quantize path, and the per-call thread/scratch helpers.
 */
#ifndef ROTQ_CPU_KERNELS_H
#define ROTQ_CPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/*
 * Hot loops are compiled for several x86-64 ISA levels and picked at load time
 * (GCC function multiversioning), so a generic build still uses AVX2/AVX-512.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(ROTQ_NO_CLONES)
#define ROTQ_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ROTQ_CPU_CLONES
#endif

/* Lets GCC fuse a*b+c where every product is exact (multipliers +-1), so the
   results do not depend on it. */
#if defined(__GNUC__) && !defined(__clang__)
#define ROTQ_CPU_FMA __attribute__((optimize("fp-contract=fast")))
#else
#define ROTQ_CPU_FMA
#endif

/* A Hadamard plan prepared for the CPU: the factor as a float matrix. */
typedef struct rotq__cpu_rot {
    int32_t n;           /* block size K * P */
    int32_t k;           /* K (1: no factor step) */
    int32_t m;           /* P = 2^m */
    float scale;
    const int8_t *signs; /* NULL or cols entries */
    /* K > 1: K*K floats, +-1. P >= ROTQ_CPU_KTILE: F row-major (F = H_K, or H_K^T
       when transposed); smaller P: F^T row-major. */
    float *factor;
} rotq__cpu_rot;

#define ROTQ_CPU_KTILE 16 /* columns per register tile of the factor step */

/* Builds rot from plan (allocates rot->factor when K > 1). OUT_OF_MEMORY on failure. */
rotq_status rotq__cpu_rot_init(rotq__cpu_rot *rot, const rotq__hadamard_plan *plan);
void rotq__cpu_rot_free(rotq__cpu_rot *rot);

/*
 * Transforms one block of n floats held in buf (signs already applied):
 * (H_K (x) H_P) buf, unscaled. tmp holds n floats of scratch. Returns the
 * pointer holding the result: buf, or tmp when K > 1.
 */
float *rotq__cpu_transform_block(float *buf, float *tmp, const rotq__cpu_rot *rot);

/* In-place unnormalized natural-order FWHT of 2^m floats. */
void rotq__cpu_fwht(float *x, int m);

/* dst[i] = float(src[off + i]), negated where signs[i] < 0 (signs may be NULL). */
void rotq__cpu_load(const void *src, rotq_dtype dtype, int64_t off, const int8_t *signs, float *dst, int64_t n);
/* dst[off + i] = convert(src[i] * scale), RNE. */
void rotq__cpu_store(const float *src, float scale, rotq_dtype dtype, void *dst, int64_t off, int64_t n);

/* Scratch: one 64-byte aligned allocation split into per-thread slices. */
void *rotq__cpu_alloc(size_t bytes);
void rotq__cpu_free(void *p);
/* Threads to use for `work` independent items of about `cost` flops each. */
int rotq__cpu_threads(const rotq_exec *exec, int64_t items, double cost_per_item);
/* Floats per thread rounded up to a whole number of 64-byte lines. */
size_t rotq__cpu_floats_padded(int64_t n);

#endif /* ROTQ_CPU_KERNELS_H */
