// Launchers of the Hadamard kernels. The instantiations are spread over
// hadamard_inst_*.cu so that they compile in parallel.
#pragma once
#include <string.h>

#include "hadamard_factor.cuh"
#include "hadamard_small_cluster.cuh"
#include "hadamard_small_split.cuh"

// Launch geometry of a persistent kernel with no runtime calls after the first
// use on a device: that first call raises the kernel's dynamic shared-memory
// limit to the device maximum and reads its register count (regs[device]);
// later calls compute the occupancy from the cached figures. Keeps the host
// side of small (decode-size) calls to argument checks.
static inline rotq_status rotq_persistent_grid(const void *kernel, int threads, size_t smem, int *regs,
                                               const rotq_cuda_device_info *dev, int64_t ntiles, int64_t *grid) {
    // Cached per kernel and device: registers (<= 255) | static shared bytes << 8
    // (<= 48 KB, so the int stays positive); the dynamic limit is the device's
    // opt-in maximum less the static part.
    int *slot = &regs[dev->device & 63];
    int r = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (r <= 0) {
        cudaFuncAttributes attr;
        if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess ||
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 dev->max_smem_optin - (int)attr.sharedSizeBytes) != cudaSuccess) {
            cudaGetLastError();
            return ROTQ_ERR_CUDA;
        }
        r = (attr.numRegs > 0 ? attr.numRegs : 1) | (int)(attr.sharedSizeBytes << 8);
        __atomic_store_n(slot, r, __ATOMIC_RELEASE);
    }
    const size_t static_bytes = (size_t)(r >> 8);
    r &= 0xff;
    if (smem + static_bytes > (size_t)dev->max_smem_optin) return ROTQ_ERR_NOT_SUPPORTED;
    const int warps = (threads + 31) / 32;
    const int regs_per_warp = (r * 32 + 255) / 256 * 256;
    int per_sm = 2048 / threads;
    const int by_smem = (int)((size_t)dev->smem_per_sm / (smem + static_bytes + 1024));
    const int by_regs = 65536 / (regs_per_warp * warps);
    if (by_smem < per_sm) per_sm = by_smem;
    if (by_regs < per_sm) per_sm = by_regs;
    if (per_sm < 1) per_sm = 1;
    *grid = (int64_t)per_sm * dev->sm_count;
    if (*grid > ntiles) *grid = ntiles;
    return ROTQ_OK;
}

template <int L, int ES, int DT = -1>
static rotq_status rotq_launch_pow2(const rotq_had_args &a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    typedef rotq_pow2_plan<L> plan;
    typedef rotq_pow2_smem<L, ES> sm;
    static int regs[64]; // per device; 0 = not prepared yet
    const int64_t total = a.groups << L;
    const int64_t ntiles = (total + sm::TILE_CTA - 1) / sm::TILE_CTA;
    int64_t grid = 0;
    rotq_status st = rotq_persistent_grid((const void *)rotq_had_pow2<L, ES, DT>, plan::THREADS, sm::BYTES, regs, dev,
                                          ntiles, &grid);
    if (st != ROTQ_OK) return st;
    rotq_had_args t = a;
    CUtensorMap map, ymap;
    rotq_pow2_tma_setup<L, ES>(t, &map, &ymap, ntiles, grid, dev, stream);
    // One block per SM (n = 32768) in the static tile order: as many blocks as
    // fill every round (rotq_balanced_grid; with several blocks per SM fewer
    // blocks are slower). The dynamic order (t.tiles_next) evens out the
    // blocks' ends itself, and there every SM's block ran 2% faster at 2^25
    // (perf-notes, power-of-two v38). Fewer blocks than tma_setup was given
    // keep its choices valid: more tiles a block, the same static order.
    if (grid <= dev->sm_count && t.tiles_next == NULL) grid = rotq_balanced_grid(grid, ntiles);
    rotq_had_pow2<L, ES, DT><<<(unsigned)grid, plan::THREADS, sm::BYTES, stream>>>(t, map, ymap);
    return rotq_cuda_check_launch();
}

