/*
 * The bad-argument suite: every rotq_status error path, each reached by changing
 * one argument of a valid call, returned for that reason, and with every buffer
 * bit-identical afterwards. All buffers live in one arena in the backend's memory
 * space; the arena is filled with a pattern before each call and compared whole
 * afterwards, so a rejected call that writes anything anywhere is caught.
 * The expected codes follow rotq.h and docs/api.md's status table. Where the two
 * leave two codes plausible for a mistake (e.g. a dtype value outside the enum:
 * UNSUPPORTED_DTYPE, or INVALID_FLAGS "out-of-range enum value"), both are
 * accepted and a comment says so; everything else expects one code.
 * Every hadamard and quantize case also runs the op's workspace query with the
 * same arguments, which must return the same status (the query validates with
 * the op's code), except where the op's failure is in scales or row_sums, which
 * the query does not take; a rejected query leaves *bytes alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "data.h"
#include "rng.h"

enum { R_X, R_Y, R_Q, R_S, R_RS, R_SG, R_COUNT };
#define REGION ((size_t)512 * 1024)
#define LEAD ((size_t)256) /* data starts this far into a region, so ptr - k stays inside */

typedef struct arena {
    ck_buf buf;
    unsigned char *host, *back;
    size_t bytes;
} arena;

/* A pointer into the arena (NULL before the arena exists: names are listed first). */
static char *at(const arena *A, int region, ptrdiff_t delta) {
    return A->buf.data ? A->buf.data + (size_t)region * REGION + LEAD + delta : NULL;
}

typedef struct ba_call {
    int op; /* 0 hadamard, 1 quantize, 2 dequantize */
    rotq_exec ex;
    rotq_hadamard_params hp, rot;
    rotq_quant_params qp;
    rotq_matrix a, b; /* hadamard: x, y; quantize: x, q; dequantize: q, y */
    void *scales, *sums;
    int null_exec, null_params, null_a, null_b, use_rot;
    int query_ok; /* the failure is in an argument the workspace query does not take or check
                     (scales, row_sums; the workspace's size, alignment and overlap) */
    const char *what;
    rotq_status expect[3];
    int nexpect;
} ba_call;

#define EXPECT(...)                                                                \
    do {                                                                           \
        rotq_status e_[] = {__VA_ARGS__};                                          \
        c->nexpect = (int)(sizeof e_ / sizeof e_[0]);                              \
        for (int k_ = 0; k_ < c->nexpect; k_++) c->expect[k_] = e_[k_];            \
    } while (0)
#define CASE(n, text) case n: c->what = text;
/* What a CUDA call returns where the CPU backend ignores the workspace fields. */
#define ON_CUDA(status) (c->ex.backend == ROTQ_BACKEND_CUDA ? (status) : ROTQ_OK)
#define QUERY_OK c->query_ok = 1;
/* A size that takes the CUDA two-pass path on every device: 12 * 4096 (no one-pass
   factor kernel past 2^11), one row of f32 (192 KB of x, y and workspace). */
#define TWO_PASS_CALL                                                                                    \
    set_cols(c, 1, 12 * 4096);                                                                           \
    c->hp = rotq_hadamard_params_default(12 * 4096);                                                     \
    c->hp.factor = 12;
#define TWO_PASS_BYTES ((size_t)12 * 4096 * 4)
/* A quantize call that takes the CUDA two-step path on every device: f32 input
   with a 28 * 512 rotation, 4 rows (the workspace goes in the unused y region). */
#define TWO_STEP_CALL                                                                                    \
    set_cols(c, 4, 14336);                                                                               \
    c->use_rot = 1;                                                                                      \
    c->rot = rotq_hadamard_params_default(14336);

static rotq_matrix mat(void *data, rotq_dtype dt, int64_t rows, int64_t cols, int64_t stride) {
    rotq_matrix m = {data, dt, rows, cols, stride};
    return m;
}

static void base(ba_call *c, int op, const arena *A, rotq_backend b) {
    memset(c, 0, sizeof *c);
    c->op = op;
    c->ex.backend = b;
    c->hp = rotq_hadamard_params_default(64);
    c->rot = rotq_hadamard_params_default(128);
    c->qp.kind = ROTQ_QUANT_INT8_ROW;
    if (op == 0) {
        c->a = mat(at(A, R_X, 0), ROTQ_DTYPE_F32, 4, 64, 64);
        c->b = mat(at(A, R_Y, 0), ROTQ_DTYPE_F32, 4, 64, 64);
    } else if (op == 1) {
        c->a = mat(at(A, R_X, 0), ROTQ_DTYPE_F32, 4, 128, 128);
        c->b = mat(at(A, R_Q, 0), ROTQ_DTYPE_I8, 4, 128, 128);
        c->scales = at(A, R_S, 0);
        c->sums = at(A, R_RS, 0);
    } else {
        c->a = mat(at(A, R_Q, 0), ROTQ_DTYPE_I8, 4, 128, 128);
        c->b = mat(at(A, R_Y, 0), ROTQ_DTYPE_F32, 4, 128, 128);
        c->scales = at(A, R_S, 0);
    }
}

static void set_cols(ba_call *c, int64_t rows, int64_t cols) {
    c->a.rows = c->b.rows = rows;
    c->a.cols = c->b.cols = c->a.stride = c->b.stride = cols;
}

