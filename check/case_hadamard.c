/*
 * rotq_hadamard against the float64 reference: the case table and the protocol
 * (fresh inputs, poisoned outputs, padding and input checks, tolerance by dtype).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "data.h"
#include "ref.h"
#include "rng.h"

typedef struct had_case {
    int32_t size, factor;
    uint32_t flags;
    int unit_scale; /* 1: scale 1; 0: 1/sqrt(size) */
    int signs;      /* a signs vector (random int8, negative flips) */
    rotq_dtype din, dout;
    int64_t rows, cols, xs, ys;
    int inplace;
    int offset;  /* data pointers (and the signs) start this many elements into their allocations */
    int variant; /* CPU thread count / CUDA stream choice */
    int nonfinite; /* 1: rows i with i % 3 == 1 hold one +Inf, i % 7 == 5 one NaN; 2: only
                      i % 11 == 3 and i % 13 == 7 (slots of four rows without any too):
                      their row blocks' outputs must be non-finite, every other row's correct */
    int ws;      /* CUDA workspace: 1 the call takes the two-pass path (the workspace
                    protocol, workspace.c), -1 it needs none (the query must say 0),
                    -2 it needs none where the fragment kernel runs (compute
                    capability 9.x and sm_90a code in the library), 0 not asserted;
                    on the CPU the query must say 0 for every case */
} had_case;

static const int32_t k_factors[] = {12, 20, 28, 36, 40, 44, 52, 60, 108, 116, 124, 140, 156, 172};
#define N_FACTORS ((int)(sizeof k_factors / sizeof k_factors[0]))

static void case_name(const had_case *h, char *buf, size_t n) {
    char f[16];
    if (h->factor == ROTQ_HADAMARD_FACTOR_AUTO) snprintf(f, sizeof f, "auto");
    else if (h->factor == ROTQ_HADAMARD_FACTOR_POW2) snprintf(f, sizeof f, "pow2");
    else snprintf(f, sizeof f, "%d", h->factor);
    char ws[32] = "";
    if (h->ws) snprintf(ws, sizeof ws, " workspace=%s", h->ws > 0 ? "fallback" : h->ws == -1 ? "none" : "none-sm90a");
    snprintf(buf, n,
             "hadamard n=%d factor=%s%s signs=%d scale=%s %s->%s rows=%lld cols=%lld xs=%lld ys=%lld %s"
             " off=%d v=%d%s%s",
             h->size, f, (h->flags & ROTQ_HADAMARD_TRANSPOSE_FACTOR) ? "^T" : "", h->signs,
             h->unit_scale ? "1" : "1/sqrt(n)", rotq_dtype_name(h->din), rotq_dtype_name(h->dout),
             (long long)h->rows, (long long)h->cols, (long long)h->xs, (long long)h->ys,
             h->inplace ? "in-place" : "out-of-place", h->offset, h->variant, ws, h->nonfinite ? " inf/nan rows" : "");
}

/* Host-side inputs and the reference of one case (shared by all backends). */
typedef struct had_data {
    rotq_hadamard_params p;
    size_t xbytes, ybytes;
    unsigned char *x, *y0; /* input (padding poisoned), initial output (all poisoned) */
    int8_t *signs;
    double *ref;          /* rows*cols */
    int32_t k, m;
} had_data;

static void data_free(had_data *d) {
    free(d->x);
    free(d->y0);
    free(d->signs);
    free(d->ref);
}

static int data_make(const had_case *h, uint64_t seed, had_data *d, ck_result *r) {
    memset(d, 0, sizeof *d);
    ck_rng rng;
    ck_rng_seed(&rng, seed);
    d->p = rotq_hadamard_params_default(h->size);
    d->p.factor = h->factor;
    d->p.flags = h->flags;
    d->p.scale = h->unit_scale ? 1.0f : (float)(1.0 / sqrt((double)h->size));
    d->xbytes = ck_matrix_bytes(h->din, h->rows, h->xs);
    d->ybytes = ck_matrix_bytes(h->dout, h->rows, h->ys);
    d->x = malloc(d->xbytes);
    d->y0 = malloc(d->ybytes);
    d->ref = malloc(sizeof(double) * (size_t)(h->rows * h->cols));
    if (h->signs) d->signs = malloc((size_t)h->cols);
    if (!d->x || !d->y0 || !d->ref || (h->signs && !d->signs)) {
        ck_fail(r, "host allocation failed");
        return -1;
    }
    ck_poison(d->x, h->din, d->xbytes); /* padding stays NaN: reading it would show */
    ck_poison(d->y0, h->dout, d->ybytes);
    for (int64_t i = 0; h->signs && i < h->cols; i++) d->signs[i] = (int8_t)ck_rng_u64(&rng);
    for (int64_t i = 0; i < h->rows; i++)
        for (int64_t j = 0; j < h->cols; j++) ck_set(d->x, h->din, i * h->xs + j, ck_rng_activation(&rng));
    for (int64_t i = 0; h->nonfinite && i < h->rows; i++) {
        const int64_t j = (i * 7) % h->cols;
        const int inf = h->nonfinite == 1 ? i % 3 == 1 : i % 11 == 3;
        const int nan = h->nonfinite == 1 ? i % 7 == 5 : i % 13 == 7;
        if (inf) ck_set(d->x, h->din, i * h->xs + j, INFINITY);
        else if (nan) ck_set(d->x, h->din, i * h->xs + j, NAN);
    }

    ck_had_ref ref;
    if (ck_had_ref_init(&ref, &d->p, d->signs) != 0) {
        ck_fail(r, "reference: no construction for this size/factor (table error)");
        return -1;
    }
    d->k = ref.k;
    d->m = ref.m;
    for (int64_t i = 0; i < h->rows; i++) {
        double *row = d->ref + i * h->cols;
        for (int64_t j = 0; j < h->cols; j++) row[j] = ck_get(d->x, h->din, i * h->xs + j);
        ck_ref_hadamard_row(&ref, h->cols, row, row);
    }
    ck_had_ref_free(&ref);
    return 0;
}

