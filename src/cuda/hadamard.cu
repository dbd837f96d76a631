// Host side of the CUDA Hadamard transform: picks the kernel for the size,
// checks what vector access the pointers and strides allow, launches.
// Arguments were validated by the API layer (src/api/hadamard.c).
#include <string.h>

#include "hadamard_factor.cuh"

static int rotq_dtype_size(int dtype) { return dtype == ROTQ_DTYPE_F32 ? 4 : 2; }
static int rotq_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

static rotq_status rotq_set_smem(const void *kernel, size_t smem, const rotq_cuda_device_info *dev) {
    if (smem > (size_t)dev->max_smem_optin) return ROTQ_ERR_NOT_SUPPORTED;
    if (smem > 48 * 1024 &&
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess) {
        cudaGetLastError();
        return ROTQ_ERR_CUDA;
    }
    return ROTQ_OK;
}

template <int L, int ES>
static rotq_status rotq_launch_pow2(const rotq_had_args &a, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    const int64_t total = a.groups << L;
    if (L <= 5) {
        const int64_t grid = (total + 32 * 256 - 1) / (32 * 256);
        rotq_had_pow2_small<L, ES><<<(unsigned)grid, 256, 0, stream>>>(a);
    } else {
        typedef rotq_pow2_plan<L> plan;
        const int64_t subtiles = (total + plan::TILE - 1) / plan::TILE;
        const int64_t grid = (subtiles + plan::SUBTILES - 1) / plan::SUBTILES;
        const size_t smem = (size_t)plan::TILE * plan::SUBTILES * sizeof(float);
        rotq_status st = rotq_set_smem((const void *)rotq_had_pow2_tiled<L, ES>, smem, dev);
        if (st != ROTQ_OK) return st;
        rotq_had_pow2_tiled<L, ES><<<(unsigned)grid, plan::THREADS, smem, stream>>>(a);
    }
    return rotq_cuda_check_launch();
}

template <int L, int ES>
static rotq_status rotq_launch_factor(const rotq_had_args &a, const rotq_had_factor &f, cudaStream_t stream,
                                      const rotq_cuda_device_info *dev) {
    typedef rotq_pow2_plan<L> plan;
    const int G = f.groups_per_block;
    const int64_t elems = (int64_t)G * a.n;
    const int64_t w_elems = (elems + plan::TILE * plan::SUBTILES - 1) / (plan::TILE * plan::SUBTILES) *
                            (plan::TILE * plan::SUBTILES);
    const size_t smem = (size_t)f.kt * f.kt * 512 + (size_t)((elems * ES + 15) & ~15) + (size_t)w_elems * 4;
    rotq_status st = rotq_set_smem((const void *)rotq_had_factor_kernel<L, ES>, smem, dev);
    if (st != ROTQ_OK) return st;
    const int64_t grid = (a.groups + G - 1) / G;
    rotq_had_factor_kernel<L, ES><<<(unsigned)grid, 256, smem, stream>>>(a, f);
    return rotq_cuda_check_launch();
}

#define ROTQ_POW2_CASE(L)                                                                                    \
    case L:                                                                                                  \
        return es == 4 ? rotq_launch_pow2<L, 4>(a, stream, dev) : rotq_launch_pow2<L, 2>(a, stream, dev);
#define ROTQ_FACTOR_CASE(L)                                                                                  \
    case L:                                                                                                  \
        return es == 4 ? rotq_launch_factor<L, 4>(a, f, stream, dev) : rotq_launch_factor<L, 2>(a, f, stream, dev);

static rotq_status rotq_dispatch_pow2(int L, int es, const rotq_had_args &a, cudaStream_t stream,
                                      const rotq_cuda_device_info *dev) {
    switch (L) {
        ROTQ_POW2_CASE(0) ROTQ_POW2_CASE(1) ROTQ_POW2_CASE(2) ROTQ_POW2_CASE(3) ROTQ_POW2_CASE(4)
        ROTQ_POW2_CASE(5) ROTQ_POW2_CASE(6) ROTQ_POW2_CASE(7) ROTQ_POW2_CASE(8) ROTQ_POW2_CASE(9)
        ROTQ_POW2_CASE(10) ROTQ_POW2_CASE(11) ROTQ_POW2_CASE(12) ROTQ_POW2_CASE(13) ROTQ_POW2_CASE(14)
        ROTQ_POW2_CASE(15)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}

static rotq_status rotq_dispatch_factor(int L, int es, const rotq_had_args &a, const rotq_had_factor &f,
                                        cudaStream_t stream, const rotq_cuda_device_info *dev) {
    switch (L) {
        ROTQ_FACTOR_CASE(0) ROTQ_FACTOR_CASE(1) ROTQ_FACTOR_CASE(2) ROTQ_FACTOR_CASE(3) ROTQ_FACTOR_CASE(4)
        ROTQ_FACTOR_CASE(5) ROTQ_FACTOR_CASE(6) ROTQ_FACTOR_CASE(7) ROTQ_FACTOR_CASE(8) ROTQ_FACTOR_CASE(9)
        ROTQ_FACTOR_CASE(10) ROTQ_FACTOR_CASE(11)
    default: return ROTQ_ERR_NOT_SUPPORTED; // n = K * 2^L > 32768 does not fit in shared memory
    }
}

extern "C" rotq_status rotq__cuda_hadamard(const rotq_exec *exec, const rotq__hadamard_plan *plan,
                                           const rotq_matrix *x, const rotq_matrix *y) {
    rotq_status st = ROTQ_OK;
    const rotq_cuda_device_info *dev = rotq_cuda_current_device(&st);
    if (!dev) return st;
    const int L = plan->log2_pow2, es = rotq_dtype_size(x->dtype), os = rotq_dtype_size(y->dtype);
    rotq_had_args a;
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
        if (L <= 5) {
            // A thread's 32 elements are contiguous if they are one row block, or
            // if row blocks are packed back to back.
            a.vec_in = rotq_aligned16(x->data) && ((L == 5 && in_rows_aligned) || x->stride == x->cols);
            a.vec_out = rotq_aligned16(y->data) && ((L == 5 && out_rows_aligned) || y->stride == y->cols);
        } else {
            a.vec_in = in_rows_aligned;
            a.vec_out = 0; // the tiled kernels store one element per lane, coalesced
        }
        return rotq_dispatch_pow2(L, es, a, stream, dev);
    }

    rotq_had_factor fl; // copied into the launch parameters
    int words = 0;
    const uint32_t *bits = rotq__factor_bits(plan->k, &words);
    if (!bits || plan->k * words > ROTQ_FACTOR_MAX_WORDS) return ROTQ_ERR_NOT_SUPPORTED;
    fl.k = plan->k;
    fl.kt = (plan->k + 15) / 16;
    fl.words = words;
    fl.transpose = plan->transpose_k != 0;
    fl.f16_mma = x->dtype == ROTQ_DTYPE_F16;
    memcpy(fl.bits, bits, sizeof(uint32_t) * plan->k * words);
    // G row blocks per block: about 8192 elements, and G * 2^L a multiple of 8.
    const int gmin = L >= 3 ? 1 : 8 >> L;
    int G = (8192 / a.n) / gmin * gmin;
    if (G < gmin) G = gmin;
    fl.groups_per_block = G;
    a.vec_in = in_rows_aligned;
    a.vec_out = 0;
    return rotq_dispatch_factor(L, es, a, fl, stream, dev);
}
