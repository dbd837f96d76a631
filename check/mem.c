/* Backend memory for the op suite: malloc on the CPU, the CUDA runtime for CUDA. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"

#ifdef ROTQ_WITH_CUDA
#include <cuda_runtime.h>
#endif

static char g_err[256];

const char *ck_buf_error(void) { return g_err; }

int ck_cuda_cc_major(void) {
#ifdef ROTQ_WITH_CUDA
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return 0;
    return major;
#else
    return 0;
#endif
}

#ifdef ROTQ_WITH_CUDA
static int cuda_fail(const char *what, cudaError_t e) {
    snprintf(g_err, sizeof g_err, "%s: %s", what, cudaGetErrorString(e));
    return -1;
}
#endif

int ck_buf_alloc(ck_buf *b, rotq_backend backend, size_t bytes, size_t offset) {
    memset(b, 0, sizeof *b);
    b->backend = backend;
    size_t total = bytes + offset + 1; /* never zero */
    if (backend == ROTQ_BACKEND_CPU) {
        b->base = malloc(total);
        if (!b->base) {
            snprintf(g_err, sizeof g_err, "malloc(%zu) failed", total);
            return -1;
        }
    } else {
#ifdef ROTQ_WITH_CUDA
        cudaError_t e = cudaMalloc(&b->base, total);
        if (e != cudaSuccess) return cuda_fail("cudaMalloc", e);
#else
        snprintf(g_err, sizeof g_err, "CUDA memory in a check library built without CUDA");
        return -1;
#endif
    }
    b->data = (char *)b->base + offset;
    b->bytes = bytes;
    return 0;
}

void ck_buf_free(ck_buf *b) {
    if (!b->base) return;
    if (b->backend == ROTQ_BACKEND_CPU) free(b->base);
#ifdef ROTQ_WITH_CUDA
    else cudaFree(b->base);
#endif
    b->base = NULL;
    b->data = NULL;
}

int ck_buf_upload(ck_buf *b, const void *host, size_t bytes) {
    if (b->backend == ROTQ_BACKEND_CPU) {
        memcpy(b->data, host, bytes);
        return 0;
    }
#ifdef ROTQ_WITH_CUDA
    cudaError_t e = cudaMemcpy(b->data, host, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return cuda_fail("cudaMemcpy H2D", e);
    /* A pageable-memory copy may still be in flight when cudaMemcpy returns; the
       op may run on a non-blocking stream, so wait for the copy here. */
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return cuda_fail("cudaDeviceSynchronize", e);
    return 0;
#else
    return -1;
#endif
}

int ck_buf_download(const ck_buf *b, void *host, size_t bytes) {
    if (b->backend == ROTQ_BACKEND_CPU) {
        memcpy(host, b->data, bytes);
        return 0;
    }
#ifdef ROTQ_WITH_CUDA
    cudaError_t e = cudaMemcpy(host, b->data, bytes, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return cuda_fail("cudaMemcpy D2H", e);
    return 0;
#else
    return -1;
#endif
}

int ck_backend_sync(rotq_backend backend, struct CUstream_st *stream) {
    if (backend == ROTQ_BACKEND_CPU) return 0;
#ifdef ROTQ_WITH_CUDA
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
    if (e != cudaSuccess) return cuda_fail("cudaStreamSynchronize", e);
    e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_fail("cudaGetLastError", e);
    return 0;
#else
    (void)stream;
    return -1;
#endif
}

struct CUstream_st *ck_stream_create(rotq_backend backend, int use_stream) {
#ifdef ROTQ_WITH_CUDA
    if (backend == ROTQ_BACKEND_CUDA && use_stream) {
        cudaStream_t s = NULL;
        if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) return s;
    }
#else
    (void)backend;
    (void)use_stream;
#endif
    return NULL;
}

void ck_stream_free(rotq_backend backend, struct CUstream_st *stream) {
#ifdef ROTQ_WITH_CUDA
    if (backend == ROTQ_BACKEND_CUDA && stream) cudaStreamDestroy((cudaStream_t)stream);
#else
    (void)backend;
    (void)stream;
#endif
}
