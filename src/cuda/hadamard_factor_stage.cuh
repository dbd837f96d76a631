// The K * 2^m kernels' input stages: the layout of a staged block of row blocks
// (cp.async path and TMA path, hadamard_factor.cuh's file comment) and the
// fills: whole row blocks, column slices, parts, by TMA or 16-byte cp.async.
#pragma once
#include "hadamard_factor_args.cuh"

// Stage layout of the cp.async path (the TMA path's: the file comment): the K
// rows of each staged row block, 2^ls columns each, row blocks one after
// another, in 16-byte chunks; lc = log2(chunks per K row).
// Chunk c sits at rotq_stage_swizzle(c, lc). Rows of 8 chunks or more XOR the
// low 3 chunk bits with the row's low 3 bits: the 8 rows an ldmatrix reads at
// one column hit 8 different 16-byte bank groups, and the rows 16 further on
// (the next k tile) have the same swizzle, so the k tiles' addresses differ by
// a constant. Shorter rows XOR with the 128-byte line index (several rows a
// line). A permutation within each 128-byte line either way.
__device__ __forceinline__ unsigned rotq_stage_swizzle(unsigned c, int lc) {
    return c ^ ((c >> (lc > 3 ? lc : 3)) & 7u);
}
// log2 of the 16-byte chunks in a stage row of 2^ls elements (< 0: a row is
// shorter than a chunk).
template <int ES>
__device__ __forceinline__ int rotq_stage_lc(int ls) {
    return ls - (ES == 2 ? 3 : 2);
}
template <int ES>
__device__ __forceinline__ unsigned rotq_staging_index(unsigned e, int ls) {
    const int per = 16 / ES;
    return (rotq_stage_swizzle(e / per, rotq_stage_lc<ES>(ls)) * per) | (e % per);
}

// Byte offset of 16-byte chunk `chunk` (0..7) of line `line` of a TMA stage
// (the file comment's layout): 128-byte lines, chunks XORed with the line's
// low 3 bits (TMA's 128-byte swizzle).
__device__ __forceinline__ unsigned rotq_tma_stage_chunk(unsigned line, unsigned chunk) {
    return line * ROTQ_TMA_ROW_BYTES + ((chunk ^ (line & 7u)) << 4);
}

// One element of x (index src) into stage slot s, or a zero where !live: the
// stages' fallback without 16-byte access.
template <int ES>
__device__ __forceinline__ void rotq_stage_elem(char *stg, unsigned s, const void *x, int64_t src, bool live) {
    if (ES == 4)
        ((float *)stg)[s] = live ? ((const float *)x)[src] : 0.0f;
    else
        ((uint16_t *)stg)[s] = live ? ((const uint16_t *)x)[src] : (uint16_t)0;
}

// Issues the copies of G row blocks into a stage (zeros past the last row
// block). With vector access the copies are asynchronous (cp.async, one group
// the caller commits); without, ordinary loads and stores.
template <int L, int ES>
__device__ __forceinline__ void rotq_fill_staging(const rotq_had_args &a, int64_t g0, int G, char *stg) {
    const int per = 16 / ES;
    const int lc = rotq_stage_lc<ES>(L);
    if (a.vec_in) {
        // Chunk c is chunk ch of local row block gl; (gl, ch) advance by
        // blockDim.x chunks per step without a division.
        const int chunks_per_group = a.n / per;
        const int chunks = G * chunks_per_group;
        int gl = 0, ch = threadIdx.x;
        while (ch >= chunks_per_group) ch -= chunks_per_group, gl++;
        bool live = g0 + gl < a.groups;
        const char *row = live ? (const char *)a.x + rotq_group_base(a, g0 + gl, a.x_stride) * ES : NULL;
        for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
            char *dst = stg + rotq_stage_swizzle((unsigned)c, lc) * 16;
            if (live)
                ptx_cp_async_16(ptx_smem_addr(dst), row + ch * 16);
            else
                *(uint4 *)dst = make_uint4(0, 0, 0, 0);
            ch += blockDim.x;
            if (ch >= chunks_per_group) {
                while (ch >= chunks_per_group) ch -= chunks_per_group, gl++;
                live = g0 + gl < a.groups;
                row = live ? (const char *)a.x + rotq_group_base(a, g0 + gl, a.x_stride) * ES : NULL;
            }
        }
    } else {
        const int count = G * a.n;
        for (int e = threadIdx.x; e < count; e += blockDim.x) {
            int gl = e / a.n, c = e - gl * a.n;
            unsigned s = rotq_staging_index<ES>((unsigned)e, L);
            bool live = g0 + gl < a.groups;
            int64_t src = live ? rotq_group_base(a, g0 + gl, a.x_stride) + c : 0;
            rotq_stage_elem<ES>(stg, s, a.x, src, live);
        }
    }
}