// One block per tile of whole row blocks, no persistent loop. W above the default
// 48 KB (n >= 16384) needs the kernel's limit raised: once per device.
template <int L, int DT = -1>
static rotq_status rotq_launch_small(const rotq_had_args &a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    typedef rotq_small_plan<L> plan;
    if constexpr (DT < 0) { // the common case's own builds (rotq_had_fast_case)
        if (rotq_had_fast_case(a, ROTQ_DTYPE_F16, true)) return rotq_launch_small<L, ROTQ_DTYPE_F16>(a, stream, dev);
        if (rotq_had_fast_case(a, ROTQ_DTYPE_BF16, true)) return rotq_launch_small<L, ROTQ_DTYPE_BF16>(a, stream, dev);
    }
    constexpr size_t smem = (size_t)plan::W_WORDS * 4;
    static int ready[64]; // per device; 0 = limit not raised yet
    const rotq_status st =
        rotq_cuda_smem_optin((const void *)rotq_had_small<L, DT>, smem, 0, &ready[dev->device & 63], dev);
    if (st != ROTQ_OK) return st;
    const int64_t total = a.groups << L;
    const unsigned grid = (unsigned)((total + (1 << plan::LE) - 1) >> plan::LE);
    rotq_had_small<L, DT><<<grid, plan::THREADS, smem, stream>>>(a);
    return rotq_cuda_check_launch();
}

// 2^T blocks per row block, out of place (rotq_split_fits).
template <int L, int DT = -1>
static rotq_status rotq_launch_split(const rotq_had_args &a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    typedef rotq_split_plan<L> plan;
    if constexpr (DT < 0) { // the common case's own builds (rotq_had_fast_case)
        if (rotq_had_fast_case(a, ROTQ_DTYPE_F16, true)) return rotq_launch_split<L, ROTQ_DTYPE_F16>(a, stream, dev);
        if (rotq_had_fast_case(a, ROTQ_DTYPE_BF16, true)) return rotq_launch_split<L, ROTQ_DTYPE_BF16>(a, stream, dev);
    }
    static int ready[64]; // per device; 0 = limit not raised yet (W above 48 KB)
    const rotq_status st =
        rotq_cuda_smem_optin((const void *)rotq_had_split<L, DT>, plan::SMEM, 0, &ready[dev->device & 63], dev);
    if (st != ROTQ_OK) return st;
    rotq_had_split<L, DT><<<(unsigned)(a.groups << plan::T), plan::THREADS, plan::SMEM, stream>>>(a);
    return rotq_cuda_check_launch();
}

// One cluster of 2^S blocks per row block. Usable when the device has clusters,
// the loaded code of the kernel is sm_90's (not older PTX JIT-compiled, whose body
// is empty) and a cluster fits on the device; checked once per device, else
// ROTQ_ERR_NOT_SUPPORTED (the caller falls back to the one-block kernel).
template <int L, int DT = -1>
static rotq_status rotq_launch_cluster(const rotq_had_args &a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    typedef rotq_cluster_plan<L> plan;
    if constexpr (DT < 0 && L >= ROTQ_CLUSTER_MIN_L) { // the common case's own builds (rotq_had_fast_case)
        if (rotq_had_fast_case(a, ROTQ_DTYPE_F16, true)) return rotq_launch_cluster<L, ROTQ_DTYPE_F16>(a, stream, dev);
        if (rotq_had_fast_case(a, ROTQ_DTYPE_BF16, true))
            return rotq_launch_cluster<L, ROTQ_DTYPE_BF16>(a, stream, dev);
    }
    static int usable[64]; // per device: 0 not checked yet, 1 yes, -1 no
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1u << plan::S;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3((unsigned)(a.groups << plan::S));
    cfg.blockDim = dim3(plan::THREADS);
    cfg.dynamicSmemBytes = plan::SMEM;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int *slot = &usable[dev->device & 63];
    int u = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (u == 0) {
        cudaFuncAttributes fa;
        int clusters = 0;
        u = dev->cc_major >= 9 && cudaFuncGetAttributes(&fa, (const void *)rotq_had_cluster<L, DT>) == cudaSuccess &&
                    fa.ptxVersion >= 90 &&
                    cudaOccupancyMaxActiveClusters(&clusters, (const void *)rotq_had_cluster<L, DT>, &cfg) == cudaSuccess &&
                    clusters > 0
                ? 1
                : -1;
        cudaGetLastError();
        __atomic_store_n(slot, u, __ATOMIC_RELEASE);
    }
    if (u < 0) return ROTQ_ERR_NOT_SUPPORTED;
    cudaLaunchKernelEx(&cfg, rotq_had_cluster<L, DT>, a);
    return rotq_cuda_check_launch();
}

