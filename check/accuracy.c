/* The accuracy demonstration (accuracy.h, docs/accuracy.md). */
#include "accuracy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "rng.h"

#define F ROTQ_ACCURACY_FORMAT_COUNT
#define R ROTQ_ACCURACY_ROTATION_COUNT
#define SIGNS_STREAM 0x5349474e53ull /* "SIGNS": the signs' seed is seed ^ this */
#define MAX_ELEMENTS ((int64_t)1 << 26)

/* ---- generator and SNR ---------------------------------------------------- */

void rotq_accuracy_activations(float *x, int64_t tokens, int64_t channels, uint64_t seed,
                               int64_t *outlier_channels) {
    enum { K = ROTQ_ACCURACY_OUTLIERS };
    ck_rng r;
    ck_rng_seed(&r, seed);
    int64_t oc[K];
    double of[K];
    for (int k = 0; k < K; k++) { /* K distinct channels, each with its factor */
        int dup;
        do {
            oc[k] = (int64_t)ck_rng_below(&r, (uint64_t)channels);
            dup = 0;
            for (int j = 0; j < k; j++) dup |= oc[j] == oc[k];
        } while (dup);
        of[k] = 50.0 + 50.0 * ck_rng_uniform(&r);
    }
    for (int k = 1; k < K; k++) /* ascending, so one pass over a row meets them in order */
        for (int j = k; j > 0 && oc[j - 1] > oc[j]; j--) {
            int64_t tc = oc[j];
            double tf = of[j];
            oc[j] = oc[j - 1], of[j] = of[j - 1];
            oc[j - 1] = tc, of[j - 1] = tf;
        }
    if (outlier_channels) memcpy(outlier_channels, oc, sizeof oc);
    for (int64_t t = 0; t < tokens; t++) {
        double g = exp2(-2.0 + 4.0 * ck_rng_uniform(&r));
        float *row = x + t * channels;
        int k = 0;
        for (int64_t c = 0; c < channels; c++) {
            double o = k < K && oc[k] == c ? of[k++] : 1.0;
            row[c] = (float)(g * o * ck_rng_normal(&r));
        }
    }
}

void rotq_accuracy_signs(int8_t *signs, int64_t channels, uint64_t seed) {
    ck_rng r;
    ck_rng_seed(&r, seed ^ SIGNS_STREAM);
    for (int64_t c = 0; c < channels; c++) signs[c] = (ck_rng_u64(&r) >> 63) ? -1 : 1;
}

double rotq_accuracy_snr_db_except(const float *x, const float *xh, size_t n, int64_t channels,
                                   const int64_t *skip, int n_skip) {
    double sig = 0.0, err = 0.0;
    for (size_t i = 0; i < n;) {
        int k = 0;
        for (int64_t c = 0; c < channels && i < n; c++, i++) {
            if (k < n_skip && skip[k] == c) {
                k++;
                continue;
            }
            double d = (double)x[i] - xh[i];
            sig += (double)x[i] * x[i];
            err += d * d;
        }
    }
    if (err == 0.0) return INFINITY;
    return 10.0 * log10(sig / err);
}

double rotq_accuracy_snr_db(const float *x, const float *xh, size_t n) {
    return rotq_accuracy_snr_db_except(x, xh, n, (int64_t)n, NULL, 0);
}

/* ---- names ---------------------------------------------------------------- */

static const struct {
    const char *key, *label;
    rotq_quant_kind kind;
    rotq_dtype qdt;
    int32_t group;
} formats[F] = {
    {"int8", "int8 per-token", ROTQ_QUANT_INT8_ROW, ROTQ_DTYPE_I8, 0},
    {"fp8_e4m3", "fp8 per-token", ROTQ_QUANT_FP8_ROW, ROTQ_DTYPE_FP8_E4M3, 0},
    {"int4_g32", "int4 g32", ROTQ_QUANT_INT4_GROUP, ROTQ_DTYPE_I4X2, 32},
    {"int4_g64", "int4 g64", ROTQ_QUANT_INT4_GROUP, ROTQ_DTYPE_I4X2, 64},
    {"int4_g128", "int4 g128", ROTQ_QUANT_INT4_GROUP, ROTQ_DTYPE_I4X2, 128},
};
static const char *const rotation_keys[R] = {"none", "hadamard", "hadamard_signs", "block128"};

const char *rotq_accuracy_format_key(rotq_accuracy_format f) { return (unsigned)f < F ? formats[f].key : "?"; }
const char *rotq_accuracy_format_label(rotq_accuracy_format f) { return (unsigned)f < F ? formats[f].label : "?"; }
const char *rotq_accuracy_rotation_key(rotq_accuracy_rotation r) { return (unsigned)r < R ? rotation_keys[r] : "?"; }

