/*
 * rotq_dequantize: y = value(q) * scale in float, then converted to y's dtype by
 * formats.h. That is one correctly rounded float product and one RNE conversion,
 * so the result is compared bit for bit (NaN codes must give NaN). Two modes:
 * random codes and scales; and a round trip x -> rotq_quantize -> rotq_dequantize
 * on the backend, which must equal the exact reference chain and stay within the
 * format's rounding bound of x.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "data.h"
#include "formats.h"
#include "ref.h"
#include "rng.h"

typedef struct deq_case {
    rotq_quant_kind kind;
    int32_t group;
    float static_scale;
    rotq_dtype dout;
    rotq_dtype din; /* round trip only: the dtype of x */
    int roundtrip;
    int64_t rows, cols, qs, ys;
    int offset, variant;
} deq_case;

static const char *kind_name(rotq_quant_kind k) {
    static const char *names[] = {"int8_row", "fp8_row", "fp8_tensor", "int4_group"};
    return (unsigned)k < 4 ? names[k] : "?";
}

static void case_name(const deq_case *q, char *buf, size_t n) {
    snprintf(buf, n, "dequantize %s group=%d static=%g %s%s%s out=%s rows=%lld cols=%lld qs=%lld ys=%lld off=%d v=%d",
             kind_name(q->kind), q->group, (double)q->static_scale, q->roundtrip ? "roundtrip in=" : "random-codes",
             q->roundtrip ? rotq_dtype_name(q->din) : "", "", rotq_dtype_name(q->dout), (long long)q->rows,
             (long long)q->cols, (long long)q->qs, (long long)q->ys, q->offset, q->variant);
}

typedef struct deq_data {
    rotq_quant_params p;
    rotq_dtype qdt;
    int64_t ngroups, group;
    size_t qbytes, sbytes, ybytes, xbytes;
    unsigned char *q, *y0, *x; /* q: codes (random mode); x: input (round trip) */
    float *scales;             /* reference scales (both modes) */
    unsigned char *yref;       /* reference output, same layout as y */
    double *xv;                /* round trip: the input values, rows*cols */
} deq_data;

static void data_free(deq_data *d) {
    free(d->q), free(d->y0), free(d->x), free(d->scales), free(d->yref), free(d->xv);
}

