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

/*
 * rotq_f16_to_f32 with selects instead of early returns, so that the row loop
 * vectorizes (GCC does not if-convert the formats.h version). Bit-identical to
 * it for all 65536 inputs, NaN payloads included:
 * normal (exp + 112) << 23 | man << 13; Inf/NaN 0x7f800000 | man << 13;
 * zero/subnormal man * 2^-24; then the sign bit.
 */
static inline float f16_to_f32(uint16_t h) {
    const uint32_t em = h & 0x7fffu, exp = em >> 10;
    const uint32_t normal = (em << 13) + (112u << 23);
    const uint32_t infnan = (em << 13) | 0x7f800000u;
    const uint32_t sub = rotq_f32_bits((float)(int32_t)(em & 0x3ffu) * 5.9604644775390625e-8f);
    /* masks, not ?:, so GCC keeps the float product unconditional and if-converts */
    const uint32_t is_inf = 0u - (uint32_t)(exp == 0x1fu), is_sub = 0u - (uint32_t)(exp == 0u);
    const uint32_t r = (is_sub & sub) | (~is_sub & ((is_inf & infnan) | (~is_inf & normal)));
    return rotq_f32_from_bits(r | ((uint32_t)(h & 0x8000u) << 16));
}

/*
 * rotq_f32_to_f16 (RNE, overflow to Inf, NaN payload kept) with masks instead
 * of early returns, for the same reason; bit-identical to it for every float.
 * The subnormal candidate is computed from an input clamped to the subnormal
 * range, so it is always in range even when another candidate is selected.
 */
static inline uint16_t f32_to_f16(float f) {
    const uint32_t u = rotq_f32_bits(f), a = u & 0x7fffffffu;
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    const uint32_t inf = 0x7c00u;
    const uint32_t small = a < 0x38800000u ? a : 0x38800000u;
    const uint32_t sub = (uint32_t)(int32_t)rotq_round_even(rotq_f32_from_bits(small) * 16777216.0f);
    const uint32_t normal = (a + 0x0fffu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
    const uint32_t is_nan = 0u - (uint32_t)(a > 0x7f800000u);
    const uint32_t is_inf = 0u - (uint32_t)(a >= 0x477ff000u);
    const uint32_t is_sub = 0u - (uint32_t)(a < 0x38800000u);
    uint32_t r = (is_sub & sub) | (~is_sub & normal);
    r = (is_inf & inf) | (~is_inf & r);
    r = (is_nan & nan) | (~is_nan & r);
    return (uint16_t)(sign | r);
}

static inline void load_f16(const uint16_t *restrict src, const int8_t *restrict signs, float *restrict dst,
                            int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(src[i]);
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
#if ROTQ_CPU_HAVE_F16C
        if (rotq__cpu_has_f16c()) {
            rotq__cpu_store_f16_f16c(src, scale, d, n);
            break;
        }
#endif
        for (int64_t i = 0; i < n; ++i) d[i] = f32_to_f16(src[i] * scale);
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
