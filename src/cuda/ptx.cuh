// All inline PTX of the CUDA backend, one small named wrapper per instruction.
// PTX ISA references: "Asynchronous copy" (cp.async), "Warp-level matrix
// multiply-accumulate" (mma.sync m16n8k16 fragment layouts).
#pragma once
#include <stdint.h>

// 16-byte asynchronous global->shared copy, bypassing L1 (data is read once).
__device__ __forceinline__ void ptx_cp_async_16(uint32_t smem_addr, const void *gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr), "l"(gmem) : "memory");
}

// Close the current group of cp.async copies.
__device__ __forceinline__ void ptx_cp_async_commit(void) {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Wait until at most N groups of this thread's cp.async copies are pending.
template <int N>
__device__ __forceinline__ void ptx_cp_async_wait(void) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Shared-memory address of a generic pointer, for the instructions that take one.
__device__ __forceinline__ uint32_t ptx_smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

// Streaming 16-byte global load: the input is read exactly once, so keep it out of L1.
__device__ __forceinline__ uint4 ptx_ld_stream_16(const void *p) {
    uint4 v;
    asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// A 16-bit global store that allocates no L1 line (st.global.L1::no_allocate,
// sm_70+): streamed outputs leave L1 to the kernel's local memory.
// The value is the low half of a 32-bit register (PTX lets st take a wider
// register than its type): an "h" operand made the compiler merge halves with
// PRMT.
__device__ __forceinline__ void ptx_st_na_u16(void *p, uint32_t v) {
    asm volatile("st.global.L1::no_allocate.b16 [%0], %1;\n" ::"l"(p), "r"(v));
}

// Streaming 16-byte global store (evict-first: the output is not re-read by us).
__device__ __forceinline__ void ptx_st_stream_16(void *p, uint4 v) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}

// D = A*B + D, m16n8k16, bf16 inputs, fp32 accumulators (sm_80+).
__device__ __forceinline__ void ptx_mma_bf16_16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// D = A*B + D, m16n8k16, fp16 inputs, fp32 accumulators (sm_80+).
__device__ __forceinline__ void ptx_mma_f16_16816(float d[4], const uint32_t a[4], const uint32_t b[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Four transposed 8x8 b16 matrices from shared memory: lanes 8i..8i+7 give the
// row addresses of matrix i; register i receives its mma B-operand fragment.
__device__ __forceinline__ void ptx_ldmatrix_x4_trans(uint32_t r[4], uint32_t smem_addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr));
}

// Four 8x8 b16 matrices to shared memory (sm_90): lanes 8i..8i+7 give the row
// addresses (16 bytes each) of matrix i; register i of lane (g, t) holds its
// row g, columns 2t, 2t + 1 (the mma C fragment's layout, packed).
__device__ __forceinline__ void ptx_stmatrix_x4(uint32_t smem_addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                                uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(smem_addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

// ---- thread block clusters (sm_90+; callers compile these only for __CUDA_ARCH__ >= 900)
// PTX ISA: "%cluster_ctarank", "mapa", "barrier.cluster", "mbarrier", "st.async".

// This block's rank in its cluster.
__device__ __forceinline__ uint32_t ptx_cluster_ctarank(void) {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// The shared::cluster address of the same shared-memory location in block `rank`.
__device__ __forceinline__ uint32_t ptx_mapa_shared(uint32_t smem_addr, uint32_t rank) {
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(smem_addr), "r"(rank));
    return r;
}

// Cluster barrier, split: arrive without ordering anything, then wait (acquire)
// until every thread of every block of the cluster has arrived.
__device__ __forceinline__ void ptx_cluster_arrive_relaxed(void) {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
// The same, releasing this thread's earlier memory operations to the cluster.
__device__ __forceinline__ void ptx_cluster_arrive(void) {
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void ptx_cluster_wait(void) {
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// An mbarrier in this block's shared memory expecting `count` arrivals; the fence
// makes the initialization visible to the cluster (before its first remote use).
__device__ __forceinline__ void ptx_mbarrier_init(uint32_t mbar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(mbar), "r"(count) : "memory");
}
__device__ __forceinline__ void ptx_fence_mbarrier_init(void) {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// Named barrier `id` (1 .. 15; 0 is __syncthreads') of `threads` threads (a
// multiple of 32): every warp of the group waits for the others.
__device__ __forceinline__ void ptx_bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// The same barrier that also returns whether `pred` held in any of its threads.
__device__ __forceinline__ bool ptx_bar_red_or(int id, int threads, bool pred) {
    uint32_t any;
    asm volatile("{\n .reg .pred p, q;\n setp.ne.u32 p, %1, 0;\n barrier.red.or.pred q, %2, %3, p;\n"
                 " selp.u32 %0, 1, 0, q;\n}\n"
                 : "=r"(any)
                 : "r"((uint32_t)pred), "r"(id), "r"(threads)
                 : "memory");
    return any != 0u;
}

// One arrival that also raises the barrier's expected transaction count by `bytes`.
__device__ __forceinline__ void ptx_mbarrier_arrive_expect_tx(uint32_t mbar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(mbar), "r"(bytes) : "memory");
}

// One arrival on the barrier (release at CTA scope: this thread's earlier
// memory operations are visible to whoever waits for the phase).
__device__ __forceinline__ void ptx_mbarrier_arrive(uint32_t mbar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(mbar) : "memory");
}

// Whether the barrier's phase `parity` has completed (acquire); may wait a while first.
__device__ __forceinline__ bool ptx_mbarrier_try_wait(uint32_t mbar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(mbar), "r"(parity)
        : "memory");
    return done != 0;
}

// Bulk (TMA, non-tensor) copies and their groups: the copies are used by the
// streaming probe (bench/probes/stream_pipeline.cu), which measured the staging
// choices; the group commit and wait also by the tensor stores.
// Bulk copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) from
// global to this block's shared memory; completes that many bytes of the
// mbarrier's transaction count (sm_90).
__device__ __forceinline__ void ptx_bulk_load(uint32_t smem_addr, const void *gmem, uint32_t bytes, uint32_t mbar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_addr),
                 "l"(gmem), "r"(bytes), "r"(mbar)
                 : "memory");
#endif
}

__device__ __forceinline__ void ptx_bulk_commit(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}
// Wait until at most N of this thread's bulk groups still read shared memory.
template <int N>
__device__ __forceinline__ void ptx_bulk_wait_read(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}

// Tensor (TMA) load of one box at coordinates (c0, c1) of a 2-D tensor map (a
// __grid_constant__ kernel parameter) into this block's shared memory; completes
// the box's bytes on the mbarrier (sm_90).
__device__ __forceinline__ void ptx_tma_load_2d(uint32_t smem_addr, const void *map, int32_t c0, int32_t c1,
                                                uint32_t mbar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
                 "%3}], [%4];\n" ::"r"(smem_addr),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(mbar)
                 : "memory");
#endif
}

