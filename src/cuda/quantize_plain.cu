// Quantize without rotation: a team of threads per row reads the row from
// global memory into registers (16-byte loads when aligned) and quantizes it
// (quantize_row.cuh). Rows of up to 1024 elements go to teams of 8..32 lanes,
// several rows per block; longer rows get a block each. Per-row kinds read a
// row once when it fits one window (up to 512 threads x 32 values = 16384
// elements), else twice (the second read mostly from L2).
//
// Fast path (rows of whole 16-byte chunks, aligned rows and codes, up to 64 KB
// per row): a persistent grid of 256-thread blocks walks over tiles of whole
// rows (about 16 KB of input). Each tile is copied global -> shared with
// 16-byte cp.async (lanes take consecutive chunks: 512 bytes per warp
// instruction), double-buffered so that the next tile streams in while this one
// is quantized from shared memory (quantize_tile.cuh). Other shapes take the
// register kernel below.
#include "quantize_launch.cuh"
#include "quantize_row.cuh"
#include "quantize_tile.cuh"

#define ROTQ_Q_PLAIN_THREADS 256 // block size for warp-sized teams

// Chunks of row `row` of x in global memory.
template <int ES>
struct rotq_q_gsrc {
    const void *row;
    int64_t cols;
    int dtype, vec;
    __device__ __forceinline__ void load(int64_t c, float v[8]) const {
        rotq_q_load8<ES>(row, c * 8, cols, dtype, vec, v);
    }
};

template <int KIND, int ES>
__global__ void __launch_bounds__(512) rotq_q_plain_kernel(rotq_q_args a) {
    __shared__ uint32_t red[32];
    const unsigned ts = (unsigned)a.team;
    const unsigned team = threadIdx.x / ts, t = threadIdx.x - team * ts;
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x / ts) + team;
    const bool valid = row < a.rows;
    rotq_q_gsrc<ES> src;
    src.row = (const char *)a.x + (valid ? row : 0) * a.x_stride * ES;
    src.cols = a.cols;
    src.dtype = a.in_dtype;
    src.vec = a.vec_x;
    rotq_q_row<KIND, ROTQ_Q_NCH>(a, src, row, valid, t, ts, red);
}

template <int KIND>
static rotq_status rotq_q_plain_es(rotq_q_args a, cudaStream_t stream) {
    const int64_t nch = (a.cols + 7) / 8;
    int threads;
    int64_t grid;
    if (nch <= 32 * ROTQ_Q_NCH) {
        int64_t ts = rotq_q_pow2_ceil((nch + ROTQ_Q_NCH - 1) / ROTQ_Q_NCH);
        const int64_t min_ts = KIND == ROTQ_QUANT_INT4_GROUP && a.group / 8 > 8 ? a.group / 8 : 8;
        if (ts < min_ts) ts = min_ts; // a group's chunks must lie in one team
        if (ts > 32) ts = 32;
        a.team = (int32_t)ts;
        threads = ROTQ_Q_PLAIN_THREADS;
        const int64_t per_block = threads / ts;
        grid = (a.rows + per_block - 1) / per_block;
    } else {
        int64_t t = (nch + ROTQ_Q_NCH - 1) / ROTQ_Q_NCH;
        t = (t + 31) / 32 * 32;
        if (t < 64) t = 64;
        if (t > 512) t = 512;
        threads = (int)t;
        a.team = threads;
        grid = a.rows;
    }
    if (grid > 0x7fffffff) return ROTQ_ERR_NOT_SUPPORTED;
    if (a.in_dtype == ROTQ_DTYPE_F32)
        rotq_q_plain_kernel<KIND, 4><<<(unsigned)grid, threads, 0, stream>>>(a);
    else
        rotq_q_plain_kernel<KIND, 2><<<(unsigned)grid, threads, 0, stream>>>(a);
    return rotq_cuda_check_launch();
}

