// The K * 2^L Hadamard kernel for K >= 12 at 2^6 and 2^7 on sm_90a (16-bit
// inputs by TMA): 108 * 128 (Llama-2-13B's MLP) and 172 * 64 (Llama-2-7B's),
// 40 * 128 (Llama-2-13B's hidden size), and every K of 12 .. 176 at those widths
// whose tiles fit (K <= 16 only packed, below: unpacked it ran slower than the
// general kernel, ROTQ_WG_MIN_KT).
// A sign vector is applied to each arrived slot by its warpgroups before the K
// step (bits read once a block where every row block has the same signs).
//
// A row block (a tile) is X[k][j], k < K, j < 2^L; y = H_K X H_{2^L}. For an
// m64 tile M of H_K (rows 64M .., ceil(K / 64) of them) a warpgroup runs the
// K step as wgmma m64n64k16 with H_K in shared memory as A and the TMA slot as
// B (the general kernel's operand layouts, rotq_factor_wgmma_issue; 2^(L-6)
// column blocks of 64), and finishes the rows in registers: warp w of the warpgroup holds rows 64M + 16w + g (+ 8),
// lane (g, t), columns 8nt + 2t + {0, 1} of each 64-column block. Column bit
// 0 and bits 3..5 (nt) are register bits, bit 6 (2^7) the block, bits 1 and 2
// the lane bits t: all 2^L levels are butterflies on registers or between the
// four lanes of a quad, and the rows go to y straight from there. No W, no
// shared-memory round trip, no block barrier (the general kernel, against
// which this was written: K step -> W -> phases -> stage -> TMA store, with
// two block barriers a tile).
//
// The warpgroups form groups of G (f.groups_per_block): G = 1, or G = the m64
// tiles of H_K (K = 65 .. 128: 2, 129 .. 176: 3), each warpgroup of a group then
// taking one m64 tile of every tile of the group (a tile's slot is released
// after one m64 tile's time, not all of them). Each group has its own ring of
// S slots (its tiles i, i + NG, ... of the block's), whose mbarriers only the
// group's warpgroups await, each in order: a waiter has consumed the slot's
// previous use, so it is never two phases ahead and the parities cannot alias.
// After its last K step on a slot a warpgroup passes a named barrier (its four
// warps have their wgmma results); its first thread counts the slot read, and
// the group's last reader refills it with the tile S ahead.
//
// Packed row blocks (T = 2 or 4, K <= 32: 28 * 128 = 3584, Qwen2-7B's hidden
// size, and 12 * 128 = 1536): one m64 tile of H_K holds 16 kt live rows of 64,
// so two or three of a warpgroup's warps had only padding to finish. A slot
// then holds T row blocks (one TMA box, T rows in its outer dimension), R =
// 16 kt rows each, and the K step runs H_K on the diagonal blocks of a 64 x 64
// A operand (rotq_build_wg_packed_a): warp w finishes rows 16w % R .. of row
// block T u + 16w / R. Finite inputs give exactly the unpacked products (the
// other blocks' terms are exact zeros), but 0 * Inf is NaN: a NaN or Inf in
// one row block reaches every output of the others. Every output of the
// packed tile depends on every input, so a warp that finds a non-finite value
// among its finished rows redoes their K step from x on the CUDA cores
// (rotq_wg_redo_rows); in place, the warpgroup first agrees on it (a vote at
// a barrier), since the rows it reads may be a neighbour warp's to write.
//
// QUANT: the fused rotate + quantize build (a tile is one quantize row of
// K * 2^L values; groups of G = ceil(K / 64) warpgroups, one m64 tile each):
// the finished rows are quantized from the registers (rotq_wg_quant) and their
// codes go out through the warp's staging area. Per-row int8 / fp8 take the
// tile's absmax over the group's warps by a shared atomic and the group's
// barrier.
#pragma once
#include "hadamard_factor_frag.cuh"
#include "quantize_wg.cuh"

#define ROTQ_WG_MAX_WARPGROUPS 6
#define ROTQ_WG_MAX_SLOTS 4
#ifndef ROTQ_WG_NWG6
#define ROTQ_WG_NWG6 6 // warpgroups a block at 2^6 (A/B switch)
#endif
#ifndef ROTQ_WG_NWG7
#define ROTQ_WG_NWG7 4 // and at 2^7
#endif
#ifndef ROTQ_WG_MIN_KT
// The fewest k tiles (16 rows of H_K) this kernel takes with one row block a
// slot: K > 16. At K <= 16 three of a warpgroup's four warps hold only padding
// rows of the m64 tile (12 * 128 measured 1.6x slower than the general kernel,
// same-run A/B on the H100, f16 at 2^25: 127.3 against 79.4 us; 40 * 128 57.3
// against 82.7, 28 * 128 63.3 against 77.2, 40 * 64 59.0 against 72.7). With
// packed row blocks (rotq_wg_pack) K <= 16 runs four a slot instead.
#define ROTQ_WG_MIN_KT 2
#endif

