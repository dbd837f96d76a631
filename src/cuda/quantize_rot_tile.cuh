// Fused power-of-two rotation + quantize on the Hadamard kernel's pipeline
// (hadamard_pow2.cuh): a persistent block walks over tiles of TILE_CTA
// elements, staged global -> shared (by TMA on sm_90 for dense inputs, else
// 16-byte cp.async) and double-buffered (rotq_stage_tile); phase 0 from the
// stage, later phases through the padded fp32 buffer W, in the same stage order
// as the Hadamard kernel and the CPU backend (ascending bits, then * scale).
// Instead of storing the rotated values, the last phase writes them (scaled)
// back to W and the block quantizes the tile's rows from W (quantize_tile.cuh),
// except for int8 / fp8 rows of exactly 2^L elements (L >= 6), int4 rows of
// one group (2^6, 2^7), and int4 groups of 32..128 in rows of 2^11 or 2^12 (after
// the Hadamard kernel's pair exchanges), which are quantized straight from the
// last phase's registers (quantize_reg_epilogue.cuh: no W round trip, barriers
// only where a row spans warps, coalesced code stores, and a short path for
// warps without NaN / Inf).
//
// Used when a row (cols = blocks_per_row * 2^L) is a power of two of at most
// TILE_CTA elements and at least 8, so a tile holds TILE_CTA / cols whole rows;
// other shapes take quantize_rot.cu's kernel.
#pragma once
#include "hadamard_pow2.cuh" // rotq_stage_tile, rotq_read_stage32, rotq_phase, plan, smem layout

// The input tiles' TMA loads marked evict-first in L2 (the input is read once).
// Same-run A/B on the H100, f16, 2^25 elements: int4 g128 at n = 128 40.1 -> 38.1
// us (-5%), int8 at 128 -1%, int4 at 4096 -1%, the rest within 0.5%. (For the
// Hadamard kernel at 2^27 it measured 1-4% slower: power-of-two v24.) 0: A/B switch.
#ifndef ROTQ_QT_EVICT_FIRST
#define ROTQ_QT_EVICT_FIRST 1
#endif
#include "quantize_launch.cuh"
#include "quantize_tile.cuh"
#include "quantize_reg_epilogue.cuh"

// Rows of the tile starting at matrix row row0 that exist (R or fewer).
__device__ __forceinline__ unsigned rotq_qt_tile_rows(const rotq_q_args &qa, int64_t row0, unsigned R) {
    const int64_t left = qa.rows - row0;
    return left < (int64_t)R ? (unsigned)left : R;
}

// Register cap: 768 threads per SM for L = 6..13 (three 256-thread blocks or
// six of 128; 80 registers: no spills, and faster on the H100 than 64 with
// spills or 128 with two blocks); single-phase sizes (L <= 5) keep four
// blocks; L = 14, 15 have 64 by block size. The int4 build (SPEC, below: 128
// threads) runs seven blocks an SM (68 registers, no spills): same-run A/B
// on the H100, f16, int4 g128 n = 4096 42.2 -> 41.2 us at 2^25, 147.7 -> 145.3
// at 2^27. Seven blocks of the run-time build (68 / 72 registers) made int8 /
// fp8 at 4096 and int4 at 128 2-2.5% slower; eight blocks (64) spill.
template <int L, int BT, int SPEC>
struct rotq_qt_min_blocks {
    // SPEC != 0: a build of its own (ROTQ_QT_SPEC_INT4, declared below)
    static constexpr int value = L >= 6 && L <= 13 ? (SPEC != 0 && BT == 128 ? 7 : 768 / rotq_pow2_plan<L, BT>::THREADS)
                                                   : rotq_pow2_min_blocks<L>::value;
};

// Block threads of the fused kernel where a row fits a 128-thread block's tile:
// 2^7 and 2^12 (the rows of the bench, measured). Half the tile a block, twice
// the blocks an SM, the same threads: a persistent grid's last, partial round
// of tiles is half as long. Same-run A/B on the H100, f16 at 2^25: int4 g128
// n = 4096 45.5 -> 42.8 us, int8 / fp8 n = 128 -2 / -2.3%, int8 / fp8 n = 4096
// -0.8%; at 2^27 int4 n = 4096 -6%, the rest within +-0.7%. (The Hadamard
// kernel with 128-thread blocks: 2^27 +0.5 to +0.8% at n <= 1024, 2^23 +5% at
// 256..1024; it keeps 256.)
template <int L>
__host__ __device__ constexpr int rotq_qt_small_bt(void) {
    return L == 7 || L == 12 ? 128 : 256;
}

