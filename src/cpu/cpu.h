/*
 * CPU backend internals shared by its files: the prepared Hadamard plan,
 * per-ISA compilation of the hot drivers, threads and scratch memory.
 */
#ifndef ROTQ_CPU_H
#define ROTQ_CPU_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/*
 * The drivers (the functions that run whole rows) are compiled for several
 * x86-64 ISA levels and picked once at load time (GCC function multiversioning),
 * so a generic build still runs AVX2/AVX-512 code. The kernels they call are
 * static inline (fwht.h, convert.h) and flattened into each version, so none
 * of them is left behind as a baseline-ISA out-of-line copy.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(ROTQ_NO_CLONES)
#define ROTQ_CPU_CLONES_ON 1
#define ROTQ_CPU_CLONES \
    __attribute__((flatten, target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#elif defined(__GNUC__)
#define ROTQ_CPU_CLONES_ON 0
#define ROTQ_CPU_CLONES __attribute__((flatten))
#else
#define ROTQ_CPU_CLONES_ON 0
#define ROTQ_CPU_CLONES
#endif

/* Lets GCC fuse a*b+c in the factor step, where every product is exact
   (multipliers +-1), so the results do not depend on it. */
#if defined(__GNUC__) && !defined(__clang__)
#define ROTQ_CPU_FMA __attribute__((optimize("fp-contract=fast")))
#else
#define ROTQ_CPU_FMA
#endif

/* f16c.c: float -> f16 rows through F16C when the CPU has it (x86-64, GCC/clang). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(ROTQ_CPU_NO_F16C)
#define ROTQ_CPU_HAVE_F16C 1
int rotq__cpu_has_f16c(void);
/* dst[i] = rotq_f32_to_f16(src[i] * scale), bit for bit. */
void rotq__cpu_store_f16_f16c(const float *src, float scale, uint16_t *dst, int64_t n);
#else
#define ROTQ_CPU_HAVE_F16C 0
#endif

/* A Hadamard plan prepared for the CPU. */
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

/* plan.c: builds rot from plan (allocates rot->factor when K > 1); OUT_OF_MEMORY on failure. */
rotq_status rotq__cpu_rot_init(rotq__cpu_rot *rot, const rotq__hadamard_plan *plan);
void rotq__cpu_rot_free(rotq__cpu_rot *rot);

/* parallel.c: page-aligned host memory; NULL on failure or size overflow. */
void *rotq__cpu_alloc(size_t bytes);
/* Scratch for `threads` threads: one allocation, floats_per_thread each. */
float *rotq__cpu_scratch(size_t floats_per_thread, int threads);
void rotq__cpu_free(void *p);
/* Floats rounded up to whole 4 KiB pages (per-thread buffer sizes). */
size_t rotq__cpu_floats_padded(int64_t n);
/* Threads to use for `items` independent work items of about `cost_per_item` flops each. */
int rotq__cpu_threads(const rotq_exec *exec, int64_t items, double cost_per_item);

/* Thread tid's share [*begin, *end) of items split as evenly as possible over team threads. */
static inline void rotq__cpu_share(int64_t items, int64_t tid, int64_t team, int64_t *begin, int64_t *end) {
    const int64_t base = items / team, extra = items % team;
    *begin = base * tid + (tid < extra ? tid : extra);
    *end = *begin + base + (tid < extra ? 1 : 0);
}

#endif /* ROTQ_CPU_H */
