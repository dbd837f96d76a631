// Hadamard kernels for n = K * 2^L with a QuaRot/SpinQuant/QuIP# factor K.
//
// y = (H_K (x) H_{2^L}) x: the two factors commute, so the K step runs first,
// on tensor cores, directly on the input: a block of G row blocks is read into
// shared memory (staging), and for every column j the K values x[k*2^L + j] are
// multiplied by H_K with mma.sync m16n8k16 (fp32 accumulate), or for K > 64 on
// sm_90a with TMA stages by wgmma m64n64k16 (rotq_factor_wgmma_issue). With
// 16-bit inputs the operands are the input values themselves, so this step is
// exact up to fp32 accumulation; fp32 inputs are split into three bf16 terms
// (24 bits). The fp32 result goes to W and the power-of-two phases of
// hadamard_pow2.cuh finish the transform.
//
// On sm_90 a stage of 16-bit dense row blocks arrives by TMA: one
// box of a 4-D tensor map (64 columns, K rows, column blocks, row blocks) lays
// it out [row block][64-column block][krows][64] (krows = K, or 16 kt for
// wgmma: rows past K are TMA's zero fill), so the 8 rows an ldmatrix reads are
// 8 consecutive 128-byte lines under TMA's swizzle (conflict-free), and the
// next k tile is 16 lines on. Rows of 2^m <= 128 columns are done after phase 0
// and lane butterflies; a thread then holds 32 consecutive outputs, and packed
// 16-bit outputs leave by one TMA store of the tile, staged in the stage the K
// step has just read (for K > 64 in a pipelined loop, rotq_factor_pipelined).
//
// The same kernel, built with QUANT, also serves quantize with a K*2^m rotation
// (quantize_rot_factor.cu): the last phase's values go back to W, scaled, and
// the block quantizes its rows from W with the tile epilogue (quantize_tile.cuh).
#pragma once
#include "hadamard_pow2.cuh"
#include "quantize_tile.cuh"

#define ROTQ_FACTOR_MAX_WORDS 1032 /* 172 rows x 6 words */

// H_K as packed sign bits, passed by value (<= 4.2 KB of kernel parameters).
typedef struct rotq_had_factor {
    int32_t k;                 // K
    int32_t kt;                // ceil(K / 16): mma tiles along K
    int32_t words;             // 32-bit words per row of bits
    int32_t transpose;         // use H_K^T
    int32_t groups_per_block;  // G
    int32_t f16_mma;           // 1: fp16 operands, 0: bf16 operands
    int32_t stages;            // staging buffers: 2 (prefetch), 1, or 3 (rotq_factor_pipelined)
    int32_t slice_log;         // log2 of the columns per K row a stage holds (L: whole row blocks)
    int32_t wgmma;             // 1: the K step of TMA stages runs on wgmma (sm_90a, large-K builds)
    int32_t krows;             // rows of a TMA stage per 64-column block: K, or 16 kt with wgmma
    int32_t half_rows;         // 2^9 rows of a tile's last round done one per warp (rotq_factor_half_row9)
    int32_t parts;             // fragment kernel: blocks sharing a tile, each its own output rows (1: whole tiles)
    int32_t part_rows;         // fragment kernel: output rows of H_K a part computes (K when parts = 1)
    uint32_t bits[ROTQ_FACTOR_MAX_WORDS];
} rotq_had_factor;

#define ROTQ_FACTOR_MAX_KT 11
// Kernels are built for two bounds on ceil(K / 16): 4 (K <= 64: 12 .. 60,
// B fragments in 16 registers) and 11 (up to 172). The small bound leaves room
// for two 512-thread blocks per SM under a 64-register cap (see
// rotq_factor_min_blocks), the difference between one and two row blocks in
// flight per SM.
#define ROTQ_FACTOR_SMALL_KT 4
// Column slices of a row block (rotq_factor_shape::SLICES) from 2^8 columns:
// n > 32768 = K * 2^L with K <= 172 has L >= 8.
#define ROTQ_FACTOR_SLICE_MIN_L 8
// Rows per tile whose int8 / fp8 absmax the QUANT build takes in the last
// phase (tiles of about 8192 elements: G <= 8 for rows of 1024 or more).
#define ROTQ_FACTOR_AM_ROWS 8

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

// The row of H_K (and of the K step's output) at row p (0..15) of an m16 tile
// of the mma.sync A operand. A lane (gq, tq) of the C fragment holds rows gq
// and gq + 8 at columns 2tq, 2tq + 1, stored to W rows 2^L + 2^(L-5) + ... words
// apart: with the identity, 2^10 (1057 words: bank gq + 2tq) and 2^5, 2^6 had
// 4-way bank conflicts on those stores, 2^7 2-way. Permuting the bits of p
// (a bank simulation over the 24 bit permutations) leaves them 2-way (2^5, 2^6,
// 2^10, the least for one word a lane) and 2^7 conflict-free; the rest keep
// the identity (2^8 conflict-free, 2^4 and 2^9 2-way already).
template <int L>
__host__ __device__ constexpr int rotq_factor_c_row(int p) {
    return L == 5 || L == 6 || L == 10 ? (p & 1) | ((p & 2) << 1) | ((p & 4) << 1) | ((p >> 2) & 2)
           : L == 7                    ? ((p << 1) & 14) | (p >> 3)
                                       : p;
}

// One 16-bit +-1 (or 0 outside K) entry of the A operand.
__device__ __forceinline__ uint32_t rotq_factor_entry16(const rotq_had_factor &f, int r, int c) {
    if (r >= f.k || c >= f.k) return 0;
    int rr = f.transpose ? c : r, cc = f.transpose ? r : c;
    uint32_t neg = (f.bits[rr * f.words + (cc >> 5)] >> (cc & 31)) & 1u;
    return (f.f16_mma ? 0x3c00u : 0x3f80u) | (neg << 15);
}

// Builds the A fragments of H_K for every (m tile, k tile) in shared memory, in
// the order each lane reads them back as one 16-byte load: lane (gq, tq) of tile
// (mt, kt) holds rows 16mt + gq (+ 8) at columns 16kt + 2tq (+ 1, + 8, + 9). Warp
// w takes tiles w, w + warps, ... (the tile's (mt, kt) advanced without a
// division). Without transposition a row's 16 columns of a k tile are one
// 16-bit field of its sign bits (16kt is a multiple of 16). PERM: the rows of
// each m tile in rotq_factor_c_row's order (else the identity). row0, rows,
// mts: only H_K's rows row0 .. row0 + rows - 1, in mts m tiles (zeros past
// them); by default every row.
template <int L, bool PERM = true>
__device__ __forceinline__ void rotq_build_factor_frags(const rotq_had_factor &f, uint32_t *afr, int row0 = 0,
                                                        int rows = -1, int mts = -1) {
    const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
    const int rend = rows < 0 ? f.k : row0 + rows;
    const int warps = blockDim.x >> 5, tiles = (mts < 0 ? f.kt : mts) * f.kt;
    const uint32_t one = f.f16_mma ? 0x3c00u : 0x3f80u;
    int tile = threadIdx.x >> 5, mt = 0, kt = tile;
    while (kt >= f.kt) kt -= f.kt, mt++;
    for (; tile < tiles; tile += warps) {
        uint32_t w[4];
        if (!f.transpose) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = row0 + 16 * mt + (PERM ? rotq_factor_c_row<L>(gq + 8 * h) : gq + 8 * h);
                const uint32_t bits = r < rend ? f.bits[r * f.words + (kt >> 1)] >> ((kt & 1) * 16) : 0u;
#pragma unroll
                for (int q = 0; q < 2; q++) { // w[h + 2q]: columns 2tq + 8q, + 1
                    const int c = 16 * kt + 2 * tq + 8 * q;
                    const uint32_t e0 = r < rend && c < f.k ? one | (((bits >> (c & 15)) & 1u) << 15) : 0u;
                    const uint32_t e1 = r < rend && c + 1 < f.k ? one | (((bits >> ((c + 1) & 15)) & 1u) << 15) : 0u;
                    w[h + 2 * q] = e0 | (e1 << 16);
                }
            }
        } else {
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int row = row0 + 16 * mt + (PERM ? rotq_factor_c_row<L>(gq + (q & 1) * 8) : gq + (q & 1) * 8),
                          col = 16 * kt + 2 * tq + (q >> 1) * 8;
                w[q] = row < rend ? rotq_factor_entry16(f, row, col) | (rotq_factor_entry16(f, row, col + 1) << 16) : 0u;
            }
        }
        ((uint4 *)afr)[tile * 32 + lane] = make_uint4(w[0], w[1], w[2], w[3]);
        kt += warps;
        while (kt >= f.kt) kt -= f.kt, mt++;
    }
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

// bf16 split of an fp32 value: x = hi + mid + lo to 24 bits.
__device__ __forceinline__ void rotq_split3(float x, uint16_t t[3]) {
    __nv_bfloat16 h = __float2bfloat16_rn(x);
    float r1 = x - __bfloat162float(h);
    __nv_bfloat16 m = __float2bfloat16_rn(r1);
    float r2 = r1 - __bfloat162float(m);
    t[0] = __bfloat16_as_ushort(h);
    t[1] = __bfloat16_as_ushort(m);
    t[2] = __bfloat16_as_ushort(__float2bfloat16_rn(r2));
}

