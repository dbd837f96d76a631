/* rotq_bench: rows, table and JSON output, shared helpers. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "formats.h"

const rotq__bench_quant_kind rotq__bench_quant_kinds[3] = {
    {"int8", ROTQ_QUANT_INT8_ROW, ROTQ_DTYPE_I8, 0},
    {"fp8", ROTQ_QUANT_FP8_ROW, ROTQ_DTYPE_FP8_E4M3, 0},
    {"int4g128", ROTQ_QUANT_INT4_GROUP, ROTQ_DTYPE_I4X2, 128},
};

int64_t rotq__bench_scale_count(const rotq__bench_quant_kind *k, int64_t rows, int32_t n) {
    return k->group_size ? rows * (n / k->group_size) : rows;
}

const char *rotq_bench_backend_name(rotq_backend b) {
    switch (b) {
    case ROTQ_BACKEND_CPU: return "cpu";
    case ROTQ_BACKEND_CUDA: return "cuda";
    default: return "invalid";
    }
}

/* ---- results ------------------------------------------------------------ */

void rotq_bench_results_free(rotq_bench_results *r) {
    if (!r) return;
    free(r->rows);
    memset(r, 0, sizeof *r);
}

static int is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* "2^25" for powers of two >= 1024, the plain number otherwise. */
static const char *fmt_count(int64_t v, char *buf, size_t len) {
    if (is_pow2(v) && v >= 1024) {
        int e = 0;
        while ((INT64_C(1) << e) < v) e++;
        snprintf(buf, len, "2^%d", e);
    } else {
        snprintf(buf, len, "%lld", (long long)v);
    }
    return buf;
}

static void print_header(FILE *f) {
    fprintf(f, "%-15s %-15s %-5s %6s %10s %11s %9s %-12s %10s %7s %s\n", "group", "op", "dtype",
            "n", "elements", "us", "GB/s", "baseline", "base us", "ratio", "target");
}

void rotq__bench_group_begin(rotq__bench *b, const char *group, const char *what) {
    b->group = group;
    b->what = what;
    b->group_first = b->res->count;
}

/* Geometric mean of ratios over res->rows[first..last) in state OK. */
static double geomean(const rotq_bench_results *r, size_t first, size_t last, int *count,
                      int *met, int *with_target) {
    double s = 0.0;
    *count = *met = *with_target = 0;
    for (size_t i = first; i < last; i++) {
        const rotq_bench_row *row = &r->rows[i];
        if (row->state != ROTQ_BENCH_ROW_OK || !(row->ratio > 0.0)) continue;
        s += log(row->ratio);
        (*count)++;
        if (row->target > 0.0) {
            (*with_target)++;
            if (row->ratio <= row->target) (*met)++;
        }
    }
    return *count ? exp(s / *count) : 0.0;
}

static void print_geomean_line(FILE *f, const char *group, const rotq_bench_results *r,
                               size_t first, size_t last) {
    int count, met, with_target;
    double g = geomean(r, first, last, &count, &met, &with_target);
    int unsupported = 0, failed = 0;
    for (size_t i = first; i < last; i++) {
        unsupported += r->rows[i].state == ROTQ_BENCH_ROW_NOT_SUPPORTED;
        failed += r->rows[i].state == ROTQ_BENCH_ROW_ERROR || r->rows[i].state == ROTQ_BENCH_ROW_WRONG;
    }
    if (count == 0) {
        fprintf(f, "%-15s geomean ratio: none measured (%d not supported, %d failed)\n", group,
                unsupported, failed);
        return;
    }
    fprintf(f, "%-15s geomean ratio %.3f over %d rows", group, g, count);
    if (with_target) fprintf(f, "; %d of %d rows meet their target", met, with_target);
    if (unsupported) fprintf(f, "; %d not supported", unsupported);
    if (failed) fprintf(f, "; %d FAILED", failed);
    fputc('\n', f);
}

void rotq__bench_group_end(rotq__bench *b) {
    if (b->table && b->res->count > b->group_first) {
        print_geomean_line(b->table, b->group, b->res, b->group_first, b->res->count);
        fflush(b->table);
    }
}

void rotq_bench_print_geomeans(const rotq_bench_results *r, FILE *f) {
    size_t i = 0;
    while (i < r->count) {
        size_t j = i;
        while (j < r->count && strcmp(r->rows[j].group, r->rows[i].group) == 0) j++;
        print_geomean_line(f, r->rows[i].group, r, i, j);
        i = j;
    }
}