static int data_make(const deq_case *dc, uint64_t seed, deq_data *d, ck_result *res) {
    memset(d, 0, sizeof *d);
    ck_rng g;
    ck_rng_seed(&g, seed);
    int64_t rows = dc->rows, cols = dc->cols;
    d->p.kind = dc->kind, d->p.group_size = dc->group, d->p.static_scale = dc->static_scale;
    d->qdt = ck_quant_qdtype(dc->kind);
    d->group = ck_quant_group(&d->p, cols);
    d->ngroups = d->group ? cols / d->group : 0;
    d->qbytes = ck_matrix_bytes(d->qdt, rows, dc->qs);
    d->sbytes = sizeof(float) * (size_t)(rows * d->ngroups);
    d->ybytes = ck_matrix_bytes(dc->dout, rows, dc->ys);
    d->xbytes = dc->roundtrip ? ck_matrix_bytes(dc->din, rows, cols) : 0;
    d->q = malloc(d->qbytes), d->y0 = malloc(d->ybytes), d->yref = malloc(d->ybytes);
    d->scales = malloc(d->sbytes + 1), d->x = malloc(d->xbytes + 1);
    d->xv = malloc(sizeof(double) * (size_t)(rows * cols));
    float *f = malloc(sizeof(float) * (size_t)cols);
    uint32_t *codes = malloc(sizeof(uint32_t) * (size_t)cols);
    if (!d->q || !d->y0 || !d->yref || !d->scales || !d->x || !d->xv || !f || !codes) {
        free(f), free(codes);
        ck_fail(res, "host allocation failed");
        return -1;
    }
    ck_poison(d->q, d->qdt, d->qbytes);
    ck_poison(d->y0, dc->dout, d->ybytes);
    int64_t G = d->group ? d->group : cols;
    for (int64_t i = 0; i < rows; i++) {
        if (dc->roundtrip) {
            for (int64_t j = 0; j < cols; j++) {
                ck_set(d->x, dc->din, i * cols + j, ck_rng_activation(&g));
                d->xv[i * cols + j] = ck_get(d->x, dc->din, i * cols + j);
                f[j] = (float)d->xv[i * cols + j];
            }
            for (int64_t g0 = 0; g0 < cols; g0 += G) {
                float sc = 0;
                ck_ref_quant_f32(dc->kind, dc->static_scale, f + g0, G, codes + g0, &sc, NULL);
                if (d->group) d->scales[i * d->ngroups + g0 / G] = sc;
            }
        } else {
            for (int64_t j = 0; j < cols; j++) codes[j] = (uint32_t)ck_rng_u64(&g) & (d->qdt == ROTQ_DTYPE_I4X2 ? 0xfu : 0xffu);
            for (int64_t gi = 0; gi < d->ngroups; gi++)
                d->scales[i * d->ngroups + gi] =
                    (ck_rng_u64(&g) & 7) == 0 ? 0.0f : (float)ldexp(1.0 + ck_rng_uniform(&g), (int)ck_rng_below(&g, 15) - 10);
        }
        for (int64_t j = 0; j < cols; j++) {
            if (!dc->roundtrip) ck_set(d->q, d->qdt, i * dc->qs + j, ck_quant_code_value(dc->kind, codes[j]));
            if (!dc->roundtrip && d->qdt == ROTQ_DTYPE_FP8_E4M3) d->q[i * dc->qs + j] = (unsigned char)codes[j];
            float sc = d->group ? d->scales[i * d->ngroups + j / G] : dc->static_scale;
            ck_set(d->yref, dc->dout, i * dc->ys + j, (double)ck_ref_dequant(dc->kind, codes[j], sc));
        }
    }
    /* the reference's padding is the poison the op must leave alone */
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = cols; j < dc->ys; j++) {
            size_t es = ck_dtype_bytes(dc->dout, 1);
            memcpy(d->yref + (size_t)(i * dc->ys + j) * es, d->y0 + (size_t)(i * dc->ys + j) * es, es);
        }
    free(f), free(codes);
    return 0;
}

static int is_nan_code(rotq_dtype dt, uint32_t c) {
    return dt == ROTQ_DTYPE_F32 ? rotq_is_nan(rotq_f32_from_bits(c))
         : dt == ROTQ_DTYPE_F16 ? ((c & 0x7c00u) == 0x7c00u && (c & 0x3ffu))
                                : ((c & 0x7f80u) == 0x7f80u && (c & 0x7fu));
}

