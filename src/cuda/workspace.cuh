// Scratch of the two CUDA fallback paths (hadamard.cu: the two-pass transform;
// quantize_rot_factor.cu: rotate into fp32, then quantize): `parts` fp32
// buffers of chunk x cols, rows going through them chunk by chunk. The
// buffers come from the caller's workspace (rotq_exec.workspace, 256-byte
// aligned, each later part starting on the next 256-byte boundary) or, without
// one, from the stream-ordered pool in chunks of at most 64 MB a buffer. The
// sizes reported by the workspace queries and the chunks the launches use come
// from these functions only.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "common.cuh"

// Whether rotq__cuda_hadamard takes the two-pass path for these arguments (*two_pass),
// found by running its dispatch without launching anything (hadamard.cu);
// ROTQ_ERR_NOT_SUPPORTED where the call would return it.
rotq_status rotq_hadamard_takes_two_pass(const rotq__hadamard_plan *plan, const rotq_matrix *x, const rotq_matrix *y,
                                         const rotq_cuda_device_info *dev, int *two_pass);

// rotq__cuda_hadamard on a chunk of the rows of a larger call (the two-step
// quantize path), choosing its power-of-two kernel as for select_rows rows (the
// pool path's chunk), so that any chunk size gives the same results.
rotq_status rotq_hadamard_chunk(const rotq_exec *exec, const rotq__hadamard_plan *plan, const rotq_matrix *x,
                                const rotq_matrix *y, const rotq_cuda_device_info *dev, int64_t select_rows);

// Bytes of one fp32 buffer the pool path allocates at most (rows go in chunks).
#define ROTQ_FALLBACK_POOL_BYTES ((size_t)64 << 20)

static inline size_t rotq_ws_round(size_t bytes) {
    return (bytes + ROTQ__WORKSPACE_ALIGN - 1) / ROTQ__WORKSPACE_ALIGN * ROTQ__WORKSPACE_ALIGN;
}

// Bytes of one part: chunk rows of cols fp32 values.
static inline size_t rotq_ws_part_bytes(int64_t chunk, int64_t cols) { return (size_t)chunk * (size_t)cols * 4; }

// Bytes of `parts` buffers of chunk rows, each but the last rounded up to 256.
static inline size_t rotq_ws_bytes(int64_t chunk, int64_t cols, int parts) {
    return (size_t)(parts - 1) * rotq_ws_round(rotq_ws_part_bytes(chunk, cols)) + rotq_ws_part_bytes(chunk, cols);
}

// Rows per chunk of the pool path: as many as fit in ROTQ_FALLBACK_POOL_BYTES, at
// least one, at most rows.
static inline int64_t rotq_ws_pool_chunk(int64_t rows, int64_t cols) {
    int64_t chunk = (int64_t)(ROTQ_FALLBACK_POOL_BYTES / rotq_ws_part_bytes(1, cols));
    if (chunk < 1) chunk = 1;
    return chunk < rows ? chunk : rows;
}

// Rows per chunk in a caller workspace of `bytes`: the most whose buffers fit, at
// most rows; 0 when not even one row fits.
static inline int64_t rotq_ws_fit_chunk(int64_t rows, int64_t cols, int parts, size_t bytes) {
    int64_t chunk = (int64_t)(bytes / ((size_t)parts * rotq_ws_part_bytes(1, cols)));
    if (chunk > rows) chunk = rows;
    while (chunk > 0 && rotq_ws_bytes(chunk, cols, parts) > bytes) chunk--; // the rounding of parts 1 .. parts-1
    return chunk;
}

// What a fallback of `parts` buffers over rows x cols reports: the pool's chunk
// (preferred) and one row (minimum).
static inline rotq__workspace_need rotq_ws_need(int64_t rows, int64_t cols, int parts) {
    rotq__workspace_need need;
    need.preferred = rotq_ws_bytes(rotq_ws_pool_chunk(rows, cols), cols, parts);
    need.minimum = rotq_ws_bytes(1, cols, parts);
    return need;
}

// The buffer of a fallback: the caller's workspace when there is one (*chunk from
// its size; 0 rows: ROTQ_ERR_WORKSPACE, which the API layer's check prevents),
// else cudaMallocAsync of the pool chunk's first part on `stream` (*pooled = 1:
// the caller frees it with rotq_ws_release). Nothing is enqueued on failure.
static inline rotq_status rotq_ws_acquire(const rotq_exec *exec, int64_t rows, int64_t cols, int parts,
                                          cudaStream_t stream, float **buf, int64_t *chunk, int *pooled) {
    *pooled = 0;
    if (exec->workspace) {
        *chunk = rotq_ws_fit_chunk(rows, cols, parts, exec->workspace_bytes);
        if (*chunk < 1) return ROTQ_ERR_WORKSPACE;
        *buf = (float *)exec->workspace;
        return ROTQ_OK;
    }
    *chunk = rotq_ws_pool_chunk(rows, cols);
    if (cudaMallocAsync((void **)buf, rotq_ws_part_bytes(*chunk, cols), stream) != cudaSuccess) {
        cudaGetLastError();
        return ROTQ_ERR_CUDA;
    }
    *pooled = 1;
    return ROTQ_OK;
}

// Frees a pooled buffer on the stream; st is the call's status so far.
static inline rotq_status rotq_ws_release(float *buf, int pooled, cudaStream_t stream, rotq_status st) {
    if (!pooled) return st;
    if (cudaFreeAsync(buf, stream) != cudaSuccess) {
        cudaGetLastError();
        if (st == ROTQ_OK) st = ROTQ_ERR_CUDA;
    }
    return st;
}
