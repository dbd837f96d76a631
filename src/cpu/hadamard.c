/* rotq__cpu_hadamard: every (row, block) pair independently, rows split over threads. */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "convert.h"
#include "cpu.h"
#include "fwht.h"

/* Transforms the (row, block) items [begin, end): item i is block i % blocks of row i / blocks. */
ROTQ_CPU_CLONES ROTQ_CPU_FMA
static void hadamard_items(const rotq_matrix *x, const rotq_matrix *y, const rotq__cpu_rot *rot, int64_t begin,
                           int64_t end, float *buf, float *tmp) {
    const int64_t n = rot->n, blocks = x->cols / n;
    for (int64_t it = begin; it < end; ++it) {
        const int64_t r = it / blocks, b = it % blocks;
        const int8_t *signs = rot->signs ? rot->signs + b * n : NULL;
        load_row(x->data, x->dtype, r * x->stride + b * n, signs, buf, n);
        const float *out = transform_block(buf, tmp, rot);
        store_row(out, rot->scale, y->dtype, y->data, r * y->stride + b * n, n);
    }
}

rotq_status rotq__cpu_hadamard(const rotq_exec *exec, const rotq__hadamard_plan *plan, const rotq_matrix *x,
                               const rotq_matrix *y) {
    rotq__cpu_rot rot;
    rotq_status st = rotq__cpu_rot_init(&rot, plan);
    if (st != ROTQ_OK) return st;

    const int64_t n = plan->size;
    const int64_t items = x->rows * (x->cols / n);
    const int nt = rotq__cpu_threads(exec, items, (double)n * (plan->log2_pow2 + plan->k + 4));
    const size_t npad = rotq__cpu_floats_padded(n);
    const size_t per_thread = npad * (plan->k > 1 ? 2u : 1u);
    float *scratch = rotq__cpu_scratch(per_thread, nt);
    if (!scratch) {
        rotq__cpu_rot_free(&rot);
        return ROTQ_ERR_OUT_OF_MEMORY;
    }

#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int tid = omp_get_thread_num();
        int64_t begin, end;
        rotq__cpu_share(items, tid, omp_get_num_threads(), &begin, &end);
        float *buf = scratch + per_thread * (size_t)tid;
        hadamard_items(x, y, &rot, begin, end, buf, buf + npad);
    }
#else
    hadamard_items(x, y, &rot, 0, items, scratch, scratch + npad);
#endif

    rotq__cpu_free(scratch);
    rotq__cpu_rot_free(&rot);
    return ROTQ_OK;
}
