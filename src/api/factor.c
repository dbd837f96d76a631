/* Hadamard sizes and factors: defaults, factor choice, factor matrices. */
#include <math.h>

#include "hadamard_factors.h"
#include "validate.h"

/* Each project's factor order (README of the factor data), tried first to last. */
static const int32_t order_quarot[] = {172, 156, 140, 108, 60, 52, 36, 28, 40, 20, 12};
static const int32_t order_spinquant[] = {172, 156, 140, 108, 60, 52, 36, 28, 44, 40, 20, 12};
static const int32_t order_quipsharp[] = {172, 156, 140, 124, 116, 108, 60, 52, 36, 28, 20, 12};

#define ROTQ_COUNT_OF_(a) ((int)(sizeof(a) / sizeof((a)[0])))

rotq_hadamard_params rotq_hadamard_params_default(int32_t size) {
    rotq_hadamard_params p;
    p.size = size;
    p.factor = ROTQ_HADAMARD_FACTOR_AUTO;
    p.flags = 0;
    p.scale = size > 0 ? (float)(1.0 / sqrt((double)size)) : 1.0f;
    p.signs = NULL;
    return p;
}

/* K * 2^m with K a known factor (or 1) within rotq's size limits. */
static int size_fits(int32_t size, int32_t k) {
    if (size <= 0 || size > ROTQ_HADAMARD_MAX_SIZE || size % k != 0 || !rotq__is_pow2(size / k)) return 0;
    return k != 1 || size <= ROTQ_HADAMARD_MAX_POW2;
}

rotq_status rotq_hadamard_pick_factor(int32_t size, rotq_factor_order order, int32_t *k) {
    if (!k) return ROTQ_ERR_NULL_POINTER;
    const int32_t *list;
    int count;
    switch (order) {
    case ROTQ_ORDER_QUAROT: list = order_quarot, count = ROTQ_COUNT_OF_(order_quarot); break;
    case ROTQ_ORDER_SPINQUANT: list = order_spinquant, count = ROTQ_COUNT_OF_(order_spinquant); break;
    case ROTQ_ORDER_QUIPSHARP: list = order_quipsharp, count = ROTQ_COUNT_OF_(order_quipsharp); break;
    default: return ROTQ_ERR_INVALID_FLAGS;
    }
    if (size_fits(size, 1)) {
        *k = 1;
        return ROTQ_OK;
    }
    for (int i = 0; i < count; ++i) {
        if (size_fits(size, list[i])) {
            *k = list[i];
            return ROTQ_OK;
        }
    }
    return ROTQ_ERR_UNSUPPORTED_SIZE;
}

rotq_status rotq_hadamard_resolve(int32_t size, int32_t factor, int32_t *k, int32_t *log2_pow2) {
    if (!k || !log2_pow2) return ROTQ_ERR_NULL_POINTER;
    if (size <= 0 || size > ROTQ_HADAMARD_MAX_SIZE) return ROTQ_ERR_UNSUPPORTED_SIZE;
    int32_t kk;
    if (factor == ROTQ_HADAMARD_FACTOR_AUTO) {
        rotq_status st = rotq_hadamard_pick_factor(size, ROTQ_ORDER_QUAROT, &kk);
        if (st != ROTQ_OK) return st;
    } else {
        kk = factor; /* ROTQ_HADAMARD_FACTOR_POW2 == 1 */
        if (kk < 0 || (kk != 1 && rotq__factor_index(kk) < 0)) return ROTQ_ERR_INVALID_FACTOR;
        if (size % kk != 0 || !rotq__is_pow2(size / kk)) return ROTQ_ERR_INVALID_FACTOR;
        if (!size_fits(size, kk)) return ROTQ_ERR_UNSUPPORTED_SIZE; /* 2^m above 2^15 */
    }
    *k = kk;
    *log2_pow2 = rotq__log2(size / kk);
    return ROTQ_OK;
}

rotq_status rotq_hadamard_factor_matrix(int32_t k, int8_t *out, size_t out_len) {
    if (!out) return ROTQ_ERR_NULL_POINTER;
    if (k == 1) {
        if (out_len < 1) return ROTQ_ERR_INVALID_ARGUMENT;
        out[0] = 1;
        return ROTQ_OK;
    }
    if (rotq__factor_index(k) < 0) return ROTQ_ERR_INVALID_FACTOR;
    if (out_len < (size_t)k * (size_t)k) return ROTQ_ERR_INVALID_ARGUMENT;
    for (int32_t r = 0; r < k; ++r)
        for (int32_t c = 0; c < k; ++c) out[(size_t)r * (size_t)k + (size_t)c] = (int8_t)rotq__factor_entry(k, r, c);
    return ROTQ_OK;
}

int rotq_hadamard_factor_count(void) { return rotq__factor_count(); }

int32_t rotq_hadamard_factor_at(int index) { return rotq__factor_at(index); }
