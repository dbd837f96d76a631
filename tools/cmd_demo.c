/*
 * rotq demo: what `make run` shows. Build and device info, the quick op suite
 * and a quick benchmark table on the default device (CUDA when usable, else
 * CPU), then a worked example of why rotations help low-precision
 * quantization: SNR of int8/fp8/int4 round trips of activations with outlier
 * channels, with and without a Hadamard rotation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "check.h"
#include "cli.h"

#define DEFAULT_SEED 1

void cli_usage_demo(FILE *f) {
    fprintf(f,
            "usage: rotq demo [--backend cpu|cuda] [--seed N]\n\n"
            "Prints build and device info, runs the quick op suite and a quick benchmark on\n"
            "the default device (CUDA when available, else CPU), then quantizes synthetic\n"
            "activations with outlier channels to int8, fp8 and int4, with and without a\n"
            "Hadamard rotation, and prints the signal-to-noise ratio of each round trip.\n\n"
            "  --backend B  run the suite and the benchmark on cpu or cuda instead\n"
            "  --seed N     seed of the op suite and of the synthetic activations (default %d)\n\n"
            "Exit status: 0 when every step succeeded, 1 otherwise, 2 for bad arguments.\n",
            DEFAULT_SEED);
}

/* ---- the outlier example ------------------------------------------------- */

/*
 * Synthetic activations, T tokens x C channels (float32), built to look like
 * the inputs of LLM linear layers that QuaRot/SpinQuant rotate:
 *     x[t][c] = g[t] * o[c] * z[t][c]
 *   z[t][c]  roughly standard normal (sum of four uniforms, rescaled);
 *   g[t]     per-token magnitude 2^u, u uniform in [-2, 2] (0.25x .. 4x);
 *   o[c]     1, except for OUTLIERS channels picked at random whose o[c] is
 *            uniform in [50, 100]: a few channels 50-100x larger than the rest.
 * Per-token (int8, fp8) or per-group (int4) scales are set by the largest
 * |x| of the row or group, so the outlier channels crush the resolution left
 * for every other channel. An orthonormal Hadamard rotation spreads each
 * outlier over all channels first; quantizing in the rotated basis and
 * rotating back (H/sqrt(n) is its own inverse) loses much less.
 */
#define DEMO_TOKENS 64
#define DEMO_CHANNELS 4096
#define OUTLIERS 8

static uint64_t demo_rng(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double demo_uniform(uint64_t *s) { return (double)(demo_rng(s) >> 11) * (1.0 / 9007199254740992.0); }

static void make_activations(float *x, uint64_t seed) {
    uint64_t s = seed ^ 0x6f75746c69657273ull;
    double scale[DEMO_CHANNELS];
    for (int c = 0; c < DEMO_CHANNELS; c++) scale[c] = 1.0;
    for (int k = 0; k < OUTLIERS; k++) {
        int c;
        do c = (int)(demo_uniform(&s) * DEMO_CHANNELS);
        while (scale[c] != 1.0);
        scale[c] = 50.0 + 50.0 * demo_uniform(&s);
    }
    for (int t = 0; t < DEMO_TOKENS; t++) {
        double g = exp2(-2.0 + 4.0 * demo_uniform(&s));
        for (int c = 0; c < DEMO_CHANNELS; c++) {
            double z = 0.0;
            for (int k = 0; k < 4; k++) z += demo_uniform(&s);
            z = (z - 2.0) * 1.7320508075688772;
            x[(size_t)t * DEMO_CHANNELS + c] = (float)(g * scale[c] * z);
        }
    }
}

static double snr_db(const float *x, const float *xh, size_t n) {
    double sig = 0.0, err = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)x[i] - xh[i];
        sig += (double)x[i] * x[i];
        err += d * d;
    }
    if (err == 0.0) return INFINITY;
    return 10.0 * log10(sig / err);
}

typedef struct demo_bufs {
    void *q;
    float *scales;
    float *y;
} demo_bufs;

