#include "data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

size_t ck_dtype_bytes(rotq_dtype dt, int64_t n) {
    switch (dt) {
    case ROTQ_DTYPE_F32: return (size_t)n * 4;
    case ROTQ_DTYPE_F16:
    case ROTQ_DTYPE_BF16: return (size_t)n * 2;
    case ROTQ_DTYPE_I8:
    case ROTQ_DTYPE_FP8_E4M3: return (size_t)n;
    case ROTQ_DTYPE_I4X2: return (size_t)(n + 1) / 2;
    default: return 0;
    }
}

size_t ck_matrix_bytes(rotq_dtype dt, int64_t rows, int64_t stride) {
    return ck_dtype_bytes(dt, rows * stride);
}

uint32_t ck_code(const void *data, rotq_dtype dt, int64_t i) {
    const unsigned char *p = (const unsigned char *)data;
    switch (dt) {
    case ROTQ_DTYPE_F32: {
        uint32_t u;
        memcpy(&u, p + 4 * i, 4);
        return u;
    }
    case ROTQ_DTYPE_F16:
    case ROTQ_DTYPE_BF16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return h;
    }
    case ROTQ_DTYPE_I8:
    case ROTQ_DTYPE_FP8_E4M3: return p[i];
    case ROTQ_DTYPE_I4X2: return (i & 1) ? (uint32_t)(p[i / 2] >> 4) : (uint32_t)(p[i / 2] & 0xfu);
    default: return 0;
    }
}

double ck_get(const void *data, rotq_dtype dt, int64_t i) {
    uint32_t c = ck_code(data, dt, i);
    switch (dt) {
    case ROTQ_DTYPE_F32: return (double)rotq_f32_from_bits(c);
    case ROTQ_DTYPE_F16: return (double)rotq_f16_to_f32((uint16_t)c);
    case ROTQ_DTYPE_BF16: return (double)rotq_bf16_to_f32((uint16_t)c);
    case ROTQ_DTYPE_I8: return (double)(int8_t)(uint8_t)c;
    case ROTQ_DTYPE_FP8_E4M3: return (double)rotq_fp8_e4m3_to_f32((uint8_t)c);
    case ROTQ_DTYPE_I4X2: return (double)rotq_i4_lo((uint8_t)c);
    default: return 0.0;
    }
}

void ck_set(void *data, rotq_dtype dt, int64_t i, double v) {
    unsigned char *p = (unsigned char *)data;
    float f = (float)v;
    switch (dt) {
    case ROTQ_DTYPE_F32: memcpy(p + 4 * i, &f, 4); break;
    case ROTQ_DTYPE_F16: {
        uint16_t h = rotq_f32_to_f16(f);
        memcpy(p + 2 * i, &h, 2);
        break;
    }
    case ROTQ_DTYPE_BF16: {
        uint16_t h = rotq_f32_to_bf16(f);
        memcpy(p + 2 * i, &h, 2);
        break;
    }
    case ROTQ_DTYPE_I8: p[i] = (uint8_t)(int8_t)v; break;
    case ROTQ_DTYPE_FP8_E4M3: p[i] = rotq_f32_to_fp8_e4m3(f); break;
    case ROTQ_DTYPE_I4X2: {
        uint8_t nib = (uint8_t)((int8_t)v & 0xf);
        p[i / 2] = (i & 1) ? (uint8_t)((p[i / 2] & 0x0fu) | (nib << 4))
                           : (uint8_t)((p[i / 2] & 0xf0u) | nib);
        break;
    }
    default: break;
    }
}

void ck_poison(void *data, rotq_dtype dt, size_t bytes) {
    unsigned char *p = (unsigned char *)data;
    static const unsigned char f32[4] = {0xab, 0xad, 0xab, 0xff}; /* 0xffabadab little endian */
    static const unsigned char f16[2] = {0xab, 0xfe};
    static const unsigned char bf16[2] = {0xab, 0xff};
    const unsigned char *pat = NULL;
    size_t n = 1;
    if (dt == ROTQ_DTYPE_F32) pat = f32, n = 4;
    if (dt == ROTQ_DTYPE_F16) pat = f16, n = 2;
    if (dt == ROTQ_DTYPE_BF16) pat = bf16, n = 2;
    if (!pat) {
        memset(p, CK_POISON_BYTE, bytes);
        return;
    }
    for (size_t i = 0; i < bytes; i++) p[i] = pat[i % n];
}
