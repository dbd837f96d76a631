/*
 * rotq: kernels for rotated, low-precision LLM inference.
 *
 * The one public header. Conventions (docs/api.md has the full text):
 *   - every entry point returns a rotq_status; ROTQ_OK is 0, errors are negative;
 *   - a rejected call writes nothing to any output buffer;
 *   - matrices are described by rotq_matrix: data pointer, dtype, rows, cols and
 *     a row stride in elements; the pointers live in the memory space of the
 *     backend named by rotq_exec (host memory for CPU, device memory for CUDA);
 *   - the library keeps no state beyond lazily filled, thread-safe caches: device
 *     properties per device, the CUDA driver entry point it uses (fetched at run
 *     time; librotq does not link libcuda) and, per host thread, the last TMA
 *     tensor maps it encoded; it never aborts or exits.
 */
#ifndef ROTQ_H
#define ROTQ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(ROTQ_SHARED_BUILD)
#define ROTQ_API __declspec(dllexport)
#elif defined(__GNUC__)
#define ROTQ_API __attribute__((visibility("default")))
#else
#define ROTQ_API
#endif

#define ROTQ_VERSION_MAJOR 0
#define ROTQ_VERSION_MINOR 2
#define ROTQ_VERSION_PATCH 0

/* ------------------------------------------------------------------------- */
/* Status codes                                                              */
/* ------------------------------------------------------------------------- */

/* One table generates the enum, rotq_status_name() and rotq_status_string(). */
#define ROTQ_STATUS_MAP(X)                                                                         \
    X(ROTQ_OK, 0, "success")                                                                       \
    X(ROTQ_ERR_NULL_POINTER, -1, "a required pointer argument is NULL")                            \
    X(ROTQ_ERR_INVALID_SHAPE, -2, "rows or cols is zero, negative or too large for the op")       \
    X(ROTQ_ERR_UNSUPPORTED_SIZE, -3,                                                               \
      "no Hadamard construction for this size (supported: 2^m up to 2^15, K*2^m up to 65536)")    \
    X(ROTQ_ERR_INVALID_FACTOR, -4,                                                                 \
      "the requested Hadamard factor K is unknown or does not divide the size into K*2^m")        \
    X(ROTQ_ERR_INVALID_STRIDE, -5, "a row stride is smaller than the row or is not a valid value") \
    X(ROTQ_ERR_MISALIGNED, -6, "a pointer or stride is not aligned as the op requires")            \
    X(ROTQ_ERR_UNSUPPORTED_DTYPE, -7, "this dtype or dtype combination is not supported by the op")\
    X(ROTQ_ERR_OVERLAP, -8, "buffers overlap in a way the op does not allow")                      \
    X(ROTQ_ERR_INVALID_SCALE, -9, "a scale argument is zero, negative, NaN or infinite")           \
    X(ROTQ_ERR_INVALID_GROUP, -10, "the group size is not 32, 64 or 128, or does not divide cols") \
    X(ROTQ_ERR_INVALID_FLAGS, -11, "unknown flag bits or an invalid enum value")                   \
    X(ROTQ_ERR_INVALID_ARGUMENT, -12, "an argument is not valid for this op (see the op's docs)")  \
    X(ROTQ_ERR_INVALID_BACKEND, -13, "unknown backend in rotq_exec")                               \
    X(ROTQ_ERR_BACKEND_UNAVAILABLE, -14,                                                           \
      "the backend is not compiled into this build, or no usable device is present")              \
    X(ROTQ_ERR_NOT_SUPPORTED, -15, "this op or configuration is not implemented on this backend")  \
    X(ROTQ_ERR_OUT_OF_MEMORY, -16, "a host allocation failed")                                     \
    X(ROTQ_ERR_CUDA, -17, "a CUDA runtime call or kernel launch failed")                           \
    X(ROTQ_ERR_WORKSPACE, -18,                                                                     \
      "workspace too small or misaligned for this call (see rotq_*_workspace_size)")

typedef enum rotq_status {
#define ROTQ_STATUS_ENUM_(name, value, text) name = value,
    ROTQ_STATUS_MAP(ROTQ_STATUS_ENUM_)
#undef ROTQ_STATUS_ENUM_
    ROTQ_STATUS_MIN = -18 /* most negative code; keep in sync with the table */
} rotq_status;

/* Human-readable explanation; never NULL (unknown codes get a generic text). */
ROTQ_API const char *rotq_status_string(rotq_status status);
/* The enum's name, e.g. "ROTQ_ERR_OVERLAP"; never NULL. */
ROTQ_API const char *rotq_status_name(rotq_status status);

/* ------------------------------------------------------------------------- */
/* Version and build                                                         */
/* ------------------------------------------------------------------------- */

