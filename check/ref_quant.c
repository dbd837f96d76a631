/* Quantization references, written from the rules in formats.h. */
#include <math.h>

#include "formats.h"
#include "ref.h"

rotq_dtype ck_quant_qdtype(rotq_quant_kind kind) {
    switch (kind) {
    case ROTQ_QUANT_INT8_ROW: return ROTQ_DTYPE_I8;
    case ROTQ_QUANT_INT4_GROUP: return ROTQ_DTYPE_I4X2;
    default: return ROTQ_DTYPE_FP8_E4M3;
    }
}

float ck_quant_qmax(rotq_quant_kind kind) {
    switch (kind) {
    case ROTQ_QUANT_INT8_ROW: return ROTQ_I8_QMAX;
    case ROTQ_QUANT_INT4_GROUP: return ROTQ_I4_QMAX;
    case ROTQ_QUANT_FP8_ROW: return ROTQ_FP8_E4M3_MAX;
    default: return 0.0f;
    }
}

int ck_quant_is_fp8(rotq_quant_kind kind) {
    return kind == ROTQ_QUANT_FP8_ROW || kind == ROTQ_QUANT_FP8_TENSOR;
}

int64_t ck_quant_group(const rotq_quant_params *p, int64_t cols) {
    if (p->kind == ROTQ_QUANT_INT4_GROUP) return p->group_size;
    if (p->kind == ROTQ_QUANT_FP8_TENSOR) return 0;
    return cols;
}

uint32_t ck_quant_code(rotq_quant_kind kind, float scaled) {
    switch (kind) {
    case ROTQ_QUANT_INT8_ROW: return (uint8_t)rotq_quant_i8(scaled);
    case ROTQ_QUANT_INT4_GROUP: return (uint32_t)rotq_quant_i4(scaled) & 0xfu;
    default: return rotq_f32_to_fp8_e4m3(scaled);
    }
}

double ck_quant_code_value(rotq_quant_kind kind, uint32_t code) {
    switch (kind) {
    case ROTQ_QUANT_INT8_ROW: return (double)(int8_t)(uint8_t)code;
    case ROTQ_QUANT_INT4_GROUP: return (double)rotq_i4_lo((uint8_t)code);
    default: return (double)rotq_fp8_e4m3_to_f32((uint8_t)code);
    }
}

/* Position of a code on the number line, counted in steps from zero (fp8: sign
   and magnitude bits). */
static int code_step(rotq_quant_kind kind, uint32_t code) {
    if (!ck_quant_is_fp8(kind)) return (int)ck_quant_code_value(kind, code);
    int mag = (int)(code & 0x7fu);
    return (code & 0x80u) ? -mag : mag;
}

/* The value of the code at a position (code_step's count from zero). */
static double step_value(rotq_quant_kind kind, int step) {
    if (!ck_quant_is_fp8(kind)) return (double)step;
    return ck_quant_code_value(kind, step < 0 ? 0x80u | (uint32_t)-step : (uint32_t)step);
}

/* The edge of got's rounding interval on ref's side is midway to the next code
   toward ref. For adjacent codes that edge is the boundary between the two; near
   zero the fp8 steps are finer than a typical deviation, so codes further apart
   can be within it too. */
int ck_quant_code_within(rotq_quant_kind kind, uint32_t got, uint32_t ref, double sref, double dl) {
    const int sg = code_step(kind, got), sr = code_step(kind, ref);
    if (sg == sr) return 1;
    const double vb = ck_quant_code_value(kind, got), vn = step_value(kind, sg + (sr > sg ? 1 : -1));
    return fabs(sref - 0.5 * (vb + vn)) <= dl;
}

void ck_ref_quant_f32(rotq_quant_kind kind, float static_scale, const float *v, int64_t n,
                      uint32_t *codes, float *scale, float *inv) {
    float sc = 0.0f, iv;
    if (kind == ROTQ_QUANT_FP8_TENSOR) {
        iv = rotq_static_inv(static_scale);
    } else {
        float absmax = 0.0f, qmax = ck_quant_qmax(kind);
        for (int64_t i = 0; i < n; i++) absmax = rotq_absmax_update(absmax, v[i]);
        sc = rotq_quant_scale(absmax, qmax);
        iv = rotq_quant_inv(absmax, qmax);
    }
    for (int64_t i = 0; i < n; i++) codes[i] = ck_quant_code(kind, v[i] * iv);
    if (scale) *scale = sc;
    if (inv) *inv = iv;
}

void ck_ref_quant_f64(rotq_quant_kind kind, float static_scale, const double *r, int64_t n,
                      uint32_t *codes, double *s, float *scale, float *inv) {
    float sc = 0.0f, iv;
    if (kind == ROTQ_QUANT_FP8_TENSOR) {
        iv = rotq_static_inv(static_scale);
    } else {
        double absmax = 0.0;
        for (int64_t i = 0; i < n; i++)
            if (isfinite(r[i]) && fabs(r[i]) > absmax) absmax = fabs(r[i]);
        float qmax = ck_quant_qmax(kind);
        sc = rotq_quant_scale((float)absmax, qmax);
        iv = rotq_quant_inv((float)absmax, qmax);
    }
    for (int64_t i = 0; i < n; i++) {
        s[i] = r[i] * (double)iv;
        codes[i] = ck_quant_code(kind, (float)s[i]);
    }
    if (scale) *scale = sc;
    if (inv) *inv = iv;
}

float ck_ref_dequant(rotq_quant_kind kind, uint32_t code, float scale) {
    return (float)ck_quant_code_value(kind, code) * scale;
}
