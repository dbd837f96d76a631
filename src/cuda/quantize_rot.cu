// Fused rotation + quantize for power-of-two rotations (K = 1, n = 2^L <= 32768).
//
// A block owns rot_rows whole rows. It reads them once from global memory
// (16-byte loads when aligned), applies the signs, converts to fp32 and stores
// them into W (shared, padded, rows w_stride elements apart); transforms every
// n-block of W in place (quantize_fwht.cuh: the CPU's stage order, then
// * scale); then teams quantize the rows from W (quantize_row.cuh, one chunk
// per thread at a time: re-reading W is cheap, registers are not) exactly as
// the CPU does from its fp32 row.
//   rows of up to 1024 elements: 256 threads, teams of 8..32 lanes, about 8192
//     floats of W per block;
//   longer rows: one row per block, cols / 32 threads (64 .. 512).
// A row whose W does not fit the device's shared memory (more than about 54K
// elements on H100, 39K on A100) returns ROTQ_ERR_NOT_SUPPORTED, and quantize.cu
// then takes the unfused path (quantize_rot_factor.cu), as it does for every
// rotation with a factor K > 1.
//
// Rows that are a power of two of 8 .. TILE_CTA elements with aligned rows and
// codes take the pipelined tile kernels instead (quantize_rot_tile.cuh).
#include "hadamard_io.cuh"
#include "quantize_fwht.cuh"
#include "quantize_launch.cuh"
#include "quantize_row.cuh"

rotq_status rotq_qt_rot_dispatch_es2(int L, const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t s,
                                     const rotq_cuda_device_info *d);
rotq_status rotq_qt_rot_dispatch_es4(int L, const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t s,
                                     const rotq_cuda_device_info *d);

// The tile path; ROTQ_ERR_NOT_SUPPORTED when the shape does not fit it.
static rotq_status rotq_qt_rot_try(int kind, rotq_q_args a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    const int64_t cols = a.cols;
    if (!a.vec_x || !a.vec_q || cols < 8 || (cols & (cols - 1)) != 0 || a.rows < 1 || a.log2n > 15)
        return ROTQ_ERR_NOT_SUPPORTED;
    int cl = 0;
    while ((INT64_C(1) << cl) < cols) cl++;
    a.kind = kind;
    a.cols_log = cl;
    uint32_t sb;
    memcpy(&sb, &a.rot_scale, sizeof sb);
    sb &= 0x7fffffffu;
    a.scale_mode = sb > 0x3f800000u ? ROTQ_QT_SCALE_LARGE
                   : (sb & 0x007fffffu) == 0 && sb >= 0x00800000u ? ROTQ_QT_SCALE_POW2
                                                                 : ROTQ_QT_SCALE_SMALL;
    rotq_had_args h;
    memset(&h, 0, sizeof h);
    h.x = a.x;
    h.x_stride = a.x_stride;
    h.n = 1 << a.log2n;
    h.blocks_per_row = cols >> a.log2n;
    h.groups = a.rows * h.blocks_per_row;
    h.in_dtype = a.in_dtype;
    h.out_dtype = a.in_dtype;
    h.scale = a.rot_scale;
    h.signs = a.signs;
    h.vec_in = 1;
    return a.in_dtype == ROTQ_DTYPE_F32 ? rotq_qt_rot_dispatch_es4(a.log2n, a, h, stream, dev)
                                        : rotq_qt_rot_dispatch_es2(a.log2n, a, h, stream, dev);
}

// Chunks of one row of W (row-local element offset off, a multiple of 8, so
// the 8 elements of a chunk are 8 consecutive floats at rotq_q_pad(e0)).
struct rotq_q_wsrc {
    const float *W;
    unsigned off;
    int64_t cols;
    __device__ __forceinline__ void load(int64_t c, float v[8]) const {
        if (c * 8 >= cols) {
#pragma unroll
            for (int i = 0; i < 8; i++) v[i] = 0.0f;
            return;
        }
        const float *p = W + rotq_q_pad(off + (unsigned)c * 8u);
#pragma unroll
        for (int i = 0; i < 8; i++) v[i] = p[i];
    }
};