/* "MAJOR.MINOR.PATCH" of the loaded library. */
ROTQ_API const char *rotq_version(void);
/* MAJOR*10000 + MINOR*100 + PATCH of the loaded library. */
ROTQ_API int rotq_version_number(void);

/* ------------------------------------------------------------------------- */
/* Data types                                                                */
/* ------------------------------------------------------------------------- */

/* Append only; values are stable ABI. */
typedef enum rotq_dtype {
    ROTQ_DTYPE_F32 = 0,
    ROTQ_DTYPE_F16 = 1,
    ROTQ_DTYPE_BF16 = 2,
    ROTQ_DTYPE_I8 = 3,
    ROTQ_DTYPE_FP8_E4M3 = 4, /* OCP e4m3 (finite-only, max 448, NaN = 0x7f/0xff) */
    ROTQ_DTYPE_I4X2 = 5,     /* signed int4, two per byte, even index in the low nibble */
    ROTQ_DTYPE_COUNT
} rotq_dtype;

/* Bits per element (4 for ROTQ_DTYPE_I4X2); 0 for an invalid dtype. */
ROTQ_API int rotq_dtype_bits(rotq_dtype dtype);
/* "f32", "f16", "bf16", "i8", "fp8_e4m3", "i4x2"; "invalid" otherwise. */
ROTQ_API const char *rotq_dtype_name(rotq_dtype dtype);

/* ------------------------------------------------------------------------- */
/* Execution: which backend runs a call                                      */
/* ------------------------------------------------------------------------- */

typedef enum rotq_backend {
    ROTQ_BACKEND_CPU = 0,  /* host pointers; runs on the calling thread plus workers */
    ROTQ_BACKEND_CUDA = 1, /* device pointers on the current CUDA device; async on stream */
    ROTQ_BACKEND_COUNT
} rotq_backend;

/* Forward declaration: struct CUstream_st * is cudaStream_t, so this header
   needs no CUDA include and CPU-only users never see CUDA. */
struct CUstream_st;

typedef struct rotq_exec {
    rotq_backend backend;
    int threads;                /* CPU: worker threads; 0 = one per core. Ignored by CUDA. */
    struct CUstream_st *stream; /* CUDA: stream to enqueue on; NULL = legacy default stream. */
    /* CUDA only (the CPU backend ignores both). NULL (and workspace_bytes 0): a call
       that needs a scratch buffer draws it from the stream-ordered pool
       (cudaMallocAsync on `stream`). Otherwise device memory of workspace_bytes
       bytes, 256-byte aligned, that the call may use as scratch until the work it
       enqueued on `stream` completes (stream-ordered, like any CUDA library
       workspace). Which calls need one, and how much: rotq_hadamard_workspace_size,
       rotq_quantize_workspace_size. A call that needs none ignores it; one that
       needs one returns ROTQ_ERR_WORKSPACE when it is misaligned or smaller than
       one row's share, ROTQ_ERR_INVALID_ARGUMENT when its end overflows the
       address space, ROTQ_ERR_OVERLAP when it overlaps the call's buffers.
       workspace_bytes > 0 with workspace NULL is ROTQ_ERR_INVALID_ARGUMENT.
       Added in 0.2: code built against an older rotq.h must be recompiled. */
    void *workspace;
    size_t workspace_bytes;
} rotq_exec;

/* Whether the backend is compiled in and usable now (CUDA: a device is present). */
ROTQ_API int rotq_backend_available(rotq_backend backend);
/* A one-line description of the build: version, backends, CUDA architectures. */
ROTQ_API const char *rotq_build_info(void);
/* Number of CUDA devices visible (0 in a CPU-only build or without a driver). */
ROTQ_API rotq_status rotq_cuda_device_count(int *count);
/* Name, SM count and compute capability of a CUDA device, for `rotq info`. */
ROTQ_API rotq_status rotq_cuda_device_describe(int device, char *buf, size_t buf_size);

/* ------------------------------------------------------------------------- */
/* Matrices                                                                  */
/* ------------------------------------------------------------------------- */

/*
 * A row-major matrix view. `stride` counts elements (values, for I4X2) between
 * the starts of consecutive rows and must be >= cols (for I4X2 it must also be
 * even, so each row starts on a byte). Inputs are read through the same struct;
 * the library never writes to an input.
 */
typedef struct rotq_matrix {
    void *data;
    rotq_dtype dtype;
    int64_t rows;
    int64_t cols;
    int64_t stride;
} rotq_matrix;

/* ------------------------------------------------------------------------- */
/* Hadamard transform                                                        */
/* ------------------------------------------------------------------------- */

