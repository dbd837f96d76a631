// Small-problem (decode-size) power-of-two Hadamard kernels, every input dtype.
#include "hadamard_launch.cuh"

#define CASE(L) \
    case L: return rotq_launch_small<L>(a, s, d);

rotq_status rotq_dispatch_small(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d) {
    switch (L) {
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7)
        CASE(8) CASE(9) CASE(10) CASE(11) CASE(12) CASE(13) CASE(14) CASE(15)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
