// The Hadamard factor matrices H_K in device memory (src/common/
// hadamard_factor_data.h, one bit an entry), which the K*2^m kernels read to
// build their A operands. A kernel gets a pointer to its K's rows rather than
// the rows themselves: a 4 KB parameter block cost every launch 0.2-0.3 us on
// the H100, and up to 1 us more on every other launch in some states of the
// process (perf-notes, "Kernel parameter size").
#include "common.cuh"

#include "../common/hadamard_factor_data.h"

__device__ const uint32_t rotq_factor_bits_device[ROTQ__FACTOR_TOTAL_WORDS] = ROTQ__FACTOR_BITS_INIT;

// The table's address on each device, looked up once (every caller finds the same value).
static const uint32_t *g_factor_bits[ROTQ_MAX_DEVICES];

const uint32_t *rotq_cuda_factor_bits(const rotq_cuda_device_info *dev, int32_t k, rotq_status *st) {
    int i = 0;
    while (i < ROTQ__FACTOR_COUNT && rotq__factor_k[i] != k) i++;
    if (i == ROTQ__FACTOR_COUNT) {
        *st = ROTQ_ERR_NOT_SUPPORTED;
        return NULL;
    }
    const uint32_t *base = __atomic_load_n(&g_factor_bits[dev->device], __ATOMIC_ACQUIRE);
    if (!base) {
        void *p = NULL;
        if (cudaGetSymbolAddress(&p, rotq_factor_bits_device) != cudaSuccess || !p) {
            cudaGetLastError();
            *st = ROTQ_ERR_CUDA;
            return NULL;
        }
        base = (const uint32_t *)p;
        __atomic_store_n(&g_factor_bits[dev->device], base, __ATOMIC_RELEASE);
    }
    return base + rotq__factor_offset[i];
}