/* Bytes of a strided matrix that are not elements (the padding) must equal the original. */
static int64_t first_padding_change(const unsigned char *now, const unsigned char *was, rotq_dtype dt,
                                    int64_t rows, int64_t cols, int64_t stride) {
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = cols; j < stride; j++)
            if (ck_code(now, dt, i * stride + j) != ck_code(was, dt, i * stride + j)) return i * stride + j;
    return -1;
}

/* The workspace protocol's view of one case on one backend (ck_ws_call). */
typedef struct had_ws {
    const had_case *h;
    const had_data *d;
    const rotq_hadamard_params *p;
    const rotq_matrix *mx, *my;
    ck_buf *bx, *by;
    const unsigned char *pooled; /* the output bytes of the pooled call */
    unsigned char *tmp;
} had_ws;

static rotq_status had_ws_query(void *ctx, const rotq_exec *e, int one_row, size_t *bytes) {
    const had_ws *w = ctx;
    rotq_matrix x = *w->mx, y = *w->my;
    if (one_row) x.rows = y.rows = 1;
    return rotq_hadamard_workspace_size(e, w->p, &x, &y, bytes);
}

static rotq_status had_ws_run(void *ctx, const rotq_exec *e) {
    const had_ws *w = ctx;
    int bad = w->h->inplace ? ck_buf_upload(w->bx, w->d->x, w->d->xbytes) : ck_buf_upload(w->by, w->d->y0, w->d->ybytes);
    if (bad) return ROTQ_ERR_CUDA; /* reported as an unexpected status */
    return rotq_hadamard(e, w->p, w->mx, w->my);
}

static void had_ws_outputs_are(void *ctx, int pooled, ck_result *r, const char *what) {
    const had_ws *w = ctx;
    const unsigned char *want = pooled ? w->pooled : w->h->inplace ? w->d->x : w->d->y0;
    if (ck_buf_download(w->h->inplace ? w->bx : w->by, w->tmp, w->d->ybytes)) {
        ck_fail(r, "workspace of %s: %s", what, ck_buf_error());
        return;
    }
    for (size_t k = 0; k < w->d->ybytes; k++)
        if (w->tmp[k] != want[k]) {
            size_t e = k / ck_dtype_bytes(w->h->dout, 1);
            ck_fail(r, "workspace of %s: output byte %zu (row %lld col %lld) %s", what, k,
                    (long long)(e / (size_t)w->h->ys), (long long)(e % (size_t)w->h->ys),
                    pooled ? "differs from the pooled call's" : "written by a rejected call");
            return;
        }
}

/* The workspace query on every backend, and the workspace protocol on CUDA for
   the cases that take the two-pass path (h->ws > 0). */
static void check_workspace(const had_case *h, had_ws *w, rotq_backend b, struct CUstream_st *stream,
                            const rotq_exec *ex, ck_result *r) {
    size_t bytes = 12345;
    rotq_status st = rotq_hadamard_workspace_size(ex, w->p, w->mx, w->my, &bytes);
    if (st != ROTQ_OK) {
        ck_fail(r, "rotq_hadamard_workspace_size returned %s", rotq_status_name(st));
        return;
    }
    /* -2: the fragment kernel's sizes, one pass where it runs (sm_90a code on a
       9.x device), the two-pass path elsewhere. */
    const int none = h->ws == -1 || (h->ws == -2 && b == ROTQ_BACKEND_CUDA && ck_cuda_cc_major() == 9 &&
                                     strstr(rotq_build_info(), "90a") != NULL);
    if ((b == ROTQ_BACKEND_CPU || none) && bytes != 0)
        ck_fail(r, "rotq_hadamard_workspace_size: %zu bytes, expected 0 (%s)", bytes,
                b == ROTQ_BACKEND_CPU ? "the CPU backend needs none" : "a one-pass size");
    if (b != ROTQ_BACKEND_CUDA || h->ws <= 0) return;
    const ck_ws_call call = {w, had_ws_query, had_ws_run, had_ws_outputs_are};
    ck_workspace_protocol(&call, b, stream, ex, r);
}

static void run_backend(const had_case *h, const had_data *d, rotq_backend b, ck_result *r) {
    ck_buf bx = {0}, by = {0}, bs = {0};
    size_t es_x = ck_dtype_bytes(h->din, 1), es_y = ck_dtype_bytes(h->dout, 1);
    unsigned char *y = malloc(d->ybytes), *x = malloc(d->xbytes);
    double *got = malloc(sizeof(double) * (size_t)(h->rows * h->cols));
    struct CUstream_st *stream = ck_stream_create(b, h->variant & 1);
    if (!y || !x || !got) {
        ck_fail(r, "host allocation failed");
        goto done;
    }
    if (ck_buf_alloc(&bx, b, d->xbytes, (size_t)h->offset * es_x) || ck_buf_upload(&bx, d->x, d->xbytes) ||
        (!h->inplace && (ck_buf_alloc(&by, b, d->ybytes, (size_t)h->offset * es_y) ||
                         ck_buf_upload(&by, d->y0, d->ybytes))) ||
        (d->signs && (ck_buf_alloc(&bs, b, (size_t)h->cols, (size_t)h->offset) || /* the signs unaligned too */
                      ck_buf_upload(&bs, d->signs, (size_t)h->cols)))) {
        ck_fail(r, "backend memory: %s", ck_buf_error());
        goto done;
    }
    rotq_hadamard_params p = d->p;
    p.signs = d->signs ? (const int8_t *)bs.data : NULL;
    rotq_matrix mx = {bx.data, h->din, h->rows, h->cols, h->xs};
    rotq_matrix my = {h->inplace ? bx.data : by.data, h->dout, h->rows, h->cols, h->ys};
    rotq_exec ex = ck_exec(b, h->variant, stream);
    rotq_status st = rotq_hadamard(&ex, &p, &mx, &my);
    if (st == ROTQ_ERR_NOT_SUPPORTED) {
        ck_skip(r, "not supported on this backend");
        goto done;
    }
    if (st != ROTQ_OK) {
        ck_fail(r, "rotq_hadamard returned %s (%s)", rotq_status_name(st), rotq_status_string(st));
        goto done;
    }
    if (ck_backend_sync(b, stream) || ck_buf_download(h->inplace ? &bx : &by, y, d->ybytes) ||
        (!h->inplace && ck_buf_download(&bx, x, d->xbytes))) {
        ck_fail(r, "after the call: %s", ck_buf_error());
        goto done;
    }
    for (int64_t i = 0; i < h->rows; i++)
        for (int64_t j = 0; j < h->cols; j++) got[i * h->cols + j] = ck_get(y, h->dout, i * h->ys + j);
    ck_compare(r, got, d->ref, h->rows * h->cols, h->cols, ck_had_tol(h->dout, d->k, d->m));
    for (int64_t i = 0; h->nonfinite && i < h->rows * h->cols; i++) /* ck_compare skips these */
        if (!isfinite(d->ref[i]) && isfinite(got[i])) {
            ck_fail(r, "finite output at row %lld col %lld where the reference is not (a NaN / Inf input row)",
                    (long long)(i / h->cols), (long long)(i % h->cols));
            break;
        }
    int64_t pad = first_padding_change(y, h->inplace ? d->x : d->y0, h->dout, h->rows, h->cols, h->ys);
    if (pad >= 0)
        ck_fail(r, "output padding written: row %lld col %lld", (long long)(pad / h->ys), (long long)(pad % h->ys));
    if (!h->inplace && memcmp(x, d->x, d->xbytes) != 0) ck_fail(r, "the input x was modified");
    unsigned char *tmp = malloc(d->ybytes);
    if (!tmp) {
        ck_fail(r, "host allocation failed");
        goto done;
    }
    had_ws w = {.h = h, .d = d, .p = &p, .mx = &mx, .my = &my, .bx = &bx, .by = &by, .pooled = y, .tmp = tmp};
    check_workspace(h, &w, b, stream, &ex, r);
    free(tmp);
done:
    ck_stream_free(b, stream);
    ck_buf_free(&bx);
    ck_buf_free(&by);
    ck_buf_free(&bs);
    free(y);
    free(x);
    free(got);
}

