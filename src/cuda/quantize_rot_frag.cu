// Quantize with a K * 2^L rotation on the fragment kernel (hadamard_factor_frag.cuh
// built with QUANT): 2^8 .. 2^10, K <= 64, 16-bit input by TMA.
#include "hadamard_factor_frag_launch.cuh"

template <int L>
static rotq_status rotq_dispatch_frag_quant_kt(const rotq_had_args &a, const rotq_had_factor &f,
                                               const rotq_q_args &qa, cudaStream_t s, const rotq_cuda_device_info *d,
                                               bool dry) {
    switch (f.kt) {
    case 1: return rotq_launch_frag<L, 1, true>(a, f, &qa, s, d, dry);
    case 2: return rotq_launch_frag<L, 2, true>(a, f, &qa, s, d, dry);
    case 3: return rotq_launch_frag<L, 3, true>(a, f, &qa, s, d, dry);
    case 4: return rotq_launch_frag<L, 4, true>(a, f, &qa, s, d, dry);
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}

rotq_status rotq_dispatch_frag_quant_es2(int L, const rotq_had_args &a, const rotq_had_factor &f,
                                         const rotq_q_args &qa, cudaStream_t s, const rotq_cuda_device_info *d,
                                         bool dry) {
#ifdef ROTQ_NO_FRAG
    (void)L, (void)a, (void)f, (void)qa, (void)s, (void)d, (void)dry;
    return ROTQ_ERR_NOT_SUPPORTED;
#else
    switch (L) {
    case 8: return rotq_dispatch_frag_quant_kt<8>(a, f, qa, s, d, dry);
    case 9: return rotq_dispatch_frag_quant_kt<9>(a, f, qa, s, d, dry);
    case 10: return rotq_dispatch_frag_quant_kt<10>(a, f, qa, s, d, dry);
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
#endif
}
