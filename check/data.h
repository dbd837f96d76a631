/* Element access, poisoning and backend memory for the op suite. */
#ifndef ROTQ_CHECK_DATA_H
#define ROTQ_CHECK_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "rotq.h"

/* Bytes that hold n elements of dtype (n rounded up to whole bytes for I4X2). */
size_t ck_dtype_bytes(rotq_dtype dt, int64_t n);
/* Bytes of a rows x stride matrix (the padding after the last row included). */
size_t ck_matrix_bytes(rotq_dtype dt, int64_t rows, int64_t stride);

/* Decodes element i exactly (floats via formats.h; I8/I4X2 as integers; FP8 as e4m3). */
double ck_get(const void *data, rotq_dtype dt, int64_t i);
/* Stores v at element i: floats through float32 then the formats.h conversion,
   integers truncated to the dtype's range (callers pass in-range values). */
void ck_set(void *data, rotq_dtype dt, int64_t i, double v);
/* Raw code of element i: the bits of a float type, the byte of I8/FP8, the nibble of I4X2. */
uint32_t ck_code(const void *data, rotq_dtype dt, int64_t i);

/* Fills bytes with the poison pattern of dtype: a NaN bit pattern for the float
   types (f32 0xffabadab, f16 0xfeab, bf16 0xffab), 0xab bytes otherwise. */
void ck_poison(void *data, rotq_dtype dt, size_t bytes);
#define CK_POISON_BYTE 0xab
#define CK_POISON_F32 0xffabadabu

/* Memory in a backend's space: host memory for CPU, cudaMalloc'ed for CUDA.
   data = base + offset, so tests can place data at chosen alignments. */
typedef struct ck_buf {
    rotq_backend backend;
    void *base;
    char *data;
    size_t bytes; /* usable bytes from data */
} ck_buf;

/* Each returns 0 on success, -1 on failure (with a message in err when non-NULL). */
int ck_buf_alloc(ck_buf *b, rotq_backend backend, size_t bytes, size_t offset);
void ck_buf_free(ck_buf *b);
int ck_buf_upload(ck_buf *b, const void *host, size_t bytes);
int ck_buf_download(const ck_buf *b, void *host, size_t bytes);
/* Waits for work queued on the stream (CUDA); checks for a pending CUDA error. */
int ck_backend_sync(rotq_backend backend, struct CUstream_st *stream);
/* A stream for the case variant (CUDA: NULL or a created stream); released by ck_stream_free. */
struct CUstream_st *ck_stream_create(rotq_backend backend, int use_stream);
void ck_stream_free(rotq_backend backend, struct CUstream_st *stream);
/* The last backend memory error as text ("" if none). */
const char *ck_buf_error(void);
/* Compute capability major of the current CUDA device; 0 without one (or a
   check library built without CUDA). */
int ck_cuda_cc_major(void);

#endif