int rotq__bench_selected(const rotq__bench *b, const char *op, const char *dtype, int32_t n,
                         int64_t elements) {
    const char *filter = b->opt->filter;
    if (!filter || !*filter) return 1;
    char label[160];
    snprintf(label, sizeof label, "%s %s %s n=%ld elements=%lld", b->group, op, dtype, (long)n,
             (long long)elements);
    // Alternatives separated by '|': a row is selected when its label contains any of them.
    for (const char *f = filter;;) {
        const char *bar = strchr(f, '|');
        const size_t len = bar ? (size_t)(bar - f) : strlen(f);
        for (const char *p = label; len > 0 && *p; p++)
            if (strncmp(p, f, len) == 0) return 1;
        if (!bar) return 0;
        f = bar + 1;
    }
}

rotq_bench_row *rotq__bench_new_row(rotq__bench *b, const char *op, const char *dtype, int32_t n,
                                    int64_t elements, double bytes, const char *baseline,
                                    double target) {
    rotq_bench_results *r = b->res;
    if (r->count == r->capacity) {
        size_t cap = r->capacity ? 2 * r->capacity : 64;
        rotq_bench_row *rows = realloc(r->rows, cap * sizeof *rows);
        if (!rows) return NULL;
        r->rows = rows;
        r->capacity = cap;
    }
    rotq_bench_row *row = &r->rows[r->count++];
    memset(row, 0, sizeof *row);
    snprintf(row->group, sizeof row->group, "%s", b->group);
    snprintf(row->op, sizeof row->op, "%s", op);
    snprintf(row->dtype, sizeof row->dtype, "%s", dtype);
    snprintf(row->baseline, sizeof row->baseline, "%s", baseline);
    row->n = n;
    row->elements = elements;
    row->bytes = bytes;
    row->target = target;
    row->state = ROTQ_BENCH_ROW_OK;
    row->status = ROTQ_OK;
    return row;
}

void rotq__bench_row_fail(rotq_bench_row *row, rotq_bench_state state, rotq_status st,
                          const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(row->note, sizeof row->note, fmt, ap);
    va_end(ap);
    row->state = state;
    row->status = st;
}

