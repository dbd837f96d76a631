// The persistent tile pipeline of the power-of-two kernel, shared with the fused
// rotate + quantize kernel (quantize_rot_tile.cuh): the shared-memory plan, the
// stage mbarriers, the tile copies global -> shared (TMA boxes or 16-byte
// cp.async, double-buffered) and the read of a thread's phase-0 values.
#pragma once
#include "hadamard_pow2_phases.cuh"

// Parts of a TMA stage, each on its own mbarrier (perf-notes, power-of-two v35,
// v36): every warp waits only for the part holding its phase-0 values, so a
// tile starts its phase 0 while the rest of its stage is still arriving (every
// block asks for two stages at once at the launch's start; the first arrived
// 4-5 us after it). A part is a warp's 1024 elements or more (16 or 32 rows of
// 128 bytes, so every part starts 1024-byte aligned, as TMA's swizzle needs),
// at most ROTQ_POW2_MAX_PARTS a stage (an A/B switch). Where it was measured to
// help, on the H100: n <= 1024 (one-warp subtiles) -0.4 to -1% at 2^25 and
// 2^27, n = 32768 -1% at 2^25 and -0.5% at 2^27; not at 2^11 .. 2^14 (the
// Hadamard at 16384 +0.8% at 2^25, the fused quantize kernel at 4096 +2.5%),
// and not with 32 parts at 32768 (+8%). Four parts at 32768 measured 1.3% slower on
// the H100 and 1.7-2.6% faster on an H200 (v39): the count is tuned for the H100.
#ifndef ROTQ_POW2_MAX_PARTS
#define ROTQ_POW2_MAX_PARTS 8
#endif
__host__ __device__ constexpr int rotq_pow2_parts(int L, int warps, int rows) {
    int p = 1;
    while ((L <= 10 || L == 15) && 2 * p <= warps && 2 * p <= ROTQ_POW2_MAX_PARTS && warps % (2 * p) == 0 &&
           rows % (2 * p) == 0)
        p *= 2;
    return p;
}

// Shared-memory plan of the power-of-two kernel.
template <int L, int ES, int BT = 256>
struct rotq_pow2_smem {
    typedef rotq_pow2_plan<L, BT> plan;
    static constexpr int TILE_CTA = plan::TILE * plan::SUBTILES;  // elements per block iteration
    static constexpr int STAGE = TILE_CTA * ES;                    // bytes of one stage
    // W (padded fp32, rotq_w_index) beyond the stage it reuses, in whole
    // 1024-byte units so that the next stage stays aligned for TMA's swizzle
    // (the largest layout in use: the pair exchanges at 2^11 .. 2^14, the fused
    // kernel's quad exchange at 2^7, the 32-bit ones)
    static constexpr unsigned W_SLOTS = L == 7 ? rotq_w4_slots(TILE_CTA)
                                        : rotq_pow2_pair_plan<L>::W2 && rotq_w2_slots(TILE_CTA) > rotq_w_slots(TILE_CTA)
                                            ? rotq_w2_slots(TILE_CTA)
                                            : rotq_w_slots(TILE_CTA);
    static constexpr int EXTRA = ((int)W_SLOTS * 4 - STAGE + 1023) / 1024 * 1024;
    static constexpr bool PREFETCH = 2 * STAGE + EXTRA <= 200 * 1024;
    static constexpr int DATA = PREFETCH ? 2 * STAGE + EXTRA : STAGE + EXTRA;
    // TMA: 128-byte rows per tile, in PARTS parts of PART_ROWS rows, each part
    // with its own mbarrier (rotq_pow2_parts), read in boxes of TMA_BOX rows
    static constexpr int TMA_ROWS = STAGE / ROTQ_TMA_ROW_BYTES;
    static constexpr int WARPS = plan::THREADS / 32;
    static constexpr int PARTS = rotq_pow2_parts(L, WARPS, TMA_ROWS);
    static constexpr int PART_ROWS = TMA_ROWS / PARTS;
    static constexpr int TMA_BOX = rotq_tma_box_rows(STAGE / PARTS);
    // dynamic shared memory: the data, PARTS mbarriers per stage, then the two
    // next-tile words of the dynamic tile order (rotq_pow2_next_slot). The
    // kernels declare it 1024-byte aligned (TMA's swizzle needs that); the
    // compiler pads the static variables before it, and the padding is part of
    // the static size that the occupancy figures count.
    static constexpr int BYTES = DATA + 16 * PARTS + 16;
};

