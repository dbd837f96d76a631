/* Internals shared by the op-suite files: the run context, case bookkeeping, results. */
#ifndef ROTQ_CHECK_CK_H
#define ROTQ_CHECK_CK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "rotq.h"

typedef struct ck_ctx {
    const rotq_check_options *opt;
    FILE *out;
    rotq_check_summary sum;
    unsigned backends;                         /* selected backends (bit per rotq_backend) */
    int available[ROTQ_BACKEND_COUNT];         /* rotq_backend_available at start */
    int not_supported[ROTQ_BACKEND_COUNT];     /* cases skipped as ROTQ_ERR_NOT_SUPPORTED */
    uint64_t op_salt;                          /* per op, mixed into case seeds */
    uint64_t case_index;                       /* position in the op's unfiltered table */
    double last_report_s;                      /* wall clock of the previous report (-v timings) */
} ck_ctx;

enum { CK_PASS = 0, CK_FAIL = 1, CK_SKIP = 2 };

typedef struct ck_result {
    int verdict;
    char msg[2048]; /* failure details (or the skip reason) */
    size_t len;
} ck_result;

/* Starts the next case of the current op: returns 1 when it passes the filter (and
   sets *seed, derived from the base seed, the op and the case's table position). */
int ck_case_begin(ck_ctx *c, const char *name, uint64_t *seed);
/* Whether the case runs on this backend now; counts it skipped when the backend is
   selected but unavailable. */
int ck_backend_begin(ck_ctx *c, rotq_backend b, const char *name);
/* Records the outcome of a case on one backend and prints what is asked for. */
void ck_report(ck_ctx *c, rotq_backend b, const char *name, const ck_result *r);
/* Marks r failed and appends a line of detail. */
void ck_fail(ck_result *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Marks r skipped with a reason. */
void ck_skip(ck_result *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends a note that is printed only if the case fails (parameters, metrics). */
void ck_note(ck_result *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The exec struct a case uses on backend b; variant picks CPU threads (0, 1, 3). */
rotq_exec ck_exec(rotq_backend b, int variant, struct CUstream_st *stream);
const char *ck_backend_name(rotq_backend b);

/* An op call that takes a CUDA fallback path, for the workspace protocol. */
typedef struct ck_ws_call {
    void *ctx;
    /* The call's workspace query; one_row: the same call on its first row only. */
    rotq_status (*query)(void *ctx, const rotq_exec *e, int one_row, size_t *bytes);
    /* Restores the call's outputs (and an in-place input) to their initial bytes,
       then enqueues the call on e; returns its status. */
    rotq_status (*run)(void *ctx, const rotq_exec *e);
    /* After a synchronization: whether the outputs hold the pooled call's bytes
       (pooled) or their initial ones; a mismatch fails r, naming `what`. */
    void (*outputs_are)(void *ctx, int pooled, ck_result *r, const char *what);
} ck_ws_call;
/* The protocol of workspace.c on backend b; ex: the exec of the pooled call. */
void ck_workspace_protocol(const ck_ws_call *call, rotq_backend b, struct CUstream_st *stream, const rotq_exec *ex,
                           ck_result *r);

/* The ops (each enumerates its table and runs every case on every backend). */
void ck_op_api(ck_ctx *c);        /* api.c: status strings, version, factors, picking */
void ck_op_hadamard(ck_ctx *c);   /* case_hadamard.c */
void ck_op_quantize(ck_ctx *c);   /* case_quant.c */
void ck_op_dequantize(ck_ctx *c); /* case_dequant.c */
void ck_op_badargs(ck_ctx *c);    /* badargs.c */

#endif