/* Mutation i of a valid rotq_hadamard call; 0 when there are no more. */
static int hadamard_case(int i, ba_call *c, const arena *A) {
    rotq_matrix *x = &c->a, *y = &c->b;
    switch (i) {
    CASE(0, "valid call (control)") EXPECT(ROTQ_OK); return 1;
    CASE(1, "in place, same dtype and stride (control)") *y = *x; EXPECT(ROTQ_OK); return 1;
    CASE(2, "signs and unit scale (control)") c->hp.signs = (const int8_t *)at(A, R_SG, 0); c->hp.scale = 1.0f; EXPECT(ROTQ_OK); return 1;
    CASE(3, "y right after x's last element (control)") y->data = at(A, R_X, 4 * 4 * 64); EXPECT(ROTQ_OK); return 1;
    CASE(4, "size 45056 = 44*1024 with explicit K 44 (control)") set_cols(c, 1, 45056); c->hp = rotq_hadamard_params_default(45056); c->hp.factor = 44; EXPECT(ROTQ_OK); return 1;
    CASE(5, "exec NULL") c->null_exec = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(6, "params NULL") c->null_params = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(7, "x NULL") c->null_a = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(8, "y NULL") c->null_b = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(9, "x->data NULL") x->data = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(10, "y->data NULL") y->data = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(11, "rows 0") x->rows = y->rows = 0; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(12, "rows -1") x->rows = y->rows = -1; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(13, "cols 0") x->cols = y->cols = 0; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(14, "cols -64") x->cols = y->cols = -64; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    /* docs/api.md: shapes that do not match and cols not a multiple of the size are INVALID_SHAPE */
    CASE(15, "y rows differ from x") y->rows = 3; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(16, "y cols differ from x") y->cols = y->stride = 128; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(17, "cols 96 not a multiple of size 64") set_cols(c, 4, 96); EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(18, "rows * stride overflows (rows 2^62)") x->rows = y->rows = (int64_t)1 << 62; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(19, "size 3") set_cols(c, 4, 6); c->hp = rotq_hadamard_params_default(3); EXPECT(ROTQ_ERR_UNSUPPORTED_SIZE); return 1;
    CASE(20, "size 704 = 11*64 (no factor)") set_cols(c, 1, 704); c->hp = rotq_hadamard_params_default(704); EXPECT(ROTQ_ERR_UNSUPPORTED_SIZE); return 1;
    CASE(21, "size 65536 = 2^16 (largest power of two is 2^15)") set_cols(c, 1, 65536); c->hp = rotq_hadamard_params_default(65536); EXPECT(ROTQ_ERR_UNSUPPORTED_SIZE); return 1;
    CASE(22, "size 65537") set_cols(c, 1, 65537); c->hp = rotq_hadamard_params_default(65537); EXPECT(ROTQ_ERR_UNSUPPORTED_SIZE); return 1;
    CASE(23, "size 45056 = 44*1024 with AUTO (QuaRot has no 44)") set_cols(c, 1, 45056); c->hp = rotq_hadamard_params_default(45056); EXPECT(ROTQ_ERR_UNSUPPORTED_SIZE); return 1;
    /* K*2^m beyond 65536 with a valid K: no construction, or this K cannot be used */
    CASE(24, "size 90112 = 44*2048 with explicit K 44 (above 65536)") set_cols(c, 1, 90112); c->hp = rotq_hadamard_params_default(90112); c->hp.factor = 44; EXPECT(ROTQ_ERR_UNSUPPORTED_SIZE, ROTQ_ERR_INVALID_FACTOR); return 1;
    /* a size that is not positive is not a construction; INVALID_ARGUMENT is also fair */
    CASE(25, "size 0") c->hp.size = 0; EXPECT(ROTQ_ERR_UNSUPPORTED_SIZE, ROTQ_ERR_INVALID_ARGUMENT); return 1;
    CASE(26, "size -64") c->hp.size = -64; EXPECT(ROTQ_ERR_UNSUPPORTED_SIZE, ROTQ_ERR_INVALID_ARGUMENT); return 1;
    CASE(27, "factor 13 (not a factor)") c->hp.factor = 13; EXPECT(ROTQ_ERR_INVALID_FACTOR); return 1;
    CASE(28, "factor 12 does not divide size 64") c->hp.factor = 12; EXPECT(ROTQ_ERR_INVALID_FACTOR); return 1;
    CASE(29, "factor 20 does not divide size 24") set_cols(c, 4, 24); c->hp = rotq_hadamard_params_default(24); c->hp.factor = 20; EXPECT(ROTQ_ERR_INVALID_FACTOR); return 1;
    CASE(30, "factor -1") c->hp.factor = -1; EXPECT(ROTQ_ERR_INVALID_FACTOR); return 1;
    CASE(31, "factor 2") c->hp.factor = 2; EXPECT(ROTQ_ERR_INVALID_FACTOR); return 1;
    /* POW2 asked for 24 = 12*2: the requested factor does not fit (or: no pow2 construction) */
    CASE(32, "factor POW2 with size 24") set_cols(c, 4, 24); c->hp = rotq_hadamard_params_default(24); c->hp.factor = ROTQ_HADAMARD_FACTOR_POW2; EXPECT(ROTQ_ERR_INVALID_FACTOR, ROTQ_ERR_UNSUPPORTED_SIZE); return 1;
    CASE(33, "scale 0") c->hp.scale = 0.0f; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(34, "scale -0") c->hp.scale = -0.0f; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(35, "scale NaN") c->hp.scale = NAN; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(36, "scale +Inf") c->hp.scale = INFINITY; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(37, "scale -Inf") c->hp.scale = -INFINITY; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(38, "flags 0x2 (unknown)") c->hp.flags = 0x2u; EXPECT(ROTQ_ERR_INVALID_FLAGS); return 1;
    CASE(39, "flags 0x80000001 (unknown high bit)") c->hp.flags = 0x80000001u; EXPECT(ROTQ_ERR_INVALID_FLAGS); return 1;
    CASE(40, "x dtype I8") x->dtype = ROTQ_DTYPE_I8; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(41, "y dtype FP8_E4M3") y->dtype = ROTQ_DTYPE_FP8_E4M3; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(42, "x dtype I4X2") x->dtype = ROTQ_DTYPE_I4X2; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    /* out-of-enum dtype values: unsupported dtype, or "an invalid enum value" */
    CASE(43, "y dtype 99") y->dtype = (rotq_dtype)99; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE, ROTQ_ERR_INVALID_FLAGS); return 1;
    CASE(44, "x dtype -1") x->dtype = (rotq_dtype)-1; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE, ROTQ_ERR_INVALID_FLAGS); return 1;
    CASE(45, "x stride 63 < cols") x->stride = 63; EXPECT(ROTQ_ERR_INVALID_STRIDE); return 1;
    CASE(46, "y stride 0") y->stride = 0; EXPECT(ROTQ_ERR_INVALID_STRIDE); return 1;
    CASE(47, "x stride -64") x->stride = -64; EXPECT(ROTQ_ERR_INVALID_STRIDE); return 1;
    CASE(48, "x f16 data at an odd address") x->dtype = ROTQ_DTYPE_F16; x->data = at(A, R_X, 1); EXPECT(ROTQ_ERR_MISALIGNED); return 1;
    CASE(49, "y bf16 data at an odd address") y->dtype = ROTQ_DTYPE_BF16; y->data = at(A, R_Y, 1); EXPECT(ROTQ_ERR_MISALIGNED); return 1;
    CASE(50, "x f32 data 2 bytes off") x->data = at(A, R_X, 2); EXPECT(ROTQ_ERR_MISALIGNED); return 1;
    CASE(51, "y f32 data 1 byte off") y->data = at(A, R_Y, 1); EXPECT(ROTQ_ERR_MISALIGNED); return 1;
    CASE(52, "y = x + 1 element (partial overlap)") y->data = at(A, R_X, 4); EXPECT(ROTQ_ERR_OVERLAP); return 1;
    CASE(53, "y = x - 2 elements (partial overlap)") y->data = at(A, R_X, -8); EXPECT(ROTQ_ERR_OVERLAP); return 1;
    CASE(54, "y starts inside x's last row") y->data = at(A, R_X, 4 * (3 * 64 + 10)); EXPECT(ROTQ_ERR_OVERLAP); return 1;
    CASE(55, "y = x with a different stride") *y = *x; x->stride = 64; y->stride = 65; EXPECT(ROTQ_ERR_OVERLAP); return 1;
    CASE(56, "y = x with a different dtype (f32 -> f16)") *y = *x; y->dtype = ROTQ_DTYPE_F16; EXPECT(ROTQ_ERR_OVERLAP); return 1;
    CASE(57, "backend 2 (past the enum)") c->ex.backend = (rotq_backend)2; EXPECT(ROTQ_ERR_INVALID_BACKEND); return 1;
    CASE(58, "backend -1") c->ex.backend = (rotq_backend)-1; EXPECT(ROTQ_ERR_INVALID_BACKEND); return 1;
    CASE(59, "size 128 larger than cols 64") c->hp = rotq_hadamard_params_default(128); EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    /* rotq_exec's workspace (CUDA only; the CPU backend ignores the fields) */
    CASE(60, "workspace_bytes 256 with workspace NULL") c->ex.workspace_bytes = 256; EXPECT(ON_CUDA(ROTQ_ERR_INVALID_ARGUMENT)); return 1;
    CASE(61, "a misaligned workspace on a call that needs none (ignored; control)") c->ex.workspace = at(A, R_Q, 3); c->ex.workspace_bytes = 4096; EXPECT(ROTQ_OK); return 1;
    CASE(62, "two-pass size with a one-row workspace (control)") TWO_PASS_CALL c->ex.workspace = at(A, R_Q, 0); c->ex.workspace_bytes = TWO_PASS_BYTES; EXPECT(ROTQ_OK); return 1;
    CASE(63, "two-pass size, workspace one byte short of a row") TWO_PASS_CALL c->ex.workspace = at(A, R_Q, 0); c->ex.workspace_bytes = TWO_PASS_BYTES - 1; EXPECT(ON_CUDA(ROTQ_ERR_WORKSPACE)); QUERY_OK return 1;
    CASE(64, "two-pass size, workspace 16 bytes off 256-byte alignment") TWO_PASS_CALL c->ex.workspace = at(A, R_Q, 16); c->ex.workspace_bytes = TWO_PASS_BYTES; EXPECT(ON_CUDA(ROTQ_ERR_WORKSPACE)); QUERY_OK return 1;
    CASE(65, "two-pass size, workspace of 0 bytes") TWO_PASS_CALL c->ex.workspace = at(A, R_Q, 0); c->ex.workspace_bytes = 0; EXPECT(ON_CUDA(ROTQ_ERR_WORKSPACE)); QUERY_OK return 1;
    CASE(66, "two-pass size, workspace overlapping y") TWO_PASS_CALL c->ex.workspace = at(A, R_Y, 0); c->ex.workspace_bytes = TWO_PASS_BYTES; EXPECT(ON_CUDA(ROTQ_ERR_OVERLAP)); QUERY_OK return 1;
    CASE(67, "two-pass size, workspace overlapping x") TWO_PASS_CALL c->ex.workspace = at(A, R_X, 0); c->ex.workspace_bytes = TWO_PASS_BYTES; EXPECT(ON_CUDA(ROTQ_ERR_OVERLAP)); QUERY_OK return 1;
    default: return 0;
    }
}

