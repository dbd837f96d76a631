/*
 * Number formats, rounding and quantization rules: the single definition that
 * the CPU backend, the CUDA kernels and the float64 test references all use.
 * docs/formats.md explains the same rules in prose.
 *
 * Compiles as C11 and as CUDA (every function is host+device there).
 * Rules in one place:
 *   - all rounding is round-to-nearest-even;
 *   - absmax is taken over finite values only (NaN and +-Inf are ignored);
 *   - scale = absmax / QMAX and the element multiplier inv = QMAX / absmax,
 *     both correctly rounded float divisions; absmax == 0, or an absmax so small
 *     that QMAX / absmax overflows, gives scale = inv = 0 (all codes 0);
 *   - q = convert(x * inv): integer formats map NaN to 0 and clamp to
 *     [-QMAX, QMAX] (so +-Inf saturates); fp8 e4m3 saturates to +-448 and maps
 *     NaN to 0x7f;
 *   - int4 values are two's-complement nibbles, two per byte, the even index in
 *     the low nibble.
 */
#ifndef ROTQ_FORMATS_H
#define ROTQ_FORMATS_H

#include <stdint.h>

#ifdef __CUDACC__
#define ROTQ_HD __host__ __device__ __forceinline__
#else
#include <math.h>
#include <string.h>
#define ROTQ_HD static inline
#endif

#define ROTQ_I8_QMAX 127.0f
#define ROTQ_I4_QMAX 7.0f
#define ROTQ_FP8_E4M3_MAX 448.0f
#define ROTQ_FP8_E4M3_NAN 0x7f

ROTQ_HD uint32_t rotq_f32_bits(float f) {
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}

ROTQ_HD float rotq_f32_from_bits(uint32_t u) {
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

ROTQ_HD int rotq_is_finite(float f) { return (rotq_f32_bits(f) & 0x7f800000u) != 0x7f800000u; }
ROTQ_HD int rotq_is_nan(float f) { return (rotq_f32_bits(f) & 0x7fffffffu) > 0x7f800000u; }

/* Round to nearest even in the default floating-point environment. */
ROTQ_HD float rotq_round_even(float f) { return rintf(f); }

/* ---- 16-bit floats (software, bit-exact with the CUDA _rn intrinsics for non-NaN) ---- */

ROTQ_HD float rotq_bf16_to_f32(uint16_t h) { return rotq_f32_from_bits((uint32_t)h << 16); }

ROTQ_HD uint16_t rotq_f32_to_bf16(float f) {
    uint32_t u = rotq_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

ROTQ_HD float rotq_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f) return rotq_f32_from_bits(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        /* zero or subnormal: man * 2^-24, exact in float */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return rotq_f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

ROTQ_HD uint16_t rotq_f32_to_f16(float f) {
    uint32_t u = rotq_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: Inf */
    if (a < 0x38800000u) {
        /* below 2^-14: f16 subnormal (or zero); quantum 2^-24 */
        float v = rotq_f32_from_bits(a) * 16777216.0f; /* exact scaling by 2^24 */
        return (uint16_t)(sign | (uint16_t)rotq_round_even(v));
    }
    a += 0x0fffu + ((a >> 13) & 1u); /* round the 13 dropped bits to nearest even */
    return (uint16_t)(sign | (uint16_t)((a - 0x38000000u) >> 13));
}

/* ---- fp8 e4m3 (OCP; finite-only: no Inf, NaN = S.1111.111) ---- */

ROTQ_HD float rotq_fp8_e4m3_to_f32(uint8_t b) {
    uint32_t sign = (uint32_t)(b & 0x80u) << 24;
    uint32_t exp = (b >> 3) & 0xfu;
    uint32_t man = b & 0x7u;
    if (exp == 0xf && man == 0x7) return rotq_f32_from_bits(sign | 0x7fc00000u);
    if (exp == 0) {
        float v = (float)man * 0.001953125f; /* man * 2^-9 */
        return sign ? -v : v;
    }
    return rotq_f32_from_bits(sign | ((exp + 120u) << 23) | (man << 20));
}

/* Saturating round-to-nearest-even conversion; NaN -> 0x7f, +-Inf -> +-448. */
ROTQ_HD uint8_t rotq_f32_to_fp8_e4m3(float f) {
    uint32_t u = rotq_f32_bits(f);
    uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return ROTQ_FP8_E4M3_NAN;
    if (a >= 0x43e00000u) return (uint8_t)(sign | 0x7eu); /* >= 448: saturate */
    if (a < 0x3c800000u) {
        /* below 2^-6: e4m3 subnormal; quantum 2^-9; 8 rounds up into the first normal */
        float v = rotq_f32_from_bits(a) * 512.0f;
        return (uint8_t)(sign | (uint8_t)rotq_round_even(v));
    }
    a += 0x7ffffu + ((a >> 20) & 1u); /* round the 20 dropped bits to nearest even */
    return (uint8_t)(sign | (uint8_t)((a >> 20) - (120u << 3)));
}

/* ---- per-token / per-group symmetric quantization ---- */

/* absmax of the finite values seen so far, updated with one more value. */
ROTQ_HD float rotq_absmax_update(float absmax, float v) {
    float a = fabsf(v);
    return (rotq_is_finite(v) && a > absmax) ? a : absmax;
}

/* scale = absmax/qmax and inv = qmax/absmax. Both are 0 when absmax is 0, and
   also when qmax/absmax overflows (absmax < qmax/FLT_MAX, about 1e-36): such a
   row is flushed to zero codes rather than quantized with an infinite inv. */
ROTQ_HD int rotq_quant_flushes(float absmax, float qmax) { return !(absmax > 0.0f) || !rotq_is_finite(qmax / absmax); }
ROTQ_HD float rotq_quant_scale(float absmax, float qmax) { return rotq_quant_flushes(absmax, qmax) ? 0.0f : absmax / qmax; }
ROTQ_HD float rotq_quant_inv(float absmax, float qmax) { return rotq_quant_flushes(absmax, qmax) ? 0.0f : qmax / absmax; }

/* Symmetric integer quantization of an already scaled value: NaN -> 0, clamp, RNE. */
ROTQ_HD int32_t rotq_quant_int(float v, float qmax) {
    if (rotq_is_nan(v)) return 0;
    v = v > qmax ? qmax : v;
    v = v < -qmax ? -qmax : v;
    return (int32_t)rotq_round_even(v);
}

ROTQ_HD int8_t rotq_quant_i8(float v) { return (int8_t)rotq_quant_int(v, ROTQ_I8_QMAX); }
ROTQ_HD int8_t rotq_quant_i4(float v) { return (int8_t)rotq_quant_int(v, ROTQ_I4_QMAX); }

/* Static per-tensor fp8: the multiplier is the correctly rounded 1/scale. */
ROTQ_HD float rotq_static_inv(float static_scale) { return 1.0f / static_scale; }

/* ---- int4 packing ---- */

ROTQ_HD uint8_t rotq_i4_pack(int8_t even, int8_t odd) {
    return (uint8_t)(((uint8_t)even & 0x0fu) | (((uint8_t)odd & 0x0fu) << 4));
}
ROTQ_HD int8_t rotq_i4_lo(uint8_t b) { return (int8_t)((int8_t)(uint8_t)(b << 4) >> 4); }
ROTQ_HD int8_t rotq_i4_hi(uint8_t b) { return (int8_t)((int8_t)b >> 4); }

#endif /* ROTQ_FORMATS_H */