/* x -> quantize (optionally rotated) -> dequantize (-> rotate back) -> xh; SNR in *db. */
static rotq_status round_trip(const float *x, rotq_quant_kind kind, rotq_dtype qdt, int32_t group,
                              int rotate, demo_bufs *b, float *xh, double *db) {
    const rotq_exec cpu = {ROTQ_BACKEND_CPU, 0, NULL};
    rotq_hadamard_params rp = rotq_hadamard_params_default(DEMO_CHANNELS);
    rotq_quant_params qp;
    memset(&qp, 0, sizeof qp);
    qp.kind = kind;
    qp.group_size = group;
    qp.rotate = rotate ? &rp : NULL;
    rotq_matrix xm = {(void *)x, ROTQ_DTYPE_F32, DEMO_TOKENS, DEMO_CHANNELS, DEMO_CHANNELS};
    rotq_matrix qm = {b->q, qdt, DEMO_TOKENS, DEMO_CHANNELS, DEMO_CHANNELS};
    rotq_matrix ym = {rotate ? b->y : xh, ROTQ_DTYPE_F32, DEMO_TOKENS, DEMO_CHANNELS, DEMO_CHANNELS};
    rotq_status st = rotq_quantize(&cpu, &qp, &xm, &qm, b->scales, NULL);
    if (st != ROTQ_OK) return st;
    qp.rotate = NULL;
    st = rotq_dequantize(&cpu, &qp, &qm, b->scales, &ym);
    if (st != ROTQ_OK) return st;
    if (rotate) {
        rotq_matrix xhm = {xh, ROTQ_DTYPE_F32, DEMO_TOKENS, DEMO_CHANNELS, DEMO_CHANNELS};
        st = rotq_hadamard(&cpu, &rp, &ym, &xhm);
        if (st != ROTQ_OK) return st;
    }
    *db = snr_db(x, xh, (size_t)DEMO_TOKENS * DEMO_CHANNELS);
    return ROTQ_OK;
}

static int outlier_demo(FILE *f, uint64_t seed) {
    static const struct {
        const char *name;
        rotq_quant_kind kind;
        rotq_dtype qdt;
        int32_t group;
    } formats[] = {
        {"int8, one scale per token", ROTQ_QUANT_INT8_ROW, ROTQ_DTYPE_I8, 0},
        {"fp8 e4m3, one scale per token", ROTQ_QUANT_FP8_ROW, ROTQ_DTYPE_FP8_E4M3, 0},
        {"int4, one scale per 128 channels", ROTQ_QUANT_INT4_GROUP, ROTQ_DTYPE_I4X2, 128},
    };
    size_t n = (size_t)DEMO_TOKENS * DEMO_CHANNELS;
    float *x = malloc(n * sizeof *x), *xh = malloc(n * sizeof *xh);
    demo_bufs b = {malloc(n), malloc(n / 32 * sizeof(float)), malloc(n * sizeof(float))};
    int rc = 0;
    if (!x || !xh || !b.q || !b.scales || !b.y) {
        fprintf(f, "out of memory\n");
        rc = 1;
        goto done;
    }
    make_activations(x, seed);
    double sum2 = 0.0, amax = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum2 += (double)x[i] * x[i];
        if (fabs(x[i]) > amax) amax = fabs(x[i]);
    }
    fprintf(f,
            "Synthetic activations: %d tokens x %d channels; %d outlier channels 50-100x larger\n"
            "than the rest; per-token magnitudes 0.25x-4x. Largest |x| is %.0fx the RMS.\n"
            "Round trip: quantize -> dequantize (-> rotate back) on the CPU backend;\n"
            "SNR = 10 log10(sum x^2 / sum (x - x_hat)^2). Rotation: orthonormal Hadamard, n = %d.\n\n",
            DEMO_TOKENS, DEMO_CHANNELS, OUTLIERS, amax / sqrt(sum2 / (double)n), DEMO_CHANNELS);
    fprintf(f, "  %-34s %12s %14s %9s\n", "format", "no rotation", "with rotation", "gain");
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++) {
        double plain = 0.0, rotated = 0.0;
        rotq_status s1 = round_trip(x, formats[k].kind, formats[k].qdt, formats[k].group, 0, &b, xh, &plain);
        rotq_status s2 =
            s1 == ROTQ_OK ? round_trip(x, formats[k].kind, formats[k].qdt, formats[k].group, 1, &b, xh, &rotated)
                          : s1;
        if (s1 != ROTQ_OK || s2 != ROTQ_OK) {
            rotq_status st = s1 != ROTQ_OK ? s1 : s2;
            fprintf(f, "  %-34s failed: %s: %s\n", formats[k].name, rotq_status_name(st),
                    rotq_status_string(st));
            rc = 1;
            continue;
        }
        fprintf(f, "  %-34s %9.1f dB %11.1f dB %+6.1f dB\n", formats[k].name, plain, rotated,
                rotated - plain);
    }
