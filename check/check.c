/* The op-suite runner: rotq_check_run, case bookkeeping and reporting. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ck.h"
#include "rng.h"

const char *ck_backend_name(rotq_backend b) {
    return b == ROTQ_BACKEND_CPU ? "cpu" : b == ROTQ_BACKEND_CUDA ? "cuda" : "?";
}

rotq_exec ck_exec(rotq_backend b, int variant, struct CUstream_st *stream) {
    static const int threads[3] = {0, 1, 3};
    rotq_exec e;
    memset(&e, 0, sizeof e);
    e.backend = b;
    e.threads = threads[(variant % 3 + 3) % 3];
    e.stream = stream;
    return e;
}

/* Whether name contains one of the '|'-separated alternatives of filter. */
static int ck_filter_match(const char *name, const char *filter) {
    const size_t nl = strlen(name);
    for (const char *p = filter;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        for (size_t i = 0; len > 0 && i + len <= nl; i++)
            if (!strncmp(name + i, p, len)) return 1;
        if (!bar) return 0;
        p = bar + 1;
    }
}

int ck_case_begin(ck_ctx *c, const char *name, uint64_t *seed) {
    uint64_t index = c->case_index++;
    if (c->opt->filter && *c->opt->filter && !ck_filter_match(name, c->opt->filter)) return 0;
    *seed = ck_mix64(ck_mix64(c->opt->seed ^ c->op_salt) + index);
    return 1;
}

int ck_backend_begin(ck_ctx *c, rotq_backend b, const char *name) {
    if (!(c->backends & (1u << b))) return 0;
    if (c->available[b]) return 1;
    c->sum.skipped++;
    if (c->opt->verbose) fprintf(c->out, "skip [%s] %s: backend not available\n", ck_backend_name(b), name);
    return 0;
}

static void vappend(ck_result *r, const char *fmt, va_list ap) {
    if (r->len + 1 >= sizeof r->msg) return;
    int n = vsnprintf(r->msg + r->len, sizeof r->msg - r->len, fmt, ap);
    if (n < 0) return;
    r->len += (size_t)n;
    if (r->len >= sizeof r->msg) r->len = sizeof r->msg - 1;
    if (r->len + 1 < sizeof r->msg) r->msg[r->len++] = '\n', r->msg[r->len] = 0;
}

void ck_fail(ck_result *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    r->verdict = CK_FAIL;
    vappend(r, fmt, ap);
    va_end(ap);
}

void ck_skip(ck_result *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (r->verdict == CK_PASS) r->verdict = CK_SKIP;
    vappend(r, fmt, ap);
    va_end(ap);
}

void ck_note(ck_result *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vappend(r, fmt, ap);
    va_end(ap);
}

static void print_indented(FILE *out, const char *msg) {
    const char *p = msg;
    while (*p) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(out, "    %.*s\n", n, p);
        p += n + (nl ? 1 : 0);
    }
}

static double wall_seconds(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ck_report(ck_ctx *c, rotq_backend b, const char *name, const ck_result *r) {
    const char *be = ck_backend_name(b);
    /* -v prints how long the case took (since the previous report: inputs, the
       reference and the op), to find what makes the table slow. */
    double now = wall_seconds(), took = now - c->last_report_s;
    c->last_report_s = now;
    if (r->verdict == CK_FAIL) {
        c->sum.failed++;
        fprintf(c->out, "FAIL [%s] %s\n", be, name);
        print_indented(c->out, r->msg);
    } else if (r->verdict == CK_SKIP) {
        c->sum.skipped++;
        if (strstr(r->msg, "not supported")) c->not_supported[b]++;
        if (c->opt->verbose) {
            fprintf(c->out, "skip [%s] %s\n", be, name);
            print_indented(c->out, r->msg);
        }
    } else {
        c->sum.passed++;
        if (c->opt->verbose) {
            fprintf(c->out, "ok   [%s] %s (%.2f s)\n", be, name, took);
            if (c->opt->verbose > 1) print_indented(c->out, r->msg);
        }
    }
    fflush(c->out);
}

int rotq_check_run(const rotq_check_options *opt, rotq_check_summary *summary, FILE *out) {
    static const struct {
        const char *name;
        void (*run)(ck_ctx *);
    } ops[] = {
        {"api", ck_op_api},
        {"hadamard", ck_op_hadamard},
        {"quantize", ck_op_quantize},
        {"dequantize", ck_op_dequantize},
        {"badargs", ck_op_badargs},
    };
    rotq_check_options defaults;
    memset(&defaults, 0, sizeof defaults);
    ck_ctx c;
    memset(&c, 0, sizeof c);
    c.opt = opt ? opt : &defaults;
    c.out = out ? out : stdout;
    c.last_report_s = wall_seconds();
    c.backends = c.opt->backends ? c.opt->backends : (1u << ROTQ_BACKEND_COUNT) - 1u;
    for (int b = 0; b < ROTQ_BACKEND_COUNT; b++) c.available[b] = rotq_backend_available((rotq_backend)b);
    fprintf(c.out, "rotq check: %s; seed %llu; %s table; selected:", rotq_build_info(),
            (unsigned long long)c.opt->seed, c.opt->full ? "full" : "quick");
    for (int b = 0; b < ROTQ_BACKEND_COUNT; b++)
        if (c.backends & (1u << b))
            fprintf(c.out, " %s%s", ck_backend_name((rotq_backend)b), c.available[b] ? "" : " (unavailable: skipped)");
    fprintf(c.out, "\n");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        c.op_salt = ck_mix64(0x726f7471ull + i); /* "rotq" + op position */
        c.case_index = 0;
        ops[i].run(&c);
    }
    for (int b = 0; b < ROTQ_BACKEND_COUNT; b++)
        if (c.not_supported[b])
            fprintf(c.out, "note: %d case(s) skipped on %s as ROTQ_ERR_NOT_SUPPORTED\n", c.not_supported[b],
                    ck_backend_name((rotq_backend)b));
    fprintf(c.out, "%d passed, %d failed, %d skipped\n", c.sum.passed, c.sum.failed, c.sum.skipped);
    if (summary) *summary = c.sum;
    return c.sum.failed ? 1 : 0;
}
