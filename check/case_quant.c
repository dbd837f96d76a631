/*
 * rotq_quantize against the references of ref_quant.c.
 *
 * Without a rotation the backend and the reference see the same float inputs, so
 * codes, scales and row sums must be bit-identical to formats.h evaluated in float.
 * With a rotation the rotated row is computed in double; the backend's float32
 * row differs from it by at most eps_i = 2 E(K, m) * max|r| over the element's
 * block (E from compare.c). Carried through the quantizer that gives, for each
 * element, a bound delta_i on how far the backend's scaled value v*inv can be from
 * the reference's s_i = r_i * inv_ref:
 *     rho     = eps_group / absmax_group + 2u   (relative change of absmax, hence of
 *                                                scale and inv; 2u: the float
 *                                                rounding of absmax and the division)
 *     delta_i = eps_i * inv + |s_i| * (rho + 3u) (3u: the product and (float)s_i)
 * Then: scales agree within rho relative; a code may differ from the reference
 * only where a value within delta_i of s_i rounds to it (the edge of its rounding
 * interval on the reference's side lies within delta_i of s_i: one step across a
 * boundary, or more where the steps are finer than delta_i, as fp8's near zero);
 * every code must be within the format's rounding bound of s_i (half a step, plus
 * delta_i); row sums must equal the sum of the codes written.
 * Rotated special rows (NaN / Inf inputs): an output is non-finite in float
 * exactly where it is in double (each output sums every input of its block once,
 * with signs +-1, so +Inf meets -Inf in some partial sum iff it does in the
 * total), and the codes of non-finite values follow from the rules alone (NaN
 * -> 0 / 0x7f, +-Inf -> +-QMAX, or NaN -> 0 / 0x7f again where inv is 0): those
 * codes must be identical.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "data.h"
#include "formats.h"
#include "ref.h"
#include "rng.h"

typedef struct quant_case {
    rotq_quant_kind kind;
    int32_t group;
    float static_scale;
    int rotate; /* 0: none; 1: rotation of size rsize with rfactor/rflags/rsigns */
    int32_t rsize, rfactor;
    uint32_t rflags;
    int rsigns;
    rotq_dtype din;
    int64_t rows, cols, xs, qs;
    int special;  /* rows of NaN, Inf, zeros, huge and tiny values: 1 exact (no rotation), 2 rotated */
    int32_t special_cols; /* > 0: the special type also steps every special_cols columns */
    float rscale; /* rotation scale; 0: the default 1/sqrt(n) */
    int row_sums; /* INT8_ROW: ask for row sums */
    int offset;   /* elements into the allocations */
    int variant;
    int ws;       /* CUDA workspace: 1 the call takes the two-step path (the workspace
                     protocol, workspace.c), -1 it needs none (the query must say 0),
                     0 not asserted; on the CPU the query must say 0 for every case */
} quant_case;

static const char *kind_name(rotq_quant_kind k) {
    static const char *names[] = {"int8_row", "fp8_row", "fp8_tensor", "int4_group"};
    return (unsigned)k < 4 ? names[k] : "?";
}

static void case_name(const quant_case *q, char *buf, size_t n) {
    char rot[128] = "rotate=none", rs[48] = "", sc[32] = "";
    if (q->special_cols > 0) snprintf(sc, sizeof sc, "/cols%d", q->special_cols);
    if (q->rscale != 0.0f) snprintf(rs, sizeof rs, "/scale%g", (double)q->rscale);
    if (q->rotate)
        snprintf(rot, sizeof rot, "rotate=n%d/factor%d%s/signs%d%s", q->rsize, q->rfactor,
                 (q->rflags & ROTQ_HADAMARD_TRANSPOSE_FACTOR) ? "^T" : "", q->rsigns, rs);
    char ws[32] = "";
    if (q->ws) snprintf(ws, sizeof ws, " workspace=%s", q->ws > 0 ? "fallback" : "none");
    snprintf(buf, n,
             "quantize %s group=%d static=%g %s in=%s rows=%lld cols=%lld xs=%lld qs=%lld special=%d%s"
             " row_sums=%d off=%d v=%d%s",
             kind_name(q->kind), q->group, (double)q->static_scale, rot, rotq_dtype_name(q->din),
             (long long)q->rows, (long long)q->cols, (long long)q->xs, (long long)q->qs, q->special, sc, q->row_sums,
             q->offset, q->variant, ws);
}

/* ---- inputs ---- */

/* A value for special type t (special_type): 0 normal, 1 zeros, 2 some NaN, 3 some
   +-Inf, 4 only non-finite, 5 huge, 6 tiny. rotated: magnitudes for a rotation: huge rows
   cannot overflow float in the transform (n <= 4096), and tiny f32 / bf16 rows
   stay far below the flush threshold after it (every row of type 6 gets scale 0). */
static double special_value(ck_rng *g, int t, rotq_dtype dt, int rotated) {
    double v = ck_rng_activation(g);
    int one_in_8 = (ck_rng_u64(g) & 7) == 0;
    double big = dt == ROTQ_DTYPE_F16 ? 6000.0 : 3e37, tiny = dt == ROTQ_DTYPE_F16 ? 1e-6 : 1e-38;
    if (rotated) {
        big = dt == ROTQ_DTYPE_F16 ? 1000.0 : 1e30;
        tiny = dt == ROTQ_DTYPE_F16 ? 1e-6 : dt == ROTQ_DTYPE_BF16 ? 1e-40 : 1e-42;
    }
    switch (t) {
    case 1: return (ck_rng_u64(g) & 1) ? 0.0 : -0.0;
    case 2: return one_in_8 ? NAN : v;
    case 3: return one_in_8 ? (v < 0 ? -INFINITY : INFINITY) : v;
    case 4: return one_in_8 ? NAN : (v < 0 ? -INFINITY : INFINITY);
    case 5: return v * big;
    case 6: return one_in_8 ? 0.0 : v * tiny;
    default: return v;
    }
}

/* Special type of element (i, j): per row, and per column block when special_cols
   is set (then groups and rotation blocks of one row see different types). */
static int special_type(const quant_case *q, int64_t i, int64_t j) {
    return (int)((i + (q->special_cols > 0 ? j / q->special_cols : 0)) % 7);
}

typedef struct quant_data {
    rotq_quant_params p;
    rotq_hadamard_params rp;
    rotq_dtype qdt;
    int64_t ngroups, group; /* scales per row, elements per scale (0: none) */
    size_t xbytes, qbytes, sbytes, rbytes;
    unsigned char *x, *q0;
    int8_t *signs;
    /* reference */
    uint32_t *codes;   /* rows*cols */
    double *s;         /* rows*cols scaled values (rotated mode) */
    double *delta;     /* rows*cols allowed deviation of the scaled value (rotated mode) */
    float *scales;     /* rows*ngroups */
    double *rho;       /* rows*ngroups relative scale tolerance (rotated mode) */
    int32_t *sums;     /* rows */
    double *r;         /* rows*cols reference values before quantization (double) */
} quant_data;

static void data_free(quant_data *d) {
    free(d->x), free(d->q0), free(d->signs), free(d->codes), free(d->s), free(d->delta);
    free(d->scales), free(d->rho), free(d->sums), free(d->r);
}