// A build of the kernel for int4 groups on the pair epilogue at 2^12 alone
// (SPEC == ROTQ_QT_SPEC_INT4): its tile loop holds only that path, where the
// run-time choice spreads a tile's 860 warp instructions over six regions of a
// 9000-instruction kernel (ncu at n = 4096: 15% of the stall samples waiting
// for instructions). Same-run A/B on the H100, f16: int4 g128 n = 4096 43.0 ->
// 42.3 us at 2^25, 150.5 -> 147.2 at 2^27; the same builds for int8 / fp8 at
// 2^12 and for every kind at 2^7 measured within the noise (int4 at 2^7 +0.6%),
// so only this one is built. 0: A/B switch.
#ifndef ROTQ_QT_SPEC
#define ROTQ_QT_SPEC 1
#endif
enum { ROTQ_QT_SPEC_ANY = 0, ROTQ_QT_SPEC_INT4 = 1 };

template <int L, int ES, int BT>
__host__ __device__ constexpr bool rotq_qt_spec_built(void) {
    return ROTQ_QT_SPEC != 0 && ES == 2 && BT == 128 && L == 12;
}

// Whether the kernel quantizes a tile from the last phase's registers: rows of
// exactly 2^L int8 / fp8 codes, or int4 rows of one group (2^6, 2^7: n = group);
// at 2^11 and 2^12 the Hadamard kernel's pair exchanges (rotq_pow2_pair_plan)
// bring a lane 8 or 4 consecutive columns: no quad transpose for the codes, and
// int4 groups of 32..128 from registers too.
template <int L>
__host__ __device__ __forceinline__ bool rotq_qt_reg_path(const rotq_q_args &qa) {
    constexpr bool PAIRS = rotq_pow2_pair_plan<L>::ON && rotq_pow2_pair_plan<L>::P >= 2;
    return qa.cols_log == L &&
           (qa.kind != ROTQ_QUANT_INT4_GROUP || (L <= 7 && qa.group == (1 << L)) ||
            (PAIRS && qa.group_shift >= 5 && qa.group_shift <= 7));
}

