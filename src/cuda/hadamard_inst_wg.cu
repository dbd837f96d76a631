// The K * 2^L kernel of hadamard_factor_wg.cuh: K >= 12 at 2^6 and 2^7 (sm_90a).
#include "hadamard_factor_wg.cuh"

rotq_status rotq_dispatch_wg_es2(int L, const rotq_had_args &a, const rotq_had_factor &f, cudaStream_t s,
                                 const rotq_cuda_device_info *d, bool dry) {
#ifdef ROTQ_NO_WG // the general factor kernel only (same-run A/B builds)
    (void)L, (void)a, (void)f, (void)s, (void)d, (void)dry;
    return ROTQ_ERR_NOT_SUPPORTED;
#else
    // Warpgroups a block (one block an SM): 32 accumulators a thread at 2^6 (6
    // warpgroups: groups of 2 or 3, one per m64 tile), 64 at 2^7 (4: 128
    // registers; groups of 2 for K <= 128).
    switch (L) {
    case 6: return rotq_launch_wg<6, ROTQ_WG_NWG6>(a, f, nullptr, s, d, dry);
    case 7: return rotq_launch_wg<7, ROTQ_WG_NWG7>(a, f, nullptr, s, d, dry);
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
#endif
}
