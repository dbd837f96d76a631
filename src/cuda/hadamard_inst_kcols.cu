// The column-tile K pass of the two-pass Hadamard (n = K * 2^L > 32768).
#include "hadamard_kcols.cuh"
#include "hadamard_launch.cuh"

template <int ES>
static rotq_status rotq_launch_kcols_es(const rotq_had_args &a, int L, const rotq_had_factor &f, cudaStream_t stream,
                                        const rotq_cuda_device_info *dev) {
    static int regs[64]; // per device; 0 = not prepared yet
    const size_t smem = rotq_kcols_smem(f.kt, f.k, ES);
    const int64_t ntiles = a.groups * (((int64_t)1 << L) / ROTQ_KCOLS_WIDTH);
    int64_t grid = 0;
    rotq_status st = rotq_persistent_grid((const void *)rotq_had_kcols<ES>, ROTQ_KCOLS_THREADS, smem, regs, dev,
                                          ntiles, &grid);
    if (st != ROTQ_OK) return st;
    rotq_had_kcols<ES><<<(unsigned)grid, ROTQ_KCOLS_THREADS, smem, stream>>>(a, L, f);
    return rotq_cuda_check_launch();
}

rotq_status rotq_launch_kcols(int es, const rotq_had_args &a, int L, const rotq_had_factor &f, cudaStream_t s,
                              const rotq_cuda_device_info *d) {
    // The two-pass transform keeps its intermediate in fp32 (es = 4).
    return es == 4 ? rotq_launch_kcols_es<4>(a, L, f, s, d) : ROTQ_ERR_NOT_SUPPORTED;
}
