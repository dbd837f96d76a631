/*
 * Probe (not part of the library): how close to a cudaMemcpyAsync can a
 * persistent, shared-memory-staged kernel stream? It moves the bytes only,
 * with the staging structure of the Hadamard kernels, so that the pipeline's
 * own cost is told apart from the transform's.
 *   memcpy              cudaMemcpyAsync device to device (the bench's baseline)
 *   plain U             one block per 256*U chunks of 16 bytes, load then store
 *   cpasync S T B [cs]  persistent grid of B blocks per SM (256 threads): tiles
 *                       of T KB through S shared-memory stages by 16-byte
 *                       cp.async (the Hadamard kernels: S = 2, T = 16, B = 4),
 *                       then 16-byte loads from the stage and global stores
 *                       (st.global.cs with "cs")
 *   bulk S T B          the same with one bulk (TMA) copy per tile into the
 *                       stage, completed on an mbarrier
 *   tma S T B           one thread per block: bulk loads and bulk stores
 *   dN                  N clocks of busy work per tile after the stage is read
 *   h                   (second table) the fused quantize kernels' traffic: 2 bytes
 *                       read and 1 written per element (the stores write the
 *                       first half of each tile), against a memcpy of the same
 *                       total bytes (3/4 of the input)
 * Each row: warm-up, then 30 repetitions of (memset 2x L2, event, kernel,
 * event), median in microseconds, at 2^25 and 2^27 16-bit elements.
 * Build: nvcc -O3 -arch=sm_90a -Isrc/cuda bench/probes/stream_pipeline.cu; run with `h`
 * for the second table only.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.cuh"

#define THREADS 256

__global__ void plain_copy(const uint4 *x, uint4 *y, int64_t chunks, int u) {
    const int64_t base = (int64_t)blockIdx.x * THREADS * u + threadIdx.x;
    uint4 v[4];
    for (int k = 0; k < u; k++)
        if (base + k * THREADS < chunks) v[k] = ptx_ld_stream_16(x + base + k * THREADS);
    for (int k = 0; k < u; k++)
        if (base + k * THREADS < chunks) y[base + k * THREADS] = v[k];
}

__device__ __forceinline__ void store16(uint4 *p, uint4 v, int cs) {
    if (cs)
        ptx_st_stream_16(p, v);
    else
        *p = v;
}

// Tiles of `tile` bytes; stage s at smem + s * tile.
// Busy work standing in for a transform: `cycles` clocks per tile per thread.
__device__ __forceinline__ void spin(int cycles) {
    if (cycles <= 0) return;
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__global__ void cpasync_copy(const char *x, char *y, int64_t ntiles, int tile, int stages, int cs, int delay) {
    extern __shared__ __align__(128) char smem[];
    const int per_tile = tile / 16;
    // prologue: tiles 0 .. stages-2 of this block
    for (int k = 0; k < stages - 1; k++) {
        const int64_t t = blockIdx.x + (int64_t)k * gridDim.x;
        if (t < ntiles)
            for (int c = threadIdx.x; c < per_tile; c += THREADS)
                ptx_cp_async_16(ptx_smem_addr(smem + k * tile + c * 16), x + t * tile + c * 16);
        ptx_cp_async_commit();
    }
    int64_t i = 0;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x, i++) {
        __syncthreads(); // the stage consumed last iteration is free
        const int64_t tn = t + (int64_t)(stages - 1) * gridDim.x;
        const int sn = (int)((i + stages - 1) % stages);
        if (tn < ntiles)
            for (int c = threadIdx.x; c < per_tile; c += THREADS)
                ptx_cp_async_16(ptx_smem_addr(smem + sn * tile + c * 16), x + tn * tile + c * 16);
        ptx_cp_async_commit();
        // at most stages-1 groups pending: this tile's has landed
        if (stages == 2) ptx_cp_async_wait<1>();
        else if (stages == 3) ptx_cp_async_wait<2>();
        else ptx_cp_async_wait<3>();
        __syncthreads();
        const char *st = smem + (int)(i % stages) * tile;
        spin(delay);
        for (int c = threadIdx.x; c < per_tile; c += THREADS)
            store16((uint4 *)(y + t * tile + c * 16), *(const uint4 *)(st + c * 16), cs);
    }
    ptx_cp_async_wait<0>();
}

__global__ void bulk_copy(const char *x, char *y, int64_t ntiles, int tile, int stages, int cs, int delay, int half) {
    extern __shared__ __align__(128) char smem[];
    __shared__ __align__(8) uint64_t full[8];
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; s++) ptx_mbarrier_init(ptx_smem_addr(&full[s]), 1);
        ptx_fence_mbarrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int s = 0; s < stages; s++) {
            const int64_t t = blockIdx.x + (int64_t)s * gridDim.x;
            if (t >= ntiles) break;
            ptx_mbarrier_arrive_expect_tx(ptx_smem_addr(&full[s]), tile);
            ptx_bulk_load(ptx_smem_addr(smem + s * tile), x + t * tile, tile, ptx_smem_addr(&full[s]));
        }
    const int per_tile = tile / 16;
    const int per_out = half ? per_tile / 2 : per_tile;
    const int64_t out_tile = half ? tile / 2 : tile;
    int64_t i = 0;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x, i++) {
        const int s = (int)(i % stages);
        const uint32_t parity = (uint32_t)((i / stages) & 1);
        while (!ptx_mbarrier_try_wait(ptx_smem_addr(&full[s]), parity)) {
        }
        const char *st = smem + s * tile;
        spin(delay);
        for (int c = threadIdx.x; c < per_out; c += THREADS)
            store16((uint4 *)(y + t * out_tile + c * 16), *(const uint4 *)(st + c * 16), cs);
        __syncthreads(); // every thread has read stage s
        const int64_t tn = t + (int64_t)stages * gridDim.x;
        if (threadIdx.x == 0 && tn < ntiles) {
            ptx_fence_proxy_async_smem();
            ptx_mbarrier_arrive_expect_tx(ptx_smem_addr(&full[s]), tile);
            ptx_bulk_load(ptx_smem_addr(smem + s * tile), x + tn * tile, tile, ptx_smem_addr(&full[s]));
        }
    }
}

// Loads and stores both by bulk copies, one thread per block.
__global__ void tma_copy(const char *x, char *y, int64_t ntiles, int tile, int stages) {
    extern __shared__ __align__(128) char smem[];
    __shared__ __align__(8) uint64_t full[8];
    if (threadIdx.x != 0) return;
    for (int s = 0; s < stages; s++) ptx_mbarrier_init(ptx_smem_addr(&full[s]), 1);
    ptx_fence_mbarrier_init();
    for (int s = 0; s < stages; s++) {
        const int64_t t = blockIdx.x + (int64_t)s * gridDim.x;
        if (t >= ntiles) break;
        ptx_mbarrier_arrive_expect_tx(ptx_smem_addr(&full[s]), tile);
        ptx_bulk_load(ptx_smem_addr(smem + s * tile), x + t * tile, tile, ptx_smem_addr(&full[s]));
    }
    int64_t i = 0;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x, i++) {
        const int s = (int)(i % stages);
        while (!ptx_mbarrier_try_wait(ptx_smem_addr(&full[s]), (uint32_t)((i / stages) & 1))) {
        }
        ptx_bulk_store(y + t * tile, ptx_smem_addr(smem + s * tile), tile);
        ptx_bulk_commit();
        // the stage of the previous tile is free once its store has read it
        if (i >= 1) {
            ptx_bulk_wait_read<1>();
            const int64_t tn = t - gridDim.x + (int64_t)stages * gridDim.x;
            const int sp = (int)((i - 1) % stages);
            if (tn < ntiles) {
                ptx_mbarrier_arrive_expect_tx(ptx_smem_addr(&full[sp]), tile);
                ptx_bulk_load(ptx_smem_addr(smem + sp * tile), x + tn * tile, tile, ptx_smem_addr(&full[sp]));
            }
        }
    }
    ptx_bulk_wait_read<0>();
}

static int cmp(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    const char *name;
    int kind; // 0 memcpy, 1 plain, 2 cpasync, 3 bulk, 4 tma
    int stages, tile_kb, blocks_per_sm, cs, u, delay;
    int half; // fused-quantize traffic (see the file comment)
} variant;

static cudaStream_t s;
static cudaEvent_t e0, e1;
static void *flush;
static size_t flush_bytes;
static int sms;

static void launch(const variant *v, const char *x, char *y, size_t bytes) {
    if (v->kind == 0) {
        cudaMemcpyAsync(y, x, v->half ? bytes / 4 * 3 : bytes, cudaMemcpyDeviceToDevice, s);
    } else if (v->kind == 1) {
        const int64_t chunks = (int64_t)(bytes / 16);
        const int64_t per = (int64_t)THREADS * v->u;
        plain_copy<<<(unsigned)((chunks + per - 1) / per), THREADS, 0, s>>>((const uint4 *)x, (uint4 *)y, chunks,
                                                                                v->u);
    } else {
        const int tile = v->tile_kb * 1024;
        const int64_t ntiles = (int64_t)(bytes / tile);
        // dynamic shared memory sized so that exactly blocks_per_sm fit
        size_t smem = (size_t)v->stages * tile;
        const size_t share = (227 * 1024) / v->blocks_per_sm - 2048;
        if (smem < share) smem = share;
        const int grid = sms * v->blocks_per_sm;
        if (v->kind == 2)
            cpasync_copy<<<grid, THREADS, smem, s>>>(x, y, ntiles, tile, v->stages, v->cs, v->delay);
        else if (v->kind == 3)
            bulk_copy<<<grid, THREADS, smem, s>>>(x, y, ntiles, tile, v->stages, v->cs, v->delay, v->half);
        else
            tma_copy<<<grid, 32, smem, s>>>(x, y, ntiles, tile, v->stages);
    }
}

static float time_variant(const variant *v, const char *x, char *y, size_t bytes) {
    float t[30];
    for (int w = 0; w < 3; w++) launch(v, x, y, bytes);
    for (int r = 0; r < 30; r++) {
        cudaMemsetAsync(flush, r, flush_bytes, s);
        cudaEventRecord(e0, s);
        launch(v, x, y, bytes);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&t[r], e0, e1);
    }
    qsort(t, 30, sizeof t[0], cmp);
    return t[15] * 1000.0f;
}

int main(int argc, char **argv) {
    const int only_half = argc > 1 && strcmp(argv[1], "h") == 0; // `h`: the second table only
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    sms = p.multiProcessorCount;
    flush_bytes = 2 * (size_t)p.l2CacheSize;
    const size_t max_bytes = (size_t)2 << 27;
    char *x, *y;
    cudaMalloc(&flush, flush_bytes);
    cudaMalloc(&x, max_bytes);
    cudaMalloc(&y, max_bytes);
    cudaMemset(x, 1, max_bytes);
    cudaStreamCreate(&s);
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaFuncSetAttribute(cpasync_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
    cudaFuncSetAttribute(bulk_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.sharedMemPerBlockOptin - 1024);
    cudaFuncSetAttribute(tma_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.sharedMemPerBlockOptin - 1024);
    static const variant vs[] = {
        {"memcpy", 0, 0, 0, 0, 0, 0, 0},
        {"cpasync 2 16 4 d0", 2, 2, 16, 4, 0, 0, 0},
        {"cpasync 3 16 4 d0", 2, 3, 16, 4, 0, 0, 0},
        {"cpasync 3 16 3 d0", 2, 3, 16, 3, 0, 0, 0},
        {"bulk 2 16 4 d0", 3, 2, 16, 4, 0, 0, 0},
        {"bulk 3 16 4 d0", 3, 3, 16, 4, 0, 0, 0},
        {"bulk 4 16 3 d0", 3, 4, 16, 3, 0, 0, 0},
        {"bulk 3 8 6 d0", 3, 3, 8, 6, 0, 0, 0},
        {"cpasync 2 16 4 d1000", 2, 2, 16, 4, 0, 0, 1000},
        {"cpasync 3 16 4 d1000", 2, 3, 16, 4, 0, 0, 1000},
        {"cpasync 3 16 3 d1000", 2, 3, 16, 3, 0, 0, 1000},
        {"bulk 2 16 4 d1000", 3, 2, 16, 4, 0, 0, 1000},
        {"bulk 3 16 4 d1000", 3, 3, 16, 4, 0, 0, 1000},
        {"bulk 4 16 3 d1000", 3, 4, 16, 3, 0, 0, 1000},
        {"bulk 3 8 6 d1000", 3, 3, 8, 6, 0, 0, 1000},
        {"cpasync 2 16 4 d2000", 2, 2, 16, 4, 0, 0, 2000},
        {"cpasync 3 16 4 d2000", 2, 3, 16, 4, 0, 0, 2000},
        {"cpasync 3 16 3 d2000", 2, 3, 16, 3, 0, 0, 2000},
        {"bulk 2 16 4 d2000", 3, 2, 16, 4, 0, 0, 2000},
        {"bulk 3 16 4 d2000", 3, 3, 16, 4, 0, 0, 2000},
        {"bulk 4 16 3 d2000", 3, 4, 16, 3, 0, 0, 2000},
        {"bulk 3 8 6 d2000", 3, 3, 8, 6, 0, 0, 2000},
        {"cpasync 2 16 4 d4000", 2, 2, 16, 4, 0, 0, 4000},
        {"cpasync 3 16 4 d4000", 2, 3, 16, 4, 0, 0, 4000},
        {"cpasync 3 16 3 d4000", 2, 3, 16, 3, 0, 0, 4000},
        {"bulk 2 16 4 d4000", 3, 2, 16, 4, 0, 0, 4000},
        {"bulk 3 16 4 d4000", 3, 3, 16, 4, 0, 0, 4000},
        {"bulk 4 16 3 d4000", 3, 4, 16, 3, 0, 0, 4000},
        {"bulk 3 8 6 d4000", 3, 3, 8, 6, 0, 0, 4000},
        {"cpasync 2 16 4 d6000", 2, 2, 16, 4, 0, 0, 6000},
        {"cpasync 3 16 4 d6000", 2, 3, 16, 4, 0, 0, 6000},
        {"cpasync 3 16 3 d6000", 2, 3, 16, 3, 0, 0, 6000},
        {"bulk 2 16 4 d6000", 3, 2, 16, 4, 0, 0, 6000},
        {"bulk 3 16 4 d6000", 3, 3, 16, 4, 0, 0, 6000},
        {"bulk 4 16 3 d6000", 3, 4, 16, 3, 0, 0, 6000},
        {"bulk 3 8 6 d6000", 3, 3, 8, 6, 0, 0, 6000},
        // the fused kernels' traffic (the first entry is this table's baseline)
        {"memcpy h", 0, 0, 0, 0, 0, 0, 0, 1},
        {"bulk 2 16 3 h d0", 3, 2, 16, 3, 0, 0, 0, 1},
        {"bulk 3 16 3 h d0", 3, 3, 16, 3, 0, 0, 0, 1},
        {"bulk 2 16 3 h d2000", 3, 2, 16, 3, 0, 0, 2000, 1},
        {"bulk 3 16 3 h d2000", 3, 3, 16, 3, 0, 0, 2000, 1},
        {"bulk 2 16 3 h d4000", 3, 2, 16, 3, 0, 0, 4000, 1},
        {"bulk 3 16 3 h d4000", 3, 3, 16, 3, 0, 0, 4000, 1},
        {"bulk 2 16 3 h d6000", 3, 2, 16, 3, 0, 0, 6000, 1},
        {"bulk 3 16 3 h d6000", 3, 3, 16, 3, 0, 0, 6000, 1},
        {"bulk 2 16 3 h d8000", 3, 2, 16, 3, 0, 0, 8000, 1},
        {"bulk 3 16 3 h d8000", 3, 3, 16, 3, 0, 0, 8000, 1},
    };
    printf("device: %s, %d SMs\n", p.name, sms);
    for (int e = 25; e <= 27; e += 2) {
        const size_t bytes = (size_t)2 << e; // 2^e 16-bit elements, read once and written once
        float base = 0;
        for (size_t k = 0; k < sizeof vs / sizeof vs[0]; k++) {
            if (only_half && !vs[k].half) continue;
            const float us = time_variant(&vs[k], x, y, bytes);
            if (vs[k].kind == 0) base = us; // each table's memcpy comes first
            cudaError_t err = cudaGetLastError();
            const double moved = vs[k].half ? 1.5 * bytes : 2.0 * bytes;
            printf("2^%d %-20s %8.2f us %7.0f GB/s ratio %.3f%s%s\n", e, vs[k].name, us, moved / us / 1e3,
                   us / base, err ? " ERROR " : "", err ? cudaGetErrorString(err) : "");
        }
    }
    cudaError_t err = cudaDeviceSynchronize();
    printf("status: %s\n", cudaGetErrorString(err));
    return err != cudaSuccess;
}
