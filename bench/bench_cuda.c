/*
 * CUDA rows (compiled only with ROTQ_WITH_CUDA). The harness:
 *   - warm-up calls, then >= 20 timed repetitions, median;
 *   - before every timed repetition a cudaMemsetAsync over a buffer of at
 *     least twice the L2 size evicts the inputs from L2; it runs before the
 *     start event, so it is outside the timed region;
 *   - each repetition is bracketed by CUDA events on the bench's stream;
 *   - baselines are timed the same way, their repetitions interleaved with the
 *     op's (baseline, op, baseline, op, ...: a disturbance of the device that
 *     lasts part of a row's timing lands on both medians, not on one of them):
 *     a device-to-device cudaMemcpyAsync moving as many bytes (read + written)
 *     as the op (a size rounded to 4 KiB, the time scaled back:
 *     copy_baseline_bytes), or, for decode-size rows, one launch of an empty
 *     kernel (empty_kernel.cu).
 * Rows follow the Hadamard and quantization issues' tables; targets are the
 * ratios those issues ask for.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_internal.h"

/* bench/empty_kernel.cu */
cudaError_t rotq_bench_launch_empty(cudaStream_t stream);

#define E(k) (INT64_C(1) << (k))
#define TARGET_POW2 1.08
#define TARGET_FACTOR 1.15
#define TARGET_DECODE 1.3
#define TARGET_QUANT 1.15
#define WARMUP 3
#define MIN_REPS 20
#define DEFAULT_REPS 30
#define SEED_ELEMENTS E(20) /* host-generated block, tiled over the input buffer */

typedef struct cuda_state {
    rotq__bench *b;
    cudaStream_t stream;
    cudaEvent_t ev0, ev1;
    rotq_exec exec;
    int reps;
    void *x, *y;          /* x_cap bytes each: input, and output / unfused intermediate */
    size_t x_cap;
    rotq_dtype x_fill;    /* dtype x currently holds (F32 = not filled yet) */
    void *q;              /* q_cap bytes */
    size_t q_cap;
    float *scales;        /* s_cap floats */
    size_t s_cap;
    void *flush;          /* flush_bytes, >= 2x L2 */
    size_t flush_bytes;
    double *times;        /* reps: the op's */
    double *base_times;   /* reps: the baseline's */
    float *seed;          /* SEED_ELEMENTS floats */
    void *hseed;          /* SEED_ELEMENTS 16-bit values */
    unsigned char *h0, *h1; /* host staging for one row (ROTQ_HADAMARD_MAX_SIZE * 4 bytes) */
    float *hs;            /* host scales of one row */
    int8_t *signs;        /* ROTQ_HADAMARD_MAX_SIZE random +-1 (the sign-vector rows) */
    cudaError_t last_error;
} cuda_state;

#define HOST_ROW_BYTES ((size_t)ROTQ_HADAMARD_MAX_SIZE * 4)

static int cuda_ok(cuda_state *s, cudaError_t e) {
    if (e != cudaSuccess) {
        s->last_error = e;
        /* Clear a non-sticky error here, or the next row's first launch check
           would take it for its own (a sticky one stays: the context is lost). */
        cudaGetLastError();
        return 0;
    }
    return 1;
}

/* ---- timing -------------------------------------------------------------- */

typedef rotq_status (*cuda_op)(cuda_state *s, const void *arg); /* enqueues on s->stream */

/* One timed repetition: an L2 flush (outside the timed region), then the
   op between two events; its time in us. */
static rotq_status time_once(cuda_state *s, cuda_op op, const void *arg, int r, double *us) {
    if (!cuda_ok(s, cudaMemsetAsync(s->flush, r & 0xff, s->flush_bytes, s->stream))) return ROTQ_ERR_CUDA;
    if (!cuda_ok(s, cudaEventRecord(s->ev0, s->stream))) return ROTQ_ERR_CUDA;
    rotq_status st = op(s, arg);
    if (st != ROTQ_OK) return st;
    if (!cuda_ok(s, cudaEventRecord(s->ev1, s->stream))) return ROTQ_ERR_CUDA;
    if (!cuda_ok(s, cudaEventSynchronize(s->ev1))) return ROTQ_ERR_CUDA;
    float ms = 0.0f;
    if (!cuda_ok(s, cudaEventElapsedTime(&ms, s->ev0, s->ev1))) return ROTQ_ERR_CUDA;
    *us = (double)ms * 1e3;
    return ROTQ_OK;
}

