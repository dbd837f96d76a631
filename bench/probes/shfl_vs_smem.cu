/*
 * Probe (not part of the library): the SM's throughput for the two ways the
 * Hadamard kernels move values between lanes, per warp instruction.
 *   shfl    a butterfly level by shuffles: 32 SHFL.BFLY + 32 FFMA a level
 *           (rotq_lane_butterfly)
 *   smem    an exchange through shared memory: 32 conflict-free STS, a warp
 *           barrier, 32 conflict-free LDS (rotq_pow2_exchanges with one-warp
 *           subtiles), and 32 FADD
 *   fadd    32 FADD alone (the butterflies the exchange path still runs)
 * For 8, 16, 24 and 32 warps an SM (256-thread blocks, 1..4 per SM): warp
 * instructions of the named kind per SM clock (the SM clock read with clock64
 * in each block; the median block). Power-of-two v34 found lane shuffles
 * faster than an exchange at n = 256 .. 1024 (2^23 elements); this says
 * whether it was the throughput of the two.
 * Build: nvcc -O3 -arch=sm_90a -o shfl_vs_smem bench/probes/shfl_vs_smem.cu
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 256

// The values kept live (summed and stored) and the block's clocks.
__device__ __forceinline__ void probe_finish(const float v[32], float *out, long long *clk, long long clocks) {
    float acc = 0.0f;
#pragma unroll
    for (int r = 0; r < 32; r++) acc += v[r];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    if (threadIdx.x == 0) clk[blockIdx.x] = clocks;
}

__global__ void __launch_bounds__(256) shfl_kernel(float *out, long long *clk, int mask_hi) {
    float v[32];
#pragma unroll
    for (int r = 0; r < 32; r++) v[r] = (float)(threadIdx.x * 32 + r);
    const long long t0 = clock64();
    for (int it = 0; it < ITERS; it++) {
        const int m = 1 << ((it + mask_hi) & 4); // run-time lane mask: nothing hoisted
        const float sg = (threadIdx.x & m) ? -1.0f : 1.0f;
#pragma unroll
        for (int r = 0; r < 32; r++) v[r] = fmaf(v[r], sg, __shfl_xor_sync(0xffffffffu, v[r], m));
    }
    probe_finish(v, out, clk, clock64() - t0);
}

__global__ void __launch_bounds__(256) smem_kernel(float *out, long long *clk, int fadd_only) {
    __shared__ float w[8 * 1056];
    float v[32];
#pragma unroll
    for (int r = 0; r < 32; r++) v[r] = (float)(threadIdx.x * 32 + r);
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    float *ww = w + warp * 1056;
    const long long t0 = clock64();
    for (int it = 0; it < ITERS; it++) {
        if (!fadd_only) {
#pragma unroll
            for (int r = 0; r < 32; r++) ww[r * 33 + lane] = v[r]; // lanes consecutive
            __syncwarp();
#pragma unroll
            for (int r = 0; r < 32; r++) v[r] = ww[lane * 33 + r]; // bank (lane + r) mod 32
            __syncwarp();
        }
#pragma unroll
        for (int r = 0; r < 32; r += 2) {
            const float a = v[r], b = v[r + 1];
            v[r] = a + b;
            v[r + 1] = a - b;
        }
    }
    probe_finish(v, out, clk, clock64() - t0);
}

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

int main(void) {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    float *out;
    long long *clk, *h = (long long *)malloc(sizeof(long long) * 4 * 256);
    cudaMalloc(&out, sizeof(float) * 4 * 256 * 256);
    cudaMalloc(&clk, sizeof(long long) * 4 * 256);
    printf("warp instructions of the kind per SM clock (median block), %d SMs\n", sms);
    printf("%-6s %8s %8s %8s %8s\n", "warps", "SHFL", "STS+LDS", "FADD(x)", "FADD");
    for (int per_sm = 1; per_sm <= 4; per_sm++) {
        const int blocks = per_sm * sms;
        double rate[4];
        for (int k = 0; k < 4; k++) {
            if (k == 2) continue; // derived from k = 1 below, not a launch of its own
            for (int rep = 0; rep < 3; rep++) { // the last repetition counts
                if (k == 0)
                    shfl_kernel<<<blocks, 256>>>(out, clk, 0);
                else
                    smem_kernel<<<blocks, 256>>>(out, clk, k == 3);
            }
            cudaDeviceSynchronize();
            cudaMemcpy(h, clk, sizeof(long long) * blocks, cudaMemcpyDeviceToHost);
            qsort(h, blocks, sizeof h[0], cmp_ll);
            const double cycles = (double)h[blocks / 2];
            // per block: 8 warps x ITERS x 32 instructions of the kind (STS + LDS: 64)
            const double per_block = 8.0 * ITERS * (k == 1 ? 64 : 32);
            rate[k] = per_block * per_sm / cycles;
        }
        // k = 2: the FADDs of the smem kernel, per clock (32 for its 64 STS + LDS)
        rate[2] = rate[1] / 2;
        printf("%-6d %8.3f %8.3f %8.3f %8.3f\n", 8 * per_sm, rate[0], rate[1], rate[2], rate[3]);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        printf("error: %s\n", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}