static void run_case(ck_ctx *c, const had_case *h) {
    char name[256];
    uint64_t seed;
    case_name(h, name, sizeof name);
    if (!ck_case_begin(c, name, &seed)) return;
    had_data d;
    int made = 0;
    ck_result prep = {0};
    for (int b = 0; b < ROTQ_BACKEND_COUNT; b++) {
        if (!ck_backend_begin(c, (rotq_backend)b, name)) continue;
        if (!made) made = data_make(h, seed, &d, &prep) == 0 ? 1 : -1;
        ck_result r = prep;
        if (made > 0) run_backend(h, &d, (rotq_backend)b, &r);
        ck_report(c, (rotq_backend)b, name, &r);
    }
    if (made) data_free(&d);
}

/* ---- the table ---- */

static const rotq_dtype k_float[3] = {ROTQ_DTYPE_F32, ROTQ_DTYPE_F16, ROTQ_DTYPE_BF16};

static had_case base_case(int32_t n, int32_t factor, rotq_dtype din, rotq_dtype dout, int64_t rows) {
    had_case h;
    memset(&h, 0, sizeof h);
    h.size = n;
    h.factor = factor;
    h.din = din;
    h.dout = dout;
    h.rows = rows;
    h.cols = h.xs = h.ys = n;
    return h;
}

static void emit(ck_ctx *c, had_case h) {
    if (h.inplace) {
        h.dout = h.din;
        h.ys = h.xs;
    }
    h.variant = (int)(c->case_index % 6);
    run_case(c, &h);
}

/* A K * 2^m case of the sm_90 kernels' tables, variant v: fp16 or bf16 input (and
   mma), every output dtype, H_K^T, the unit scale, element stores (an odd output
   stride), with `pairs` pair stores (an even stride, rows not 16-byte aligned), in
   place with padded 16-byte rows, block-diagonal; `signs` a sign vector. */
static void emit_factor_variant(ck_ctx *c, int32_t n, int32_t k, int v, int64_t rows, int signs, int pairs) {
    had_case h = base_case(n, k, v & 1 ? ROTQ_DTYPE_BF16 : ROTQ_DTYPE_F16, k_float[v % 3], rows);
    h.signs = signs;
    h.flags = v % 4 == 2 ? ROTQ_HADAMARD_TRANSPOSE_FACTOR : 0;
    h.unit_scale = v % 5 == 4;
    if (v % 6 == 5) h.ys += 3;
    if (pairs && v % 6 == 1) h.ys += 2;
    if (v % 7 == 3) h.inplace = 1, h.xs += 8;
    if (v % 7 == 6) h.cols = h.xs = h.ys = 2 * (int64_t)n;
    emit(c, h);
}

