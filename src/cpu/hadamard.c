/* rotq__cpu_hadamard: every (row, block) pair independently, in parallel. */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels.h"

rotq_status rotq__cpu_hadamard(const rotq_exec *exec, const rotq__hadamard_plan *plan, const rotq_matrix *x,
                               const rotq_matrix *y) {
    rotq__cpu_rot rot;
    rotq_status st = rotq__cpu_rot_init(&rot, plan);
    if (st != ROTQ_OK) return st;

    const int64_t n = plan->size;
    const int64_t blocks = x->cols / n;
    const int64_t items = x->rows * blocks;
    const int nt = rotq__cpu_threads(exec, items, (double)n * (plan->log2_pow2 + plan->k + 4));
    const size_t npad = rotq__cpu_floats_padded(n);
    const size_t per_thread = npad * (plan->k > 1 ? 2u : 1u);
    float *scratch = rotq__cpu_alloc(per_thread * (size_t)nt * sizeof(float));
    if (!scratch) {
        rotq__cpu_rot_free(&rot);
        return ROTQ_ERR_OUT_OF_MEMORY;
    }

#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    {
#ifdef _OPENMP
        float *buf = scratch + per_thread * (size_t)omp_get_thread_num();
#else
        float *buf = scratch;
#endif
        float *tmp = buf + npad;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t it = 0; it < items; ++it) {
            const int64_t r = it / blocks, b = it % blocks;
            const int8_t *signs = rot.signs ? rot.signs + b * n : NULL;
            rotq__cpu_load(x->data, x->dtype, r * x->stride + b * n, signs, buf, n);
            const float *out = rotq__cpu_transform_block(buf, tmp, &rot);
            rotq__cpu_store(out, rot.scale, y->dtype, y->data, r * y->stride + b * n, n);
        }
    }

    rotq__cpu_free(scratch);
    rotq__cpu_rot_free(&rot);
    return ROTQ_OK;
}
