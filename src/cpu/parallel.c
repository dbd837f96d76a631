/* Thread count and scratch allocation for the CPU backend. */
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu.h"

/* Below this much work per thread, a parallel region costs more than it saves. */
#define ROTQ_CPU_MIN_FLOPS_PER_THREAD 65536.0
/* exec->threads beyond this many per core is clamped (each thread has its scratch). */
#define ROTQ_CPU_MAX_THREADS_PER_CORE 4

void *rotq__cpu_alloc(size_t bytes) {
    size_t rounded = (bytes + 4095u) & ~(size_t)4095u;
    if (rounded < bytes) return NULL;
    return aligned_alloc(4096, rounded ? rounded : 4096u);
}

float *rotq__cpu_scratch(size_t floats_per_thread, int threads) {
    if (floats_per_thread > SIZE_MAX / sizeof(float) / (size_t)threads) return NULL;
    return rotq__cpu_alloc(floats_per_thread * (size_t)threads * sizeof(float));
}

size_t rotq__cpu_floats_padded(int64_t n) {
    /* whole 4 KiB pages: threads' buffers never share a page, so one thread's
       stream of writes does not pull the next thread's lines in (prefetchers) */
    return ((size_t)n + 1023u) & ~(size_t)1023u;
}

void rotq__cpu_free(void *p) { free(p); }


int rotq__cpu_threads(const rotq_exec *exec, int64_t items, double cost_per_item) {
#ifdef _OPENMP
    int t = exec->threads > 0 ? exec->threads : omp_get_max_threads();
    const int cap = ROTQ_CPU_MAX_THREADS_PER_CORE * omp_get_num_procs();
    if (t > cap) t = cap;
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
