// Fused power-of-two rotation + quantize on the Hadamard kernel's pipeline
// (hadamard_pow2.cuh): a persistent block walks over tiles of TILE_CTA
// elements, staged global -> shared with 16-byte cp.async and double-buffered
// (rotq_stage_tile); phase 0 from the stage, later phases through the swizzled
// fp32 buffer W, in the same stage order as the Hadamard kernel and the CPU
// backend (ascending bits, then * scale). Instead of storing the rotated
// values, the last phase writes them (scaled) back to W and the block
// quantizes the tile's rows from W (quantize_tile.cuh).
//
// Used when a row (cols = blocks_per_row * 2^L) is a power of two of at most
// TILE_CTA elements and at least 8, so a tile holds TILE_CTA / cols whole rows;
// other shapes take quantize_rot.cu's kernel.
#pragma once
#include "hadamard_launch.cuh" // rotq_had_pow2 pieces, rotq_persistent_blocks
#include "quantize_launch.cuh"
#include "quantize_tile.cuh"

template <int KIND>
__device__ __forceinline__ void rotq_qt_rot_epilogue(const rotq_q_args &qa, const float *W, int64_t row0,
                                                     unsigned rv, uint32_t *red) {
    rotq_qt_w_src src;
    src.W = W;
    src.cols_log = (unsigned)qa.cols_log;
    rotq_qt_tile<KIND>(qa, src, row0, rv, red);
}

template <int L, int ES>
__global__ void __launch_bounds__(rotq_pow2_plan<L>::THREADS, 1024 / rotq_pow2_plan<L>::THREADS)
    rotq_qt_rot_kernel(rotq_q_args qa, rotq_had_args a) {
    typedef rotq_pow2_plan<L> plan;
    typedef rotq_pow2_smem<L, ES> sm;
    extern __shared__ __align__(16) char rotq_smem[];
    __shared__ uint32_t red[32];
    const unsigned sub = threadIdx.x / plan::SUB_THREADS;
    const unsigned tid = threadIdx.x % plan::SUB_THREADS;
    const unsigned sub_base = sub * plan::TILE;
    const unsigned local0 = sub_base + tid * 32; // phase 0: 32 consecutive elements
    const int64_t total = a.groups << L;
    const int64_t ntiles = (total + sm::TILE_CTA - 1) / sm::TILE_CTA;
    const unsigned R = (unsigned)qa.tile_rows; // TILE_CTA / cols
    const unsigned cmask = (1u << qa.cols_log) - 1u;

    int buf = 0;
    if (sm::PREFETCH && (int64_t)blockIdx.x < ntiles) rotq_stage_tile<L, ES>(a, blockIdx.x, total, rotq_smem);
    ptx_cp_async_commit();
    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x, buf ^= 1) {
        __syncthreads(); // the previous tile's W and stage are free again
        if (sm::PREFETCH) {
            if (tile + gridDim.x < ntiles)
                rotq_stage_tile<L, ES>(a, tile + gridDim.x, total, rotq_smem + (buf ^ 1) * (sm::STAGE + sm::EXTRA));
            ptx_cp_async_commit();
            ptx_cp_async_wait<1>();
        } else {
            rotq_stage_tile<L, ES>(a, tile, total, rotq_smem);
            ptx_cp_async_commit();
            ptx_cp_async_wait<0>();
        }
        __syncthreads();
        char *cur = rotq_smem + (sm::PREFETCH ? buf * (sm::STAGE + sm::EXTRA) : 0);
        float v[32];
        rotq_read_stage32<ES>(cur, local0, a.in_dtype, v);
        if (a.signs) {
            // Tiles start at a row, so the column of tile element e is e & cmask.
            const unsigned col0 = local0 & cmask;
#pragma unroll
            for (int r = 0; r < 32; r++) {
                const int8_t sg = __ldg(a.signs + ((col0 + (unsigned)r) & cmask));
                if (sg < 0) v[r] = -v[r];
            }
        }
        rotq_phase<L>(0, v);
        __syncthreads(); // every thread has read the stage that W overwrites
        float *W = (float *)((sm::PREFETCH && buf == 1 && sm::EXTRA > 0) ? rotq_smem + sm::STAGE : cur);
        if (plan::PHASES == 1) {
            const unsigned b = rotq_w_swizzle(local0);
#pragma unroll
            for (int r = 0; r < 32; r++) W[b ^ (unsigned)r] = v[r] * a.scale;
        } else {
#pragma unroll
            for (int p = 1; p < plan::PHASES; p++) {
                const unsigned wbase = rotq_phase_base(sub_base, tid, plan::lo(p - 1));
#pragma unroll
                for (int r = 0; r < 32; r++) W[wbase ^ rotq_w_swizzle((unsigned)r << plan::lo(p - 1))] = v[r];
                rotq_subtile_sync<plan::SUB_THREADS>();
                const unsigned rbase = rotq_phase_base(sub_base, tid, plan::lo(p));
#pragma unroll
                for (int r = 0; r < 32; r++) v[r] = W[rbase ^ rotq_w_swizzle((unsigned)r << plan::lo(p))];
                rotq_phase<L>(p, v);
            }
            // Back to the slots just read (no barrier needed before), scaled.
            constexpr int lo = plan::lo(plan::PHASES - 1);
            const unsigned wbase = rotq_phase_base(sub_base, tid, lo);
#pragma unroll
            for (int r = 0; r < 32; r++) W[wbase ^ rotq_w_swizzle((unsigned)r << lo)] = v[r] * a.scale;
        }
        __syncthreads();
        const int64_t row0 = tile * R;
        const int64_t left = qa.rows - row0;
        const unsigned rv = left < (int64_t)R ? (unsigned)left : R;
        switch (qa.kind) {
        case ROTQ_QUANT_INT8_ROW: rotq_qt_rot_epilogue<ROTQ_QUANT_INT8_ROW>(qa, W, row0, rv, red); break;
        case ROTQ_QUANT_FP8_ROW: rotq_qt_rot_epilogue<ROTQ_QUANT_FP8_ROW>(qa, W, row0, rv, red); break;
        case ROTQ_QUANT_FP8_TENSOR: rotq_qt_rot_epilogue<ROTQ_QUANT_FP8_TENSOR>(qa, W, row0, rv, red); break;
        default: rotq_qt_rot_epilogue<ROTQ_QUANT_INT4_GROUP>(qa, W, row0, rv, red); break;
        }
    }
    ptx_cp_async_wait<0>();
}