// Column tiles per A fragment: 16-bit inputs share each H_K fragment between
// two 8-column mma tiles (half the shared-memory reads of A); fp32 inputs hold
// three bf16 terms per value and take one.
template <int ES>
struct rotq_factor_cols {
    static constexpr int NB = ES == 2 ? 2 : 1;
    static constexpr int TERMS = ES == 4 ? 3 : 1;
    static constexpr int WIDTH = 8 * NB;
};

// The B operand of the K step for stage columns col0 .. col0 + 8*NB - 1 (of
// the G * 2^ls a stage holds): b[kt][term][n tile][half], column col0 + 8nb +
// gq, rows 2tq, 2tq+1 (+8) of k tile kt; rows >= K are zero.
template <int L, int ES, int KTMAX>
__device__ __forceinline__ void rotq_factor_load_b(const rotq_had_args &a, const rotq_had_factor &f,
                                                   const char *stg, const char *zero16, int64_t g0, int col0,
                                                   int c0, int ls,
                                                   uint32_t (&b)[KTMAX][rotq_factor_cols<ES>::TERMS]
                                                                [rotq_factor_cols<ES>::NB][2]) {
    typedef rotq_factor_cols<ES> cols;
    const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
    const int mask = (1 << ls) - 1;
    if (ES == 2 && L >= 4) {
        // 16 columns of one row block: one ldmatrix.x4.trans per k tile gives the
        // four B fragments (k halves x column halves); rows >= K read a zero chunk.
        const int gl = col0 >> ls, j0 = col0 & mask;
        const int mi = lane >> 3, r = lane & 7;
        const int lc = rotq_stage_lc<ES>(ls);
        const int k0 = 8 * (mi & 1) + r; // this lane's row in k tile 0
        const int j = j0 + 8 * (mi >> 1);
        const unsigned e0 = (unsigned)(((gl * f.k + k0) << ls) + j);
        const bool tma = rotq_tma_on(a.tma);
        // TMA stage: line (gl * 2^(ls-6) + j / 64) * krows + k of 128 bytes, its
        // chunks XORed with the line's low 3 bits. Either layout: k tile kt is 16
        // rows further with the same swizzle (rows of >= 8 chunks), a constant offset.
        const unsigned line = (unsigned)((((gl << ls) + j) >> 6) * f.krows + k0);
        const char *row0 = tma ? stg + rotq_tma_stage_chunk(line, ((unsigned)j >> 3) & 7u)
                               : stg + rotq_stage_swizzle(e0 >> 3, lc) * 16;
#pragma unroll
        for (int kt = 0; kt < KTMAX; kt++) {
            if (kt >= f.kt) break;
            const int k = 16 * kt + k0;
            const char *row = tma       ? row0 + kt * 16 * ROTQ_TMA_ROW_BYTES
                              : lc >= 3 ? row0 + (kt << (lc + 8))
                                        : stg + rotq_stage_swizzle((e0 >> 3) + (kt << (ls + 1)), lc) * 16;
            uint32_t q[4];
            ptx_ldmatrix_x4_trans(q, ptx_smem_addr(k < f.k ? row : zero16));
            b[kt][0][0][0] = q[0];
            b[kt][0][0][1] = q[1];
            b[kt][0][cols::NB - 1][0] = q[2];
            b[kt][0][cols::NB - 1][1] = q[3];
        }
        return;
    }
#pragma unroll
    for (int nb = 0; nb < cols::NB; nb++) {
        const int col = col0 + 8 * nb + gq;
        const int gl = col >> ls, j = col & mask;
#pragma unroll
        for (int kt = 0; kt < KTMAX; kt++) {
            if (kt >= f.kt) break;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int k0 = 16 * kt + 2 * tq + 8 * h;
                uint32_t u0 = rotq_staging_elem<L, ES>(a, f, stg, g0, gl, k0, j, c0, ls);
                uint32_t u1 = rotq_staging_elem<L, ES>(a, f, stg, g0, gl, k0 + 1, j, c0, ls);
                if (ES == 2) {
                    b[kt][0][nb][h] = u0 | (u1 << 16);
                } else {
                    uint16_t s0[3], s1[3];
                    rotq_split3(__uint_as_float(u0), s0);
                    rotq_split3(__uint_as_float(u1), s1);
#pragma unroll
                    for (int t = 0; t < cols::TERMS; t++)
                        b[kt][t][nb][h] = (uint32_t)s0[t] | ((uint32_t)s1[t] << 16);
                }
            }
        }
    }
}

// acc[nb] += A * B[nb] for one k tile (every bf16 term of fp32 inputs).
template <int ES, bool F16>
__device__ __forceinline__ void rotq_factor_mma_k(float (&acc)[rotq_factor_cols<ES>::NB][4], const uint4 &av,
                                                  const uint32_t (&bk)[rotq_factor_cols<ES>::TERMS]
                                                                      [rotq_factor_cols<ES>::NB][2]) {
    typedef rotq_factor_cols<ES> cols;
    const uint32_t afrag[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
    for (int nb = 0; nb < cols::NB; nb++)
#pragma unroll
        for (int t = 0; t < cols::TERMS; t++) {
            if (F16)
                ptx_mma_f16_16816(acc[nb], afrag, bk[t][nb]);
            else
                ptx_mma_bf16_16816(acc[nb], afrag, bk[t][nb]);
        }
}

// C = H_K * B for output rows 16*mt0 .. 16*mt1 - 1 (clipped to K) of stage
// columns col0 .. col0 + 8*NB - 1, written to W in fp32. F16: fp16 operands
// (fp16 input), else bf16; a template parameter so that the mma loop holds one
// kind (a run-time choice inside it issues both, predicated).
// C element (m, stage column c) goes to W[rotq_w_index(e)], e = (gl*K + m)
// * 2^L + j for c = gl * 2^ls + jr, j = c0 + jr. When the columns of this
// call lie in one row block (2^L >= WIDTH; then 2^ls >= WIDTH too), e = row
// bits | column bits, and the index is additive over them: index(row << L)
// + index(j0 | 2tq) + off, with off in {0, 1, 8, 9} (< 32: unchanged) for
// the values of a lane in one row: one index per row, immediates for the stores.
template <int L, int ES, int KTMAX, bool F16>
__device__ __forceinline__ void rotq_factor_mma_store(const rotq_had_factor &f, const uint32_t *afr,
                                                      const uint32_t (&b)[KTMAX][rotq_factor_cols<ES>::TERMS]
                                                                             [rotq_factor_cols<ES>::NB][2],
                                                      float *W, int col0, int c0, int ls, int mt0, int mt1) {
    typedef rotq_factor_cols<ES> cols;
    const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
    const int mask = (1 << ls) - 1;
    const bool one_block = (1 << L) >= cols::WIDTH;
    const int gl0 = col0 >> ls;
    const unsigned lane_part = rotq_w_index((unsigned)((c0 + (col0 & mask)) | (2 * tq)));
    for (int mt = mt0; mt < mt1; mt++) {
        float acc[cols::NB][4];
#pragma unroll
        for (int nb = 0; nb < cols::NB; nb++) acc[nb][0] = acc[nb][1] = acc[nb][2] = acc[nb][3] = 0.f;
        const uint4 *ap = (const uint4 *)afr + mt * f.kt * 32 + lane;
        if (KTMAX <= ROTQ_FACTOR_SMALL_KT) {
            // Few k tiles, two blocks per SM under 80 registers: no prefetch (a
            // second set of A registers spills in the phases).
#pragma unroll
            for (int kt = 0; kt < KTMAX; kt++) {
                if (kt >= f.kt) break;
                rotq_factor_mma_k<ES, F16>(acc, ap[kt * 32], b[kt]);
            }
        } else {
            // A fragments of (mt, kt) loaded one k tile ahead of the mma that
            // uses them, into two alternating register sets (one set and a copy
            // costs four moves per k tile).
            uint4 a0 = ap[0], a1;
#pragma unroll
            for (int kt = 0; kt < KTMAX; kt += 2) {
                if (kt >= f.kt) break;
                if (kt + 1 < KTMAX && kt + 1 < f.kt) a1 = ap[(kt + 1) * 32];
                rotq_factor_mma_k<ES, F16>(acc, a0, b[kt]);
                if (kt + 1 >= KTMAX || kt + 1 >= f.kt) break;
                if (kt + 2 < KTMAX && kt + 2 < f.kt) a0 = ap[(kt + 2) * 32];
                rotq_factor_mma_k<ES, F16>(acc, a1, b[kt + 1]);
            }
        }
        if (one_block) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int m = 16 * mt + rotq_factor_c_row<L>(gq + 8 * h);
                if (m >= f.k) continue;
                const unsigned base = rotq_w_index_shl<L>((unsigned)(gl0 * f.k + m)) + lane_part;
#pragma unroll
                for (int nb = 0; nb < cols::NB; nb++) {
                    W[base + (unsigned)(8 * nb)] = acc[nb][2 * h];
                    W[base + (unsigned)(8 * nb + 1)] = acc[nb][2 * h + 1];
                }
            }
        } else {
#pragma unroll
            for (int nb = 0; nb < cols::NB; nb++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    int m = 16 * mt + rotq_factor_c_row<L>(gq + (i >> 1) * 8);
                    int c = col0 + 8 * nb + 2 * tq + (i & 1);
                    if (m < f.k) {
                        int cgl = c >> ls, cj = c0 + (c & mask);
                        W[rotq_w_index((unsigned)((cgl * f.k + m) << L | cj))] = acc[nb][i];
                    }
                }
        }
    }
}

