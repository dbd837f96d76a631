// Power-of-two Hadamard kernels for 16-bit inputs.
#include "hadamard_launch.cuh"

#define CASE(L) \
    case L: return rotq_launch_pow2<L, 2>(a, s, d);

rotq_status rotq_dispatch_pow2_es2(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d) {
    const rotq_status fast = rotq_dispatch_pow2_fast(L, a, s, d);
    if (fast != ROTQ_ERR_NOT_SUPPORTED) return fast;
    switch (L) {
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7)
        CASE(8) CASE(9) CASE(10) CASE(11) CASE(12) CASE(13) CASE(14) CASE(15)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
