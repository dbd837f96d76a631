/* CPU form of a Hadamard plan: the factor H_K (or H_K^T) as a float matrix. */
#include "cpu.h"

rotq_status rotq__cpu_rot_init(rotq__cpu_rot *rot, const rotq__hadamard_plan *plan) {
    rot->n = plan->size;
    rot->k = plan->k;
    rot->m = plan->log2_pow2;
    rot->scale = plan->scale;
    rot->signs = plan->signs;
    rot->factor = NULL;
    if (plan->k == 1) return ROTQ_OK;
    int32_t kk = plan->k;
    rot->factor = rotq__cpu_alloc((size_t)kk * (size_t)kk * sizeof(float));
    if (!rot->factor) return ROTQ_ERR_OUT_OF_MEMORY;
    /* F[k][k'] = H[k][k'] (H^T: H[k'][k]); the small-P kernel wants F^T. */
    int transpose = plan->transpose_k != 0;
    if (((int64_t)1 << plan->log2_pow2) < ROTQ_CPU_KTILE) transpose = !transpose;
    for (int32_t r = 0; r < kk; ++r)
        for (int32_t c = 0; c < kk; ++c)
            rot->factor[(int64_t)r * kk + c] =
                (float)(transpose ? rotq__factor_entry(kk, c, r) : rotq__factor_entry(kk, r, c));
    return ROTQ_OK;
}

void rotq__cpu_rot_free(rotq__cpu_rot *rot) {
    rotq__cpu_free(rot->factor);
    rot->factor = NULL;
}
