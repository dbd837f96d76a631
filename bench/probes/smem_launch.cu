/*
 * Probe (not part of the library): does a decode-size launch pay for its
 * shared memory or its grid after the bench's L2 flush (a cudaMemsetAsync,
 * which needs no shared memory)? Timed as the bench times its decode rows
 * (probe_timing.h: memset of 2x L2, event, launch, event; median of 50).
 *   empty GxT           an empty kernel, G blocks of T threads, no shared memory
 *   smem B              one block of 256 threads with B bytes of dynamic shared memory
 *   smem B carve100     the same kernel body, a function whose carveout preference is 100
 *   copy / copy smem B  2 blocks of 256 threads copying 8 KB, with B bytes of shared memory
 *   cluster C           an empty kernel, 4 blocks of 128 threads in clusters of C blocks
 *                       (cudaLaunchKernelEx), and with a cluster barrier at entry and exit
 * The list runs three times in a row to show the spread.
 * Build: nvcc -O3 -arch=sm_90a -o smem_launch bench/probes/smem_launch.cu
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "probe_timing.h"

// ID only makes distinct functions, so each can carry its own attributes.
template <int ID> __global__ void empty_kernel(void) {}

__global__ void cluster_sync_kernel(void) {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

template <int ID> __global__ void copy_kernel(const uint4 *x, uint4 *y) {
    const int i = blockIdx.x * 256 + threadIdx.x;
    y[i] = x[i];
}

typedef struct row {
    const char *name;
    int kind; // 0 empty, 1 copy, 2 empty in clusters of id blocks, 3 the same with a cluster barrier
    int id;   // which function (0: default attributes, 1: carveout 100)
    unsigned grid, threads;
    size_t smem;
} row;

typedef struct ctx {
    const row *r;
    const uint4 *x;
    uint4 *y;
} ctx;

static void launch(cudaStream_t s, const void *p) {
    const ctx *c = (const ctx *)p;
    const row *r = c->r;
    if (r->kind == 0) {
        if (r->id == 0) empty_kernel<0><<<r->grid, r->threads, r->smem, s>>>();
        else empty_kernel<1><<<r->grid, r->threads, r->smem, s>>>();
    } else if (r->kind >= 2) {
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)r->id;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(r->grid);
        cfg.blockDim = dim3(r->threads);
        cfg.dynamicSmemBytes = r->smem;
        cfg.stream = s;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        if (r->kind == 2) cudaLaunchKernelEx(&cfg, empty_kernel<2>);
        else cudaLaunchKernelEx(&cfg, cluster_sync_kernel);
    } else {
        if (r->id == 0) copy_kernel<0><<<r->grid, r->threads, r->smem, s>>>(c->x, c->y);
        else copy_kernel<1><<<r->grid, r->threads, r->smem, s>>>(c->x, c->y);
    }
}

int main(void) {
    cudaDeviceProp dp;
    cudaGetDeviceProperties(&dp, 0);
    size_t flush_bytes;
    void *flush = probe_flush_alloc(&dp, &flush_bytes);
    uint4 *x, *y;
    cudaMalloc((void **)&x, 4 << 20);
    cudaMalloc((void **)&y, 4 << 20);
    cudaMemset(x, 1, 4 << 20);
    const int big = 100 << 10;
    cudaFuncSetAttribute(empty_kernel<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, big);
    cudaFuncSetAttribute(empty_kernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, big);
    cudaFuncSetAttribute(empty_kernel<1>, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    cudaFuncSetAttribute(copy_kernel<1>, cudaFuncAttributePreferredSharedMemoryCarveout, 100);
    cudaStream_t s;
    cudaStreamCreate(&s);
    printf("device: %s\n", dp.name);
    const row rows[] = {
        {"empty 1x32", 0, 0, 1, 32, 0},         {"empty 1x256", 0, 0, 1, 256, 0},
        {"empty 4x128", 0, 0, 4, 128, 0},       {"empty 16x256", 0, 0, 16, 256, 0},
        {"empty 64x128", 0, 0, 64, 128, 0},     {"empty 132x128", 0, 0, 132, 128, 0},
        {"smem 1K", 0, 0, 1, 256, 1 << 10},     {"smem 4K", 0, 0, 1, 256, 4 << 10},
        {"smem 17K", 0, 0, 1, 256, 17 << 10},   {"smem 48K", 0, 0, 1, 256, 48 << 10},
        {"smem 100K", 0, 0, 1, 256, big},       {"smem 0 carve100", 0, 1, 1, 256, 0},
        {"smem 17K carve100", 0, 1, 1, 256, 17 << 10},
        {"copy", 1, 0, 2, 256, 0},              {"copy smem 4K", 1, 0, 2, 256, 4 << 10},
        {"copy smem 17K", 1, 0, 2, 256, 17 << 10}, {"copy smem 17K carve100", 1, 1, 2, 256, 17 << 10},
        {"cluster 1", 2, 1, 4, 128, 0},         {"cluster 2", 2, 2, 4, 128, 0},
        {"cluster 4", 2, 4, 4, 128, 0},         {"cluster 4 barrier", 3, 4, 4, 128, 0},
        {"cluster 4 x16 barrier", 3, 4, 64, 128, 0},
    };
    const int nrows = (int)(sizeof rows / sizeof rows[0]);
    float t[3][32];
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < nrows; i++) {
            const ctx c = {&rows[i], x, y};
            t[pass][i] = probe_time_us(launch, &c, flush, flush_bytes, s);
        }
    for (int i = 0; i < nrows; i++)
        printf("%-24s %6.2f %6.2f %6.2f us\n", rows[i].name, t[0][i], t[1][i], t[2][i]);
    cudaError_t e = cudaDeviceSynchronize();
    printf("status: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