typedef struct rotq_wg_ctl {
    uint64_t full[ROTQ_WG_MAX_WARPGROUPS][ROTQ_WG_MAX_SLOTS]; // group's slot arrived (TMA), by use parity
    uint32_t reads[ROTQ_WG_MAX_WARPGROUPS][ROTQ_WG_MAX_SLOTS]; // warpgroups done reading its current use
    // QUANT, per-row int8 / fp8: the group's tile absmax (as bits) and int8 row
    // sum, over three buffers by the group's slot count k mod 3, one word a row
    // block of the slot (rotq_wg_quant).
    uint32_t am[ROTQ_WG_MAX_WARPGROUPS][3 * ROTQ_WG_MAX_PACK], rs[ROTQ_WG_MAX_WARPGROUPS][3 * ROTQ_WG_MAX_PACK];
} rotq_wg_ctl;

// Bytes of a slot: one tile, 16 kt rows of 2^L 16-bit columns (rows past K
// TMA's zero fill).
__host__ __device__ inline unsigned rotq_wg_slot_bytes(int kt, int L) { return (unsigned)(16 * kt) << (L + 1); }
// Shared memory: the groups' slots (ng groups, `slots` each, of T row blocks),
// H_K (packed: the 64 x 64 block-diagonal operand), each warp's output staging
// (16 rows of 64 16-bit values), the control block, and with sign_words a
// word a thread and 64-column block (rotq_wg_sign_bits).
__host__ __device__ inline size_t rotq_wg_smem(int kt, int L, int nwg, int ng, int slots, int T = 1,
                                               bool sign_words = false) {
    return (size_t)ng * slots * T * rotq_wg_slot_bytes(kt, L) + rotq_factor_frag_bytes(T > 1 ? 4 : kt, 1) +
           (size_t)nwg * 4 * 2048 + sizeof(rotq_wg_ctl) + (sign_words ? (size_t)(128 * nwg * 4) << (L - 6) : 0);
}
// Row blocks packed into one m64 tile for K's k tiles (1: none; K <= 16: 4, K <= 32: 2).
__host__ __device__ inline int rotq_wg_pack(int kt) { return kt == 1 ? 4 : kt == 2 ? 2 : 1; }

#if ROTQ_WGMMA
// Two values of columns c, c + 1 of y at element off, scaled.
template <int DT, bool PAIR>
__device__ __forceinline__ void rotq_wg_store2(void *y, int64_t off, float v0, float v1) {
    if (DT == ROTQ_DTYPE_F32) {
        float *d = (float *)y + off;
        if (PAIR) {
            *(float2 *)d = make_float2(v0, v1);
        } else {
            d[0] = v0;
            d[1] = v1;
        }
    } else {
        uint16_t *d = (uint16_t *)y + off;
        if (PAIR) {
            *(uint32_t *)d = rotq_pack_16x2(v0, v1, DT);
        } else {
            d[0] = rotq_to_16(v0, DT);
            d[1] = rotq_to_16(v1, DT);
        }
    }
}

// One commit group of wgmmas for m64 tile M and every 64-column block q of
// the slot (rotq_factor_wgmma_issue's operands, rotq_wgmma_k_chain's chains).
template <int KT, bool F16, int NQ>
__device__ __forceinline__ void rotq_wg_issue(const rotq_had_factor &f, const uint32_t *A, const char *stg, int M,
                                              float (&v)[NQ][32]) {
    // H_K's address read where used (volatile): with M a constant the
    // descriptors of every k-tile count were hoisted out of the tile loop and
    // spilled (2^7, groups of two: 344 bytes).
    const uint32_t a0 = ptx_opaque_u32(ptx_smem_addr(A)) + (uint32_t)(8 * M * 2 * KT) * 128u; // core row 8M
    const uint64_t da0 = ptx_wgmma_desc(a0, 128u, (uint32_t)KT * 256u, 0);
    ptx_wgmma_fence();
#pragma unroll
    for (int q = 0; q < NQ; q++) {
        const uint32_t b0 = ptx_smem_addr(stg) + (uint32_t)(q * 16 * KT) * ROTQ_TMA_ROW_BYTES;
        rotq_wgmma_k_chain<KT, F16>(v[q], da0, ptx_wgmma_desc(b0, (uint32_t)(16 * KT) * ROTQ_TMA_ROW_BYTES, 1024u, 1));
    }
    ptx_wgmma_commit();
}
#if ROTQ_WG_MIN_KT < 5
#define ROTQ_WG_ISSUE_SMALL(F16)                                                                                    \
    case 1: rotq_wg_issue<1, F16, NQ>(f, A, stg, M, v); break;                                                      \
    case 2: rotq_wg_issue<2, F16, NQ>(f, A, stg, M, v); break;                                                      \
    case 3: rotq_wg_issue<3, F16, NQ>(f, A, stg, M, v); break;                                                      \
    case 4: rotq_wg_issue<4, F16, NQ>(f, A, stg, M, v); break;