// Shared memory of the factor kernel with `stages` staging buffers of column
// slices 2^ls wide (ls == L: whole row blocks).
template <int L, int ES>
static size_t rotq_factor_smem(const rotq_had_args &a, const rotq_had_factor &f, int stages, int ls, int threads) {
    typedef rotq_pow2_plan<L> plan;
    const int64_t elems = (int64_t)f.groups_per_block * a.n;
    // W covers whole subtiles; subtiles of more than a warp also run past the
    // end, for the barriers of the block's last pass.
    const int64_t pass = plan::SUB_THREADS == 32 ? (int64_t)plan::TILE
                                                 : (int64_t)plan::TILE * (threads / plan::SUB_THREADS);
    const int64_t w_elems = (elems + pass - 1) / pass * pass;
    return rotq_factor_head_bytes(f.kt, f.wgmma) +
           stages * rotq_factor_stage_bytes(f.groups_per_block, f.krows << ls, ES) +
           (size_t)rotq_w_slots((unsigned)w_elems) * 4;
}

// Staging plan of the factor kernel (f.stages, f.slice_log): the build's blocks
// per SM must fit; then prefetch (two stages) is preferred, then the widest
// stage. In the one-block builds (rotq_factor_shape::SLICES) a tile of one row
// block may be streamed in up to 16 column slices (2^(L-4) >= 16 columns), so
// that a stage fits next to W: n > 32768 in one pass, and prefetch where a
// whole stage would not fit. ROTQ_ERR_NOT_SUPPORTED when nothing fits.
template <int L, int ES, int KTMAX, bool WIDE>
static rotq_status rotq_factor_staging(const rotq_had_args &a, rotq_had_factor &f, const rotq_cuda_device_info *dev,
                                       int threads, size_t *smem) {
    typedef rotq_factor_shape<L, ES, KTMAX, WIDE> shape;
    const int lmin = f.groups_per_block == 1 && shape::SLICES ? L - 4 : L;
    for (int stages = 2; stages >= 1; stages--) {
        for (int ls = L; ls >= lmin; ls--) {
            const size_t bytes = rotq_factor_smem<L, ES>(a, f, stages, ls, threads);
            if (bytes > (size_t)dev->max_smem_optin ||
                (size_t)dev->smem_per_sm / (bytes + 1024) < (size_t)shape::BLOCKS)
                continue;
            f.stages = stages;
            f.slice_log = ls;
            *smem = bytes;
            return ROTQ_OK;
        }
    }
    return ROTQ_ERR_NOT_SUPPORTED;
}

// Whether the factor kernel's input can come by TMA (16-bit elements aside):
// 16-byte rows, row blocks at a fixed stride (a sign vector is applied to the
// arrived stage, rotq_factor_sign_stage). Returns that stride in elements, or -1.
static inline int64_t rotq_factor_tma_input(const rotq_had_args &a) {
    if (!a.vec_in) return -1;
    if (a.blocks_per_row == 1) return a.x_stride;
    return a.x_stride == (int64_t)a.n * a.blocks_per_row ? (int64_t)a.n : -1;
}