/* Reference for one row in rotated mode: eps per element from its block, then per group. */
static void ref_row_rotated(const quant_case *qc, quant_data *d, const ck_had_ref *h, int64_t i) {
    int64_t cols = qc->cols, G = d->group ? d->group : cols;
    double *r = d->r + i * cols, *s = d->s + i * cols, *delta = d->delta + i * cols;
    double e = 2.0 * ck_had_compute_err(h->k, h->m);
    for (int64_t b = 0; b < cols; b += h->size) { /* eps_i, stored in delta for now */
        double mx = 0;
        for (int64_t j = b; j < b + h->size; j++) mx = fmax(mx, fabs(r[j]));
        for (int64_t j = b; j < b + h->size; j++) delta[j] = e * mx;
    }
    for (int64_t g0 = 0, gi = 0; g0 < cols; g0 += G, gi++) {
        float scale = 0, inv = 0;
        ck_ref_quant_f64(qc->kind, qc->static_scale, r + g0, G, d->codes + i * cols + g0, s + g0,
                         d->group ? &scale : NULL, &inv);
        double absmax = 0, epsmax = 0; /* over the finite values, as the scale is */
        for (int64_t j = g0; j < g0 + G; j++)
            if (isfinite(r[j])) absmax = fmax(absmax, fabs(r[j])), epsmax = fmax(epsmax, delta[j]);
        double rho = qc->kind == ROTQ_QUANT_FP8_TENSOR ? 0.0 : (absmax > 0 ? epsmax / absmax : 0.0) + 0x1p-23;
        for (int64_t j = g0; j < g0 + G; j++) delta[j] = delta[j] * inv + fabs(s[j]) * (rho + 3 * 0x1p-24);
        if (d->group) d->scales[i * d->ngroups + gi] = scale, d->rho[i * d->ngroups + gi] = rho;
    }
}

static void ref_row_exact(const quant_case *qc, quant_data *d, const float *f, int64_t i) {
    int64_t cols = qc->cols, G = d->group ? d->group : cols;
    for (int64_t g0 = 0, gi = 0; g0 < cols; g0 += G, gi++) {
        float scale = 0;
        ck_ref_quant_f32(qc->kind, qc->static_scale, f + g0, G, d->codes + i * cols + g0, d->group ? &scale : NULL,
                         NULL);
        if (d->group) d->scales[i * d->ngroups + gi] = scale;
    }
}

static int data_make(const quant_case *qc, uint64_t seed, quant_data *d, ck_result *res) {
    memset(d, 0, sizeof *d);
    ck_rng g;
    ck_rng_seed(&g, seed);
    int64_t rows = qc->rows, cols = qc->cols, n = rows * cols;
    d->p.kind = qc->kind;
    d->p.group_size = qc->group;
    d->p.static_scale = qc->static_scale;
    d->qdt = ck_quant_qdtype(qc->kind);
    d->group = ck_quant_group(&d->p, cols);
    d->ngroups = d->group ? cols / d->group : 0;
    if (d->group && cols % d->group) {
        ck_fail(res, "table error: group %lld does not divide cols", (long long)d->group);
        return -1;
    }
    d->xbytes = ck_matrix_bytes(qc->din, rows, qc->xs);
    d->qbytes = ck_matrix_bytes(d->qdt, rows, qc->qs);
    d->sbytes = sizeof(float) * (size_t)(rows * d->ngroups);
    d->rbytes = qc->row_sums ? sizeof(int32_t) * (size_t)rows : 0;
    d->x = malloc(d->xbytes), d->q0 = malloc(d->qbytes);
    d->codes = malloc(sizeof(uint32_t) * (size_t)n), d->r = malloc(sizeof(double) * (size_t)n);
    d->scales = malloc(d->sbytes + 1), d->sums = malloc(sizeof(int32_t) * (size_t)rows);
    if (qc->rotate) {
        d->s = malloc(sizeof(double) * (size_t)n), d->delta = malloc(sizeof(double) * (size_t)n);
        d->rho = malloc(sizeof(double) * (size_t)(rows * d->ngroups + 1));
        if (qc->rsigns) d->signs = malloc((size_t)cols);
    }
    float *f = malloc(sizeof(float) * (size_t)cols);
    if (!d->x || !d->q0 || !d->codes || !d->r || !d->scales || !d->sums || !f ||
        (qc->rotate && (!d->s || !d->delta || !d->rho || (qc->rsigns && !d->signs)))) {
        free(f);
        ck_fail(res, "host allocation failed");
        return -1;
    }
    ck_poison(d->x, qc->din, d->xbytes);
    ck_poison(d->q0, d->qdt, d->qbytes);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            ck_set(d->x, qc->din, i * qc->xs + j,
                   qc->special ? special_value(&g, special_type(qc, i, j), qc->din, qc->special == 2)
                               : ck_rng_activation(&g));
    for (int64_t j = 0; d->signs && j < cols; j++) d->signs[j] = (int8_t)ck_rng_u64(&g);

    ck_had_ref h;
    memset(&h, 0, sizeof h);
    if (qc->rotate) {
        d->rp = rotq_hadamard_params_default(qc->rsize);
        d->rp.factor = qc->rfactor;
        d->rp.flags = qc->rflags;
        if (qc->rscale != 0.0f) d->rp.scale = qc->rscale;
        if (ck_had_ref_init(&h, &d->rp, d->signs) != 0) {
            free(f);
            ck_fail(res, "reference: no construction for the rotation (table error)");
            return -1;
        }
    }
    for (int64_t i = 0; i < rows; i++) {
        double *r = d->r + i * cols;
        for (int64_t j = 0; j < cols; j++) r[j] = ck_get(d->x, qc->din, i * qc->xs + j), f[j] = (float)r[j];
        if (qc->rotate) {
            ck_ref_hadamard_row(&h, cols, r, r);
            ref_row_rotated(qc, d, &h, i);
        } else {
            ref_row_exact(qc, d, f, i);
        }
        int32_t sum = 0;
        for (int64_t j = 0; j < cols; j++) sum += (int32_t)ck_quant_code_value(qc->kind, d->codes[i * cols + j]);
        d->sums[i] = sum;
    }
    ck_had_ref_free(&h);
    free(f);
    return 0;
}

/* ---- comparison ---- */

/* Half the distance between adjacent codes around scaled value s, plus how far
   s lies beyond the largest code: the format's rounding bound at s. */
static double format_bound(rotq_quant_kind kind, double s) {
    double a = fabs(s);
    if (!ck_quant_is_fp8(kind)) {
        double qmax = ck_quant_qmax(kind);
        return 0.5 + (a > qmax ? a - qmax : 0.0);
    }
    if (a >= ROTQ_FP8_E4M3_MAX) return a - ROTQ_FP8_E4M3_MAX;
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): leading bit 2^(e-1) */
    double spacing = (a < 0x1p-6) ? 0x1p-9 : ldexp(1.0, e - 1 - 3);
    return 0.5 * spacing;
}

static void compare_rotated(const quant_case *qc, const quant_data *d, const uint32_t *got, const float *gs,
                            ck_result *res) {
    int64_t rows = qc->rows, cols = qc->cols, G = d->group ? d->group : cols;
    int64_t within = 0, bad = 0, bad_bound = 0, nonfinite = 0;
    double e2 = 0, r2 = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t k = i * cols + j, gi = i * d->ngroups + j / G;
            double sref = d->s[k], dl = d->delta[k];
            double scale = qc->kind == ROTQ_QUANT_FP8_TENSOR ? (double)qc->static_scale : (double)gs[gi];
            double vb = ck_quant_code_value(qc->kind, got[k]), vr = ck_quant_code_value(qc->kind, d->codes[k]);
            double deq = vb * scale;
            if (!isfinite(d->r[k]) || !isfinite(sref) || !isfinite(dl)) { /* the exact rules (see the top) */
                nonfinite++;
                if (got[k] != d->codes[k] && bad++ == 0)
                    ck_fail(res, "code at row %lld col %lld: got 0x%x, expected 0x%x (non-finite rotated value %g,"
                            " scaled %g)", (long long)i, (long long)j, got[k], d->codes[k], d->r[k], sref);
                continue;
            }
            if (isfinite(deq)) e2 += (deq - d->r[k]) * (deq - d->r[k]), r2 += d->r[k] * d->r[k];
            if (!(vb == vr)) {
                if (ck_quant_code_within(qc->kind, got[k], d->codes[k], sref, dl)) {
                    within++;
                } else if (bad++ == 0) {
                    ck_fail(res, "code at row %lld col %lld: got 0x%x (%.9g), expected 0x%x (%.9g); reference scaled value"
                            " %.9g, allowed deviation %.3e", (long long)i, (long long)j, got[k], vb, d->codes[k], vr,
                            sref, dl);
                }
            }
            if (!(fabs(vb - sref) <= format_bound(qc->kind, sref) + dl) && bad_bound++ == 0)
                ck_fail(res, "quantization error beyond the format's bound at row %lld col %lld: code %.9g, scaled"
                        " value %.9g, bound %.3e", (long long)i, (long long)j, vb, sref, format_bound(qc->kind, sref) + dl);
        }
    if (bad > 1) ck_fail(res, "%lld codes differ beyond the allowed deviation", (long long)bad);
    ck_note(res, "rotated: %lld code(s) within the allowed deviation, %lld non-finite values coded exactly; dequantized error"
            " norm %.3e", (long long)within, (long long)nonfinite, r2 > 0 ? sqrt(e2 / r2) : 0.0);
    int64_t sbad = 0;
    for (int64_t gi = 0; gi < rows * d->ngroups; gi++) {
        double want = d->scales[gi], tol = d->rho[gi] * want;
        if (!(fabs((double)gs[gi] - want) <= tol) && sbad++ == 0)
            ck_fail(res, "scale %lld (row %lld group %lld): got %.9g, expected %.9g (relative tol %.3e)", (long long)gi,
                    (long long)(gi / d->ngroups), (long long)(gi % d->ngroups), (double)gs[gi], want, d->rho[gi]);
    }
    if (sbad > 1) ck_fail(res, "%lld scales out of tolerance", (long long)sbad);
}