/* Mutation i of a valid rotq_quantize call. */
static int quantize_case(int i, ba_call *c, const arena *A) {
    rotq_matrix *x = &c->a, *q = &c->b;
    rotq_quant_params *p = &c->qp;
    switch (i) {
    CASE(0, "valid int8 call with row sums (control)") EXPECT(ROTQ_OK); return 1;
    CASE(1, "row_sums NULL (control)") c->sums = NULL; EXPECT(ROTQ_OK); return 1;
    CASE(2, "int4 group 32 (control)") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 32; q->dtype = ROTQ_DTYPE_I4X2; c->sums = NULL; EXPECT(ROTQ_OK); return 1;
    CASE(3, "fp8 tensor, scales NULL (control)") p->kind = ROTQ_QUANT_FP8_TENSOR; p->static_scale = 0.5f; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->scales = c->sums = NULL; EXPECT(ROTQ_OK); return 1;
    CASE(4, "rotation of size 32, block-diagonal, signs (control)") c->use_rot = 1; c->rot = rotq_hadamard_params_default(32); c->rot.signs = (const int8_t *)at(A, R_SG, 0); EXPECT(ROTQ_OK); return 1;
    CASE(5, "exec NULL") c->null_exec = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(6, "params NULL") c->null_params = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(7, "x NULL") c->null_a = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(8, "q NULL") c->null_b = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(9, "x->data NULL") x->data = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(10, "q->data NULL") q->data = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(11, "scales NULL (int8 row)") c->scales = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); QUERY_OK return 1;
    CASE(12, "scales NULL (fp8 row)") p->kind = ROTQ_QUANT_FP8_ROW; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->sums = NULL; c->scales = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); QUERY_OK return 1;
    CASE(13, "scales NULL (int4 group)") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 64; q->dtype = ROTQ_DTYPE_I4X2; c->sums = NULL; c->scales = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); QUERY_OK return 1;
    CASE(14, "fp8 tensor with scales (must be NULL)") p->kind = ROTQ_QUANT_FP8_TENSOR; p->static_scale = 0.5f; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_ARGUMENT); QUERY_OK return 1;
    CASE(15, "fp8 row with row sums (int8 only)") p->kind = ROTQ_QUANT_FP8_ROW; q->dtype = ROTQ_DTYPE_FP8_E4M3; EXPECT(ROTQ_ERR_INVALID_ARGUMENT); QUERY_OK return 1;
    CASE(16, "int4 group with row sums (int8 only)") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 32; q->dtype = ROTQ_DTYPE_I4X2; EXPECT(ROTQ_ERR_INVALID_ARGUMENT); QUERY_OK return 1;
    /* kind outside the enum: "an out-of-range enum value" (docs/api.md) */
    CASE(17, "kind 4 (past the enum)") p->kind = (rotq_quant_kind)4; EXPECT(ROTQ_ERR_INVALID_FLAGS); return 1;
    CASE(18, "kind -1") p->kind = (rotq_quant_kind)-1; EXPECT(ROTQ_ERR_INVALID_FLAGS); return 1;
    CASE(19, "int4 group 16") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 16; q->dtype = ROTQ_DTYPE_I4X2; c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_GROUP); return 1;
    CASE(20, "int4 group 48") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 48; q->dtype = ROTQ_DTYPE_I4X2; c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_GROUP); return 1;
    CASE(21, "int4 group 256") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 256; set_cols(c, 4, 256); q->dtype = ROTQ_DTYPE_I4X2; c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_GROUP); return 1;
    CASE(22, "int4 group 0") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 0; q->dtype = ROTQ_DTYPE_I4X2; c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_GROUP); return 1;
    CASE(23, "int4 group -32") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = -32; q->dtype = ROTQ_DTYPE_I4X2; c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_GROUP); return 1;
    CASE(24, "int4 group 128 does not divide cols 96") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 128; set_cols(c, 4, 96); q->dtype = ROTQ_DTYPE_I4X2; c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_GROUP); return 1;
    /* "group_size: must be 0 otherwise": the group code, or INVALID_ARGUMENT */
    CASE(25, "int8 row with group 32") p->group_size = 32; EXPECT(ROTQ_ERR_INVALID_GROUP, ROTQ_ERR_INVALID_ARGUMENT); return 1;
    CASE(26, "fp8 tensor static scale 0") p->kind = ROTQ_QUANT_FP8_TENSOR; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->scales = c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(27, "fp8 tensor static scale -1") p->kind = ROTQ_QUANT_FP8_TENSOR; p->static_scale = -1.0f; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->scales = c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(28, "fp8 tensor static scale NaN") p->kind = ROTQ_QUANT_FP8_TENSOR; p->static_scale = NAN; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->scales = c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(29, "fp8 tensor static scale Inf") p->kind = ROTQ_QUANT_FP8_TENSOR; p->static_scale = INFINITY; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->scales = c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    /* "static_scale: must be 0 otherwise": a scale code, or INVALID_ARGUMENT */
    CASE(30, "int8 row with static scale 1") p->static_scale = 1.0f; EXPECT(ROTQ_ERR_INVALID_SCALE, ROTQ_ERR_INVALID_ARGUMENT); return 1;
    CASE(31, "q dtype FP8 for int8 row") q->dtype = ROTQ_DTYPE_FP8_E4M3; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(32, "q dtype F32") q->dtype = ROTQ_DTYPE_F32; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(33, "q dtype I8 for fp8 row") p->kind = ROTQ_QUANT_FP8_ROW; c->sums = NULL; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(34, "q dtype I8 for int4 group") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 32; c->sums = NULL; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(35, "x dtype I8") x->dtype = ROTQ_DTYPE_I8; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(36, "x dtype 99") x->dtype = (rotq_dtype)99; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE, ROTQ_ERR_INVALID_FLAGS); return 1;
    CASE(37, "rows 0") x->rows = q->rows = 0; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(38, "cols -1") x->cols = q->cols = -1; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(39, "q rows differ from x") q->rows = 5; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(40, "q cols differ from x") q->cols = 64; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(41, "x stride 127 < cols") x->stride = 127; EXPECT(ROTQ_ERR_INVALID_STRIDE); return 1;
    CASE(42, "q stride 100 < cols") q->stride = 100; EXPECT(ROTQ_ERR_INVALID_STRIDE); return 1;
    /* rotq.h: an I4X2 stride "must also be even": a stride code, or "stride is not aligned" */
    CASE(43, "odd I4X2 q stride 129") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 32; q->dtype = ROTQ_DTYPE_I4X2; q->stride = 129; c->sums = NULL; EXPECT(ROTQ_ERR_INVALID_STRIDE, ROTQ_ERR_MISALIGNED); return 1;
    CASE(44, "x f16 data at an odd address") x->dtype = ROTQ_DTYPE_F16; x->data = at(A, R_X, 1); EXPECT(ROTQ_ERR_MISALIGNED); return 1;
    CASE(45, "scales 1 byte off") c->scales = at(A, R_S, 1); EXPECT(ROTQ_ERR_MISALIGNED); QUERY_OK return 1;
    CASE(46, "row_sums 2 bytes off") c->sums = at(A, R_RS, 2); EXPECT(ROTQ_ERR_MISALIGNED); QUERY_OK return 1;
    CASE(47, "q overlaps x") q->data = at(A, R_X, 16); EXPECT(ROTQ_ERR_OVERLAP); return 1;
    CASE(48, "scales overlap q") c->scales = at(A, R_Q, 64); EXPECT(ROTQ_ERR_OVERLAP); QUERY_OK return 1;
    CASE(49, "row_sums overlap scales") c->sums = at(A, R_S, 8); EXPECT(ROTQ_ERR_OVERLAP); QUERY_OK return 1;
    CASE(50, "scales overlap x") c->scales = at(A, R_X, 128); EXPECT(ROTQ_ERR_OVERLAP); QUERY_OK return 1;
    CASE(51, "row_sums overlap q") c->sums = at(A, R_Q, 256); EXPECT(ROTQ_ERR_OVERLAP); QUERY_OK return 1;
    CASE(52, "rotation size 3 (cols 384)") set_cols(c, 4, 384); c->use_rot = 1; c->rot = rotq_hadamard_params_default(3); EXPECT(ROTQ_ERR_UNSUPPORTED_SIZE); return 1;
    CASE(53, "rotation factor 13") c->use_rot = 1; c->rot.factor = 13; EXPECT(ROTQ_ERR_INVALID_FACTOR); return 1;
    CASE(54, "rotation scale NaN") c->use_rot = 1; c->rot.scale = NAN; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(55, "rotation scale 0") c->use_rot = 1; c->rot.scale = 0.0f; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(56, "rotation flags 0x4") c->use_rot = 1; c->rot.flags = 0x4u; EXPECT(ROTQ_ERR_INVALID_FLAGS); return 1;
    CASE(57, "rotation size 256 does not divide cols 128") c->use_rot = 1; c->rot = rotq_hadamard_params_default(256); EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(58, "backend 7") c->ex.backend = (rotq_backend)7; EXPECT(ROTQ_ERR_INVALID_BACKEND); return 1;
    /* rotq_exec's workspace (CUDA only; the CPU backend ignores the fields) */
    CASE(59, "workspace_bytes 64 with workspace NULL") c->ex.workspace_bytes = 64; EXPECT(ON_CUDA(ROTQ_ERR_INVALID_ARGUMENT)); return 1;
    CASE(60, "two-step rotation with a workspace for every row (control)") TWO_STEP_CALL c->ex.workspace = at(A, R_Y, 0); c->ex.workspace_bytes = REGION - LEAD; EXPECT(ROTQ_OK); return 1;
    CASE(61, "two-step rotation, workspace 16 bytes off 256-byte alignment") TWO_STEP_CALL c->ex.workspace = at(A, R_Y, 16); c->ex.workspace_bytes = REGION / 2; EXPECT(ON_CUDA(ROTQ_ERR_WORKSPACE)); QUERY_OK return 1;
    CASE(62, "two-step rotation, workspace of 0 bytes") TWO_STEP_CALL c->ex.workspace = at(A, R_Y, 0); c->ex.workspace_bytes = 0; EXPECT(ON_CUDA(ROTQ_ERR_WORKSPACE)); QUERY_OK return 1;
    CASE(63, "two-step rotation, workspace overlapping x") TWO_STEP_CALL c->ex.workspace = at(A, R_X, 0); c->ex.workspace_bytes = REGION / 2; EXPECT(ON_CUDA(ROTQ_ERR_OVERLAP)); QUERY_OK return 1;
    CASE(64, "two-step rotation, workspace running into q") TWO_STEP_CALL c->ex.workspace = at(A, R_Y, 0); c->ex.workspace_bytes = 2 * REGION; EXPECT(ON_CUDA(ROTQ_ERR_OVERLAP)); QUERY_OK return 1;
    default: return 0;
    }
}

