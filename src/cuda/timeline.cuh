// Tile timeline of the persistent power-of-two and fused rotate + quantize
// kernels, in a diagnostic build only (-DROTQ_TIMELINE; the library's kernels
// are unchanged without it). Thread 0 of each block splits each tile into four
// segments of SM clocks:
//   0  the loop's top barrier: the block's slowest warp finishing the last tile
//   1  the next tile's copies issued and this tile's stage awaited
//   2  the stage read, phase 0 and the barrier after it
//   3  thread 0's remaining phases, epilogue and stores
// and prints one line per block once every block is done (ROTQ_TL_PRINT_AFTER_NS
// after its start): its SM, the global timer (ns) at
// its start, when its first stage arrived and at its end, then each segment's
// sum over the block's tiles, the first tile's and the last tile's. One more
// barrier a tile than the library's build (segment 0's). scripts/timeline.py
// summarizes the lines (perf-notes, power-of-two v29). The fragment kernel
// prints its blocks' spans only (rotq_tl_block_end).
#pragma once
#include "ptx.cuh"

#ifdef ROTQ_TIMELINE
#include <stdio.h>

#define ROTQ_TL_PRINT_AFTER_NS 3000000ull // past the longest timed launch (2^27 elements: ~0.2 ms)

typedef struct rotq_timeline {
    long long t[4];               // marks of the tile in progress
    long long sum[4], first[4], last[4];
    unsigned long long g0, gdata; // global timer: block start, first stage arrived
    int tiles;
} rotq_timeline;

// The state lives in shared memory (thread 0's), so that the kernels' register
// allocation stays close to the library build's.
__device__ __forceinline__ void rotq_tl_start(rotq_timeline *tl) {
    if (threadIdx.x != 0) return;
    for (int k = 0; k < 4; k++) tl->sum[k] = tl->first[k] = tl->last[k] = 0;
    tl->tiles = 0;
    tl->t[0] = 0;
    tl->gdata = 0;
    tl->g0 = ptx_globaltimer();
}

// Closes the tile in progress (if any) at clock `now` (thread 0).
static __device__ __noinline__ void rotq_tl_close(rotq_timeline *tl, long long now) {
    if (tl->t[0] == 0) return;
    const long long end[4] = {tl->t[1], tl->t[2], tl->t[3], now};
    for (int k = 0; k < 4; k++) {
        const long long d = end[k] - tl->t[k];
        tl->sum[k] += d;
        if (tl->tiles == 0) tl->first[k] = d;
        tl->last[k] = d;
    }
    tl->tiles++;
    tl->t[0] = 0;
}

// Loop top: closes the last tile, opens this one, then the extra barrier.
__device__ __forceinline__ void rotq_tl_top(rotq_timeline *tl) {
    if (threadIdx.x == 0) {
        const long long now = clock64();
        rotq_tl_close(tl, now);
        tl->t[0] = now;
    }
    __syncthreads();
    if (threadIdx.x == 0) tl->t[1] = clock64();
}
__device__ __forceinline__ void rotq_tl_mark(rotq_timeline *tl, int k) {
    if (threadIdx.x != 0) return;
    tl->t[k] = clock64();
    if (k == 2 && tl->gdata == 0) tl->gdata = ptx_globaltimer();
}
static __device__ __noinline__ void rotq_tl_end(rotq_timeline *tl, const char *kernel, int L) {
    if (threadIdx.x != 0) return;
    rotq_tl_close(tl, clock64());
    const unsigned long long gend = ptx_globaltimer();
    // Print only once every block is done: printf while other blocks still
    // stream slowed them by up to 5x at 2^27 elements (its FIFO's atomics).
    while (ptx_globaltimer() < tl->g0 + ROTQ_TL_PRINT_AFTER_NS) __nanosleep(2000);
    printf("TL %s %d %u %u %d %llu %llu %llu %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld\n", kernel, L,
           blockIdx.x, ptx_smid(), tl->tiles, tl->g0, tl->gdata, gend, tl->sum[0], tl->sum[1],
           tl->sum[2], tl->sum[3], tl->first[0], tl->first[1], tl->first[2], tl->first[3], tl->last[0], tl->last[1],
           tl->last[2], tl->last[3]);
}

// Kernels without the tile loop above (the fragment kernel: warps take tasks,
// not tiles): thread 0 prints the block's start (g0, also as its first-stage
// time) and end after a block barrier, its tile count, and segments 1, 0, 0, 0
// (timeline.py's span, fill, drain and per-SM lines hold; its steady-tile line
// means nothing for these).
static __device__ __noinline__ void rotq_tl_block_end(const char *kernel, int L, long long tiles,
                                                      unsigned long long g0) {
    if (threadIdx.x != 0) return;
    const unsigned long long gend = ptx_globaltimer();
    while (ptx_globaltimer() < g0 + ROTQ_TL_PRINT_AFTER_NS) __nanosleep(2000);
    printf("TL %s %d %u %u %lld %llu %llu %llu 1 0 0 0 1 0 0 0 1 0 0 0\n", kernel, L, blockIdx.x, ptx_smid(), tiles,
           g0, g0, gend);
}
#define ROTQ_TL(stmt) stmt
#else
#define ROTQ_TL(stmt)
#endif
