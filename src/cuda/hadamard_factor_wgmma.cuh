// The K step on wgmma m64n64k16 for K > 64 (sm_90a, TMA stages): H_K in shared
// memory as A, the stage as B, results to W.
#pragma once
#include "hadamard_factor_mma.cuh"

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

// The packed A operand of the warpgroup kernel (hadamard_factor_wg.cuh, T row
// blocks an m64 tile, K <= 32): one m64 tile by 64 columns (kt 4), H_K on the
// diagonal blocks of R = 64 / T rows and columns (row and column R i + r hold
// H_K's r, r < K), zero elsewhere; the layout of rotq_build_factor_wgmma_a.
__device__ __forceinline__ void rotq_build_wg_packed_a(const rotq_had_factor &f, uint32_t *A, int R) {
    for (int p = threadIdx.x; p < 64 * 8; p += blockDim.x) {
        const int pr = p >> 3, cg = p & 7, c0 = 8 * cg;
        const int r = pr % R, cl = c0 % R;
        uint32_t w[4] = {0u, 0u, 0u, 0u};
        if (pr / R == c0 / R) {
#pragma unroll
            for (int i = 0; i < 8; i++) w[i >> 1] |= rotq_factor_entry16(f, r, cl + i) << (16 * (i & 1));
        }
        ((uint4 *)A)[((pr >> 3) * 8 + cg) * 8 + (pr & 7)] = make_uint4(w[0], w[1], w[2], w[3]);
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
// descriptors of k tile 0: k tile kt is 256 bytes on in A; in B it is rows
// 16 kt .. 16 kt + 15 of the stage, whose rows come in blocks of R (every 128
// bytes, blocks TB bytes apart: the warpgroup kernel's packed slots,
// rotq_wg_issue_packed; by default one block, so 2048 bytes a k tile). The
// descriptors' address field is the address >> 4 in bits 0..13, and shared
// addresses stay below 2^18, so adding the offset >> 4 advances it without a
// carry out of the field. Straight-line: a branch between them serializes the
// wgmmas. The caller fences and commits.
template <int KT, bool F16, int R = 16 * KT, uint32_t TB = 0>
__device__ __forceinline__ void rotq_wgmma_k_chain(float (&d)[32], uint64_t da0, uint64_t db0) {
    static_assert(R % 16 == 0 && (R >= 16 * KT || TB >= (uint32_t)R * ROTQ_TMA_ROW_BYTES),
                  "a k tile's 16 rows lie in one block; blocks do not overlap");
#pragma unroll
    for (int kt = 0; kt < KT; kt++) {
        const uint32_t b_off = (uint32_t)(16 * kt / R) * TB + (uint32_t)(16 * kt % R) * ROTQ_TMA_ROW_BYTES;
        const uint64_t da = da0 + (uint64_t)((256u >> 4) * kt);
        const uint64_t db = db0 + (uint64_t)(b_off >> 4);
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
