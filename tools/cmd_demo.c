/*
 * rotq demo: what `make run` shows. Build and device info, the quick op suite
 * and a quick benchmark table on the default device (CUDA when usable, else
 * CPU), then a worked example of why rotations help low-precision
 * quantization: SNR of int8/fp8/int4 round trips of activations with outlier
 * channels, with and without a Hadamard rotation.
 */
#include <string.h>

#include "accuracy.h"
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
 * The brief table of `rotq accuracy` (check/accuracy.h, docs/accuracy.md):
 * int8, fp8 and int4 g128 round trips of activations with outlier channels,
 * with and without an orthonormal Hadamard rotation, on the CPU backend
 * (deterministic, and implemented everywhere).
 */
#define DEMO_TOKENS 64
#define DEMO_CHANNELS 4096

static int outlier_demo(FILE *f, uint64_t seed) {
    rotq_accuracy_options o;
    memset(&o, 0, sizeof o);
    o.backend = ROTQ_BACKEND_CPU;
    o.tokens = DEMO_TOKENS;
    o.channels = DEMO_CHANNELS;
    o.seed = seed;
    o.brief = 1;
    rotq_accuracy_results r;
    int rc = rotq_accuracy_measure(&o, &r);
    rotq_accuracy_print(&r, f);
    fprintf(f, "More: rotq accuracy (int4 g32/g64, random signs, block-diagonal, --channels 14336)\n");
    return rc == 0 ? 0 : 1;
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
