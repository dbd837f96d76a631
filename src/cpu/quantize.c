/*
 * rotq__cpu_quantize / rotq__cpu_dequantize: one row at a time (rows split over
 * threads) through a float32 row buffer; optional block-diagonal rotation
 * first, then the per-row / per-group / per-tensor rules of formats.h.
 */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "convert.h"
#include "cpu.h"
#include "formats.h"
#include "fwht.h"

/* ---- row kernels ------------------------------------------------------- */

/*
 * The fold of rotq_absmax_update over v, written so it vectorizes: finite |v|
 * compare as their bit patterns, non-finite values count as 0 (ignored), and
 * the result is bit-identical to the sequential fold (including +0 for an
 * all-zero or all-non-finite row).
 */
static inline float absmax_f32(const float *restrict v, int64_t n) {
    int32_t m = 0; /* signed: GCC vectorizes this max reduction, not the unsigned one */
    for (int64_t i = 0; i < n; ++i) {
        int32_t a = (int32_t)(rotq_f32_bits(v[i]) & 0x7fffffffu);
        int32_t f = a < 0x7f800000 ? a : 0;
        m = f > m ? f : m;
    }
    return rotq_f32_from_bits((uint32_t)m);
}

/* Returns the (wrapping) int32 sum of the quantized values. */
static inline int32_t quant_i8_row(const float *restrict v, int64_t n, float inv, int8_t *restrict q) {
    uint32_t sum = 0;
    for (int64_t i = 0; i < n; ++i) {
        int8_t t = rotq_quant_i8(v[i] * inv);
        q[i] = t;
        sum += (uint32_t)(int32_t)t;
    }
    return (int32_t)sum;
}

static inline void quant_fp8_row(const float *restrict v, int64_t n, float inv, uint8_t *restrict q) {
    for (int64_t i = 0; i < n; ++i) q[i] = rotq_f32_to_fp8_e4m3(v[i] * inv);
}

/* n is even; q receives n/2 bytes. */
static inline void quant_i4_group(const float *restrict v, int64_t n, float inv, uint8_t *restrict q) {
    for (int64_t i = 0; i < n / 2; ++i)
        q[i] = rotq_i4_pack(rotq_quant_i4(v[2 * i] * inv), rotq_quant_i4(v[2 * i + 1] * inv));
}

static inline void scale_copy(const float *src, float scale, float *dst, int64_t n) { /* src may equal dst */
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] * scale;
}

static inline void quantize_row(const rotq_quant_params *p, const float *v, int64_t cols, void *qrow,
                                float *scales, int32_t *row_sum) {
    switch (p->kind) {
    case ROTQ_QUANT_INT8_ROW: {
        float am = absmax_f32(v, cols);
        int32_t s = quant_i8_row(v, cols, rotq_quant_inv(am, ROTQ_I8_QMAX), (int8_t *)qrow);
        scales[0] = rotq_quant_scale(am, ROTQ_I8_QMAX);
        if (row_sum) *row_sum = s;
        break;
    }
    case ROTQ_QUANT_FP8_ROW: {
        float am = absmax_f32(v, cols);
        quant_fp8_row(v, cols, rotq_quant_inv(am, ROTQ_FP8_E4M3_MAX), (uint8_t *)qrow);
        scales[0] = rotq_quant_scale(am, ROTQ_FP8_E4M3_MAX);
        break;
    }
    case ROTQ_QUANT_FP8_TENSOR:
        quant_fp8_row(v, cols, rotq_static_inv(p->static_scale), (uint8_t *)qrow);
        break;
    case ROTQ_QUANT_INT4_GROUP: {
        const int64_t g = p->group_size;
        for (int64_t j = 0; j < cols / g; ++j) {
            float am = absmax_f32(v + j * g, g);
            quant_i4_group(v + j * g, g, rotq_quant_inv(am, ROTQ_I4_QMAX), (uint8_t *)qrow + j * g / 2);
            scales[j] = rotq_quant_scale(am, ROTQ_I4_QMAX);
        }
        break;
    }
    default: break;
    }
}

/* ---- quantize ---------------------------------------------------------- */

/* Quantizes rows [begin, end); row holds cols floats, tmp one block when K > 1. */
ROTQ_CPU_CLONES ROTQ_CPU_FMA
static void quantize_rows(const rotq_quant_params *p, const rotq__cpu_rot *rot, const rotq_matrix *x,
                          const rotq_matrix *q, float *scales, int32_t *row_sums, int64_t begin, int64_t end,
                          float *row, float *tmp) {
    const int64_t cols = x->cols;
    const int64_t scales_per_row = p->kind == ROTQ_QUANT_INT4_GROUP ? cols / p->group_size : 1;
    const int qbits = rotq_dtype_bits(q->dtype);
    for (int64_t r = begin; r < end; ++r) {
        load_row(x->data, x->dtype, r * x->stride, rot ? rot->signs : NULL, row, cols);
        if (rot) {
            const int64_t n = rot->n;
            for (int64_t b = 0; b < cols / n; ++b) {
                float *blk = row + b * n;
                const float *out = transform_block(blk, tmp, rot);
                scale_copy(out, rot->scale, blk, n);
            }
        }
        void *qrow = (uint8_t *)q->data + r * q->stride * qbits / 8;
        quantize_row(p, row, cols, qrow, scales ? scales + r * scales_per_row : NULL, row_sums ? row_sums + r : NULL);
    }
}

