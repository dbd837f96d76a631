// Fused power-of-two rotation + quantize for decode sizes (quantize_small.cuh):
// the shape checks and one kernel per L, every input dtype and kind.
#include <string.h>

#include "quantize_launch.cuh"
#include "quantize_small.cuh"

#define CASE(L) \
    case L: return rotq_qs_launch<L>(a, h, stream, dev, dry);

rotq_status rotq_q_launch_small(int kind, rotq_q_args a, cudaStream_t stream, const rotq_cuda_device_info *dev,
                                bool dry) {
    const int64_t cols = a.cols, n = (int64_t)1 << a.log2n;
    if (a.rows < 1 || cols < 8 || (cols & (cols - 1)) != 0 || !a.vec_q || a.log2n > 15 ||
        a.rows * cols > ROTQ_SMALL_MAX_ELEMENTS)
        return ROTQ_ERR_NOT_SUPPORTED;
    int cl = 0;
    while ((INT64_C(1) << cl) < cols) cl++;
    a.kind = kind;
    a.cols_log = cl;
    // As rotq__cuda_hadamard: 16-byte loads of a thread's V consecutive elements
    // (or packed row blocks) when rows or the whole matrix are contiguous and aligned.
    const int es = a.in_dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    const int packed = a.rows == 1 || a.x_stride == cols;
    rotq_had_args h;
    memset(&h, 0, sizeof h);
    h.x = a.x;
    h.x_stride = a.x_stride;
    h.n = (int32_t)n;
    h.blocks_per_row = cols / n;
    h.groups = a.rows * h.blocks_per_row;
    h.in_dtype = a.in_dtype;
    h.out_dtype = a.in_dtype;
    h.scale = a.rot_scale;
    h.signs = a.signs;
    h.vec_in = rotq_q_aligned(a.x, 16) && (((a.x_stride * es) % 16 == 0 && (n * es) % 16 == 0) || packed);
    const rotq_status fast = rotq_qs_launch_fast(a, h, stream, dev, dry);
    if (fast != ROTQ_ERR_NOT_SUPPORTED) return fast;
    switch (a.log2n) {
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7)
        CASE(8) CASE(9) CASE(10) CASE(11) CASE(12) CASE(13) CASE(14) CASE(15)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