// Shared-memory address of the first mbarrier of stage b (TMA loads); part p's
// is 8 p bytes on.
template <int L, int ES, int BT = 256>
__device__ __forceinline__ uint32_t rotq_pow2_mbar(char *smem, int b) {
    typedef rotq_pow2_smem<L, ES, BT> sm;
    return ptx_smem_addr(smem + sm::DATA + 8 * b * sm::PARTS);
}

// The stage part that holds this thread's phase-0 values: a warp reads its own
// 1024 contiguous elements (local0 = 32 threadIdx.x), a whole number of parts'
// worth of warps per part.
template <int L, int ES, int BT = 256>
__device__ __forceinline__ unsigned rotq_pow2_my_part() {
    typedef rotq_pow2_smem<L, ES, BT> sm;
    return sm::PARTS == 1 ? 0u : (threadIdx.x >> 5) / (unsigned)(sm::WARPS / sm::PARTS);
}

// The dynamic tile order (a.tiles_next, TMA prefetching builds only; perf-notes,
// power-of-two v29). With the static order block b takes tiles b, b + grid, ...;
// the blocks of an SM progress at different rates (a tile timeline at 2^27:
// the four blocks of an SM ended up to 40 us apart), so the fast ones idled
// while the slow ones finished. Here a block's first two tiles are static
// (b, b + grid) and the rest come from a global counter: at its tile k's top,
// thread 0 issues the copies of tile k + 1 (fetched at tile k - 1) and fetches
// tile k + 2 (an atomic whose latency the tile hides). The block's threads
// find tile k + 1 in next slot k mod 2 (rotq_pow2_following_tile).
template <int L, int ES, int BT = 256>
__device__ __forceinline__ int64_t *rotq_pow2_next_slot(char *smem, unsigned it) {
    typedef rotq_pow2_smem<L, ES, BT> sm;
    return (int64_t *)(smem + sm::DATA + 16 * sm::PARTS) + (it & 1u);
}

// Whether this launch takes the dynamic order: the host asked for it and this
// code has TMA (a compute_80 build run on a newer GPU has not: its tiles come
// by every thread's cp.async, so the static order).
__device__ __forceinline__ bool rotq_pow2_dynamic(const rotq_had_args &a) {
    return a.tiles_next != NULL && rotq_tma_on(a.tma);
}

// The block's tile after `tile` (its iteration `it`): read after a barrier that
// follows the loop top (thread 0 writes slot it mod 2 there, and the slot is
// written again two tops later).
template <int L, int ES, int BT = 256>
__device__ __forceinline__ int64_t rotq_pow2_following_tile(const rotq_had_args &a, char *smem, int64_t tile,
                                                            unsigned it) {
    return rotq_pow2_dynamic(a) ? *rotq_pow2_next_slot<L, ES, BT>(smem, it) : tile + gridDim.x;
}

// Kernel end of a launch with a tile counter (rotq_cuda_tile_counter: the
// power-of-two and fused kernels' dynamic order, the fragment kernel's dynamic
// tail): each block's thread 0 counts itself done (after its last fetch,
// fenced), and the last one resets the pair for the next launch on the stream.
__device__ __forceinline__ void rotq_tile_counter_exit(const rotq_had_args &a) {
    if (!rotq_pow2_dynamic(a) || threadIdx.x != 0) return;
    __threadfence();
    if (atomicAdd(a.tiles_next + 1, 1u) == gridDim.x - 1) {
        __threadfence();
        a.tiles_next[0] = 0;
        a.tiles_next[1] = 0;
    }
}

// Kernel start: the stage mbarriers of a TMA block, visible to every thread
// before the first tile is issued.
template <int L, int ES, int BT = 256>
__device__ __forceinline__ void rotq_pow2_init_tma(const rotq_had_args &a, char *smem) {
    if (!rotq_tma_on(a.tma)) return;
    rotq_tma_init_stage_mbars(rotq_pow2_mbar<L, ES, BT>(smem, 0), 2 * rotq_pow2_smem<L, ES, BT>::PARTS);
    __syncthreads();
}

