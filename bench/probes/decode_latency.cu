/*
 * Probe (not part of the library): what an event-timed launch costs after an
 * L2 flush, to tell apart the parts of a decode-size kernel's latency.
 *   empty            <<<1, 32>>>, no shared memory (the bench's baseline)
 *   empty+smem S     the same kernel with S KB of dynamic shared memory
 *   copy B blocks    B blocks of 256 threads, each copying 4 KB (16-byte loads)
 *   copy + N FMA     2 blocks copying 4 KB with N FMAs per thread, as
 *                    straight-line code or a loop (does code size cost latency?)
 *   rotq n R         rotq_hadamard, f16, R rows of n, in place: event-timed as
 *                    above and without the flush, and the host time of one call
 *                    (500 calls queued)
 * Each row: warm-up, then 50 repetitions of (memset 2x L2, event, launch,
 * event), median in microseconds. Build: see scripts/gpu_profile.sh (links librotq)
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "probe_timing.h"
#include "rotq.h"

__global__ void empty_kernel(void) {}

__global__ void copy_kernel(const uint4 *x, uint4 *y) {
    extern __shared__ uint4 smem[];
    const int i = blockIdx.x * 256 + threadIdx.x;
    uint4 v = x[i];
    if (v.x == 0x12345678u) smem[threadIdx.x] = v; // keeps smem "used"
    y[i] = v;
}

// The same arithmetic (8 chains of N / 8 dependent FADDs per thread) as
// straight-line code (N instructions of code) or as a loop of 64 (small code):
// after an L2 flush, whether a kernel's code size costs latency.
// One step of the 8 chains.
__device__ __forceinline__ void fma_step(float f[8]) {
#pragma unroll
    for (int k = 0; k < 8; k++) f[k] = f[k] * 0.999f + f[(k + 1) & 7];
}

// UNROLL: the N / 8 steps as straight-line code, else a loop of 8 steps a trip.
template <int N, bool UNROLL>
__global__ void copy_fadd(const uint4 *x, uint4 *y) {
    const int i = blockIdx.x * 256 + threadIdx.x;
    uint4 v = x[i];
    float f[8];
    for (int k = 0; k < 8; k++) f[k] = __uint_as_float(((const uint32_t *)&v)[k & 3]) + (float)k;
    if (UNROLL) {
#pragma unroll
        for (int s = 0; s < N / 8; s++) fma_step(f);
    } else {
#pragma unroll 1
        for (int s = 0; s < N / 64; s++) {
#pragma unroll
            for (int t = 0; t < 8; t++) fma_step(f);
        }
    }
    y[i] = make_uint4(__float_as_uint(f[0] + f[4]), __float_as_uint(f[1] + f[5]), __float_as_uint(f[2] + f[6]),
                      __float_as_uint(f[3] + f[7]));
}

typedef void (*launch_fn)(cudaStream_t, int, size_t, const uint4 *, uint4 *);
static void launch_empty(cudaStream_t s, int blocks, size_t smem, const uint4 *x, uint4 *y) {
    (void)x, (void)y;
    empty_kernel<<<blocks, 32, smem, s>>>();
}
static void launch_copy(cudaStream_t s, int blocks, size_t smem, const uint4 *x, uint4 *y) {
    copy_kernel<<<blocks, 256, smem, s>>>(x, y);
}
#define FADD_LAUNCHERS(N)                                                                                              \
    static void launch_unrolled_##N(cudaStream_t s, int blocks, size_t smem, const uint4 *x, uint4 *y) {             \
        copy_fadd<N, true><<<blocks, 256, smem, s>>>(x, y);                                                         \
    }                                                                                                                  \
    static void launch_loop_##N(cudaStream_t s, int blocks, size_t smem, const uint4 *x, uint4 *y) {                 \
        copy_fadd<N, false><<<blocks, 256, smem, s>>>(x, y);                                                             \
    }
FADD_LAUNCHERS(256)
FADD_LAUNCHERS(1024)
FADD_LAUNCHERS(4096)

// One row: the launch function and its shape as probe_time_us's context.
typedef struct row_ctx {
    launch_fn f;
    int blocks;
    size_t smem;
    const uint4 *x;
    uint4 *y;
} row_ctx;
static void run_row(cudaStream_t s, const void *ctx) {
    const row_ctx *c = (const row_ctx *)ctx;
    c->f(s, c->blocks, c->smem, c->x, c->y);
}
static float time_row(launch_fn f, int blocks, size_t smem, void *flush, size_t flush_bytes, const uint4 *x, uint4 *y) {
    cudaStream_t s;
    cudaStreamCreate(&s);
    const row_ctx c = {f, blocks, smem, x, y};
    const float t = probe_time_us(run_row, &c, flush, flush_bytes, s);
    cudaStreamDestroy(s);
    return t;
}

int main(void) {
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    size_t flush_bytes;
    void *flush = probe_flush_alloc(&p, &flush_bytes);
    uint4 *x, *y;
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
    printf("without the flush: empty %6.2f us, copy 2 x 4 KB %6.2f us\n", time_row(launch_empty, 1, 0, flush, 0, x, y),
           time_row(launch_copy, 2, 0, flush, 0, x, y));
    {
        const launch_fn u[] = {launch_unrolled_256, launch_unrolled_1024, launch_unrolled_4096};
        const launch_fn l[] = {launch_loop_256, launch_loop_1024, launch_loop_4096};
        const int nf[] = {256, 1024, 4096};
        for (int i = 0; i < 3; i++)
            printf("copy 2 x 4 KB + %4d FMA: straight-line code %6.2f us, loop %6.2f us\n", nf[i],
                   time_row(u[i], 2, 0, flush, flush_bytes, x, y), time_row(l[i], 2, 0, flush, flush_bytes, x, y));
    }
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
        qsort(t, 50, sizeof t[0], probe_cmp_float);
        float hot[50]; // the same without the flush: what the DRAM misses (data and code) cost
        for (int r = 0; r < 50; r++) {
            cudaEventRecord(e0, s);
            rotq_hadamard(&ex, &hp, &m, &m);
            cudaEventRecord(e1, s);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&hot[r], e0, e1);
        }
        qsort(hot, 50, sizeof hot[0], probe_cmp_float);
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
        printf("rotq n=%5d rows=%2d: %6.2f us (event), %6.2f us without the flush; host %.2f us per call, empty launch "
               "%.2f us\n",
               ns[i], rs[i], t[25] * 1000.0f, hot[25] * 1000.0f, host, host_empty);
        cudaStreamDestroy(s);
    }
    cudaError_t e = cudaDeviceSynchronize();
    printf("status: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