/* Mutation i of a valid rotq_dequantize call. */
static int dequantize_case(int i, ba_call *c, const arena *A) {
    rotq_matrix *q = &c->a, *y = &c->b;
    rotq_quant_params *p = &c->qp;
    switch (i) {
    CASE(0, "valid int8 call (control)") EXPECT(ROTQ_OK); return 1;
    CASE(1, "int4 group 64 to f16 (control)") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 64; q->dtype = ROTQ_DTYPE_I4X2; y->dtype = ROTQ_DTYPE_F16; EXPECT(ROTQ_OK); return 1;
    CASE(2, "fp8 tensor, scales NULL (control)") p->kind = ROTQ_QUANT_FP8_TENSOR; p->static_scale = 0.5f; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->scales = NULL; EXPECT(ROTQ_OK); return 1;
    CASE(3, "exec NULL") c->null_exec = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(4, "params NULL") c->null_params = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(5, "q NULL") c->null_a = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(6, "y NULL") c->null_b = 1; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(7, "q->data NULL") q->data = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(8, "y->data NULL") y->data = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(9, "scales NULL (int8 row)") c->scales = NULL; EXPECT(ROTQ_ERR_NULL_POINTER); return 1;
    CASE(10, "rotate set (must be NULL)") c->use_rot = 1; EXPECT(ROTQ_ERR_INVALID_ARGUMENT); return 1;
    CASE(11, "fp8 tensor with scales (must be NULL)") p->kind = ROTQ_QUANT_FP8_TENSOR; p->static_scale = 0.5f; q->dtype = ROTQ_DTYPE_FP8_E4M3; EXPECT(ROTQ_ERR_INVALID_ARGUMENT); return 1;
    CASE(12, "fp8 tensor static scale 0") p->kind = ROTQ_QUANT_FP8_TENSOR; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->scales = NULL; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(13, "fp8 tensor static scale -Inf") p->kind = ROTQ_QUANT_FP8_TENSOR; p->static_scale = -INFINITY; q->dtype = ROTQ_DTYPE_FP8_E4M3; c->scales = NULL; EXPECT(ROTQ_ERR_INVALID_SCALE); return 1;
    CASE(14, "int8 row with static scale 2") p->static_scale = 2.0f; EXPECT(ROTQ_ERR_INVALID_SCALE, ROTQ_ERR_INVALID_ARGUMENT); return 1;
    CASE(15, "y dtype I8") y->dtype = ROTQ_DTYPE_I8; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(16, "q dtype F32") q->dtype = ROTQ_DTYPE_F32; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(17, "q dtype I8 for fp8 row") p->kind = ROTQ_QUANT_FP8_ROW; EXPECT(ROTQ_ERR_UNSUPPORTED_DTYPE); return 1;
    CASE(18, "int4 group 48") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 48; q->dtype = ROTQ_DTYPE_I4X2; EXPECT(ROTQ_ERR_INVALID_GROUP); return 1;
    CASE(19, "kind 9") p->kind = (rotq_quant_kind)9; EXPECT(ROTQ_ERR_INVALID_FLAGS); return 1;
    CASE(20, "rows 0") q->rows = y->rows = 0; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(21, "y cols differ from q") y->cols = 64; EXPECT(ROTQ_ERR_INVALID_SHAPE); return 1;
    CASE(22, "odd I4X2 q stride 131") p->kind = ROTQ_QUANT_INT4_GROUP; p->group_size = 32; q->dtype = ROTQ_DTYPE_I4X2; q->stride = 131; EXPECT(ROTQ_ERR_INVALID_STRIDE, ROTQ_ERR_MISALIGNED); return 1;
    CASE(23, "y stride 64 < cols") y->stride = 64; EXPECT(ROTQ_ERR_INVALID_STRIDE); return 1;
    CASE(24, "y f16 data at an odd address") y->dtype = ROTQ_DTYPE_F16; y->data = at(A, R_Y, 1); EXPECT(ROTQ_ERR_MISALIGNED); return 1;
    CASE(25, "scales 2 bytes off") c->scales = at(A, R_S, 2); EXPECT(ROTQ_ERR_MISALIGNED); return 1;
    CASE(26, "y overlaps q") y->data = at(A, R_Q, 0); EXPECT(ROTQ_ERR_OVERLAP); return 1;
    CASE(27, "y overlaps scales") y->data = at(A, R_S, 4); EXPECT(ROTQ_ERR_OVERLAP); return 1;
    CASE(28, "backend -1") c->ex.backend = (rotq_backend)-1; EXPECT(ROTQ_ERR_INVALID_BACKEND); return 1;
    CASE(29, "workspace_bytes 64 with workspace NULL") c->ex.workspace_bytes = 64; EXPECT(ON_CUDA(ROTQ_ERR_INVALID_ARGUMENT)); return 1;
    CASE(30, "a misaligned workspace (ignored: dequantize needs none; control)") c->ex.workspace = at(A, R_X, 8); c->ex.workspace_bytes = 100; EXPECT(ROTQ_OK); return 1;
    default: return 0;
    }
}

