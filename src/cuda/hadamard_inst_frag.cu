// The K * 2^L kernel of hadamard_factor_frag.cuh: 2^8 .. 2^10, K <= 64 (one
// build per k-tile count).
#include "hadamard_factor_frag_launch.cuh"

template <int L>
static rotq_status rotq_dispatch_frag_kt(const rotq_had_args &a, const rotq_had_factor &f, cudaStream_t s,
                                         const rotq_cuda_device_info *d, bool dry) {
    switch (f.kt) {
    case 1: return rotq_launch_frag<L, 1, false>(a, f, nullptr, s, d, dry);
    case 2: return rotq_launch_frag<L, 2, false>(a, f, nullptr, s, d, dry);
    case 3: return rotq_launch_frag<L, 3, false>(a, f, nullptr, s, d, dry);
    case 4: return rotq_launch_frag<L, 4, false>(a, f, nullptr, s, d, dry);
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}

rotq_status rotq_dispatch_frag_es2(int L, const rotq_had_args &a, const rotq_had_factor &f, cudaStream_t s,
                                   const rotq_cuda_device_info *d, bool dry) {
#ifdef ROTQ_NO_FRAG // the general factor kernel only (same-run A/B builds)
    (void)L, (void)a, (void)f, (void)s, (void)d, (void)dry;
    return ROTQ_ERR_NOT_SUPPORTED;
#else
    switch (L) {
    case 8: return rotq_dispatch_frag_kt<8>(a, f, s, d, dry);
    case 9: return rotq_dispatch_frag_kt<9>(a, f, s, d, dry);
    case 10: return rotq_dispatch_frag_kt<10>(a, f, s, d, dry);
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
#endif
}