// The K step for columns col0 .. col0 + 8*NB - 1 of the G*2^ls columns of a
// stage, output rows 16*mt0 .. 16*mt1 - 1 (clipped to K), written to W in fp32.
template <int L, int ES, int KTMAX>
__device__ __forceinline__ void rotq_factor_columns(const rotq_had_args &a, const rotq_had_factor &f,
                                                    const char *stg, const char *zero16, const uint32_t *afr,
                                                    float *W, int64_t g0, int col0, int c0, int ls, int mt0,
                                                    int mt1) {
    typedef rotq_factor_cols<ES> cols;
    uint32_t b[KTMAX][cols::TERMS][cols::NB][2];
    rotq_factor_load_b<L, ES, KTMAX>(a, f, stg, zero16, g0, col0, c0, ls, b);
    if (ES == 2 && f.f16_mma)
        rotq_factor_mma_store<L, ES, KTMAX, true>(f, afr, b, W, col0, c0, ls, mt0, mt1);
    else
        rotq_factor_mma_store<L, ES, KTMAX, false>(f, afr, b, W, col0, c0, ls, mt0, mt1);
}

// The K step's warp tasks: (column group of WIDTH, range of m tiles). With
// fewer column groups than warps (large K, small 2^L: 172 * 64 has 4 groups of
// 16 columns) the m tiles are split too, and every warp has at most one task.
// Stage columns: G row blocks x 2^ls, a multiple of WIDTH (host). The K > 64
// builds work them out once per block (the divisions cost 7% of the
// instructions of 172 * 64 when they were redone every stage): per warp {first
// group, group step, mt0 | mt1 << 16, groups}, the first group past `groups`
// for a warp without a task.
#define ROTQ_FACTOR_MAX_WARPS (ROTQ_FACTOR_WIDE_THREADS / 32)
template <int ES, int KTMAX>
__device__ __forceinline__ int4 rotq_factor_task(const rotq_had_factor &f, int ls, int warp, int nwarps) {
    typedef rotq_factor_cols<ES> cols;
    const int groups = (f.groups_per_block << ls) / cols::WIDTH;
    int grp = warp, step = nwarps, mt0 = 0, mt1 = f.kt;
    if (KTMAX > ROTQ_FACTOR_SMALL_KT && groups < nwarps) {
        int parts = nwarps / groups;
        if (parts > f.kt) parts = f.kt;
        if (warp >= groups * parts) return make_int4(groups, 1, 0, groups);
        grp = warp / parts;
        const int part = warp - grp * parts;
        step = groups; // one task
        mt0 = part * f.kt / parts;
        mt1 = (part + 1) * f.kt / parts;
    }
    return make_int4(grp, step, mt0 | (mt1 << 16), groups);
}

// The K step of K <= 64 (KT = ceil(K / 16) k tiles, and as many m tiles) for
// the common stage: one row block (G == 1) of 16-bit values (signs applied by
// rotq_factor_sign_stage), by TMA or in cp.async rows of >= 64 columns. The general path
// (rotq_factor_columns) spent about 150 instructions per 16-column task on
// run-time checks, per-row W indices and a loop over m tiles; here everything
// that does not depend on the task is worked out once per stage:
// - the lane's ldmatrix row (k0) and whether its row in the last k tile is an
//   input row (k < K; otherwise it reads the zero chunk);
// - the W slots of its output rows r_h = rotq_factor_c_row(gq + 8h), since
//   rotq_w_index adds over disjoint bits: slot(row 16mt + r_h, column
//   c0 + 16 task + 2tq + 8nb + j) = w(r_0 << L) + w(c0 | 2tq) + w(16 task) +
//   [w(16mt << L) + 8nb + j] (+ the lane's w(r_1 << L) - w(r_0 << L) for h = 1),
//   the bracket a compile-time immediate;
// - which of the last m tile's rows are rows of H_K (rows < K), the only ones
//   that can be past K;
// - for KT <= 2 the A fragments of H_K, held in registers across the tasks.
// A task is then its stage address (TMA: line task/4 * krows + k0, chunk
// swizzled by the line; cp.async: chunk 2 task + jb swizzled by k0), w(16 task)
// = 16 task + task/2 (L <= 10), KT ldmatrix, 2 KT^2 mma with KT independent
// accumulator chains, and 16 KT stores at immediate offsets: 24 instructions
// a task for KT = 1 and 39 for KT = 2 in SASS (47 and 74 before, when the
// stage address and w(col) were worked out from the column with the TMA /
// cp.async choice made per task).
template <int L, int KT, bool F16, bool TMA>
__device__ __forceinline__ void rotq_factor_k_step_one(const rotq_had_factor &f, const char *stg, const char *zero16,
                                                       const uint32_t *afr, float *W, int c0, int ls, int nwarps) {
    // The lane read afresh: what derives from it stays out of the tile loop's
    // live state (hoisted, it made the two-block 2^10 build spill 52 bytes).
    const int lane = (int)ptx_lane_id(), gq = lane >> 2, tq = lane & 3;
    const int mi = lane >> 3;
    const int k0 = 8 * (mi & 1) + (lane & 7); // this lane's ldmatrix row in k tile 0
    const unsigned jb = (unsigned)(mi >> 1);  // and its 8-column half of the task's 16 (chunk bit 0)
    const bool last_in = 16 * (KT - 1) + k0 < f.k;
    // The lane's output rows within an m tile (rotq_factor_c_row), h = 0, 1.
    const int r0 = rotq_factor_c_row<L>(gq), r1 = rotq_factor_c_row<L>(gq + 8);
    const bool h0_in = 16 * (KT - 1) + r0 < f.k, h1_in = 16 * (KT - 1) + r1 < f.k;
    // W slot of the lane's output (row r_h, column c0 + 16 task + 2tq), less
    // w(16 task): c0 is a multiple of 2^ls > 16 task, so the parts have disjoint
    // bits; the second row is an offset from the first.
    float *wl = W + rotq_w_index((unsigned)r0 << L) + rotq_w_index((unsigned)c0 | (unsigned)(2 * tq));
    const int d1 = (int)rotq_w_index((unsigned)r1 << L) - (int)rotq_w_index((unsigned)r0 << L);
    const int lc = ls - 3; // log2 of the 16-byte chunks of a cp.async stage row (>= 3 here)
    // Bytes from one k tile of the stage to the next (16 rows on, same swizzle).
    const unsigned kt_bytes = TMA ? 16u * ROTQ_TMA_ROW_BYTES : 16u << (lc + 4);
    // The lane's stage row: TMA line k0 of each 64-column block (krows lines per
    // block), or cp.async row k0 (2^lc chunks, the low 3 chunk bits XOR k0).
    // rotq_tma_stage_chunk / rotq_stage_swizzle split into this per-stage part
    // and a per-task part below: the helpers per task cost 2-5 more instructions.
    const char *srow = TMA ? stg + k0 * ROTQ_TMA_ROW_BYTES : stg + ((unsigned)k0 << (lc + 4));
    const unsigned block_bytes = (unsigned)f.krows * ROTQ_TMA_ROW_BYTES;
    const uint4 *ap = (const uint4 *)afr + lane;
    constexpr bool AREG = KT <= 2; // A fragments in registers
    uint4 areg[AREG ? KT * KT : 1];
    if (AREG) {
#pragma unroll
        for (int t = 0; t < (AREG ? KT * KT : 0); t++) areg[t] = ap[t * 32];
    }
    const int tasks = 1 << (ls - 4);
    // (Tried: two tasks an iteration, interleaved against the ldmatrix -> mma
    // -> store latencies: 4-8% slower, the two-block builds spilling more.)
#pragma unroll 1 // unrolled, the two-block builds (80 registers) spilled the loop's state
    for (unsigned task = threadIdx.x >> 5; task < (unsigned)tasks; task += (unsigned)nwarps) {
        // The lane's ldmatrix row: stage column 16 task + 8 jb, chunk 2 task + jb.
        const char *row0;
        if (TMA) { // line (task / 4) krows + k0, chunk (2 task + jb) mod 8 under the line's swizzle
            const unsigned q = task >> 2;
            const unsigned line7 = (q * (unsigned)f.krows + (unsigned)k0) & 7u;
            row0 = srow + q * block_bytes + (((((task << 1) & 6u) | jb) ^ line7) << 4);
        } else {
            row0 = srow + ((((task << 1) | jb) ^ ((unsigned)k0 & 7u)) << 4);
        }
        uint32_t b[KT][4];
#pragma unroll
        for (int kt = 0; kt < KT; kt++) {
            const char *p = row0 + kt * kt_bytes;
            if (kt == KT - 1 && !last_in) p = zero16;
            ptx_ldmatrix_x4_trans(b[kt], ptx_smem_addr(p));
        }
        // w(16 task): 16 task + task / 2 (+ task / 64 + task / 2048 past 64 tasks).
        float *wt = wl + (task << 4) + (task >> 1) + (L > 10 ? (task >> 6) + (task >> 11) : 0u);
#pragma unroll
        for (int mt = 0; mt < KT; mt++) {
            float acc[2][4];
#pragma unroll
            for (int nb = 0; nb < 2; nb++) acc[nb][0] = acc[nb][1] = acc[nb][2] = acc[nb][3] = 0.f;
#pragma unroll
            for (int kt = 0; kt < KT; kt++) {
                const uint4 av = AREG ? areg[(mt * KT + kt) % (AREG ? KT * KT : 1)] : ap[(mt * KT + kt) * 32];
                const uint32_t afrag[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
                for (int nb = 0; nb < 2; nb++) {
                    const uint32_t bf[2] = {b[kt][2 * nb], b[kt][2 * nb + 1]};
                    if (F16)
                        ptx_mma_f16_16816(acc[nb], afrag, bf);
                    else
                        ptx_mma_bf16_16816(acc[nb], afrag, bf);
                }
            }
#pragma unroll
            for (int h = 0; h < 2; h++) {
                if (mt == KT - 1 && !(h ? h1_in : h0_in)) continue;
                float *wh = wt + rotq_w_index((unsigned)(16 * mt) << L) + (h ? d1 : 0); // an immediate, d1
#pragma unroll
                for (int nb = 0; nb < 2; nb++) {
                    wh[8 * nb] = acc[nb][2 * h];
                    wh[8 * nb + 1] = acc[nb][2 * h + 1];
                }
            }
        }
    }
}

// rotq_factor_k_step_one for the run-time k-tile count and operand type.
template <int L>
__device__ __forceinline__ void rotq_factor_k_step_one_any(const rotq_had_factor &f, const char *stg,
                                                           const char *zero16, const uint32_t *afr, float *W, int c0,
                                                           int ls, bool tma, int nwarps) {
#define ROTQ_K_STEP_ONE(F16, TMA)                                                                                   \
    switch (f.kt) {                                                                                                 \
    case 1: rotq_factor_k_step_one<L, 1, F16, TMA>(f, stg, zero16, afr, W, c0, ls, nwarps); break;                 \
    case 2: rotq_factor_k_step_one<L, 2, F16, TMA>(f, stg, zero16, afr, W, c0, ls, nwarps); break;                 \
    case 3: rotq_factor_k_step_one<L, 3, F16, TMA>(f, stg, zero16, afr, W, c0, ls, nwarps); break;                 \
    default: rotq_factor_k_step_one<L, 4, F16, TMA>(f, stg, zero16, afr, W, c0, ls, nwarps); break;                \
    }
    // TMA stages only on sm_90 (rotq_tma_on), so the TMA bodies only there.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (tma) {
        if (f.f16_mma) {
            ROTQ_K_STEP_ONE(true, true)
        } else {
            ROTQ_K_STEP_ONE(false, true)
        }
        return;
    }
#endif
    if (f.f16_mma) {
        ROTQ_K_STEP_ONE(true, false)
    } else {
        ROTQ_K_STEP_ONE(false, false)
    }
#undef ROTQ_K_STEP_ONE
}