#else
#define ROTQ_WG_ISSUE_SMALL(F16)
#endif
template <int NQ>
__device__ __forceinline__ void rotq_wg_issue_any(const rotq_had_factor &f, const uint32_t *A, const char *stg,
                                                  int M, float (&v)[NQ][32]) {
#define ROTQ_WG_ISSUE(F16)                                                                                          \
    switch (f.kt) {                                                                                                 \
        ROTQ_WG_ISSUE_SMALL(F16)                                                                                    \
    case 5: rotq_wg_issue<5, F16, NQ>(f, A, stg, M, v); break;                                                      \
    case 6: rotq_wg_issue<6, F16, NQ>(f, A, stg, M, v); break;                                                      \
    case 7: rotq_wg_issue<7, F16, NQ>(f, A, stg, M, v); break;                                                      \
    case 8: rotq_wg_issue<8, F16, NQ>(f, A, stg, M, v); break;                                                      \
    case 9: rotq_wg_issue<9, F16, NQ>(f, A, stg, M, v); break;                                                      \
    case 10: rotq_wg_issue<10, F16, NQ>(f, A, stg, M, v); break;                                                    \
    default: rotq_wg_issue<11, F16, NQ>(f, A, stg, M, v); break;                                                    \
    }
    if (f.f16_mma) {
        ROTQ_WG_ISSUE(true)
    } else {
        ROTQ_WG_ISSUE(false)
    }
#undef ROTQ_WG_ISSUE
}

// Packed row blocks (T of R = 64 / T rows each): the K step as four k tiles of
// the block-diagonal A against the slot's T row blocks, k tile j reading rows
// 16j mod R .. of row block 16j / R (each 16-row piece starts on a 1024-byte
// boundary of the 128-byte swizzle).
template <int R, bool F16, int NQ>
__device__ __forceinline__ void rotq_wg_issue_packed(const uint32_t *A, const char *stg, float (&v)[NQ][32]) {
    constexpr uint32_t TB = (uint32_t)R * NQ * ROTQ_TMA_ROW_BYTES; // bytes of one row block in the slot
    const uint64_t da0 = ptx_wgmma_desc(ptx_opaque_u32(ptx_smem_addr(A)), 128u, 4u * 256u, 0);
    const uint32_t s0 = ptx_smem_addr(stg);
    ptx_wgmma_fence();
#pragma unroll
    for (int q = 0; q < NQ; q++) {
        const uint32_t b0 = s0 + (uint32_t)(q * R) * ROTQ_TMA_ROW_BYTES;
        rotq_wgmma_k_chain<4, F16, R, TB>(v[q], da0, ptx_wgmma_desc(b0, (uint32_t)R * ROTQ_TMA_ROW_BYTES, 1024u, 1));
    }
    ptx_wgmma_commit();
}

// The sign vector as a word a thread and 64-column block, where every row block
// has the same signs (one rotation block a row). A thread signs the same 16-byte
// chunks of every slot: chunk c of 64-column block q is e = e0 + c step (K row
// e / 8, chunk e mod 8), so their sign bits are read once, at the block's start,
// into word q: value 2p of chunk c at bit 4c + p and value 2p + 1 at bit 16 +
// 4c + p, so one shift lines a pair's two signs up with bits 15 and 31
// (rotq_sign_pair_bit's layout, four chunks a word). Four chunks of a column
// block are 8 K rows of 128 G threads: every K where G is the m64 tiles of H_K
// (G = 1 with K > 64 keeps the loads). The words wait in shared memory, not in
// registers: two more registers live through the tile loop made the unsigned
// fused build at 40 * 128 (at its 128-register cap) 6% slower.
#define ROTQ_WG_SIGN_CHUNKS 4

template <int L, int NQ>
__device__ __forceinline__ void rotq_wg_sign_bits(const int8_t *signs, int K, int e0, int step, uint32_t (&w)[NQ]) {
#pragma unroll
    for (int q = 0; q < NQ; q++) {
        w[q] = 0u;
#pragma unroll
        for (int c = 0; c < ROTQ_WG_SIGN_CHUNKS; c++) {
            const int e = e0 + c * step;
            if (e >= 8 * K) break;
            const int8_t *s = signs + ((int64_t)(e >> 3) << L) + 64 * q + 8 * (e & 7);
#pragma unroll
            for (int i = 0; i < 8; i++)
                if (__ldg(s + i) < 0) w[q] |= 1u << (4 * c + rotq_sign_pair_bit(i));
        }
    }
}

// Chunk c's signs (w: its column block's word, sh = 4c) on eight 16-bit values.
__device__ __forceinline__ void rotq_wg_sign_chunk(char *p, uint32_t w, int sh) {
    uint4 v = *(const uint4 *)p;
    v.x ^= rotq_sign_pair_mask(w, sh); // values 0, 1
    v.y ^= rotq_sign_pair_mask(w, sh + 1);
    v.z ^= rotq_sign_pair_mask(w, sh + 2);
    v.w ^= rotq_sign_pair_mask(w, sh + 3); // values 6, 7
    *(uint4 *)p = v;
}