static void compare_exact(const quant_case *qc, const quant_data *d, const uint32_t *got, const float *gs,
                          ck_result *res) {
    int64_t n = qc->rows * qc->cols, bad = 0;
    for (int64_t k = 0; k < n; k++)
        if (got[k] != d->codes[k] && bad++ == 0)
            ck_fail(res, "code at row %lld col %lld: got 0x%x, expected 0x%x (input %.9g; exact rules, no rotation)",
                    (long long)(k / qc->cols), (long long)(k % qc->cols), got[k], d->codes[k], d->r[k]);
    if (bad > 1) ck_fail(res, "%lld of %lld codes differ", (long long)bad, (long long)n);
    int64_t sbad = 0;
    for (int64_t gi = 0; gi < qc->rows * d->ngroups; gi++)
        if (rotq_f32_bits(gs[gi]) != rotq_f32_bits(d->scales[gi]) && sbad++ == 0)
            ck_fail(res, "scale %lld (row %lld group %lld): got %.9g (0x%08x), expected %.9g (0x%08x)", (long long)gi,
                    (long long)(gi / d->ngroups), (long long)(gi % d->ngroups), (double)gs[gi], rotq_f32_bits(gs[gi]),
                    (double)d->scales[gi], rotq_f32_bits(d->scales[gi]));
    if (sbad > 1) ck_fail(res, "%lld scales differ", (long long)sbad);
    ck_note(res, "exact mode: codes, scales and row sums must be bit-identical to formats.h in float");
}

/* The workspace protocol's view of one case on one backend (ck_ws_call). */
typedef struct quant_ws {
    const quant_data *d;
    const rotq_quant_params *p;
    const rotq_matrix *mx, *mq;
    ck_buf *bq, *bsc, *bsum;
    const unsigned char *pois_s, *pois_r;            /* initial scales and row sums */
    const unsigned char *q, *scales, *sums;          /* the pooled call's outputs */
    unsigned char *tq, *ts, *tr;                     /* downloads */
} quant_ws;

static rotq_status quant_ws_query(void *ctx, const rotq_exec *e, int one_row, size_t *bytes) {
    const quant_ws *w = ctx;
    rotq_matrix x = *w->mx, q = *w->mq;
    if (one_row) x.rows = q.rows = 1;
    return rotq_quantize_workspace_size(e, w->p, &x, &q, bytes);
}

static rotq_status quant_ws_run(void *ctx, const rotq_exec *e) {
    const quant_ws *w = ctx;
    const quant_data *d = w->d;
    if (ck_buf_upload(w->bq, d->q0, d->qbytes) || (d->sbytes && ck_buf_upload(w->bsc, w->pois_s, d->sbytes)) ||
        (d->rbytes && ck_buf_upload(w->bsum, w->pois_r, d->rbytes)))
        return ROTQ_ERR_CUDA; /* reported as an unexpected status */
    return rotq_quantize(e, w->p, w->mx, w->mq, d->sbytes ? (float *)w->bsc->data : NULL,
                         d->rbytes ? (int32_t *)w->bsum->data : NULL);
}

static void quant_ws_outputs_are(void *ctx, int pooled, ck_result *res, const char *what) {
    const quant_ws *w = ctx;
    const quant_data *d = w->d;
    if (ck_buf_download(w->bq, w->tq, d->qbytes) || (d->sbytes && ck_buf_download(w->bsc, w->ts, d->sbytes)) ||
        (d->rbytes && ck_buf_download(w->bsum, w->tr, d->rbytes))) {
        ck_fail(res, "workspace of %s: %s", what, ck_buf_error());
        return;
    }
    const char *how = pooled ? "differ from the pooled call's" : "were written by a rejected call";
    if (memcmp(w->tq, pooled ? w->q : d->q0, d->qbytes) != 0) ck_fail(res, "workspace of %s: the codes %s", what, how);
    if (d->sbytes && memcmp(w->ts, pooled ? w->scales : w->pois_s, d->sbytes) != 0)
        ck_fail(res, "workspace of %s: the scales %s", what, how);
    if (d->rbytes && memcmp(w->tr, pooled ? w->sums : w->pois_r, d->rbytes) != 0)
        ck_fail(res, "workspace of %s: the row sums %s", what, how);
}

/* The workspace query on every backend, and the workspace protocol on CUDA for
   the cases that take the two-step path (qc->ws > 0). */
static void check_workspace(const quant_case *qc, quant_ws *w, rotq_backend b, struct CUstream_st *stream,
                            const rotq_exec *ex, ck_result *res) {
    size_t bytes = 12345;
    rotq_status st = rotq_quantize_workspace_size(ex, w->p, w->mx, w->mq, &bytes);
    if (st != ROTQ_OK) {
        ck_fail(res, "rotq_quantize_workspace_size returned %s", rotq_status_name(st));
        return;
    }
    if ((b == ROTQ_BACKEND_CPU || qc->ws < 0) && bytes != 0)
        ck_fail(res, "rotq_quantize_workspace_size: %zu bytes, expected 0 (%s)", bytes,
                b == ROTQ_BACKEND_CPU ? "the CPU backend needs none" : "a fused path");
    if (b != ROTQ_BACKEND_CUDA || qc->ws <= 0) return;
    const ck_ws_call call = {w, quant_ws_query, quant_ws_run, quant_ws_outputs_are};
    ck_workspace_protocol(&call, b, stream, ex, res);
}

