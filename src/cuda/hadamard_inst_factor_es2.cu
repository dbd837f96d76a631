// K*2^L Hadamard kernels for 16-bit inputs, L <= 11. Rows whose W does not fit
// in shared memory (n > 32768 with a large K) return NOT_SUPPORTED: two passes.
#include "hadamard_launch.cuh"

#define CASE(L) \
    case L: return rotq_launch_factor_any<L, 2, false>(a, f, NULL, s, d, dry);

rotq_status rotq_dispatch_factor_es2(int L, const rotq_had_args &a, rotq_had_factor &f, cudaStream_t s,
                                     const rotq_cuda_device_info *d, bool dry) {
    switch (L) {
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) CASE(9) CASE(10) CASE(11)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