// A packed warp's K step again, on the CUDA cores from x (the sign vector
// applied), for its rows r0w + g (+ 8) of row block g_blk: the values the
// unpacked K step gives, up to the order of the fp32 sums. The slow path of
// non-finite inputs (see the kernel's comment).
template <int L>
__device__ __forceinline__ void rotq_wg_redo_rows(const rotq_had_args &a, const rotq_had_factor &f, int64_t g_blk,
                                                  int r0w, float (&v)[1 << (L - 6)][32]) {
    constexpr int NQ = 1 << (L - 6);
    const unsigned lane = ptx_lane_id(), g = lane >> 2, t = lane & 3u;
    const uint16_t *x = (const uint16_t *)a.x + rotq_group_base(a, g_blk, a.x_stride);
    const int8_t *sg = a.signs ? a.signs + rotq_sign_base(a, g_blk) : NULL;
#pragma unroll
    for (int q = 0; q < NQ; q++)
#pragma unroll
        for (int r = 0; r < 32; r++) v[q][r] = 0.0f;
    for (int k = 0; k < f.k; k++) {
        float e[2];
#pragma unroll
        for (int h = 0; h < 2; h++) { // H_K[row][k]: +-1, 0 past K
            const uint32_t h16 = rotq_factor_entry16(f, r0w + (int)g + 8 * h, k);
            e[h] = h16 == 0u ? 0.0f : (h16 >> 15) ? -1.0f : 1.0f;
        }
#pragma unroll
        for (int q = 0; q < NQ; q++)
#pragma unroll
            for (int nt = 0; nt < 8; nt++) {
                const int64_t i = ((int64_t)k << L) + 64 * q + 8 * nt + 2 * (int)t;
                const uint32_t w = *(const uint32_t *)(x + i);
                float x0 = rotq_from_16_lo(w, a.in_dtype), x1 = rotq_from_16_hi(w, a.in_dtype);
                if (sg) x0 = rotq_apply_sign(sg, i, x0), x1 = rotq_apply_sign(sg, i + 1, x1);
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    v[q][4 * nt + 2 * h] = fmaf(e[h], x0, v[q][4 * nt + 2 * h]);
                    v[q][4 * nt + 2 * h + 1] = fmaf(e[h], x1, v[q][4 * nt + 2 * h + 1]);
                }
            }
    }
}

// The warp's finished rows (v[q][4nt + 2h + c]: row r0 + 8h, column 64q + 8nt +
// 2t + c) to row block g of y; rows past K are the m64 tile's padding.
template <int L, int DT, bool PAIR>
__device__ __forceinline__ void rotq_wg_store_rows(const rotq_had_args &a, int64_t g, int K, int r0,
                                                   const float (&v)[1 << (L - 6)][32]) {
    const int t = (int)(ptx_lane_id() & 3u);
    const int64_t base = rotq_group_base(a, g, a.y_stride) + ((int64_t)r0 << L) + 2 * t;
    const float s = a.scale;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        if (r0 + 8 * h >= K) continue;
#pragma unroll
        for (int q = 0; q < (1 << (L - 6)); q++)
#pragma unroll
            for (int nt = 0; nt < 8; nt++)
                rotq_wg_store2<DT, PAIR>(a.y, base + ((int64_t)(8 * h) << L) + 64 * q + 8 * nt,
                                         v[q][4 * nt + 2 * h] * s, v[q][4 * nt + 2 * h + 1] * s);
    }
}
#endif

// 16-bit outputs whose rows are 16-byte aligned: the warp's 16 rows of each
// 64-column block packed, put in row order into its staging area by stmatrix
// (16-byte chunk c of row r at chunk c ^ (r mod 8): conflict-free both ways),
// read back as 16-byte chunks and stored 512 contiguous bytes a warp
// instruction (the pair stores wrote 16 bytes of 8 rows each: ncu had the
// memory pipes 77% busy at 48% of DRAM bandwidth, and mio stalls on them).
template <int L, int DT>
__device__ __forceinline__ void rotq_wg_store_staged(const rotq_had_args &a, int64_t g, int K, int r0w, char *stage,
                                                     const float (&v)[1 << (L - 6)][32]) {
    const unsigned lane = ptx_lane_id();
    const float s = a.scale;
    const int64_t base = rotq_group_base(a, g, a.y_stride);
    // Lane l addresses row l & 15 (matrix (l >> 3) & 1 is the row half h) of
    // the matrices (h, nt) that stmatrix.x4 number j stores: nt = 2j + (l >> 4).
    const unsigned rr = lane & 15u, ntl = lane >> 4;
#pragma unroll
    for (int q = 0; q < (1 << (L - 6)); q++) { // one 64-column block at a time through 2 KB
        uint32_t w[16];
#pragma unroll
        for (int nt = 0; nt < 8; nt++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                w[2 * nt + h] = rotq_pack_16x2(v[q][4 * nt + 2 * h] * s, v[q][4 * nt + 2 * h + 1] * s, DT);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const unsigned nt = 2u * j + ntl;
            ptx_stmatrix_x4(ptx_smem_addr(stage + rr * 128u + ((nt ^ (rr & 7u)) << 4)), w[4 * j], w[4 * j + 1],
                            w[4 * j + 2], w[4 * j + 3]);
        }
        __syncwarp();
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const unsigned r = 4u * i + (lane >> 3), c = lane & 7u;
            const uint4 x = *(const uint4 *)(stage + r * 128u + ((c ^ (r & 7u)) << 4));
            if (r0w + (int)r < K)
                *(uint4 *)((uint16_t *)a.y + base + ((int64_t)(r0w + (int)r) << L) + 64 * q + 8 * c) = x;
        }
        __syncwarp(); // the reads before the next stmatrix
    }
}