/*
 * y = scale * (H_K (x) H_{2^m}) * (signs .* x), per block of `size` elements.
 *
 * size n = K*2^m. H_{2^m} is the natural-order (Sylvester) Walsh-Hadamard matrix,
 * H_K one of the QuaRot/SpinQuant/QuIP# factor matrices; the block is read as a
 * K x 2^m matrix with the K index slowest (x[k*2^m + j]). With K = 1 this is the
 * plain unnormalized Sylvester transform (scipy.linalg.hadamard). scale =
 * 1/sqrt(n) makes it orthonormal.
 *
 * Block-diagonal mode: cols may be any multiple of size; each consecutive block
 * of `size` elements of a row is transformed independently.
 */

/* Values for rotq_hadamard_params.factor other than an explicit K. */
#define ROTQ_HADAMARD_FACTOR_AUTO 0 /* choose K by QuaRot's order (rotq_hadamard_pick_factor) */
#define ROTQ_HADAMARD_FACTOR_POW2 1 /* size must be a power of two */

/* Flags for rotq_hadamard_params.flags. */
#define ROTQ_HADAMARD_TRANSPOSE_FACTOR 0x1u /* use H_K^T instead of H_K */

/* The largest sizes: 2^15 for powers of two, 65536 for K*2^m. */
#define ROTQ_HADAMARD_MAX_POW2 32768
#define ROTQ_HADAMARD_MAX_SIZE 65536

typedef struct rotq_hadamard_params {
    int32_t size;   /* transform size n (the block size in block-diagonal mode) */
    int32_t factor; /* ROTQ_HADAMARD_FACTOR_AUTO, ROTQ_HADAMARD_FACTOR_POW2, or K */
    uint32_t flags; /* ROTQ_HADAMARD_* flags */
    float scale;    /* output multiplier; finite and nonzero */
    /* Optional: NULL, or one int8 per column of the row (cols entries, not size),
       in the same memory space as the data; a negative entry flips the sign of
       that input element, any other value keeps it. Applied before the transform. */
    const int8_t *signs;
} rotq_hadamard_params;

/* Factor orders of the projects whose rotations rotq reproduces. */
typedef enum rotq_factor_order {
    ROTQ_ORDER_QUAROT = 0,    /* 172,156,140,108,60,52,36,28,40,20,12 */
    ROTQ_ORDER_SPINQUANT = 1, /* 172,156,140,108,60,52,36,28,44,40,20,12 */
    ROTQ_ORDER_QUIPSHARP = 2, /* 172,156,140,124,116,108,60,52,36,28,20,12 */
    ROTQ_ORDER_COUNT
} rotq_factor_order;

/* Defaults for size n: factor AUTO, no flags, no signs, scale 1/sqrt(n). */
ROTQ_API rotq_hadamard_params rotq_hadamard_params_default(int32_t size);

/* The K a project would use for size n (1 for a power of two, which every
   project handles without a factor). ROTQ_ERR_UNSUPPORTED_SIZE if none. */
ROTQ_API rotq_status rotq_hadamard_pick_factor(int32_t size, rotq_factor_order order, int32_t *k);

/* Splits size into K*2^m for the given factor request (AUTO, POW2 or K), within
   rotq's limits (2^m <= 2^15, n <= 65536). */
ROTQ_API rotq_status rotq_hadamard_resolve(int32_t size, int32_t factor, int32_t *k,
                                           int32_t *log2_pow2);

/* Copies the K x K +-1 factor matrix (row-major) into out[K*K]; K = 1 gives [1]. */
ROTQ_API rotq_status rotq_hadamard_factor_matrix(int32_t k, int8_t *out, size_t out_len);

/* Number of supported factors and the i-th one (ascending: 12, 20, ..., 172). */
ROTQ_API int rotq_hadamard_factor_count(void);
ROTQ_API int32_t rotq_hadamard_factor_at(int index);

/*
 * The transform. x and y have the same rows and cols; dtypes F32, F16 or BF16,
 * any combination. In place when x->data == y->data with equal dtype and stride;
 * any other overlap is ROTQ_ERR_OVERLAP. cols must be a multiple of p->size.
 */
ROTQ_API rotq_status rotq_hadamard(const rotq_exec *exec, const rotq_hadamard_params *p,
                                   const rotq_matrix *x, const rotq_matrix *y);

/*
 * The device workspace rotq_hadamard(exec, p, x, y) would use, in *bytes: what it
 * takes from the stream-ordered pool when exec->workspace is NULL, and the size
 * to pass as exec->workspace_bytes for the same chunking. 0 when the call needs
 * none: every CPU call, and every CUDA call that a one-pass kernel takes (all
 * but K*2^m sizes whose fp32 row does not fit in shared memory, which take two
 * passes through an fp32 buffer of rows x cols, in chunks of at most 64 MB).
 * A smaller workspace is accepted down to one row's worth (cols*4 bytes); rows
 * then go in smaller chunks, with the same results. Validates the arguments as
 * rotq_hadamard does and returns the same status for them (CUDA:
 * ROTQ_ERR_BACKEND_UNAVAILABLE without a usable device), except that of the
 * workspace fields it checks only workspace_bytes > 0 with workspace NULL;
 * bytes NULL is ROTQ_ERR_NULL_POINTER. Writes *bytes only on success.
 */
