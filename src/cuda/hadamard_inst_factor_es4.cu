// K*2^L Hadamard kernels for fp32 inputs. L <= 11: larger
// sizes (n > 32768) do not fit in shared memory.
#include "hadamard_launch.cuh"

#define CASE(L) \
    case L: return rotq_launch_factor_any<L, 4, false>(a, f, NULL, s, d);

rotq_status rotq_dispatch_factor_es4(int L, const rotq_had_args &a, rotq_had_factor &f, cudaStream_t s,
                                     const rotq_cuda_device_info *d) {
    switch (L) {
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) CASE(9) CASE(10) CASE(11)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
