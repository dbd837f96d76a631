// Quantize with a K * 2^L rotation on the warpgroup kernel (hadamard_factor_wg.cuh
// built with QUANT): K >= 12 at 2^6 and 2^7 (172 * 64 = 11008, 108 * 128 = 13824,
// 40 * 128 = 5120), 16-bit input by TMA, sm_90a.
#include "hadamard_factor_wg.cuh"

rotq_status rotq_dispatch_wg_quant_es2(int L, const rotq_had_args &a, const rotq_had_factor &f,
                                       const rotq_q_args &qa, cudaStream_t s, const rotq_cuda_device_info *d,
                                       bool dry) {
#if defined(ROTQ_NO_WG) || defined(ROTQ_NO_WG_QUANT) // the general factor kernel only (same-run A/B builds)
    (void)L, (void)a, (void)f, (void)qa, (void)s, (void)d, (void)dry;
    return ROTQ_ERR_NOT_SUPPORTED;
#else
    switch (L) {
    case 6: return rotq_launch_wg<6, ROTQ_WG_NWG6, true>(a, f, &qa, s, d, dry);
    case 7: return rotq_launch_wg<7, ROTQ_WG_NWG7, true>(a, f, &qa, s, d, dry);
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
#endif
}