static rotq_status call(ba_call *c) {
    const rotq_exec *e = c->null_exec ? NULL : &c->ex;
    const rotq_matrix *a = c->null_a ? NULL : &c->a, *b = c->null_b ? NULL : &c->b;
    if (c->op == 0) return rotq_hadamard(e, c->null_params ? NULL : &c->hp, a, b);
    c->qp.rotate = c->use_rot ? &c->rot : NULL;
    const rotq_quant_params *p = c->null_params ? NULL : &c->qp;
    if (c->op == 1) return rotq_quantize(e, p, a, b, (float *)c->scales, (int32_t *)c->sums);
    return rotq_dequantize(e, p, a, (const float *)c->scales, b);
}

/* The op's workspace query with the call's arguments (hadamard and quantize). */
static rotq_status call_query(ba_call *c, size_t *bytes) {
    const rotq_exec *e = c->null_exec ? NULL : &c->ex;
    const rotq_matrix *a = c->null_a ? NULL : &c->a, *b = c->null_b ? NULL : &c->b;
    if (c->op == 0) return rotq_hadamard_workspace_size(e, c->null_params ? NULL : &c->hp, a, b, bytes);
    c->qp.rotate = c->use_rot ? &c->rot : NULL;
    return rotq_quantize_workspace_size(e, c->null_params ? NULL : &c->qp, a, b, bytes);
}

