// Host side of the CUDA Hadamard transform: picks the kernel for the size,
// checks what vector access the pointers and strides allow, launches.
// Arguments were validated by the API layer (src/api/hadamard.c).
#include <math.h>
#include <string.h>

#include "hadamard_kcols.cuh"
#include "hadamard_launch.cuh"

static int rotq_dtype_size(int dtype) { return dtype == ROTQ_DTYPE_F32 ? 4 : 2; }
static int rotq_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// Bytes of the temporary fp32 buffer of the two-pass transform (rows are
// processed in chunks that fit in it).
#define ROTQ_TWO_PASS_BUFFER ((size_t)64 << 20)

// n = K * 2^L too large for one pass through shared memory (W of a row with
// n > 32768 past the SM's shared memory: K >= 52 at 2^10, or 2^L > 2^11): the
// power-of-two kernel over blocks of 2^L (orthonormal, signs applied) writes an
// fp32 buffer, then the column-tile pass applies H_K with the remaining scale
// into y. The buffer comes from the stream-ordered pool (cudaMallocAsync, which
// CUDA graphs can capture) and is freed on the stream before returning.
static rotq_status rotq_hadamard_two_pass(const rotq_had_args &a, const rotq__hadamard_plan *plan, rotq_had_factor &f,
                                          int64_t rows, int64_t cols, cudaStream_t stream,
                                          const rotq_cuda_device_info *dev) {
    const int L = plan->log2_pow2, es = rotq_dtype_size(a.in_dtype), os = rotq_dtype_size(a.out_dtype);
    if ((1 << L) < ROTQ_KCOLS_WIDTH) return ROTQ_ERR_NOT_SUPPORTED;
    int64_t chunk = (int64_t)(ROTQ_TWO_PASS_BUFFER / ((size_t)cols * 4));
    if (chunk < 1) chunk = 1;
    if (chunk > rows) chunk = rows;
    float *buf = NULL;
    if (cudaMallocAsync((void **)&buf, (size_t)chunk * cols * 4, stream) != cudaSuccess) {
        cudaGetLastError();
        return ROTQ_ERR_CUDA;
    }
    const float pow2_scale = (float)(1.0 / sqrt((double)(1 << L)));
    rotq_status st = ROTQ_OK;
    for (int64_t r0 = 0; r0 < rows && st == ROTQ_OK; r0 += chunk) {
        const int64_t nr = rows - r0 < chunk ? rows - r0 : chunk;
        rotq_had_args p1 = a;
        p1.x = (const char *)a.x + r0 * a.x_stride * es;
        p1.y = buf;
        p1.y_stride = cols;
        p1.out_dtype = ROTQ_DTYPE_F32;
        p1.n = 1 << L;
        p1.blocks_per_row = cols >> L;
        p1.groups = nr * p1.blocks_per_row;
        p1.scale = pow2_scale;
        p1.vec_in = (int)(((uintptr_t)p1.x & 15u) == 0 && (a.x_stride * es) % 16 == 0);
        p1.vec_out = 0;
        st = es == 4 ? rotq_dispatch_pow2_es4(L, p1, stream, dev) : rotq_dispatch_pow2_es2(L, p1, stream, dev);
        if (st != ROTQ_OK) break;
        rotq_had_args p2 = a;
        p2.x = buf;
        p2.x_stride = cols;
        p2.in_dtype = ROTQ_DTYPE_F32;
        p2.y = (char *)a.y + r0 * a.y_stride * os;
        p2.groups = nr * a.blocks_per_row;
        p2.signs = NULL;
        p2.scale = plan->scale / pow2_scale;
        p2.vec_in = 1; // the buffer: aligned, rows of 16-byte multiples
        f.f16_mma = 0;
        st = rotq_launch_kcols(4, p2, L, f, stream, dev);
    }
    if (cudaFreeAsync(buf, stream) != cudaSuccess) {
        cudaGetLastError();
        if (st == ROTQ_OK) st = ROTQ_ERR_CUDA;
    }
    return st;
}

