/*
 * The float64 Hadamard reference: y = scale * (H_K (x) H_{2^m}) (signs .* x)
 * per block. The block is read as a K x 2^m matrix X (x[k*2^m + j] = X[k][j]);
 * (H_K (x) H) vec(X) = vec(H_K X H), so every row of X gets a fast
 * Walsh-Hadamard transform (O(2^m m)) and every column the dense K x K factor.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

static const int32_t quarot[] = {172, 156, 140, 108, 60, 52, 36, 28, 40, 20, 12};
static const int32_t spinquant[] = {172, 156, 140, 108, 60, 52, 36, 28, 44, 40, 20, 12};
static const int32_t quipsharp[] = {172, 156, 140, 124, 116, 108, 60, 52, 36, 28, 20, 12};

static int is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

int32_t ck_ref_pick_factor(int32_t size, rotq_factor_order order) {
    if (size <= 0) return 0;
    if (is_pow2(size)) return size <= ROTQ_HADAMARD_MAX_POW2 ? 1 : 0;
    if (size > ROTQ_HADAMARD_MAX_SIZE) return 0;
    const int32_t *list = quarot;
    int n = (int)(sizeof quarot / sizeof quarot[0]);
    if (order == ROTQ_ORDER_SPINQUANT) list = spinquant, n = (int)(sizeof spinquant / sizeof spinquant[0]);
    if (order == ROTQ_ORDER_QUIPSHARP) list = quipsharp, n = (int)(sizeof quipsharp / sizeof quipsharp[0]);
    for (int i = 0; i < n; i++)
        if (size % list[i] == 0 && is_pow2(size / list[i])) return list[i];
    return 0;
}

int ck_had_ref_init(ck_had_ref *h, const rotq_hadamard_params *p, const int8_t *host_signs) {
    memset(h, 0, sizeof *h);
    int32_t k;
    if (p->factor == ROTQ_HADAMARD_FACTOR_AUTO) k = ck_ref_pick_factor(p->size, ROTQ_ORDER_QUAROT);
    else if (p->factor == ROTQ_HADAMARD_FACTOR_POW2) k = is_pow2(p->size) ? 1 : 0;
    else k = p->factor;
    if (k <= 0 || p->size % k != 0 || !is_pow2(p->size / k)) return -1;
    if (k == 1 && p->size > ROTQ_HADAMARD_MAX_POW2) return -1;
    h->size = p->size;
    h->k = k;
    while ((k << h->m) < p->size) h->m++;
    h->hk = (int8_t *)malloc((size_t)k * (size_t)k);
    if (!h->hk) return -1;
    if (k == 1) {
        h->hk[0] = 1;
    } else {
        int8_t *tmp = (int8_t *)malloc((size_t)k * (size_t)k);
        if (!tmp || rotq_hadamard_factor_matrix(k, tmp, (size_t)k * (size_t)k) != ROTQ_OK) {
            free(tmp);
            ck_had_ref_free(h);
            return -1;
        }
        int tr = (p->flags & ROTQ_HADAMARD_TRANSPOSE_FACTOR) != 0;
        for (int32_t r = 0; r < k; r++)
            for (int32_t c = 0; c < k; c++) h->hk[r * k + c] = tr ? tmp[c * k + r] : tmp[r * k + c];
        free(tmp);
    }
    h->scale = (double)p->scale;
    h->signs = host_signs;
    return 0;
}

void ck_had_ref_free(ck_had_ref *h) {
    free(h->hk);
    h->hk = NULL;
}

void ck_ref_fwht(double *v, int32_t m) {
    int64_t n = (int64_t)1 << m;
    for (int64_t half = 1; half < n; half *= 2)
        for (int64_t i = 0; i < n; i += 2 * half)
            for (int64_t j = i; j < i + half; j++) {
                double a = v[j], b = v[j + half];
                v[j] = a + b;
                v[j + half] = a - b;
            }
}

void ck_ref_hadamard_row(const ck_had_ref *h, int64_t cols, const double *in, double *out) {
    int64_t p2 = (int64_t)1 << h->m;
    double *col = (double *)malloc(sizeof(double) * 2 * (size_t)h->k);
    double *res = col + h->k;
    for (int64_t i = 0; i < cols; i++)
        out[i] = (h->signs && h->signs[i] < 0) ? -in[i] : in[i];
    for (int64_t b = 0; b < cols; b += h->size) {
        double *x = out + b;
        for (int32_t k = 0; k < h->k; k++) ck_ref_fwht(x + k * p2, h->m);
        if (h->k > 1) {
            for (int64_t j = 0; j < p2; j++) {
                for (int32_t k = 0; k < h->k; k++) col[k] = x[k * p2 + j];
                for (int32_t r = 0; r < h->k; r++) {
                    const int8_t *row = h->hk + (int64_t)r * h->k;
                    double s = 0.0;
                    for (int32_t c = 0; c < h->k; c++) s += row[c] > 0 ? col[c] : -col[c];
                    res[r] = s;
                }
                for (int32_t k = 0; k < h->k; k++) x[k * p2 + j] = res[k];
            }
        }
        for (int64_t i = 0; i < h->size; i++) x[i] *= h->scale;
    }
    free(col);
}
