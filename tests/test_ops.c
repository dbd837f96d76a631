/*
 * CTest driver for the op suite:
 *   rotq_test_ops [--backend cpu|cuda|all] [--full] [--filter TEXT] [--seed N] [-v]
 * --filter: cases whose name contains TEXT, or one of its '|'-separated parts.
 * Prints the suite's final "N passed, N failed, N skipped" line and exits 1 on
 * any failure (0 when everything was skipped, e.g. CUDA without a device).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int usage(const char *argv0) {
    fprintf(stderr, "usage: %s [--backend cpu|cuda|all] [--full] [--filter TEXT] [--seed N] [-v]\n", argv0);
    return 2;
}

int main(int argc, char **argv) {
    rotq_check_options opt;
    memset(&opt, 0, sizeof opt);
    opt.seed = 20261122u;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--full")) {
            opt.full = 1;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            opt.verbose++;
        } else if (!strcmp(a, "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            if (!strcmp(b, "cpu")) opt.backends = 1u << ROTQ_BACKEND_CPU;
            else if (!strcmp(b, "cuda")) opt.backends = 1u << ROTQ_BACKEND_CUDA;
            else if (!strcmp(b, "all")) opt.backends = 0;
            else return usage(argv[0]);
        } else if (!strcmp(a, "--filter") && i + 1 < argc) {
            opt.filter = argv[++i];
        } else if (!strcmp(a, "--seed") && i + 1 < argc) {
            opt.seed = strtoull(argv[++i], NULL, 0);
        } else {
            return usage(argv[0]);
        }
    }
    rotq_check_summary sum;
    int rc = rotq_check_run(&opt, &sum, stdout);
    return rc != 0 || sum.failed ? 1 : 0;
}