static int in_brief(int f, int r) {
    return (f == ROTQ_ACCURACY_INT8 || f == ROTQ_ACCURACY_FP8 || f == ROTQ_ACCURACY_INT4_G128) &&
           (r == ROTQ_ACCURACY_NONE || r == ROTQ_ACCURACY_HADAMARD);
}

const char *rotq_accuracy_check_options(const rotq_accuracy_options *o) {
    int32_t k, m;
    if ((unsigned)o->backend >= ROTQ_BACKEND_COUNT) return "unknown backend";
    if (o->tokens < 1 || o->tokens > 65536) return "tokens must be in 1..65536";
    if (o->channels < ROTQ_ACCURACY_BLOCK || o->channels > ROTQ_HADAMARD_MAX_SIZE ||
        o->channels % ROTQ_ACCURACY_BLOCK)
        return "channels must be a multiple of 128 in 128..65536 (the int4 groups and the 128 blocks divide it)";
    if (rotq_hadamard_resolve((int32_t)o->channels, ROTQ_HADAMARD_FACTOR_AUTO, &k, &m) != ROTQ_OK)
        return "channels has no Hadamard construction (2^m up to 32768, or K*2^m with a supported K)";
    if (o->tokens * o->channels > MAX_ELEMENTS) return "tokens x channels must be at most 2^26 (67108864)";
    return NULL;
}

/* ---- measurement ---------------------------------------------------------- */

typedef struct ctx {
    rotq_exec exec;
    int64_t t, c;
    float *x, *xh; /* host */
    int8_t *signs; /* host */
    ck_buf dx, dq, ds, dy, dsigns;
} ctx;

static void fail(rotq_accuracy_results *r, const char *what, const char *why) {
    if (!r->error[0]) snprintf(r->error, sizeof r->error, "%s: %s", what, why);
    r->failures++;
}

static rotq_hadamard_params rotation(const ctx *c, int rot, int inverse) {
    rotq_hadamard_params p = rotq_hadamard_params_default(rot == ROTQ_ACCURACY_BLOCK128 ? ROTQ_ACCURACY_BLOCK
                                                                                        : (int32_t)c->c);
    if (rot == ROTQ_ACCURACY_HADAMARD_SIGNS && !inverse) p.signs = (const int8_t *)c->dsigns.data;
    int32_t k = 1, m;
    /* (1/sqrt n)(H_K (x) H_2^m) is orthonormal with inverse (1/sqrt n)(H_K^T (x) H_2^m). */
    if (inverse && rotq_hadamard_resolve(p.size, p.factor, &k, &m) == ROTQ_OK && k > 1)
        p.flags ^= ROTQ_HADAMARD_TRANSPOSE_FACTOR;
    return p;
}

/* Waits for the backend, then copies dy into xh, undoing the signs when asked. */
static int fetch_y(ctx *c, int undo_signs) {
    size_t n = (size_t)(c->t * c->c);
    if (ck_backend_sync(c->exec.backend, NULL) != 0 || ck_buf_download(&c->dy, c->xh, n * sizeof(float)) != 0)
        return -1;
    if (undo_signs)
        for (size_t i = 0; i < n; i++)
            if (c->signs[i % (size_t)c->c] < 0) c->xh[i] = -c->xh[i];
    return 0;
}

static rotq_status round_trip(ctx *c, int f, int rot, rotq_accuracy_results *r, int *harness) {
    rotq_hadamard_params rp = rotation(c, rot, 0), inv = rotation(c, rot, 1);
    rotq_quant_params qp;
    memset(&qp, 0, sizeof qp);
    qp.kind = formats[f].kind;
    qp.group_size = formats[f].group;
    qp.rotate = rot == ROTQ_ACCURACY_NONE ? NULL : &rp;
    rotq_matrix xm = {c->dx.data, ROTQ_DTYPE_F32, c->t, c->c, c->c};
    rotq_matrix qm = {c->dq.data, formats[f].qdt, c->t, c->c, c->c};
    rotq_matrix ym = {c->dy.data, ROTQ_DTYPE_F32, c->t, c->c, c->c};
    rotq_status st = rotq_quantize(&c->exec, &qp, &xm, &qm, (float *)c->ds.data, NULL);
    qp.rotate = NULL;
    if (st == ROTQ_OK) st = rotq_dequantize(&c->exec, &qp, &qm, (const float *)c->ds.data, &ym);
    if (st == ROTQ_OK && rot != ROTQ_ACCURACY_NONE) st = rotq_hadamard(&c->exec, &inv, &ym, &ym);
    if (st != ROTQ_OK) return st;
    if (fetch_y(c, rot == ROTQ_ACCURACY_HADAMARD_SIGNS) != 0) {
        *harness = 1;
        return ROTQ_OK;
    }
    size_t n = (size_t)(c->t * c->c);
    r->snr_db[f][rot] = rotq_accuracy_snr_db(c->x, c->xh, n);
    r->snr_ordinary_db[f][rot] =
        rotq_accuracy_snr_db_except(c->x, c->xh, n, c->c, r->outlier_channels, ROTQ_ACCURACY_OUTLIERS);
    return ROTQ_OK;
}

