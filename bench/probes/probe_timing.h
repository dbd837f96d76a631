/*
 * The probes' timing of one launch (not part of the library), as `rotq bench`
 * times its decode rows: after 5 warm-up launches, 50 repetitions of (memset of
 * flush_bytes, event, launch, event), the median in microseconds. flush_bytes 0:
 * no flush (the launch's time with its data and code in L2).
 */
#pragma once
#include <cuda_runtime.h>
#include <stdlib.h>

typedef void (*probe_launch_fn)(cudaStream_t, const void *ctx);

static int probe_cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

// Called after each timed repetition's memset and before its first event
// (rep 0 .. 49): e.g. a launch that the timing must not include.
typedef void (*probe_before_fn)(cudaStream_t, const void *ctx, int rep);

static float probe_time_us_before(probe_launch_fn f, const void *ctx, void *flush, size_t flush_bytes,
                                  cudaStream_t s, probe_before_fn before) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float t[50];
    for (int w = 0; w < 5; w++) f(s, ctx);
    for (int r = 0; r < 50; r++) {
        if (flush_bytes) cudaMemsetAsync(flush, r, flush_bytes, s);
        if (before) before(s, ctx, r);
        cudaEventRecord(e0, s);
        f(s, ctx);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&t[r], e0, e1);
    }
    qsort(t, 50, sizeof t[0], probe_cmp_float);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return t[25] * 1000.0f;
}

static float probe_time_us(probe_launch_fn f, const void *ctx, void *flush, size_t flush_bytes, cudaStream_t s) {
    return probe_time_us_before(f, ctx, flush, flush_bytes, s, NULL);
}

// The flush buffer the bench uses: twice the L2 of device 0 (its size in *bytes).
static void *probe_flush_alloc(const cudaDeviceProp *dp, size_t *bytes) {
    void *flush = NULL;
    *bytes = 2 * (size_t)dp->l2CacheSize;
    cudaMalloc(&flush, *bytes);
    return flush;
}