/* The query returns the op's status for the same arguments (ROTQ_OK where the op
   fails on something the query does not take), writes *bytes only on success, and
   reports 0 bytes on the CPU. */
static void judge_query(ck_result *r, ba_call *c, rotq_backend b) {
    if (c->op > 1) return;
    const size_t unset = (size_t)0x5a5a5a5a;
    size_t bytes = unset;
    rotq_status st = call_query(c, &bytes);
    int ok = 0;
    if (c->query_ok || c->expect[0] == ROTQ_OK) {
        ok = st == ROTQ_OK;
    } else {
        for (int k = 0; k < c->nexpect; k++) ok |= st == c->expect[k];
    }
    if (!ok)
        ck_fail(r, "the workspace query returned %s where the op's status is %s%s", rotq_status_name(st),
                rotq_status_name(c->expect[0]), c->query_ok ? " (the query does not take that argument: ROTQ_OK)" : "");
    if (st != ROTQ_OK && bytes != unset) ck_fail(r, "a rejected workspace query wrote *bytes (%zu)", bytes);
    if (st == ROTQ_OK && b == ROTQ_BACKEND_CPU && bytes != 0)
        ck_fail(r, "the workspace query on the CPU backend reported %zu bytes, expected 0", bytes);
}

static const char *region_name(size_t off) {
    static const char *names[R_COUNT] = {"x", "y", "q", "scales", "row_sums", "signs"};
    size_t r = off / REGION;
    return r < R_COUNT ? names[r] : "?";
}