ROTQ_API rotq_status rotq_hadamard_workspace_size(const rotq_exec *exec, const rotq_hadamard_params *p,
                                                  const rotq_matrix *x, const rotq_matrix *y, size_t *bytes);

/* ------------------------------------------------------------------------- */
/* Quantization (optionally fused with a rotation)                           */
/* ------------------------------------------------------------------------- */

typedef enum rotq_quant_kind {
    /* int8, symmetric per row: scale = absmax/127, q = rne(x * (127/absmax)) in
       [-127, 127]; optional int32 row sums of q. q dtype I8. */
    ROTQ_QUANT_INT8_ROW = 0,
    /* fp8 e4m3, per row: scale = absmax/448, q = e4m3_satfinite(x * (448/absmax)). q dtype FP8_E4M3. */
    ROTQ_QUANT_FP8_ROW = 1,
    /* fp8 e4m3 with the caller's per-tensor scale: q = e4m3_satfinite(x * (1/static_scale)). */
    ROTQ_QUANT_FP8_TENSOR = 2,
    /* int4, symmetric per group along the row: scale = absmax/7, q = rne(x * (7/absmax))
       in [-7, 7], packed two per byte. q dtype I4X2. */
    ROTQ_QUANT_INT4_GROUP = 3,
    ROTQ_QUANT_KIND_COUNT
} rotq_quant_kind;

typedef struct rotq_quant_params {
    rotq_quant_kind kind;
    int32_t group_size; /* INT4_GROUP: 32, 64 or 128; must be 0 otherwise */
    float static_scale; /* FP8_TENSOR: finite and > 0; must be 0 otherwise */
    /* Optional rotation applied to each row before quantizing (NULL: none). */
    const rotq_hadamard_params *rotate;
} rotq_quant_params;

/*
 * Quantizes x (F32, F16 or BF16) into q. Each multiplier (QMAX/absmax, 1/static_scale)
 * is one correctly rounded float division; the product x * multiplier is rounded
 * once more (src/common/formats.h, docs/formats.md). absmax ignores NaN and Inf; a row
 * (group) whose absmax is 0, or so small that QMAX/absmax overflows, gets scale 0 and
 * all-zero codes.
 *   scales:   INT8_ROW, FP8_ROW: rows floats; INT4_GROUP: rows*(cols/group_size)
 *             floats, row-major, contiguous; FP8_TENSOR: must be NULL.
 *   row_sums: INT8_ROW only, optional (NULL to skip): rows int32 sums of q.
 * Formats, rounding and NaN/Inf rules: docs/formats.md (src/common/formats.h).
 */
ROTQ_API rotq_status rotq_quantize(const rotq_exec *exec, const rotq_quant_params *p,
                                   const rotq_matrix *x, const rotq_matrix *q, float *scales,
                                   int32_t *row_sums);

/*
 * The device workspace rotq_quantize(exec, p, x, q, ...) would use, in *bytes
 * (as rotq_hadamard_workspace_size). 0 for every CPU call and for every CUDA
 * call that a fused kernel takes; > 0 where a rotation goes through an fp32
 * buffer of the rotated rows before the quantize kernels: a K*2^m rotation that
 * the fused factor kernel does not take (f32 input, block-diagonal, 2^m < 16 or
 * 4096, a row past its shared memory, code rows not 8-byte (int4: 4-byte)
 * aligned), or rows longer than the fused power-of-two kernels' shared memory
 * (and, when that rotation itself takes two passes, a second buffer for them:
 * one row's worth is then cols*4 rounded up to 256, plus cols*4 bytes).
 * Validates as rotq_quantize does, except for scales and row_sums, which it
 * does not take.
 */
ROTQ_API rotq_status rotq_quantize_workspace_size(const rotq_exec *exec, const rotq_quant_params *p,
                                                  const rotq_matrix *x, const rotq_matrix *q, size_t *bytes);

/*
 * y = q * scale, the inverse of rotq_quantize without the rotation (p->rotate
 * must be NULL). scales as for rotq_quantize; FP8_TENSOR uses p->static_scale.
 */
ROTQ_API rotq_status rotq_dequantize(const rotq_exec *exec, const rotq_quant_params *p,
                                     const rotq_matrix *q, const float *scales,
                                     const rotq_matrix *y);

#ifdef __cplusplus
}
#endif

#endif /* ROTQ_H */
