// Power-of-two Hadamard kernel (K = 1). See hadamard_plan.cuh for the layout.
//
// A persistent block walks over tiles of TILE_CTA elements (whole row blocks),
// in a fixed order or, with TMA stages and enough tiles, handed out by a
// per-stream counter (hadamard_pow2_pipeline.cuh: the dynamic tile order).
// Each tile is copied global -> shared memory, double-buffered so the next tile
// streams in while this one is transformed: on sm_90 with a dense input by TMA
// (tma.cuh: one thread issues the tile's box copies, an mbarrier per stage),
// else by 16-byte cp.async (every warp instruction reads 512 contiguous bytes).
// Phase 0 reads the stage into registers; the later phases exchange through W,
// which reuses the consumed stage (plus an extra region for 16-bit inputs, whose
// fp32 W is twice the stage), so n = 32768 fits with prefetch: 64 KB x 2
// stages + 64 KB.
//
// Its pieces: hadamard_pow2_phases.cuh (the transform in registers and W, the
// output stores) and hadamard_pow2_pipeline.cuh (the tile pipeline); this file
// has the staged output paths, the host-side TMA set-up and the kernel.
#pragma once
#include "hadamard_pow2_phases.cuh"
#include "hadamard_pow2_pipeline.cuh"
#include "timeline.cuh"

// This thread's 32 consecutive outputs, from tile-local element local0 on, into
// a buffer of 16-byte chunks under the chunk swizzle (TMA's), in the output
// dtype: DT at compile time, or (DT < 0) dtype_rt, os_rt bytes at run time.
// With the dtype at run time ptxas predicated both conversions for every pair;
// the factor kernel keeps that form, which its register allocation was tuned with.
template <int DT>
__device__ __forceinline__ void rotq_stage_out32_t(char *buf, unsigned local0, int os_rt, int dtype_rt,
                                                   const float v[32]) {
    const int os = DT >= 0 ? (DT == ROTQ_DTYPE_F32 ? 4 : 2) : os_rt, dtype = DT >= 0 ? DT : dtype_rt;
    const int per = 16 / os;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        if (i * per >= 32) break;
        uint4 u;
        if (os == 4) {
            u = make_uint4(__float_as_uint(v[4 * i]), __float_as_uint(v[4 * i + 1]), __float_as_uint(v[4 * i + 2]),
                           __float_as_uint(v[4 * i + 3]));
        } else {
            uint32_t w[4];
#pragma unroll
            for (int j = 0; j < 4; j++) w[j] = rotq_pack_16x2(v[8 * i + 2 * j], v[8 * i + 2 * j + 1], dtype);
            u = make_uint4(w[0], w[1], w[2], w[3]);
        }
        *(uint4 *)(buf + rotq_chunk_swizzle(local0 / per + i) * 16) = u;
    }
}
__device__ __forceinline__ void rotq_stage_out32(char *buf, unsigned local0, int os, int dtype, const float v[32]) {
    rotq_stage_out32_t<-1>(buf, local0, os, dtype, v);
}
// The power-of-two kernel's: one loop per dtype.
__device__ __forceinline__ void rotq_stage_out32_any(char *buf, unsigned local0, int dtype, const float v[32]) {
    if (dtype == ROTQ_DTYPE_F32)
        rotq_stage_out32_t<ROTQ_DTYPE_F32>(buf, local0, 4, dtype, v);
    else if (dtype == ROTQ_DTYPE_F16)
        rotq_stage_out32_t<ROTQ_DTYPE_F16>(buf, local0, 2, dtype, v);
    else
        rotq_stage_out32_t<ROTQ_DTYPE_BF16>(buf, local0, 2, dtype, v);
}

