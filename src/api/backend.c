/* Backend availability, build description and CUDA device queries. */
#include <stdio.h>

#include "validate.h"

#ifndef ROTQ_CUDA_ARCHS
#define ROTQ_CUDA_ARCHS ""
#endif

#ifdef _OPENMP
#define ROTQ_CPU_DESC_ "cpu (OpenMP)"
#else
#define ROTQ_CPU_DESC_ "cpu (serial)"
#endif

#ifdef ROTQ_WITH_CUDA
#define ROTQ_CUDA_DESC_ ", cuda; CUDA architectures: " ROTQ_CUDA_ARCHS
#else
#define ROTQ_CUDA_DESC_ "; CUDA backend not built"
#endif

#define ROTQ_STR_(x) #x
#define ROTQ_STR(x) ROTQ_STR_(x)

int rotq_backend_available(rotq_backend backend) {
    return rotq__backend_ready(backend) == ROTQ_OK;
}

const char *rotq_build_info(void) {
    return "rotq " ROTQ_STR(ROTQ_VERSION_MAJOR) "." ROTQ_STR(ROTQ_VERSION_MINOR) "." ROTQ_STR(
        ROTQ_VERSION_PATCH) "; backends: " ROTQ_CPU_DESC_ ROTQ_CUDA_DESC_;
}

rotq_status rotq_cuda_device_count(int *count) {
    if (!count) return ROTQ_ERR_NULL_POINTER;
#ifdef ROTQ_WITH_CUDA
    int n = 0;
    rotq_status st = rotq__cuda_device_count(&n);
    if (st != ROTQ_OK) {
        *count = 0; /* no driver or no device: documented as 0 devices */
        return ROTQ_OK;
    }
    *count = n;
#else
    *count = 0;
#endif
    return ROTQ_OK;
}

rotq_status rotq_cuda_device_describe(int device, char *buf, size_t buf_size) {
    if (!buf) return ROTQ_ERR_NULL_POINTER;
    if (buf_size == 0 || device < 0) return ROTQ_ERR_INVALID_ARGUMENT;
#ifdef ROTQ_WITH_CUDA
    int n = 0;
    if (rotq__cuda_device_count(&n) != ROTQ_OK || n == 0) return ROTQ_ERR_BACKEND_UNAVAILABLE;
    if (device >= n) return ROTQ_ERR_INVALID_ARGUMENT;
    return rotq__cuda_device_describe(device, buf, buf_size);
#else
    return ROTQ_ERR_BACKEND_UNAVAILABLE;
#endif
}

rotq_status rotq__check_backend(const rotq_exec *exec) {
    if ((unsigned)exec->backend >= (unsigned)ROTQ_BACKEND_COUNT) return ROTQ_ERR_INVALID_BACKEND;
    if (exec->backend == ROTQ_BACKEND_CUDA && !exec->workspace && exec->workspace_bytes > 0)
        return ROTQ_ERR_INVALID_ARGUMENT; /* a size without a buffer */
    return ROTQ_OK;
}

rotq_status rotq__backend_ready(rotq_backend backend) {
    switch (backend) {
    case ROTQ_BACKEND_CPU: return ROTQ_OK;
    case ROTQ_BACKEND_CUDA:
#ifdef ROTQ_WITH_CUDA
        return rotq__cuda_available() ? ROTQ_OK : ROTQ_ERR_BACKEND_UNAVAILABLE;
#else
        return ROTQ_ERR_BACKEND_UNAVAILABLE;
#endif
    default: return ROTQ_ERR_INVALID_BACKEND;
    }
}