void rotq__bench_finish_row(rotq__bench *b, rotq_bench_row *row) {
    if (row->state == ROTQ_BENCH_ROW_OK || row->state == ROTQ_BENCH_ROW_WRONG) {
        row->gbps = row->us > 0.0 ? row->bytes / (row->us * 1e3) : 0.0;
        row->ratio = row->baseline_us > 0.0 ? row->us / row->baseline_us : 0.0;
    }
    if (row->state == ROTQ_BENCH_ROW_ERROR || row->state == ROTQ_BENCH_ROW_WRONG) b->res->failures++;
    if (!b->table) return;

    char eb[24];
    FILE *f = b->table;
    if (row == &b->res->rows[b->group_first]) {
        fprintf(f, "\n## %s: %s\n", b->group, b->what);
        print_header(f);
    }
    fprintf(f, "%-15s %-15s %-5s %6ld %10s ", row->group, row->op, row->dtype, (long)row->n,
            fmt_count(row->elements, eb, sizeof eb));
    switch (row->state) {
    case ROTQ_BENCH_ROW_NOT_SUPPORTED:
        fprintf(f, "%11s   not supported (%s)\n", "-", rotq_status_name(row->status));
        break;
    case ROTQ_BENCH_ROW_ERROR:
        fprintf(f, "%11s   ERROR: %s\n", "-", row->note);
        break;
    default:
        fprintf(f, "%11.2f %9.1f %-12s %10.2f %7.3f", row->us, row->gbps, row->baseline,
                row->baseline_us, row->ratio);
        if (row->target > 0.0)
            fprintf(f, " <=%.2f %s", row->target, row->ratio <= row->target ? "met" : "MISSED");
        if (row->fused_speedup > 0.0) fprintf(f, "  fused speedup %.2fx", row->fused_speedup);
        if (row->state == ROTQ_BENCH_ROW_WRONG) fprintf(f, "  WRONG OUTPUT: %s", row->note);
        else if (row->note[0]) fprintf(f, "  (%s)", row->note);
        fputc('\n', f);
    }
    fflush(f);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v, int present) {
    if (present && isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

static const char *state_name(rotq_bench_state s) {
    switch (s) {
    case ROTQ_BENCH_ROW_OK: return "ok";
    case ROTQ_BENCH_ROW_NOT_SUPPORTED: return "not supported";
    case ROTQ_BENCH_ROW_ERROR: return "error";
    case ROTQ_BENCH_ROW_WRONG: return "wrong output";
    }
    return "unknown";
}

void rotq_bench_write_json(const rotq_bench_results *r, FILE *f) {
    fputs("[\n", f);
    for (size_t i = 0; i < r->count; i++) {
        const rotq_bench_row *row = &r->rows[i];
        int measured = row->state == ROTQ_BENCH_ROW_OK || row->state == ROTQ_BENCH_ROW_WRONG;
        fputs("  {\"group\": ", f);
        json_string(f, row->group);
        fputs(", \"op\": ", f);
        json_string(f, row->op);
        fputs(", \"dtype\": ", f);
        json_string(f, row->dtype);
        fprintf(f, ", \"n\": %ld, \"elements\": %lld, \"bytes\": %.0f", (long)row->n,
                (long long)row->elements, row->bytes);
        fputs(", \"us\": ", f);
        json_number(f, row->us, measured);
        fputs(", \"gbps\": ", f);
        json_number(f, row->gbps, measured);
        fputs(", \"baseline\": ", f);
        json_string(f, row->baseline);
        fputs(", \"baseline_us\": ", f);
        json_number(f, row->baseline_us, measured);
        fputs(", \"ratio\": ", f);
        json_number(f, row->ratio, measured);
        fputs(", \"target\": ", f);
        json_number(f, row->target, row->target > 0.0);
        if (row->fused_speedup > 0.0) {
            fputs(", \"fused_speedup\": ", f);
            json_number(f, row->fused_speedup, 1);
        }
        fputs(", \"device\": ", f);
        json_string(f, r->device);
        fputs(", \"status\": ", f);
        json_string(f, state_name(row->state));
        if (row->state != ROTQ_BENCH_ROW_OK && row->status != ROTQ_OK) {
            fputs(", \"rotq_status\": ", f);
            json_string(f, rotq_status_name(row->status));
        }
        if (row->note[0]) {
            fputs(", \"note\": ", f);
            json_string(f, row->note);
        }
        fputs(i + 1 < r->count ? "},\n" : "}\n", f);
    }
    fputs("]\n", f);
}

/* ---- disturbed baselines ------------------------------------------------ */

#define STEADY_BYTES (64.0 * 1048576.0) /* a flushed copy of this much is bandwidth-bound */
#define STEADY_MIN_ROWS 5
#define DISTURBED_BELOW 0.9 /* of the run's median copy bandwidth */
#define DISTURBED_LAUNCH_ABOVE 1.25 /* times the run's median empty launch */

static int measured(const rotq_bench_row *row) {
    return (row->state == ROTQ_BENCH_ROW_OK || row->state == ROTQ_BENCH_ROW_WRONG) && row->baseline_us > 0.0;
}

static int steady_copy_row(const rotq_bench_row *row) {
    return measured(row) && row->bytes >= STEADY_BYTES &&
           (!strcmp(row->baseline, "copy") || !strcmp(row->baseline, "memcpy"));
}

static int launch_row(const rotq_bench_row *row) { return measured(row) && !strcmp(row->baseline, "empty-kernel"); }

static double copy_gbps(const rotq_bench_row *row) { return row->bytes / (row->baseline_us * 1e3); }
static double launch_us(const rotq_bench_row *row) { return row->baseline_us; }

static void append_note(rotq_bench_row *row, const char *text) {
    const size_t len = strlen(row->note);
    snprintf(row->note + len, sizeof row->note - len, "%s%s", len ? "; " : "", text);
}

/* One kind of baseline judged against the median of the rows it applies to (at
   least STEADY_MIN_ROWS of them): a copy far below the run's bandwidth, or an
   empty launch far slower than the run's others (one measured 12.96 us against
   a median of 3.14, which made its row's ratio 0.38). */
typedef struct disturbed_rule {
    int (*applies)(const rotq_bench_row *);
    double (*value)(const rotq_bench_row *);
    double limit; /* times the median */
    int above;    /* disturbed above limit * median (else below) */
    const char *what, *unit;
    int digits;
} disturbed_rule;

static const disturbed_rule disturbed_rules[] = {
    {steady_copy_row, copy_gbps, DISTURBED_BELOW, 0, "copy at", "GB/s", 0},
    {launch_row, launch_us, DISTURBED_LAUNCH_ABOVE, 1, "empty launch", "us", 2},
};

static size_t flag_by_rule(rotq_bench_results *r, size_t first, FILE *table, const disturbed_rule *rule) {
    double *x = malloc((r->count - first) * sizeof *x);
    if (!x) return 0;
    int nx = 0;
    for (size_t i = first; i < r->count; i++)
        if (rule->applies(&r->rows[i])) x[nx++] = rule->value(&r->rows[i]);
    size_t marked = 0;
    if (nx >= STEADY_MIN_ROWS) {
        const double median = rotq__bench_median(x, nx), bound = rule->limit * median;
        for (size_t i = first; i < r->count; i++) {
            rotq_bench_row *row = &r->rows[i];
            if (!rule->applies(row)) continue;
            const double v = rule->value(row);
            if (rule->above ? v <= bound : v >= bound) continue;
            marked++;
            char text[96];
            snprintf(text, sizeof text, "disturbed: %s %.*f %s against the run's %.*f %s", rule->what, rule->digits,
                     v, rule->unit, rule->digits, median, rule->unit);
            append_note(row, text);
            if (table)
                fprintf(table, "warning: %s %s %s n=%ld: its baseline's %s %.*f %s against the run's median %.*f %s"
                        " (%s %.2fx): the device was disturbed, the ratio is not comparable\n",
                        row->group, row->op, row->dtype, (long)row->n, rule->what, rule->digits, v, rule->unit,
                        rule->digits, median, rule->unit, rule->above ? "above" : "below", rule->limit);
        }
    }
    free(x);
    return marked;
}

size_t rotq_bench_flag_disturbed(rotq_bench_results *r, size_t first, FILE *table) {
    if (!r || first >= r->count) return 0;
    size_t marked = 0;
    for (size_t k = 0; k < sizeof disturbed_rules / sizeof disturbed_rules[0]; k++)
        marked += flag_by_rule(r, first, table, &disturbed_rules[k]);
    return marked;
}

/* ---- entry points ------------------------------------------------------- */

int rotq_bench_collect(const rotq_bench_options *o, FILE *table, rotq_bench_results *res) {
    if (!o || !res) return ROTQ_BENCH_BAD_OPTIONS;
    if (o->ops & ~ROTQ_BENCH_OP_ALL || o->reps < 0 || o->threads < 0) return ROTQ_BENCH_BAD_OPTIONS;
    rotq_bench_options opt = *o;
    if (opt.ops == 0) opt.ops = ROTQ_BENCH_OP_ALL;
    rotq__bench b = {&opt, table, res, "", "", res->count};
    int failures_before = res->failures;
    const size_t first = res->count;
    int rc;
    switch (opt.backend) {
    case ROTQ_BACKEND_CPU:
        rc = rotq__bench_cpu(&b);
        break;
    case ROTQ_BACKEND_CUDA:
#ifdef ROTQ_WITH_CUDA
        if (!rotq_backend_available(ROTQ_BACKEND_CUDA)) return ROTQ_BENCH_UNAVAILABLE;
        rc = rotq__bench_cuda(&b);
        break;
#else
        return ROTQ_BENCH_UNAVAILABLE;
#endif
    default:
        return ROTQ_BENCH_BAD_OPTIONS;
    }
    if (rc != ROTQ_BENCH_OK) return rc;
    rotq_bench_flag_disturbed(res, first, table);
    return res->failures > failures_before ? ROTQ_BENCH_FAILED : ROTQ_BENCH_OK;
}

int rotq_bench_run(const rotq_bench_options *o, FILE *table, FILE *json) {
    rotq_bench_results res;
    memset(&res, 0, sizeof res);
    int rc = rotq_bench_collect(o, table, &res);
    if (json && (rc == ROTQ_BENCH_OK || rc == ROTQ_BENCH_FAILED)) rotq_bench_write_json(&res, json);
    rotq_bench_results_free(&res);
    return rc;
}

/* ---- helpers ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double rotq__bench_median(double *v, int n) {
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rotq__bench_fill_normal(float *dst, size_t n, uint64_t seed) {
    /* Sum of four uniforms, rescaled: cheap, bounded, close enough to normal for timing. */
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(&s);
        double u = 0.0;
        for (int k = 0; k < 4; k++) u += (double)((r >> (16 * k)) & 0xffff) / 65535.0;
        dst[i] = (float)((u - 2.0) * 1.7320508075688772); /* variance of the sum is 4/12 */
    }
}