// The same with an L2 cache policy (ptx_l2_evict_first) for the loaded lines.
__device__ __forceinline__ void ptx_tma_load_2d_hint(uint32_t smem_addr, const void *map, int32_t c0, int32_t c1,
                                                     uint32_t mbar, uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint "
                 "[%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_addr),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(mbar), "l"(policy)
                 : "memory");
#endif
}

// An L2 policy that marks every line it is given to evict first (data read once).
__device__ __forceinline__ uint64_t ptx_l2_evict_first(void) {
    uint64_t p = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
#endif
    return p;
}

// Tensor (TMA) load of one box at coordinates (c0, c1, c2, c3) of a 4-D tensor map
// into this block's shared memory; completes the box's bytes on the mbarrier (sm_90).
__device__ __forceinline__ void ptx_tma_load_4d(uint32_t smem_addr, const void *map, int32_t c0, int32_t c1,
                                                int32_t c2, int32_t c3, uint32_t mbar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
                 "%3, %4, %5}], [%6];\n" ::"r"(smem_addr),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(mbar)
                 : "memory");
#endif
}

// The same with an L2 cache policy (ptx_l2_evict_first) for the loaded lines.
__device__ __forceinline__ void ptx_tma_load_4d_hint(uint32_t smem_addr, const void *map, int32_t c0, int32_t c1,
                                                     int32_t c2, int32_t c3, uint32_t mbar, uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint "
                 "[%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(smem_addr),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(mbar), "l"(policy)
                 : "memory");
