/*
 * Probe (not part of the library): what an event-timed launch costs after an
 * L2 flush, to tell apart the parts of a decode-size kernel's latency.
 *   empty            <<<1, 32>>>, no shared memory (the bench's baseline)
 *   empty+smem S     the same kernel with S KB of dynamic shared memory
 *   copy B blocks    B blocks of 256 threads, each copying 4 KB (16-byte loads)
 *   rotq n R         rotq_hadamard, f16, R rows of n, in place: event-timed as
 *                    above, and the host time of one call (500 calls queued)
 * Each row: warm-up, then 50 repetitions of (memset 2x L2, event, launch,
 * event), median in microseconds. Build: see scripts/gpu_profile.sh (links librotq)
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rotq.h"

__global__ void empty_kernel(void) {}

__global__ void copy_kernel(const uint4 *x, uint4 *y) {
    extern __shared__ uint4 smem[];
    const int i = blockIdx.x * 256 + threadIdx.x;
    uint4 v = x[i];
    if (v.x == 0x12345678u) smem[threadIdx.x] = v; // keeps smem "used"
    y[i] = v;
}

static int cmp(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

typedef void (*launch_fn)(cudaStream_t, int, size_t, const uint4 *, uint4 *);
static void launch_empty(cudaStream_t s, int blocks, size_t smem, const uint4 *x, uint4 *y) {
    (void)x, (void)y;
    empty_kernel<<<blocks, 32, smem, s>>>();
}
static void launch_copy(cudaStream_t s, int blocks, size_t smem, const uint4 *x, uint4 *y) {
    copy_kernel<<<blocks, 256, smem, s>>>(x, y);
}

static float time_row(launch_fn f, int blocks, size_t smem, void *flush, size_t flush_bytes, const uint4 *x, uint4 *y) {
    cudaStream_t s;
    cudaEvent_t e0, e1;
    cudaStreamCreate(&s);
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float t[50];
    for (int w = 0; w < 5; w++) f(s, blocks, smem, x, y);
    for (int r = 0; r < 50; r++) {
        cudaMemsetAsync(flush, r, flush_bytes, s);
        cudaEventRecord(e0, s);
        f(s, blocks, smem, x, y);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&t[r], e0, e1);
    }
    qsort(t, 50, sizeof t[0], cmp);
    cudaStreamDestroy(s);
    return t[25] * 1000.0f;
}

int main(void) {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    size_t flush_bytes = 2 * (size_t)p.l2CacheSize;
    void *flush;
    uint4 *x, *y;
    cudaMalloc(&flush, flush_bytes);
    cudaMalloc(&x, 1 << 22);
    cudaMalloc(&y, 1 << 22);
    cudaMemset(x, 1, 1 << 22);
    cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
    cudaFuncSetAttribute(copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
    printf("device: %s\n", p.name);
    const size_t smems[] = {0, 48 << 10, 96 << 10, 200 << 10};
    for (int i = 0; i < 4; i++)
        printf("empty        smem %3zu KB: %6.2f us\n", smems[i] >> 10,
               time_row(launch_empty, 1, smems[i], flush, flush_bytes, x, y));
    const int blocks[] = {1, 2, 8, 16, 32, 128};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 3; j += 2)
            printf("copy %3d x 4 KB smem %3zu KB: %6.2f us\n", blocks[i], smems[j] >> 10,
                   time_row(launch_copy, blocks[i], smems[j], flush, flush_bytes, x, y));
    const int ns[] = {128, 4096, 4096, 16384}, rs[] = {32, 1, 16, 4};
    for (int i = 0; i < 4; i++) {
        cudaStream_t s;
        cudaEvent_t e0, e1;
        cudaStreamCreate(&s);
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        rotq_exec ex = {ROTQ_BACKEND_CUDA, 0, s};
        rotq_hadamard_params hp = {0};
        hp.size = ns[i];
        hp.scale = 1.0f;
        rotq_matrix m = {x, ROTQ_DTYPE_F16, rs[i], ns[i], ns[i]};
        float t[50];
        for (int w = 0; w < 5; w++) rotq_hadamard(&ex, &hp, &m, &m);
        for (int r = 0; r < 50; r++) {
            cudaMemsetAsync(flush, r, flush_bytes, s);
            cudaEventRecord(e0, s);
            rotq_status st = rotq_hadamard(&ex, &hp, &m, &m);
            cudaEventRecord(e1, s);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&t[r], e0, e1);
            if (st != ROTQ_OK) printf("rotq_hadamard: %s\n", rotq_status_string(st));
        }
        qsort(t, 50, sizeof t[0], cmp);
        struct timespec a, b;
        cudaStreamSynchronize(s);
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int r = 0; r < 500; r++) rotq_hadamard(&ex, &hp, &m, &m);
        clock_gettime(CLOCK_MONOTONIC, &b);
        cudaStreamSynchronize(s);
        double host = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 500 / 1e3;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int r = 0; r < 500; r++) empty_kernel<<<1, 32, 0, s>>>();
        clock_gettime(CLOCK_MONOTONIC, &b);
        cudaStreamSynchronize(s);
        double host_empty = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 500 / 1e3;
        printf("rotq n=%5d rows=%2d: %6.2f us (event); host %.2f us per call, empty launch %.2f us\n", ns[i], rs[i],
               t[25] * 1000.0f, host, host_empty);
        cudaStreamDestroy(s);
    }
    cudaError_t e = cudaDeviceSynchronize();
    printf("status: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