static void run_backend(const quant_case *qc, const quant_data *d, rotq_backend b, ck_result *res) {
    int64_t rows = qc->rows, cols = qc->cols;
    ck_buf bx = {0}, bq = {0}, bsc = {0}, bsum = {0}, bsg = {0};
    unsigned char *x = malloc(d->xbytes), *q = malloc(d->qbytes);
    float *gs = malloc(d->sbytes + 1);
    int32_t *gsum = malloc(sizeof(int32_t) * (size_t)rows);
    uint32_t *got = malloc(sizeof(uint32_t) * (size_t)(rows * cols));
    unsigned char *pois_s = malloc(d->sbytes + 1), *pois_r = malloc(d->rbytes + 1);
    struct CUstream_st *stream = ck_stream_create(b, qc->variant & 1);
    if (!x || !q || !gs || !gsum || !got || !pois_s || !pois_r) {
        ck_fail(res, "host allocation failed");
        goto done;
    }
    ck_poison(pois_s, ROTQ_DTYPE_F32, d->sbytes);
    memset(pois_r, CK_POISON_BYTE, d->rbytes);
    size_t ex = ck_dtype_bytes(qc->din, 1);
    if (ck_buf_alloc(&bx, b, d->xbytes, (size_t)qc->offset * ex) || ck_buf_upload(&bx, d->x, d->xbytes) ||
        ck_buf_alloc(&bq, b, d->qbytes, (size_t)qc->offset) || ck_buf_upload(&bq, d->q0, d->qbytes) ||
        (d->sbytes && (ck_buf_alloc(&bsc, b, d->sbytes, 0) || ck_buf_upload(&bsc, pois_s, d->sbytes))) ||
        (d->rbytes && (ck_buf_alloc(&bsum, b, d->rbytes, 0) || ck_buf_upload(&bsum, pois_r, d->rbytes))) ||
        (d->signs && (ck_buf_alloc(&bsg, b, (size_t)cols, 0) || ck_buf_upload(&bsg, d->signs, (size_t)cols)))) {
        ck_fail(res, "backend memory: %s", ck_buf_error());
        goto done;
    }
    rotq_quant_params p = d->p;
    rotq_hadamard_params rp = d->rp;
    rp.signs = d->signs ? (const int8_t *)bsg.data : NULL;
    p.rotate = qc->rotate ? &rp : NULL;
    rotq_matrix mx = {bx.data, qc->din, rows, cols, qc->xs};
    rotq_matrix mq = {bq.data, d->qdt, rows, cols, qc->qs};
    rotq_exec e = ck_exec(b, qc->variant, stream);
    rotq_status st = rotq_quantize(&e, &p, &mx, &mq, d->sbytes ? (float *)bsc.data : NULL,
                                   d->rbytes ? (int32_t *)bsum.data : NULL);
    if (st == ROTQ_ERR_NOT_SUPPORTED) {
        ck_skip(res, "not supported on this backend");
        goto done;
    }
    if (st != ROTQ_OK) {
        ck_fail(res, "rotq_quantize returned %s (%s)", rotq_status_name(st), rotq_status_string(st));
        goto done;
    }
    if (ck_backend_sync(b, stream) || ck_buf_download(&bx, x, d->xbytes) || ck_buf_download(&bq, q, d->qbytes) ||
        (d->sbytes && ck_buf_download(&bsc, gs, d->sbytes)) || (d->rbytes && ck_buf_download(&bsum, gsum, d->rbytes))) {
        ck_fail(res, "after the call: %s", ck_buf_error());
        goto done;
    }
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) got[i * cols + j] = ck_code(q, d->qdt, i * qc->qs + j);
    if (qc->rotate) compare_rotated(qc, d, got, gs, res);
    else compare_exact(qc, d, got, gs, res);
    for (int64_t i = 0; qc->row_sums && i < rows; i++) {
        int32_t sum = 0;
        for (int64_t j = 0; j < cols; j++) sum += (int32_t)ck_quant_code_value(qc->kind, got[i * cols + j]);
        if (gsum[i] != sum || (!qc->rotate && gsum[i] != d->sums[i])) {
            ck_fail(res, "row sum %lld: got %d, sum of the codes written %d, reference %d", (long long)i, gsum[i], sum,
                    d->sums[i]);
            break;
        }
    }
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = cols; j < qc->qs; j++)
            if (ck_code(q, d->qdt, i * qc->qs + j) != ck_code(d->q0, d->qdt, i * qc->qs + j)) {
                ck_fail(res, "q padding written: row %lld col %lld", (long long)i, (long long)j);
                i = rows;
                break;
            }
    if (memcmp(x, d->x, d->xbytes) != 0) ck_fail(res, "the input x was modified");
    {
        unsigned char *tq = malloc(d->qbytes), *ts = malloc(d->sbytes + 1), *tr = malloc(d->rbytes + 1);
        if (tq && ts && tr) {
            quant_ws w = {.d = d, .p = &p, .mx = &mx, .mq = &mq, .bq = &bq, .bsc = &bsc, .bsum = &bsum,
                          .pois_s = pois_s, .pois_r = pois_r, .q = q, .scales = (const unsigned char *)gs,
                          .sums = (const unsigned char *)gsum, .tq = tq, .ts = ts, .tr = tr};
            check_workspace(qc, &w, b, stream, &e, res);
        } else {
            ck_fail(res, "host allocation failed");
        }
        free(tq), free(ts), free(tr);
    }
done:
    ck_stream_free(b, stream);
    ck_buf_free(&bx), ck_buf_free(&bq), ck_buf_free(&bsc), ck_buf_free(&bsum), ck_buf_free(&bsg);
    free(x), free(q), free(gs), free(gsum), free(got), free(pois_s), free(pois_r);
}

static void run_case(ck_ctx *c, quant_case qc) {
    char name[320];
    uint64_t seed;
    qc.variant = (int)(c->case_index % 6);
    case_name(&qc, name, sizeof name);
    if (!ck_case_begin(c, name, &seed)) return;
    quant_data d;
    int made = 0;
    ck_result prep = {0};
    for (int b = 0; b < ROTQ_BACKEND_COUNT; b++) {
        if (!ck_backend_begin(c, (rotq_backend)b, name)) continue;
        if (!made) made = data_make(&qc, seed, &d, &prep) == 0 ? 1 : -1;
        ck_result r = prep;
        if (made > 0) run_backend(&qc, &d, (rotq_backend)b, &r);
        ck_report(c, (rotq_backend)b, name, &r);
    }
    if (made) data_free(&d);
}

/* ---- the table ---- */

static quant_case base(rotq_quant_kind kind, int32_t group, rotq_dtype din, int64_t rows, int64_t cols) {
    quant_case q;
    memset(&q, 0, sizeof q);
    q.kind = kind;
    q.group = kind == ROTQ_QUANT_INT4_GROUP ? group : 0;
    q.static_scale = kind == ROTQ_QUANT_FP8_TENSOR ? 0.015625f : 0.0f;
    q.din = din;
    q.rows = rows;
    q.cols = q.xs = q.qs = cols;
    q.row_sums = kind == ROTQ_QUANT_INT8_ROW;
    return q;
}

static quant_case rotated(quant_case q, int32_t size, int32_t factor, uint32_t flags, int signs) {
    q.rotate = 1, q.rsize = size, q.rfactor = factor, q.rflags = flags, q.rsigns = signs;
    return q;
}

/* Case i of a table cycling through six kinds: int8 / fp8 per row, fp8 per tensor,
   then int4 with groups of 32, 64, 128 (*group; 0 for the others). */
static rotq_quant_kind kind_of_six(int i, int32_t *group) {
    static const int32_t g[3] = {32, 64, 128};
    const int k = i % 6;
    *group = k < 3 ? 0 : g[k - 3];
    return k < 3 ? (rotq_quant_kind)k : ROTQ_QUANT_INT4_GROUP;
}

