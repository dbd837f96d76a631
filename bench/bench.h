/*
 * rotq_bench: the benchmark tables behind `rotq bench` and `rotq demo`.
 *
 * Every row times one op configuration and, in the same run and right next to
 * it, a baseline that moves the same bytes or does the same nothing:
 *   - CPU rows:  memcpy of (bytes read + bytes written) / 2, so the copy reads
 *                and writes as many bytes as the op;
 *   - CUDA rows: cudaMemcpyAsync device-to-device of the same bytes, or, for
 *                decode-size (latency-bound) rows, an empty kernel launch.
 * Times are medians; CUDA rows use CUDA events with warm-up and an L2 flush
 * (cudaMemsetAsync over >= 2x the L2 size) before every timed repetition,
 * outside the timed region. ratio = op time / baseline time, so 1.0 means
 * "as fast as the copy" and a row meets its target when ratio <= target.
 *
 * This is a tool library (bench/, not part of librotq): it prints, it may
 * allocate large buffers, and it returns a status rather than aborting.
 */
#ifndef ROTQ_BENCH_H
#define ROTQ_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rotq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which ops to time (rotq_bench_options.ops). */
#define ROTQ_BENCH_OP_HADAMARD 0x1u
#define ROTQ_BENCH_OP_QUANT 0x2u
#define ROTQ_BENCH_OP_ALL (ROTQ_BENCH_OP_HADAMARD | ROTQ_BENCH_OP_QUANT)

typedef struct rotq_bench_options {
    rotq_backend backend; /* ROTQ_BACKEND_CPU or ROTQ_BACKEND_CUDA */
    unsigned ops;         /* ROTQ_BENCH_OP_* mask; 0 = all */
    int quick;            /* 1: a small subset of the rows (seconds, for `rotq demo`) */
    int reps;             /* timed repetitions per row; 0 = default (CPU 7, CUDA 30; CUDA >= 20) */
    int threads;          /* CPU worker threads; 0 = one per core */
    const char *filter;   /* only rows whose label contains this (e.g. "n=4096"), or any of
                             '|'-separated alternatives; NULL = all */
} rotq_bench_options;

typedef enum rotq_bench_state {
    ROTQ_BENCH_ROW_OK = 0,
    ROTQ_BENCH_ROW_NOT_SUPPORTED, /* the op returned ROTQ_ERR_NOT_SUPPORTED: no number */
    ROTQ_BENCH_ROW_ERROR,         /* the op or the harness failed: status/note say why */
    ROTQ_BENCH_ROW_WRONG          /* the op ran but its output failed the sanity check */
} rotq_bench_state;

typedef struct rotq_bench_row {
    char group[24];       /* e.g. "hadamard-pow2", "quant-fused", "cpu-hadamard" */
    char op[32];          /* e.g. "hadamard", "hadamard28x512", "rot+int8", "int4g128" */
    char dtype[8];        /* input dtype: "f32", "f16", "bf16" */
    int32_t n;            /* Hadamard size / row length */
    int64_t elements;     /* rows * n */
    double bytes;         /* bytes read + bytes written by the op */
    double us;            /* median op time */
    double gbps;          /* bytes / us / 1e3 */
    char baseline[16];    /* "memcpy", "copy", "empty-kernel" */
    double baseline_us;   /* median baseline time */
    double ratio;         /* us / baseline_us */
    double target;        /* ratio asked for (<= target); 0 = none */
    double fused_speedup; /* unfused rows: unfused us / fused us (> 1: fusing pays); 0 = n/a */
    rotq_bench_state state;
    rotq_status status; /* the op's status when state != OK (ROTQ_OK for harness errors) */
    char note[96];      /* why a row failed, or a remark */
} rotq_bench_row;

typedef struct rotq_bench_results {
    rotq_bench_row *rows;
    size_t count;
    size_t capacity;
    char device[160]; /* the device every row ran on */
    int failures;     /* rows in state ERROR or WRONG, plus harness failures */
} rotq_bench_results;

/* Return values of rotq_bench_collect and rotq_bench_run. */
#define ROTQ_BENCH_OK 0
#define ROTQ_BENCH_FAILED 1      /* some row failed (error or wrong output) */
#define ROTQ_BENCH_UNAVAILABLE 2 /* the backend is not compiled in or has no device */
#define ROTQ_BENCH_BAD_OPTIONS 3

/*
 * Runs the rows selected by o, printing each row to table (NULL: silent) as it
 * completes and a geometric mean of the ratios after each group, and appends
 * the rows to res (which must be zeroed or previously filled; free it with
 * rotq_bench_results_free).
 */
int rotq_bench_collect(const rotq_bench_options *o, FILE *table, rotq_bench_results *res);

/* collect, then write the rows as JSON to json (NULL: skip). */
int rotq_bench_run(const rotq_bench_options *o, FILE *table, FILE *json);

/* A JSON array of row objects: {group, op, dtype, n, elements, us, gbps, baseline,
   baseline_us, ratio, target, device, status, ...}; numbers are null when absent. */
void rotq_bench_write_json(const rotq_bench_results *r, FILE *f);

/* An SVG bar chart of ratio vs baseline, one bar per row, with target marks. */
void rotq_bench_write_svg(const rotq_bench_results *r, FILE *f);

/* Marks the measured rows [first, r->count) whose copy baseline ran below 90% of
   the median copy bandwidth of those rows (rows of at least 64 MiB only, where a
   flushed copy is bandwidth-bound and repeats within about 1%; at least 5 such
   rows): the device was disturbed while they ran (another process, clocks), so
   their ratios are not comparable with the rest of the run. Likewise the rows
   whose empty-launch baseline took more than 1.25x the median of those rows' (at
   least 5 of them). Each marked row gets a note (in the JSON too) and, with
   table != NULL, a warning line. Returns the number of rows marked.
   rotq_bench_collect calls it on the rows it adds (after the group summaries,
   which still count a marked row). */
size_t rotq_bench_flag_disturbed(rotq_bench_results *r, size_t first, FILE *table);

/* Geometric mean of the ratios of each group's measured rows, one line a group. */
void rotq_bench_print_geomeans(const rotq_bench_results *r, FILE *f);

void rotq_bench_results_free(rotq_bench_results *r);

/* Human-readable backend name used in tables ("cpu", "cuda"). */
const char *rotq_bench_backend_name(rotq_backend b);

#ifdef __cplusplus
}
#endif

#endif /* ROTQ_BENCH_H */
