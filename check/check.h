/*
 * The op suite: every op, over a table of parameters, on every available
 * backend, against a float64 reference (ggml's test-backend-ops is the model).
 * Used by the CTest driver (tests/) and by `rotq check` (tools/).
 */
#ifndef ROTQ_CHECK_H
#define ROTQ_CHECK_H

#include <stdint.h>
#include <stdio.h>

#include "rotq.h"

typedef struct rotq_check_options {
    unsigned backends;  /* bit mask of (1u << rotq_backend); 0 = every backend */
    const char *filter; /* run only cases whose name contains this ('|': any of several); NULL = all */
    uint64_t seed;      /* base seed; each case derives its own from it */
    int verbose;        /* 1: one line per case, not only failures and the summary */
    int full;           /* 0: the quick table (rotq check); 1: the full table (tests) */
} rotq_check_options;

typedef struct rotq_check_summary {
    int passed;
    int failed;
    int skipped; /* e.g. GPU cases without a device */
} rotq_check_summary;

/* Runs the suite, printing to out. Returns 0 when nothing failed. */
int rotq_check_run(const rotq_check_options *opt, rotq_check_summary *summary, FILE *out);

#endif