rotq_status rotq_factor_init(const rotq__hadamard_plan *plan, int in_dtype, rotq_had_factor *fl) {
    int words = 0;
    const uint32_t *bits = rotq__factor_bits(plan->k, &words);
    if (!bits || plan->k * words > ROTQ_FACTOR_MAX_WORDS) return ROTQ_ERR_NOT_SUPPORTED;
    const int L = plan->log2_pow2, n = plan->size;
    fl->k = plan->k;
    fl->kt = (plan->k + 15) / 16;
    fl->words = words;
    fl->transpose = plan->transpose_k != 0;
    fl->f16_mma = in_dtype == ROTQ_DTYPE_F16;
    fl->stages = 2; // the launcher decides (rotq_factor_staging)
    fl->slice_log = L;
    fl->wgmma = 0; // the launcher decides (rotq_launch_factor)
    fl->krows = plan->k;
    fl->half_rows = 0; // the launcher decides (rotq_factor_half_rows)
    memcpy(fl->bits, bits, sizeof(uint32_t) * plan->k * words);
    // G row blocks per tile: about 8192 elements, and G * 2^L a multiple of the
    // K step's column width (16 for 16-bit inputs, 8 for fp32).
    const int width = rotq_dtype_size(in_dtype) == 2 ? 16 : 8;
    const int gmin = (1 << L) >= width ? 1 : width >> L;
    int G = (8192 / n) / gmin * gmin;
    if (G < gmin) G = gmin;
    fl->groups_per_block = G;
    return ROTQ_OK;
}

extern "C" rotq_status rotq__cuda_hadamard(const rotq_exec *exec, const rotq__hadamard_plan *plan,
                                           const rotq_matrix *x, const rotq_matrix *y) {
    rotq_status st = ROTQ_OK;
    const rotq_cuda_device_info *dev = rotq_cuda_current_device(&st);
    if (!dev) return st;
    const int L = plan->log2_pow2, es = rotq_dtype_size(x->dtype), os = rotq_dtype_size(y->dtype);
    rotq_had_args a = {};
    a.x = x->data;
    a.y = y->data;
    a.x_stride = x->stride;
    a.y_stride = y->stride;
    a.blocks_per_row = x->cols / plan->size;
    a.groups = x->rows * a.blocks_per_row;
    a.n = plan->size;
    a.in_dtype = x->dtype;
    a.out_dtype = y->dtype;
    a.scale = plan->scale;
    a.signs = plan->signs;
    const int in_rows_aligned = rotq_aligned16(x->data) && (x->stride * es) % 16 == 0 && (a.n * es) % 16 == 0;
    const int out_rows_aligned = rotq_aligned16(y->data) && (y->stride * os) % 16 == 0 && (a.n * os) % 16 == 0;
    cudaStream_t stream = rotq_cuda_stream(exec);

    if (plan->k == 1) {
        if (rotq_had_small_fits(L, a.groups << L)) {
            // Decode sizes: the latency kernel (hadamard_small.cuh). A thread's
            // values are 8..32 consecutive elements of a row block (or of packed
            // row blocks), so the 16-byte test is the same for input and output.
            a.vec_in = in_rows_aligned || (rotq_aligned16(x->data) && x->stride == x->cols);
            a.vec_out = out_rows_aligned || (rotq_aligned16(y->data) && y->stride == y->cols);
            const rotq_status small = rotq_dispatch_small(L, a, stream, dev);
            if (small != ROTQ_ERR_NOT_SUPPORTED) return small;
        }
        // 16-byte chunks of a tile are contiguous in memory when rows (row
        // blocks) are 16-byte multiples, or when row blocks are packed back to back.
        // Vector output is used by the sizes that finish in phase-0 layout (n <= 128)
        // and by n = 2^11 .. 2^13 (rotq_pow2_pair_plan).
        a.vec_in = in_rows_aligned || (rotq_aligned16(x->data) && x->stride == x->cols);
        a.vec_out = (L <= 7 || (L >= 11 && L <= 13)) &&
                    (out_rows_aligned || (rotq_aligned16(y->data) && y->stride == y->cols));
        return es == 4 ? rotq_dispatch_pow2_es4(L, a, stream, dev) : rotq_dispatch_pow2_es2(L, a, stream, dev);
    }

    rotq_had_factor fl; // copied into the launch parameters
    rotq_status st0 = rotq_factor_init(plan, x->dtype, &fl);
    if (st0 != ROTQ_OK) return st0;
    a.vec_in = in_rows_aligned;
    a.vec_out = 0;
    a.y_packed = y->stride == y->cols;
    rotq_status st1 = es == 4 ? rotq_dispatch_factor_es4(L, a, fl, stream, dev)
                              : rotq_dispatch_factor_es2(L, a, fl, stream, dev);
    if (st1 != ROTQ_ERR_NOT_SUPPORTED) return st1;
    return rotq_hadamard_two_pass(a, plan, fl, x->rows, x->cols, stream, dev);
}