#define ROTQ_QT_THREADS 256
#define ROTQ_QT_STAGE_TARGET (16 * 1024) // bytes of input per tile
#define ROTQ_QT_STAGE_MAX (64 * 1024)    // longest row on the tile path

// <= 64 registers: four 256-thread blocks per SM at least.
template <int KIND, int ES>
__global__ void __launch_bounds__(ROTQ_QT_THREADS, 4) rotq_qt_plain_kernel(rotq_q_args a) {
    extern __shared__ __align__(16) char rotq_qt_smem[];
    __shared__ uint32_t red[32];
    const unsigned R = (unsigned)a.tile_rows;
    const unsigned row_bytes = (unsigned)a.cols * ES; // a multiple of 16
    const unsigned cpr = row_bytes >> 4;               // 16-byte chunks per row
    const unsigned stage_bytes = R * row_bytes;
    const int64_t ntiles = (a.rows + R - 1) / R;
    // This thread's first chunk of a tile, and its step, as (row, chunk).
    const unsigned r_init = threadIdx.x / cpr, c_init = threadIdx.x - r_init * cpr;
    const unsigned dr = blockDim.x / cpr, dc = blockDim.x - dr * cpr;
    const int64_t xrow_bytes = a.x_stride * ES;

    auto stage = [&](int64_t tile, int buf) {
        const int64_t row0 = tile * R;
        const int64_t left = a.rows - row0;
        const unsigned rv = left < (int64_t)R ? (unsigned)left : R;
        const char *src = (const char *)a.x + row0 * xrow_bytes;
        const uint32_t dst = ptx_smem_addr(rotq_qt_smem + buf * stage_bytes);
        unsigned r = r_init, c = c_init;
        while (r < rv) {
            ptx_cp_async_16(dst + r * row_bytes + c * 16u, src + r * xrow_bytes + c * 16u);
            r += dr;
            c += dc;
            if (c >= cpr) c -= cpr, r++;
        }
    };

    rotq_qt_stage_src<ES> s;
    s.row_bytes = row_bytes;
    s.dtype = a.in_dtype;
    int buf = 0;
    if ((int64_t)blockIdx.x < ntiles) stage(blockIdx.x, 0);
    ptx_cp_async_commit();
    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x, buf ^= 1) {
        __syncthreads(); // the other buffer's tile has been quantized
        if (tile + gridDim.x < ntiles) stage(tile + gridDim.x, buf ^ 1);
        ptx_cp_async_commit();
        ptx_cp_async_wait<1>();
        __syncthreads();
        const int64_t row0 = tile * R;
        const int64_t left = a.rows - row0;
        s.base = rotq_qt_smem + buf * stage_bytes;
        rotq_qt_tile<KIND>(a, s, row0, left < (int64_t)R ? (unsigned)left : R, red, nullptr);
    }
    ptx_cp_async_wait<0>();
}