// Issues the copies of tile `tile` into a stage (16-byte chunks, swizzled).
// Chunks past the end are zero-filled; without vector access every element is
// copied with an ordinary load (synchronously). With a.tma, thread 0 issues the
// tile's box copies on the stage's mbarrier; with parts (rotq_pow2_parts), lane
// p of warp 0 issues part p on the stage's mbarrier p (mbar + 8 p): thread 0
// issuing the 8 parts in turn, n = 32768 ran 0.5-1.2% slower at 2^27 than with
// one mbarrier, lane by lane 0.5% faster (perf-notes, power-of-two v36). Called
// by every thread of the block or, in the dynamic order, by warp 0 (parts) or
// thread 0.
template <int L, int ES, bool EF = false, int BT = 256>
__device__ __forceinline__ void rotq_stage_tile(const rotq_had_args &a, int64_t tile, int64_t total, char *stage,
                                                const CUtensorMap *tmap, uint32_t mbar) {
    typedef rotq_pow2_smem<L, ES, BT> sm;
    if (rotq_tma_on(a.tma)) {
        // A TMA store of an earlier tile out of this region (a.tma_out, issued
        // by thread 0) has read it. The stage was W of an earlier tile
        // (generic-proxy accesses, ordered before this point by the caller's
        // barrier): order them before the TMA's writes (async proxy).
        if (sm::PARTS == 1) {
            if (threadIdx.x == 0) {
                ptx_bulk_wait_read<0>();
                ptx_fence_proxy_async_smem();
                rotq_tma_load_rows<EF>(tmap, tile * sm::TMA_ROWS, sm::TMA_ROWS, sm::TMA_BOX, stage, mbar);
            }
        } else if (threadIdx.x < 32) {
            if (threadIdx.x == 0) ptx_bulk_wait_read<0>();
            __syncwarp();
            const unsigned p = threadIdx.x;
            if (p < (unsigned)sm::PARTS) {
                ptx_fence_proxy_async_smem();
                rotq_tma_load_rows<EF>(tmap, tile * sm::TMA_ROWS + p * sm::PART_ROWS, sm::PART_ROWS, sm::TMA_BOX,
                                       stage + p * sm::PART_ROWS * ROTQ_TMA_ROW_BYTES, mbar + 8 * p);
            }
        }
        return;
    }
    const int per = 16 / ES;
    const int64_t mask = (1 << L) - 1;
    const int64_t e_first = tile * sm::TILE_CTA;
    if (a.vec_in) {
        for (int c = threadIdx.x; c < sm::TILE_CTA / per; c += blockDim.x) {
            const int64_t e = e_first + (int64_t)c * per;
            char *dst = stage + rotq_chunk_swizzle((unsigned)c) * 16;
            if (e + per <= total) {
                ptx_cp_async_16(ptx_smem_addr(dst), (const char *)a.x +
                                (rotq_group_base(a, e >> L, a.x_stride) + (e & mask)) * ES);
            } else {
                // the tail: a partial chunk (packed tiny rows) or none
                for (int i = 0; i < per; i++) {
                    const int64_t off = rotq_group_base(a, (e + i) >> L, a.x_stride) + ((e + i) & mask);
                    if (ES == 4)
                        ((uint32_t *)dst)[i] = e + i < total ? ((const uint32_t *)a.x)[off] : 0u;
                    else
                        ((uint16_t *)dst)[i] = e + i < total ? ((const uint16_t *)a.x)[off] : (uint16_t)0;
                }
            }
        }
    } else {
        for (int i = threadIdx.x; i < sm::TILE_CTA; i += blockDim.x) {
            const int64_t e = e_first + i;
            const unsigned s = rotq_chunk_swizzle((unsigned)(i / per)) * per + (unsigned)(i % per);
            if (ES == 4)
                ((float *)stage)[s] = e < total ? ((const float *)a.x)[rotq_group_base(a, e >> L, a.x_stride) + (e & mask)] : 0.0f;
            else
                ((uint16_t *)stage)[s] = e < total ? ((const uint16_t *)a.x)[rotq_group_base(a, e >> L, a.x_stride) + (e & mask)] : (uint16_t)0;
        }
    }
}

// Kernel start: the first tile's copies, when prefetching.
template <int L, int ES, bool EF = false, int BT = 256>
__device__ __forceinline__ void rotq_pow2_first_tile(const rotq_had_args &a, int64_t ntiles, int64_t total,
                                                     char *smem, const CUtensorMap *tmap) {
    if (rotq_pow2_smem<L, ES, BT>::PREFETCH && (int64_t)blockIdx.x < ntiles)
        rotq_stage_tile<L, ES, EF, BT>(a, blockIdx.x, total, smem, tmap, rotq_pow2_mbar<L, ES, BT>(smem, 0));
    if (!rotq_tma_on(a.tma)) ptx_cp_async_commit();
}

