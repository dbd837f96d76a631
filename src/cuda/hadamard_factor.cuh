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
//
// Its pieces: hadamard_factor_args.cuh (H_K's description, the build bounds),
// hadamard_factor_stage.cuh (the input stages and their fills),
// hadamard_factor_mma.cuh and hadamard_factor_wgmma.cuh (the K step); this file
// has the shared-memory layout, the block shapes, the sign and phase steps, the
// pipelined loop of the large-K build and the kernel.
#pragma once
#include "hadamard_factor_args.cuh"
#include "hadamard_factor_stage.cuh"
#include "hadamard_factor_mma.cuh"
#include "hadamard_factor_wgmma.cuh"

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