template <int KIND, int ES>
static rotq_status rotq_qt_plain_launch(rotq_q_args a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    static unsigned long long occupancy[64];
    static int optin[64];
    const void *kernel = (const void *)rotq_qt_plain_kernel<KIND, ES>;
    const int64_t row_bytes = a.cols * ES;
    const int lpg = KIND == ROTQ_QUANT_INT4_GROUP ? a.group / (8 * rotq_qt_stage_src<ES>::I4_CPL) : 1;
    a.nch = (int32_t)(a.cols / 8);
    a.ts_log = rotq_qt_ts_log(a.nch, ROTQ_QT_THREADS, lpg);
    const int64_t teams = ROTQ_QT_THREADS >> a.ts_log;
    // Rows per tile: whole team passes, about STAGE_TARGET bytes, and no more
    // than an even share of the rows over the SMs (small inputs: more blocks).
    int64_t passes = ROTQ_QT_STAGE_TARGET / (teams * row_bytes);
    if (passes < 1) passes = 1;
    const int64_t share = (a.rows + dev->sm_count - 1) / dev->sm_count;
    const int64_t share_passes = (share + teams - 1) / teams;
    if (passes > share_passes) passes = share_passes;
    if (passes < 1) passes = 1;
    int64_t R = teams * passes;
    if (R * row_bytes > ROTQ_QT_STAGE_MAX) { // wide teams of long rows: fewer rows, idle teams
        R = ROTQ_QT_STAGE_MAX / row_bytes;
        passes = 1;
    }
    a.tile_rows = (int32_t)R;
    a.passes = (int32_t)passes;
    const size_t smem = (size_t)(2 * R * row_bytes);
    const int device = dev->device; // resolved once per call by the entry point
    rotq_status st = rotq_cuda_smem_optin(kernel, smem, 1024, &optin[device & 63], dev); // 1 KB: static red
    if (st != ROTQ_OK) return st;
    const int64_t ntiles = (a.rows + R - 1) / R;
    int64_t grid = (int64_t)rotq_qt_per_sm(kernel, ROTQ_QT_THREADS, smem, &occupancy[device & 63]) * dev->sm_count;
    if (grid > ntiles) grid = ntiles;
    if (grid < 1) return ROTQ_OK;
    rotq_qt_plain_kernel<KIND, ES><<<(unsigned)grid, ROTQ_QT_THREADS, smem, stream>>>(a);
    return rotq_cuda_check_launch();
}

// The tile path takes rows of whole 8-element chunks with 16-byte aligned row
// starts, aligned code words, and rows of at most STAGE_MAX bytes.
static bool rotq_qt_plain_fits(int kind, const rotq_q_args &a) {
    const int es = a.in_dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    if (!a.vec_x || !a.vec_q || a.cols % 8 != 0 || a.cols * es > ROTQ_QT_STAGE_MAX || a.rows < 1) return false;
    if (kind == ROTQ_QUANT_INT4_GROUP && (a.group < 32 || a.group > 128)) return false; // quantize_tile_i4.cuh
    return true;
}

template <int KIND>
static rotq_status rotq_qt_plain_es(const rotq_q_args &a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    if (a.in_dtype == ROTQ_DTYPE_F32) return rotq_qt_plain_launch<KIND, 4>(a, stream, dev);
    return rotq_qt_plain_launch<KIND, 2>(a, stream, dev);
}

rotq_status rotq_q_launch_plain(int kind, rotq_q_args a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    if (rotq_qt_plain_fits(kind, a)) {
        switch (kind) {
        case ROTQ_QUANT_INT8_ROW: return rotq_qt_plain_es<ROTQ_QUANT_INT8_ROW>(a, stream, dev);
        case ROTQ_QUANT_FP8_ROW: return rotq_qt_plain_es<ROTQ_QUANT_FP8_ROW>(a, stream, dev);
        case ROTQ_QUANT_FP8_TENSOR: return rotq_qt_plain_es<ROTQ_QUANT_FP8_TENSOR>(a, stream, dev);
        case ROTQ_QUANT_INT4_GROUP: return rotq_qt_plain_es<ROTQ_QUANT_INT4_GROUP>(a, stream, dev);
        default: return ROTQ_ERR_NOT_SUPPORTED;
        }
    }
    switch (kind) {
    case ROTQ_QUANT_INT8_ROW: return rotq_q_plain_es<ROTQ_QUANT_INT8_ROW>(a, stream);
    case ROTQ_QUANT_FP8_ROW: return rotq_q_plain_es<ROTQ_QUANT_FP8_ROW>(a, stream);
    case ROTQ_QUANT_FP8_TENSOR: return rotq_q_plain_es<ROTQ_QUANT_FP8_TENSOR>(a, stream);
    case ROTQ_QUANT_INT4_GROUP: return rotq_q_plain_es<ROTQ_QUANT_INT4_GROUP>(a, stream);
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