// Host: the input map and launch arguments of the sm_90 kernels that always
// read by TMA (the fragment and warpgroup kernels): row blocks of f.krows lines
// in slices of 2^f.slice_log columns (rotq_tma_map_factor), `blocks` row blocks
// a box, and a with TMA input and no TMA output (each kernel sets vec_out for
// its own stores). False: TMA cannot map the input.
static inline bool rotq_factor_tma_only_args(const rotq_had_args &a, const rotq_had_factor &f, int L,
                                             int64_t gstride, CUtensorMap *xmap, rotq_had_args *t, int blocks = 1) {
    memset(xmap, 0, sizeof *xmap);
    if (!rotq_tma_map_factor(xmap, a.x, f.k, f.krows, L, f.slice_log, a.groups, gstride, blocks)) return false;
    *t = a;
    t->tma = 1;
    t->tma_out = 0;
    return true;
}

// Host: TMA for the factor kernel on sm_90. Stage loads (a.tma, xmap) for 16-bit
// inputs whose row blocks sit at a fixed stride, stages at least
// 64 columns wide, and 1.5 tiles per block or more (as the power-of-two kernel:
// a block's first tile comes later by TMA). Tile stores (a.tma_out, ymap) for
// 2^L <= 128 (the rows end in phase-0 layout and leave from the stage the K step
// has read, so not with `early`'s single stage, which is refilled by then) when
// the output's row blocks are back to back, in whole 128-byte rows.
template <int L, int ES, int KTMAX, bool QUANT, bool SLICED, bool WIDE>
static inline void rotq_factor_tma_setup(rotq_had_args &a, const rotq_had_factor &f, CUtensorMap *xmap,
                                         CUtensorMap *ymap, int64_t ntiles, int64_t grid,
                                         const rotq_cuda_device_info *dev) {
    memset(xmap, 0, sizeof *xmap);
    memset(ymap, 0, sizeof *ymap);
    a.tma = a.tma_out = 0;
    if (dev->cc_major < 9) return;
    const int G = f.groups_per_block;
    const int64_t gstride = rotq_factor_tma_input(a);
    if (ES == 2 && gstride > 0 && f.slice_log >= 6 && 2 * ntiles >= 3 * grid)
        a.tma = rotq_tma_map_factor(xmap, a.x, f.k, f.krows, L, f.slice_log, a.groups, gstride, G);
    const bool early = rotq_factor_shape<L, ES, KTMAX, WIDE>::TWO && !SLICED && f.stages == 1;
    const int os = a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    if (!QUANT && L <= 7 && !early && a.y_packed && os <= ES && ((int64_t)a.n * os) % ROTQ_TMA_ROW_BYTES == 0)
        a.tma_out = rotq_tma_map_rows(ymap, a.y, a.groups * a.n, os, rotq_tma_box_rows((int)((int64_t)G * a.n * os)));
}

// Launches one build of the factor kernel (its own register cache). dry: stops
// where the launch would go ahead (ROTQ_OK), launching nothing: the workspace
// queries run the factor dispatch that way, to learn whether a call takes
// this kernel or a fallback path, with the same decisions as the launch.
template <int L, int ES, int KTMAX, bool QUANT, bool SLICED, bool WIDE>
static rotq_status rotq_launch_factor_build(const rotq_had_args &a, const rotq_had_factor &f, const rotq_q_args &q,
                                            size_t smem, int threads, cudaStream_t stream,
                                            const rotq_cuda_device_info *dev, bool dry) {
    static int regs[64]; // per device; 0 = not prepared yet
    const int64_t ntiles = (a.groups + f.groups_per_block - 1) / f.groups_per_block;
    int64_t grid = 0;
    const rotq_status st = rotq_persistent_grid((const void *)rotq_had_factor_kernel<L, ES, KTMAX, QUANT, SLICED, WIDE>,
                                                threads, smem, regs, dev, ntiles, &grid);
    if (st != ROTQ_OK || dry) return st;
    rotq_had_args t = a;
    CUtensorMap xmap, ymap;
    rotq_factor_tma_setup<L, ES, KTMAX, QUANT, SLICED, WIDE>(t, f, &xmap, &ymap, ntiles, grid, dev);
    rotq_had_factor fl = f;
    if constexpr (ES == 2 && !QUANT && !SLICED && KTMAX > ROTQ_FACTOR_SMALL_KT && L >= 6 && L <= 7) {
        // The pipelined loop (rotq_factor_pipelined): wgmma, TMA loads and
        // stores, one wgmma task per warpgroup, a third stage that fits; no
        // sign vector (the loop's stages go to wgmma as they arrive).
        const int tasks = (f.k + 63) / 64 * (f.groups_per_block << (L - 6));
        if (f.wgmma && t.tma && t.tma_out && f.stages == 2 && tasks <= threads / 128 && !a.signs) {
            const size_t smem3 = rotq_factor_smem<L, ES>(a, f, 3, L, threads);
            int64_t grid3 = 0;
            if (rotq_persistent_grid((const void *)rotq_had_factor_kernel<L, ES, KTMAX, QUANT, SLICED, WIDE>, threads,
                                     smem3, regs, dev, ntiles, &grid3) == ROTQ_OK &&
                grid3 == grid)
                fl.stages = 3, smem = smem3;
        }
    }
    rotq_had_factor_kernel<L, ES, KTMAX, QUANT, SLICED, WIDE>
        <<<(unsigned)grid, threads, smem, stream>>>(t, fl, q, xmap, ymap);
    return rotq_cuda_check_launch();
}