// The K step of one stage over the block's warps (tasks: rotq_factor_task; the
// builds for K <= 64, whose tasks are plain, work them out in place: reading
// them from shared memory measured 2-4% slower there, the group step no longer
// a compile-time constant). K <= 64 with one row block of 16-bit values per
// stage (its signs applied to it) by TMA or in rows of >= 64 columns:
// rotq_factor_k_step_one.
template <int L, int ES, int KTMAX>
__device__ __forceinline__ void rotq_factor_k_step(const rotq_had_args &a, const rotq_had_factor &f, int64_t g0,
                                                   int c0, int ls, const char *stg, const char *zero16,
                                                   const uint32_t *afr, float *W, const int4 *tasks, int nwarps) {
    typedef rotq_factor_cols<ES> cols;
    // Only in the small-K builds: K <= 64 reaches a large-K build only where no
    // small-K build fits (rotq_launch_factor_any), and there the path's code moved
    // the register allocation of 172 * 64 and 108 * 128.
    if constexpr (ES == 2 && L >= 4 && KTMAX <= ROTQ_FACTOR_SMALL_KT) {
        const bool tma = rotq_tma_on(a.tma);
        if (f.kt <= ROTQ_FACTOR_SMALL_KT && f.groups_per_block == 1 && (tma || ls >= 6)) {
            rotq_factor_k_step_one_any<L>(f, stg, zero16, afr, W, c0, ls, tma, nwarps);
            return;
        }
    }
    if (KTMAX <= ROTQ_FACTOR_SMALL_KT) {
        const int groups = (f.groups_per_block << ls) / cols::WIDTH;
        for (int grp = threadIdx.x >> 5; grp < groups; grp += nwarps)
            rotq_factor_columns<L, ES, KTMAX>(a, f, stg, zero16, afr, W, g0, grp * cols::WIDTH, c0, ls, 0, f.kt);
        return;
    }
    const int4 t = tasks[threadIdx.x >> 5];
    for (int grp = t.x; grp < t.w; grp += t.y)
        rotq_factor_columns<L, ES, KTMAX>(a, f, stg, zero16, afr, W, g0, grp * cols::WIDTH, c0, ls, t.z & 0xffff,
                                          t.z >> 16);
}

// H_K for the wgmma K step (rotq_factor_wgmma_issue) in shared memory: rows
// 0 .. 64 * ceil(kt / 4) - 1 (m64 tiles; row p holds H_K's row
// rotq_factor_wg_row(p)) by columns 0 .. 16 kt - 1, zero past K, K-major
// without swizzle: 8 x 8 core matrices of 128 bytes, core (row / 8, column / 8)
// at ((row / 8) * 2kt + column / 8) * 128 (lbo 128, sbo 256 kt).
__host__ __device__ inline int rotq_factor_wg_mtiles(int kt) { return (kt + 3) / 4; }
// The row of H_K (and of the output) at row p of the wgmma A operand. A lane
// (gq, tq) stores rows p = gq, gq + 8 of an m16 tile to W at columns 2tq + 8i:
// for rows of 64 (66 words in W, 2 mod 32 banks) the identity puts them on
// banks 2(gq + tq), up to 4-way conflicts; taking rows 4 (p mod 4) + 2 (p / 4
// mod 2) + p / 8 within the tile spreads them over 8gq-apart banks (2-way, the
// least for one word a lane at even banks). Other widths are 2-way already.
template <int L>
__device__ __forceinline__ int rotq_factor_wg_row(int p) {
    if (L != 6) return p;
    return (p & ~15) | ((p & 3) << 2) | (((p >> 2) & 1) << 1) | ((p >> 3) & 1);
}
// A thread writes 16-byte rows of core matrices (8 columns of one row); without
// transposition their signs are one byte of the row's sign bits.
template <int L>
__device__ __forceinline__ void rotq_build_factor_wgmma_a(const rotq_had_factor &f, uint32_t *A) {
    const int kg = 2 * f.kt; // 8-column groups
    const int chunks = 64 * rotq_factor_wg_mtiles(f.kt) * kg;
    const uint32_t one = f.f16_mma ? 0x3c00u : 0x3f80u;
    for (int p = threadIdx.x; p < chunks; p += blockDim.x) {
        const int pr = p / kg, cg = p - pr * kg, c0 = 8 * cg;
        const int r = rotq_factor_wg_row<L>(pr);
        uint32_t w[4] = {0u, 0u, 0u, 0u};
        if (r < f.k && c0 < f.k) {
            if (!f.transpose) {
                const int live = f.k - c0 < 8 ? f.k - c0 : 8; // columns < K
                const uint32_t bits = f.bits[r * f.words + (cg >> 2)] >> ((cg & 3) * 8);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    if (i < live) w[i >> 1] |= (one | (((bits >> i) & 1u) << 15)) << (16 * (i & 1));
            } else {
#pragma unroll
                for (int i = 0; i < 8; i++) w[i >> 1] |= rotq_factor_entry16(f, r, c0 + i) << (16 * (i & 1));
            }
        }
        ((uint4 *)A)[((pr >> 3) * kg + cg) * 8 + (pr & 7)] = make_uint4(w[0], w[1], w[2], w[3]);
    }
}

#if ROTQ_WGMMA
// The K step on wgmma (sm_90a, the large-K builds, TMA stages). A warpgroup
// task is one m64 tile of H_K (rows past K zero) times one 64-column block of
// the stage: A from rotq_build_factor_wgmma_a's matrix, B straight from the
// stage, whose [krows][64] box is an MN-major operand under the 128-byte
// swizzle (a row per k, 8-row groups 1024 bytes apart; krows = 16 kt, so every
// block starts on a 1024-byte boundary, and rows K .. krows - 1 are TMA's zero
// fill). The fp32 results go to W as rotq_factor_mma_store's do. Against
// mma.sync: no fragment loads or B registers, one instruction per 64 x 64 x 16
// (172 * 64 issued two mma.sync and an A load per 16 x 16 x 16).
//
// The KT wgmmas of one m64 x 64 K step into d (the first sets it), from the
// descriptors of k tile 0: k tile kt is 256 bytes on in A, 2048 in B. The
// descriptors' address field is the address >> 4 in bits 0..13, and shared
// addresses stay below 2^18, so adding the offset >> 4 advances it without a
// carry out of the field. Straight-line: a branch between them serializes the
// wgmmas. The caller fences and commits.
template <int KT, bool F16>
__device__ __forceinline__ void rotq_wgmma_k_chain(float (&d)[32], uint64_t da0, uint64_t db0) {
#pragma unroll
    for (int kt = 0; kt < KT; kt++) {
        const uint64_t da = da0 + (uint64_t)((256u >> 4) * kt);
        const uint64_t db = db0 + (uint64_t)((16u * ROTQ_TMA_ROW_BYTES >> 4) * kt);
        if (kt == 0)
            ptx_wgmma_m64n64k16_ss<F16, 0>(d, da, db); // sets d
        else
            ptx_wgmma_m64n64k16_ss<F16, 1>(d, da, db);
    }
}