template <int L, int ES, int BT, int SPEC = ROTQ_QT_SPEC_ANY>
__global__ void __launch_bounds__(rotq_pow2_plan<L, BT>::THREADS, rotq_qt_min_blocks<L, BT, SPEC>::value)
    rotq_qt_rot_kernel(rotq_q_args qa, rotq_had_args a, const __grid_constant__ CUtensorMap tmap) {
    typedef rotq_pow2_plan<L, BT> plan;
    typedef rotq_pow2_smem<L, ES, BT> sm;
    extern __shared__ __align__(1024) char rotq_smem[];
    __shared__ uint32_t red[32], red2[32];
    const unsigned sub = threadIdx.x / plan::SUB_THREADS;
    const unsigned tid = threadIdx.x % plan::SUB_THREADS;
    const unsigned sub_base = sub * plan::TILE;
    const unsigned local0 = sub_base + tid * 32; // phase 0: 32 consecutive elements
    const int64_t total = a.groups << L;
    const int64_t ntiles = (total + sm::TILE_CTA - 1) / sm::TILE_CTA;
    const unsigned R = (unsigned)qa.tile_rows; // TILE_CTA / cols
    const unsigned cmask = (1u << qa.cols_log) - 1u;

    // Tiles start at a row and hold whole rows (cols divides TILE_CTA), so the
    // columns of a thread's 32 phase-0 elements, and their signs, are the same in
    // every tile: read once, column (local0 + r) & cmask's at bit rotq_sign_pair_bit(r).
    // Per tile, 32 byte loads had been the signed rows' extra cost.
    uint32_t sign_bits = 0;
    if (a.signs) {
        const unsigned col0 = local0 & cmask;
#pragma unroll
        for (int r = 0; r < 32; r++)
            sign_bits |= (uint32_t)(__ldg(a.signs + ((col0 + (unsigned)r) & cmask)) < 0) << rotq_sign_pair_bit(r);
    }
    unsigned it = 0;
    uint32_t pending = 0; // thread 0: the dynamic order's fetch (rotq_pow2_tile_stage)
    ROTQ_TL(__shared__ rotq_timeline tl; rotq_tl_start(&tl);)
    rotq_pow2_init_tma<L, ES, BT>(a, rotq_smem);
    rotq_pow2_first_tile<L, ES, (ROTQ_QT_EVICT_FIRST != 0), BT>(a, ntiles, total, rotq_smem, &tmap);
    for (int64_t tile = blockIdx.x; tile < ntiles;
         tile = rotq_pow2_following_tile<L, ES, BT>(a, rotq_smem, tile, it), it++) {
        ROTQ_TL(rotq_tl_top(&tl);)
        char *cur = rotq_pow2_tile_stage<L, ES, (ROTQ_QT_EVICT_FIRST != 0), BT>(a, tile, ntiles, total, rotq_smem,
                                                                                 &tmap, it, pending);
        ROTQ_TL(rotq_tl_mark(&tl, 2);)
        float v[32];
        // opaque: else the 16 shifted masks are hoisted out of the tile loop into
        // registers (72-200 bytes of spills in every build)
        if (a.signs)
            rotq_read_stage32<ES>(cur, local0, a.in_dtype, v, ptx_opaque_u32(sign_bits));
        else
            rotq_read_stage32<ES>(cur, local0, a.in_dtype, v);
        rotq_phase<L>(0, v);
        __syncthreads(); // every thread has read the stage that W overwrites
        ROTQ_TL(rotq_tl_mark(&tl, 3);)
        float *W = rotq_pow2_tile_w<L, ES, BT>(rotq_smem, it, cur);
        if (plan::PHASES == 1) {
            const unsigned b = rotq_w_index(local0); // local0: a multiple of 32
#pragma unroll
            for (int r = 0; r < 32; r++) W[b + (unsigned)r] = v[r] * a.scale;
        } else {
            constexpr bool PAIRS = rotq_pow2_pair_plan<L>::ON && rotq_pow2_pair_plan<L>::P >= 2;
            // quantized from the last phase's registers where rotq_qt_reg_path holds
            const bool reg = SPEC != ROTQ_QT_SPEC_ANY || rotq_qt_reg_path<L>(qa);
            const int kind = SPEC == ROTQ_QT_SPEC_INT4 ? ROTQ_QUANT_INT4_GROUP : qa.kind;
            const bool sums = SPEC == ROTQ_QT_SPEC_ANY && qa.row_sums;
            if (L == 7 && reg) {
                // rows of 128: the quad layout (rotq_qt_quad_plan)
                rotq_qt_quad_exchange(W, sub_base, tid, v);
                const int64_t row0 = tile * R;
                const unsigned rv = rotq_qt_tile_rows(qa, row0, R);
                switch (kind) {
                case ROTQ_QUANT_INT8_ROW:
                    if (sums)
                        rotq_qt_quad_epilogue<ROTQ_QUANT_INT8_ROW, true>(qa, v, a.scale, sub, tid, row0, rv);
                    else
                        rotq_qt_quad_epilogue<ROTQ_QUANT_INT8_ROW, false>(qa, v, a.scale, sub, tid, row0, rv);
                    break;
                case ROTQ_QUANT_FP8_ROW:
                    rotq_qt_quad_epilogue<ROTQ_QUANT_FP8_ROW, false>(qa, v, a.scale, sub, tid, row0, rv);
                    break;
                case ROTQ_QUANT_INT4_GROUP:
                    rotq_qt_quad_epilogue<ROTQ_QUANT_INT4_GROUP, false>(qa, v, a.scale, sub, tid, row0, rv);
                    break;
                default: rotq_qt_quad_epilogue<ROTQ_QUANT_FP8_TENSOR, false>(qa, v, a.scale, sub, tid, row0, rv); break;
                }
                continue;
            }
            if (PAIRS && reg)
                rotq_pow2_pair_phases<L, false>(W, sub_base, tid, v);
            else
                rotq_pow2_exchanges<L>(W, sub_base, tid, v);
            if (plan::PHASES > 1 && L != 7 && reg) { // (rows of 128 took the quad epilogue above)
                const int64_t row0 = tile * R;
                const unsigned rv = rotq_qt_tile_rows(qa, row0, R);
                switch (kind) {
                case ROTQ_QUANT_INT8_ROW:
                    if (sums)
                        rotq_qt_reg_epilogue<ROTQ_QUANT_INT8_ROW, L, true, PAIRS>(qa, v, a.scale, sub, tid, row0, rv, red, red2);
                    else
                        rotq_qt_reg_epilogue<ROTQ_QUANT_INT8_ROW, L, false, PAIRS>(qa, v, a.scale, sub, tid, row0, rv, red, red2);
                    break;
                case ROTQ_QUANT_FP8_ROW:
                    rotq_qt_reg_epilogue<ROTQ_QUANT_FP8_ROW, L, false, PAIRS>(qa, v, a.scale, sub, tid, row0, rv, red, red2);
                    break;
                case ROTQ_QUANT_INT4_GROUP:
                    if (PAIRS) { // groups of 32..128 (rotq_qt_i4_pair_epilogue)
                        rotq_qt_i4_pair_any<PAIRS ? L : 12>(qa, v, a.scale, sub, tid, row0, rv);
                        break;
                    }
                    // built for L <= 7 only (another kind's build stands in, never run)
                    rotq_qt_reg_epilogue<(L <= 7 ? ROTQ_QUANT_INT4_GROUP : ROTQ_QUANT_FP8_TENSOR), L, false, PAIRS>(
                        qa, v, a.scale, sub, tid, row0, rv, red, red2);
                    break;
                default: rotq_qt_reg_epilogue<ROTQ_QUANT_FP8_TENSOR, L, false, PAIRS>(qa, v, a.scale, sub, tid, row0, rv, red, red2); break;
                }
                continue;
            }
            rotq_pow2_store_w<L>(W, sub_base, tid, v, a.scale);
        }
        __syncthreads();
        const int64_t row0 = tile * R;
        const unsigned rv = rotq_qt_tile_rows(qa, row0, R);
        rotq_qt_w_src src;
        src.W = W;
        src.cols = 1u << qa.cols_log;
        rotq_qt_tile_any(qa, src, row0, rv, red);
    }
    ROTQ_TL(rotq_tl_end(&tl, "fused", L);)
    rotq_tile_counter_exit(a);
    ptx_cp_async_wait<0>();
}

