/*
 * CPU rows: time with CLOCK_MONOTONIC, one warm-up call, median of N calls;
 * baseline: memcpy of (bytes read + bytes written) / 2 in the same run.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_internal.h"

#define CPU_FULL_ELEMENTS (INT64_C(1) << 24)
#define CPU_QUICK_ELEMENTS (INT64_C(1) << 20)
#define CPU_MAX_BYTES_PER_ELEMENT 4 /* f32 */

typedef struct cpu_state {
    rotq__bench *b;
    rotq_exec exec;
    int reps;
    int64_t max_elements;
    float *src;      /* max_elements pseudo-normal values */
    void *x, *y;     /* max_elements * 4 bytes each */
    void *q;         /* max_elements bytes */
    float *scales;   /* max_elements / 32 floats (>= any row count or group count) */
    double *times;   /* reps */
} cpu_state;

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* One op call to time. */
typedef rotq_status (*cpu_op)(cpu_state *s, const void *arg);

/* Runs op once (warm-up; its status decides), then reps timed calls; median in us. */
static rotq_status time_op(cpu_state *s, cpu_op op, const void *arg, double *us) {
    rotq_status st = op(s, arg);
    if (st != ROTQ_OK) return st;
    for (int r = 0; r < s->reps; r++) {
        double t0 = now_us();
        st = op(s, arg);
        s->times[r] = now_us() - t0;
        if (st != ROTQ_OK) return st;
    }
    *us = rotq__bench_median(s->times, s->reps);
    return ROTQ_OK;
}

static double time_memcpy(cpu_state *s, size_t bytes) {
    memcpy(s->y, s->x, bytes); /* warm-up */
    for (int r = 0; r < s->reps; r++) {
        double t0 = now_us();
        memcpy(s->y, s->x, bytes);
        s->times[r] = now_us() - t0;
    }
    return rotq__bench_median(s->times, s->reps);
}

/* Records a failed op's status on the row; returns 1 when the op ran. */
static int op_ran(rotq_bench_row *row, rotq_status st) {
    if (st == ROTQ_OK) return 1;
    rotq__bench_row_fail(row, st == ROTQ_ERR_NOT_SUPPORTED ? ROTQ_BENCH_ROW_NOT_SUPPORTED : ROTQ_BENCH_ROW_ERROR,
                         st, "%s", rotq_status_string(st));
    return 0;
}

/* ---- Hadamard ------------------------------------------------------------ */

typedef struct had_arg {
    rotq_hadamard_params p;
    rotq_matrix x, y;
} had_arg;

static rotq_status run_hadamard(cpu_state *s, const void *arg) {
    const had_arg *a = arg;
    return rotq_hadamard(&s->exec, &a->p, &a->x, &a->y);
}

static void hadamard_row(cpu_state *s, rotq_dtype dt, int32_t n, int64_t target_elements) {
    int64_t rows = target_elements / n > 0 ? target_elements / n : 1;
    int64_t elements = rows * n;
    const char *dn = rotq_dtype_name(dt);
    if (!rotq__bench_selected(s->b, "hadamard", dn, n, elements)) return;
    size_t in_bytes = rotq__bench_bytes(dt, elements);
    rotq_bench_row *row = rotq__bench_new_row(s->b, "hadamard", dn, n, elements,
                                              2.0 * (double)in_bytes, "memcpy", 0.0);
    if (!row) return;
    rotq__bench_from_f32(s->src, s->x, dt, (size_t)elements);

    had_arg a;
    a.p = rotq_hadamard_params_default(n);
    a.x = (rotq_matrix){s->x, dt, rows, n, n};
    a.y = (rotq_matrix){s->y, dt, rows, n, n};
    if (op_ran(row, time_op(s, run_hadamard, &a, &row->us))) {
        char why[96];
        size_t last = rotq__bench_bytes(dt, (rows - 1) * n);
        if (rotq__bench_check_hadamard_row(s->x, s->y, dt, n, why, sizeof why) > 0 ||
            rotq__bench_check_hadamard_row((char *)s->x + last, (char *)s->y + last, dt, n, why,
                                           sizeof why) > 0)
            rotq__bench_row_fail(row, ROTQ_BENCH_ROW_WRONG, ROTQ_OK, "%s", why);
        row->baseline_us = time_memcpy(s, in_bytes);
    }
    rotq__bench_finish_row(s->b, row);
}

/* ---- quantize ------------------------------------------------------------ */

typedef struct quant_arg {
    rotq_hadamard_params rp;
    rotq_quant_params qp;
    rotq_matrix x, q;
} quant_arg;

static rotq_status run_quant(cpu_state *s, const void *arg) {
    const quant_arg *a = arg;
    return rotq_quantize(&s->exec, &a->qp, &a->x, &a->q, s->scales, NULL);
}