// One task's K step: m64 tile M of H_K times 64-column block q of the stage
// stg into d, fenced and committed (the caller waits).
template <int KT, bool F16>
__device__ __forceinline__ void rotq_factor_wgmma_issue(const rotq_had_factor &f, const uint32_t *A,
                                                        const char *stg, int M, int q, float (&d)[32]) {
    const uint32_t a0 = ptx_smem_addr(A) + (uint32_t)(8 * M * 2 * f.kt) * 128u; // core row 8M, column 0
    const uint32_t b0 = ptx_smem_addr(stg) + (uint32_t)(q * f.krows) * ROTQ_TMA_ROW_BYTES;
    const uint64_t da0 = ptx_wgmma_desc(a0, 128u, (uint32_t)f.kt * 256u, 0);
    const uint64_t db0 = ptx_wgmma_desc(b0, (uint32_t)f.krows * ROTQ_TMA_ROW_BYTES, 1024u, 1); // lbo unused at n = 64
    ptx_wgmma_fence();
    rotq_wgmma_k_chain<KT, F16>(d, da0, db0);
    ptx_wgmma_commit();
}

// Issues a task's wgmmas (one commit group; the caller waits) for f.kt = 5 ..
// KTMAX (K > 64), fp16 or bf16 operands: a build per k-tile count.
template <int KTMAX>
__device__ __forceinline__ void rotq_factor_wgmma_issue_any(const rotq_had_factor &f, const uint32_t *A,
                                                            const char *stg, int M, int q, float (&d)[32]) {
    static_assert(KTMAX == 11, "rotq_factor_wgmma_issue_any: the k-tile counts of K = 65 .. 176");
#define ROTQ_WG_ISSUE_KT(F16)                                                                                       \
    switch (f.kt) {                                                                                                 \
    case 5: rotq_factor_wgmma_issue<5, F16>(f, A, stg, M, q, d); break;                                             \
    case 6: rotq_factor_wgmma_issue<6, F16>(f, A, stg, M, q, d); break;                                             \
    case 7: rotq_factor_wgmma_issue<7, F16>(f, A, stg, M, q, d); break;                                             \
    case 8: rotq_factor_wgmma_issue<8, F16>(f, A, stg, M, q, d); break;                                             \
    case 9: rotq_factor_wgmma_issue<9, F16>(f, A, stg, M, q, d); break;                                             \
    case 10: rotq_factor_wgmma_issue<10, F16>(f, A, stg, M, q, d); break;                                           \
    default: rotq_factor_wgmma_issue<11, F16>(f, A, stg, M, q, d); break;                                           \
    }
    if (f.f16_mma) {
        ROTQ_WG_ISSUE_KT(true)
    } else {
        ROTQ_WG_ISSUE_KT(false)
    }
#undef ROTQ_WG_ISSUE_KT
}

// A finished task's accumulators to W. Block q of the stage is columns c0 + 64
// (q mod 2^(ls-6)) .. of row block q >> (ls-6).
template <int L>
__device__ __forceinline__ void rotq_factor_wgmma_store(const rotq_had_factor &f, float *W, const float (&d)[32],
                                                        int M, int q, int c0, int ls) {
    const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3;
    const int mt = 4 * M + (int)((threadIdx.x >> 5) & 3u); // this warp's m16 tile
    const int gl = q >> (ls - 6);
    const unsigned lane_part = rotq_w_index((unsigned)((c0 + ((q & ((1 << (ls - 6)) - 1)) << 6)) | (2 * tq)));
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int m = rotq_factor_wg_row<L>(16 * mt + gq + 8 * h);
        if (m >= f.k) continue;
        const unsigned base = rotq_w_index_shl<L>((unsigned)(gl * f.k + m)) + lane_part;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            W[base + rotq_w_index(8u * i)] = d[4 * i + 2 * h];
            W[base + rotq_w_index(8u * i) + 1] = d[4 * i + 2 * h + 1];
        }
    }
}

// The K step of one TMA stage on wgmma: tasks (m64 tile, 64-column block) over
// the block's warpgroups.
template <int L, int KTMAX>
__device__ __forceinline__ void rotq_factor_k_step_wgmma(const rotq_had_factor &f, const uint32_t *A,
                                                         const char *stg, float *W, int c0, int ls, int nwarps) {
    const int mtiles = (f.k + 63) >> 6, nq = f.groups_per_block << (ls - 6), step = nwarps >> 2;
    // Task t = q * mtiles + M, t = warpgroup, + step, ...: (q, M) advanced without a division.
    int M = (int)(threadIdx.x >> 7), q = 0;
    while (M >= mtiles) M -= mtiles, q++;
    for (; q < nq;) {
        float d[32];
        rotq_factor_wgmma_issue_any<KTMAX>(f, A, stg, M, q, d);
        ptx_wgmma_wait<0>();
        rotq_factor_wgmma_store<L>(f, W, d, M, q, c0, ls);
        M += step;
        while (M >= mtiles) M -= mtiles, q++;
    }
}
#endif

// Shared memory of the factor kernel: A fragments, a zero chunk and the stage
// mbarriers (the head), then one to three stages, then W. Stages start at 1024-byte
// boundaries, as TMA's 128-byte swizzle needs.
__host__ __device__ inline size_t rotq_factor_stage_bytes(int G, int n, int es) {
    return ((size_t)G * n * es + 1023) & ~(size_t)1023;
}
__host__ __device__ inline size_t rotq_factor_frag_bytes(int kt, int wgmma) {
    // wgmma's matrix (rows padded to m64 tiles) is the larger: 4 ceil(kt / 4) >= kt.
    return wgmma ? (size_t)rotq_factor_wg_mtiles(kt) * kt * 2048 : (size_t)kt * kt * 512;
}
__host__ __device__ inline size_t rotq_factor_head_bytes(int kt, int wgmma) {
    return (rotq_factor_frag_bytes(kt, wgmma) + 128 + 24 + 1023) & ~(size_t)1023; // zero chunk, 3 mbarriers
}

// Block shape and the blocks per SM its register cap aims at. 16-bit inputs
// with K <= 64 and 2^L <= 1024: two blocks of 384 threads (85 registers;
// measured on the H100: 64 registers with 512 threads spill in the phases and
// gain less), when their shared memory fits (the launcher checks). Otherwise
// one block of 512 threads (128 registers), 16 warps to hide latency.
// (384 against 448 and 512 threads: docs/perf-notes.md, factor v8.)
// WIDE: K <= 64 at 2^9 and 2^10 when two blocks do not fit: one block of 512
// to 640 threads (96 registers; the launcher picks the warp count whose rounds
// of the phases are fullest: 20 * 1024 has 20 subtiles, which 16 warps take in
// two rounds, the second with 4 warps busy; else 16 warps, which measured 6%
// faster than the same warps of the 512-thread large-K build at 28 * 1024).
#define ROTQ_FACTOR_WIDE_THREADS 640
template <int L, int ES, int KTMAX, bool WIDE = false>
struct rotq_factor_shape {
    static constexpr bool TWO = !WIDE && ES == 2 && KTMAX <= ROTQ_FACTOR_SMALL_KT && L <= 10;
    static constexpr int THREADS = TWO ? 384 : WIDE ? ROTQ_FACTOR_WIDE_THREADS : 512;
    static constexpr int BLOCKS = TWO ? 2 : 1;
    // Column-sliced stages (rows too long for a whole stage next to W; the
    // SLICED kernel): one-block builds only (the loop spills under 80 registers).
    static constexpr bool SLICES = !TWO && L >= ROTQ_FACTOR_SLICE_MIN_L;
};

// Eight 16-bit values (a 16-byte chunk of a stage) times the signs s[0 .. 7]:
// the sign bit of value i XORed with that of s[i]. prmt replicates each sign
// byte's sign into the high byte of its value's half word; one LOP3 masks and XORs.
__device__ __forceinline__ void rotq_sign_chunk16(char *p, const int8_t *s) {
    uint32_t w0, w1;
    if (((uintptr_t)s & 7u) == 0) {
        const uint2 w = __ldg((const uint2 *)s);
        w0 = w.x, w1 = w.y;
    } else {
        w0 = w1 = 0u;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            w0 |= (uint32_t)(uint8_t)__ldg(s + i) << (8 * i);
            w1 |= (uint32_t)(uint8_t)__ldg(s + 4 + i) << (8 * i);
        }
    }
    uint4 v = *(const uint4 *)p;
    v.x ^= ptx_prmt(w0, 0u, 0x9080u) & 0x80008000u; // values 0, 1: sign bytes 0, 1
    v.y ^= ptx_prmt(w0, 0u, 0xb0a0u) & 0x80008000u; // values 2, 3: sign bytes 2, 3
    v.z ^= ptx_prmt(w1, 0u, 0x9080u) & 0x80008000u;
    v.w ^= ptx_prmt(w1, 0u, 0xb0a0u) & 0x80008000u;
    *(uint4 *)p = v;
}