// Single-phase sizes (n <= 32): a thread's 32 values are whole row blocks.
// With vector output the results go through shared memory (W) so that the
// global stores are 16-byte and lane-contiguous; otherwise element stores.
// With a.tma_out, one thread stores the staged tile by TMA (the chunk swizzle is
// TMA's; ymap: the output as rows of 128 bytes, boxes of box_rows).
template <int L>
__device__ __forceinline__ void rotq_store_small(const rotq_had_args &a, char *W, int tile_cta, int64_t e_first,
                                                 unsigned local0, int64_t total, float v[32], const CUtensorMap *ymap,
                                                 int box_rows) {
    const int64_t mask = (1 << L) - 1;
    if (!a.vec_out) {
#pragma unroll
        for (int r = 0; r < 32; r++) {
            const int64_t e = e_first + local0 + r;
            if (e < total) rotq_store_elem(a.y, rotq_group_base(a, e >> L, a.y_stride) + (e & mask), a.out_dtype, v[r]);
        }
        return;
    }
    const int os = a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2, per = 16 / os;
    rotq_stage_out32_any(W, local0, a.out_dtype, v);
    if (rotq_tma_on(a.tma_out)) {
        ptx_fence_proxy_async_smem(); // this thread's W writes, before the TMA reads them
        __syncthreads();
        const int rows = tile_cta * os / ROTQ_TMA_ROW_BYTES;
        if (threadIdx.x == 0) rotq_tma_store_rows(ymap, e_first * os / ROTQ_TMA_ROW_BYTES, rows, box_rows, W);
        return;
    }
    __syncthreads();
    for (int c = threadIdx.x; c < tile_cta / per; c += blockDim.x) {
        const int64_t e = e_first + (int64_t)c * per;
        const char *src = W + rotq_chunk_swizzle((unsigned)c) * 16;
        if (e + per <= total) {
            ptx_st_stream_16((char *)a.y + (rotq_group_base(a, e >> L, a.y_stride) + (e & mask)) * os,
                             *(const uint4 *)src);
        } else {
            for (int i = 0; e + i < total; i++) { // the tail: a partial chunk
                const int64_t off = rotq_group_base(a, (e + i) >> L, a.y_stride) + ((e + i) & mask);
                if (os == 4)
                    ((uint32_t *)a.y)[off] = ((const uint32_t *)src)[i];
                else
                    ((uint16_t *)a.y)[off] = ((const uint16_t *)src)[i];
            }
        }
    }
}

// Boxes of the TMA output (rotq_store_small): the tile in the output dtype.
template <int L>
__host__ __device__ inline int rotq_pow2_out_box(const rotq_had_args &a) {
    return rotq_tma_box_rows(rotq_pow2_plan<L>::TILE * rotq_pow2_plan<L>::SUBTILES *
                             (a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2));
}

// Host: TMA tile loads for this launch when the device has TMA, the input is
// dense (row blocks back to back, 16-byte aligned, whole 128-byte rows) and
// each of the grid's blocks gets enough tiles; otherwise a.tma = 0 and the map
// stays zero (unused). With ymap (the Hadamard kernel; the fused kernels pass
// NULL), also TMA stores for n <= 128 (the tile staged in W for 16-byte stores,
// rotq_store_small) where the tiles arrive by TMA and the output is dense. A block's first TMA tile comes later than by cp.async
// (one issuing thread, mbarrier set-up): on the H100, 2^20 elements (one tile
// per block) ran 2-7% slower by TMA and 2^23 at n >= 2048 (two to three tiles)
// 3-5% slower, while n <= 128 at 2^23 (1.9 tiles) ran 2-4% faster and
// 256..1024 the same.
template <int L, int ES, int BT = 256>
static inline void rotq_pow2_tma_setup(rotq_had_args &a, CUtensorMap *map, CUtensorMap *ymap, int64_t ntiles,
                                       int64_t grid, const rotq_cuda_device_info *dev, cudaStream_t stream) {
    typedef rotq_pow2_smem<L, ES, BT> sm;
    memset(map, 0, sizeof *map);
    if (ymap) memset(ymap, 0, sizeof *ymap);
    a.tma = a.tma_out = 0;
    a.tiles_next = NULL;
    const int64_t row = (int64_t)a.n * a.blocks_per_row; // elements of a dense row
    const bool enough = L <= 10 ? 2 * ntiles >= 3 * grid : ntiles >= 4 * grid; // 1.5 or 4 tiles per block
    if (dev->cc_major < 9 || !a.vec_in || a.x_stride != row || !enough) return;
    a.tma = rotq_tma_map_rows(map, a.x, a.groups << L, ES, sm::TMA_BOX);
    // The dynamic tile order where it has tiles to hand out (past two a block).
    if (a.tma && sm::PREFETCH && ntiles > 2 * grid) a.tiles_next = rotq_cuda_tile_counter(dev, stream);
    if (!ymap || !a.tma || L > 10 || !a.vec_out || a.y_stride != row) return;
    a.tma_out = rotq_tma_map_rows(ymap, a.y, a.groups << L, a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2,
                                  rotq_pow2_out_box<L>(a));
}