static void run_backend(const deq_case *dc, const deq_data *d, rotq_backend b, ck_result *res) {
    int64_t rows = dc->rows, cols = dc->cols;
    ck_buf bq = {0}, bs = {0}, by = {0}, bx = {0};
    unsigned char *y = malloc(d->ybytes), *q = malloc(d->qbytes);
    float *s = malloc(d->sbytes + 1);
    struct CUstream_st *stream = ck_stream_create(b, dc->variant & 1);
    rotq_exec e = ck_exec(b, dc->variant, stream);
    rotq_quant_params p = d->p;
    if (!y || !q || !s) {
        ck_fail(res, "host allocation failed");
        goto done;
    }
    if (ck_buf_alloc(&bq, b, d->qbytes, (size_t)dc->offset) || ck_buf_upload(&bq, d->q, d->qbytes) ||
        (d->sbytes && (ck_buf_alloc(&bs, b, d->sbytes, 0) || ck_buf_upload(&bs, d->scales, d->sbytes))) ||
        ck_buf_alloc(&by, b, d->ybytes, (size_t)dc->offset * ck_dtype_bytes(dc->dout, 1)) ||
        ck_buf_upload(&by, d->y0, d->ybytes) ||
        (dc->roundtrip && (ck_buf_alloc(&bx, b, d->xbytes, 0) || ck_buf_upload(&bx, d->x, d->xbytes)))) {
        ck_fail(res, "backend memory: %s", ck_buf_error());
        goto done;
    }
    rotq_matrix mq = {bq.data, d->qdt, rows, cols, dc->qs};
    rotq_matrix my = {by.data, dc->dout, rows, cols, dc->ys};
    rotq_status st;
    if (dc->roundtrip) {
        rotq_matrix mx = {bx.data, dc->din, rows, cols, cols};
        st = rotq_quantize(&e, &p, &mx, &mq, d->sbytes ? (float *)bs.data : NULL, NULL);
        if (st != ROTQ_OK && st != ROTQ_ERR_NOT_SUPPORTED) {
            ck_fail(res, "rotq_quantize (round trip) returned %s", rotq_status_name(st));
            goto done;
        }
        if (st == ROTQ_OK) st = rotq_dequantize(&e, &p, &mq, d->sbytes ? (const float *)bs.data : NULL, &my);
    } else {
        st = rotq_dequantize(&e, &p, &mq, d->sbytes ? (const float *)bs.data : NULL, &my);
    }
    if (st == ROTQ_ERR_NOT_SUPPORTED) {
        ck_skip(res, "not supported on this backend");
        goto done;
    }
    if (st != ROTQ_OK) {
        ck_fail(res, "rotq_dequantize returned %s (%s)", rotq_status_name(st), rotq_status_string(st));
        goto done;
    }
    if (ck_backend_sync(b, stream) || ck_buf_download(&by, y, d->ybytes) || ck_buf_download(&bq, q, d->qbytes) ||
        (d->sbytes && ck_buf_download(&bs, s, d->sbytes))) {
        ck_fail(res, "after the call: %s", ck_buf_error());
        goto done;
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < dc->ys; j++) {
            int64_t k = i * dc->ys + j;
            uint32_t cg = ck_code(y, dc->dout, k), cr = ck_code(d->yref, dc->dout, k);
            int same = cg == cr || (j < cols && is_nan_code(dc->dout, cg) && is_nan_code(dc->dout, cr));
            if (!same && bad++ == 0) {
                int64_t G = d->group ? d->group : cols;
                ck_fail(res, "%s at row %lld col %lld: got %.9g (0x%x), expected %.9g (0x%x); code 0x%x, scale %.9g",
                        j < cols ? "value" : "padding written", (long long)i, (long long)j, ck_get(y, dc->dout, k), cg,
                        ck_get(d->yref, dc->dout, k), cr, j < cols ? ck_code(q, d->qdt, i * dc->qs + j) : 0,
                        j < cols ? (d->group ? (double)s[i * d->ngroups + j / G] : (double)dc->static_scale) : 0.0);
            }
        }
    if (bad > 1) ck_fail(res, "%lld values differ", (long long)bad);
    if (!dc->roundtrip && (memcmp(q, d->q, d->qbytes) != 0 || (d->sbytes && memcmp(s, d->scales, d->sbytes) != 0)))
        ck_fail(res, "an input (q or scales) was modified");
    if (dc->roundtrip) { /* |y - x| within the format's bound: half a step times the scale, plus y's rounding */
        double uo = ck_unit_roundoff(dc->dout), worst = 0;
        int64_t G = d->group ? d->group : cols;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                double x = d->xv[i * cols + j], yv = ck_get(y, dc->dout, i * dc->ys + j);
                double sc = d->group ? (double)s[i * d->ngroups + j / G] : (double)dc->static_scale;
                double step = ck_quant_is_fp8(dc->kind) ? fmax(fabs(x) * 0x1p-4, 0x1p-10 * sc) : 0.5 * sc;
                if (dc->kind == ROTQ_QUANT_FP8_TENSOR && fabs(x) > 448.0 * sc) step = fabs(x) - 448.0 * sc;
                /* (1 + 2^-12): the float rounding of x*inv (u|s|) and scale*inv != 1 (2u|s|)
                   add at most 6*QMAX*u = 762u (int8) or 48u (fp8) of the half step */
                double lim = step * (1 + 0x1p-12) + uo * fabs(yv);
                worst = fmax(worst, fabs(yv - x) / lim);
                if (!(fabs(yv - x) <= lim)) {
                    ck_fail(res, "round trip beyond the format bound at row %lld col %lld: x %.9g, y %.9g, bound %.3e",
                            (long long)i, (long long)j, x, yv, lim);
                    i = rows;
                    break;
                }
            }
        ck_note(res, "round trip: worst |y - x| / bound = %.3f", worst);
    }
