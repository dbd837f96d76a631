/*
 * Tolerances for float outputs, derived from the output dtype and the float32
 * arithmetic of the backends, never tuned to make a result pass.
 *
 * Let u = 2^-24 (float32 unit roundoff) and u_out the unit roundoff of the output
 * dtype. A Hadamard of size n = K*2^m computed in float32 and written in `out`:
 *
 *   compute error E(K, m) = u * (m + 2*sqrt(K) [K > 1] + 3), norm-wise relative:
 *     m        each butterfly stage rounds every sum once: an error of at most u
 *              times that stage's output in 2-norm; the later stages are sqrt(2)
 *              times orthogonal maps, so each stage adds at most u to the final
 *              relative error (a first-order bound, not a statistical one);
 *     2sqrt(K) the dense K-term signed sums of the factor part. The worst case of
 *              recursive summation, (K-1)u * sum|terms|, is reached only by
 *              adversarial rounding; with rounding errors of independent sign the
 *              norm-wise error is about sqrt(K/6) u (the sum of a running partial sum
 *              of K terms), and pairwise or tensor-core-style summation is smaller.
 *              2 sqrt(K) u is about 5x the expected value (Higham & Mary's
 *              lambda*sqrt(n)*u model, applied to a norm over >= K elements);
 *     3        the scale multiply, the final rounding to float, and one u of slack.
 *              Decoding f16/bf16 and flipping signs are exact.
 *
 *   norm tolerance  u_out + E: rounding a result to the output dtype moves each
 *                   element by at most u_out*|y_i| (RNE, normal range), so by at most
 *                   u_out*||y|| in norm.
 *   max tolerance   u_out + 2E on max|err| / max|ref|, and on each element's error
 *                   relative to max|ref|: the conversion term is per element; each
 *                   output mixes all n inputs, so compute errors are spread evenly
 *                   and their largest value relative to max|y| stays near the
 *                   norm-wise figure (both grow like sqrt(2 ln N) for N outputs);
 *                   2x covers the tail.
 *
 * Resulting thresholds (norm): f32 out u*(m+3+2sqrt(K)+1), e.g. 1.2e-6 at n = 2^15
 * and 2.8e-6 at n = 172*256; f16 out 2^-11 + E ~ 4.9e-4; bf16 out 2^-8 + E ~ 3.9e-3.
 */
#include "compare.h"

#include <math.h>

double ck_unit_roundoff(rotq_dtype dt) {
    switch (dt) {
    case ROTQ_DTYPE_F16: return 0x1p-11;
    case ROTQ_DTYPE_BF16: return 0x1p-8;
    default: return 0x1p-24;
    }
}

double ck_had_compute_err(int32_t k, int32_t m) {
    return 0x1p-24 * ((double)m + (k > 1 ? 2.0 * sqrt((double)k) : 0.0) + 3.0);
}

ck_tol ck_had_tol(rotq_dtype out, int32_t k, int32_t m) {
    double e = ck_had_compute_err(k, m), uo = ck_unit_roundoff(out);
    ck_tol t = {uo + e, uo + 2.0 * e};
    return t;
}

void ck_compare(ck_result *r, const double *got, const double *ref, int64_t n, int64_t cols,
                ck_tol tol) {
    double err2 = 0, ref2 = 0, max_err = 0, max_ref = 0;
    int64_t worst = -1, nonfinite = -1, nonfinite_count = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(ref[i])) continue; /* callers pass finite references */
        if (!isfinite(got[i])) {
            if (nonfinite < 0) nonfinite = i;
            nonfinite_count++;
            continue;
        }
        double e = fabs(got[i] - ref[i]);
        err2 += e * e;
        ref2 += ref[i] * ref[i];
        if (fabs(ref[i]) > max_ref) max_ref = fabs(ref[i]);
        if (e > max_err || worst < 0) max_err = e, worst = i;
    }
    double norm = ref2 > 0 ? sqrt(err2 / ref2) : (err2 > 0 ? INFINITY : 0.0);
    double maxn = max_ref > 0 ? max_err / max_ref : (max_err > 0 ? INFINITY : 0.0);
    ck_note(r, "error: norm %.3e (tol %.3e), max %.3e (tol %.3e) over %lld values", norm, tol.norm,
            maxn, tol.max, (long long)n);
    if (nonfinite >= 0) {
        ck_fail(r, "%lld non-finite output(s) where the reference is finite; first at row %lld col %lld: "
                "got %.9g, expected %.9g",
                (long long)nonfinite_count, (long long)(nonfinite / cols), (long long)(nonfinite % cols),
                got[nonfinite], ref[nonfinite]);
    }
    if (!(norm <= tol.norm) || !(maxn <= tol.max)) {
        int64_t bad = worst;
        double lim = tol.max * max_ref;
        for (int64_t i = 0; i < n; i++)
            if (isfinite(got[i]) && isfinite(ref[i]) && fabs(got[i] - ref[i]) > lim) {
                bad = i;
                break;
            }
        ck_fail(r, "normalized error too large: norm %.3e (tol %.3e), max %.3e (tol %.3e)", norm, tol.norm,
                maxn, tol.max);
        if (bad >= 0)
            ck_fail(r, "first bad value at row %lld col %lld: got %.9g, expected %.9g (|err| %.3e, limit %.3e)",
                    (long long)(bad / cols), (long long)(bad % cols), got[bad], ref[bad],
                    fabs(got[bad] - ref[bad]), lim);
    }
}
