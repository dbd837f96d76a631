/*
 * Row loads into and stores out of the float32 working buffers, by the rules
 * of formats.h (RNE). Header-only, for inlining into the cloned drivers.
 * Include only from the CPU backend sources.
 */
#ifndef ROTQ_CPU_CONVERT_H
#define ROTQ_CPU_CONVERT_H

#include "cpu.h"
#include "formats.h"

static inline void load_f32(const float *restrict src, const int8_t *restrict signs, float *restrict dst,
                            int64_t n) {
    if (signs) {
        for (int64_t i = 0; i < n; ++i) dst[i] = signs[i] < 0 ? -src[i] : src[i];
    } else {
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    }
}

static inline void load_f16(const uint16_t *restrict src, const int8_t *restrict signs, float *restrict dst,
                            int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = rotq_f16_to_f32(src[i]);
    if (signs)
        for (int64_t i = 0; i < n; ++i) dst[i] = signs[i] < 0 ? -dst[i] : dst[i];
}

static inline void load_bf16(const uint16_t *restrict src, const int8_t *restrict signs, float *restrict dst,
                             int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = rotq_bf16_to_f32(src[i]);
    if (signs)
        for (int64_t i = 0; i < n; ++i) dst[i] = signs[i] < 0 ? -dst[i] : dst[i];
}

/* dst[i] = float(src[off + i]), negated where signs[i] < 0 (signs may be NULL). */
static inline void load_row(const void *src, rotq_dtype dtype, int64_t off, const int8_t *signs, float *dst,
                            int64_t n) {
    switch (dtype) {
    case ROTQ_DTYPE_F32: load_f32((const float *)src + off, signs, dst, n); break;
    case ROTQ_DTYPE_F16: load_f16((const uint16_t *)src + off, signs, dst, n); break;
    case ROTQ_DTYPE_BF16: load_bf16((const uint16_t *)src + off, signs, dst, n); break;
    default: break; /* validated by the API layer */
    }
}

/* dst[off + i] = convert(src[i] * scale), RNE. */
static inline void store_row(const float *restrict src, float scale, rotq_dtype dtype, void *dst, int64_t off,
                             int64_t n) {
    switch (dtype) {
    case ROTQ_DTYPE_F32: {
        float *restrict d = (float *)dst + off;
        for (int64_t i = 0; i < n; ++i) d[i] = src[i] * scale;
        break;
    }
    case ROTQ_DTYPE_F16: {
        uint16_t *restrict d = (uint16_t *)dst + off;
        for (int64_t i = 0; i < n; ++i) d[i] = rotq_f32_to_f16(src[i] * scale);
        break;
    }
    case ROTQ_DTYPE_BF16: {
        uint16_t *restrict d = (uint16_t *)dst + off;
        for (int64_t i = 0; i < n; ++i) d[i] = rotq_f32_to_bf16(src[i] * scale);
        break;
    }
    default: break;
    }
}

#endif /* ROTQ_CPU_CONVERT_H */