// qa: as for quantize_rot.cu plus kind and cols_log; a: the rotation's
// Hadamard arguments (x, stride, groups, blocks_per_row, n, in_dtype, scale,
// signs, vec_in).
template <int L, int ES, int BT>
static rotq_status rotq_qt_rot_launch_bt(rotq_q_args qa, const rotq_had_args &a, cudaStream_t stream,
                                         const rotq_cuda_device_info *dev) {
    typedef rotq_pow2_plan<L, BT> plan;
    typedef rotq_pow2_smem<L, ES, BT> sm;
    static unsigned long long occupancy[2][64];
    static int optin[2][64];
    if (qa.cols > sm::TILE_CTA) return ROTQ_ERR_NOT_SUPPORTED; // the caller falls back
    int spec = ROTQ_QT_SPEC_ANY;
    const void *kernel = (const void *)rotq_qt_rot_kernel<L, ES, BT>;
    if constexpr (rotq_qt_spec_built<L, ES, BT>()) {
        if (qa.kind == ROTQ_QUANT_INT4_GROUP && rotq_qt_reg_path<L>(qa)) {
            spec = ROTQ_QT_SPEC_INT4;
            kernel = (const void *)rotq_qt_rot_kernel<L, ES, BT, ROTQ_QT_SPEC_INT4>;
        }
    }
    const int device = dev->device; // resolved once per call by the entry point
    rotq_status st = rotq_cuda_smem_optin(kernel, sm::BYTES, 1024, &optin[spec][device & 63], dev); // 1 KB: static red
    if (st != ROTQ_OK) return st;
    const int lpg = qa.kind == ROTQ_QUANT_INT4_GROUP ? qa.group / (8 * ROTQ_QT_I4_CPL_W) : 1;
    qa.nch = (int32_t)(qa.cols / 8);
    qa.ts_log = rotq_qt_ts_log(qa.nch, plan::THREADS, lpg);
    const int64_t teams = plan::THREADS >> qa.ts_log;
    qa.tile_rows = (int32_t)(sm::TILE_CTA / qa.cols);
    qa.passes = (int32_t)(qa.tile_rows > teams ? qa.tile_rows / teams : 1);
    const int64_t total = a.groups << L;
    const int64_t ntiles = (total + sm::TILE_CTA - 1) / sm::TILE_CTA;
    int64_t grid = (int64_t)rotq_qt_per_sm(kernel, plan::THREADS, sm::BYTES, &occupancy[spec][device & 63]) * dev->sm_count;
    if (grid > ntiles) grid = ntiles;
    if (grid < 1) return ROTQ_OK;
    rotq_had_args t = a;
    CUtensorMap map;
    rotq_pow2_tma_setup<L, ES, BT>(t, &map, NULL, ntiles, grid, dev, stream);
    void *args[] = {&qa, &t, &map};
    if (cudaLaunchKernel(kernel, dim3((unsigned)grid), dim3(plan::THREADS), args, sm::BYTES, stream) != cudaSuccess) {
        cudaGetLastError();
        return ROTQ_ERR_CUDA;
    }
    return ROTQ_OK;
}

// The 128-thread build where the row fits its tile (rotq_qt_small_bt), else
// the 256-thread one.
template <int L, int ES>
static rotq_status rotq_qt_rot_launch(const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t stream,
                                      const rotq_cuda_device_info *dev) {
    constexpr int BT = rotq_qt_small_bt<L>();
    if (BT != 256 && qa.cols <= rotq_pow2_smem<L, ES, BT>::TILE_CTA)
        return rotq_qt_rot_launch_bt<L, ES, BT>(qa, a, stream, dev);
    return rotq_qt_rot_launch_bt<L, ES, 256>(qa, a, stream, dev);
}

// One per input element size (quantize_rot_es2.cu, quantize_rot_es4.cu).
rotq_status rotq_qt_rot_dispatch_es2(int L, const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t s,
                                     const rotq_cuda_device_info *d);
rotq_status rotq_qt_rot_dispatch_es4(int L, const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t s,
                                     const rotq_cuda_device_info *d);