// Register caps, measured on the H100: n <= 1024 runs best with 64 registers
// (four 256-thread blocks per SM), n = 2048..8192 with 80 (three blocks; the
// three-phase kernels spill under 64), n >= 16384 has 64 by its block size.
template <int L>
struct rotq_pow2_min_blocks {
    static constexpr int value = L >= 11 && L <= 13 ? 3 : 1024 / rotq_pow2_plan<L>::THREADS;
};

// Vector output where the kernel uses it: the sizes that finish in phase-0
// layout (n <= 1024) and n = 2^11 .. 2^13 (rotq_pow2_pair_plan).
__host__ __device__ constexpr bool rotq_pow2_uses_vec_out(int L) { return L <= 13; }
// DT >= 0: the build for rotq_had_fast_case (hadamard_inst_pow2_fast.cu): a
// third of the generic build's code (2^12: 1462 SASS instructions against 3973,
// 48 registers against 61); on the H100 0.3-0.5 us less per call (perf-notes,
// power-of-two v31).
template <int L, int ES, int DT = -1>
__global__ void __launch_bounds__(rotq_pow2_plan<L>::THREADS, rotq_pow2_min_blocks<L>::value)
    rotq_had_pow2(rotq_had_args a, const __grid_constant__ CUtensorMap tmap, const __grid_constant__ CUtensorMap ymap) {
    typedef rotq_pow2_plan<L> plan;
    if (DT >= 0) rotq_had_fast_args(a, DT, rotq_pow2_uses_vec_out(L));
    typedef rotq_pow2_smem<L, ES> sm;
    extern __shared__ __align__(1024) char rotq_smem[];
    const unsigned sub = threadIdx.x / plan::SUB_THREADS;
    const unsigned tid = threadIdx.x % plan::SUB_THREADS;
    const unsigned sub_base = sub * plan::TILE;
    const unsigned local0 = sub_base + tid * 32; // phase 0: 32 consecutive elements
    const int64_t total = a.groups << L;
    const int64_t ntiles = (total + sm::TILE_CTA - 1) / sm::TILE_CTA;
    const int64_t mask = (1 << L) - 1;

    // Element e's sign is signs[e mod period], period a dense row (blocks_per_row
    // row blocks). Where the period divides the tile, a thread's 32 phase-0
    // elements have the same signs in every tile: read once, element local0 + r's
    // at bit rotq_sign_pair_bit(r) (period >= 32, a multiple of 32: no wrap
    // within the 32).
    uint32_t sign_bits = 0;
    const int64_t period = (int64_t)a.blocks_per_row << L;
    const bool signs_fixed = L >= 5 && a.signs && sm::TILE_CTA % period == 0;
    if (signs_fixed) {
        const int8_t *sg = a.signs + local0 % period;
#pragma unroll
        for (int r = 0; r < 32; r++) sign_bits |= (uint32_t)(__ldg(sg + r) < 0) << rotq_sign_pair_bit(r);
    }
    unsigned it = 0;
    uint32_t pending = 0; // thread 0: the dynamic order's fetch (rotq_pow2_tile_stage)
    ROTQ_TL(__shared__ rotq_timeline tl; rotq_tl_start(&tl);)
    rotq_pow2_init_tma<L, ES>(a, rotq_smem);
    rotq_pow2_first_tile<L, ES>(a, ntiles, total, rotq_smem, &tmap);
    for (int64_t tile = blockIdx.x; tile < ntiles; tile = rotq_pow2_following_tile<L, ES>(a, rotq_smem, tile, it), it++) {
        ROTQ_TL(rotq_tl_top(&tl);)
        // The previous tile's TMA store has read its W before anything reuses it:
        // with prefetch, the next writes there are the TMA load of the tile after
        // next (rotq_stage_tile waits in the issuing thread) and, for odd tiles,
        // the staged stores two tiles on, which come after a barrier that follows
        // that wait; with one stage, every thread's, so the wait comes first.
        if (rotq_tma_on(a.tma_out) && !sm::PREFETCH && threadIdx.x == 0) ptx_bulk_wait_read<0>();
        char *cur = rotq_pow2_tile_stage<L, ES>(a, tile, ntiles, total, rotq_smem, &tmap, it, pending);
        ROTQ_TL(rotq_tl_mark(&tl, 2);)
        const int64_t e_first = tile * sm::TILE_CTA;
        float v[32];
        if (signs_fixed) // opaque: else the 16 shifted masks are hoisted out of the tile loop
            rotq_read_stage32<ES>(cur, local0, a.in_dtype, v, ptx_opaque_u32(sign_bits));
        else
            rotq_read_stage32<ES>(cur, local0, a.in_dtype, v);
        if (a.signs && !signs_fixed && L >= 5) {
            // The 32 values are consecutive elements of one row block (local0 is a
            // multiple of 32), and a subtile past the end is past it whole (total
            // is a multiple of 2^L): one row-block base, no per-element tests.
            // Per element, the 64-bit row arithmetic made this block 1880 SASS
            // instructions, which the unsigned path jumped over every tile (ncu at
            // 4096: 7% of the stall samples fetching that jump's target; the
            // unsigned rows' time did not change: perf-notes, power-of-two v28).
            const int64_t e0 = e_first + local0;
            if (e0 < total) {
                const int8_t *sg = a.signs + rotq_sign_base(a, e0 >> L) + (e0 & mask);
                if (((uintptr_t)sg & 15u) == 0) {
                    rotq_apply_signs32_v16(sg, v);
                } else {
#pragma unroll
                    for (int r = 0; r < 32; r++) v[r] = rotq_apply_sign(sg, r, v[r]);
                }
            }
        } else if (a.signs && !signs_fixed) {
#pragma unroll
            for (int r = 0; r < 32; r++) {
                const int64_t e = e_first + local0 + r;
                if (e < total) v[r] = rotq_apply_sign(a.signs, rotq_sign_base(a, e >> L) + (e & mask), v[r]);
            }
        }
        rotq_phase<L>(0, v);
        __syncthreads(); // every thread has read the stage that W overwrites
        ROTQ_TL(rotq_tl_mark(&tl, 3);)
        float *W = rotq_pow2_tile_w<L, ES>(rotq_smem, it, cur);
        // Rows in one warp: finished in registers, address bits 5 .. L - 1 by lane
        // butterflies, and the values leave as the single-phase sizes do. At
        // n = 256 .. 1024 only with vector output (16-byte stores from W): else
        // the exchange through W, whose last layout stores lane-contiguous
        // elements. (Shuffles measured 3.5-8% faster there at 2^23 than the
        // exchange: perf-notes, power-of-two v34.)
        if (L <= 7 || (L <= 10 && a.vec_out)) {
            rotq_finish_lane_rows<L <= 10 ? L : 10>(v, a.scale);
            rotq_store_small<L>(a, (char *)W, sm::TILE_CTA, e_first, local0, total, v, &ymap, rotq_pow2_out_box<L>(a));
        } else {
            rotq_pow2_phases<L, false>(a, W, sub_base, tid, e_first + sub_base, total, 1, 0, v);
        }
    }
    ROTQ_TL(rotq_tl_end(&tl, "pow2", L);)
    rotq_tile_counter_exit(a);
    ptx_cp_async_wait<0>();
    if (rotq_tma_on(a.tma_out) && threadIdx.x == 0) ptx_bulk_wait_read<0>(); // W is read before the block ends
}