static rotq_status warm_up(cuda_state *s, cuda_op op, const void *arg) {
    for (int w = 0; w < WARMUP; w++) {
        rotq_status st = op(s, arg);
        if (st != ROTQ_OK) return st;
    }
    return cuda_ok(s, cudaStreamSynchronize(s->stream)) ? ROTQ_OK : ROTQ_ERR_CUDA;
}

static rotq_status run_copy(cuda_state *s, const void *arg) {
    size_t bytes = *(const size_t *)arg;
    return cuda_ok(s, cudaMemcpyAsync(s->y, s->x, bytes, cudaMemcpyDeviceToDevice, s->stream))
               ? ROTQ_OK
               : ROTQ_ERR_CUDA;
}

static rotq_status run_empty(cuda_state *s, const void *arg) {
    (void)arg;
    return cuda_ok(s, rotq_bench_launch_empty(s->stream)) ? ROTQ_OK : ROTQ_ERR_CUDA;
}

/* Bytes of the copy baseline for `half` = (bytes read + written) / 2: rounded
   down to a multiple of 4 KiB. cudaMemcpyAsync device-to-device ran 7-10% slower
   on sizes that are not a multiple of 1024 bytes (H100, CUDA 13.0, 2^25-element
   rows: 2300-2540 GB/s against 2560-2720 for aligned sizes in the same run: the
   14336-column quantize rows and 172 * 64), which made those rows' ratios look
   better than they were; the time is scaled back to `half` bytes. */
static size_t copy_baseline_bytes(double half) {
    const size_t b = (size_t)half;
    return b >= 8192 ? b & ~(size_t)4095 : b;
}

static void baseline_failed(cuda_state *s, rotq_bench_row *row) {
    rotq__bench_row_fail(row, ROTQ_BENCH_ROW_ERROR, ROTQ_ERR_CUDA, "baseline: %s", cudaGetErrorString(s->last_error));
}

/* Times the op and the row's baseline (a copy of the same bytes, or an empty
   launch for decode rows): warm-up of both, then reps repetitions of
   (baseline, op), medians into row->us and row->baseline_us. The op runs last,
   so its outputs are in place for the row's check. Returns the op's status (its
   first call decides NOT_SUPPORTED and argument errors); a failed baseline
   marks the row and returns ROTQ_OK. */
static rotq_status time_row(cuda_state *s, rotq_bench_row *row, cuda_op op, const void *arg) {
    const int empty = strcmp(row->baseline, "empty-kernel") == 0;
    const double half = row->bytes / 2.0;
    size_t copy_bytes = copy_baseline_bytes(half);
    const cuda_op base = empty ? run_empty : run_copy;
    const void *base_arg = empty ? NULL : &copy_bytes;
    rotq_status st = warm_up(s, op, arg);
    if (st != ROTQ_OK) return st;
    if (warm_up(s, base, base_arg) != ROTQ_OK) {
        baseline_failed(s, row);
        return ROTQ_OK;
    }
    for (int r = 0; r < s->reps; r++) {
        if (time_once(s, base, base_arg, 2 * r, &s->base_times[r]) != ROTQ_OK) {
            baseline_failed(s, row);
            return ROTQ_OK;
        }
        st = time_once(s, op, arg, 2 * r + 1, &s->times[r]);
        if (st != ROTQ_OK) return st;
    }
    row->us = rotq__bench_median(s->times, s->reps);
    row->baseline_us = rotq__bench_median(s->base_times, s->reps);
    if (!empty && copy_bytes > 0) row->baseline_us *= half / (double)copy_bytes;
    return ROTQ_OK;
}

/* Records the op's status on the row; returns 1 when the op ran. */
static int op_status(cuda_state *s, rotq_bench_row *row, rotq_status st) {
    if (st == ROTQ_OK) return 1;
    if (st == ROTQ_ERR_NOT_SUPPORTED)
        rotq__bench_row_fail(row, ROTQ_BENCH_ROW_NOT_SUPPORTED, st, "%s", rotq_status_string(st));
    else if (st == ROTQ_ERR_CUDA && s->last_error != cudaSuccess)
        rotq__bench_row_fail(row, ROTQ_BENCH_ROW_ERROR, st, "harness: %s",
                             cudaGetErrorString(s->last_error));
    else
        rotq__bench_row_fail(row, ROTQ_BENCH_ROW_ERROR, st, "%s: %s", rotq_status_name(st),
                             rotq_status_string(st));
    /* A failed kernel may leave a sticky error; clear what can be cleared. */
    cudaStreamSynchronize(s->stream);
    cudaGetLastError();
    s->last_error = cudaSuccess;
    return 0;
}

/* ---- data ---------------------------------------------------------------- */

