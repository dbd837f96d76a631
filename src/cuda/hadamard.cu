// Host side of the CUDA Hadamard transform: picks the kernel for the size,
// checks what vector access the pointers and strides allow, launches; and the
// workspace query, which runs the same dispatch without launching.
// Arguments were validated by the API layer (src/api/hadamard.c).
#include <math.h>
#include <string.h>

#include "hadamard_kcols.cuh"
#include "hadamard_launch.cuh"
#include "workspace.cuh"

static int rotq_dtype_size(int dtype) { return dtype == ROTQ_DTYPE_F32 ? 4 : 2; }
static int rotq_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// n = K * 2^L too large for one pass through shared memory (W of a row with
// n > 32768 past the SM's shared memory: K >= 52 at 2^10, or 2^L > 2^11): the
// power-of-two kernel over blocks of 2^L (orthonormal, signs applied) writes an
// fp32 buffer, then the column-tile pass applies H_K with the remaining scale
// into y. The buffer (rows in chunks, workspace.cuh) is the caller's workspace,
// or comes from the stream-ordered pool (cudaMallocAsync, which CUDA graphs can
// capture) and is freed on the stream before returning. The chunking does not
// change the results: every row is transformed alike.
static rotq_status rotq_hadamard_two_pass(const rotq_exec *exec, const rotq_had_args &a,
                                          const rotq__hadamard_plan *plan, rotq_had_factor &f, int64_t rows,
                                          int64_t cols, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    const int L = plan->log2_pow2, es = rotq_dtype_size(a.in_dtype), os = rotq_dtype_size(a.out_dtype);
    float *buf = NULL;
    int64_t chunk = 0;
    int pooled = 0;
    rotq_status st = rotq_ws_acquire(exec, rows, cols, 1, stream, &buf, &chunk, &pooled);
    if (st != ROTQ_OK) return st;
    const float pow2_scale = (float)(1.0 / sqrt((double)(1 << L)));
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
    return rotq_ws_release(buf, pooled, stream, st);
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
    fl->parts = 1;     // the fragment kernel's launcher decides (rotq_launch_frag)
    fl->part_rows = plan->k;
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

// Kernel arguments of the transform, with the vector access the pointers and
// strides allow (the K = 1 path refines vec_in / vec_out itself).
static void rotq_hadamard_args(const rotq__hadamard_plan *plan, const rotq_matrix *x, const rotq_matrix *y,
                               rotq_had_args *a, int *in_rows_aligned, int *out_rows_aligned) {
    const int es = rotq_dtype_size(x->dtype), os = rotq_dtype_size(y->dtype);
    memset(a, 0, sizeof *a);
    a->x = x->data;
    a->y = y->data;
    a->x_stride = x->stride;
    a->y_stride = y->stride;
    a->blocks_per_row = x->cols / plan->size;
    a->groups = x->rows * a->blocks_per_row;
    a->n = plan->size;
    a->in_dtype = x->dtype;
    a->out_dtype = y->dtype;
    a->scale = plan->scale;
    a->signs = plan->signs;
    *in_rows_aligned = rotq_aligned16(x->data) && (x->stride * es) % 16 == 0 && (a->n * es) % 16 == 0;
    *out_rows_aligned = rotq_aligned16(y->data) && (y->stride * os) % 16 == 0 && (a->n * os) % 16 == 0;
}

// The power-of-two transform (K = 1): one kernel, no scratch. The latency kernel
// or the persistent one by the element count of select_rows rows (x->rows but
// for the chunks of a larger call: the two kernels round the scale differently).
static rotq_status rotq_hadamard_pow2(rotq_had_args a, const rotq_matrix *x, const rotq_matrix *y,
                                      int in_rows_aligned, int out_rows_aligned, int L, int64_t select_rows,
                                      cudaStream_t stream, const rotq_cuda_device_info *dev) {
    const int es = rotq_dtype_size(x->dtype);
    if (rotq_had_small_fits(L, (select_rows * a.blocks_per_row) << L)) {
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
    // Vector output only for the sizes that use it (rotq_pow2_uses_vec_out).
    a.vec_in = in_rows_aligned || (rotq_aligned16(x->data) && x->stride == x->cols);
    a.vec_out = rotq_pow2_uses_vec_out(L) &&
                (out_rows_aligned || (rotq_aligned16(y->data) && y->stride == y->cols));
    return es == 4 ? rotq_dispatch_pow2_es4(L, a, stream, dev) : rotq_dispatch_pow2_es2(L, a, stream, dev);
}

// The whole dispatch of rotq__cuda_hadamard. With dry set it launches nothing
// and allocates nothing: it runs the same decisions (the factor kernel's
// launchers stop before their launch) and reports in *two_pass whether the call
// takes the two-pass path, which is the only one that needs scratch; that is
// how the workspace query and the launch agree. ROTQ_ERR_NOT_SUPPORTED where
// the launch would return it (dry or not).
static rotq_status rotq_hadamard_dispatch(const rotq_exec *exec, const rotq__hadamard_plan *plan,
                                          const rotq_matrix *x, const rotq_matrix *y,
                                          const rotq_cuda_device_info *dev, int64_t select_rows, bool dry,
                                          int *two_pass) {
    const int L = plan->log2_pow2;
    rotq_had_args a;
    int in_rows_aligned = 0, out_rows_aligned = 0;
    rotq_hadamard_args(plan, x, y, &a, &in_rows_aligned, &out_rows_aligned);
    cudaStream_t stream = dry ? (cudaStream_t)0 : rotq_cuda_stream(exec);
    if (two_pass) *two_pass = 0;

    if (plan->k == 1) {
        if (dry) return ROTQ_OK; // one kernel, never scratch
        return rotq_hadamard_pow2(a, x, y, in_rows_aligned, out_rows_aligned, L, select_rows, stream, dev);
    }

    rotq_had_factor fl; // copied into the launch parameters
    rotq_status st0 = rotq_factor_init(plan, x->dtype, &fl);
    if (st0 != ROTQ_OK) return st0;
    a.vec_in = in_rows_aligned;
    a.vec_out = 0;
    a.y_packed = y->stride == y->cols;
    const int es = rotq_dtype_size(x->dtype);
    if (es == 2) {
        // K <= 64 at 2^8 .. 2^10 on sm_90 with TMA: the fragment kernel.
        const rotq_status sf = rotq_dispatch_frag_es2(L, a, fl, stream, dev, dry);
        if (sf != ROTQ_ERR_NOT_SUPPORTED) return sf;
        // K >= 12 at 2^6, 2^7 on sm_90a with TMA: the warpgroup kernel.
        const rotq_status sw = rotq_dispatch_wg_es2(L, a, fl, stream, dev, dry);
        if (sw != ROTQ_ERR_NOT_SUPPORTED) return sw;
    }
    rotq_status st1 = es == 4 ? rotq_dispatch_factor_es4(L, a, fl, stream, dev, dry)
                              : rotq_dispatch_factor_es2(L, a, fl, stream, dev, dry);
    if (st1 != ROTQ_ERR_NOT_SUPPORTED) return st1;
    if ((1 << L) < ROTQ_KCOLS_WIDTH) return ROTQ_ERR_NOT_SUPPORTED; // no column-tile pass that narrow
    if (dry) {
        *two_pass = 1;
        return ROTQ_OK;
    }
    return rotq_hadamard_two_pass(exec, a, plan, fl, x->rows, x->cols, stream, dev);
}

rotq_status rotq_hadamard_takes_two_pass(const rotq__hadamard_plan *plan, const rotq_matrix *x, const rotq_matrix *y,
                                         const rotq_cuda_device_info *dev, int *two_pass) {
    return rotq_hadamard_dispatch(NULL, plan, x, y, dev, x->rows, true, two_pass);
}

rotq_status rotq_hadamard_chunk(const rotq_exec *exec, const rotq__hadamard_plan *plan, const rotq_matrix *x,
                                const rotq_matrix *y, const rotq_cuda_device_info *dev, int64_t select_rows) {
    return rotq_hadamard_dispatch(exec, plan, x, y, dev, select_rows, false, NULL);
}

extern "C" rotq_status rotq__cuda_hadamard(const rotq_exec *exec, const rotq__hadamard_plan *plan,
                                           const rotq_matrix *x, const rotq_matrix *y) {
    rotq_status st = ROTQ_OK;
    const rotq_cuda_device_info *dev = rotq_cuda_current_device(&st);
    if (!dev) return st;
    return rotq_hadamard_dispatch(exec, plan, x, y, dev, x->rows, false, NULL);
}

extern "C" rotq_status rotq__cuda_hadamard_workspace(const rotq__hadamard_plan *plan, const rotq_matrix *x,
                                                     const rotq_matrix *y, rotq__workspace_need *need) {
    need->preferred = need->minimum = 0;
    rotq_status st = ROTQ_OK;
    const rotq_cuda_device_info *dev = rotq_cuda_current_device(&st);
    if (!dev) return st;
    int two_pass = 0;
    st = rotq_hadamard_takes_two_pass(plan, x, y, dev, &two_pass);
    if (st == ROTQ_ERR_NOT_SUPPORTED) return ROTQ_OK; // the call fails before it would need anything
    if (st != ROTQ_OK) return st;
    if (two_pass) *need = rotq_ws_need(x->rows, x->cols, 1);
    return ROTQ_OK;
}
