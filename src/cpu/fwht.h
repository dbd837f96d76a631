/*
 * The float32 transform of one block, header-only so that each backend driver
 * (compiled per ISA level, see ROTQ_CPU_CLONES) inlines it whole:
 * y = (H_K (x) H_P) x with x[k*P + j], P = 2^m. The Sylvester part is an
 * in-place iterative FWHT (first four stages on 16-float chunks in registers,
 * the rest as radix-8/4/2 passes over contiguous runs); the factor step is a small dense
 * +-1 matrix product over register tiles of the contiguous j index.
 * Include only from the CPU backend sources.
 */
#ifndef ROTQ_CPU_FWHT_H
#define ROTQ_CPU_FWHT_H

#include <string.h>

#include "cpu.h"

/* ---- Sylvester FWHT ---------------------------------------------------- */

#if defined(__GNUC__) && !defined(ROTQ_CPU_NO_VECEXT)
typedef float rotq__v8sf __attribute__((vector_size(32)));
typedef int32_t rotq__v8si __attribute__((vector_size(32)));

#if defined(__clang__)
#define ROTQ_SHUF8_(v, a, b, c, d, e, f, g, h) __builtin_shufflevector(v, v, a, b, c, d, e, f, g, h)
#else
#define ROTQ_SHUF8_(v, a, b, c, d, e, f, g, h) __builtin_shuffle(v, (rotq__v8si){a, b, c, d, e, f, g, h})
#endif

/* Stages h = 1, 2, 4 inside one 8-float vector: out = partner(v) + sign_h * v. */
static inline void fwht8_vec(rotq__v8sf *p) { /* by pointer: no vector-ABI warnings */
    const rotq__v8sf s1 = {1, -1, 1, -1, 1, -1, 1, -1};
    const rotq__v8sf s2 = {1, 1, -1, -1, 1, 1, -1, -1};
    const rotq__v8sf s4 = {1, 1, 1, 1, -1, -1, -1, -1};
    rotq__v8sf v = *p;
    v = ROTQ_SHUF8_(v, 1, 0, 3, 2, 5, 4, 7, 6) + s1 * v;
    v = ROTQ_SHUF8_(v, 2, 3, 0, 1, 6, 7, 4, 5) + s2 * v;
    v = ROTQ_SHUF8_(v, 4, 5, 6, 7, 0, 1, 2, 3) + s4 * v;
    *p = v;
}

/* Stages h = 1, 2, 4 on every 8-float chunk (n a multiple of 8). */
static inline void fwht_base8(float *restrict x, int64_t n) {
    for (int64_t i = 0; i < n; i += 8) {
        rotq__v8sf v;
        memcpy(&v, x + i, sizeof v);
        fwht8_vec(&v);
        memcpy(x + i, &v, sizeof v);
    }
}

/* Stages h = 1, 2, 4, 8 on every 16-float chunk (n a multiple of 16). */
static inline void fwht_base16(float *restrict x, int64_t n) {
    for (int64_t i = 0; i < n; i += 16) {
        rotq__v8sf lo, hi;
        memcpy(&lo, x + i, sizeof lo);
        memcpy(&hi, x + i + 8, sizeof hi);
        fwht8_vec(&lo);
        fwht8_vec(&hi);
        const rotq__v8sf sum = lo + hi, dif = lo - hi;
        memcpy(x + i, &sum, sizeof sum);
        memcpy(x + i + 8, &dif, sizeof dif);
    }
}
#else
static inline void fwht_base8(float *restrict x, int64_t n) {
    for (int64_t i = 0; i < n; i += 8) {
        float *p = x + i;
        float b0 = p[0] + p[1], b1 = p[0] - p[1], b2 = p[2] + p[3], b3 = p[2] - p[3];
        float b4 = p[4] + p[5], b5 = p[4] - p[5], b6 = p[6] + p[7], b7 = p[6] - p[7];
        float c0 = b0 + b2, c1 = b1 + b3, c2 = b0 - b2, c3 = b1 - b3;
        float c4 = b4 + b6, c5 = b5 + b7, c6 = b4 - b6, c7 = b5 - b7;
        p[0] = c0 + c4, p[1] = c1 + c5, p[2] = c2 + c6, p[3] = c3 + c7;
        p[4] = c0 - c4, p[5] = c1 - c5, p[6] = c2 - c6, p[7] = c3 - c7;
    }
}

static inline void fwht_base16(float *restrict x, int64_t n) {
    fwht_base8(x, n);
    for (int64_t i = 0; i < n; i += 16)
        for (int64_t j = i; j < i + 8; ++j) {
            float u = x[j], v = x[j + 8];
            x[j] = u + v;
            x[j + 8] = u - v;
        }
}
#endif

/*
 * The butterfly runs take their rows as restrict parameters (GCC ignores
 * block-scope restrict) and walk them in fixed 16-float chunks (h is a
 * multiple of 16 after the base stages), so they vectorize without alias
 * checks or epilogues, at -O2 as well as at -O3.
 */