// Applies the sign vector to a stage of 16-bit values in place, so that the K
// step (its fast path, wgmma, TMA stages) runs as without signs. Every thread
// takes 16-byte chunks (8 consecutive columns of one K row); the signs (one
// int8 per column of a row block, the same for every row block) come through
// the read-only cache. Called after the stage has arrived; the caller's barrier
// (and for wgmma a proxy fence) follows.
template <int L>
__device__ __forceinline__ void rotq_factor_sign_stage(const rotq_had_args &a, const rotq_had_factor &f, char *stg,
                                                       int64_t g0, int c0, int ls, bool tma, int nthreads) {
    const int G = f.groups_per_block;
    if (tma) {
        // Line (row block gl, 64-column block q) * krows + k, chunk j of it
        // (2^ls >= 64). nthreads is a multiple of 8, so a thread keeps its j,
        // and (k, block) advance without a division.
        const int qlog = ls - 6, step = nthreads >> 3, krows = f.krows;
        const int lines = (G * krows) << qlog, j = (int)(threadIdx.x & 7u);
        int line = (int)(threadIdx.x >> 3), k = line % krows, qb = line / krows;
        for (; line < lines; line += step) {
            const int gl = qb >> qlog;
            if (k < f.k && g0 + gl < a.groups) {
                const int col = c0 + ((qb & ((1 << qlog) - 1)) << 6) + 8 * j;
                rotq_sign_chunk16(stg + rotq_tma_stage_chunk((unsigned)line, (unsigned)j),
                                  a.signs + rotq_sign_base(a, g0 + gl) + ((int64_t)k << L) + col);
            }
            k += step;
            while (k >= krows) k -= krows, qb++;
        }
    } else if (ls >= 3) {
        // cp.async layout: chunk c of the stage (row r = gl K + k, chunk c mod 2^lc
        // of it) at rotq_stage_swizzle(c, lc).
        const int lc = rotq_stage_lc<2>(ls);
        const int chunks = (G * f.k) << lc;
        for (int c = (int)threadIdx.x; c < chunks; c += nthreads) {
            const int r = c >> lc, gl = r / f.k, k = r - gl * f.k;
            if (g0 + gl >= a.groups) continue;
            const int col = c0 + ((c & ((1 << lc) - 1)) << 3);
            rotq_sign_chunk16(stg + rotq_stage_swizzle((unsigned)c, lc) * 16,
                              a.signs + rotq_sign_base(a, g0 + gl) + ((int64_t)k << L) + col);
        }
    } else {
        // Rows of fewer than 8 columns: element by element.
        const int count = (G * f.k) << ls;
        for (int e = (int)threadIdx.x; e < count; e += nthreads) {
            const int r = e >> ls, gl = r / f.k, k = r - gl * f.k;
            if (g0 + gl >= a.groups) continue;
            if (a.signs[rotq_sign_base(a, g0 + gl) + ((int64_t)k << L) + c0 + (e & ((1 << ls) - 1))] < 0)
                ((uint16_t *)stg)[rotq_staging_index<2>((unsigned)e, ls)] ^= 0x8000u;
        }
    }
}

// One stage of a tile: after a barrier (the previous stage's buffer is free,
// and at c0 == 0 the previous tile's W), issue the next stage's copies (two
// stages) or, with one stage, this one's, unless already issued (`issued`:
// with one stage, whole tiles, whose copies the kernel issues as soon as the
// previous K step has freed the stage; with two, a tile's first column slice,
// whose next slice the kernel issued after the previous tile's K step), wait
// for this stage, and run the K step on its
// columns: c0 .. c0 + 2^ls - 1 of every K row of the tile's G row blocks, into W.
// `uses` counts the block's stages so far: stage buffer uses & 1 (two stages),
// and with TMA the k-th use of a buffer's mbarrier (mbar0 + 8 * buffer) waits
// for phase parity k & 1.
template <int L, int ES, int KTMAX>
__device__ __forceinline__ void rotq_factor_stage_step(const rotq_had_args &a, const rotq_had_factor &f,
                                                       const CUtensorMap *xmap, int64_t tile, int64_t ntiles, int c0,
                                                       int ls, unsigned &uses, char *stage0,
                                                       unsigned stage_bytes, uint32_t mbar0, const char *zero16,
                                                       const uint32_t *afr, float *W, bool issued, const int4 *tasks,
                                                       int nwarps) {
    const int G = f.groups_per_block;
    const bool tma = rotq_tma_on(a.tma);
    const int buf = f.stages >= 2 ? (int)(uses & 1u) : 0;
    __syncthreads();
    if (f.stages >= 2) {
        const int c1 = c0 + (1 << ls);
        const int64_t nt = c1 < (1 << L) ? tile : tile + gridDim.x;
        if (nt < ntiles && !issued)
            rotq_factor_fill<L, ES>(a, f, xmap, nt, c1 < (1 << L) ? c1 : 0, ls, stage0 + (buf ^ 1) * stage_bytes,
                                    mbar0 + 8 * (buf ^ 1));
        if (!tma) {
            // Issued earlier, the next stage's group is already the newest: an
            // empty one here would make the wait cover it too.
            if (!issued) ptx_cp_async_commit();
            ptx_cp_async_wait<1>();
        }
    } else {
        if (!issued) {
            rotq_factor_fill<L, ES>(a, f, xmap, tile, c0, ls, stage0, mbar0);
            if (!tma) ptx_cp_async_commit();
        }
        if (!tma) ptx_cp_async_wait<0>();
    }
    if (tma)
        rotq_tma_wait(mbar0 + 8 * buf, (f.stages >= 2 ? uses >> 1 : uses) & 1u);
    else
        __syncthreads();
    uses++;
    char *stg = stage0 + buf * stage_bytes;
    if (ES == 2 && a.signs) {
        rotq_factor_sign_stage<L>(a, f, stg, tile * G, c0, ls, tma, nwarps * 32);
        ptx_fence_proxy_async_smem(); // written here, read by wgmma (the async proxy)
        __syncthreads();
    }

#if ROTQ_WGMMA
    if constexpr (ES == 2 && KTMAX > ROTQ_FACTOR_SMALL_KT) {
        if (tma && f.wgmma) { // afr holds rotq_build_factor_wgmma_a's matrix
            rotq_factor_k_step_wgmma<L, KTMAX>(f, afr, stg, W, c0, ls, nwarps);
            return;
        }
    }
#endif
    rotq_factor_k_step<L, ES, KTMAX>(a, f, tile * G, c0, ls, stg, zero16, afr, W, tasks, nwarps);
}

// The phases of a tile whose rows of 2^L <= 128 are in W (block-local), for
// a TMA store: phase 0 and lane butterflies finish the rows, so a thread holds
// 32 consecutive outputs, staged in `ostage` as 16-byte chunks under TMA's
// swizzle (total is a multiple of 32).
template <int L>
__device__ __forceinline__ void rotq_factor_phases_to_stage(const rotq_had_args &a, const float *W, int64_t total,
                                                            int nthreads, char *ostage, int os) {
    typedef rotq_pow2_plan<L> plan;
    static_assert(plan::SUB_THREADS == 32, "rows of 2^L <= 128: one-warp subtiles");
    const unsigned sub = threadIdx.x / plan::SUB_THREADS, tid = threadIdx.x % plan::SUB_THREADS;
    for (int64_t s0 = 0; s0 * plan::TILE < total; s0 += nthreads / plan::SUB_THREADS) {
        const unsigned sub_base = (unsigned)((s0 + sub) * plan::TILE);
        if (sub_base >= total) break;
        float v[32];
        const unsigned base = rotq_phase_base(sub_base, tid, 0);
#pragma unroll
        for (int r = 0; r < 32; r++) v[r] = W[base + (unsigned)r];
        rotq_phase<L>(0, v);
        rotq_finish_lane_rows<L>(v, a.scale);
        const unsigned local0 = sub_base + 32 * tid;
        if (local0 < total) rotq_stage_out32(ostage, local0, os, a.out_dtype, v);
    }
}

// One row of 2^9 in W (block-local element row_base, a multiple of 512),
// transformed by one warp and stored to element y_off of y: half of a one-warp
// subtile, 16 values a lane. The butterflies of the subtile path in its order
// and with its operations (address bits 0-3 in registers, bit 4 between lanes,
// bits 5-8 after an exchange in the row's own W slots, then the scale), so the
// results are the same bits. Conflict-free: w(16 lane) = 16 lane + lane / 2 puts
// even lanes on banks 0-15 and odd ones on 16-31; the second layout is lanes
// on consecutive slots.
__device__ __forceinline__ void rotq_factor_half_row9(const rotq_had_args &a, float *W, unsigned row_base,
                                                      int64_t y_off) {
    const unsigned lane = threadIdx.x & 31u;
    float v[16];
    const unsigned ba = rotq_w_index(row_base | (lane << 4)); // element 16 lane + r: ba + r
#pragma unroll
    for (int r = 0; r < 16; r++) v[r] = W[ba + (unsigned)r];
    rotq_butterfly<0, 16>(v);
    rotq_butterfly<1, 16>(v);
    rotq_butterfly<2, 16>(v);
    rotq_butterfly<3, 16>(v);
    rotq_lane_butterfly<16>(v, 1); // address bit 4: lane bit 0
#pragma unroll
    for (int r = 0; r < 16; r++) W[ba + (unsigned)r] = v[r];
    __syncwarp();
    const unsigned bb = rotq_w_index(row_base | lane); // element lane + 32 r: bb + 33 r
#pragma unroll
    for (int r = 0; r < 16; r++) v[r] = W[bb + 33u * (unsigned)r];
    rotq_butterfly<0, 16>(v); // address bits 5 .. 8
    rotq_butterfly<1, 16>(v);
    rotq_butterfly<2, 16>(v);
    rotq_butterfly<3, 16>(v);
    rotq_store_row<4, 5, true, true>(a, y_off + lane, v);
}