size_t rotq__bench_bytes(rotq_dtype dt, int64_t n) {
    return (size_t)(((int64_t)rotq_dtype_bits(dt) * n + 7) / 8);
}

void rotq__bench_from_f32(const float *src, void *dst, rotq_dtype dt, size_t n) {
    switch (dt) {
    case ROTQ_DTYPE_F32: memcpy(dst, src, n * sizeof(float)); break;
    case ROTQ_DTYPE_F16:
        for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = rotq_f32_to_f16(src[i]);
        break;
    case ROTQ_DTYPE_BF16:
        for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = rotq_f32_to_bf16(src[i]);
        break;
    default: break;
    }
}

void rotq__bench_to_f32(const void *src, rotq_dtype dt, float *dst, size_t n) {
    switch (dt) {
    case ROTQ_DTYPE_F32: memcpy(dst, src, n * sizeof(float)); break;
    case ROTQ_DTYPE_F16:
        for (size_t i = 0; i < n; i++) dst[i] = rotq_f16_to_f32(((const uint16_t *)src)[i]);
        break;
    case ROTQ_DTYPE_BF16:
        for (size_t i = 0; i < n; i++) dst[i] = rotq_bf16_to_f32(((const uint16_t *)src)[i]);
        break;
    default:
        for (size_t i = 0; i < n; i++) dst[i] = 0.0f;
        break;
    }
}