#define ROTQ_FWHT_CHUNK 16

static inline void bfly2(float *restrict a, float *restrict b, int64_t h) {
    for (int64_t j0 = 0; j0 < h; j0 += ROTQ_FWHT_CHUNK)
        for (int64_t j = j0; j < j0 + ROTQ_FWHT_CHUNK; ++j) {
            float u = a[j], v = b[j];
            a[j] = u + v;
            b[j] = u - v;
        }
}

static inline void bfly4(float *restrict a, float *restrict b, float *restrict c, float *restrict d, int64_t h) {
    for (int64_t j0 = 0; j0 < h; j0 += ROTQ_FWHT_CHUNK)
        for (int64_t j = j0; j < j0 + ROTQ_FWHT_CHUNK; ++j) {
            float u0 = a[j], u1 = b[j], u2 = c[j], u3 = d[j];
            float v0 = u0 + u1, v1 = u0 - u1, v2 = u2 + u3, v3 = u2 - u3;
            a[j] = v0 + v2;
            b[j] = v1 + v3;
            c[j] = v0 - v2;
            d[j] = v1 - v3;
        }
}

static inline void bfly8(float *restrict a0, float *restrict a1, float *restrict a2, float *restrict a3,
                         float *restrict a4, float *restrict a5, float *restrict a6, float *restrict a7, int64_t h) {
    for (int64_t j0 = 0; j0 < h; j0 += ROTQ_FWHT_CHUNK)
        for (int64_t j = j0; j < j0 + ROTQ_FWHT_CHUNK; ++j) {
            float u0 = a0[j], u1 = a1[j], u2 = a2[j], u3 = a3[j];
            float u4 = a4[j], u5 = a5[j], u6 = a6[j], u7 = a7[j];
            float v0 = u0 + u1, v1 = u0 - u1, v2 = u2 + u3, v3 = u2 - u3;
            float v4 = u4 + u5, v5 = u4 - u5, v6 = u6 + u7, v7 = u6 - u7;
            float w0 = v0 + v2, w1 = v1 + v3, w2 = v0 - v2, w3 = v1 - v3;
            float w4 = v4 + v6, w5 = v5 + v7, w6 = v4 - v6, w7 = v5 - v7;
            a0[j] = w0 + w4;
            a1[j] = w1 + w5;
            a2[j] = w2 + w6;
            a3[j] = w3 + w7;
            a4[j] = w0 - w4;
            a5[j] = w1 - w5;
            a6[j] = w2 - w6;
            a7[j] = w3 - w7;
        }
}

/* Stage(s) starting at half-width h (a multiple of 16): radix 2, 4 or 8 passes. */
static inline void fwht_r2(float *x, int64_t n, int64_t h) {
    for (int64_t i = 0; i < n; i += 2 * h) bfly2(x + i, x + i + h, h);
}

static inline void fwht_r4(float *x, int64_t n, int64_t h) {
    for (int64_t i = 0; i < n; i += 4 * h) bfly4(x + i, x + i + h, x + i + 2 * h, x + i + 3 * h, h);
}

static inline void fwht_r8(float *x, int64_t n, int64_t h) {
    for (int64_t i = 0; i < n; i += 8 * h) {
        float *a = x + i;
        bfly8(a, a + h, a + 2 * h, a + 3 * h, a + 4 * h, a + 5 * h, a + 6 * h, a + 7 * h, h);
    }
}

/* Sizes 1, 2 and 4: plain radix-2 stages. */
static inline void fwht_tiny(float *x, int64_t n) {
    for (int64_t h = 1; h < n; h *= 2)
        for (int64_t i = 0; i < n; i += 2 * h)
            for (int64_t j = i; j < i + h; ++j) {
                float u = x[j], v = x[j + h];
                x[j] = u + v;
                x[j + h] = u - v;
            }
}

static inline void fwht(float *x, int m) {
    const int64_t n = (int64_t)1 << m;
    if (m < 3) {
        fwht_tiny(x, n);
        return;
    }
    if (m == 3) {
        fwht_base8(x, n);
        return;
    }
    fwht_base16(x, n);
    int64_t h = 16;
    int left = m - 4;
    while (left >= 3) {
        fwht_r8(x, n, h);
        h *= 8;
        left -= 3;
    }
    if (left == 2) fwht_r4(x, n, h);
    if (left == 1) fwht_r2(x, n, h);
}

/* ---- the K-factor step ------------------------------------------------- */

/*
 * y[k*P + j] = sum_k' F[k][k'] x[k'*P + j], P a multiple of ROTQ_CPU_KTILE.
 * Register tiles of R output rows x 16 columns, accumulated over k' in order
 * (every product is exact, so the sums are the same with or without FMA).
 */
#if defined(__GNUC__) && !defined(ROTQ_CPU_NO_VECEXT)
typedef float rotq__v16sf __attribute__((vector_size(64)));

