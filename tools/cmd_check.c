/* rotq check: the op suite (check/check.h) from the command line. */
#include <string.h>

#include "check.h"
#include "cli.h"

#define DEFAULT_SEED 1

void cli_usage_check(FILE *f) {
    fprintf(f,
            "usage: rotq check [--backend cpu|cuda|all] [--filter S] [--seed N] [--full] [-v]\n\n"
            "Runs every op over a table of parameters on the chosen backends and compares\n"
            "with a float64 reference.\n\n"
            "  --backend B  cpu, cuda or all (default all: every available backend)\n"
            "  --filter S   only cases whose name contains S\n"
            "  --seed N     base seed of the random inputs (default %d)\n"
            "  --full       the full table the tests use (default: the quick table)\n"
            "  -v           one line per case with its seconds, not only failures and the summary\n\n"
            "Exit status: 0 when no case failed, 1 otherwise, 2 for bad arguments.\n",
            DEFAULT_SEED);
}

int cli_cmd_check(int argc, char **argv) {
    rotq_check_options opt;
    memset(&opt, 0, sizeof opt);
    opt.seed = DEFAULT_SEED;
    int explicit_cuda = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            cli_usage_check(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "--backend") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            rotq_backend b;
            if (v && strcmp(v, "all") == 0) {
                opt.backends = 0;
                explicit_cuda = 0;
            } else if (v && cli_parse_backend(v, &b) == 0) {
                opt.backends = 1u << b;
                explicit_cuda = b == ROTQ_BACKEND_CUDA;
            } else {
                return cli_usage_error("check", cli_usage_check,
                                       "--backend needs cpu, cuda or all (got '%s')", v ? v : "");
            }
        } else if (strcmp(a, "--filter") == 0) {
            opt.filter = cli_option_value(argc, argv, &i);
            if (!opt.filter) return cli_usage_error("check", cli_usage_check, "--filter needs a value");
        } else if (strcmp(a, "--seed") == 0) {
            const char *v = cli_option_value(argc, argv, &i);
            if (cli_parse_u64(v, &opt.seed) != 0)
                return cli_usage_error("check", cli_usage_check,
                                       "--seed needs a non-negative integer (got '%s')", v ? v : "");
        } else if (strcmp(a, "--full") == 0) {
            opt.full = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            opt.verbose = 1;
        } else {
            return cli_usage_error("check", cli_usage_check, "unknown argument '%s'", a);
        }
    }
    if (explicit_cuda && cli_require_backend("check", ROTQ_BACKEND_CUDA)) return CLI_EXIT_FAIL;

    rotq_check_summary sum;
    memset(&sum, 0, sizeof sum);
    /* rotq_check_run prints the seed, the table and the summary itself. */
    int rc = rotq_check_run(&opt, &sum, stdout);
    fflush(stdout);
    if (rc != 0 || sum.failed != 0) {
        if (sum.failed == 0) fprintf(stderr, "rotq check: the op suite reported an error (%d)\n", rc);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}