rotq_status rotq__cpu_quantize(const rotq_exec *exec, const rotq_quant_params *p, const rotq__hadamard_plan *rotate,
                               const rotq_matrix *x, const rotq_matrix *q, float *scales, int32_t *row_sums) {
    rotq__cpu_rot rot = {0};
    rotq_status st;
    if (rotate && (st = rotq__cpu_rot_init(&rot, rotate)) != ROTQ_OK) return st;

    const int64_t rows = x->rows, cols = x->cols;
    const size_t cpad = rotq__cpu_floats_padded(cols);
    const size_t tpad = (rotate && rotate->k > 1) ? rotq__cpu_floats_padded(rotate->size) : 0;
    const size_t per_thread = cpad + tpad;
    const double cost = (double)cols * (rotate ? rotate->log2_pow2 + rotate->k + 8 : 8);
    const int nt = rotq__cpu_threads(exec, rows, cost);
    float *scratch = rotq__cpu_scratch(per_thread, nt);
    if (!scratch) {
        rotq__cpu_rot_free(&rot);
        return ROTQ_ERR_OUT_OF_MEMORY;
    }
    const rotq__cpu_rot *rp = rotate ? &rot : NULL;

#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int tid = omp_get_thread_num();
        int64_t begin, end;
        rotq__cpu_share(rows, tid, omp_get_num_threads(), &begin, &end);
        float *row = scratch + per_thread * (size_t)tid;
        quantize_rows(p, rp, x, q, scales, row_sums, begin, end, row, row + cpad);
    }
#else
    quantize_rows(p, rp, x, q, scales, row_sums, 0, rows, scratch, scratch + cpad);
#endif

    rotq__cpu_free(scratch);
    rotq__cpu_rot_free(&rot);
    return ROTQ_OK;
}

/* ---- dequantize -------------------------------------------------------- */

/*
 * v = q * scale for one row, in float (the product the store would form): per
 * row for INT8/FP8, per group for INT4. lut holds the 256 fp8 e4m3 values.
 */
static inline void decode_row(const void *qrow, const rotq_quant_params *p, const float *scales, const float *lut,
                              int64_t n, float *restrict v) {
    switch (p->kind) {
    case ROTQ_QUANT_INT8_ROW: {
        const int8_t *restrict s = (const int8_t *)qrow;
        const float sc = scales[0];
        for (int64_t i = 0; i < n; ++i) v[i] = (float)s[i] * sc;
        break;
    }
    case ROTQ_QUANT_FP8_ROW:
    case ROTQ_QUANT_FP8_TENSOR: {
        const uint8_t *restrict s = (const uint8_t *)qrow;
        const float sc = p->kind == ROTQ_QUANT_FP8_TENSOR ? p->static_scale : scales[0];
        for (int64_t i = 0; i < n; ++i) v[i] = lut[s[i]] * sc;
        break;
    }
    case ROTQ_QUANT_INT4_GROUP: {
        const int64_t g = p->group_size;
        for (int64_t j = 0; j < n / g; ++j) {
            const uint8_t *restrict s = (const uint8_t *)qrow + j * g / 2;
            float *restrict o = v + j * g;
            const float sc = scales[j];
            for (int64_t i = 0; i < g / 2; ++i) {
                o[2 * i] = (float)rotq_i4_lo(s[i]) * sc;
                o[2 * i + 1] = (float)rotq_i4_hi(s[i]) * sc;
            }
        }
        break;
    }
    default: break;
    }
}

ROTQ_CPU_CLONES
static void dequantize_rows(const rotq_quant_params *p, const rotq_matrix *q, const float *scales,
                            const rotq_matrix *y, const float *lut, int64_t begin, int64_t end, float *row) {
    const int64_t cols = y->cols;
    const int64_t scales_per_row =
        p->kind == ROTQ_QUANT_INT4_GROUP ? cols / p->group_size : (p->kind == ROTQ_QUANT_FP8_TENSOR ? 0 : 1);
    const int qbits = rotq_dtype_bits(q->dtype);
    for (int64_t r = begin; r < end; ++r) {
        decode_row((const uint8_t *)q->data + r * q->stride * qbits / 8, p,
                   scales ? scales + r * scales_per_row : NULL, lut, cols, row);
        store_row(row, 1.0f, y->dtype, y->data, r * y->stride, cols); /* v * 1 is exact */
    }
}

rotq_status rotq__cpu_dequantize(const rotq_exec *exec, const rotq_quant_params *p, const rotq_matrix *q,
                                 const float *scales, const rotq_matrix *y) {
    const int64_t rows = y->rows, cols = y->cols;
    const size_t cpad = rotq__cpu_floats_padded(cols);
    const int nt = rotq__cpu_threads(exec, rows, (double)cols * 4);
    float *scratch = rotq__cpu_scratch(cpad, nt);
    if (!scratch) return ROTQ_ERR_OUT_OF_MEMORY;
    float lut[256];
    for (int b = 0; b < 256; ++b) lut[b] = rotq_fp8_e4m3_to_f32((uint8_t)b);

#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int tid = omp_get_thread_num();
        int64_t begin, end;
        rotq__cpu_share(rows, tid, omp_get_num_threads(), &begin, &end);
        dequantize_rows(p, q, scales, y, lut, begin, end, scratch + cpad * (size_t)tid);
    }
#else
    dequantize_rows(p, q, scales, y, lut, 0, rows, scratch);
#endif

    rotq__cpu_free(scratch);
    return ROTQ_OK;
}
