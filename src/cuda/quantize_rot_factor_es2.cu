// Fused K*2^L rotation + quantize for 16-bit inputs: the factor Hadamard kernel
// built with its quantize epilogue (hadamard_factor.cuh). L = 4..11, where the K
// step loads its operands with ldmatrix; other L take the two-step path. dry:
// decide only, launch nothing (rotq_launch_factor_build).
#include "hadamard_launch.cuh"

#define CASE(L) \
    case L: return rotq_launch_factor_any<L, 2, true>(a, f, &qa, s, d, dry);

rotq_status rotq_dispatch_factor_quant_es2(int L, const rotq_had_args &a, rotq_had_factor &f, const rotq_q_args &qa,
                                           cudaStream_t s, const rotq_cuda_device_info *d, bool dry) {
    switch (L) {
        CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) CASE(9) CASE(10) CASE(11)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
