// The fused decode-size rotation + quantize kernels (quantize_small.cuh) built
// for the common case, one per (L, 16-bit dtype, kind): the per-row int8 and
// fp8 kinds and int4 groups; int4 at 2^12 .. 2^14 first on the split kernel
// (quantize_small_split.cuh) where a row's blocks fit one wave. The static fp8
// kind and every other call take the generic builds of quantize_small.cu.
#include "quantize_launch.cuh"
#include "quantize_small.cuh"
#include "quantize_small_split.cuh"

template <int L, int DT>
static rotq_status rotq_qs_launch_kind(const rotq_q_args &a, const rotq_had_args &h, cudaStream_t stream,
                                       const rotq_cuda_device_info *dev, bool dry) {
    if constexpr (L >= ROTQ_QS_SPLIT_MIN_L && L <= ROTQ_QS_SPLIT_MAX_L) {
        if (a.kind == ROTQ_QUANT_INT4_GROUP) {
            const rotq_status st = rotq_qs_split_launch<L, DT>(a, h, stream, dev, dry);
            if (st != ROTQ_ERR_NOT_SUPPORTED) return st;
        }
    }
    switch (a.kind) {
    case ROTQ_QUANT_INT8_ROW: return rotq_qs_launch<L, DT, ROTQ_QUANT_INT8_ROW>(a, h, stream, dev, dry);
    case ROTQ_QUANT_FP8_ROW: return rotq_qs_launch<L, DT, ROTQ_QUANT_FP8_ROW>(a, h, stream, dev, dry);
    case ROTQ_QUANT_INT4_GROUP: return rotq_qs_launch<L, DT, ROTQ_QUANT_INT4_GROUP>(a, h, stream, dev, dry);
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}

#define CASE(L)                                                                                     \
    case L:                                                                                         \
        return f16 ? rotq_qs_launch_kind<L, ROTQ_DTYPE_F16>(a, h, stream, dev, dry)                 \
                   : rotq_qs_launch_kind<L, ROTQ_DTYPE_BF16>(a, h, stream, dev, dry);

rotq_status rotq_qs_launch_fast(const rotq_q_args &a, const rotq_had_args &h, cudaStream_t stream,
                                const rotq_cuda_device_info *dev, bool dry) {
    const bool f16 = rotq_had_fast_case(h, ROTQ_DTYPE_F16, false);
    if (!f16 && !rotq_had_fast_case(h, ROTQ_DTYPE_BF16, false)) return ROTQ_ERR_NOT_SUPPORTED;
    switch (a.log2n) {
        CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7)
        CASE(8) CASE(9) CASE(10) CASE(11) CASE(12) CASE(13) CASE(14) CASE(15)
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
}