#endif
}

// Tensor (TMA) store of one box at coordinates (c0, c1) of a 2-D tensor map from
// this block's shared memory, in this thread's current bulk group (sm_90).
__device__ __forceinline__ void ptx_tma_store_2d(const void *map, int32_t c0, int32_t c1, uint32_t smem_addr) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                     (uint64_t)map),
                 "r"(c0), "r"(c1), "r"(smem_addr)
                 : "memory");
#endif
}

// Orders this thread's earlier generic-proxy accesses to shared memory before
// its later async-proxy ones (a bulk copy into a stage that was just read).
__device__ __forceinline__ void ptx_fence_proxy_async_smem(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// 4-byte store into (another) block's shared memory that completes 4 bytes of
// the transaction count of that block's mbarrier: both are shared::cluster
// addresses (ptx_mapa_shared). The receiver sees the data once the phase completes.
__device__ __forceinline__ void ptx_st_async_f32(uint32_t cluster_addr, float v, uint32_t cluster_mbar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];\n" ::"r"(cluster_addr),
                 "r"(__float_as_uint(v)), "r"(cluster_mbar)
                 : "memory");
}

// ---- warpgroup MMA (sm_90a only: ROTQ_WGMMA). PTX ISA: "Asynchronous
// Warpgroup Level Matrix Multiply-Accumulate" (wgmma.mma_async, its register
// fragments and the shared-memory matrix descriptor).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ROTQ_WGMMA 1
#else
#define ROTQ_WGMMA 0
#endif

// Descriptor of a 16-byte-aligned shared-memory operand (PTX "Matrix
// Descriptor Format"): the byte offsets lbo (leading dimension) and sbo (stride
// dimension), and the layout: 0 no swizzle, 1 the 128-byte swizzle (as a TMA
// box with CU_TENSOR_MAP_SWIZZLE_128B writes it), base offset 0 (a swizzled
// operand starts on a 1024-byte boundary). K-major without swizzle: 8 x 16-byte
// core matrices, lbo from one to the next along K, sbo along M / N. MN-major
// under the 128-byte swizzle: a 128-byte row (64 16-bit values along M / N) per
// k, lbo from one 64-wide block of M / N to the next, sbo from one group of 8 k
// rows to the next.
__device__ __forceinline__ uint64_t ptx_wgmma_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo, int layout) {
    return (uint64_t)((smem_addr & 0x3FFFFu) >> 4) | ((uint64_t)((lbo & 0x3FFFFu) >> 4) << 16) |
           ((uint64_t)((sbo & 0x3FFFFu) >> 4) << 32) | ((uint64_t)layout << 62);
}

