// Fused rotation + quantize tile kernels for 16-bit inputs (quantize_rot_tile.cuh).
#include "quantize_rot_tile.cuh"

#define CASE(L) \
    case L: return rotq_qt_rot_launch<L, 2>(qa, a, s, d);

rotq_status rotq_qt_rot_dispatch_es2(int L, const rotq_q_args &qa, const rotq_had_args &a, cudaStream_t s,
                                     const rotq_cuda_device_info *d) {
    switch (L) {
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7)
        CASE(8) CASE(9) CASE(10) CASE(11) CASE(12) CASE(13) CASE(14) CASE(15)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
