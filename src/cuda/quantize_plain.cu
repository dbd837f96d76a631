// Quantize without rotation: a team of threads per row reads the row from
// global memory into registers (16-byte loads when aligned) and quantizes it
// (quantize_row.cuh). Rows of up to 1024 elements go to teams of 8..32 lanes,
// several rows per block; longer rows get a block each. Per-row kinds read a
// row once when it fits one window (up to 512 threads x 32 values = 16384
// elements), else twice (the second read mostly from L2).
#include "quantize_launch.cuh"
#include "quantize_row.cuh"

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

rotq_status rotq_q_launch_plain(int kind, rotq_q_args a, cudaStream_t stream) {
    switch (kind) {
    case ROTQ_QUANT_INT8_ROW: return rotq_q_plain_es<ROTQ_QUANT_INT8_ROW>(a, stream);
    case ROTQ_QUANT_FP8_ROW: return rotq_q_plain_es<ROTQ_QUANT_FP8_ROW>(a, stream);
    case ROTQ_QUANT_FP8_TENSOR: return rotq_q_plain_es<ROTQ_QUANT_FP8_TENSOR>(a, stream);
    case ROTQ_QUANT_INT4_GROUP: return rotq_q_plain_es<ROTQ_QUANT_INT4_GROUP>(a, stream);
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