done:
    free(x);
    free(xh);
    free(b.q);
    free(b.scales);
    free(b.y);
    return rc;
}

/* ---- the command ---------------------------------------------------------- */

int cli_cmd_demo(int argc, char **argv) {
    rotq_backend backend = cli_default_backend();
    uint64_t seed = DEFAULT_SEED;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_usage_demo(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "--backend") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_backend(v, &backend) != 0)
                return cli_usage_error("demo", cli_usage_demo, "--backend needs cpu or cuda (got '%s')",
                                       v ? v : "");
        } else if (strcmp(a, "--seed") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_u64(v, &seed) != 0)
                return cli_usage_error("demo", cli_usage_demo,
                                       "--seed needs a non-negative integer (got '%s')", v ? v : "");
        } else {
            return cli_usage_error("demo", cli_usage_demo, "unknown argument '%s'", a);
        }
    }
    const char *dev = rotq_bench_backend_name(backend);

    printf("=== rotq demo ===\n\n");
    int info_rc = cli_print_info(stdout);
    if (!rotq_backend_available(backend)) {
        printf("\nThe %s backend is not available; nothing more to show.\n", dev);
        return CLI_EXIT_FAIL;
    }
    printf("\ndefault device: %s%s\n", dev,
           backend == ROTQ_BACKEND_CPU && cli_default_backend() == ROTQ_BACKEND_CPU
               ? " (no usable CUDA device)"
               : "");

    printf("\n=== op suite (quick table) on %s ===\n", dev);
    fflush(stdout);
    rotq_check_options copt;
    memset(&copt, 0, sizeof copt);
    copt.backends = 1u << backend;
    copt.seed = seed;
    rotq_check_summary sum;
    memset(&sum, 0, sizeof sum);
    int check_rc = rotq_check_run(&copt, &sum, stdout);
    printf("op suite: %d passed, %d failed, %d skipped\n", sum.passed, sum.failed, sum.skipped);

    printf("\n=== benchmark (quick subset) on %s ===\n", dev);
    fflush(stdout);
    rotq_bench_options bopt;
    memset(&bopt, 0, sizeof bopt);
    bopt.backend = backend;
    bopt.quick = 1;
    int bench_rc = rotq_bench_run(&bopt, stdout, NULL);
    if (bench_rc == ROTQ_BENCH_UNAVAILABLE) printf("benchmark: the %s backend is not available\n", dev);

    printf("\n=== why rotate? quantizing activations with outlier channels ===\n\n");
    fflush(stdout);
    int snr_rc = outlier_demo(stdout, seed);

    int ok = info_rc == 0 && check_rc == 0 && sum.failed == 0 && bench_rc == ROTQ_BENCH_OK && snr_rc == 0;
    printf("\n=== demo %s ===\n", ok ? "done" : "FAILED");
    if (!ok) {
        if (check_rc != 0 || sum.failed) printf("  op suite: %d case(s) failed\n", sum.failed);
        if (bench_rc != ROTQ_BENCH_OK) printf("  benchmark: a row failed (see above)\n");
        if (snr_rc) printf("  outlier example: a library call failed (see above)\n");
        if (info_rc) printf("  info: a library call failed (see above)\n");
    }
    printf("More: rotq check --full, rotq bench [--json FILE] [--plot FILE.svg], rotq <command> --help\n");
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
