// Host side of the TMA tile loads and stores (tma.cuh): the driver entry point,
// fetched once, and the tensor maps.
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled_v12000

#include "tma.cuh"

// The driver's encoder, or a failure marker once a lookup has failed.
static PFN_cuTensorMapEncodeTiled_v12000 rotq_tma_encoder(void) {
    static void *fn;      // the entry point once found
    static int looked_up; // 1: found, -1: not available
    int state = __atomic_load_n(&looked_up, __ATOMIC_ACQUIRE);
    if (state == 0) {
        void *p = NULL;
#if CUDART_VERSION >= 12050 // cudaGetDriverEntryPointByVersion; older toolkits: no TMA path
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        const cudaError_t e =
            cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
        if (e != cudaSuccess) cudaGetLastError();
        state = e == cudaSuccess && q == cudaDriverEntryPointSuccess && p ? 1 : -1;
#else
        state = -1;
#endif
        __atomic_store_n(&fn, p, __ATOMIC_RELAXED);
        __atomic_store_n(&looked_up, state, __ATOMIC_RELEASE);
    }
    return state == 1 ? (PFN_cuTensorMapEncodeTiled_v12000)__atomic_load_n(&fn, __ATOMIC_RELAXED) : NULL;
}

// Encoded maps of this host thread, direct-mapped by their arguments: a map is
// a pure function of them, and encoding costs about as much host time as a
// launch, which an event-timed call of 2^20 elements sees (the GPU waits for it).
#define ROTQ_TMA_CACHE 16
typedef struct rotq_tma_cached {
    const void *base;
    int64_t elements;
    int es, box_rows;
    CUtensorMap map;
} rotq_tma_cached;
static thread_local rotq_tma_cached rotq_tma_cache[ROTQ_TMA_CACHE];

static int rotq_tma_encode(CUtensorMap *map, const void *base, int64_t elements, int es, int box_rows);

int rotq_tma_map_rows(CUtensorMap *map, const void *base, int64_t elements, int es, int box_rows) {
    const uintptr_t h = ((uintptr_t)base >> 7) ^ (uintptr_t)elements ^ ((uintptr_t)box_rows << 3) ^ (uintptr_t)es;
    rotq_tma_cached *c = &rotq_tma_cache[(h ^ (h >> 4) ^ (h >> 8)) % ROTQ_TMA_CACHE];
    if (c->base == base && c->elements == elements && c->es == es && c->box_rows == box_rows && base) {
        *map = c->map;
        return 1;
    }
    if (!rotq_tma_encode(map, base, elements, es, box_rows)) return 0;
    c->base = base;
    c->elements = elements;
    c->es = es;
    c->box_rows = box_rows;
    c->map = *map;
    return 1;
}

static int rotq_tma_encode(CUtensorMap *map, const void *base, int64_t elements, int es, int box_rows) {
    const int64_t bytes = elements * es;
    if (((uintptr_t)base & 15u) != 0 || bytes % ROTQ_TMA_ROW_BYTES != 0 || box_rows < 1 ||
        box_rows > ROTQ_TMA_MAX_BOX_ROWS)
        return 0;
    const int64_t rows = bytes / ROTQ_TMA_ROW_BYTES;
    if (rows >= ((int64_t)1 << 31)) return 0; // row coordinates are int32
    PFN_cuTensorMapEncodeTiled_v12000 encode = rotq_tma_encoder();
    if (!encode) return 0;
    const int inner = ROTQ_TMA_ROW_BYTES / es;
    const cuuint64_t dims[2] = {(cuuint64_t)inner, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {ROTQ_TMA_ROW_BYTES}; // bytes between rows
    const cuuint32_t box[2] = {(cuuint32_t)inner, (cuuint32_t)box_rows};
    const cuuint32_t estrides[2] = {1, 1};
    const CUresult r = encode(map, es == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_UINT16, 2,
                              (void *)base, dims, strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE); // rows past the end read as zeros
    return r == CUDA_SUCCESS;
}