static double energy_f32(const float *v, int32_t n) {
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) s += (double)v[i] * v[i];
    return s;
}

static double row_energy(const void *row, rotq_dtype dt, int32_t n, float *tmp) {
    rotq__bench_to_f32(row, dt, tmp, (size_t)n);
    return energy_f32(tmp, n);
}

int rotq__bench_check_hadamard_row(const void *x, const void *y, rotq_dtype dt, int32_t n,
                                   char *why, size_t why_len) {
    float *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp) {
        snprintf(why, why_len, "out of host memory for the check");
        return -1;
    }
    double ex = row_energy(x, dt, n, tmp), ey = row_energy(y, dt, n, tmp);
    free(tmp);
    /* Orthonormal scale: energy is preserved up to the output rounding (<1% for bf16). */
    double rel = ex > 0.0 ? fabs(ey - ex) / ex : 1.0;
    if (!(rel <= 0.02)) {
        snprintf(why, why_len, "row energy %.4g after the transform vs %.4g before", ey, ex);
        return 1;
    }
    return 0;
}

int rotq__bench_check_quant_row(const void *x, rotq_dtype xdt, const rotq_quant_params *qp,
                                const void *q, rotq_dtype qdt, const float *scales, int32_t n,
                                char *why, size_t why_len) {
    float *tmp = malloc((size_t)n * sizeof *tmp);
    if (!tmp) {
        snprintf(why, why_len, "out of host memory for the check");
        return -1;
    }
    double ex = row_energy(x, xdt, n, tmp);
    rotq_quant_params dp = *qp;
    dp.rotate = NULL;
    rotq_exec cpu = {ROTQ_BACKEND_CPU, 1, NULL, NULL, 0};
    rotq_matrix qm = {(void *)q, qdt, 1, n, n};
    rotq_matrix ym = {tmp, ROTQ_DTYPE_F32, 1, n, n};
    rotq_status st = rotq_dequantize(&cpu, &dp, &qm, scales, &ym);
    if (st != ROTQ_OK) {
        free(tmp);
        snprintf(why, why_len, "unchecked: CPU dequantize: %s", rotq_status_name(st));
        return -1;
    }
    double eq = energy_f32(tmp, n);
    free(tmp);
    /* The rotation keeps the energy; int4 of near-normal data loses ~1-3% of it. */
    double rel = ex > 0.0 ? fabs(eq - ex) / ex : 1.0;
    if (!(rel <= 0.10)) {
        snprintf(why, why_len, "dequantized row energy %.4g vs input %.4g", eq, ex);
        return 1;
    }
    return 0;
}
