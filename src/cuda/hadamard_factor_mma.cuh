// The K step on mma.sync m16n8k16: H_K as A fragments, the staged input as B
// (16-bit values as they are; fp32 as three bf16 terms), fp32 results to W.
#pragma once
#include "hadamard_factor_stage.cuh"

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