void ck_op_hadamard(ck_ctx *c) {
    int full = c->opt->full;
    const rotq_dtype F32 = ROTQ_DTYPE_F32, F16 = ROTQ_DTYPE_F16, BF16 = ROTQ_DTYPE_BF16;

    /* Every power of two, 2^0 .. 2^15, in four configurations. */
    for (int m = 0; m <= 15; m++) {
        int32_t n = 1 << m;
        int quick = (m % 3 == 0) || m == 15;
        if (!full && !quick) continue;
        had_case h = base_case(n, ROTQ_HADAMARD_FACTOR_AUTO, F32, F32, 3);
        emit(c, h);
        h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 7); /* in place, odd stride, signs */
        h.inplace = 1, h.signs = 1, h.unit_scale = 1, h.xs = n + 3;
        emit(c, h);
        if (!full) continue;
        h = base_case(n, ROTQ_HADAMARD_FACTOR_AUTO, BF16, BF16, 1); /* odd output stride, offset */
        h.signs = 1, h.ys = n + 1, h.offset = 1;
        emit(c, h);
        h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, F32, F32, 3); /* block-diagonal */
        h.cols = h.xs = h.ys = (int64_t)n * (2 + m % 3);
        h.signs = (m & 1);
        h.ys += 2;
        emit(c, h);
    }

    /* Every factor K with m = 0, 1, 3 and the largest m with K*2^m <= 65536. */
    for (int i = 0; i < N_FACTORS; i++) {
        int32_t k = k_factors[i];
        int mmax = 0;
        while ((k << (mmax + 1)) <= ROTQ_HADAMARD_MAX_SIZE) mmax++;
        int ms[4] = {0, 1, 3, mmax};
        for (int j = 0; j < 4; j++) {
            int m = ms[j];
            int32_t n = k << m;
            if (j == 2 && m >= mmax) continue;
            if (!full && !(j == 0 || (j == 3 && (i % 4) == 0))) continue;
            had_case h = base_case(n, k, F32, F32, 3);
            emit(c, h);
            h = base_case(n, k, F16, F16, j == 3 ? 2 : 7); /* transposed factor, signs, in place */
            h.flags = ROTQ_HADAMARD_TRANSPOSE_FACTOR, h.signs = 1, h.inplace = 1;
            emit(c, h);
            if (!full) continue;
            if (ck_ref_pick_factor(n, ROTQ_ORDER_QUAROT) == k) { /* AUTO reaches this K */
                h = base_case(n, ROTQ_HADAMARD_FACTOR_AUTO, F32, BF16, 3);
                h.ys = n + 5;
                emit(c, h);
            }
            if (j == 1) { /* block-diagonal, mixed dtypes, odd input stride, unit scale */
                h = base_case(n, k, BF16, F32, 7);
                h.cols = 3 * (int64_t)n, h.xs = h.cols + 1, h.ys = h.cols, h.unit_scale = 1, h.signs = 1;
                emit(c, h);
            }
        }
    }

    /* Model-sized K * 2^m rows, one per staging plan of the CUDA factor kernel: two
       blocks per SM (28 * 512), one block with whole-tile prefetch (20 * 1024), row
       blocks of 2^11 (12 * 2048), and rows past 32768 streamed in column slices
       (36, 40 and 44 * 1024): 16-byte rows, an odd stride (element copies), signs,
       in place, f32, block-diagonal. */
    {
        had_case h = base_case(28 * 512, 28, BF16, BF16, 9);
        h.signs = 1;
        emit(c, h);
        h = base_case(20 * 1024, 20, F16, F16, 5);
        h.xs = h.ys = 20 * 1024 + 8;
        emit(c, h);
        h = base_case(12 * 2048, 12, F16, BF16, 3);
        emit(c, h);
        h = base_case(40 * 1024, 40, F16, F16, 3);
        h.signs = 1;
        emit(c, h);
        h = base_case(40 * 1024, 40, BF16, BF16, 2);
        h.inplace = 1, h.xs = 40 * 1024 + 3;
        emit(c, h);
        h = base_case(40 * 1024, 40, F32, F32, 2);
        h.flags = ROTQ_HADAMARD_TRANSPOSE_FACTOR, h.signs = 1;
        emit(c, h);
        h = base_case(36 * 1024, 36, BF16, F32, 2);
        h.cols = h.xs = h.ys = 2 * 36 * 1024;
        emit(c, h);
        h = base_case(44 * 1024, 44, F16, F16, 1);
        h.signs = 1, h.unit_scale = 1;
        emit(c, h);
    }

    /* Every dtype combination, in and out of place, on a power of two and two K sizes. */
    static const int32_t dsizes[3] = {256, 12 * 8, 20 * 64};
    for (int s = 0; s < 3; s++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                if (!full && !(s == 0 && (a == b || a == 0))) continue;
                had_case h = base_case(dsizes[s], ROTQ_HADAMARD_FACTOR_AUTO, k_float[a], k_float[b], 3);
                h.signs = (a + b) & 1;
                h.unit_scale = (a + s) & 1;
                h.xs += a, h.ys += b; /* a mix of equal and padded strides */
                emit(c, h);
                if (a == b) {
                    h.inplace = 1;
                    h.signs = !h.signs;
                    emit(c, h);
                }
            }

    /* Full table: every dtype pair at every power of two and for every K (m = 4), since
       kernels are specialized by size and element width. */
    for (int m = 0; full && m <= 15; m++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                had_case h = base_case(1 << m, ROTQ_HADAMARD_FACTOR_AUTO, k_float[a], k_float[b], 2);
                h.signs = (m + a) & 1;
                emit(c, h);
            }
    for (int i = 0; full && i < N_FACTORS; i++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                had_case h = base_case(k_factors[i] << 4, k_factors[i], k_float[a], k_float[b], 3);
                h.signs = (i + b) & 1;
                h.flags = (a == b) ? ROTQ_HADAMARD_TRANSPOSE_FACTOR : 0;
                emit(c, h);
            }

    /* Both sides of the CUDA backend's small-problem switch (the latency kernel up to
       2^17 elements in all, and up to 2^20 except for n = 2^13, 2^14; above: the
       persistent kernel), every power of two. The cases above are mostly small; these
       add what they leave to one side: unaligned f32 input, in place and
       block-diagonal up to n = 2^15 on the small side, and cases just above 2^17 and
       just above 2^20 with mixed dtypes, strides and signs. */
    for (int m = 0; full && m <= 15; m++) {
        int32_t n = 1 << m;
        had_case h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, F32, F16, 3); /* unaligned in and out */
        h.offset = 1, h.signs = 1;
        emit(c, h);
        if (m >= 5) { /* and on the persistent kernel (past 2^20 elements), the signs 1 byte off */
            h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, F16, BF16, ((int64_t)1 << (20 - m)) + 7);
            h.offset = 1, h.signs = 1;
            emit(c, h);
            /* block-diagonal rows of 4 row blocks (the signs read once a block where the
               row divides the tile) and of 3 (a row that never divides it: loads a tile) */
            h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, BF16, F16, ((int64_t)1 << (18 - m)) + 5);
            h.cols = h.xs = h.ys = 4 * (int64_t)n, h.signs = 1;
            emit(c, h);
            h.rows = ((int64_t)1 << (20 - m)) / 3 + 5, h.cols = h.xs = h.ys = 3 * (int64_t)n;
            emit(c, h);
        }
        h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, BF16, BF16, 3); /* in place, padded 16-byte rows */
        h.inplace = 1, h.xs = n + 8, h.signs = m & 1;
        emit(c, h);
        h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, F16, F32, 1); /* block-diagonal, packed */
        h.cols = h.xs = h.ys = 2 * (int64_t)n, h.signs = 1, h.unit_scale = 1;
        emit(c, h);
        h = base_case(n, ROTQ_HADAMARD_FACTOR_AUTO, k_float[m % 3], k_float[(m + 1) % 3],
                      ((int64_t)1 << (17 - m)) + 1 + m % 3); /* just above 2^17 */
        h.signs = !(m & 1), h.xs += m % 4, h.ys += (m / 4) % 2, h.unit_scale = m & 1;
        emit(c, h);
        if (m % 4 == 2) { /* in place above the switch */
            h.inplace = 1;
            emit(c, h);
        }
        h.rows = ((int64_t)1 << (20 - m)) + 1 + m % 3; /* just above 2^20: the persistent kernel */
        h.inplace = m % 4 == 1;
        emit(c, h);
    }

    /* Out of place at n = 2^11 .. 2^15 with few row blocks: the CUDA split kernel
       (2^T blocks a row block, each reading all of it), its f16 / bf16 builds
       (aligned, no signs) and the generic one (signs, strides, block-diagonal),
       and row counts on both sides of its one-wave bound on a 132-SM part (rows
       x 2^T blocks: 66 / 67 rows of 2048, 33 / 34 of 4096, 16 / 17 of 8192 and
       32768, 8 / 9 of 16384). */
    for (int m = 11; m <= 15; m++) {
        int32_t n = 1 << m;
        int quick = m == 12 || m == 14;
        if (!full && !quick) continue;
        had_case h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 1);
        emit(c, h);
        h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, BF16, BF16, 3);
        h.unit_scale = m & 1;
        emit(c, h);
        if (!full) continue;
        h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, F16, BF16, 2); /* signs, strided rows */
        h.signs = 1, h.xs = n + 8, h.ys = n + 3;
        emit(c, h);
        h = base_case(n, ROTQ_HADAMARD_FACTOR_POW2, BF16, F32, 2); /* block-diagonal, signs */
        h.cols = h.xs = h.ys = 2 * (int64_t)n, h.signs = 1;
        emit(c, h);
    }
    static const int64_t wave_rows[5][2] = {{4096, 33}, {8192, 16}, {16384, 8}, {32768, 16}, {2048, 66}};
    for (int i = 0; full && i < 5; i++)
        for (int64_t r = wave_rows[i][1]; r <= wave_rows[i][1] + 1; r++) {
            had_case h = base_case((int32_t)wave_rows[i][0], ROTQ_HADAMARD_FACTOR_POW2, i & 1 ? BF16 : F16,
                                   i & 1 ? BF16 : F16, r);
            emit(c, h);
        }

    /* Row counts: 1, 3, 7 and many rows of small transforms (above the CUDA
       small-problem switch, 2^20 elements, in the quick table too). */
    static const int64_t rows[3] = {1, 3, 7};
    for (int i = 0; i < 3; i++) {
        had_case h = base_case(64, ROTQ_HADAMARD_FACTOR_AUTO, F16, F32, rows[i]);
        h.cols = h.xs = h.ys = 128, h.signs = 1;
        emit(c, h);
    }
    had_case h = base_case(16, ROTQ_HADAMARD_FACTOR_AUTO, F32, F32, full ? 1000003 : 65539);
    h.signs = 1;
    emit(c, h);
    h = base_case(64, ROTQ_HADAMARD_FACTOR_AUTO, F16, F16, full ? 100003 : 8195);
    h.inplace = 1, h.cols = 128, h.xs = 131;
    emit(c, h);
    h = base_case(12 * 16, 12, BF16, F16, full ? 20001 : 101);
    h.ys = 12 * 16 + 7;
    emit(c, h);

    /* Dense inputs large enough for the TMA tile loads of the persistent kernel
       (sm_90: at least 1.5 tiles of 8192 elements per resident block for n <= 1024,
       4 above; about 6.5M and 13M elements on a 132-SM part), rows ragged against
       the tile (the last box reads past the end: zeros). */
    h = base_case(64, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 163843); /* 10.5M elements */
    h.signs = 1;
    emit(c, h);
    /* n = 2^8 .. 2^10 with a dense output, under the TMA size (cp.async stages,
       16-byte stores from W): a partial last tile (three rows of 256), and an fp32 output. */
    h = base_case(256, ROTQ_HADAMARD_FACTOR_POW2, BF16, BF16, 4099);
    h.signs = 1;
    emit(c, h);
    h = base_case(1024, ROTQ_HADAMARD_FACTOR_POW2, F16, F32, 1027); /* 4096-byte copies */
    emit(c, h);
    if (full) {
        /* n = 2^8 .. 2^10 with TMA stages (over 6.5M elements): rows finished by lane
           shuffles and each tile stored by TMA from W (sm_90); ragged last tiles, the
           dynamic tile order, in place, signs. */
        h = base_case(256, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 40009);
        emit(c, h);
        h = base_case(512, ROTQ_HADAMARD_FACTOR_POW2, BF16, BF16, 20011);
        h.signs = 1;
        emit(c, h);
        h = base_case(1024, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 10007);
        h.inplace = 1;
        emit(c, h);
        /* ... and without vector output (rows 2 bytes off 16): the exchange through W,
           lane-contiguous element stores. */
        h = base_case(512, ROTQ_HADAMARD_FACTOR_POW2, F16, BF16, 4097);
        h.ys = 512 + 3;
        emit(c, h);
    }
    /* n = 2^11 .. 2^13 past the small kernel (2^20 elements; 2^17 at 2^13): the pair
       exchanges and each (dtype, vector) store loop; ragged last tiles (4 and 2 rows a
       tile at 2^11, 2^12). */
    h = base_case(8192, ROTQ_HADAMARD_FACTOR_POW2, BF16, BF16, 17);
    h.signs = 1;
    emit(c, h);
    /* 16-bit inputs without signs at 2^11 .. 2^14 past the small kernel: by
       cp.async stages here and in the strided and block-diagonal cases below, by
       TMA stages in the 18M-element ones (and phase 0 on tensor cores when that
       was tried: docs/perf-notes.md, power-of-two v27). TMA takes at least 4 tiles
       a resident block above 2^10: 2112 tiles of 8192 elements on an H100's 528
       blocks (the 16.8M-element sizes these cases had fell under that when the
       kernels came down to four blocks an SM). */
    h = base_case(8192, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 19);
    emit(c, h);
    if (full) {
        h = base_case(2048, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 8803); /* ragged last tile */
        h.inplace = 1;
        emit(c, h);
        h = base_case(4096, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 301); /* block-diagonal */
        h.cols = h.xs = h.ys = 8192;
        emit(c, h);
        h = base_case(8192, ROTQ_HADAMARD_FACTOR_POW2, BF16, F16, 2203);
        h.unit_scale = 1;
        emit(c, h);
        /* The dynamic tile order (more than two tiles a resident block, with TMA
           stages), right after the launch above on the same stream: this one finds
           the counter that one reset, and runs in place with signs. */
        h = base_case(4096, ROTQ_HADAMARD_FACTOR_POW2, BF16, BF16, 4405);
        h.inplace = 1, h.signs = 1;
        emit(c, h);
        h = base_case(8192, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 131); /* strided input */
        h.xs = 8192 + 8;
        emit(c, h);
        h = base_case(16384, ROTQ_HADAMARD_FACTOR_POW2, F16, BF16, 1100);
        emit(c, h);
        h = base_case(16384, ROTQ_HADAMARD_FACTOR_POW2, BF16, BF16, 67); /* in place, strided */
        h.inplace = 1, h.xs = h.ys = 16384 + 8;
        emit(c, h);
        /* A sign vector on block-diagonal rows past the small kernel: each row
           block's signs from its position in the row (one base a thread and tile). */
        h = base_case(2048, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 300);
        h.cols = h.xs = h.ys = 8192, h.signs = 1;
        emit(c, h);
        h = base_case(16384, ROTQ_HADAMARD_FACTOR_POW2, BF16, F32, 41);
        h.cols = h.xs = h.ys = 32768, h.signs = 1;
        emit(c, h);
    }
    if (full) {
        h = base_case(2048, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 1029);
        h.signs = 1;
        emit(c, h);
        h = base_case(4096, ROTQ_HADAMARD_FACTOR_POW2, F16, BF16, 515);
        emit(c, h);
        h = base_case(4096, ROTQ_HADAMARD_FACTOR_POW2, F32, F32, 257); /* fp32 out: element stores */
        h.signs = 1;
        h.ys = 4096 + 1;
        emit(c, h);
        h = base_case(8192, ROTQ_HADAMARD_FACTOR_POW2, F16, F32, 67);
        emit(c, h);
        h = base_case(2048, ROTQ_HADAMARD_FACTOR_POW2, BF16, F16, 1031); /* padded rows: vector stores */
        h.ys = 2048 + 8;
        emit(c, h);
    }
    if (full) {
        h = base_case(4096, ROTQ_HADAMARD_FACTOR_POW2, BF16, BF16, 4403); /* 18M, in place */
        h.inplace = 1;
        emit(c, h);
        h = base_case(32768, ROTQ_HADAMARD_FACTOR_POW2, F16, F32, 531); /* two boxes per tile */
        emit(c, h);
        h = base_case(1024, ROTQ_HADAMARD_FACTOR_POW2, F32, BF16, 16389); /* fp32 tiles */
        h.signs = 1;
        emit(c, h);
        h = base_case(32768, ROTQ_HADAMARD_FACTOR_POW2, F32, F32, 531); /* fp32, one stage: no prefetch */
        emit(c, h);
    }

    /* The factor kernel's TMA stages (sm_90: 16-bit dense inputs without signs, 1.5
       tiles per resident block) and TMA tile stores (2^m <= 128, dense 16-bit output),
       rows ragged against the grid. */
    h = base_case(172 * 64, 172, F16, F16, 1001); /* 11M elements: loads and stores */
    emit(c, h);
    /* fp32 tiles stored by TMA: 344 and 432 rows of 128 bytes, in boxes that tile
       them exactly (2 x 172, 2 x 216) */
    h = base_case(172 * 64, 172, F32, F32, 5);
    emit(c, h);
    h = base_case(108 * 128, 108, F32, F32, 7);
    h.signs = 1;
    emit(c, h);
    h = base_case(140 * 128, 140, BF16, BF16, 9); /* 16-bit: 280 rows, 2 x 140 */
    emit(c, h);
    /* K > 64 with TMA stages: the K step on wgmma (sm_90a), one build per k-tile
       count, m64 tiles past K (156: 192 rows), H_K^T, two 64-column blocks a row
       block, the pipelined loop (2^m <= 128), more tasks than warpgroups (140 and
       156 at 2^m = 128), column slices (124 * 256), rows past shared memory (172 *
       256, 124 * 512: the two-pass path). */
    h = base_case(156 * 64, 156, F16, F16, 203);
    h.flags = ROTQ_HADAMARD_TRANSPOSE_FACTOR;
    emit(c, h);
    h = base_case(116 * 128, 116, BF16, BF16, 211);
    emit(c, h);
    /* A sign vector on TMA stages: applied to each arrived stage in place
       (rotq_factor_sign_stage), then the K step as without signs. */
    h = base_case(28 * 512, 28, BF16, BF16, 403);
    h.signs = 1;
    emit(c, h);
    /* The fragment kernel's dynamic tail (the DYN build: 16 row blocks a block of
       396 on an H100, the last six from the counter) in the quick table, which the
       GPU runner's memcheck and racecheck run. */
    h = base_case(12 * 256, 12, F16, BF16, 6400);
    emit(c, h);
    if (full) {
        h = base_case(172 * 64, 172, F16, F16, 1001); /* wgmma, not the pipelined loop */
        h.signs = 1;
        emit(c, h);
        h = base_case(40 * 1024, 40, F16, BF16, 401); /* column slices */
        h.signs = 1;
        emit(c, h);
        h = base_case(20 * 1024, 20, BF16, BF16, 801); /* the wide build */
        h.signs = 1;
        emit(c, h);
        h = base_case(12 * 256, 12, F16, F16, 8001); /* several row blocks a tile */
        h.signs = 1;
        emit(c, h);
        h = base_case(28 * 512, 28, F16, F16, 301); /* block-diagonal: the signs of two row blocks */
        h.cols = h.xs = h.ys = 2 * 28 * 512;
        h.signs = 1;
        emit(c, h);
        /* Column slices by cp.async (under 1.5 tiles per block: no TMA) with some
           blocks taking a second row: the next row's second slice issued early. */
        h = base_case(40 * 1024, 40, BF16, F16, 150);
        emit(c, h);
        h = base_case(28 * 1024, 28, F16, F16, 170);
        h.signs = 1;
        emit(c, h);
    }
    if (full) {
        static const int32_t big_k[6] = {108, 116, 124, 140, 156, 172};
        for (int i = 0; i < 6; i++) {
            const rotq_dtype dout = i % 3 == 1 ? F32 : k_float[1 + (i & 1)];
            h = base_case(big_k[i] << (6 + i % 3), big_k[i], i & 1 ? BF16 : F16, dout, 199 + 2 * i);
            h.flags = i % 2 == 0 ? ROTQ_HADAMARD_TRANSPOSE_FACTOR : 0;
            emit(c, h);
        }
        h = base_case(124 * 512, 124, BF16, BF16, 203);
        emit(c, h);
    }
    if (full) {
        h = base_case(108 * 128, 108, BF16, BF16, 1003); /* in place */
        h.inplace = 1;
        emit(c, h);
        h = base_case(172 * 64, 172, F16, F32, 1001); /* strided fp32 output: element stores */
        h.ys = 172 * 64 + 4;
        emit(c, h);
        h = base_case(28 * 512, 28, F16, F16, 1001); /* the two-block build, one stage */
        emit(c, h);
        /* The fragment kernel's dynamic tail (the DYN build, rotq_frag_claim: 16
           tiles a block of 264 on an H100, the last six from the counter, two blocks
           an SM), in place. (Signed calls keep the static order: 12 * 256 x 8001
           above runs the signed build at 20 tiles a block of 396.) */
        h = base_case(28 * 512, 28, BF16, BF16, 4301);
        h.inplace = 1;
        emit(c, h);
        h = base_case(28 * 512, 28, BF16, BF16, 301); /* block-diagonal: two row blocks a row */
        h.cols = h.xs = h.ys = 2 * 28 * 512;
        emit(c, h);
        h = base_case(12 * 1024, 12, BF16, F32, 2003);
        emit(c, h);
        h = base_case(20 * 1024, 20, F16, BF16, 801); /* the wide build */
        emit(c, h);
        h = base_case(40 * 1024, 40, F16, F16, 401); /* column slices */
        emit(c, h);
        /* Its sign masks (rotq_frag_sign_table): several row blocks a block (three
           blocks an SM), one mask table a row-block position in block-diagonal rows
           of 3 and 5 blocks, and signed calls in parts (40 * 1024: three). */
        h = base_case(12 * 1024, 12, BF16, BF16, 2003);
        h.signs = 1;
        emit(c, h);
        h = base_case(28 * 512, 28, F16, F16, 301);
        h.cols = h.xs = h.ys = 3 * 28 * 512, h.signs = 1;
        emit(c, h);
        h = base_case(20 * 256, 20, BF16, F32, 613);
        h.cols = h.xs = h.ys = 5 * 20 * 256, h.signs = 1, h.inplace = 1;
        emit(c, h);
        h = base_case(40 * 1024, 40, F16, BF16, 600);
        h.signs = 1;
        emit(c, h);
    }

    /* The fragment kernel (hadamard_factor_frag.cuh; sm_90: K <= 64 at 2^8 .. 2^10,
       16-bit input by TMA, where its shared memory fits): every k-tile count at each
       2^m, and row counts from 1 to several tiles a block (the stages' reuse and
       mbarrier parity). */
    static const int32_t frag_k[7] = {12, 20, 28, 36, 44, 52, 60};
    static const int64_t frag_rows[5] = {1, 3, 67, 141, 613};
    for (int m = 8; m <= 10; m++)
        for (int i = 0; i < 7; i++) {
            const int32_t k = frag_k[i], n = k << m;
            const int v = 3 * m + i;
            if (n > 36 * 1024 || (!full && v % 4 != 0)) continue;
            const int64_t nr = frag_rows[v % 5];
            emit_factor_variant(c, n, k, v, !full && nr > 141 ? 141 : nr, v % 3 == 1, 0);
        }

    /* The fragment kernel's parts (rotq_frag_parts: 2^10, K >= 20, out of place;
       44, 52, 60 * 1024 take the fragment kernel only in parts): every K, from one
       row block (the most parts, 8 rows each) through 66 (half a round of 132
       one-block SMs: two parts) to 67 and 100 (two parts of several row blocks a
       block), signs, H_K^T, every output dtype, element stores. */
    static const int32_t part_k[7] = {20, 28, 36, 40, 44, 52, 60};
    static const int64_t part_rows[7] = {1, 2, 13, 33, 66, 67, 100};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++) {
            const int v = 7 * i + j;
            if (!full && v % 5 != 0) continue;
            h = base_case(part_k[i] << 10, part_k[i], v & 1 ? BF16 : F16, k_float[v % 3], part_rows[j]);
            h.signs = v % 3 != 1;
            h.flags = v % 4 == 2 ? ROTQ_HADAMARD_TRANSPOSE_FACTOR : 0;
            if (v % 7 == 5) h.ys += 3;
            if (v % 9 == 4) h.cols = h.xs = h.ys = 2 * (int64_t)h.size; /* block-diagonal: rows of two blocks */
            emit(c, h);
        }

    /* Calls of several row blocks a block without signs, where rotq_frag_parts
       splits row blocks by the work of the K step (28: two parts, 40: three, 52 and
       60: four): under 4 rounds of 132 one-block SMs (100, 411 rows: at least two
       parts), and at 4 rounds or more (600 rows of 28 and 40 * 1024: whole row
       blocks weighed against the parts). */
    static const int32_t split_k[4] = {28, 40, 52, 60};
    static const int64_t split_rows[4][2] = {{100, 600}, {100, 600}, {100, 411}, {100, 411}};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++) {
            const int v = 2 * i + j;
            if (!full && v != 3) continue;
            h = base_case(split_k[i] << 10, split_k[i], v & 1 ? BF16 : F16, k_float[v % 3], split_rows[i][j]);
            h.flags = v % 3 == 2 ? ROTQ_HADAMARD_TRANSPOSE_FACTOR : 0;
            if (v % 4 == 1) h.ys += 3;
            emit(c, h);
        }

    /* The warpgroup kernel (hadamard_factor_wg.cuh; sm_90a: K > 16 at 2^6 and 2^7,
       16-bit input by TMA): every K > 16 at both widths (K > 128 at 2^7: the general
       kernel), pair stores too (rows not 16-byte aligned), and row counts from 1 to
       several tiles a group of warpgroups (the slot ring's parity). */
    static const int32_t wg_k[13] = {108, 116, 124, 140, 156, 172, 20, 28, 36, 40, 44, 52, 60};
    static const int64_t wg_rows[5] = {1, 3, 613, 67, 3301};
    for (int m = 6; m <= 7; m++)
        for (int i = 0; i < 13; i++) {
            const int32_t k = wg_k[i], n = k << m;
            const int v = 13 * m + i;
            if (!full && v % 3 != 0) continue;
            const int64_t nr = wg_rows[v % 5];
            emit_factor_variant(c, n, k, v, !full && nr > 613 ? 613 : nr, v % 7 == 1, 1);
        }

    /* Its packed row blocks (K <= 32: T = 2 or 4 row blocks an m64 tile): K = 12,
       20, 28 at both widths, every variant class, row counts on both sides of a
       unit (1 .. 5) and several units a warpgroup. Then rows holding an Inf or a
       NaN beside finite ones: a packed tile's non-finite input reaches every
       output of it, so the finite row blocks are redone (out of place and in place). */
    static const int32_t pack_k[3] = {12, 20, 28};
    static const int64_t pack_rows[7] = {1, 2, 3, 5, 6, 613, 3301};
    for (int m = 6; m <= 7; m++)
        for (int i = 0; i < 3; i++)
            for (int v = 0; v < 14; v++) {
                if (!full && (v + i) % 4 != 0) continue;
                const int64_t nr = pack_rows[(v + 2 * i + m) % 7];
                emit_factor_variant(c, pack_k[i] << m, pack_k[i], v, !full && nr > 613 ? 613 : nr, v % 5 == 2, 1);
            }
    for (int m = 6; m <= 7; m++)
        for (int i = 0; i < 3; i += 2)
            for (int j = 0; j < 3; j++) {
                had_case hn = base_case(pack_k[i] << m, pack_k[i], j == 1 ? BF16 : F16, j == 1 ? F32 : F16,
                                       j == 2 ? 13 : 9);
                hn.nonfinite = 1;
                hn.inplace = j == 2;
                hn.signs = j == 1;
                if (j == 1) hn.cols = hn.xs = hn.ys = 2 * (int64_t)hn.size; /* block-diagonal */
                emit(c, hn);
            }
    /* Long calls (full table): several slots a warpgroup past its ring of slots (the
       refill and the second mbarrier parity: more than 2 (2^7) or 3 (2^6) slots a
       group of the 132-SM grid), a last slot of three row blocks (8451 = 4 * 2112 + 3),
       in place, signs on block-diagonal rows; and sparse NaN / Inf rows in place, so
       that slots with and without them meet. */
    for (int i = 0; full && i < 4; i++) {
        had_case hl = base_case(i < 2 ? 12 << 7 : 28 << 6, i < 2 ? 12 : 28, i & 1 ? BF16 : F16, i & 1 ? BF16 : F16,
                                i < 2 ? 8451 : 6001);
        hl.inplace = i == 1;
        if (i == 2) hl.signs = 1, hl.cols = hl.xs = hl.ys = 2 * (int64_t)hl.size, hl.rows = 3001;
        if (i == 3) hl.nonfinite = 2, hl.inplace = 1;
        emit(c, hl);
    }
    if (full) {
        had_case hs = base_case(12 << 7, 12, F16, F16, 101); /* T = 4, sparse non-finite rows, in place */
        hs.nonfinite = 2, hs.inplace = 1;
        emit(c, hs);
    }

    /* Caller workspaces (rotq_exec.workspace; on CUDA the protocol of workspace.c:
       preferred, one-row and other sizes bit-identical to the pooled call, too
       small / misaligned / empty rejected with the output untouched). The two-pass
       path: 2^m = 4096 (no one-pass factor kernel past 2^11), K = 52 at 2^10 in
       place (W past shared memory; out of place the fragment kernel's parts take
       it), 16-bit and f32, a strided output, signs. Then
       sizes that need none: a power of two, 28 * 512 (one pass), and 52 * 1024 out
       of place where the fragment kernel takes it in parts (sm_90a). */
    h = base_case(12 * 4096, 12, BF16, F32, 3);
    h.ys += 4, h.signs = 1, h.ws = 1;
    emit(c, h);
    h = base_case(12 * 4096, 12, F32, F32, 2);
    h.inplace = 1, h.ws = 1;
    emit(c, h);
    h = base_case(52 * 1024, 52, F16, F16, 5);
    h.flags = ROTQ_HADAMARD_TRANSPOSE_FACTOR, h.inplace = 1, h.ws = 1;
    emit(c, h);
    h = base_case(4096, ROTQ_HADAMARD_FACTOR_POW2, F16, F16, 4);
    h.ws = -1;
    emit(c, h);
    h = base_case(28 * 512, 28, BF16, BF16, 4);
    h.ws = -1;
    emit(c, h);
    h = base_case(52 * 1024, 52, F16, BF16, 5);
    h.ws = -2;
    emit(c, h);
}