#if ROTQ_WGMMA
// Orders this warpgroup's register writes (the accumulators) before the wgmma
// instructions that read them.
__device__ __forceinline__ void ptx_wgmma_fence(void) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void ptx_wgmma_commit(void) {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Wait until at most N of this warpgroup's wgmma groups are pending.
template <int N>
__device__ __forceinline__ void ptx_wgmma_wait(void) {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// D (+)= A * B, m64n64k16, fp32 accumulators, A (K-major) and B (MN-major)
// from shared memory by descriptor: D += A * B (ACCUMULATE = 1) or D = A * B
// (0). F16: fp16 operands, else bf16. D, in warp w of the warpgroup: rows
// 16w .. 16w + 15, for n8 block i d[4i .. 4i + 3] as the mma.sync m16n8 C
// fragment.
#define ROTQ_WGMMA_D32                                                                                              \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,"  \
    "%29,%30,%31}"
#define ROTQ_WGMMA_D32_OPS(d)                                                                                       \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),     \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),      \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),     \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
template <bool F16, int ACCUMULATE>
__device__ __forceinline__ void ptx_wgmma_m64n64k16_ss(float (&d)[32], uint64_t a_desc, uint64_t b_desc) {
    if (F16)
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
                     " wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " ROTQ_WGMMA_D32
                     ", %32, %33, p, 1, 1, 0, 1;\n}\n"
                     : ROTQ_WGMMA_D32_OPS(d)
                     : "l"(a_desc), "l"(b_desc), "r"(ACCUMULATE));
    else
        asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
                     " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " ROTQ_WGMMA_D32
                     ", %32, %33, p, 1, 1, 0, 1;\n}\n"
                     : ROTQ_WGMMA_D32_OPS(d)
                     : "l"(a_desc), "l"(b_desc), "r"(ACCUMULATE));
}
#undef ROTQ_WGMMA_D32
#undef ROTQ_WGMMA_D32_OPS
#endif

// max(a, b) that returns NaN when either input is NaN (sm_80+; fmaxf drops a NaN).
__device__ __forceinline__ float ptx_max_nan_f32(float a, float b) {
    float d;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
    return d;
}

// min(a, b) that returns NaN when either input is NaN (sm_80+; fminf drops a NaN).
__device__ __forceinline__ float ptx_min_nan_f32(float a, float b) {
    float d;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b));
    return d;
}

// Bitwise select, (a & m) | (b & ~m), as one LOP3 (ptxas splits the C form in two).
__device__ __forceinline__ uint32_t ptx_bitselect(uint32_t a, uint32_t b, uint32_t m) {
    uint32_t d;
    asm("lop3.b32 %0, %1, %2, %3, 0xe4;" : "=r"(d) : "r"(a), "r"(b), "r"(m));
    return d;
}

// prmt.b32 in its default mode: byte i of the result is byte sel_i (0..7) of
// {b, a}, or with bit 3 of the selector nibble set that byte's sign replicated.
// (__byte_perm keeps only the low 3 bits of each nibble.)
__device__ __forceinline__ uint32_t ptx_prmt(uint32_t a, uint32_t b, uint32_t sel) {
    uint32_t d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}

// Two int32 saturated to s8, packed: c << 16 | s8(a) << 8 | s8(b) (sm_72+). With
// a, b from cvt.rni.s32.f32 (__float2int_rn) ptxas fuses the three into one F2IP.
__device__ __forceinline__ uint32_t ptx_cvt_pack_s8(int a, int b, uint32_t c) {
    uint32_t d;
    asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
// Two floats to fp8 e4m3 (sm_89+), round to nearest even, saturating to +-448:
// a in the high byte, b in the low one. A NaN gives S.1111.111.
__device__ __forceinline__ uint32_t ptx_cvt_e4m3x2(float a, float b) {
    uint16_t r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(a), "f"(b));
    return (uint32_t)r;
}
#endif

// x, through a volatile move: the compiler cannot hoist what is computed from
// it out of a loop (where it would hold the results in registers throughout).
__device__ __forceinline__ uint32_t ptx_opaque_u32(uint32_t x) {
    uint32_t r;
    asm volatile("mov.b32 %0, %1;" : "=r"(r) : "r"(x));
    return r;
}
// The lane index, read afresh each time: values derived from it are then
// recomputed where used rather than hoisted out of a loop and kept live
// (register pressure in the persistent kernels).
__device__ __forceinline__ unsigned ptx_lane_id(void) {
    unsigned r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
}

// The global nanosecond timer and the SM of this thread (diagnostic builds:
// timeline.cuh).
__device__ __forceinline__ unsigned long long ptx_globaltimer(void) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned ptx_smid(void) {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}
