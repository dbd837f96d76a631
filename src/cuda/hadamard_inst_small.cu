// Small-problem (decode-size) power-of-two Hadamard kernels, every input dtype:
// one block per tile (hadamard_small.cuh); out of place for L >= ROTQ_SPLIT_MIN_L
// while the blocks fit one wave, 2^T blocks per row block (hadamard_small_split.cuh);
// else for L >= ROTQ_CLUSTER_MIN_L one cluster per row block where clusters are
// available (hadamard_small_cluster.cuh).
#include "hadamard_launch.cuh"

#define CASE(L) \
    case L: return rotq_launch_small<L>(a, s, d);
#define SPLIT_CASE(L) \
    case L: st = rotq_launch_split<L>(a, s, d); break;
#define CLUSTER_CASE(L) \
    case L: st = rotq_launch_cluster<L>(a, s, d); break;

rotq_status rotq_dispatch_small(int L, const rotq_had_args &a, cudaStream_t s, const rotq_cuda_device_info *d) {
    rotq_status st = ROTQ_ERR_NOT_SUPPORTED;
    if (rotq_split_fits(L, a, d)) {
        switch (L) {
#if ROTQ_SPLIT_MIN_L <= 11
            SPLIT_CASE(11)
#endif
            SPLIT_CASE(12) SPLIT_CASE(13) SPLIT_CASE(14) SPLIT_CASE(15)
        default: break;
        }
        if (st != ROTQ_ERR_NOT_SUPPORTED) return st;
    }
    if (L >= ROTQ_CLUSTER_MIN_L) {
        switch (L) {
            // 12: 4 blocks of 1024, used only with ROTQ_CLUSTER_MIN_L=12 (an A/B build)
            CLUSTER_CASE(12) CLUSTER_CASE(13) CLUSTER_CASE(14) CLUSTER_CASE(15)
        default: break;
        }
        if (st != ROTQ_ERR_NOT_SUPPORTED) return st;
    }
    switch (L) {
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7)
        CASE(8) CASE(9) CASE(10) CASE(11) CASE(12) CASE(13) CASE(14) CASE(15)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