// Rounds of the phases: a tile's subtiles (one warp each: 2^L <= 1024) over
// `warps` at a time. Efficiency = subtiles / (rounds * warps).
static inline double rotq_factor_round_eff(int64_t subtiles, int warps) {
    const int64_t rounds = (subtiles + warps - 1) / warps;
    return (double)subtiles / (double)(rounds * warps);
}

// Warps of the WIDE build for a tile of `subtiles`: the most (17 .. 20) with
// the best round efficiency where it beats 16 warps by 5%, else 16. Fewer than
// 16 warps lost more than fuller rounds gave (28 * 1024 on 14 warps, one
// round: 100.1 -> 103.7 us, same-run A/B). 16 warps of this build against the
// 512-thread large-K build (28 * 1024): 87.4 -> 82.2 us, same-run A/B.
static inline int rotq_factor_wide_warps(int64_t subtiles) {
    int best = 0;
    double eff = 0.0;
    for (int w = ROTQ_FACTOR_WIDE_THREADS / 32; w >= 17; w--) {
        const double e = rotq_factor_round_eff(subtiles, w);
        if (e > eff + 1e-9) best = w, eff = e;
    }
    return eff > rotq_factor_round_eff(subtiles, 16) + 0.05 ? best : 16;
}

// Rows of 2^9 done one per warp in a tile's last round of the phases
// (rotq_factor_half_row9): where the tile (one row block, whole one-warp
// subtiles of two rows) leaves `left` subtiles after whole rounds of the
// warps and 2 left warps can take them as rows, 2 left; else 0. The Hadamard
// build only (the QUANT epilogue reads rows back from W with its own team).
static inline int rotq_factor_half_rows(int L, bool quant, const rotq_had_args &a, const rotq_had_factor &f,
                                        int threads) {
    if (L != 9 || quant || f.groups_per_block != 1 || a.n % 1024 != 0) return 0;
    const int warps = threads / 32, left = (int)(a.n / 1024) % warps;
    return left > 0 && 2 * left <= warps ? 2 * left : 0;
}