// The persistent loop's hand-off, shared by the Hadamard and the fused quantize
// kernels: after a barrier (the previous tile's W and stage are free), issue the
// next tile's copies into the other stage when prefetching, wait for this
// tile's, and return its stage. `it` counts the block's tiles: its low bit is
// the stage when prefetching, the rest gives the mbarrier phase.
// With the dynamic order, `pending` is thread 0's fetch for the tile after the
// next (rotq_pow2_next_slot).
template <int L, int ES, bool EF = false, int BT = 256>
__device__ __forceinline__ char *rotq_pow2_tile_stage(const rotq_had_args &a, int64_t tile, int64_t ntiles,
                                                      int64_t total, char *smem, const CUtensorMap *tmap,
                                                      unsigned it, uint32_t &pending) {
    typedef rotq_pow2_smem<L, ES, BT> sm;
    const int buf = (int)(it & 1u);
    __syncthreads();
    const int b = sm::PREFETCH ? buf : 0;
    if (sm::PREFETCH) {
        if (rotq_pow2_dynamic(a)) { // TMA: only thread 0 (with parts warp 0) issues copies
            if (sm::PARTS == 1 ? threadIdx.x == 0 : threadIdx.x < 32) {
                const uint32_t fetched = sm::PARTS == 1 ? pending : __shfl_sync(0xffffffffu, pending, 0);
                const int64_t next = it == 0 ? tile + gridDim.x : 2 * (int64_t)gridDim.x + fetched;
                if (next < ntiles) {
                    rotq_stage_tile<L, ES, EF, BT>(a, next, total, smem + (buf ^ 1) * (sm::STAGE + sm::EXTRA), tmap,
                                                   rotq_pow2_mbar<L, ES, BT>(smem, buf ^ 1));
                    if (threadIdx.x == 0) pending = atomicAdd(a.tiles_next, 1u);
                }
                if (threadIdx.x == 0) *rotq_pow2_next_slot<L, ES, BT>(smem, it) = next;
            }
        } else if (tile + gridDim.x < ntiles) {
            rotq_stage_tile<L, ES, EF, BT>(a, tile + gridDim.x, total, smem + (buf ^ 1) * (sm::STAGE + sm::EXTRA),
                                           tmap, rotq_pow2_mbar<L, ES, BT>(smem, buf ^ 1));
        }
    } else {
        rotq_stage_tile<L, ES, EF, BT>(a, tile, total, smem, tmap, rotq_pow2_mbar<L, ES, BT>(smem, 0));
    }
    if (rotq_tma_on(a.tma)) {
        // the k-th use of a stage's mbarrier waits for phase parity k & 1
        // (this thread's part only: perf-notes, power-of-two v35)
        rotq_tma_wait(rotq_pow2_mbar<L, ES, BT>(smem, b) + 8 * rotq_pow2_my_part<L, ES, BT>(),
                      sm::PREFETCH ? (it >> 1) & 1u : it & 1u);
    } else {
        ptx_cp_async_commit();
        if (sm::PREFETCH)
            ptx_cp_async_wait<1>();
        else
            ptx_cp_async_wait<0>();
        __syncthreads();
    }
    return smem + b * (sm::STAGE + sm::EXTRA);
}

// W of the block's tile number `it` (stage cur): the consumed stage, plus the
// extra region next to it (fp32 W is larger than a 16-bit stage, and padded).
template <int L, int ES, int BT = 256>
__device__ __forceinline__ float *rotq_pow2_tile_w(char *smem, unsigned it, char *cur) {
    typedef rotq_pow2_smem<L, ES, BT> sm;
    return (float *)((sm::PREFETCH && (it & 1u) && sm::EXTRA > 0) ? smem + sm::STAGE : cur);
}

// Phase-0 values of this thread: its 32 consecutive elements of the stage,
// with the signs in sign_bits (rotq_sign_pair_bit's layout) XORed into their
// sign bits: into the raw 16-bit pairs before conversion (one shift and one
// LOP3 a pair), or into each fp32 value. sign_bits = 0 folds away at compile time.
template <int ES>
__device__ __forceinline__ void rotq_read_stage32(const char *stage, unsigned local0, int dtype, float v[32],
                                                  uint32_t sign_bits = 0u) {
    const int per = 16 / ES;
#pragma unroll
    for (int i = 0; i < 32 / per; i++) {
        uint4 u = *(const uint4 *)(stage + rotq_chunk_swizzle(local0 / per + i) * 16);
        uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
        for (int j = 0; j < 4; j++) {
            if (ES == 4) {
                const int r = per * i + j;
                v[r] = __uint_as_float(w[j] ^ ((sign_bits << (31 - rotq_sign_pair_bit(r))) & 0x80000000u));
            } else {
                const uint32_t x = w[j] ^ rotq_sign_pair_mask(sign_bits, 4 * i + j); // pair 4i + j
                v[per * i + 2 * j] = rotq_from_16_lo(x, dtype);
                v[per * i + 2 * j + 1] = rotq_from_16_hi(x, dtype);
            }
        }
    }
}