void ck_op_quantize(ck_ctx *c) {
    int full = c->opt->full;
    quant_case q0;
    static const rotq_dtype dts[3] = {ROTQ_DTYPE_F32, ROTQ_DTYPE_F16, ROTQ_DTYPE_BF16};
    static const int32_t groups[3] = {32, 64, 128};
    for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++) {
        rotq_quant_kind kind = (rotq_quant_kind)k;
        int ng = kind == ROTQ_QUANT_INT4_GROUP ? 3 : 1;
        for (int gi = 0; gi < ng; gi++)
            for (int di = 0; di < 3; di++) {
                int32_t g = groups[gi];
                int quick = di == (k + gi) % 3;
                if (!full && !quick) continue;
                rotq_dtype din = dts[di];
                /* No rotation: exact. Contiguous, then strided with an offset. */
                run_case(c, base(kind, g, din, 5, 256));
                quant_case q = base(kind, g, din, 3, 384);
                q.xs = 384 + 3, q.qs = 384 + 2, q.offset = 1;
                if (full) run_case(c, q);
                /* NaN / Inf / zero / huge / tiny rows. */
                q = base(kind, g, din, 14, 128);
                q.special = 1;
                run_case(c, q);
                /* The same through a rotation of the whole row (the fused kernels' register
                   epilogue for int8 / fp8): n = 256, four rows per thread. */
                q = rotated(base(kind, g, din, 14, 256), 256, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1);
                q.special = 2;
                run_case(c, q);
                /* Rotation over the whole row, with signs. */
                run_case(c, rotated(base(kind, g, din, 4, 256), 256, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1));
                if (kind == ROTQ_QUANT_INT4_GROUP) {
                    /* int4 groups of one row (and of one warp) with different special types:
                       NaN / Inf groups (the slow path) next to finite, zero and tiny (flushed)
                       ones, in ragged tiles. Exact, one type per group: */
                    q = base(kind, g, din, 13, 8 * g);
                    q.special = 1, q.special_cols = g;
                    run_case(c, q);
                    /* Fused, a type per rotation block of 64 (a g128 group spans two): */
                    q = rotated(base(kind, g, din, 9, 1024), 64, ROTQ_HADAMARD_FACTOR_POW2, 0, 1);
                    q.special = 2, q.special_cols = 64;
                    run_case(c, q);
                }
                if (!full) continue;
                /* Block-diagonal rotation by a K factor, transposed, strided. */
                q = rotated(base(kind, g, din, 6, 4 * 192), 192, 12, ROTQ_HADAMARD_TRANSPOSE_FACTOR, 1);
                q.xs += 5, q.qs += 4;
                run_case(c, q);
                /* Single rows; ragged counts (QuaRot picks 40 for 5 * 2^k). */
                run_case(c, rotated(base(kind, g, din, 1, 3584), 3584, ROTQ_HADAMARD_FACTOR_AUTO, 0, di & 1));
                int32_t unit = kind == ROTQ_QUANT_INT4_GROUP ? g : 32; /* cols stay multiples of the group */
                run_case(c, base(kind, g, din, 1, 2 * unit));
                run_case(c, rotated(base(kind, g, din, 257, 5 * unit), 5 * unit, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1));
                q = base(kind, g, din, 13, 3 * unit);
                q.xs = 3 * unit + 5, q.qs = 3 * unit + 2;
                run_case(c, q);
                /* Special rows, rotated: n = 64 (16 rows per thread, a partial tile), 128
                   (scale 1/sqrt(128), not a power of two), 4096 (a row over four warps),
                   14336 = 28 * 512 (the factor kernel, whose int8 / fp8 row absmax comes
                   from its last phase; 7 rows: every special type). */
                static const int32_t special_n[4] = {64, 128, 4096, 14336};
                for (int si = 0; si < 4; si++) {
                    if (special_n[si] % unit) continue;
                    const int64_t rows = special_n[si] == 14336 ? 7 : special_n[si] == 4096 ? 9 : 14;
                    q = rotated(base(kind, g, din, rows, special_n[si]), special_n[si], ROTQ_HADAMARD_FACTOR_AUTO, 0,
                                si & 1);
                    q.special = 2;
                    run_case(c, q);
                }
            }
    }
    /* Rows past 2^17 elements at 2^12 and 2^11 (the fused tile kernel's register
       epilogue on the pair layout; special rows: the NaN / Inf path). */
    q0 = rotated(base(ROTQ_QUANT_INT4_GROUP, 64, ROTQ_DTYPE_BF16, 35, 4096), 4096, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1);
    q0.special = 2;
    run_case(c, q0);
    /* ... without signs (the int4 build at 2^12 of its own: f16 and bf16, special rows,
       and a strided input on cp.async stages). */
    {
        static const struct { int32_t group; rotq_dtype din; int64_t rows, pad; int special; } i4[3] = {
            {128, ROTQ_DTYPE_F16, 35, 0, 2}, {32, ROTQ_DTYPE_BF16, 35, 0, 2}, {64, ROTQ_DTYPE_F16, 77, 8, 0}};
        for (int i = 0; i < 3; i++) {
            q0 = rotated(base(ROTQ_QUANT_INT4_GROUP, i4[i].group, i4[i].din, i4[i].rows, 4096), 4096,
                         ROTQ_HADAMARD_FACTOR_AUTO, 0, 0);
            q0.special = i4[i].special;
            q0.xs += i4[i].pad;
            run_case(c, q0);
        }
    }
    q0 = rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_F16, 67, 2048), 2048, ROTQ_HADAMARD_FACTOR_AUTO, 0, 0);
    q0.special = 2;
    run_case(c, q0);
    q0 = rotated(base(ROTQ_QUANT_FP8_ROW, 0, ROTQ_DTYPE_BF16, 1029, 128), 128, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1);
    q0.special = 2; /* rows of 128 in the quad layout, a ragged last tile */
    run_case(c, q0);
    /* Dense inputs large enough for the fused kernel's TMA tile loads (sm_90: 1.5 tiles
       of 8192 elements per resident block for n <= 1024, 4 above): 13.5M elements at
       n = 4096, 16.8M at n = 128 (full table). */
    quant_case q =
        rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_F16, 3301, 4096), 4096, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1);
    run_case(c, q);
    if (full) {
        q = rotated(base(ROTQ_QUANT_INT4_GROUP, 128, ROTQ_DTYPE_BF16, 131075, 128), 128, ROTQ_HADAMARD_FACTOR_AUTO, 0,
                    0);
        run_case(c, q);
        /* TMA stages (at least 4 tiles a resident block: the int4 build runs 924
           blocks on an H100, the others 792) and with them the dynamic tile order,
           back to back. */
        q = rotated(base(ROTQ_QUANT_INT4_GROUP, 128, ROTQ_DTYPE_F16, 3901, 4096), 4096, ROTQ_HADAMARD_FACTOR_AUTO, 0,
                    0);
        run_case(c, q);
        q = rotated(base(ROTQ_QUANT_FP8_ROW, 0, ROTQ_DTYPE_F16, 3331, 4096), 4096, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1);
        run_case(c, q);
        q = rotated(base(ROTQ_QUANT_INT4_GROUP, 32, ROTQ_DTYPE_BF16, 2999, 4096), 4096, ROTQ_HADAMARD_FACTOR_AUTO, 0,
                    0);
        run_case(c, q);
    }
    /* The fused factor kernel with TMA stages (1001 rows of 14336: 1.5 tiles per block). */
    q = rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_F16, 1001, 14336), 14336, ROTQ_HADAMARD_FACTOR_AUTO, 0, 0);
    run_case(c, q);
    if (full) {
        q = rotated(base(ROTQ_QUANT_INT4_GROUP, 128, ROTQ_DTYPE_BF16, 1001, 11008), 11008, ROTQ_HADAMARD_FACTOR_AUTO,
                    0, 0);
        run_case(c, q);
    }
    /* The fused factor kernel with K > 64 and TMA stages: the K step on wgmma (sm_90a). */
    q = rotated(base(ROTQ_QUANT_FP8_ROW, 0, ROTQ_DTYPE_F16, 401, 13824), 13824, 108, 0, 0);
    run_case(c, q);
    /* ... with a sign vector, applied to the arrived stages. */
    q = rotated(base(ROTQ_QUANT_FP8_ROW, 0, ROTQ_DTYPE_BF16, 401, 13824), 13824, 108, 0, 1);
    run_case(c, q);
    if (full) {
        q = rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_F16, 1001, 14336), 14336, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1);
        run_case(c, q);
        q = rotated(base(ROTQ_QUANT_INT4_GROUP, 128, ROTQ_DTYPE_F16, 1001, 11008), 11008, ROTQ_HADAMARD_FACTOR_AUTO,
                    0, 1);
        run_case(c, q);
    }
    /* The fragment kernel's quantize build (sm_90: K <= 64 at 2^8 .. 2^10, 16-bit
       input by TMA): every kind and int4 group size at each 2^m and k-tile count
       class, row sums on and off, signs, the transposed factor, row counts from 1 to
       several tiles a block, special rows (the row absmax over the tile's B tasks,
       NaN / Inf codes). */
    {
        static const int32_t fk[6] = {12, 20, 28, 36, 44, 60};
        for (int i = 0; i < 12; i++) {
            const int L = 8 + i % 3, k = fk[i % 6];
            const int32_t n = k << L;
            if (n > 36 * 1024 || (!full && i % 4 != 0)) continue;
            const rotq_quant_kind kind = (rotq_quant_kind)(i % ROTQ_QUANT_KIND_COUNT);
            static const int64_t fr[4] = {1, 67, 613, 5};
            q = rotated(base(kind, groups[i % 3], i & 1 ? ROTQ_DTYPE_BF16 : ROTQ_DTYPE_F16, fr[i % 4], n), n, k,
                        i % 5 == 2 ? ROTQ_HADAMARD_TRANSPOSE_FACTOR : 0, i % 3 == 1);
            if (!full && q.rows > 67) q.rows = 67;
            if (kind == ROTQ_QUANT_INT8_ROW && i % 8 == 4) q.row_sums = 0;
            if (i % 4 == 3) q.special = 2;
            run_case(c, q);
        }
    }
    /* The fragment kernel's quantize build over several tiles a block: per-row
       int8 / fp8 (the row absmax and row-sum words and the amx mbarrier reused by
       tile parity) and int4 groups, at 2^8, 2^9 and 2^10, signs and special rows
       included; the last three with many tiles a block (2003 rows of 28 * 512 on
       two blocks an SM: 7 to 8; 6400 of 12 * 256 on three: 16). */
    if (full) {
        static const struct {
            rotq_quant_kind kind;
            int32_t group, n, k;
            rotq_dtype din;
            int64_t rows;
            int signs, special, no_row_sums;
        } frag_tiles[] = {
            {ROTQ_QUANT_FP8_ROW, 0, 14336, 28, ROTQ_DTYPE_BF16, 1001, 1, 0, 0},
            {ROTQ_QUANT_INT4_GROUP, 128, 14336, 28, ROTQ_DTYPE_F16, 1001, 0, 0, 0},
            {ROTQ_QUANT_INT4_GROUP, 64, 28672, 28, ROTQ_DTYPE_BF16, 613, 1, 2, 0},
            {ROTQ_QUANT_INT8_ROW, 0, 20480, 20, ROTQ_DTYPE_F16, 401, 0, 2, 0},
            {ROTQ_QUANT_FP8_ROW, 0, 3072, 12, ROTQ_DTYPE_F16, 1501, 0, 0, 0},
            {ROTQ_QUANT_INT8_ROW, 0, 9216, 36, ROTQ_DTYPE_BF16, 1003, 1, 0, 1},
            {ROTQ_QUANT_INT8_ROW, 0, 14336, 28, ROTQ_DTYPE_F16, 2003, 0, 0, 0},
            {ROTQ_QUANT_INT4_GROUP, 128, 14336, 28, ROTQ_DTYPE_BF16, 2003, 0, 2, 0},
            {ROTQ_QUANT_FP8_ROW, 0, 3072, 12, ROTQ_DTYPE_F16, 6400, 1, 0, 0},
        };
        for (size_t i = 0; i < sizeof frag_tiles / sizeof frag_tiles[0]; i++) {
            q = rotated(base(frag_tiles[i].kind, frag_tiles[i].group, frag_tiles[i].din, frag_tiles[i].rows,
                             frag_tiles[i].n),
                        frag_tiles[i].n, frag_tiles[i].k, 0, frag_tiles[i].signs);
            q.special = frag_tiles[i].special;
            if (frag_tiles[i].no_row_sums) q.row_sums = 0;
            run_case(c, q);
        }
    }
    /* The warpgroup kernel's quantize build (sm_90a: K > 16 at 2^6 and 2^7, one m64
       tile of H_K a warpgroup: K <= 64 one a tile, <= 128 two, 129 .. 176 three):
       every kind and int4 group size at 172 * 64, 124 * 64, 116 * 128, 108 * 128,
       40 * 128 and 28 * 64, signs,
       special rows (the tile absmax over the group's warps), row sums off, padded
       code rows (4-byte stores), rotation scales > 1 and < 0 (applied before the
       absmax), 1 row to several tiles a group (the absmax / row-sum buffers by tile
       mod 3). */
    {
        static const int32_t wk[6][2] = {{172, 64}, {124, 64}, {116, 128}, {108, 128}, {40, 128}, {28, 64}};
        static const int64_t wr[4] = {3, 1001, 67, 1};
        for (int i = 0; i < 36; i++) {
            int32_t g;
            const rotq_quant_kind kind = kind_of_six(i, &g);
            const int si = (i + i / 6) % 6; /* every kind on every size */
            const int32_t k = wk[si][0], n = wk[si][0] * wk[si][1];
            const int quick = i == 0 || i == 5 || i == 10 || i == 23 || i == 24;
            if (!full && !quick) continue;
            q = rotated(base(kind, g, (i + i / 6) & 1 ? ROTQ_DTYPE_BF16 : ROTQ_DTYPE_F16, wr[(i / 4 + i) % 4], n), n, k, 0,
                        (i / 2) & 1);
            if (!full && q.rows > 67) q.rows = 67;
            if (i % 5 == 0) q.special = 2;
            if (i % 7 == 3 || i == 7) q.qs = n + (kind == ROTQ_QUANT_INT4_GROUP ? 16 : 8); /* not 16-byte rows */
            if (i == 8) q.rscale = 3.0f;
            if (i == 13) q.rscale = -0.75f;
            if (kind == ROTQ_QUANT_INT8_ROW && i >= 12) q.row_sums = 0;
            q.ws = -1; /* fused: no workspace */
            run_case(c, q);
        }
    }
    /* Its packed row blocks (K <= 32: 2 or 4 row blocks an m64 tile, the per-row
       absmax and row sum a row block of the slot): K = 12, 20, 28 at 2^6 and 2^7,
       every kind and int4 group size, special rows (a NaN / Inf row block makes
       every packed output non-finite: the redo of the finite ones), row counts on
       both sides of a slot and several slots a group, padded code rows, rotation
       scales of every class. */
    {
        static const int32_t pk[3] = {12, 20, 28};
        static const int64_t pr[6] = {1, 2, 3, 5, 6, 613};
        for (int i = 0; i < 36; i++) {
            int32_t g;
            const rotq_quant_kind kind = kind_of_six(i, &g);
            const int32_t k = pk[(i / 6) % 3], n = k << (6 + (i / 18));
            if (!full && i % 5 != 0) continue;
            q = rotated(base(kind, g, (i + i / 6) & 1 ? ROTQ_DTYPE_BF16 : ROTQ_DTYPE_F16, pr[(i + i / 6) % 6], n), n, k, 0,
                        (i / 4) & 1);
            if (i % 3 != 1) q.special = 2;
            if (i % 7 == 3) q.qs = n + (kind == ROTQ_QUANT_INT4_GROUP ? 16 : 8); /* not 16-byte rows */
            if (i % 9 == 4) q.rscale = 3.0f;
            if (i % 9 == 7) q.rscale = -0.75f;
            if (kind == ROTQ_QUANT_INT8_ROW && i % 4 == 2) q.row_sums = 0;
            q.ws = -1; /* fused: no workspace */
            run_case(c, q);
        }
        /* int8 with row sums on every row block of a slot (5 and 613 rows), and long
           calls (full table) whose groups take several slots past their ring (the
           designated thread's row sums of the slot before, the three buffers, the
           refill), with special rows and a partial last slot (4227 = 2 * 2113 + 1,
           8451 = 4 * 2112 + 3), per row (int8, fp8) and per group. */
        static const int32_t lk[4] = {12, 28, 20, 12};
        static const int64_t lr[4] = {5, 613, 4227, 8451};
        for (int i = 0; i < 6; i++) {
            if (!full && (i >= 2 && i != 4)) continue;
            const int j = i < 4 ? i : 3;
            const rotq_quant_kind kind = i == 4 ? ROTQ_QUANT_FP8_ROW : i == 5 ? ROTQ_QUANT_INT4_GROUP : ROTQ_QUANT_INT8_ROW;
            const int32_t n = lk[j] << 7;
            q = rotated(base(kind, i == 5 ? 64 : 0, i & 1 ? ROTQ_DTYPE_BF16 : ROTQ_DTYPE_F16, !full && i == 4 ? 7 : lr[j], n),
                        n, lk[j], 0, i == 3);
            q.special = 2;
            q.ws = -1;
            run_case(c, q);
        }
    }
    /* Model-sized rotated rows, row sums off, another static scale. */
    q = rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_F16, 3, 14336), 14336, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1);
    run_case(c, q);
    q = rotated(base(ROTQ_QUANT_INT4_GROUP, 128, ROTQ_DTYPE_BF16, 3, 11008), 11008, ROTQ_HADAMARD_FACTOR_AUTO, 0, 0);
    run_case(c, q);
    /* Rows past 32768 (the fused factor kernel in column slices) and the two-block one. */
    q = rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_BF16, 3, 40960), 40960, 40, 0, 1);
    run_case(c, q);
    q = rotated(base(ROTQ_QUANT_INT4_GROUP, 64, ROTQ_DTYPE_F16, 2, 40960), 40960, 40, ROTQ_HADAMARD_TRANSPOSE_FACTOR, 0);
    run_case(c, q);
    q = rotated(base(ROTQ_QUANT_FP8_ROW, 0, ROTQ_DTYPE_F16, 5, 14336), 14336, 28, 0, 1);
    run_case(c, q);
    q = base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_F32, 9, 512);
    q.row_sums = 0;
    run_case(c, q);
    q = base(ROTQ_QUANT_FP8_TENSOR, 0, ROTQ_DTYPE_F32, 7, 320);
    q.static_scale = 0.0123f;
    run_case(c, q);
    q = rotated(q, 64, ROTQ_HADAMARD_FACTOR_POW2, 0, 1);
    run_case(c, q);
    /* Rotation scales of the other classes of the fused register epilogue: |s| > 1
       (applied before the absmax), a power of two other than 1/sqrt(n), and a
       subnormal one (every row flushes, for every input dtype). */
    static const float rscales[3] = {3.0f, 0.25f, 0x1p-140f};
    for (int k = 0; k < 3; k++)
        for (int si = 0; si < 3; si++) {
            if (!full && si != k) continue;
            q = rotated(base((rotq_quant_kind)k, 0, ROTQ_DTYPE_F16, 6, 1024), 1024, ROTQ_HADAMARD_FACTOR_POW2, 0, 1);
            q.rscale = rscales[si];
            run_case(c, q);
        }
    /* n = 2^12 .. 2^14, f16 / bf16 without signs, rows of one rotation block whose
       2^(L - 10) blocks a row fit one wave (CUDA: int4 on quantize_small_split.cuh, the
       other kinds on the one-block decode kernel): every kind and int4 group, one
       row, then 7 rows with padded strides and special rows whose type changes every
       slice of 1024 columns (slices with NaN / Inf next to finite ones), row sums
       off at 2^13; and rows on both sides of the one-wave bound (132 SMs; rows x
       2^(L - 10) blocks: 33 / 34 of 4096, 16 / 17 of 8192, 8 / 9 of 16384). */
    for (int L = 12; L <= 14; L++)
        for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++)
            for (int gi = 0; gi < 3; gi++) {
                rotq_quant_kind kind = (rotq_quant_kind)k;
                if (kind != ROTQ_QUANT_INT4_GROUP && gi > 0) continue;
                if (!full && !(L == 12 && (gi == 2 || kind != ROTQ_QUANT_INT4_GROUP))) continue;
                const int32_t n = 1 << L;
                const rotq_dtype din = dts[1 + ((L + k + gi) & 1)];
                run_case(c, rotated(base(kind, groups[gi], din, 1, n), n, ROTQ_HADAMARD_FACTOR_POW2, 0, 0));
                q = rotated(base(kind, groups[gi], din, 7, n), n, ROTQ_HADAMARD_FACTOR_POW2, 0, 0);
                q.xs = q.qs = n + 8;
                q.special = 2, q.special_cols = 1024;
                if (L == 13) q.row_sums = 0;
                run_case(c, q);
            }
    for (int L = 12; full && L <= 14; L++) {
        const int64_t r0 = 132 >> (L - 10);
        for (int64_t r = r0; r <= r0 + 1; r++) {
            run_case(c, rotated(base(ROTQ_QUANT_INT4_GROUP, L == 13 ? 128 : 64, L == 14 ? ROTQ_DTYPE_BF16 : ROTQ_DTYPE_F16,
                                     r, 1 << L),
                                1 << L, ROTQ_HADAMARD_FACTOR_POW2, 0, 0));
            /* the per-row kinds there too, with special rows (CUDA: the one-block
               decode kernel; a cluster a row was tried, perf-notes decode v19) */
            q = rotated(base(L == 13 ? ROTQ_QUANT_FP8_ROW : ROTQ_QUANT_INT8_ROW, 0,
                             L == 12 ? ROTQ_DTYPE_BF16 : ROTQ_DTYPE_F16, r, 1 << L),
                        1 << L, ROTQ_HADAMARD_FACTOR_POW2, 0, 0);
            q.special = 2, q.special_cols = 1024;
            run_case(c, q);
        }
    }
    /* Block-diagonal rotations of 128 and 4096 over rows of 8192 past the decode
       kernel: at 2^7 and 2^12 the fused tile kernel runs 128-thread blocks where a
       row fits their 4096-element tile and its 256-thread build where it does not
       (rotq_qt_small_bt); every kind at both sizes. */
    for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++)
        for (int L = 7; L <= 12; L += 5) {
            q = rotated(base((rotq_quant_kind)k, 128, dts[1 + ((k + L) & 1)], 35, 8192), 1 << L,
                        ROTQ_HADAMARD_FACTOR_POW2, 0, k & 1);
            run_case(c, q);
        }
    if (full) {
        /* Decode sizes (CUDA: the latency kernel of quantize_small.cu takes rows * cols
           <= 2^17 with cols a power of two >= 8): every n = 2^1 .. 2^15, 1 / 3 / 7 rows
           (7 * 32768 is past 2^17: the persistent kernel), signs on every other case;
           3 rows: x rows of odd stride (scalar loads), code rows padded; 7 rows: both
           strides padded, aligned. */
        static const int64_t nrows[3] = {1, 3, 7};
        for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++)
            for (int L = 1; L <= 15; L++)
                for (int ri = 0; ri < 3; ri++) {
                    rotq_quant_kind kind = (rotq_quant_kind)k;
                    int32_t n = 1 << L;
                    if (kind == ROTQ_QUANT_INT4_GROUP && n < 32) continue;
                    int32_t g = groups[(L + ri) % 3] <= n ? groups[(L + ri) % 3] : 32;
                    q = rotated(base(kind, g, dts[(L + ri + k) % 3], nrows[ri], n), n, ROTQ_HADAMARD_FACTOR_POW2, 0,
                                (L + ri) & 1);
                    if (ri == 1) q.xs = n + 1, q.qs = n + 8;
                    if (ri == 2) q.xs = q.qs = n + 16;
                    run_case(c, q);
                }
        /* Block-diagonal power-of-two rotations (n < cols; n < 8 too), then one whose
           rows are longer than the small kernel's tile of 1024 (it falls back);
           special rows at the small kernel's single-round (n = 16), 16-value (2048)
           and 32-value (16384) plans; rows past 2^17 elements for the persistent kernel. */
        static const int32_t bd[4][2] = {{256, 2}, {512, 4}, {1024, 64}, {2048, 1024}};
        static const int32_t spn[3][2] = {{16, 7}, {2048, 7}, {16384, 7}};
        for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++) {
            rotq_quant_kind kind = (rotq_quant_kind)k;
            for (int i = 0; i < 4; i++) {
                q = rotated(base(kind, 64, dts[(k + i) % 3], 3, bd[i][0]), bd[i][1], ROTQ_HADAMARD_FACTOR_POW2, 0, 1);
                q.special = i == 1 ? 2 : 0;
                run_case(c, q);
            }
            for (int i = 0; i < 3; i++) {
                if (kind == ROTQ_QUANT_INT4_GROUP && spn[i][0] < 32) continue;
                q = rotated(base(kind, 32, dts[(k + i + 1) % 3], spn[i][1], spn[i][0]), spn[i][0],
                            ROTQ_HADAMARD_FACTOR_AUTO, 0, i & 1);
                q.special = 2;
                run_case(c, q);
            }
            run_case(c, rotated(base(kind, 128, dts[k % 3], 48, 4096), 4096, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1));
            run_case(c, rotated(base(kind, 128, dts[(k + 1) % 3], 1100, 128), 128, ROTQ_HADAMARD_FACTOR_AUTO, 0, 0));
        }
        /* Signs on the fused tile kernel past 2^17 elements, read once a block: rows
           narrower than the 32 elements a thread signs (cols 16: the column wraps), and
           block-diagonal rows (the sign vector spans the row, not one block). */
        for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++) {
            rotq_quant_kind kind = (rotq_quant_kind)k;
            if (kind != ROTQ_QUANT_INT4_GROUP)
                run_case(c, rotated(base(kind, 32, dts[k % 3], 16411, 16), 16, ROTQ_HADAMARD_FACTOR_POW2, 0, 1));
            run_case(c, rotated(base(kind, 64, dts[(k + 1) % 3], 67, 4096), 256, ROTQ_HADAMARD_FACTOR_POW2, 0, 1));
        }
        /* The fused tile kernel's register epilogue at 2^11 and 2^12 (after the pair
           exchanges of rotq_pow2_pair_plan, int4 groups from registers too), rows past
           2^17 elements and ragged last tiles (4 and 2 rows a tile): special rows for
           every kind and int4 group size, then the rotation scale classes for int4. */
        for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++)
            for (int gi = 0; gi < 3; gi++) {
                rotq_quant_kind kind = (rotq_quant_kind)k;
                if (kind != ROTQ_QUANT_INT4_GROUP && gi > 0) continue;
                for (int L = 11; L <= 12; L++) {
                    q = rotated(base(kind, groups[gi], dts[(k + gi + L) % 3], L == 11 ? 67 : 35, 1 << L), 1 << L,
                                ROTQ_HADAMARD_FACTOR_AUTO, 0, (k + gi + L) & 1);
                    q.special = 2;
                    run_case(c, q);
                }
            }
        /* ... and at 2^7 (rows of 128 in the quad layout; int4 groups of 32 / 64 from W). */
        for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++)
            for (int gi = 0; gi < 3; gi++) {
                rotq_quant_kind kind = (rotq_quant_kind)k;
                if (kind != ROTQ_QUANT_INT4_GROUP && gi > 0) continue;
                q = rotated(base(kind, groups[gi], dts[(k + gi) % 3], 1100, 128), 128, ROTQ_HADAMARD_FACTOR_AUTO, 0,
                            (k + gi) & 1);
                q.special = 2;
                run_case(c, q);
                q = rotated(base(kind, groups[gi], dts[(k + gi + 1) % 3], 1027, 128), 128, ROTQ_HADAMARD_FACTOR_POW2, 0,
                            1);
                q.rscale = rscales[(k + gi) % 3];
                run_case(c, q);
            }
        for (int si = 0; si < 3; si++) {
            q = rotated(base(ROTQ_QUANT_INT4_GROUP, groups[si], ROTQ_DTYPE_F16, 35, 4096), 4096,
                        ROTQ_HADAMARD_FACTOR_POW2, 0, 1);
            q.rscale = rscales[si];
            run_case(c, q);
            /* ... and int8 / fp8 / int4 at 2^11 */
            q = rotated(base((rotq_quant_kind)(si == 2 ? ROTQ_QUANT_INT4_GROUP : si), 64, ROTQ_DTYPE_BF16, 67, 2048),
                        2048, ROTQ_HADAMARD_FACTOR_POW2, 0, si & 1);
            q.rscale = rscales[(si + 1) % 3];
            run_case(c, q);
        }
        /* The fragment kernel's quantize build (CUDA: K <= 64 at 2^8 .. 2^10, 16-bit
           input) folds rotation scales up to 1 into its multipliers and scales the
           values for larger ones: every kind and int4 group size with the scale
           classes, at 12 * 256, 28 * 512 and 20 * 1024. */
        static const int32_t fk[3][2] = {{12, 256}, {28, 512}, {20, 1024}};
        for (int k = 0; k < ROTQ_QUANT_KIND_COUNT; k++)
            for (int gi = 0; gi < 3; gi++) {
                rotq_quant_kind kind = (rotq_quant_kind)k;
                if (kind != ROTQ_QUANT_INT4_GROUP && gi > 0) continue;
                for (int i = 0; i < 3; i++) {
                    const int32_t n = fk[i][0] * fk[i][1];
                    q = rotated(base(kind, groups[gi], i & 1 ? ROTQ_DTYPE_BF16 : ROTQ_DTYPE_F16, 5 + 2 * i, n), n,
                                fk[i][0], 0, (k + i) & 1);
                    q.rscale = rscales[(k + gi + i) % 3];
                    run_case(c, q);
                }
            }
        q = rotated(base(ROTQ_QUANT_FP8_ROW, 0, ROTQ_DTYPE_F32, 2, 65536 - 4096), 61440, 60, 0, 1);
        run_case(c, q);
        q = rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_BF16, 20001, 64), 64, ROTQ_HADAMARD_FACTOR_AUTO, 0, 1);
        run_case(c, q);
    }
    /* Caller workspaces (rotq_exec.workspace; on CUDA the protocol of workspace.c).
       The two-step path: f32 input with a K * 2^m rotation; a block-diagonal K *
       2^m rotation; a rotation that itself takes two passes (52 * 1024: a second
       buffer); power-of-two blocks over rows longer than the fused kernels' shared
       memory, 17 rows (past 2^20 elements: every chunk must rotate with the
       kernel the pool's chunk does). Then calls that need none: fused rotations
       (4096; 28 * 512 in 16 bits) and no rotation. */
    q = rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_F32, 7, 14336), 14336, 28, 0, 1);
    q.ws = 1;
    run_case(c, q);
    q = rotated(base(ROTQ_QUANT_INT4_GROUP, 128, ROTQ_DTYPE_BF16, 3, 2 * 14336), 14336, 28, 0, 0);
    q.ws = 1;
    run_case(c, q);
    q = rotated(base(ROTQ_QUANT_FP8_ROW, 0, ROTQ_DTYPE_F32, 3, 53248), 53248, 52, ROTQ_HADAMARD_TRANSPOSE_FACTOR, 1);
    q.ws = 1;
    run_case(c, q);
    q = rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_F16, 17, 65536), 4096, ROTQ_HADAMARD_FACTOR_POW2, 0, 1);
    q.ws = 1;
    run_case(c, q);
    q = rotated(base(ROTQ_QUANT_INT8_ROW, 0, ROTQ_DTYPE_F16, 4, 4096), 4096, ROTQ_HADAMARD_FACTOR_POW2, 0, 1);
    q.ws = -1;
    run_case(c, q);
    q = rotated(base(ROTQ_QUANT_FP8_ROW, 0, ROTQ_DTYPE_BF16, 4, 14336), 14336, 28, 0, 0);
    q.ws = -1;
    run_case(c, q);
    q = base(ROTQ_QUANT_INT4_GROUP, 64, ROTQ_DTYPE_F32, 4, 14336);
    q.ws = -1;
    run_case(c, q);
}