/* Fills x with the seed block in dtype dt, tiled by doubling copies. */
static int fill_x(cuda_state *s, rotq_dtype dt) {
    if (s->x_fill == dt) return 1;
    rotq__bench_from_f32(s->seed, s->hseed, dt, SEED_ELEMENTS);
    size_t have = SEED_ELEMENTS * 2;
    if (have > s->x_cap) have = s->x_cap;
    if (!cuda_ok(s, cudaMemcpy(s->x, s->hseed, have, cudaMemcpyHostToDevice))) return 0;
    while (have < s->x_cap) {
        size_t n = have < s->x_cap - have ? have : s->x_cap - have;
        if (!cuda_ok(s, cudaMemcpy((char *)s->x + have, s->x, n, cudaMemcpyDeviceToDevice))) return 0;
        have += n;
    }
    s->x_fill = dt;
    return 1;
}

static int to_host(cuda_state *s, void *dst, const void *src, size_t bytes) {
    return cuda_ok(s, cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
}

/* ---- Hadamard ------------------------------------------------------------ */

typedef struct had_arg {
    rotq_hadamard_params p;
    rotq_matrix x, y;
} had_arg;

static rotq_status run_hadamard(cuda_state *s, const void *arg) {
    const had_arg *a = arg;
    return rotq_hadamard(&s->exec, &a->p, &a->x, &a->y);
}

/* Transform rows of n = k * 2^m (k = 1: a power of two), ceil(target / n) rows. */
static void hadamard_row(cuda_state *s, rotq_dtype dt, int32_t k, int32_t n, int64_t target,
                         int decode, int signs, double goal) {
    int64_t rows = (target + n - 1) / n;
    int64_t elements = rows * n;
    const char *dn = rotq_dtype_name(dt);
    char op[48];
    if (k > 1) snprintf(op, sizeof op, "hadamard%dx%d%s", (int)k, (int)(n / k), signs ? "+signs" : "");
    else snprintf(op, sizeof op, "hadamard%s", signs ? "+signs" : "");
    if (!rotq__bench_selected(s->b, op, dn, n, elements)) return;
    size_t in_bytes = rotq__bench_bytes(dt, elements);
    rotq_bench_row *row = rotq__bench_new_row(s->b, op, dn, n, elements, 2.0 * (double)in_bytes,
                                              decode ? "empty-kernel" : "copy", goal);
    if (!row) return;
    if (in_bytes > s->x_cap || !fill_x(s, dt)) {
        rotq__bench_row_fail(row, ROTQ_BENCH_ROW_ERROR, ROTQ_OK, "input buffer: %s",
                             in_bytes > s->x_cap ? "too small" : cudaGetErrorString(s->last_error));
        rotq__bench_finish_row(s->b, row);
        return;
    }
    had_arg a;
    a.p = rotq_hadamard_params_default(n);
    a.p.factor = k > 1 ? k : ROTQ_HADAMARD_FACTOR_POW2;
    if (signs) a.p.signs = s->signs;
    a.x = (rotq_matrix){s->x, dt, rows, n, n};
    a.y = (rotq_matrix){s->y, dt, rows, n, n};
    if (op_status(s, row, time_row(s, row, run_hadamard, &a))) {
        /* Check the first and the last row (a kernel that skips rows shows there). */
        size_t rb = rotq__bench_bytes(dt, n), last = rotq__bench_bytes(dt, (rows - 1) * n);
        for (int pass = 0; pass < 2 && row->state == ROTQ_BENCH_ROW_OK; pass++) {
            size_t off = pass ? last : 0;
            char why[96];
            if (!to_host(s, s->h0, (char *)s->x + off, rb) || !to_host(s, s->h1, (char *)s->y + off, rb))
                rotq__bench_row_fail(row, ROTQ_BENCH_ROW_ERROR, ROTQ_OK, "check copy: %s",
                                     cudaGetErrorString(s->last_error));
            else if (rotq__bench_check_hadamard_row(s->h0, s->h1, dt, n, why, sizeof why) > 0)
                rotq__bench_row_fail(row, ROTQ_BENCH_ROW_WRONG, ROTQ_OK, "%s", why);
        }
    }
    rotq__bench_finish_row(s->b, row);
}

/* ---- quantization -------------------------------------------------------- */

typedef struct quant_arg {
    rotq_hadamard_params rp;
    rotq_quant_params qp; /* fused: rotate = &rp */
    rotq_quant_params plain; /* unfused second step: no rotation */
    rotq_matrix x, tmp, q;
    int unfused;
} quant_arg;

static rotq_status run_quant(cuda_state *s, const void *arg) {
    const quant_arg *a = arg;
    if (!a->unfused) return rotq_quantize(&s->exec, &a->qp, &a->x, &a->q, s->scales, NULL);
    rotq_status st = rotq_hadamard(&s->exec, &a->rp, &a->x, &a->tmp);
    if (st != ROTQ_OK) return st;
    return rotq_quantize(&s->exec, &a->plain, &a->tmp, &a->q, s->scales, NULL);
}

static double fused_us(const rotq_bench_results *r, const char *op, int32_t n, int64_t elements) {
    for (size_t i = 0; i < r->count; i++) {
        const rotq_bench_row *row = &r->rows[i];
        if (strncmp(row->group, "quant-fused", 11) == 0 && strcmp(row->op, op) == 0 && row->n == n &&
            row->elements == elements && row->state == ROTQ_BENCH_ROW_OK)
            return row->us;
    }
    return 0.0;
}

static void quant_row(cuda_state *s, const rotq__bench_quant_kind *k, int32_t n, int64_t target,
                      int unfused, int decode, int signs, double goal) {
    const rotq_dtype dt = ROTQ_DTYPE_F16;
    int64_t rows = (target + n - 1) / n;
    int64_t elements = rows * n;
    char op[48];
    snprintf(op, sizeof op, "rot%s+%s", signs ? "+signs" : "", k->name);
    if (!rotq__bench_selected(s->b, op, rotq_dtype_name(dt), n, elements)) return;
    size_t in_bytes = rotq__bench_bytes(dt, elements);
    size_t q_bytes = rotq__bench_bytes(k->qdtype, elements);
    size_t s_count = (size_t)rotq__bench_scale_count(k, rows, n);
    double bytes = (double)in_bytes + (double)q_bytes + 4.0 * (double)s_count;
    rotq_bench_row *row = rotq__bench_new_row(s->b, op, rotq_dtype_name(dt), n, elements, bytes,
                                              decode ? "empty-kernel" : "copy", goal);
    if (!row) return;
    if (in_bytes > s->x_cap || q_bytes > s->q_cap || s_count > s->s_cap || !fill_x(s, dt)) {
        rotq__bench_row_fail(row, ROTQ_BENCH_ROW_ERROR, ROTQ_OK, "buffers too small or fill failed");
        rotq__bench_finish_row(s->b, row);
        return;
    }
    quant_arg a;
    memset(&a, 0, sizeof a);
    a.rp = rotq_hadamard_params_default(n);
    a.qp.kind = k->kind;
    a.qp.group_size = k->group_size;
    a.plain = a.qp;
    if (signs) a.rp.signs = s->signs;
    a.qp.rotate = &a.rp;
    a.x = (rotq_matrix){s->x, dt, rows, n, n};
    a.tmp = (rotq_matrix){s->y, dt, rows, n, n};
    a.q = (rotq_matrix){s->q, k->qdtype, rows, n, n};
    a.unfused = unfused;
    if (op_status(s, row, time_row(s, row, run_quant, &a)) && row->state == ROTQ_BENCH_ROW_OK) {
        size_t srow = (size_t)rotq__bench_scale_count(k, 1, n);
        char why[96];
        if (!to_host(s, s->h0, s->x, rotq__bench_bytes(dt, n)) ||
            !to_host(s, s->h1, s->q, rotq__bench_bytes(k->qdtype, n)) ||
            !to_host(s, s->hs, s->scales, srow * sizeof(float))) {
            rotq__bench_row_fail(row, ROTQ_BENCH_ROW_ERROR, ROTQ_OK, "check copy: %s",
                                 cudaGetErrorString(s->last_error));
        } else {
            int c = rotq__bench_check_quant_row(s->h0, dt, &a.qp, s->h1, k->qdtype, s->hs, n, why,
                                                sizeof why);
            if (c > 0) rotq__bench_row_fail(row, ROTQ_BENCH_ROW_WRONG, ROTQ_OK, "%s", why);
            else if (c < 0) snprintf(row->note, sizeof row->note, "%s", why);
        }
        if (unfused && row->state == ROTQ_BENCH_ROW_OK) {
            double f = fused_us(s->b->res, op, n, elements);
            if (f > 0.0) row->fused_speedup = row->us / f;
        }
    }
    rotq__bench_finish_row(s->b, row);
}

/* ---- groups -------------------------------------------------------------- */

static void hadamard_groups(cuda_state *s) {
    rotq__bench *b = s->b;
    int quick = b->opt->quick;
    static const rotq_dtype dts[] = {ROTQ_DTYPE_F16, ROTQ_DTYPE_BF16};

    rotq__bench_group_begin(b, "hadamard-pow2", "n = 2^m, orthonormal, vs device copy; target <= 1.08");
    for (int d = 0; d < 2; d++) {
        if (quick && d > 0) break;
        for (int e = 25; e <= 27; e += 2) {
            if (quick && e > 25) break;
            for (int m = 1; m <= 15; m++) {
                if (quick && m != 7 && m != 12 && m != 14) continue;
                hadamard_row(s, dts[d], 1, 1 << m, E(e), 0, 0, TARGET_POW2);
            }
        }
    }
    rotq__bench_group_end(b);

    /* 14336 (Llama-3-8B MLP), 11008 (Llama-2-7B), 13824 (Llama-2-13B), 28672
       (Llama-2/3-70B MLP), and the K = 12, 20, 40 at 2^10. */
    static const int32_t factors[][2] = {{12, 1024}, {20, 1024}, {40, 1024}, {28, 512},
                                         {172, 64},  {108, 128}, {28, 1024}};
    rotq__bench_group_begin(b, "hadamard-factor",
                            "n = K*2^m, >= 2^25 elements in whole rows, vs device copy; target <= 1.15");
    for (int d = 0; d < 2; d++) {
        if (quick && d > 0) break;
        for (int i = 0; i < 7; i++) {
            if (quick && (factors[i][0] != 28 || factors[i][1] != 512)) continue;
            hadamard_row(s, dts[d], factors[i][0], factors[i][0] * factors[i][1], E(25), 0, 0,
                         TARGET_FACTOR);
        }
    }
    rotq__bench_group_end(b);

    /* The factor sizes at 2^20 and 2^23 elements (73 and 585 rows of 14336): a few
       tiles per SM or fewer, where the fragment kernel shares row blocks between
       blocks at 2^10 (rotq_frag_parts). */
    if (!quick) {
        rotq__bench_group_begin(b, "hadamard-factor-mid", "K*2^m at 2^20 and 2^23 elements, f16, vs device copy");
        for (int e = 20; e <= 23; e += 3)
            for (int i = 0; i < 7; i++)
                hadamard_row(s, ROTQ_DTYPE_F16, factors[i][0], factors[i][0] * factors[i][1], E(e), 0, 0, 0.0);
        rotq__bench_group_end(b);
    }

    /* K * 2^10 past the whole-row fragment kernel (W of 44, 52, 60 rows of 2^10
       fp32 leaves no room for input slots): three or four parts a row block
       (rotq_frag_parts), or before them the general kernel (52, 60: its two-pass
       path). 2^27 for the number of parts in long calls. */
    if (!quick) {
        static const int32_t wide_k[] = {44, 52, 60};
        rotq__bench_group_begin(b, "hadamard-factor-wide", "K*2^10 for K = 44, 52, 60, f16, vs device copy");
        for (int e = 23; e <= 27; e += 2)
            for (int i = 0; i < 3; i++)
                hadamard_row(s, ROTQ_DTYPE_F16, wide_k[i], wide_k[i] << 10, E(e), 0, 0, 0.0);
        rotq__bench_group_end(b);
    }

    /* The factor rows with a sign vector (QuIP#-style randomized transforms), f16. */
    rotq__bench_group_begin(b, "hadamard-signs", "K*2^m with a random sign vector, 2^25 elements, vs device copy");
    for (int i = 0; i < 7; i++) {
        if (quick) break;
        hadamard_row(s, ROTQ_DTYPE_F16, factors[i][0], factors[i][0] * factors[i][1], E(25), 0, 1, 0.0);
    }
    rotq__bench_group_end(b);

    /* Powers of two with a sign vector (randomized Hadamard), f16: the generic
       build of the power-of-two kernel (the fast builds take no signs). */
    static const int32_t signs_n[] = {128, 4096, 16384};
    rotq__bench_group_begin(b, "hadamard-signs-pow2", "2^m with a random sign vector, 2^25 elements, vs device copy");
    for (int i = 0; i < 3 && !quick; i++) hadamard_row(s, ROTQ_DTYPE_F16, 1, signs_n[i], E(25), 0, 1, 0.0);
    rotq__bench_group_end(b);

    /* Decode sizes: total elements 4096 and 65536 at n = 128, 4096, 16384
       (combinations with n > elements do not exist and are left out). */
    static const int32_t decode_n[] = {128, 4096, 16384};
    rotq__bench_group_begin(b, "hadamard-decode", "decode sizes, vs an empty kernel launch; target <= 1.3");
    for (int e = 12; e <= 16; e += 4)
        for (int i = 0; i < 3; i++) {
            if (decode_n[i] > E(e)) continue;
            if (quick && !((e == 12 && i == 0) || (e == 16 && i == 1))) continue;
            hadamard_row(s, ROTQ_DTYPE_F16, 1, decode_n[i], E(e), 1, 0, TARGET_DECODE);
        }
    rotq__bench_group_end(b);

    if (quick) return;
    rotq__bench_group_begin(b, "hadamard-mid", "2^20 and 2^23 elements, every power of two, vs device copy");
    for (int e = 20; e <= 23; e += 3)
        for (int m = 1; m <= 15; m++) hadamard_row(s, ROTQ_DTYPE_F16, 1, 1 << m, E(e), 0, 0, 0.0);
    rotq__bench_group_end(b);

    /* Last (after the groups that ran before it was added): more model widths
       whose QuaRot rotation has a K factor, f16 at 2^25: 5120 = 40 * 128
       (Llama-2-13B hidden), 3584 = 28 * 128 (Qwen2-7B hidden), 1536 = 12 * 128
       (Qwen2-1.5B), 2560 = 40 * 64 (Phi-2), 6912 = 108 * 64, 8960 = 140 * 64
       (Qwen2-1.5B MLP), 27648 = 108 * 256 (Qwen2.5-32B MLP). */
    if (!quick) {
        static const int32_t model_k[][2] = {{40, 128}, {28, 128}, {12, 128}, {40, 64},
                                             {108, 64}, {140, 64}, {108, 256}};
        rotq__bench_group_begin(b, "hadamard-factor-models", "K*2^m at more model widths, f16, 2^25, vs device copy");
        for (int i = 0; i < 7; i++)
            hadamard_row(s, ROTQ_DTYPE_F16, model_k[i][0], model_k[i][0] * model_k[i][1], E(25), 0, 0, 0.0);
        rotq__bench_group_end(b);
    }

    /* Last: the factor target rows at 2^27 elements (the "2^25 elements or
       more"), as the power-of-two group has both sizes. */
    if (!quick) {
        rotq__bench_group_begin(b, "hadamard-factor-large",
                                "n = K*2^m, >= 2^27 elements in whole rows, vs device copy; target <= 1.15");
        for (int d = 0; d < 2; d++)
            for (int i = 0; i < 7; i++)
                hadamard_row(s, dts[d], factors[i][0], factors[i][0] * factors[i][1], E(27), 0, 0,
                             TARGET_FACTOR);
        rotq__bench_group_end(b);
    }

    /* Last: decode sizes at the row lengths the target rows leave out (no target),
       65536 elements: 1024 and 2048 on the one-block kernel, 8192 and 32768 on
       the split kernel (8 blocks a row). */
    if (!quick) {
        rotq__bench_group_begin(b, "hadamard-decode-more",
                                "decode sizes, 2^16 elements at the other long rows, vs an empty kernel launch");
        for (int m = 10; m <= 15; m++)
            if (m != 12 && m != 14) hadamard_row(s, ROTQ_DTYPE_F16, 1, 1 << m, E(16), 1, 0, 0.0);
        rotq__bench_group_end(b);
    }
}

/* A group of fused rotate + quantize rows at `elements` (f16, every kind, each
   n of ns; target `goal`), then the same rows as the two-call pair in the group
   `unfused` (no target). --quick: int8 and int4 at n = 4096 only. */
static void quant_group_pair(cuda_state *s, const char *fused, const char *fused_what, const char *unfused,
                             const char *unfused_what, const int32_t *ns, int count, int64_t elements,
                             double goal) {
    rotq__bench *b = s->b;
    int quick = b->opt->quick;
    for (int un = 0; un < 2; un++) {
        rotq__bench_group_begin(b, un ? unfused : fused, un ? unfused_what : fused_what);
        for (int k = 0; k < 3; k++) {
            const rotq__bench_quant_kind *kind = &rotq__bench_quant_kinds[k];
            if (quick && kind->kind == ROTQ_QUANT_FP8_ROW) continue;
            for (int i = 0; i < count; i++) {
                if (quick && ns[i] != 4096) continue;
                quant_row(s, kind, ns[i], elements, un, 0, 0, un ? 0.0 : goal);
            }
        }
        rotq__bench_group_end(b);
    }
}

static void quant_groups(cuda_state *s) {
    rotq__bench *b = s->b;
    int quick = b->opt->quick;
    static const int32_t ns[] = {4096, 14336, 128};
    quant_group_pair(s, "quant-fused",
                     "f16 in, rotate (size n) + quantize in one call, 2^25 elements, "
                     "vs copy of input+output bytes; target <= 1.15",
                     "quant-unfused", "the same as rotq_hadamard then rotq_quantize (no rotation), vs the same copy",
                     ns, 3, E(25), TARGET_QUANT);

    rotq__bench_group_begin(b, "quant-decode",
                            "rotate + quantize at decode sizes, vs an empty kernel launch; target <= 1.3");
    static const int32_t decode_n[] = {128, 4096};
    for (int k = 0; k < 3; k++) {
        const rotq__bench_quant_kind *kind = &rotq__bench_quant_kinds[k];
        for (int e = 12; e <= 16; e += 4)
            for (int i = 0; i < 2; i++) {
                if (quick && !(k == 0 && e == 12 && i == 1) && !(k == 2 && e == 16 && i == 1)) continue;
                quant_row(s, kind, decode_n[i], E(e), 0, 1, 0, TARGET_DECODE);
            }
    }
    rotq__bench_group_end(b);

    /* Last (after the target groups, as they ran before these were added): the
       other model widths whose rotation has a K factor: 11008 = 172 * 64
       (Llama-2-7B MLP), 13824 = 108 * 128 (Llama-2-13B), 28672 = 28 * 1024
       (Llama-2/3-70B), 5120 = 40 * 128 (Llama-2-13B hidden), 3584 = 28 * 128
       (Qwen2-7B hidden), 1536 = 12 * 128 (Qwen2-1.5B hidden), fused and as the
       two-call pair. */
    if (!quick) {
        static const int32_t model_n[] = {11008, 13824, 28672, 5120, 3584, 1536};
        quant_group_pair(s, "quant-fused-models",
                         "f16, rotate (K*2^m) + quantize in one call at more model widths, 2^25 elements, "
                         "vs copy of input+output bytes",
                         "quant-unfused-models", "the same as rotq_hadamard then rotq_quantize, vs the same copy",
                         model_n, 6, E(25), 0.0);
    }

    /* Last: the target rows at 2^27 elements (the issue asks for 2^25 or more;
       prefill-sized batches: 32768 tokens of 4096), after every other group. */
    if (!quick)
        quant_group_pair(s, "quant-fused-large",
                         "f16 in, rotate (size n) + quantize in one call, 2^27 elements, "
                         "vs copy of input+output bytes; target <= 1.15",
                         "quant-unfused-large", "the same as rotq_hadamard then rotq_quantize, vs the same copy", ns,
                         3, E(27), TARGET_QUANT);

    /* Last: the fused rows with a random sign vector (QuaRot's randomized
       Hadamard), int8 and int4 g128 at the target widths and at 11008 and 13824
       (172 * 64, 108 * 128: the warpgroup kernel), 2^25 elements. */
    if (!quick) {
        static const int32_t signs_n[] = {4096, 14336, 128, 11008, 13824};
        rotq__bench_group_begin(b, "quant-fused-signs",
                                "f16, rotate with a sign vector + quantize in one call, 2^25 elements, "
                                "vs copy of input+output bytes");
        for (int k = 0; k < 3; k += 2)
            for (int i = 0; i < 5; i++) quant_row(s, &rotq__bench_quant_kinds[k], signs_n[i], E(25), 0, 0, 1, 0.0);
        rotq__bench_group_end(b);
    }
}

/* ---- driver -------------------------------------------------------------- */

static void describe_device(cuda_state *s, int dev) {
    char name[128] = "";
    if (rotq_cuda_device_describe(dev, name, sizeof name) != ROTQ_OK) snprintf(name, sizeof name, "device %d", dev);
    int clock_khz = 0, mem_khz = 0, ecc = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev);
    cudaDeviceGetAttribute(&ecc, cudaDevAttrEccEnabled, dev);
    snprintf(s->b->res->device, sizeof s->b->res->device,
             "cuda:%d %s; SM clock max %d MHz; memory clock %d MHz; ECC %s", dev, name,
             clock_khz / 1000, mem_khz / 1000, ecc ? "on" : "off");
}