/* Mean over tokens of absmax / RMS of the row in v. */
static double crest(const float *v, int64_t t, int64_t ch) {
    double sum = 0.0;
    for (int64_t i = 0; i < t; i++) {
        double amax = 0.0, s2 = 0.0;
        for (int64_t j = 0; j < ch; j++) {
            double a = fabs((double)v[i * ch + j]);
            amax = a > amax ? a : amax;
            s2 += a * a;
        }
        sum += s2 > 0.0 ? amax / sqrt(s2 / (double)ch) : 0.0;
    }
    return sum / (double)t;
}

int rotq_accuracy_measure(const rotq_accuracy_options *o, rotq_accuracy_results *r) {
    memset(r, 0, sizeof *r);
    r->opt = *o;
    const char *bad = rotq_accuracy_check_options(o);
    if (bad) {
        fail(r, "options", bad);
        return -1;
    }
    int32_t m;
    rotq_hadamard_resolve((int32_t)o->channels, ROTQ_HADAMARD_FACTOR_AUTO, &r->factor, &m);
    if (!rotq_backend_available(o->backend)) {
        fail(r, "backend", rotq_status_string(ROTQ_ERR_BACKEND_UNAVAILABLE));
        return -1;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.exec.backend = o->backend;
    c.t = o->tokens;
    c.c = o->channels;
    size_t n = (size_t)(c.t * c.c);
    c.x = malloc(n * sizeof(float));
    c.xh = malloc(n * sizeof(float));
    c.signs = malloc((size_t)c.c);
    if (!c.x || !c.xh || !c.signs) {
        fail(r, "host memory", "out of memory");
        goto done;
    }
    rotq_accuracy_activations(c.x, c.t, c.c, o->seed, r->outlier_channels);
    rotq_accuracy_signs(c.signs, c.c, o->seed);
    /* q: one byte per value is enough for every format; scales: the most is one per 32. */
    if (ck_buf_alloc(&c.dx, o->backend, n * sizeof(float), 0) || ck_buf_alloc(&c.dq, o->backend, n, 0) ||
        ck_buf_alloc(&c.ds, o->backend, n / 32 * sizeof(float), 0) ||
        ck_buf_alloc(&c.dy, o->backend, n * sizeof(float), 0) ||
        ck_buf_alloc(&c.dsigns, o->backend, (size_t)c.c, 0) || ck_buf_upload(&c.dx, c.x, n * sizeof(float)) ||
        ck_buf_upload(&c.dsigns, c.signs, (size_t)c.c)) {
        fail(r, "backend memory", ck_buf_error());
        goto done;
    }
    for (int rot = 0; rot < R; rot++) {
        if (o->brief && !in_brief(ROTQ_ACCURACY_INT8, rot)) continue;
        if (rot == ROTQ_ACCURACY_NONE) {
            r->crest[rot] = crest(c.x, c.t, c.c);
            continue;
        }
        rotq_hadamard_params rp = rotation(&c, rot, 0);
        rotq_matrix xm = {c.dx.data, ROTQ_DTYPE_F32, c.t, c.c, c.c}, ym = {c.dy.data, ROTQ_DTYPE_F32, c.t, c.c, c.c};
        rotq_status st = rotq_hadamard(&c.exec, &rp, &xm, &ym);
        if (st == ROTQ_OK && fetch_y(&c, 0) != 0) fail(r, "rotation", ck_buf_error());
        else if (st == ROTQ_OK) r->crest[rot] = crest(c.xh, c.t, c.c);
        else if (st != ROTQ_ERR_NOT_SUPPORTED) fail(r, "rotq_hadamard", rotq_status_name(st));
    }
    for (int f = 0; f < F; f++)
        for (int rot = 0; rot < R; rot++) {
            if (o->brief && !in_brief(f, rot)) continue;
            int harness = 0;
            rotq_status st = round_trip(&c, f, rot, r, &harness);
            r->status[f][rot] = st;
            r->state[f][rot] = harness || (st != ROTQ_OK && st != ROTQ_ERR_NOT_SUPPORTED) ? ROTQ_ACCURACY_ERROR
                               : st == ROTQ_ERR_NOT_SUPPORTED                           ? ROTQ_ACCURACY_NOT_SUPPORTED
                                                                                        : ROTQ_ACCURACY_OK;
            if (harness) fail(r, "round trip", ck_buf_error());
            else if (r->state[f][rot] == ROTQ_ACCURACY_ERROR) fail(r, formats[f].key, rotq_status_name(st));
        }
done:
    ck_buf_free(&c.dx);
    ck_buf_free(&c.dq);
    ck_buf_free(&c.ds);
    ck_buf_free(&c.dy);
    ck_buf_free(&c.dsigns);
    free(c.x);
    free(c.xh);
    free(c.signs);
    return r->failures ? -1 : 0;
}

/* ---- output --------------------------------------------------------------- */

static const char *backend_name(rotq_backend b) { return b == ROTQ_BACKEND_CUDA ? "cuda" : "cpu"; }

static int column_used(const rotq_accuracy_results *r, int rot) {
    for (int f = 0; f < F; f++)
        if (r->state[f][rot] != ROTQ_ACCURACY_SKIPPED) return 1;
    return 0;
}

static int row_used(const rotq_accuracy_results *r, int f) {
    for (int rot = 0; rot < R; rot++)
        if (r->state[f][rot] != ROTQ_ACCURACY_SKIPPED) return 1;
    return 0;
}

static void rotation_title(const rotq_accuracy_results *r, int rot, char *buf, size_t size) {
    if (rot == ROTQ_ACCURACY_HADAMARD) snprintf(buf, size, "Hadamard n=%lld", (long long)r->opt.channels);
    else if (rot == ROTQ_ACCURACY_HADAMARD_SIGNS) snprintf(buf, size, "H n=%lld + signs", (long long)r->opt.channels);
    else snprintf(buf, size, "block-diag %d", ROTQ_ACCURACY_BLOCK);
}

typedef double snr_table[F][R];

static void print_cell(const rotq_accuracy_results *r, const snr_table snr, int f, int rot, FILE *out) {
    int w = rot == ROTQ_ACCURACY_NONE ? 8 : 17;
    const char *text = NULL;
    switch (r->state[f][rot]) {
    case ROTQ_ACCURACY_OK: break;
    case ROTQ_ACCURACY_NOT_SUPPORTED: text = "not supported"; break;
    case ROTQ_ACCURACY_ERROR: text = "ERROR"; break;
    default: text = "-"; break;
    }
    if (text) fprintf(out, "  %*s", w, text);
    else if (rot == ROTQ_ACCURACY_NONE) fprintf(out, "  %8.2f", snr[f][rot]);
    else if (r->state[f][ROTQ_ACCURACY_NONE] == ROTQ_ACCURACY_OK)
        fprintf(out, "  %8.2f %+8.2f", snr[f][rot], snr[f][rot] - snr[f][ROTQ_ACCURACY_NONE]);
    else fprintf(out, "  %8.2f %8s", snr[f][rot], "");
}

static void print_table(const rotq_accuracy_results *r, const snr_table snr, const char *first, FILE *out) {
    char title[40];
    fprintf(out, "\n  %-16s  %8s", "", "none");
    for (int rot = 1; rot < R; rot++)
        if (column_used(r, rot)) rotation_title(r, rot, title, sizeof title), fprintf(out, "  %17s", title);
    fprintf(out, "\n  %-16s  %8s", first, "SNR dB");
    for (int rot = 1; rot < R; rot++)
        if (column_used(r, rot)) fprintf(out, "  %8s %8s", "SNR dB", "gain");
    fputc('\n', out);
    for (int f = 0; f < F; f++) {
        if (!row_used(r, f)) continue;
        fprintf(out, "  %-16s", formats[f].label);
        for (int rot = 0; rot < R; rot++)
            if (column_used(r, rot)) print_cell(r, snr, f, rot, out);
        fputc('\n', out);
    }
}

void rotq_accuracy_print(const rotq_accuracy_results *r, FILE *out) {
    const rotq_accuracy_options *o = &r->opt;
    fprintf(out,
            "Synthetic activations (docs/accuracy.md): %lld tokens x %lld channels, seed %llu;\n"
            "%d outlier channels 50-100x larger than the rest, per-token magnitudes 0.25x-4x.\n"
            "Round trip on the %s backend: quantize -> dequantize (-> inverse rotation).\n"
            "SNR = 10 log10(sum x^2 / sum (x - x_hat)^2) in dB; gain = SNR - SNR with no rotation.\n",
            (long long)o->tokens, (long long)o->channels, (unsigned long long)o->seed, ROTQ_ACCURACY_OUTLIERS,
            backend_name(o->backend));
    if (r->factor > 1)
        fprintf(out, "Hadamard n=%lld is H_%d (x) H_%lld (QuaRot's factor).\n", (long long)o->channels,
                (int)r->factor, (long long)(o->channels / r->factor));
    print_table(r, r->snr_db, "all channels", out);
    fprintf(out, "  %-16s", "absmax/RMS");
    for (int rot = 0; rot < R; rot++) {
        if (!column_used(r, rot)) continue;
        if (r->crest[rot] > 0.0) fprintf(out, rot ? "  %8.2f %8s" : "  %8.2f", r->crest[rot], "");
        else fprintf(out, rot ? "  %17s" : "  %8s", "-");
    }
    fprintf(out, "\n  (mean over tokens of the row's largest |value| over its RMS, in the basis that is\n"
                 "   quantized: the smaller, the finer the steps left for the typical value)\n");
    if (o->brief) goto done;
    print_table(r, r->snr_ordinary_db, "ordinary ch.", out);
    fprintf(out, "  (the same round trips, SNR over the %lld non-outlier channels only: the outliers\n"
                 "   hold most of sum x^2, so the total above barely sees the ordinary channels)\n",
            (long long)(o->channels - ROTQ_ACCURACY_OUTLIERS));
done:
    if (r->error[0]) fprintf(out, "FAILED: %d failure(s); first: %s\n", r->failures, r->error);
}

static void json_number(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.4f", v);
    else fputs("null", f);
}

void rotq_accuracy_write_json(const rotq_accuracy_results *r, FILE *f) {
    static const char *const states[] = {"skipped", "ok", "not_supported", "error"};
    const rotq_accuracy_options *o = &r->opt;
    fprintf(f, "{\"backend\": \"%s\", \"tokens\": %lld, \"channels\": %lld, \"seed\": %llu, \"hadamard_factor\": %d,\n",
            backend_name(o->backend), (long long)o->tokens, (long long)o->channels, (unsigned long long)o->seed,
            (int)r->factor);
    fprintf(f, " \"outlier_channels\": [");
    for (int k = 0; k < ROTQ_ACCURACY_OUTLIERS; k++) fprintf(f, "%s%lld", k ? ", " : "", (long long)r->outlier_channels[k]);
    fprintf(f, "],\n \"absmax_over_rms\": {");
    for (int rot = 0; rot < R; rot++) {
        fprintf(f, "%s\"%s\": ", rot ? ", " : "", rotation_keys[rot]);
        json_number(f, r->crest[rot] > 0.0 ? r->crest[rot] : NAN);
    }
    fprintf(f, "},\n \"failures\": %d,\n \"rows\": [", r->failures);
    const char *sep = "\n";
    for (int fm = 0; fm < F; fm++)
        for (int rot = 0; rot < R; rot++) {
            rotq_accuracy_state s = r->state[fm][rot];
            if (s == ROTQ_ACCURACY_SKIPPED) continue;
            int ok = s == ROTQ_ACCURACY_OK, base = r->state[fm][ROTQ_ACCURACY_NONE] == ROTQ_ACCURACY_OK;
            fprintf(f, "%s  {\"format\": \"%s\", \"rotation\": \"%s\", \"state\": \"%s\", \"snr_db\": ", sep,
                    formats[fm].key, rotation_keys[rot], states[s]);
            json_number(f, ok ? r->snr_db[fm][rot] : NAN);
            fputs(", \"gain_db\": ", f);
            json_number(f, ok && base && rot ? r->snr_db[fm][rot] - r->snr_db[fm][ROTQ_ACCURACY_NONE] : NAN);
            fputs(", \"ordinary_snr_db\": ", f);
            json_number(f, ok ? r->snr_ordinary_db[fm][rot] : NAN);
            fputs(", \"ordinary_gain_db\": ", f);
            json_number(f, ok && base && rot ? r->snr_ordinary_db[fm][rot] - r->snr_ordinary_db[fm][ROTQ_ACCURACY_NONE]
                                             : NAN);
            if (s == ROTQ_ACCURACY_ERROR || s == ROTQ_ACCURACY_NOT_SUPPORTED)
                fprintf(f, ", \"status\": \"%s\"", rotq_status_name(r->status[fm][rot]));
            fputc('}', f);
            sep = ",\n";
        }
    fprintf(f, "\n ]}\n");
}