// Issues the copies of one column slice of row block g into a stage: columns
// c0 .. c0 + 2^ls - 1 of each of the K rows of 2^L (rows far longer than the
// stage, n > 16384 or so, one row block per tile; 2^ls * ES >= 32 bytes).
// Zeros past the last row block; asynchronous as rotq_fill_staging.
template <int L, int ES>
__device__ __forceinline__ void rotq_fill_slice(const rotq_had_args &a, const rotq_had_factor &f, int64_t g, int c0,
                                                int ls, char *stg) {
    const bool live = g < a.groups;
    const int64_t base = live ? rotq_group_base(a, g, a.x_stride) + c0 : 0;
    if (a.vec_in) {
        const int lc = rotq_stage_lc<ES>(ls);
        const int chunks = f.k << lc;
        const char *src = (const char *)a.x + base * ES;
        for (int c = threadIdx.x; c < chunks; c += blockDim.x) {
            char *dst = stg + rotq_stage_swizzle((unsigned)c, lc) * 16;
            const int k = c >> lc, ch = c & ((1 << lc) - 1);
            if (live)
                ptx_cp_async_16(ptx_smem_addr(dst), src + ((int64_t)k << L) * ES + ch * 16);
            else
                *(uint4 *)dst = make_uint4(0, 0, 0, 0);
        }
    } else {
        const int count = f.k << ls;
        for (int e = threadIdx.x; e < count; e += blockDim.x) {
            const int64_t src = base + ((int64_t)(e >> ls) << L) + (e & ((1 << ls) - 1));
            rotq_stage_elem<ES>(stg, rotq_staging_index<ES>((unsigned)e, ls), a.x, src, live);
        }
    }
}

// The stage of tile `tile` that starts at column c0 of every K row: the whole
// tile (G row blocks) when ls == L, else one slice of its single row block.
template <int L, int ES>
__device__ __forceinline__ void rotq_fill_part(const rotq_had_args &a, const rotq_had_factor &f, int64_t tile, int c0,
                                               int ls, char *stg) {
    if (ls == L)
        rotq_fill_staging<L, ES>(a, tile * f.groups_per_block, f.groups_per_block, stg);
    else
        rotq_fill_slice<L, ES>(a, f, tile, c0, ls, stg);
}

// The stage of rotq_fill_part by TMA (a.tma: 16-bit dense row blocks,
// 2^ls >= 64): thread 0 loads one box of the 4-D map (rotq_tma_map_factor),
// completing on the stage's mbarrier. The stage was read by the generic proxy
// before the caller's barrier: the fence orders that before the TMA's writes.
// A TMA tile store out of this stage (a.tma_out), issued by thread 0 too, has
// read it first: waiting here rather than before the barrier keeps the other
// warps from waiting on the store.
__device__ __forceinline__ void rotq_factor_tma_fill(const rotq_had_factor &f, const CUtensorMap *xmap, int64_t tile,
                                                     int c0, int ls, char *stg, uint32_t mbar) {
    if (threadIdx.x != 0) return;
    ptx_bulk_wait_read<0>();
    ptx_fence_proxy_async_smem();
    const int G = f.groups_per_block;
    ptx_mbarrier_arrive_expect_tx(mbar, (uint32_t)(G * f.krows) << (ls + 1));
    ptx_tma_load_4d(ptx_smem_addr(stg), xmap, 0, 0, c0 >> 6, (int32_t)(tile * G), mbar);
}

// Issues a stage's copies: by TMA (nothing to commit) or by cp.async (the
// caller commits the group).
template <int L, int ES>
__device__ __forceinline__ void rotq_factor_fill(const rotq_had_args &a, const rotq_had_factor &f,
                                                 const CUtensorMap *xmap, int64_t tile, int c0, int ls, char *stg,
                                                 uint32_t mbar) {
    if (rotq_tma_on(a.tma))
        rotq_factor_tma_fill(f, xmap, tile, c0, ls, stg, mbar);
    else
        rotq_fill_part<L, ES>(a, f, tile, c0, ls, stg);
}

// Element (krow k, slice column jr) of local row block gl, from a stage that
// holds columns c0 .. c0 + 2^ls - 1 of every K row, sign applied, as raw 16
// bits (ES == 2) or fp32 bits (ES == 4). k >= K reads as 0.
template <int L, int ES>
__device__ __forceinline__ uint32_t rotq_staging_elem(const rotq_had_args &a, const rotq_had_factor &f,
                                                      const char *stg, int64_t g0, int gl, int k, int jr, int c0,
                                                      int ls) {
    if (k >= f.k) return 0;
    unsigned e = (unsigned)(((gl * f.k + k) << ls) + jr);
    uint32_t u = ES == 4 ? ((const uint32_t *)stg)[rotq_staging_index<4>(e, ls)]
                         : ((const uint16_t *)stg)[rotq_staging_index<2>(e, ls)];
    // 16-bit stages have their signs already (rotq_factor_sign_stage).
    if (ES == 4 && a.signs && g0 + gl < a.groups && a.signs[rotq_sign_base(a, g0 + gl) + (k << L) + c0 + jr] < 0)
        u ^= 0x80000000u;
    return u;
}