// T: row blocks packed into one m64 tile (1: none; 2, 4: K <= 32 with 16 kt = 64 / T).
// With T > 1 a "tile" below (the slot's unit) is T row blocks, T u .. T u + T - 1.
template <int L, int NWG, int G, bool QUANT = false, int T = 1>
__global__ void __launch_bounds__(128 * NWG, 1)
    rotq_had_wg_kernel(rotq_had_args a, const __grid_constant__ rotq_had_factor f, const rotq_q_args qa,
                       const __grid_constant__ CUtensorMap xmap) {
#if ROTQ_WGMMA
    constexpr int NQ = 1 << (L - 6); // 64-column blocks
    constexpr int R = 64 / T;        // packed: rows of a row block in the m64 tile (16 kt)
    extern __shared__ __align__(1024) char rotq_wg_smem_buf[];
    static_assert(NWG % G == 0, "rotq_had_wg_kernel: groups of G warpgroups");
    static_assert(T == 1 || G == 1, "rotq_had_wg_kernel: packed row blocks with one warpgroup a group");
    constexpr int NG = NWG / G; // groups
    const int S = f.stages;
    const unsigned slot_bytes = T * rotq_wg_slot_bytes(f.kt, L);
    char *slots = rotq_wg_smem_buf;
    uint32_t *A = (uint32_t *)(slots + (size_t)NG * S * slot_bytes);
    char *staging = (char *)A + rotq_factor_frag_bytes(T > 1 ? 4 : f.kt, 1);
    rotq_wg_ctl *ctl = (rotq_wg_ctl *)(staging + (size_t)NWG * 4 * 2048);
    const int wg = (int)(threadIdx.x >> 7), warp = (int)((threadIdx.x >> 5) & 3u);
    const int grp = wg / G, rank = wg - grp * G; // the warpgroup's group and its m64 tiles rank, rank + G, ..
    const bool leader = (threadIdx.x & 127u) == 0u;
    const int64_t ntiles = (a.groups + T - 1) / T; // slot units
    // The group's k-th tile: the block's tile grp + k NG.
    auto tile_of = [&](unsigned k) -> int64_t {
        return (int64_t)blockIdx.x + (int64_t)(grp + (int64_t)k * NG) * gridDim.x;
    };
    char *ring = slots + (size_t)grp * S * slot_bytes;
    auto fill = [&](unsigned k) { // one thread: tile k of the group into slot k mod S
        const int64_t tile = tile_of(k);
        if (tile >= ntiles) return;
        const unsigned s = k % (unsigned)S;
        const uint32_t mbar = ptx_smem_addr(&ctl->full[grp][s]);
        ptx_fence_proxy_async_smem();
        ptx_mbarrier_arrive_expect_tx(mbar, slot_bytes);
        // T row blocks: those past the last come as TMA's zero fill (and count).
        ptx_tma_load_4d(ptx_smem_addr(ring + s * slot_bytes), &xmap, 0, 0, 0, (int32_t)(tile * T), mbar);
    };
    // Each group's first thread sets up the group's control words and sends
    // its first S tiles on their way, all before the block builds H_K, so the
    // build overlaps the first loads instead of preceding them (the barrier
    // after the build makes the control words visible to every thread).
    if (leader && rank == 0) {
        for (int s = 0; s < S; s++) {
            ptx_mbarrier_init(ptx_smem_addr(&ctl->full[grp][s]), 1);
            ctl->reads[grp][s] = 0u;
        }
        for (int i = 0; i < 3 * ROTQ_WG_MAX_PACK; i++) ctl->am[grp][i] = ctl->rs[grp][i] = 0u;
        ptx_fence_mbarrier_init();
        for (int k = 0; k < S; k++) fill((unsigned)k);
    }
    if (T > 1)
        rotq_build_wg_packed_a(f, A, R);
    else
        rotq_build_factor_wgmma_a<0>(f, A); // rows in order (L = 0: no W bank permutation)
    ptx_fence_proxy_async_smem();       // H_K (generic writes) before the wgmmas read it
    __syncthreads();

    const int K = f.k, mtiles = (K + 63) >> 6;
    const int group_bar = 1 + ROTQ_WG_MAX_WARPGROUPS + grp; // named barrier of the group's 128 G threads
    // Signs: the thread's chunks of a slot start at sign_e0, 128 G apart; their
    // bits in a table of words (after the control block; the launcher's
    // sign_words) where every row block has the same signs and four chunks a
    // column block cover a slot. Each thread reads back only its own words.
    const int sign_e0 = rank * 128 + (int)(threadIdx.x & 127u);
    const bool sign_table = a.signs && a.blocks_per_row == 1 && 8 * K <= ROTQ_WG_SIGN_CHUNKS * 128 * G;
    uint32_t *sign_words = (uint32_t *)(ctl + 1) + threadIdx.x; // word q at [128 NWG q]
    if (sign_table) {
        uint32_t w[NQ];
        rotq_wg_sign_bits<L, NQ>(a.signs, K, sign_e0, 128 * G, w);
#pragma unroll
        for (int q = 0; q < NQ; q++) sign_words[128 * NWG * q] = w[q];
    }
    unsigned k = 0;
    for (;; k++) {
        const int64_t tile = tile_of(k);
        if (tile >= ntiles) break;
        const unsigned s = k % (unsigned)S, use = k / (unsigned)S;
        const char *slot = ring + s * slot_bytes;
        rotq_frag_wait(&ctl->full[grp][s], use & 1u);
        if (a.signs) {
            // The sign vector on the arrived slot (rows past K stay zero), by the
            // group's threads, before its wgmmas read it (async proxy).
            for (int i = 0; i < T && tile * T + i < a.groups; i++) { // each row block of the slot
                char *blk = (char *)slot + i * rotq_wg_slot_bytes(f.kt, L);
                if (sign_table) {
#pragma unroll
                    for (int q = 0; q < NQ; q++) {
                        const uint32_t w = sign_words[128 * NWG * q];
#pragma unroll
                        for (int c = 0; c < ROTQ_WG_SIGN_CHUNKS; c++) {
                            const int e = sign_e0 + c * 128 * G;
                            if (e >= 8 * K) break;
                            rotq_wg_sign_chunk(blk + rotq_tma_stage_chunk((unsigned)(q * f.krows + (e >> 3)),
                                                                          (unsigned)(e & 7)),
                                               w, 4 * c);
                        }
                    }
                    continue;
                }
                const int8_t *sg = a.signs + rotq_sign_base(a, tile * T + i);
#pragma unroll
                for (int q = 0; q < NQ; q++) // 16-byte chunks: 8 a row of each 64-column block
                    for (int e = sign_e0; e < 8 * K; e += 128 * G) {
                        const int kr = e >> 3, j = e & 7;
                        rotq_sign_chunk16(blk + rotq_tma_stage_chunk((unsigned)(q * f.krows + kr), (unsigned)j),
                                          sg + ((int64_t)kr << L) + 64 * q + 8 * j);
                    }
            }
            ptx_fence_proxy_async_smem();
            ptx_bar_sync(group_bar, 128 * G);
        }
        // One m64 tile M of the slot; last: the warpgroup's last K step on it.
        auto mtile = [&](int M, bool last) {
            float v[NQ][32];
#pragma unroll
            for (int q = 0; q < NQ; q++)
#pragma unroll
                for (int r = 0; r < 32; r++) v[q][r] = 0.0f;
            if constexpr (T > 1) {
                if (f.f16_mma)
                    rotq_wg_issue_packed<R, true, NQ>(A, slot, v);
                else
                    rotq_wg_issue_packed<R, false, NQ>(A, slot, v);
            } else {
                rotq_wg_issue_any<NQ>(f, A, slot, M, v);
            }
            ptx_wgmma_wait<0>();
            if (last) {
                // Every warp of the warpgroup has its results: the slot is read
                // by this warpgroup; the group's last reader refills it.
                ptx_bar_sync(1 + wg, 128);
                if (leader && (G == 1 || atomicAdd(&ctl->reads[grp][s], 1u) == (unsigned)G - 1u)) {
                    if (G > 1) ctl->reads[grp][s] = 0u;
                    fill(k + (unsigned)S);
                }
            }
            // The warp's row block and its first row there (packed: 16w / R, 16w mod R).
            const int64_t wtile = T > 1 ? tile * T + 16 * warp / R : tile;
            const int r0w = T > 1 ? 16 * warp % R : 64 * M + 16 * warp;
            const bool live = r0w < K && wtile < a.groups; // else the warp's 16 rows are all padding
            auto finish = [&]() { // the 2^L levels of the warp's rows
                if (NQ == 2) {    // column bit 6: the two blocks
#pragma unroll
                    for (int r = 0; r < 32; r++) {
                        const float x = v[0][r], y = v[NQ - 1][r];
                        v[0][r] = x + y;
                        v[NQ - 1][r] = x - y;
                    }
                }
#pragma unroll
                for (int q = 0; q < NQ; q++) {
                    rotq_frag_butterflies_a<false>(v[q]); // column bits 0, 3, 4, 5
                    rotq_frag_lane_butterfly(v[q], 1u);   // bit 1
                    rotq_frag_lane_butterfly(v[q], 2u);   // bit 2
                }
            };
            if constexpr (T > 1) {
                // Every output of the packed tile is finite unless some input is not
                // (or a row overflows): then this warp's rows again, unpacked.
                finish();
                bool bad = !(fabsf(v[0][0]) < INFINITY) || !(fabsf(v[0][2]) < INFINITY);
                if (a.x == a.y) // in place: the redo's reads before any warp's stores
                    bad = ptx_bar_red_or(1 + wg, 128, bad);
                else
                    bad = __any_sync(0xffffffffu, bad);
                if (bad) {
                    if (live) rotq_wg_redo_rows<L>(a, f, wtile, r0w, v);
                    if (a.x == a.y) ptx_bar_sync(1 + wg, 128);
                    if (live) finish();
                }
                if (!QUANT && !live) return;
            } else {
                if (!QUANT && !live) return;
                if (live) finish();
            }
            const int r0 = r0w + (int)(ptx_lane_id() >> 2);
            char *stage = staging + (threadIdx.x >> 5) * 2048u;
            if constexpr (QUANT) {
                // Every warp of the group, padding ones too (the group barrier).
                rotq_wg_quant<L, T>(qa, ctl->am[grp], ctl->rs[grp], group_bar, 128 * G, leader && rank == 0, k,
                                    tile * T, k > 0 ? tile_of(k - 1) * T : 0, (int)(wtile - tile * T), K,
                                    live ? r0w : K, v, stage, a.scale);
                return;
            }
            if (a.out_dtype != ROTQ_DTYPE_F32 && a.vec_out == 2) {
                if (a.out_dtype == ROTQ_DTYPE_F16)
                    rotq_wg_store_staged<L, ROTQ_DTYPE_F16>(a, wtile, K, r0w, stage, v);
                else
                    rotq_wg_store_staged<L, ROTQ_DTYPE_BF16>(a, wtile, K, r0w, stage, v);
            } else if (a.out_dtype == ROTQ_DTYPE_F32) {
                if (a.vec_out)
                    rotq_wg_store_rows<L, ROTQ_DTYPE_F32, true>(a, wtile, K, r0, v);
                else
                    rotq_wg_store_rows<L, ROTQ_DTYPE_F32, false>(a, wtile, K, r0, v);
            } else if (a.out_dtype == ROTQ_DTYPE_F16) {
                if (a.vec_out)
                    rotq_wg_store_rows<L, ROTQ_DTYPE_F16, true>(a, wtile, K, r0, v);
                else
                    rotq_wg_store_rows<L, ROTQ_DTYPE_F16, false>(a, wtile, K, r0, v);
            } else {
                if (a.vec_out)
                    rotq_wg_store_rows<L, ROTQ_DTYPE_BF16, true>(a, wtile, K, r0, v);
                else
                    rotq_wg_store_rows<L, ROTQ_DTYPE_BF16, false>(a, wtile, K, r0, v);
            }
        };
        // The warpgroup's m64 tiles: all (G = 1), or its rank's (G = mtiles).
        if constexpr (G == 1) {
            for (int M = 0; M < mtiles; M++) mtile(M, M == mtiles - 1);
        } else {
            mtile(rank, true);
        }
    }
    if constexpr (QUANT) {
        // The last slot's int8 row sums, once every warp of the group has added to them.
        if (T != ROTQ_WG_MAX_PACK && qa.kind == ROTQ_QUANT_INT8_ROW && qa.row_sums && k > 0) {
            ptx_bar_sync(group_bar, 128 * G);
            const int64_t t0 = tile_of(k - 1) * T;
            if (leader && rank == 0)
                for (int i = 0; i < T && t0 + i < a.groups; i++)
                    qa.row_sums[t0 + i] = (int32_t)ctl->rs[grp][(k - 1) % 3u * ROTQ_WG_MAX_PACK + i];
        }
    }
#endif
}