#if ROTQ_WGMMA
// The tile loop of K > 64 with 2^L = 64 or 128, TMA stages and TMA tile stores
// (three stages; each warpgroup has one wgmma task at most): the K step of the
// next tile is issued before this tile's phases and completes during them, its
// accumulators held in registers and written to W after the phases have read
// it. Stage i mod 3 takes tile i (loaded two tiles ahead), is read by tile i's
// wgmma one iteration before its phases, then holds tile i's output for the
// TMA store; it is reloaded (tile i + 3) once that store has read it.
template <int L, int KTMAX>
__device__ __forceinline__ void rotq_factor_pipelined(const rotq_had_args &a, const rotq_had_factor &f,
                                                      const CUtensorMap *xmap, const CUtensorMap *ymap,
                                                      const uint32_t *A, char *stage0, unsigned stage_bytes,
                                                      uint32_t mbar0, float *W, int nthreads, int64_t ntiles) {
    const int64_t total = (int64_t)f.groups_per_block * a.n;
    const int os = a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    const int out_rows = (int)(total * os / ROTQ_TMA_ROW_BYTES);
    // A warpgroup without a task of its own repeats task 0 and drops the result:
    // wgmma issued and awaited under a condition makes ptxas serialize them all.
    const int mtiles = (f.k + 63) >> 6, wgi = (int)(threadIdx.x >> 7);
    const bool mine = wgi < mtiles * (f.groups_per_block << (L - 6));
    const int q = mine ? wgi / mtiles : 0, M = mine ? wgi - q * mtiles : 0;
    const int64_t step = gridDim.x;
    int64_t tile = blockIdx.x;
    if (tile >= ntiles) return;
    rotq_factor_tma_fill(f, xmap, tile, 0, L, stage0, mbar0);
    if (tile + step < ntiles) rotq_factor_tma_fill(f, xmap, tile + step, 0, L, stage0 + stage_bytes, mbar0 + 8);
    float d[32];
    rotq_tma_wait(mbar0, 0);
    rotq_factor_wgmma_issue_any<KTMAX>(f, A, stage0, M, q, d);
    ptx_wgmma_wait<0>();
    if (mine) rotq_factor_wgmma_store<L>(f, W, d, M, q, 0, L);
    __syncthreads();
    for (unsigned i = 0; tile < ntiles; i++, tile += step) {
        const unsigned s = i % 3, s1 = (i + 1) % 3, s2 = (i + 2) % 3;
        char *stg = stage0 + s * stage_bytes;
        const bool next = tile + step < ntiles;
        if (tile + 2 * step < ntiles) // into tile i - 1's stage: waits for its store to have read it
            rotq_factor_tma_fill(f, xmap, tile + 2 * step, 0, L, stage0 + s2 * stage_bytes, mbar0 + 8 * s2);
        // Past the last tile the wgmmas read a stale stage (dropped).
        if (next) rotq_tma_wait(mbar0 + 8 * s1, ((i + 1) / 3) & 1u);
        rotq_factor_wgmma_issue_any<KTMAX>(f, A, stage0 + s1 * stage_bytes, M, q, d);
        rotq_factor_phases_to_stage<L>(a, W, total, nthreads, stg, os);
        ptx_wgmma_wait<0>();
        ptx_fence_proxy_async_smem(); // this thread's chunks, before the TMA reads them
        __syncthreads();              // W read, the tile staged
        if (threadIdx.x == 0)
            rotq_tma_store_rows(ymap, tile * out_rows, out_rows, rotq_tma_box_rows((int)(total * os)), stg);
        if (next && mine) rotq_factor_wgmma_store<L>(f, W, d, M, q, 0, L);
        __syncthreads(); // W holds the next tile
    }
}
#endif

// The first tile's TMA copies before the H_K build (rotq_had_factor_kernel).
// Same-run A/B on the H100, f16 at 2^25: 108 * 256 85.2 -> 80.5 us, 12 * 128
// 78.1 -> 76.6 (the builds' spills moved by 8 bytes, some up, some down).
// 0: A/B switch.
#ifndef ROTQ_FACTOR_EARLY_FILL
#define ROTQ_FACTOR_EARLY_FILL 1
#endif