done:
    ck_stream_free(b, stream);
    ck_buf_free(&bq), ck_buf_free(&bs), ck_buf_free(&by), ck_buf_free(&bx);
    free(y), free(q), free(s);
}

static void run_case(ck_ctx *c, deq_case dc) {
    char name[320];
    uint64_t seed;
    dc.variant = (int)(c->case_index % 6);
    case_name(&dc, name, sizeof name);
    if (!ck_case_begin(c, name, &seed)) return;
    deq_data d;
    int made = 0;
    ck_result prep = {0};
    for (int b = 0; b < ROTQ_BACKEND_COUNT; b++) {
        if (!ck_backend_begin(c, (rotq_backend)b, name)) continue;
        if (!made) made = data_make(&dc, seed, &d, &prep) == 0 ? 1 : -1;
        ck_result r = prep;
        if (made > 0) run_backend(&dc, &d, (rotq_backend)b, &r);
        ck_report(c, (rotq_backend)b, name, &r);
    }
    if (made) data_free(&d);
}

static deq_case base(rotq_quant_kind kind, int32_t group, rotq_dtype dout, int64_t rows, int64_t cols) {
    deq_case q;
    memset(&q, 0, sizeof q);
    q.kind = kind;
    q.group = kind == ROTQ_QUANT_INT4_GROUP ? group : 0;
    q.static_scale = kind == ROTQ_QUANT_FP8_TENSOR ? 0.0123f : 0.0f;
    q.dout = dout;
    q.din = ROTQ_DTYPE_F32;
    q.rows = rows;
    q.cols = q.qs = q.ys = cols;
    return q;
}

void ck_op_dequantize(ck_ctx *c) {
    int full = c->opt->full;
    static const rotq_dtype dts[3] = {ROTQ_DTYPE_F32, ROTQ_DTYPE_F16, ROTQ_DTYPE_BF16};
    static const int32_t groups[3] = {32, 64, 128};
    for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++) {
        int ng = k == ROTQ_QUANT_INT4_GROUP ? 3 : 1;
        for (int gi = 0; gi < ng; gi++)
            for (int di = 0; di < 3; di++) {
                rotq_quant_kind kind = (rotq_quant_kind)k;
                if (!full && di != (k + gi) % 3) continue;
                run_case(c, base(kind, groups[gi], dts[di], 5, 256));
                deq_case q = base(kind, groups[gi], dts[di], 4, 128);
                q.roundtrip = 1, q.din = dts[(di + 1) % 3];
                run_case(c, q);
                if (!full) continue;
                q = base(kind, groups[gi], dts[di], 7, 384);
                q.qs = 384 + 6, q.ys = 384 + 3, q.offset = 1;
                run_case(c, q);
                run_case(c, base(kind, groups[gi], dts[di], 1, 128));
                q = base(kind, groups[gi], dts[di], 33, 4096);
                q.roundtrip = 1, q.din = dts[di];
                run_case(c, q);
            }
    }
}
