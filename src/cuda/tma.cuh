// Tile loads and stores by the Tensor Memory Accelerator (sm_90) for the
// persistent Hadamard kernels: a dense input or output (row blocks back to back)
// is viewed as rows of 128 bytes, and a tile moves in a few box copies issued by
// a single thread (loads complete on an mbarrier, stores in a bulk group); the
// factor kernel's stages come as one box of a 4-D map (rotq_tma_map_factor).
// Shared memory is laid out with TMA's 128-byte swizzle, which is
// rotq_chunk_swizzle (hadamard_plan.cuh), so the cp.async path and the TMA path
// read the stage alike.
//
// The driver's cuTensorMapEncodeTiled is fetched at run time
// (cudaGetDriverEntryPointByVersion): librotq does not link libcuda.
#pragma once
#include <cuda.h> // CUtensorMap and its enums (types only)
#include <string.h>

#include "common.cuh"
#include "ptx.cuh"

#define ROTQ_TMA_ROW_BYTES 128 // the swizzle span: one box row
#define ROTQ_TMA_MAX_BOX_ROWS 256

// Box rows for a tile of tile_bytes (whole 128-byte rows): the largest divisor
// of its rows that is at most 256, so that the boxes tile it exactly (a box
// reaching past a tile would move rows of the next tile). The first divisor
// d >= rows / 256 gives it: at once for power-of-two tiles, 2 x 172 for 344 rows.
__host__ __device__ constexpr int rotq_tma_box_rows(int tile_bytes) {
    const int rows = tile_bytes / ROTQ_TMA_ROW_BYTES;
    for (int d = (rows + ROTQ_TMA_MAX_BOX_ROWS - 1) / ROTQ_TMA_MAX_BOX_ROWS; d < rows; d++)
        if (rows % d == 0) return rows / d;
    return 1;
}

// Encodes *map for `elements` values of es bytes at base, dense, as rows of 128
// bytes read in boxes of box_rows rows (<= 256) with the 128-byte swizzle.
// Returns 1 on success, 0 when TMA cannot be used for it (no driver entry
// point, alignment, sizes): the caller then takes the cp.async path.
int rotq_tma_map_rows(CUtensorMap *map, const void *base, int64_t elements, int es, int box_rows);

// Encodes *map for the factor kernel's stages (hadamard_factor_stage.cuh): 16-bit row
// blocks of K rows of 2^L columns, `groups` of them group_stride elements apart,
// as 4-D (64 columns, K rows, 2^(L-6) column blocks, row blocks), read in boxes
// of (64, box_k >= K, 2^(ls-6), G): a stage laid out [row block][column
// block][box_k][64], lines of 128 bytes with the 128-byte swizzle, rows K ..
// box_k - 1 zero (TMA's fill past the tensor). Returns 1 on success, 0 when
// TMA cannot be used for it.
int rotq_tma_map_factor(CUtensorMap *map, const void *base, int k_rows, int box_k, int L, int ls, int64_t groups,
                        int64_t group_stride, int G);

// Whether this launch's tiles arrive by TMA: the host's flag, and never in code
// compiled for an architecture without TMA (PTX of sm_80 run on an sm_90 part).
__device__ __forceinline__ bool rotq_tma_on(int32_t flag) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return flag != 0;
#else
    (void)flag;
    return false;
#endif
}

// Loads `rows` rows of 128 bytes starting at row `row0` of the map into the
// stage (1024-byte aligned) in boxes of box_rows, and arms the mbarrier with
// their byte count. Called by one thread. EF: the lines marked evict-first in L2.
template <bool EF = false>
__device__ __forceinline__ void rotq_tma_load_rows(const CUtensorMap *map, int64_t row0, int rows, int box_rows,
                                                   char *stage, uint32_t mbar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    ptx_mbarrier_arrive_expect_tx(mbar, (uint32_t)rows * ROTQ_TMA_ROW_BYTES);
    const uint64_t policy = EF ? ptx_l2_evict_first() : 0;
    for (int r = 0; r < rows; r += box_rows) {
        if constexpr (EF)
            ptx_tma_load_2d_hint(ptx_smem_addr(stage + r * ROTQ_TMA_ROW_BYTES), map, 0, (int32_t)(row0 + r), mbar,
                                 policy);
        else
            ptx_tma_load_2d(ptx_smem_addr(stage + r * ROTQ_TMA_ROW_BYTES), map, 0, (int32_t)(row0 + r), mbar);
    }
#else
    (void)map, (void)row0, (void)rows, (void)box_rows, (void)stage, (void)mbar;
#endif
}

// Stores `rows` rows of 128 bytes from the stage (1024-byte aligned, laid out
// with the 128-byte swizzle) to row `row0` of the map in boxes of box_rows, as
// one bulk group. Called by one thread, after every writer's proxy fence and a
// barrier; rows past the map's end are not written.
__device__ __forceinline__ void rotq_tma_store_rows(const CUtensorMap *map, int64_t row0, int rows, int box_rows,
                                                    const char *stage) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    for (int r = 0; r < rows; r += box_rows)
        ptx_tma_store_2d(map, 0, (int32_t)(row0 + r), ptx_smem_addr(stage + r * ROTQ_TMA_ROW_BYTES));
    ptx_bulk_commit();
#else
    (void)map, (void)row0, (void)rows, (void)box_rows, (void)stage;
#endif
}

// Kernel start, thread 0: the mbarriers of `stages` stages, at mbar0, mbar0 + 8, ...
// (one arrival each: the issuing thread's expect-tx). A block barrier must follow
// before any thread uses them (the init is a warp-uniform instruction that the
// first expect-tx is not otherwise ordered after).
__device__ __forceinline__ void rotq_tma_init_stage_mbars(uint32_t mbar0, int stages = 2) {
    if (threadIdx.x != 0) return;
    for (int i = 0; i < stages; i++) ptx_mbarrier_init(mbar0 + 8 * i, 1);
    ptx_fence_mbarrier_init();
}

// Waits for phase `parity` of the mbarrier (every thread that reads the stage).
__device__ __forceinline__ void rotq_tma_wait(uint32_t mbar, uint32_t parity) {
    while (!ptx_mbarrier_try_wait(mbar, parity)) {
    }
}