// QUANT: the fused rotate + quantize build; qa as for the fused power-of-two
// kernel (kind, q, scales, row_sums, strides, group fields), rows = row blocks.
// dry: as rotq_launch_factor_build.
template <int L, int ES, int KTMAX, bool QUANT, bool WIDE = false>
static rotq_status rotq_launch_factor(const rotq_had_args &a, rotq_had_factor &f, const rotq_q_args *qa,
                                      cudaStream_t stream, const rotq_cuda_device_info *dev, bool dry,
                                      int threads = 0) {
    if (f.kt > KTMAX) return ROTQ_ERR_NOT_SUPPORTED; // the dispatch picks KTMAX >= kt
    // The large-K builds run the K step of TMA stages for K > 64 on wgmma
    // (sm_90a: compute capability 9.x), which takes whole k tiles: the stage
    // holds 16 kt rows per 64-column block. (K <= 64 in this build, 28 * 1024:
    // its larger stage left room for one stage only, 93.6 -> 121.8 us in a
    // same-run A/B.) Where TMA cannot serve the stages, or the larger stage and
    // matrix do not fit with slices of 64 columns or more, the plain sizes.
    f.wgmma = ES == 2 && KTMAX > ROTQ_FACTOR_SMALL_KT && f.kt > ROTQ_FACTOR_SMALL_KT && dev->cc_major == 9 &&
              rotq_factor_tma_input(a) > 0;
    f.krows = f.wgmma ? 16 * f.kt : f.k;
    typedef rotq_factor_shape<L, ES, KTMAX, WIDE> shape;
    if (!WIDE) threads = shape::THREADS;
    f.half_rows = rotq_factor_half_rows(L, QUANT, a, f, threads);
    // The two-block build (384 threads, 80 registers) needs room for its
    // second block; without it the caller takes a one-block build.
    size_t smem = 0;
    rotq_status st = rotq_factor_staging<L, ES, KTMAX, WIDE>(a, f, dev, threads, &smem);
    if (f.wgmma && (st != ROTQ_OK || f.slice_log < 6)) {
        f.wgmma = 0, f.krows = f.k;
        st = rotq_factor_staging<L, ES, KTMAX, WIDE>(a, f, dev, threads, &smem);
    }
    if (st != ROTQ_OK) return st;
    rotq_q_args q;
    if (QUANT) {
        // The tile epilogue's teams (quantize_tile.cuh): rows of nch chunks, G per tile.
        q = *qa;
        const int lpg = q.kind == ROTQ_QUANT_INT4_GROUP ? q.group / (8 * ROTQ_QT_I4_CPL_W) : 1;
        q.nch = (int32_t)(a.n / 8);
        q.ts_log = rotq_qt_ts_log(q.nch, threads, lpg);
        // One row per tile (int8 / fp8): the whole block is the team, not the
        // largest power of two in it (256 of 384 threads).
        if (q.kind != ROTQ_QUANT_INT4_GROUP && f.groups_per_block == 1 && (1 << q.ts_log) < threads) q.ts_log++;
        const int teams = threads >> q.ts_log > 0 ? threads >> q.ts_log : 1;
        q.tile_rows = f.groups_per_block;
        q.passes = (q.tile_rows + teams - 1) / teams;
    } else {
        memset(&q, 0, sizeof q);
    }
    if constexpr (shape::SLICES) {
        if (f.slice_log < L)
            return rotq_launch_factor_build<L, ES, KTMAX, QUANT, true, WIDE>(a, f, q, smem, threads, stream, dev,
                                                                             dry);
    }
    return rotq_launch_factor_build<L, ES, KTMAX, QUANT, false, WIDE>(a, f, q, smem, threads, stream, dev, dry);
}

// The factor kernel for any K: 16-bit inputs with K <= 64 first try the
// two-block build (ROTQ_FACTOR_SMALL_KT; it declines when two blocks do not fit
// in an SM's shared memory), then at 2^9 and 2^10 the WIDE build; everything
// else takes the 512-thread build. dry: as rotq_launch_factor_build.
template <int L, int ES, bool QUANT>
static rotq_status rotq_launch_factor_any(const rotq_had_args &a, rotq_had_factor &f, const rotq_q_args *qa,
                                          cudaStream_t s, const rotq_cuda_device_info *d, bool dry) {
    if constexpr (ES == 2) {
        if (f.kt <= ROTQ_FACTOR_SMALL_KT) {
            rotq_status st = rotq_launch_factor<L, ES, ROTQ_FACTOR_SMALL_KT, QUANT>(a, f, qa, s, d, dry);
            if (st != ROTQ_ERR_NOT_SUPPORTED) return st;
            if constexpr (L == 9 || L == 10) {
                // One block: the WIDE build, with more than 16 warps where they
                // take the tile's subtiles in fuller rounds.
                constexpr int64_t tile = rotq_pow2_plan<L>::TILE;
                const int64_t subtiles = ((int64_t)f.groups_per_block * a.n + tile - 1) / tile;
                const int warps = rotq_factor_wide_warps(subtiles);
                st = rotq_launch_factor<L, ES, ROTQ_FACTOR_SMALL_KT, QUANT, true>(a, f, qa, s, d, dry, 32 * warps);
                if (st != ROTQ_ERR_NOT_SUPPORTED) return st;
            }
        }
    }
    return rotq_launch_factor<L, ES, ROTQ_FACTOR_MAX_KT, QUANT>(a, f, qa, s, d, dry);
}

