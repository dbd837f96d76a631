// Device discovery and the per-device property cache: the only state the CUDA
// backend keeps. Filled lazily, once per device, safe under concurrent callers.
#include <stdio.h>
#include <string.h>

#include "common.cuh"

#define ROTQ_MAX_DEVICES 64

static rotq_cuda_device_info g_info[ROTQ_MAX_DEVICES];
static int g_state[ROTQ_MAX_DEVICES]; // 0 empty, 1 filling, 2 ready

const rotq_cuda_device_info *rotq_cuda_current_device(rotq_status *st) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= ROTQ_MAX_DEVICES) {
        cudaGetLastError();
        *st = ROTQ_ERR_BACKEND_UNAVAILABLE;
        return NULL;
    }
    if (__atomic_load_n(&g_state[dev], __ATOMIC_ACQUIRE) == 2) return &g_info[dev];
    rotq_cuda_device_info info;
    memset(&info, 0, sizeof info);
    info.device = dev;
    if (cudaDeviceGetAttribute(&info.sm_count, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&info.max_smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&info.smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&info.cc_major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&info.cc_minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        cudaGetLastError();
        *st = ROTQ_ERR_CUDA;
        return NULL;
    }
    // Racing fillers compute identical values; the first to claim the slot publishes.
    int expected = 0;
    if (__atomic_compare_exchange_n(&g_state[dev], &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        g_info[dev] = info;
        __atomic_store_n(&g_state[dev], 2, __ATOMIC_RELEASE);
        return &g_info[dev];
    }
    while (__atomic_load_n(&g_state[dev], __ATOMIC_ACQUIRE) != 2) {
    }
    return &g_info[dev];
}

// ---- dynamic tile counters (rotq_cuda_tile_counter) ----------------------

// Counter pairs: a module global, zero at load on every device (no allocation,
// no memset: nothing that a graph capture elsewhere in the process forbids).
#define ROTQ_TILE_COUNTERS 512
__device__ uint32_t rotq_tile_counters[2 * ROTQ_TILE_COUNTERS];

static unsigned long long g_tc_key[ROTQ_MAX_DEVICES][ROTQ_TILE_COUNTERS]; // stream id + 1; 0 = free
static int g_tc_lock;

uint32_t *rotq_cuda_tile_counter(const rotq_cuda_device_info *dev, cudaStream_t stream) {
#if CUDART_VERSION < 12000 // cudaStreamGetId: the static order
    (void)dev, (void)stream;
    return NULL;
#else
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone ||
        cudaStreamGetId(stream, &id) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    const int d = dev->device;
    // Read every call (a host-side lookup): after cudaDeviceReset the module, and
    // the counters with it, live at a new address, zeroed again.
    void *p = NULL;
    if (cudaGetSymbolAddress(&p, rotq_tile_counters) != cudaSuccess || !p) {
        cudaGetLastError();
        return NULL;
    }
    uint32_t *base = (uint32_t *)p;
    // Open addressing by the stream id; ids are unique for the process's life.
    const unsigned long long key = id + 1;
    unsigned slot = (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 32) % ROTQ_TILE_COUNTERS;
    uint32_t *found = NULL;
    while (__atomic_exchange_n(&g_tc_lock, 1, __ATOMIC_ACQUIRE)) {
    }
    for (int probe = 0; probe < ROTQ_TILE_COUNTERS; probe++, slot = (slot + 1) % ROTQ_TILE_COUNTERS) {
        if (g_tc_key[d][slot] == 0) g_tc_key[d][slot] = key;
        if (g_tc_key[d][slot] == key) {
            found = base + 2 * slot;
            break;
        }
    }
    __atomic_store_n(&g_tc_lock, 0, __ATOMIC_RELEASE);
    return found;
#endif
}

extern "C" int rotq__cuda_available(void) {
    int n = 0;
    return rotq__cuda_device_count(&n) == ROTQ_OK && n > 0;
}

extern "C" rotq_status rotq__cuda_device_count(int *count) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError(); // no driver or no device: not an error for the caller
        n = 0;
    }
    *count = n;
    return ROTQ_OK;
}

extern "C" rotq_status rotq__cuda_device_describe(int device, char *buf, size_t buf_size) {
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return ROTQ_ERR_BACKEND_UNAVAILABLE;
    }
    snprintf(buf, buf_size, "%s, sm_%d%d, %d SMs, %.1f GiB, L2 %d MiB", prop.name, prop.major, prop.minor,
             prop.multiProcessorCount, (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0),
             prop.l2CacheSize >> 20);
    return ROTQ_OK;
}
