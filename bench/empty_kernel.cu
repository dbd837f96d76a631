/*
 * The latency baseline of decode-size rows: a kernel that does nothing,
 * launched and timed exactly as the op it is compared with (one block).
 * C-style CUDA: one kernel and one extern "C" launcher, called from bench_cuda.c.
 */
#include <cuda_runtime.h>

__global__ void rotq_bench_empty_kernel(void) {}

extern "C" cudaError_t rotq_bench_launch_empty(cudaStream_t stream) {
    rotq_bench_empty_kernel<<<1, 32, 0, stream>>>();
    return cudaGetLastError();
}