int rotq__bench_cuda(rotq__bench *b) {
    const rotq_bench_options *o = b->opt;
    cuda_state s;
    memset(&s, 0, sizeof s);
    s.b = b;
    s.x_fill = ROTQ_DTYPE_F32;
    s.reps = o->reps ? o->reps : DEFAULT_REPS;
    if (s.reps < MIN_REPS) s.reps = MIN_REPS;

    int dev = 0, l2 = 0, rc = ROTQ_BENCH_OK;
    if (!cuda_ok(&s, cudaGetDevice(&dev)) ||
        !cuda_ok(&s, cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev)))
        goto cuda_fail;
    describe_device(&s, dev);
    if (b->table) fprintf(b->table, "device: %s\n", b->res->device);

    /* Largest rows: 2^27 f16 elements in whole rows (up to a row of 2^17 past it:
       the K*2^m rows at 2^27); quick needs >= 2^25 in whole rows. */
    s.x_cap = (size_t)(o->quick ? E(26) : E(27) + E(17)) * 2;
    s.q_cap = (size_t)(o->quick ? E(26) : E(27) + E(17)); /* int8 codes: quant-fused-large */
    s.s_cap = (size_t)E(20) + E(12);
    s.flush_bytes = l2 > 0 ? 2 * (size_t)l2 : (size_t)256 << 20;
    if (!cuda_ok(&s, cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking)) ||
        !cuda_ok(&s, cudaEventCreate(&s.ev0)) || !cuda_ok(&s, cudaEventCreate(&s.ev1)) ||
        !cuda_ok(&s, cudaMalloc(&s.x, s.x_cap)) || !cuda_ok(&s, cudaMalloc(&s.y, s.x_cap)) ||
        !cuda_ok(&s, cudaMalloc(&s.q, s.q_cap)) ||
        !cuda_ok(&s, cudaMalloc((void **)&s.scales, s.s_cap * sizeof(float))) ||
        !cuda_ok(&s, cudaMalloc(&s.flush, s.flush_bytes)) ||
        !cuda_ok(&s, cudaMalloc((void **)&s.signs, ROTQ_HADAMARD_MAX_SIZE)))
        goto cuda_fail;
    {
        int8_t hsig[ROTQ_HADAMARD_MAX_SIZE]; /* a fixed pseudo-random +-1 pattern */
        uint32_t r = 12345u;
        for (int i = 0; i < ROTQ_HADAMARD_MAX_SIZE; i++) {
            r = r * 1664525u + 1013904223u;
            hsig[i] = (r >> 31) ? (int8_t)-1 : (int8_t)1;
        }
        if (!cuda_ok(&s, cudaMemcpy(s.signs, hsig, sizeof hsig, cudaMemcpyHostToDevice))) goto cuda_fail;
    }
    s.exec = (rotq_exec){ROTQ_BACKEND_CUDA, 0, (struct CUstream_st *)s.stream, NULL, 0};
    s.times = malloc((size_t)s.reps * sizeof(double));
    s.base_times = malloc((size_t)s.reps * sizeof(double));
    s.seed = malloc(SEED_ELEMENTS * sizeof(float));
    s.hseed = malloc(SEED_ELEMENTS * 2);
    s.h0 = malloc(HOST_ROW_BYTES);
    s.h1 = malloc(HOST_ROW_BYTES);
    s.hs = malloc(HOST_ROW_BYTES);
    if (!s.times || !s.base_times || !s.seed || !s.hseed || !s.h0 || !s.h1 || !s.hs) {
        if (b->table) fprintf(b->table, "error: out of host memory\n");
        b->res->failures++;
        rc = ROTQ_BENCH_FAILED;
        goto done;
    }
    rotq__bench_fill_normal(s.seed, SEED_ELEMENTS, 0x726f7471ull);
    if (!cuda_ok(&s, cudaMemset(s.y, 0, s.x_cap)) || !cuda_ok(&s, cudaMemset(s.q, 0, s.q_cap)))
        goto cuda_fail;

    if (o->ops & ROTQ_BENCH_OP_HADAMARD) hadamard_groups(&s);
    if (o->ops & ROTQ_BENCH_OP_QUANT) quant_groups(&s);
    goto done;

cuda_fail:
    if (b->table)
        fprintf(b->table, "error: CUDA setup failed: %s (buffers: 2 x %zu MiB + %zu MiB flush)\n",
                cudaGetErrorString(s.last_error), s.x_cap >> 20, s.flush_bytes >> 20);
    b->res->failures++;
    rc = ROTQ_BENCH_FAILED;
done:
    if (s.x) cudaFree(s.x);
    if (s.y) cudaFree(s.y);
    if (s.q) cudaFree(s.q);
    if (s.scales) cudaFree(s.scales);
    if (s.flush) cudaFree(s.flush);
    if (s.signs) cudaFree(s.signs);
    if (s.ev0) cudaEventDestroy(s.ev0);
    if (s.ev1) cudaEventDestroy(s.ev1);
    if (s.stream) cudaStreamDestroy(s.stream);
    free(s.times);
    free(s.base_times);
    free(s.seed);
    free(s.hseed);
    free(s.h0);
    free(s.h1);
    free(s.hs);
    return rc;
}