// A persistent block walks over tiles of G row blocks of n = K * 2^L: the next
// tile streams into the other stage while this one runs the K step (stage ->
// W) and the power-of-two phases (W -> global; with QUANT, W -> W -> codes:
// rows are whole row blocks, qa as for the fused power-of-two kernel).
// SLICED: a tile (one row block) arrives in column slices of 2^f.slice_log
// (rotq_factor_shape::SLICES builds only). A separate build because the
// run-time slice loop costs the phases registers (spills at 128 registers, and
// 2.3x -> 2.7x the copy time at 20 * 1024 when it was one kernel).
template <int L, int ES, int KTMAX, bool QUANT, bool SLICED, bool WIDE>
__global__ void __launch_bounds__((rotq_factor_shape<L, ES, KTMAX, WIDE>::THREADS),
                                  (rotq_factor_shape<L, ES, KTMAX, WIDE>::BLOCKS))
    rotq_had_factor_kernel(rotq_had_args a, const __grid_constant__ rotq_had_factor f, rotq_q_args qa,
                           const __grid_constant__ CUtensorMap xmap, const __grid_constant__ CUtensorMap ymap) {
    typedef rotq_pow2_plan<L> plan;
    // Threads of the block: the build's, or the launcher's choice (WIDE).
    const int nthreads = WIDE ? (int)blockDim.x : rotq_factor_shape<L, ES, KTMAX, WIDE>::THREADS;
    extern __shared__ __align__(1024) char rotq_fsmem[];
    __shared__ uint32_t red[QUANT ? 32 : 1]; // team reductions of the quantize epilogue
    // Per-row absmax of int8 / fp8 rows, taken in the last phase (one buffer
    // per tile parity: the next tile's is cleared while this one's is in use).
    __shared__ uint32_t row_am[QUANT ? 2 : 1][QUANT ? ROTQ_FACTOR_AM_ROWS : 1];
    __shared__ int4 tasks[ROTQ_FACTOR_MAX_WARPS]; // the K step's, per warp
    const int G = f.groups_per_block;
    const int ls = SLICED ? f.slice_log : L; // stage columns per K row: 2^ls
    const unsigned stage_bytes = (unsigned)rotq_factor_stage_bytes(G, f.krows << ls, ES);
    // 2: prefetch the next stage; 1: rely on two blocks per SM; 3: the pipelined
    // loop (a build without wgmma prefetches with two of them).
    const int stages = f.stages;
    uint32_t *afr = (uint32_t *)rotq_fsmem;
    // The A operand: mma.sync fragments, or with wgmma H_K as a K-major matrix.
    const bool wg = ROTQ_WGMMA && ES == 2 && KTMAX > ROTQ_FACTOR_SMALL_KT && f.wgmma && rotq_tma_on(a.tma);
    char *zero16 = rotq_fsmem + rotq_factor_frag_bytes(f.kt, f.wgmma);
    const uint32_t mbar0 = ptx_smem_addr(zero16 + 128); // stage b's: mbar0 + 8 b
    char *stage0 = rotq_fsmem + rotq_factor_head_bytes(f.kt, f.wgmma);
    float *W = (float *)(stage0 + stages * stage_bytes);
    const int64_t ntiles = (a.groups + G - 1) / G;
    const unsigned sub = threadIdx.x / plan::SUB_THREADS;
    const unsigned tid = threadIdx.x % plan::SUB_THREADS;
    const int64_t total = (int64_t)G * a.n;

    // The last phase's registers give the int8 / fp8 row absmax (the
    // epilogue's first pass over W and its team reduction are left out) where
    // every subtile lies in one row.
    const bool pre_am = QUANT && (qa.kind == ROTQ_QUANT_INT8_ROW || qa.kind == ROTQ_QUANT_FP8_ROW) &&
                        a.n % plan::TILE == 0 && G <= ROTQ_FACTOR_AM_ROWS;
    if (rotq_tma_on(a.tma)) rotq_tma_init_stage_mbars(mbar0, 3); // the third for rotq_factor_pipelined
    // The builds with the pipelined loop (rotq_factor_pipelined), and whether this
    // call takes it: the host's choice, with TMA tile stores and no sign vector
    // (the loop hands the stages to wgmma as they arrive, with no sign pass). It
    // issues its own first copies.
    constexpr bool PIPE = ROTQ_WGMMA && ES == 2 && !QUANT && !SLICED && L >= 6 && L <= 7 &&
                          KTMAX > ROTQ_FACTOR_SMALL_KT;
    const bool pipelined = PIPE && wg && stages == 3 && rotq_tma_on(a.tma_out) && !a.signs;
    // One stage of whole tiles: the copies of the next tile go out as soon as
    // the K step has read the stage, and arrive during the phases. Two-block
    // builds only (the one-block builds have two stages wherever their shared
    // memory allows, and the extra state cost their phases registers: 108 *
    // 128 and 172 * 64 measured 2-5% slower).
    const bool early = rotq_factor_shape<L, ES, KTMAX, WIDE>::TWO && !SLICED && stages == 1;
    // By TMA the first tile's copies go out before the block builds H_K (the
    // thread that initialized the mbarriers issues them), so the build overlaps
    // them instead of preceding them.
    const bool first = (stages >= 2 || early) && (int64_t)blockIdx.x < ntiles;
    const bool first_now = ROTQ_FACTOR_EARLY_FILL && first && rotq_tma_on(a.tma) && !pipelined;
    if (first_now) rotq_factor_fill<L, ES>(a, f, &xmap, blockIdx.x, 0, ls, stage0, mbar0);
    if (wg) {
        rotq_build_factor_wgmma_a<L>(f, afr);
        ptx_fence_proxy_async_smem(); // written by this thread, read by wgmma (the async proxy)
    } else {
        rotq_build_factor_frags<L>(f, afr);
    }
    if (KTMAX > ROTQ_FACTOR_SMALL_KT && (threadIdx.x & 31u) == 0)
        tasks[threadIdx.x >> 5] = rotq_factor_task<ES, KTMAX>(f, ls, (int)(threadIdx.x >> 5), nthreads / 32);
    if (threadIdx.x < 8) ((uint4 *)zero16)[threadIdx.x] = make_uint4(0, 0, 0, 0);
    if (QUANT && threadIdx.x < 2 * ROTQ_FACTOR_AM_ROWS) (&row_am[0][0])[threadIdx.x] = 0u;
    __syncthreads(); // the mbarriers are initialized before any thread uses them
#if ROTQ_WGMMA
    if constexpr (PIPE) {
        if (pipelined) {
            rotq_factor_pipelined<L, KTMAX>(a, f, &xmap, &ymap, afr, stage0, stage_bytes, mbar0, W, nthreads, ntiles);
            if (threadIdx.x == 0) ptx_bulk_wait_read<0>(); // the stages are read before the block ends
            return;
        }
    }
#endif
    // n = K * 2^L with 2^L <= 128 (a.tma_out, never with `early`): the rows are
    // done after phase 0 and lane butterflies, and the tile leaves by TMA from the
    // stage the K step has just read, in the output dtype.
    const bool out_tma = !QUANT && L <= 7 && rotq_tma_on(a.tma_out);
    const int os = a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    const int out_rows = (int)(total * os / ROTQ_TMA_ROW_BYTES); // 128-byte rows of a tile's output
    if (first && !first_now) rotq_factor_fill<L, ES>(a, f, &xmap, blockIdx.x, 0, ls, stage0, mbar0);
    ptx_cp_async_commit();
    bool slice1_issued = false; // SLICED: the tile's second slice is on its way (issued after the last K step)
    // The block's tile count `it` is the only counter carried from tile to tile
    // (the tile, its parity and the stage uses derive from it): fewer registers
    // live across the phases, where the two-block builds are at their cap.
    for (unsigned it = 0;; it++) {
        const int64_t tile = (int64_t)blockIdx.x + (int64_t)it * gridDim.x;
        if (tile >= ntiles) break;
        const int par = (int)(it & 1u);                    // the parity of the block's tile count
        unsigned uses = SLICED ? it << (L - ls) : it;      // stages used before this tile
        const int64_t g0 = tile * G;
        // The previous tile's TMA store has read its stage before it is refilled
        // (by TMA: thread 0 waits before it issues the copy, rotq_factor_tma_fill).
        if (out_tma && !rotq_tma_on(a.tma) && threadIdx.x == 0) ptx_bulk_wait_read<0>();
        if (!SLICED) {
            rotq_factor_stage_step<L, ES, KTMAX>(a, f, &xmap, tile, ntiles, 0, L, uses, stage0, stage_bytes,
                                                 mbar0, zero16, afr, W, early, tasks, nthreads / 32);
        } else {
#pragma unroll 1
            for (int c0 = 0; c0 < (1 << L); c0 += 1 << ls)
                rotq_factor_stage_step<L, ES, KTMAX>(a, f, &xmap, tile, ntiles, c0, ls, uses, stage0,
                                                     stage_bytes, mbar0, zero16, afr, W, c0 == 0 && slice1_issued,
                                                     tasks, nthreads / 32);
        }
        __syncthreads();
        if (SLICED && stages >= 2) {
            // The tile's last K step has freed the stage it read: the next tile's
            // second slice goes there now (its first went to the other stage
            // during that step), so both arrive during this tile's phases instead
            // of the second being waited for one K step after it was issued.
            slice1_issued = tile + gridDim.x < ntiles;
            if (slice1_issued)
                rotq_factor_fill<L, ES>(a, f, &xmap, tile + gridDim.x, 1 << ls, ls,
                                        stage0 + ((uses - 1) & 1u) * stage_bytes, mbar0 + 8 * ((uses - 1) & 1u));
            if (!rotq_tma_on(a.tma)) ptx_cp_async_commit();
        }
        if (early) {
            if (tile + gridDim.x < ntiles) rotq_factor_fill<L, ES>(a, f, &xmap, tile + gridDim.x, 0, L, stage0, mbar0);
            ptx_cp_async_commit();
        }
        char *ostage = stage0 + (stages >= 2 ? (uses - 1) & 1u : 0u) * stage_bytes; // the stage just read (out_tma)

        // The other parity's absmax (last read by the previous tile's epilogue,
        // before this tile's first barrier) is cleared for the next tile.
        if (QUANT && threadIdx.x < ROTQ_FACTOR_AM_ROWS) row_am[par ^ 1][threadIdx.x] = 0u;

        // Power-of-two phases over the K*G rows of 2^L now in W (out_tma: into
        // the stage just read, for the tile's TMA store).
        bool staged = false;
        if constexpr (!QUANT && L <= 7) {
            if (out_tma) {
                rotq_factor_phases_to_stage<L>(a, W, total, nthreads, ostage, os);
                staged = true;
            }
        }
        // Rows of 2^9 (one-warp subtiles of two rows): the last f.half_rows rows
        // of the tile, the subtiles left after whole rounds of the warps, go
        // one per warp (rotq_factor_half_row9), so that round takes half as long
        // (the launcher's choice, rotq_factor_half_rows; read from the kernel
        // parameters where used, not held in registers).
        const int64_t whole = total - (L == 9 && !QUANT ? (int64_t)f.half_rows << 9 : 0); // in whole subtiles
        for (int64_t s0 = 0; !staged && s0 * plan::TILE < whole; s0 += nthreads / plan::SUB_THREADS) {
            const unsigned sub_base = (unsigned)((s0 + sub) * plan::TILE);
            // A one-warp subtile past the end has nothing to do (larger ones
            // take part in the block's barriers).
            if (plan::SUB_THREADS == 32 && sub_base >= whole) break;
            float v[32];
            const unsigned base = rotq_phase_base(sub_base, tid, 0);
#pragma unroll
            for (int r = 0; r < 32; r++) v[r] = sub_base < total ? W[base + (unsigned)r] : 0.0f;
            rotq_phase<L>(0, v);
            if (!QUANT) {
                rotq_pow2_phases<L, true>(a, W, sub_base, tid, sub_base, total, f.k, g0, v);
                continue;
            }
            rotq_pow2_exchanges<L>(W, sub_base, tid, v);
            if (!pre_am) {
                rotq_pow2_store_w<L>(W, sub_base, tid, v, a.scale);
            } else {
                // The stored values RN(v * scale) and their finite absmax, as
                // the epilogue's pass over W would take it (max is exact).
#pragma unroll
                for (int r = 0; r < 32; r++) v[r] = v[r] * a.scale;
                rotq_pow2_store_w<L>(W, sub_base, tid, v, 1.0f);
                const float m = rotq_qt_warp_absmax(v);
                if ((threadIdx.x & 31u) == 0 && sub_base < total)
                    atomicMax(&row_am[par][sub_base / (unsigned)a.n], __float_as_uint(m));
            }
        }
        if constexpr (L == 9 && !QUANT) {
            if ((int)sub < f.half_rows) {
                const unsigned row = (unsigned)(whole >> 9) + sub; // a K row of the tile (G == 1)
                bool live;
                const int64_t off = rotq_row_offset<L, true>(a, (int64_t)row, f.k, g0, &live);
                if (live) rotq_factor_half_row9(a, W, row << 9, off);
            }
        }
        if (out_tma) {
            ptx_fence_proxy_async_smem(); // this thread's chunks, before the TMA reads them
            __syncthreads();
            if (threadIdx.x == 0)
                rotq_tma_store_rows(&ymap, tile * out_rows, out_rows, rotq_tma_box_rows((int)(total * os)), ostage);
        }
        if (QUANT) {
            __syncthreads();
            const int64_t left = a.groups - g0;
            const unsigned rv = left < (int64_t)G ? (unsigned)left : (unsigned)G;
            rotq_qt_w_src src; // rows of n = K * 2^L (L >= 4: a multiple of 64)
            src.W = W;
            src.cols = (unsigned)a.n;
            rotq_qt_tile_any(qa, src, g0, rv, red, pre_am ? row_am[par] : nullptr);
        }
    }
    ptx_cp_async_wait<0>();
    if (out_tma && threadIdx.x == 0) ptx_bulk_wait_read<0>(); // the stage is read before the block ends
}
