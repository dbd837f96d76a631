/*
 * float -> f16 rows with the F16C instruction (x86-64), picked at run time.
 * VCVTPS2PH with round-to-nearest-even is bit-identical to rotq_f32_to_f16
 * for every float (NaNs included: both give sign | 0x7e00 | payload >> 13),
 * and several times faster than the portable conversion.
 */
#include "cpu.h"
#include "formats.h"

#if ROTQ_CPU_HAVE_F16C
#include <cpuid.h>
#include <immintrin.h>

int rotq__cpu_has_f16c(void) {
    /* AVX2 (which also says the OS saves the AVX state) and CPUID.1:ECX.F16C[bit 29];
       cpuid directly, as clang's __builtin_cpu_supports does not know "f16c". */
    unsigned a, b, c, d;
    if (!__builtin_cpu_supports("avx2") || !__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c >> 29) & 1u;
}

__attribute__((target("avx2,f16c"))) void rotq__cpu_store_f16_f16c(const float *src, float scale, uint16_t *dst,
                                                                  int64_t n) {
    const __m256 s = _mm256_set1_ps(scale);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src + i), s);
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; ++i) dst[i] = rotq_f32_to_f16(src[i] * scale);
}
#endif