// Host: one build's launch (G warpgroups a group, S slots a group, T row blocks
// packed a slot; QUANT: qa the quantize arguments).
template <int L, int NWG, int G, bool QUANT, int T = 1>
static rotq_status rotq_launch_wg_build(const rotq_had_args &a, const rotq_had_factor &f, const rotq_q_args *qa,
                                        size_t smem, int64_t gstride, cudaStream_t stream,
                                        const rotq_cuda_device_info *dev, bool dry) {
    static int usable[64]; // per device (rotq_kernel_has_sm90; code for 9.x is sm_90a's,
    static int regs[64];   // as the general kernel's wgmma path assumes)
    const void *kernel = (const void *)rotq_had_wg_kernel<L, NWG, G, QUANT, T>;
    if (!rotq_kernel_has_sm90(kernel, usable, dev)) return ROTQ_ERR_NOT_SUPPORTED;
    int64_t grid = 0;
    constexpr int NG = NWG / G;
    const int64_t units = (a.groups + T - 1) / T;
    const rotq_status st = rotq_persistent_grid(kernel, 128 * NWG, smem, regs, dev, (units + NG - 1) / NG, &grid);
    if (st != ROTQ_OK) return st;
    CUtensorMap xmap;
    rotq_had_args t;
    if (!rotq_factor_tma_only_args(a, f, L, gstride, &xmap, &t, T)) return ROTQ_ERR_NOT_SUPPORTED;
    if (dry) return ROTQ_OK;
    const int os = a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    // 2: 16-bit rows of y 16-byte aligned (the staged 16-byte stores); 1: pairs
    // of adjacent outputs as one store (y and its row stride 2-element aligned).
    t.vec_out = ((uintptr_t)a.y % (uintptr_t)(2 * os)) == 0 && a.y_stride % 2 == 0;
#ifndef ROTQ_WG_NO_STAGE
    if (os == 2 && ((uintptr_t)a.y & 15u) == 0 && a.y_stride % 8 == 0) t.vec_out = 2;
#endif
    rotq_q_args q;
    if (QUANT)
        q = *qa;
    else
        memset(&q, 0, sizeof q);
    rotq_had_wg_kernel<L, NWG, G, QUANT, T><<<(unsigned)grid, 128 * NWG, smem, stream>>>(t, f, q, xmap);
    return rotq_cuda_check_launch();
}

