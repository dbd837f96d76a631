/*
 * The caller-workspace protocol (rotq_exec.workspace), run by the Hadamard and
 * quantize cases whose CUDA call takes a fallback path: the query reports a
 * buffer; the call with that buffer, with one row's worth, with sizes between
 * and above, writes exactly the bytes of the pooled call (the rows go in other
 * chunks, every row computed alike); a workspace one byte short of a row,
 * misaligned or empty is ROTQ_ERR_WORKSPACE and leaves every output as it was.
 */
#include <string.h>

#include "ck.h"
#include "data.h"

typedef struct ws_run {
    const char *what;
    size_t offset; /* bytes from the 256-byte aligned allocation */
    size_t bytes;
    rotq_status want;
} ws_run;

void ck_workspace_protocol(const ck_ws_call *call, rotq_backend b, struct CUstream_st *stream, const rotq_exec *ex,
                           ck_result *r) {
    size_t full = 0, one = 0;
    rotq_status st = call->query(call->ctx, ex, 0, &full);
    if (st == ROTQ_OK) st = call->query(call->ctx, ex, 1, &one);
    if (st != ROTQ_OK) {
        ck_fail(r, "workspace query returned %s", rotq_status_name(st));
        return;
    }
    ck_note(r, "workspace: %zu bytes preferred, %zu for one row", full, one);
    if (full == 0 || one == 0 || one > full) {
        ck_fail(r, "workspace query: %zu bytes (one row: %zu); this case takes a fallback path, so both should be"
                " > 0 and one row's no more", full, one);
        return;
    }
    const ws_run runs[] = {
        {"the preferred size", 0, full, ROTQ_OK},
        {"one row", 0, one, ROTQ_OK},
        {"two and a half rows", 0, 2 * one + one / 2, ROTQ_OK},
        {"more than preferred", 0, full + 4096, ROTQ_OK},
        {"one byte short of one row", 0, one - 1, ROTQ_ERR_WORKSPACE},
        {"16 bytes off 256-byte alignment", 16, full, ROTQ_ERR_WORKSPACE},
        {"0 bytes", 0, 0, ROTQ_ERR_WORKSPACE},
    };
    size_t most = 0;
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        if (runs[i].offset + runs[i].bytes > most) most = runs[i].offset + runs[i].bytes;
    ck_buf ws = {0};
    if (ck_buf_alloc(&ws, b, most, 0)) {
        ck_fail(r, "workspace allocation: %s", ck_buf_error());
        return;
    }
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        rotq_exec e = *ex;
        e.workspace = ws.data + runs[i].offset;
        e.workspace_bytes = runs[i].bytes;
        st = call->run(call->ctx, &e);
        if (st != runs[i].want) {
            ck_fail(r, "workspace of %s (%zu bytes): returned %s, expected %s", runs[i].what, runs[i].bytes,
                    rotq_status_name(st), rotq_status_name(runs[i].want));
            if (st != ROTQ_OK) continue;
        }
        if (ck_backend_sync(b, stream)) {
            ck_fail(r, "workspace of %s: after the call: %s", runs[i].what, ck_buf_error());
            break;
        }
        call->outputs_are(call->ctx, runs[i].want == ROTQ_OK, r, runs[i].what);
    }
    ck_buf_free(&ws);
}