// qa: as for quantize_rot.cu plus kind and cols_log; a: the rotation's
// Hadamard arguments (x, stride, groups, blocks_per_row, n, in_dtype, scale,
// signs, vec_in).
template <int L, int ES>
static rotq_status rotq_qt_rot_launch(rotq_q_args qa, const rotq_had_args &a, cudaStream_t stream,
                                      const rotq_cuda_device_info *dev) {
    typedef rotq_pow2_plan<L> plan;
    typedef rotq_pow2_smem<L, ES> sm;
    static int occupancy[64];
    static int optin[64];
    if (qa.cols > sm::TILE_CTA) return ROTQ_ERR_NOT_SUPPORTED; // the caller falls back
    const void *kernel = (const void *)rotq_qt_rot_kernel<L, ES>;
    int device = 0;
    cudaGetDevice(&device);
    rotq_status st = rotq_qt_smem_optin(kernel, sm::BYTES, &optin[device & 63], dev);
    if (st != ROTQ_OK) return st;
    const int lpg = qa.kind == ROTQ_QUANT_INT4_GROUP ? qa.group / 8 : 1;
    qa.nch = (int32_t)(qa.cols / 8);
    qa.ts_log = rotq_qt_ts_log(qa.nch, plan::THREADS, lpg);
    const int64_t teams = plan::THREADS >> qa.ts_log;
    qa.tile_rows = (int32_t)(sm::TILE_CTA / qa.cols);
    qa.passes = (int32_t)(qa.tile_rows > teams ? qa.tile_rows / teams : 1);
    const int64_t total = a.groups << L;
    const int64_t ntiles = (total + sm::TILE_CTA - 1) / sm::TILE_CTA;
    int64_t grid = rotq_persistent_blocks(kernel, plan::THREADS, sm::BYTES, &occupancy[device & 63], dev);
    if (grid > ntiles) grid = ntiles;
    if (grid < 1) return ROTQ_OK;
    rotq_qt_rot_kernel<L, ES><<<(unsigned)grid, plan::THREADS, sm::BYTES, stream>>>(qa, a);
    return rotq_cuda_check_launch();
}

// One per input element size (quantize_rot_es2.cu, quantize_rot_es4.cu).
rotq_status rotq_qt_rot_dispatch_es2(int L, const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t s,
                                     const rotq_cuda_device_info *d);
rotq_status rotq_qt_rot_dispatch_es4(int L, const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t s,
                                     const rotq_cuda_device_info *d);