// Host: whether this kernel takes the call, and its launch: compute capability
// 9.x with code for sm_90a loaded, 16-bit inputs whose row blocks TMA can read
// (rotq_factor_tma_input), K >= 12 (K <= 32 packed). ROTQ_ERR_NOT_SUPPORTED otherwise (the
// general factor kernel runs). QUANT: the fused rotate + quantize build (qa),
// only where the groups hold one m64 tile a warpgroup (a quantize row's
// absmax spans its m64 tiles). dry: decide, launch nothing.
template <int L, int NWG, bool QUANT = false>
static rotq_status rotq_launch_wg(const rotq_had_args &a, const rotq_had_factor &f0, const rotq_q_args *qa,
                                  cudaStream_t stream, const rotq_cuda_device_info *dev, bool dry) {
    if (dev->cc_major != 9 || f0.kt > ROTQ_FACTOR_MAX_KT) return ROTQ_ERR_NOT_SUPPORTED;
    const int64_t gstride = rotq_factor_tma_input(a);
    if (gstride <= 0) return ROTQ_ERR_NOT_SUPPORTED;
    // K <= 32: T row blocks an m64 tile, one group a warpgroup (else T = 1).
    int T = 1;
#ifndef ROTQ_WG_NO_PACK
    T = rotq_wg_pack(f0.kt);
#endif
    if (T == 1 && f0.kt < ROTQ_WG_MIN_KT) return ROTQ_ERR_NOT_SUPPORTED;
    // Unpacked, groups of G warpgroups, one m64 tile each, where the warpgroups
    // divide into such groups with two slots a group or more; else G = 1. Then
    // the most slots a group (up to ROTQ_WG_MAX_SLOTS) that fit one block an SM.
    const int mtiles = (f0.k + 63) >> 6;
    int G = 1;
    const bool sign_words = a.signs && a.blocks_per_row == 1; // the kernel's sign table (its rule)
#ifndef ROTQ_WG_NO_GROUPS
    if (T == 1 && NWG % mtiles == 0 &&
        rotq_wg_smem(f0.kt, L, NWG, NWG / mtiles, 2, 1, sign_words) <= (size_t)dev->max_smem_optin)
        G = mtiles;
#endif
    int S = ROTQ_WG_MAX_SLOTS;
    while (S >= 1 && rotq_wg_smem(f0.kt, L, NWG, NWG / G, S, T, sign_words) > (size_t)dev->max_smem_optin) S--;
    if (S < 1 || (QUANT && G != mtiles)) return ROTQ_ERR_NOT_SUPPORTED;
    const size_t smem = rotq_wg_smem(f0.kt, L, NWG, NWG / G, S, T, sign_words);
    rotq_had_factor f = f0;
    f.groups_per_block = G; // warpgroups sharing a tile
    f.krows = 16 * f.kt;
    f.slice_log = L;
    f.wgmma = 1;
    f.half_rows = 0;
    f.stages = S;
    if (T == 2) return rotq_launch_wg_build<L, NWG, 1, QUANT, 2>(a, f, qa, smem, gstride, stream, dev, dry);
    if (T == 4) return rotq_launch_wg_build<L, NWG, 1, QUANT, 4>(a, f, qa, smem, gstride, stream, dev, dry);
    if (G == 2) {
        if constexpr (NWG % 2 == 0)
            return rotq_launch_wg_build<L, NWG, 2, QUANT>(a, f, qa, smem, gstride, stream, dev, dry);
    } else if (G == 3) {
        if constexpr (NWG % 3 == 0)
            return rotq_launch_wg_build<L, NWG, 3, QUANT>(a, f, qa, smem, gstride, stream, dev, dry);
    } else if constexpr (!QUANT || ROTQ_WG_MIN_KT < 5) { // QUANT with G = 1: K <= 64 only
        return rotq_launch_wg_build<L, NWG, 1, QUANT>(a, f, qa, smem, gstride, stream, dev, dry);
    }
    return ROTQ_ERR_NOT_SUPPORTED;
}
