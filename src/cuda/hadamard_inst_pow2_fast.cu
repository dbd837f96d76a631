// Power-of-two Hadamard kernels for the common case (rotq_had_fast_case: f16 or
// bf16 in and out, 16-byte access, no signs, one row block a row), one per
// (L, dtype); every other call takes the generic builds (hadamard_inst_pow2_es*.cu).
#include "hadamard_launch.cuh"

#define CASE(L)                                                                                               \
    case L:                                                                                                   \
        return f16 ? rotq_launch_pow2<L, 2, ROTQ_DTYPE_F16>(a, s, d) : rotq_launch_pow2<L, 2, ROTQ_DTYPE_BF16>(a, s, d);

rotq_status rotq_dispatch_pow2_fast(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d) {
    // The host sets vec_out only for the sizes that use it (rotq_pow2_uses_vec_out).
    const bool vo = rotq_pow2_uses_vec_out(L), f16 = rotq_had_fast_case(a, ROTQ_DTYPE_F16, vo);
    if (!f16 && !rotq_had_fast_case(a, ROTQ_DTYPE_BF16, vo)) return ROTQ_ERR_NOT_SUPPORTED;
    switch (L) {
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7)
        CASE(8) CASE(9) CASE(10) CASE(11) CASE(12) CASE(13) CASE(14) CASE(15)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
