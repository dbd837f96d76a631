// Compile-time layout of the power-of-two Hadamard kernels.
//
// A row block of 2^L elements is transformed with radix-2 butterflies in fp32
// registers. Every thread holds 32 values, so one *phase* applies 5 butterfly
// stages (5 index bits) without touching memory. Phases are chained through a
// shared-memory buffer W of fp32 values: each thread writes the 32 values it
// holds and reads back 32 values that differ in the next 5 index bits.
//
// A *subtile* is 2^LT consecutive elements (whole row blocks). In phase p a
// thread holds the elements whose address bits [lo, lo+5) vary, the rest of the
// address coming from the thread index:
//   address(tid, r) = (tid & ((1<<lo)-1)) | ((tid >> lo) << (lo+5)) | (r << lo)
// so the lanes of a warp always cover address bits 0..4 (phases >= 1) or 5..9
// (phase 0): coalesced global stores in the last phase, and no shared-memory
// bank conflicts under the padded layout below.
#pragma once

// BT: the threads of a block, unless one subtile needs more (the fused
// quantize kernel runs 128-thread blocks where its rows fit their tiles).
template <int L, int BT = 256>
struct rotq_pow2_plan {
    static constexpr int LOG_TILE = L > 10 ? L : 10;             // subtile: 2^LT elements
    static constexpr int PHASES = L == 0 ? 1 : (L + 4) / 5;      // 5 butterfly bits per phase
    static constexpr int SUB_THREADS = 1 << (LOG_TILE - 5);      // threads per subtile
    static constexpr int SUBTILES = SUB_THREADS >= BT ? 1 : BT / SUB_THREADS;   // per block
    static constexpr int THREADS = SUB_THREADS * SUBTILES;
    static constexpr int TILE = 1 << LOG_TILE;

    // Lowest address bit held in registers during phase p.
    __host__ __device__ static constexpr int lo(int p) {
        return 5 * p < LOG_TILE - 5 ? 5 * p : LOG_TILE - 5;
    }
    // Register bit i gets a butterfly in phase p iff its address bit is a
    // column bit (< L) not handled by an earlier phase (>= 5p).
    __host__ __device__ static constexpr bool active(int p, int i) {
        return lo(p) + i >= 5 * p && lo(p) + i < L;
    }
};

// Slot of element a in W (block-local fp32): one padding word after every 32,
// 1024 and 32768 elements, so that the 32 lanes of every phase's accesses
// (address bits 0..4, or 5..9 in phase 0) hit 32 distinct banks. The map is
// additive over disjoint bit sets, rotq_w_index(a | b) = rotq_w_index(a) +
// rotq_w_index(b): a thread computes one base per phase and every register's
// offset is a compile-time constant, the immediate of its LDS/STS. (An XOR
// swizzle is as conflict-free but costs two integer instructions per access.)
__host__ __device__ constexpr unsigned rotq_w_index(unsigned a) {
    return a + (a >> 5) + (a >> 10) + (a >> 15);
}
// rotq_w_index(x << S) for x << S < 2^32: the shifts of the shifted value are
// shifts of x, which need no masking (one IMAD and a shift or two, where the
// general form of x << S costs three masks more).
template <int S>
__device__ __forceinline__ unsigned rotq_w_index_shl(unsigned x) {
    return (x << S) + (S >= 5 ? x << (S >= 5 ? S - 5 : 0) : x >> (S < 5 ? 5 - S : 0)) +
           (S >= 10 ? x << (S >= 10 ? S - 10 : 0) : x >> (S < 10 ? 10 - S : 0)) +
           (S >= 15 ? x << (S >= 15 ? S - 15 : 0) : x >> (S < 15 ? 15 - S : 0));
}
// W slots for elements 0 .. n - 1.
__host__ __device__ constexpr unsigned rotq_w_slots(unsigned n) { return n == 0 ? 0 : rotq_w_index(n - 1) + 1; }

// The pair layout of the power-of-two kernels at 2^11 .. 2^14 (the Hadamard
// kernel; the fused one at 2^11, 2^12: rotq_pow2_pair_plan): two padding words
// after every 32 elements, so element
// pairs (address bit 0 = 0, 1) stay 8-byte aligned for LDS.64 / STS.64. Also
// additive over disjoint bit sets; conflict-free for every half-warp access of
// that plan (checked by a bank simulation).
__host__ __device__ constexpr unsigned rotq_w2_index(unsigned a) { return a + 2u * (a >> 5); }
__host__ __device__ constexpr unsigned rotq_w2_slots(unsigned n) { return n == 0 ? 0 : rotq_w2_index(n - 1) + 1; }

// The quad layout of the fused quantize kernel at 2^7 (rotq_qt_quad_plan): four
// padding words after every 32 elements, so 16-byte chunks (address bits 0, 1)
// stay aligned for LDS.128 / STS.128; additive, and conflict-free for every
// quarter-warp access of that plan (a bank simulation).
__host__ __device__ constexpr unsigned rotq_w4_index(unsigned a) { return a + 4u * (a >> 5); }
__host__ __device__ constexpr unsigned rotq_w4_slots(unsigned n) { return n == 0 ? 0 : rotq_w4_index(n - 1) + 1; }

// Radix-2 butterflies over register bit `bit` of an N-value array.
template <int BIT, int N = 32>
__device__ __forceinline__ void rotq_butterfly(float v[N]) {
#pragma unroll
    for (int r = 0; r < N; r++) {
        if (r & (1 << BIT)) continue;
        float a = v[r], b = v[r | (1 << BIT)];
        v[r] = a + b;
        v[r | (1 << BIT)] = a - b;
    }
}

// Subtile-local address of this thread's register 0 in phase p.
__device__ __forceinline__ unsigned rotq_phase_dep(unsigned tid, int lo) {
    return (tid & ((1u << lo) - 1u)) | ((tid >> lo) << (lo + 5));
}

// W slot of this thread's register 0 in phase p, for the subtile that
// starts at block-local element sub_base (a multiple of the subtile size). The
// per-register offsets are rotq_w_index(r << lo), compile-time constants.
__device__ __forceinline__ unsigned rotq_phase_base(unsigned sub_base, unsigned tid, int lo) {
    return rotq_w_index(sub_base | rotq_phase_dep(tid, lo));
}

// Chunk swizzle for 16-byte chunks of a staging buffer: chunk bits 3..5 XORed
// into bits 0..2, which is TMA's 128-byte swizzle (tma.cuh) when the buffer is
// 1024-byte aligned. The accesses that use it: consecutive chunks (one per lane),
// and a lane's own 4 or 8 consecutive chunks (stride 4 or 8 across lanes), both
// spread over 8 distinct bank groups per 8 lanes.
__host__ __device__ constexpr unsigned rotq_chunk_swizzle(unsigned c) {
    return c ^ ((c >> 3) & 7u);
}