/* Runs one call against a freshly patterned arena and judges status and memory. */
static void judge(ck_result *r, ba_call *c, arena *A, rotq_backend b) {
    if (ck_buf_upload(&A->buf, A->host, A->bytes)) {
        ck_fail(r, "backend memory: %s", ck_buf_error());
        return;
    }
    rotq_status st = call(c);
    if (c->expect[0] == ROTQ_OK && st == ROTQ_ERR_NOT_SUPPORTED) { /* a valid call the backend lacks */
        ck_skip(r, "control not supported on this backend");
        return;
    }
    judge_query(r, c, b); /* before the memory comparison, which then covers it too */
    int ok = 0;
    for (int k = 0; k < c->nexpect; k++) ok |= st == c->expect[k];
    if (!ok) {
        char want[160] = "";
        for (int k = 0; k < c->nexpect; k++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", k ? " or " : "", rotq_status_name(c->expect[k]));
        ck_fail(r, "returned %s, expected %s", rotq_status_name(st), want);
    }
    if (ck_backend_sync(b, NULL)) {
        ck_fail(r, "after the call: %s", ck_buf_error());
        return;
    }
    if (c->expect[0] == ROTQ_OK || st == ROTQ_OK) return; /* controls write their outputs */
    if (ck_buf_download(&A->buf, A->back, A->bytes)) {
        ck_fail(r, "backend memory: %s", ck_buf_error());
        return;
    }
    for (size_t k = 0; k < A->bytes; k++)
        if (A->back[k] != A->host[k]) {
            ck_fail(r, "a rejected call wrote memory: %s region, byte %lld from its start", region_name(k),
                    (long long)(k % REGION) - (long long)LEAD);
            break;
        }
}

static void run_backend_suite(ck_ctx *c, rotq_backend b) {
    static const char *ops[3] = {"hadamard", "quantize", "dequantize"};
    static int (*const cases[3])(int, ba_call *, const arena *) = {hadamard_case, quantize_case, dequantize_case};
    arena A;
    memset(&A, 0, sizeof A);
    A.bytes = REGION * R_COUNT;
    int have = 0;
    for (int op = 0; op < 3; op++)
        for (int i = 0;; i++) {
            ba_call call_;
            base(&call_, op, &A, b);
            if (!cases[op](i, &call_, &A)) break;
            char name[200];
            uint64_t seed;
            snprintf(name, sizeof name, "badargs %s: %s", ops[op], call_.what);
            if (!ck_case_begin(c, name, &seed)) continue;
            if (!ck_backend_begin(c, b, name)) continue;
            ck_result r = {0};
            if (!have) { /* the arena, made on first use */
                A.host = malloc(A.bytes), A.back = malloc(A.bytes);
                if (!A.host || !A.back || ck_buf_alloc(&A.buf, b, A.bytes, 0)) {
                    ck_fail(&r, "arena allocation failed: %s", ck_buf_error());
                    ck_report(c, b, name, &r);
                    goto out;
                }
                ck_rng g;
                ck_rng_seed(&g, seed);
                for (size_t k = 0; k < A.bytes; k++) A.host[k] = (unsigned char)ck_rng_u64(&g);
                float *xf = (float *)A.host; /* x holds finite floats, so controls read valid data */
                for (size_t k = 0; k < REGION / 4; k++) xf[k] = (float)(ck_rng_normal(&g));
                have = 1;
            }
            base(&call_, op, &A, b); /* the pointers now point into the real arena */
            cases[op](i, &call_, &A);
            judge(&r, &call_, &A, b);
            ck_report(c, b, name, &r);
        }
out:
    ck_buf_free(&A.buf);
    free(A.host);
    free(A.back);
}

/* Backend-independent error paths of the smaller entry points (reported under CPU). */
static void check_small_entry_points(ck_result *r) {
    int32_t k = 0, m = 0;
    int8_t buf[200];
    memset(buf, 0x5a, sizeof buf);
#define WANT(expr, ...)                                                                              \
    do {                                                                                             \
        rotq_status got_ = (expr), w_[] = {__VA_ARGS__};                                             \
        int ok_ = 0;                                                                                 \
        for (size_t j_ = 0; j_ < sizeof w_ / sizeof w_[0]; j_++) ok_ |= got_ == w_[j_];              \
        if (!ok_) ck_fail(r, "%s returned %s, expected %s", #expr, rotq_status_name(got_), rotq_status_name(w_[0])); \
    } while (0)
    WANT(rotq_hadamard_pick_factor(64, (rotq_factor_order)3, &k), ROTQ_ERR_INVALID_FLAGS);
    WANT(rotq_hadamard_pick_factor(64, (rotq_factor_order)-1, &k), ROTQ_ERR_INVALID_FLAGS);
    WANT(rotq_hadamard_pick_factor(64, ROTQ_ORDER_QUAROT, NULL), ROTQ_ERR_NULL_POINTER);
    WANT(rotq_hadamard_pick_factor(0, ROTQ_ORDER_QUAROT, &k), ROTQ_ERR_UNSUPPORTED_SIZE);
    WANT(rotq_hadamard_pick_factor(-12, ROTQ_ORDER_QUAROT, &k), ROTQ_ERR_UNSUPPORTED_SIZE);
    WANT(rotq_hadamard_resolve(64, ROTQ_HADAMARD_FACTOR_AUTO, NULL, &m), ROTQ_ERR_NULL_POINTER);
    WANT(rotq_hadamard_resolve(64, ROTQ_HADAMARD_FACTOR_AUTO, &k, NULL), ROTQ_ERR_NULL_POINTER);
    WANT(rotq_hadamard_resolve(64, 13, &k, &m), ROTQ_ERR_INVALID_FACTOR);
    WANT(rotq_hadamard_resolve(3, ROTQ_HADAMARD_FACTOR_AUTO, &k, &m), ROTQ_ERR_UNSUPPORTED_SIZE);
    WANT(rotq_hadamard_factor_matrix(12, NULL, 144), ROTQ_ERR_NULL_POINTER);
    WANT(rotq_hadamard_factor_matrix(12, buf, 143), ROTQ_ERR_INVALID_ARGUMENT);
    WANT(rotq_hadamard_factor_matrix(13, buf, 169), ROTQ_ERR_INVALID_FACTOR);
    WANT(rotq_hadamard_factor_matrix(0, buf, 1), ROTQ_ERR_INVALID_FACTOR);
    for (size_t j = 0; j < sizeof buf; j++)
        if (buf[j] != 0x5a) {
            ck_fail(r, "a rejected rotq_hadamard_factor_matrix wrote its output");
            break;
        }
    char text[64];
    memset(text, 0x5a, sizeof text);
    WANT(rotq_cuda_device_count(NULL), ROTQ_ERR_NULL_POINTER);
    WANT(rotq_cuda_device_describe(-1, text, sizeof text), ROTQ_ERR_INVALID_ARGUMENT, ROTQ_ERR_BACKEND_UNAVAILABLE);
    WANT(rotq_cuda_device_describe(0, NULL, 64), ROTQ_ERR_NULL_POINTER, ROTQ_ERR_BACKEND_UNAVAILABLE);

    /* The workspace queries on the CPU: *bytes NULL first, then the op's checks;
       0 bytes for the shapes that take a fallback path on CUDA (two passes at
       12 * 4096; f32 input with a 28 * 512 rotation), whatever the workspace
       fields hold (the CPU ignores them). */
    enum { N = 12 * 4096 };
    float *xf = malloc(sizeof(float) * 2 * N);
    int8_t *qi = malloc(N);
    if (!xf || !qi) {
        ck_fail(r, "host allocation failed");
    } else {
        rotq_exec cpu = {ROTQ_BACKEND_CPU, 0, NULL, (void *)(uintptr_t)1, 5};
        rotq_hadamard_params hp = rotq_hadamard_params_default(N), rp = rotq_hadamard_params_default(14336);
        hp.factor = 12;
        rotq_matrix mx = {xf, ROTQ_DTYPE_F32, 1, N, N}, my = {xf + N, ROTQ_DTYPE_F32, 1, N, N};
        rotq_matrix qx = {xf, ROTQ_DTYPE_F32, 2, 14336, 14336}, qq = {qi, ROTQ_DTYPE_I8, 2, 14336, 14336};
        rotq_quant_params qp = {ROTQ_QUANT_INT8_ROW, 0, 0.0f, &rp};
        size_t bytes = 7;
        WANT(rotq_hadamard_workspace_size(&cpu, &hp, &mx, &my, NULL), ROTQ_ERR_NULL_POINTER);
        WANT(rotq_quantize_workspace_size(&cpu, &qp, &qx, &qq, NULL), ROTQ_ERR_NULL_POINTER);
        WANT(rotq_hadamard_workspace_size(NULL, &hp, &mx, &my, &bytes), ROTQ_ERR_NULL_POINTER);
        WANT(rotq_quantize_workspace_size(&cpu, NULL, &qx, &qq, &bytes), ROTQ_ERR_NULL_POINTER);
        if (bytes != 7) ck_fail(r, "a rejected workspace query wrote *bytes");
        WANT(rotq_hadamard_workspace_size(&cpu, &hp, &mx, &my, &bytes), ROTQ_OK);
        if (bytes != 0) ck_fail(r, "rotq_hadamard_workspace_size on the CPU: %zu bytes, expected 0", bytes);
        bytes = 7;
        WANT(rotq_quantize_workspace_size(&cpu, &qp, &qx, &qq, &bytes), ROTQ_OK);
        if (bytes != 0) ck_fail(r, "rotq_quantize_workspace_size on the CPU: %zu bytes, expected 0", bytes);
    }
    free(xf);
    free(qi);
#undef WANT
}

/* Without a usable CUDA device every op on the CUDA backend is BACKEND_UNAVAILABLE
   and writes nothing (host pointers here: the library must not touch them either). */
static void check_cuda_unavailable(ck_result *r) {
    float x[256], y[256], ycopy[256], s[4] = {1, 1, 1, 1};
    int8_t q[256], qcopy[256];
    for (int i = 0; i < 256; i++) x[i] = (float)i, y[i] = -1.0f, q[i] = 0x5a;
    memcpy(ycopy, y, sizeof y);
    memcpy(qcopy, q, sizeof q);
    rotq_exec e = {ROTQ_BACKEND_CUDA, 0, NULL, NULL, 0};
    rotq_hadamard_params hp = rotq_hadamard_params_default(64);
    rotq_matrix mx = {x, ROTQ_DTYPE_F32, 4, 64, 64}, my = {y, ROTQ_DTYPE_F32, 4, 64, 64};
    rotq_matrix mq = {q, ROTQ_DTYPE_I8, 4, 64, 64};
    rotq_quant_params qp = {ROTQ_QUANT_INT8_ROW, 0, 0.0f, NULL};
    rotq_status st[3] = {rotq_hadamard(&e, &hp, &mx, &my), rotq_quantize(&e, &qp, &mx, &mq, s, NULL),
                         rotq_dequantize(&e, &qp, &mq, s, &my)};
    size_t bytes[2] = {7, 7};
    rotq_status qst[2] = {rotq_hadamard_workspace_size(&e, &hp, &mx, &my, &bytes[0]),
                          rotq_quantize_workspace_size(&e, &qp, &mx, &mq, &bytes[1])};
    static const char *names[5] = {"rotq_hadamard", "rotq_quantize", "rotq_dequantize", "rotq_hadamard_workspace_size",
                                   "rotq_quantize_workspace_size"};
    for (int i = 0; i < 5; i++) {
        rotq_status got = i < 3 ? st[i] : qst[i - 3];
        if (got != ROTQ_ERR_BACKEND_UNAVAILABLE)
            ck_fail(r, "%s on CUDA without a device returned %s, expected ROTQ_ERR_BACKEND_UNAVAILABLE", names[i],
                    rotq_status_name(got));
    }
    if (bytes[0] != 7 || bytes[1] != 7) ck_fail(r, "a rejected workspace query wrote *bytes");
    if (memcmp(y, ycopy, sizeof y) || memcmp(q, qcopy, sizeof q)) ck_fail(r, "a rejected CUDA call wrote host memory");
}

void ck_op_badargs(ck_ctx *c) {
    uint64_t seed;
    const char *n1 = "badargs api: small entry points";
    if (ck_case_begin(c, n1, &seed) && ck_backend_begin(c, ROTQ_BACKEND_CPU, n1)) {
        ck_result r = {0};
        check_small_entry_points(&r);
        ck_report(c, ROTQ_BACKEND_CPU, n1, &r);
    }
    const char *n2 = "badargs api: CUDA backend without a device";
    if (ck_case_begin(c, n2, &seed) && !rotq_backend_available(ROTQ_BACKEND_CUDA) &&
        ck_backend_begin(c, ROTQ_BACKEND_CPU, n2)) {
        ck_result r = {0};
        check_cuda_unavailable(&r);
        ck_report(c, ROTQ_BACKEND_CPU, n2, &r);
    }
    for (int b = 0; b < ROTQ_BACKEND_COUNT; b++) run_backend_suite(c, (rotq_backend)b);
}
