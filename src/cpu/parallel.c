/* Thread count and scratch allocation for the CPU backend. */
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu.h"

/* Below this much work per call, a parallel region costs more than it saves. */
#define ROTQ_CPU_MIN_FLOPS_PER_THREAD 65536.0

void *rotq__cpu_alloc(size_t bytes) {
    size_t rounded = (bytes + 63u) & ~(size_t)63u;
    if (rounded < bytes) return NULL;
    return aligned_alloc(64, rounded ? rounded : 64u);
}

void rotq__cpu_free(void *p) { free(p); }

size_t rotq__cpu_floats_padded(int64_t n) { return ((size_t)n + 15u) & ~(size_t)15u; }

int rotq__cpu_threads(const rotq_exec *exec, int64_t items, double cost_per_item) {
#ifdef _OPENMP
    int t = exec->threads > 0 ? exec->threads : omp_get_max_threads();
    double by_work = (double)items * cost_per_item / ROTQ_CPU_MIN_FLOPS_PER_THREAD;
    if (by_work < (double)t) t = by_work < 1.0 ? 1 : (int)by_work;
    if ((int64_t)t > items) t = (int)items;
    return t < 1 ? 1 : t;
#else
    (void)exec;
    (void)items;
    (void)cost_per_item;
    return 1;
#endif
}
