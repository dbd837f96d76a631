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
typedef struct rotq_tma_key {
    const void *base;
    int32_t rank, es;
    cuuint64_t dims[4];    // elements, innermost first
    cuuint64_t strides[3]; // bytes, of dims 1 .. rank - 1
    cuuint32_t box[4];
} rotq_tma_key;
typedef struct rotq_tma_cached {
    rotq_tma_key key;
    CUtensorMap map;
} rotq_tma_cached;
static thread_local rotq_tma_cached rotq_tma_cache[ROTQ_TMA_CACHE];

// Encodes the map of *k (16-bit or fp32 elements, 128-byte swizzle, zeros past
// the edges); 1 on success.
static int rotq_tma_encode(CUtensorMap *map, const rotq_tma_key *k) {
    PFN_cuTensorMapEncodeTiled_v12000 encode = rotq_tma_encoder();
    if (!encode) return 0;
    const cuuint32_t estrides[4] = {1, 1, 1, 1};
    const CUresult r = encode(map, k->es == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_UINT16,
                              (cuuint32_t)k->rank, (void *)k->base, k->dims, k->strides, k->box, estrides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS;
}

static int rotq_tma_map_cached(CUtensorMap *map, const rotq_tma_key *k) {
    uint64_t h = 1469598103934665603ull; // FNV-1a over the key's bytes (zeroed padding)
    const unsigned char *b = (const unsigned char *)k;
    for (size_t i = 0; i < sizeof *k; i++) h = (h ^ b[i]) * 1099511628211ull;
    rotq_tma_cached *c = &rotq_tma_cache[h % ROTQ_TMA_CACHE];
    if (c->key.base && memcmp(&c->key, k, sizeof *k) == 0) {
        *map = c->map;
        return 1;
    }
    if (!rotq_tma_encode(map, k)) return 0;
    c->key = *k;
    c->map = *map;
    return 1;
}

int rotq_tma_map_rows(CUtensorMap *map, const void *base, int64_t elements, int es, int box_rows) {
    const int64_t bytes = elements * es;
    if (!base || ((uintptr_t)base & 15u) != 0 || bytes % ROTQ_TMA_ROW_BYTES != 0 || box_rows < 1 ||
        box_rows > ROTQ_TMA_MAX_BOX_ROWS)
        return 0;
    const int64_t rows = bytes / ROTQ_TMA_ROW_BYTES;
    if (rows >= ((int64_t)1 << 31)) return 0; // row coordinates are int32
    rotq_tma_key k;
    memset(&k, 0, sizeof k);
    k.base = base;
    k.rank = 2;
    k.es = es;
    k.dims[0] = (cuuint64_t)(ROTQ_TMA_ROW_BYTES / es);
    k.dims[1] = (cuuint64_t)rows;
    k.strides[0] = ROTQ_TMA_ROW_BYTES;
    k.box[0] = (cuuint32_t)(ROTQ_TMA_ROW_BYTES / es);
    k.box[1] = (cuuint32_t)box_rows;
    return rotq_tma_map_cached(map, &k);
}

int rotq_tma_map_factor(CUtensorMap *map, const void *base, int k_rows, int box_k, int L, int ls, int64_t groups,
                        int64_t group_stride, int G) {
    if (!base || ((uintptr_t)base & 15u) != 0 || ls < 6 || ls > L || (group_stride * 2) % 16 != 0 || k_rows < 1 ||
        box_k < k_rows || box_k > 256 || G < 1 || G > 256 || (1 << (ls - 6)) > 256 || groups >= ((int64_t)1 << 31))
        return 0;
    rotq_tma_key k;
    memset(&k, 0, sizeof k);
    k.base = base;
    k.rank = 4;
    k.es = 2;
    k.dims[0] = ROTQ_TMA_ROW_BYTES / 2;      // 64 columns
    k.dims[1] = (cuuint64_t)k_rows;          // the K rows of a row block
    k.dims[2] = (cuuint64_t)1 << (L - 6);    // 64-column blocks of a K row
    k.dims[3] = (cuuint64_t)groups;          // row blocks
    k.strides[0] = (cuuint64_t)2 << L;       // one K row
    k.strides[1] = ROTQ_TMA_ROW_BYTES;       // one column block
    k.strides[2] = (cuuint64_t)group_stride * 2;
    k.box[0] = ROTQ_TMA_ROW_BYTES / 2;
    k.box[1] = (cuuint32_t)box_k;            // rows past K: zero fill
    k.box[2] = (cuuint32_t)1 << (ls - 6);
    k.box[3] = (cuuint32_t)G;
    return rotq_tma_map_cached(map, &k);
}