// Fills W: rows row0 .. row0 + rot_rows - 1 (signed, fp32), zeros elsewhere
// (row padding, rows past the matrix, the tail up to w_elems). Four chunks
// of 8 per thread in flight.
template <int ES>
__device__ __forceinline__ void rotq_q_stage(const rotq_q_args &a, float *W, int64_t row0) {
    const unsigned cpr = (unsigned)a.w_stride / 8;
    const unsigned loaded = (unsigned)a.rot_rows * cpr;
    const unsigned total = (unsigned)a.w_elems / 8;
    for (unsigned i0 = threadIdx.x; i0 < total; i0 += 4 * blockDim.x) {
        float v[4][8];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const unsigned idx = i0 + k * blockDim.x;
#pragma unroll
            for (int i = 0; i < 8; i++) v[k][i] = 0.0f;
            if (idx < loaded) {
                const unsigned rl = idx / cpr;
                const int64_t j = (int64_t)(idx - rl * cpr) * 8;
                const int64_t row = row0 + rl;
                if (row < a.rows && j < a.cols) {
                    rotq_q_load8<ES>((const char *)a.x + row * a.x_stride * ES, j, a.cols, a.in_dtype, a.vec_x, v[k]);
                    if (a.signs) rotq_q_signs8(a.signs, j, a.cols, a.vec_signs, v[k]);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const unsigned idx = i0 + k * blockDim.x;
            if (idx < total) {
                float *p = W + rotq_q_pad(idx * 8u);
#pragma unroll
                for (int i = 0; i < 8; i++) p[i] = v[k][i];
            }
        }
    }
}

template <int KIND>
__device__ __forceinline__ void rotq_q_rot_rows(const rotq_q_args &a, const float *W, int64_t row0, uint32_t *red) {
    const unsigned ts = (unsigned)a.team, teams = blockDim.x / ts;
    const unsigned team = threadIdx.x / ts, t = threadIdx.x - team * ts;
    // rot_rows is a multiple of teams: every lane of a warp makes the same trips.
    for (unsigned rl = team; rl < (unsigned)a.rot_rows; rl += teams) {
        const int64_t row = row0 + rl;
        rotq_q_wsrc src;
        src.W = W;
        src.off = rl * (unsigned)a.w_stride;
        src.cols = a.cols;
        rotq_q_row<KIND, 1>(a, src, row, row < a.rows, t, ts, red);
    }
}

template <int ES>
__global__ void __launch_bounds__(512) rotq_q_rot_kernel(rotq_q_args a, int kind) {
    extern __shared__ __align__(16) float rotq_q_w[];
    __shared__ uint32_t red[32];
    const int64_t row0 = (int64_t)blockIdx.x * a.rot_rows;
    rotq_q_stage<ES>(a, rotq_q_w, row0);
    __syncthreads();
    rotq_q_fwht(rotq_q_w, (unsigned)a.w_elems, a.log2n, a.rot_scale);
    switch (kind) {
    case ROTQ_QUANT_INT8_ROW: rotq_q_rot_rows<ROTQ_QUANT_INT8_ROW>(a, rotq_q_w, row0, red); break;
    case ROTQ_QUANT_FP8_ROW: rotq_q_rot_rows<ROTQ_QUANT_FP8_ROW>(a, rotq_q_w, row0, red); break;
    case ROTQ_QUANT_FP8_TENSOR: rotq_q_rot_rows<ROTQ_QUANT_FP8_TENSOR>(a, rotq_q_w, row0, red); break;
    default: rotq_q_rot_rows<ROTQ_QUANT_INT4_GROUP>(a, rotq_q_w, row0, red); break;
    }
}

rotq_status rotq_q_launch_rot(int kind, rotq_q_args a, cudaStream_t stream, const rotq_cuda_device_info *dev,
                              bool dry) {
    // dry (the workspace query) decides on the kernel below alone. The tile
    // kernels take only rows of at most TILE_CTA elements (8192 .. 32768) and
    // need more shared memory for them than this kernel does (W of TILE_CTA
    // floats and a stage, against W of at most max(8192, cols) floats), so
    // where this one returns ROTQ_ERR_NOT_SUPPORTED they do too: it alone
    // decides whether the call goes on to quantize.cu's two-step path.
    if (!dry) {
        const rotq_status tst = rotq_qt_rot_try(kind, a, stream, dev);
        if (tst != ROTQ_ERR_NOT_SUPPORTED) return tst;
    }
    const int64_t n = (int64_t)1 << a.log2n;
    const int64_t ws = (a.cols + 7) / 8 * 8; // a multiple of n too: n | cols, and n < 8 divides 8
    const int64_t nch = ws / 8;
    if (ws > (int64_t)dev->max_smem_optin / 4) return ROTQ_ERR_NOT_SUPPORTED; // also keeps W indices 32-bit
    int threads;
    int64_t rows_per_block;
    if (nch <= 32 * ROTQ_Q_NCH) {
        int64_t ts = rotq_q_pow2_ceil((nch + ROTQ_Q_NCH - 1) / ROTQ_Q_NCH);
        const int64_t min_ts = kind == ROTQ_QUANT_INT4_GROUP && a.group / 8 > 8 ? a.group / 8 : 8;
        if (ts < min_ts) ts = min_ts;
        if (ts > 32) ts = 32;
        threads = 256;
        const int64_t teams = threads / ts;
        int64_t per_team = 8192 / (teams * ws);
        if (per_team < 1) per_team = 1;
        const int64_t need = (a.rows + teams - 1) / teams; // no more rows than the matrix has
        if (per_team > need) per_team = need;
        a.team = (int32_t)ts;
        rows_per_block = teams * per_team;
    } else {
        // One 32-value slot per thread per phase up to 512 threads (16384 floats).
        int64_t t = (ws / 32 + 31) / 32 * 32;
        threads = (int)(t < 64 ? 64 : t > 512 ? 512 : t);
        a.team = threads;
        rows_per_block = 1;
    }
    const int64_t unit = n > 32 ? n : 32;
    const int64_t w_elems = (rows_per_block * ws + unit - 1) / unit * unit;
    const size_t smem = (size_t)(w_elems + w_elems / 32) * sizeof(float); // with the padding
    a.rot_rows = (int32_t)rows_per_block;
    a.w_stride = (int32_t)ws;
    a.w_elems = (int32_t)w_elems;
    const int64_t grid = (a.rows + rows_per_block - 1) / rows_per_block;
    if (grid > 0x7fffffff) return ROTQ_ERR_NOT_SUPPORTED;
    // W above 47 KB needs the opt-in (1 KB: the static scratch); per kernel and device.
    static int optin4[64], optin2[64];
    rotq_status st;
    if (a.in_dtype == ROTQ_DTYPE_F32) {
        st = rotq_cuda_smem_optin((const void *)rotq_q_rot_kernel<4>, smem, 1024, &optin4[dev->device & 63], dev);
        if (st != ROTQ_OK || dry) return st;
        rotq_q_rot_kernel<4><<<(unsigned)grid, threads, smem, stream>>>(a, kind);
    } else {
        st = rotq_cuda_smem_optin((const void *)rotq_q_rot_kernel<2>, smem, 1024, &optin2[dev->device & 63], dev);
        if (st != ROTQ_OK || dry) return st;
        rotq_q_rot_kernel<2><<<(unsigned)grid, threads, smem, stream>>>(a, kind);
    }
    return rotq_cuda_check_launch();
}
