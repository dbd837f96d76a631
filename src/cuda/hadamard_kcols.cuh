// Second pass of the two-pass Hadamard for n = K * 2^L > 32768, whose fp32
// working set does not fit in shared memory: the first pass is the
// power-of-two kernel over blocks of 2^L (signs applied) into an fp32
// buffer; this pass applies H_K (x) I_{2^L} from that buffer (x) to y, on
// tiles of K rows x 64 columns of each row block, with the same tensor-core K
// step as the one-pass kernel (fp32 input: three bf16 terms, so no precision is
// lost in the middle).
#pragma once
#include "hadamard_factor.cuh"

#define ROTQ_KCOLS_WIDTH 64 /* columns of a tile: K = 172 fits in 150 KB of shared memory */
#define ROTQ_KCOLS_LOG_WIDTH 6
#define ROTQ_KCOLS_THREADS 256

// Shared memory: A fragments, a zero chunk, the staged tile, its fp32 result.
__host__ __device__ inline size_t rotq_kcols_smem(int kt, int k, int es) {
    return (size_t)kt * kt * 512 + 128 + (((size_t)k * ROTQ_KCOLS_WIDTH * es + 127) & ~(size_t)127) +
           (size_t)rotq_w_slots((unsigned)(k * ROTQ_KCOLS_WIDTH)) * 4;
}

// a: x = the first pass's output (element size ES), y = the result;
// L: log2 of the power-of-two part.
template <int ES>
__global__ void __launch_bounds__(ROTQ_KCOLS_THREADS) rotq_had_kcols(rotq_had_args a, int L,
                                                                   const __grid_constant__ rotq_had_factor f) {
    extern __shared__ __align__(16) char rotq_ksmem[];
    uint32_t *afr = (uint32_t *)rotq_ksmem;
    char *zero16 = rotq_ksmem + f.kt * f.kt * 512;
    char *stg = zero16 + 128;
    float *W = (float *)(stg + (((size_t)f.k * ROTQ_KCOLS_WIDTH * ES + 127) & ~(size_t)127));
    const int per = 16 / ES, chunks_per_row = ROTQ_KCOLS_WIDTH / per;
    const int64_t tiles_per_group = ((int64_t)1 << L) / ROTQ_KCOLS_WIDTH;
    const int64_t ntiles = a.groups * tiles_per_group;
    // The K step sees one "row block" of K rows of 64 columns, no signs.
    rotq_had_args t = a;
    t.n = f.k * ROTQ_KCOLS_WIDTH;
    t.signs = nullptr;
    t.groups = 1;

    rotq_build_factor_frags<ROTQ_KCOLS_LOG_WIDTH>(f, afr); // the row order of rotq_factor_columns<ROTQ_KCOLS_LOG_WIDTH>
    if (threadIdx.x < 8) ((uint4 *)zero16)[threadIdx.x] = make_uint4(0, 0, 0, 0);
    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int64_t g = tile / tiles_per_group;
        const int64_t col = (tile - g * tiles_per_group) * ROTQ_KCOLS_WIDTH;
        // element (k, j) of the tile is at base + (k << L) + j
        const int64_t xbase = rotq_group_base(a, g, a.x_stride) + col;
        const int64_t ybase = rotq_group_base(a, g, a.y_stride) + col;
        __syncthreads(); // the previous tile's stage and W are free; A is built
        for (int c = threadIdx.x; c < f.k * chunks_per_row; c += blockDim.x) {
            const int k = c / chunks_per_row, ch = c - k * chunks_per_row;
            const char *src = (const char *)a.x + (xbase + ((int64_t)k << L) + ch * per) * ES;
            char *dst = stg + rotq_stage_swizzle((unsigned)c, rotq_stage_lc<ES>(ROTQ_KCOLS_LOG_WIDTH)) * 16;
            if (a.vec_in) {
                ptx_cp_async_16(ptx_smem_addr(dst), src);
            } else {
                for (int i = 0; i < per; i++) {
                    if (ES == 4)
                        ((uint32_t *)dst)[i] = ((const uint32_t *)src)[i];
                    else
                        ((uint16_t *)dst)[i] = ((const uint16_t *)src)[i];
                }
            }
        }
        ptx_cp_async_commit();
        ptx_cp_async_wait<0>();
        __syncthreads();
        for (int col0 = (threadIdx.x >> 5) * rotq_factor_cols<ES>::WIDTH; col0 < ROTQ_KCOLS_WIDTH;
             col0 += (blockDim.x >> 5) * rotq_factor_cols<ES>::WIDTH) {
            rotq_factor_columns<ROTQ_KCOLS_LOG_WIDTH, ES, ROTQ_FACTOR_MAX_KT>(t, f, stg, zero16, afr, W, 0, col0, 0,
                                                                                ROTQ_KCOLS_LOG_WIDTH, 0, f.kt);
        }
        __syncthreads();
        // Scale and store: lanes take consecutive columns of a K row.
        for (int e = threadIdx.x; e < f.k * ROTQ_KCOLS_WIDTH; e += blockDim.x) {
            const int k = e >> ROTQ_KCOLS_LOG_WIDTH, j = e & (ROTQ_KCOLS_WIDTH - 1);
            rotq_store_elem(a.y, ybase + ((int64_t)k << L) + j, a.out_dtype, W[rotq_w_index((unsigned)e)] * a.scale);
        }
    }
}