// H_K's sign bits, the operand type and the tile size (G row blocks) of the
// factor kernels for a plan with K > 1 (hadamard.cu).
rotq_status rotq_factor_init(const rotq__hadamard_plan *plan, int in_dtype, rotq_had_factor *fl);

// One per input element size (2: f16/bf16, 4: f32); ROTQ_ERR_NOT_SUPPORTED for
// sizes without a kernel.
rotq_status rotq_dispatch_pow2_es2(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d);
rotq_status rotq_dispatch_pow2_es4(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d);
// The power-of-two kernels built for rotq_had_fast_case (f16 or bf16;
// hadamard_inst_pow2_fast.cu); ROTQ_ERR_NOT_SUPPORTED for any other call.
rotq_status rotq_dispatch_pow2_fast(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d);
// The small-problem kernels (hadamard_small*.cuh), any input dtype; only for
// rotq_had_small_fits(L, groups << L).
rotq_status rotq_dispatch_small(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d);
// The factor kernels (one pass); ROTQ_ERR_NOT_SUPPORTED where the row does not fit
// (the caller takes two passes). dry: decide only, launch nothing
// (rotq_launch_factor_build).
rotq_status rotq_dispatch_factor_es2(int L, const rotq_had_args &a, rotq_had_factor &f, cudaStream_t s,
                                     const rotq_cuda_device_info *d, bool dry = false);
rotq_status rotq_dispatch_factor_es4(int L, const rotq_had_args &a, rotq_had_factor &f, cudaStream_t s,
                                     const rotq_cuda_device_info *d, bool dry = false);
// The fragment kernel (hadamard_factor_frag.cuh, hadamard_inst_frag.cu): K <= 64
// at 2^8 .. 2^10, 16-bit input, sm_90; ROTQ_ERR_NOT_SUPPORTED elsewhere (the
// factor kernels then run). dry: as rotq_dispatch_factor_es2.
rotq_status rotq_dispatch_frag_es2(int L, const rotq_had_args &a, const rotq_had_factor &f, cudaStream_t s,
                                   const rotq_cuda_device_info *d, bool dry);
// Whether `kernel` has code for compute capability 9.x loaded on this device,
// cached in usable[device] (0 not checked, 1 yes, -1 no). The sm_90 kernels'
// launchers ask before anything else.
static inline bool rotq_kernel_has_sm90(const void *kernel, int *usable, const rotq_cuda_device_info *dev) {
    int *slot = &usable[dev->device & 63];
    int u = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (u == 0) {
        cudaFuncAttributes fa;
        u = cudaFuncGetAttributes(&fa, kernel) == cudaSuccess && fa.binaryVersion >= 90 ? 1 : -1;
        cudaGetLastError();
        __atomic_store_n(slot, u, __ATOMIC_RELEASE);
    }
    return u > 0;
}

// The warpgroup kernel (hadamard_factor_wg.cuh, hadamard_inst_wg.cu): K >= 12 at
// 2^6 and 2^7, 16-bit input, sm_90a; ROTQ_ERR_NOT_SUPPORTED
// elsewhere. dry: as rotq_dispatch_factor_es2.
rotq_status rotq_dispatch_wg_es2(int L, const rotq_had_args &a, const rotq_had_factor &f, cudaStream_t s,
                                 const rotq_cuda_device_info *d, bool dry);
// Second pass of the two-pass transform for n = K * 2^L > 32768 (hadamard_kcols.cuh):
// H_K applied to the first pass's output x (element size es; only 4 is built) into y.
rotq_status rotq_launch_kcols(int es, const rotq_had_args &a, int L, const rotq_had_factor &f, cudaStream_t s,
                              const rotq_cuda_device_info *d);