static void quant_row(cpu_state *s, const rotq__bench_quant_kind *k, int rotate, int32_t n,
                      int64_t target_elements) {
    const rotq_dtype dt = ROTQ_DTYPE_F16;
    int64_t rows = target_elements / n > 0 ? target_elements / n : 1;
    int64_t elements = rows * n;
    char op[48];
    snprintf(op, sizeof op, "%s%s", rotate ? "rot+" : "", k->name);
    if (!rotq__bench_selected(s->b, op, rotq_dtype_name(dt), n, elements)) return;
    double bytes = (double)rotq__bench_bytes(dt, elements) +
                   (double)rotq__bench_bytes(k->qdtype, elements) +
                   4.0 * (double)rotq__bench_scale_count(k, rows, n);
    rotq_bench_row *row = rotq__bench_new_row(s->b, op, rotq_dtype_name(dt), n, elements, bytes,
                                              "memcpy", 0.0);
    if (!row) return;
    rotq__bench_from_f32(s->src, s->x, dt, (size_t)elements);

    quant_arg a;
    a.rp = rotq_hadamard_params_default(n);
    memset(&a.qp, 0, sizeof a.qp);
    a.qp.kind = k->kind;
    a.qp.group_size = k->group_size;
    a.qp.rotate = rotate ? &a.rp : NULL;
    a.x = (rotq_matrix){s->x, dt, rows, n, n};
    a.q = (rotq_matrix){s->q, k->qdtype, rows, n, n};
    if (op_ran(row, time_op(s, run_quant, &a, &row->us))) {
        char why[96];
        int c = rotq__bench_check_quant_row(s->x, dt, &a.qp, s->q, k->qdtype, s->scales, n, why,
                                            sizeof why);
        if (c > 0) rotq__bench_row_fail(row, ROTQ_BENCH_ROW_WRONG, ROTQ_OK, "%s", why);
        else if (c < 0) snprintf(row->note, sizeof row->note, "%s", why);
        row->baseline_us = time_memcpy(s, (size_t)(bytes / 2.0));
    }
    rotq__bench_finish_row(s->b, row);
}

/* ---- driver -------------------------------------------------------------- */

static void describe_cpu(char *buf, size_t len, int threads) {
    char model[96] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) {
                    c++;
                    while (*c == ' ' || *c == '\t') c++;
                    c[strcspn(c, "\n")] = 0;
                    snprintf(model, sizeof model, "%s", c);
                }
                break;
            }
        }
        fclose(f);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads > 0) snprintf(buf, len, "cpu: %s, %d threads", model, threads);
    else snprintf(buf, len, "cpu: %s, %ld cores (one thread each)", model, cores);
}

int rotq__bench_cpu(rotq__bench *b) {
    const rotq_bench_options *o = b->opt;
    cpu_state s;
    memset(&s, 0, sizeof s);
    s.b = b;
    s.exec = (rotq_exec){ROTQ_BACKEND_CPU, o->threads, NULL, NULL, 0};
    s.reps = o->reps ? o->reps : (o->quick ? 5 : 7);
    s.max_elements = o->quick ? CPU_QUICK_ELEMENTS : CPU_FULL_ELEMENTS;
    describe_cpu(b->res->device, sizeof b->res->device, o->threads);
    if (b->table) fprintf(b->table, "device: %s\n", b->res->device);

    size_t e = (size_t)s.max_elements;
    s.src = malloc(e * sizeof(float));
    s.x = malloc(e * CPU_MAX_BYTES_PER_ELEMENT);
    s.y = malloc(e * CPU_MAX_BYTES_PER_ELEMENT);
    s.q = malloc(e);
    s.scales = malloc(e / 32 * sizeof(float));
    s.times = malloc((size_t)s.reps * sizeof(double));
    int rc = ROTQ_BENCH_OK;
    if (!s.src || !s.x || !s.y || !s.q || !s.scales || !s.times) {
        if (b->table) fprintf(b->table, "error: out of host memory for the CPU benchmark buffers\n");
        b->res->failures++;
        rc = ROTQ_BENCH_FAILED;
        goto done;
    }
    rotq__bench_fill_normal(s.src, e, 0x726f7471ull);

    if (o->ops & ROTQ_BENCH_OP_HADAMARD) {
        static const int32_t full_n[] = {128, 1024, 4096, 14336, 16384};
        static const int32_t quick_n[] = {128, 4096, 14336};
        static const rotq_dtype dts[] = {ROTQ_DTYPE_F32, ROTQ_DTYPE_F16, ROTQ_DTYPE_BF16};
        rotq__bench_group_begin(b, "cpu-hadamard",
                                o->quick ? "orthonormal transform, 2^20 elements, vs memcpy"
                                         : "orthonormal transform, ~2^24 elements, vs memcpy");
        for (int d = 0; d < 3; d++) {
            if (o->quick && dts[d] != ROTQ_DTYPE_F16) continue;
            const int32_t *ns = o->quick ? quick_n : full_n;
            int count = o->quick ? 3 : 5;
            for (int i = 0; i < count; i++) hadamard_row(&s, dts[d], ns[i], s.max_elements);
        }
        rotq__bench_group_end(b);
    }
    if (o->ops & ROTQ_BENCH_OP_QUANT) {
        static const int32_t full_n[] = {4096, 14336};
        rotq__bench_group_begin(b, "cpu-quant",
                                "f16 in, quantize with/without a rotation of size n, vs memcpy");
        for (int k = 0; k < 3; k++) {
            const rotq__bench_quant_kind *kind = &rotq__bench_quant_kinds[k];
            if (o->quick && kind->kind == ROTQ_QUANT_FP8_ROW) continue;
            for (int rot = 0; rot < 2; rot++)
                for (int i = 0; i < (o->quick ? 1 : 2); i++)
                    quant_row(&s, kind, rot, full_n[i], s.max_elements);
        }
        rotq__bench_group_end(b);
    }
done:
    free(s.src);
    free(s.x);
    free(s.y);
    free(s.q);
    free(s.scales);
    free(s.times);
    return rc;
}