/* Output rows k .. k+R-1, columns j0 .. j0+15. */
#define ROTQ_KSTEP_ROWS_(R)                                                                          \
    static inline void kstep_rows##R(const float *restrict x, float *restrict y, const float *restrict f, \
                                     int32_t kk, int64_t p, int64_t j0, int32_t k) {                 \
        rotq__v16sf a[R];                                                                            \
        for (int r = 0; r < R; ++r) a[r] = (rotq__v16sf){0};                                         \
        for (int32_t q = 0; q < kk; ++q) {                                                           \
            rotq__v16sf xv;                                                                          \
            memcpy(&xv, x + (int64_t)q * p + j0, sizeof xv);                                         \
            for (int r = 0; r < R; ++r) a[r] += f[(int64_t)(k + r) * kk + q] * xv;                  \
        }                                                                                            \
        for (int r = 0; r < R; ++r) memcpy(y + (int64_t)(k + r) * p + j0, &a[r], sizeof a[r]);      \
    }
ROTQ_KSTEP_ROWS_(4)
ROTQ_KSTEP_ROWS_(8)
#undef ROTQ_KSTEP_ROWS_

/* 8-row tiles only where their 8 accumulators stay in registers (AVX-512: 8 of 32 zmm). */
static inline int kstep_wide(void) {
#if ROTQ_CPU_CLONES_ON
    return __builtin_cpu_supports("avx512f"); /* the AVX-512 clone is the one running */
#elif defined(__AVX512F__)
    return 1;
#else
    return 0;
#endif
}

static inline void kstep_tiled(const float *restrict x, float *restrict y, const float *restrict f, int32_t kk,
                               int64_t p) {
    const int wide = kstep_wide();
    for (int64_t j0 = 0; j0 < p; j0 += ROTQ_CPU_KTILE) {
        int32_t k = 0;
        if (wide)
            for (; k + 8 <= kk; k += 8) kstep_rows8(x, y, f, kk, p, j0, k);
        for (; k < kk; k += 4) kstep_rows4(x, y, f, kk, p, j0, k); /* every K is a multiple of 4 */
    }
}
#else
static inline void kstep_tiled(const float *restrict x, float *restrict y, const float *restrict f, int32_t kk,
                               int64_t p) {
    for (int64_t j0 = 0; j0 < p; j0 += ROTQ_CPU_KTILE) {
        for (int32_t k = 0; k < kk; ++k) {
            const float *restrict fr = f + (int64_t)k * kk;
            float acc[ROTQ_CPU_KTILE] = {0};
            for (int32_t q = 0; q < kk; ++q) {
                const float s = fr[q];
                const float *restrict xr = x + (int64_t)q * p + j0;
                for (int t = 0; t < ROTQ_CPU_KTILE; ++t) acc[t] += s * xr[t];
            }
            float *restrict yr = y + (int64_t)k * p + j0;
            for (int t = 0; t < ROTQ_CPU_KTILE; ++t) yr[t] = acc[t];
        }
    }
}
#endif

/* Same product for small P with ft = F^T: y[k*P + j] over a contiguous k run per j. */
static inline void kstep_small(const float *restrict x, float *restrict y, const float *restrict ft, int32_t kk,
                               int64_t p, float *restrict acc) {
    for (int64_t j = 0; j < p; ++j) {
        for (int32_t k = 0; k < kk; ++k) acc[k] = 0.0f;
        for (int32_t q = 0; q < kk; ++q) {
            const float s = x[(int64_t)q * p + j];
            const float *restrict fc = ft + (int64_t)q * kk;
            for (int32_t k = 0; k < kk; ++k) acc[k] += s * fc[k];
        }
        for (int32_t k = 0; k < kk; ++k) y[(int64_t)k * p + j] = acc[k];
    }
}

static inline void kstep(const float *x, float *y, const rotq__cpu_rot *rot) {
    int64_t p = (int64_t)1 << rot->m;
    if (p >= ROTQ_CPU_KTILE) {
        kstep_tiled(x, y, rot->factor, rot->k, p);
    } else {
        float acc[256]; /* K <= 172 */
        kstep_small(x, y, rot->factor, rot->k, p, acc);
    }
}

/*
 * Transforms one block of n floats held in buf (signs already applied):
 * (H_K (x) H_P) buf, unscaled. tmp holds n floats of scratch. Returns the
 * pointer holding the result: buf, or tmp when K > 1.
 */
static inline float *transform_block(float *buf, float *tmp, const rotq__cpu_rot *rot) {
    int64_t p = (int64_t)1 << rot->m;
    if (rot->m > 0)
        for (int32_t k = 0; k < rot->k; ++k) fwht(buf + (int64_t)k * p, rot->m);
    if (rot->k == 1) return buf;
    kstep(buf, tmp, rot);
    return tmp;
}

#endif /* ROTQ_CPU_FWHT_H */
