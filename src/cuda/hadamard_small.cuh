// Latency kernel of the power-of-two Hadamard transform for small problems
// (decode and small sizes: rotq_had_small_fits).
//
// The persistent kernel (hadamard_pow2.cuh) is built for bandwidth: 32 values
// per thread, staging in shared memory, a tile loop. At decode sizes its time is the
// serial instruction chain of each thread. This kernel keeps that chain short:
// no staging and no loop (one tile of 2^LE elements, whole row blocks, per
// block), V = 8, 16 or 32 values per thread loaded with 16-byte loads, and as
// few shared-memory exchanges as the size allows.
//
// A tile element's address has LE bits (column bits 0..L-1, then row bits).
// In *round* k a thread holds the V elements whose address bits
// [lo(k), lo(k)+LOGV) vary (its registers); its thread index supplies the other
// bits: the 5 lane bits go to 5 address bits with distinct residues mod 5 (the
// lowest such bits that are not register bits), the warp bits to the rest in
// ascending order. Round 0 is lo = 0 (each thread's values are contiguous, so
// loads are 16-byte and coalesced); round 0 may also finish S0 more bits by
// warp shuffles (they are lane bits 0..S0-1 then). Between rounds the values go
// through shared memory W, one barrier per exchange. W is indexed with
// pad(a) = a + (a >> 5) + (a >> 10): the bank of address a is then
// sum_i a_i * 2^(i mod 5) (mod 32), so lanes on bits of distinct residues never
// conflict, and pad() adds over disjoint bits, so every register's offset is a
// compile-time immediate. Butterflies are fp32, bits in ascending order, then
// the scale, as the CPU reference does.
#pragma once
#include "hadamard_io.cuh"

// Problems of at most this many elements (groups * 2^L) use this kernel: at most
// 128 blocks of >= 1024 elements, one wave on an H100 (132 SMs), so every block
// starts at launch. Larger problems keep the persistent kernel, whose prefetch
// pipeline is what matters once blocks queue up. (The quantize kernels of
// quantize_small.cuh share the bound.)
#define ROTQ_SMALL_MAX_ELEMENTS (1 << 17)
// The Hadamard transform keeps this kernel up to 2^20 elements, except for
// n = 2^13 and 2^14: at 2^20 elements the persistent kernel has one tile per
// block and nothing to overlap, and this one measured 7-16% faster for every
// other n (same-run A/B on the H100), but 31% slower at 2^13 (the cluster
// kernel) and the same at 2^14. At 2^23 the persistent kernel is as fast.
#define ROTQ_HAD_SMALL_MAX_ELEMENTS (1 << 20)
static inline int rotq_had_small_fits(int L, int64_t elements) {
    return elements <= ROTQ_SMALL_MAX_ELEMENTS ||
           (elements <= ROTQ_HAD_SMALL_MAX_ELEMENTS && L != 13 && L != 14);
}

// Rows of up to 2^this elements take the one-round plan (rotq_small_plan::S0).
#ifndef ROTQ_SMALL_SHUFFLE_MAX_L
#define ROTQ_SMALL_SHUFFLE_MAX_L 7
#endif

// Thread-index bits -> address bits of one round, as runs of consecutive bits.
typedef struct rotq_small_deposit {
    int runs;
    int src[16], len[16], dst[16];
} rotq_small_deposit;

// log2 of the values a thread of plan L holds: 8 up to n = 1024 (short chains;
// rows are cheap to spread over more threads), 16 for n = 2048 and 4096, 32 above
// (one row block per block: fewer exchanges, each of which moves the whole row
// through W).
__host__ __device__ constexpr int rotq_small_logv(int L) { return L <= 10 ? 3 : L <= 12 ? 4 : 5; }

template <int L>
struct rotq_small_plan {
    static constexpr int LOGV = rotq_small_logv(L);
    static constexpr int V = 1 << LOGV;
    static constexpr int LE = L <= 10 ? 10 : L; // tile of 2^LE elements: 128 threads up to n = 1024
    static constexpr int TBITS = LE - LOGV;
    static constexpr int THREADS = 1 << TBITS;
    // Shuffle bits of round 0: up to n = 2^ROTQ_SMALL_SHUFFLE_MAX_L every bit
    // past the registers (one round: no exchange through W, no barrier, and the
    // values end as V consecutive elements, so one vector store); above, the
    // remainder of L - LOGV over LOGV when it is 1 or 2 (cheaper than an
    // exchange for one more round).
    static constexpr int S0 = L <= LOGV                      ? 0
                              : L <= ROTQ_SMALL_SHUFFLE_MAX_L ? L - LOGV
                              : ((L - LOGV) % LOGV <= 2 ? (L - LOGV) % LOGV : 0);
    static constexpr int ROUNDS = L <= LOGV + S0 ? 1 : 1 + (L - 1 - S0) / LOGV;

    // First address bit of round k's registers, and the first bit not done before it.
    __host__ __device__ static constexpr int lo(int k) {
        return k == 0 ? 0 : (LOGV + S0 + (k - 1) * LOGV < L - LOGV ? LOGV + S0 + (k - 1) * LOGV : L - LOGV);
    }
    __host__ __device__ static constexpr int done(int k) { return k == 0 ? 0 : LOGV + S0 + (k - 1) * LOGV; }
    // Register bit i gets a butterfly in round k (a column bit not done before).
    __host__ __device__ static constexpr bool active(int k, int i) {
        return lo(k) + i >= done(k) && lo(k) + i < L;
    }
    __host__ __device__ static constexpr bool is_reg(int k, int b) { return b >= lo(k) && b < lo(k) + LOGV; }
    // Lane bits: for each residue mod 5 the lowest address bit that is not a register bit.
    __host__ __device__ static constexpr bool is_lane(int k, int b) {
        if (b >= LE || is_reg(k, b)) return false;
        int p = b % 5;
        while (is_reg(k, p)) p += 5;
        return p == b;
    }
    // Address bit of thread-index bit j in round k: lanes (j < 5), then warps.
    __host__ __device__ static constexpr int thread_pos(int k, int j) {
        const bool lane = j < 5;
        int idx = lane ? j : j - 5;
        for (int b = 0; b < LE; b++) {
            if (is_reg(k, b) || is_lane(k, b) != lane) continue;
            if (idx-- == 0) return b;
        }
        return -1;
    }
    __host__ __device__ static constexpr rotq_small_deposit deposit(int k) {
        rotq_small_deposit d{};
        for (int j = 0; j < TBITS; j++) {
            const int p = thread_pos(k, j);
            if (d.runs > 0 && p == d.dst[d.runs - 1] + d.len[d.runs - 1]) {
                d.len[d.runs - 1]++;
            } else {
                d.src[d.runs] = j, d.len[d.runs] = 1, d.dst[d.runs] = p;
                d.runs++;
            }
        }
        return d;
    }
    __host__ __device__ static constexpr unsigned pad(unsigned a) { return a + (a >> 5) + (a >> 10); }
    static constexpr int W_WORDS = ROUNDS == 1 ? 0 : (int)pad((1u << LE) - 1) + 1;

    // Every round is a layout (each address bit placed once, 5 lanes of distinct
    // residues) and the rounds butterfly every column bit exactly once.
    __host__ __device__ static constexpr bool valid() {
        unsigned cols = 0;
        for (int k = 0; k < ROUNDS; k++) {
            unsigned seen = 0, res = 0;
            for (int j = 0; j < TBITS; j++) {
                const int p = thread_pos(k, j);
                if (p < 0 || (seen >> p & 1u)) return false;
                seen |= 1u << p;
                if (j < 5) res |= 1u << (p % 5);
            }
            for (int i = 0; i < LOGV; i++) {
                if (seen >> (lo(k) + i) & 1u) return false;
                seen |= 1u << (lo(k) + i);
                if (active(k, i)) {
                    if (cols >> (lo(k) + i) & 1u) return false;
                    cols |= 1u << (lo(k) + i);
                }
            }
            if (seen != (1u << LE) - 1u || res != 31u) return false;
        }
        for (int s = 0; s < S0; s++) {
            if (cols >> (LOGV + s) & 1u) return false;
            cols |= 1u << (LOGV + s);
        }
        return cols == (1u << L) - 1u;
    }
};

// Address bits of this thread in round K (register bits zero).
template <int L, int K>
__device__ __forceinline__ unsigned rotq_small_dep(unsigned t) {
    constexpr rotq_small_deposit d = rotq_small_plan<L>::deposit(K);
    unsigned a = 0;
#pragma unroll
    for (int i = 0; i < 16; i++)
        if (i < d.runs) a |= ((t >> d.src[i]) & ((1u << d.len[i]) - 1u)) << d.dst[i];
    return a;
}

// Element offset of row block g (g < 2^20 here, so 32-bit division) and, in
// *sbase, the index into the signs of its column 0.
__device__ __forceinline__ int64_t rotq_small_base(const rotq_had_args &a, uint32_t g, int64_t stride,
                                                   uint32_t *sbase) {
    if (a.blocks_per_row == 1) {
        *sbase = 0;
        return (int64_t)g * stride;
    }
    const uint32_t bpr = (uint32_t)a.blocks_per_row, row = g / bpr, blk = g - row * bpr;
    *sbase = blk * (uint32_t)a.n;
    return (int64_t)row * stride + (int64_t)blk * a.n;
}

// Flips v when byte k of w (an int8 sign) is negative: XOR of the byte's sign bit.
__device__ __forceinline__ float rotq_small_flip(float v, uint32_t w, int k) {
    return __uint_as_float(__float_as_uint(v) ^ ((w << (24 - 8 * k)) & 0x80000000u));
}

// 2 NW values from NW words of packed 16-bit elements (low half first). The
// dtype branch sits outside the loop: rotq_from_16_lo / _hi fold to one
// conversion each.
template <int NW>
__device__ __forceinline__ void rotq_small_unpack16(const uint32_t *w, bool f16, float *v) {
    if (f16) {
#pragma unroll
        for (int j = 0; j < NW; j++)
            v[2 * j] = rotq_from_16_lo(w[j], ROTQ_DTYPE_F16), v[2 * j + 1] = rotq_from_16_hi(w[j], ROTQ_DTYPE_F16);
    } else {
#pragma unroll
        for (int j = 0; j < NW; j++)
            v[2 * j] = rotq_from_16_lo(w[j], ROTQ_DTYPE_BF16), v[2 * j + 1] = rotq_from_16_hi(w[j], ROTQ_DTYPE_BF16);
    }
}

// N values from x[off ...] (element offset) in the input dtype; 16-byte loads
// when vec (the caller checked alignment and contiguity).
template <int N>
__device__ __forceinline__ void rotq_small_read(const rotq_had_args &a, int64_t off, bool vec, float *v) {
    if (a.in_dtype == ROTQ_DTYPE_F32) {
        const float *x = (const float *)a.x + off;
        if (vec && N % 4 == 0) {
#pragma unroll
            for (int i = 0; i < N / 4; i++) {
                const float4 q = ((const float4 *)x)[i];
                v[4 * i] = q.x, v[4 * i + 1] = q.y, v[4 * i + 2] = q.z, v[4 * i + 3] = q.w;
            }
        } else {
#pragma unroll
            for (int r = 0; r < N; r++) v[r] = x[r];
        }
        return;
    }
    // The dtype branches sit outside the loops: rotq_from_16 folds to one conversion.
    const uint16_t *x = (const uint16_t *)a.x + off;
    const bool f16 = a.in_dtype == ROTQ_DTYPE_F16;
    if (vec && N % 8 == 0) {
        uint32_t w[N / 2 > 0 ? N / 2 : 1];
#pragma unroll
        for (int i = 0; i < N / 8; i++) {
            const uint4 q = ((const uint4 *)x)[i];
            w[4 * i] = q.x, w[4 * i + 1] = q.y, w[4 * i + 2] = q.z, w[4 * i + 3] = q.w;
        }
        rotq_small_unpack16<N / 2>(w, f16, v);
    } else if (f16) {
#pragma unroll
        for (int r = 0; r < N; r++) v[r] = rotq_from_16(x[r], ROTQ_DTYPE_F16);
    } else {
#pragma unroll
        for (int r = 0; r < N; r++) v[r] = rotq_from_16(x[r], ROTQ_DTYPE_BF16);
    }
}

// N values (already scaled) to y[off + i * STRIDE] in the output dtype; 16-byte
// stores when vec and STRIDE == 1.
template <int N, int STRIDE>
__device__ __forceinline__ void rotq_small_write(const rotq_had_args &a, int64_t off, bool vec, const float *v) {
    if (a.out_dtype == ROTQ_DTYPE_F32) {
        float *y = (float *)a.y + off;
        if (vec && STRIDE == 1 && N % 4 == 0) {
#pragma unroll
            for (int i = 0; i < N / 4; i++) ((float4 *)y)[i] = make_float4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
        } else {
#pragma unroll
            for (int r = 0; r < N; r++) y[r * STRIDE] = v[r];
        }
        return;
    }
    const int dt = a.out_dtype;
    uint16_t h[N];
    if (dt == ROTQ_DTYPE_F16) {
#pragma unroll
        for (int r = 0; r < N; r++) h[r] = rotq_to_16(v[r], ROTQ_DTYPE_F16);
    } else {
#pragma unroll
        for (int r = 0; r < N; r++) h[r] = rotq_to_16(v[r], ROTQ_DTYPE_BF16);
    }
    uint16_t *y = (uint16_t *)a.y + off;
    if (vec && STRIDE == 1 && N % 8 == 0) {
#pragma unroll
        for (int i = 0; i < N / 8; i++) {
            uint32_t w[4];
#pragma unroll
            for (int j = 0; j < 4; j++) w[j] = (uint32_t)h[8 * i + 2 * j] | ((uint32_t)h[8 * i + 2 * j + 1] << 16);
            ((uint4 *)y)[i] = make_uint4(w[0], w[1], w[2], w[3]);
        }
    } else {
#pragma unroll
        for (int r = 0; r < N; r++) y[r * STRIDE] = h[r];
    }
}

// V consecutive elements of row block g from column col (signs applied).
template <int V>
__device__ __forceinline__ void rotq_small_load_row(const rotq_had_args &a, uint32_t g, uint32_t col, float *v) {
    uint32_t sb;
    rotq_small_read<V>(a, rotq_small_base(a, g, a.x_stride, &sb) + col, a.vec_in != 0, v);
    if (!a.signs) return;
    const int8_t *s = a.signs + sb + col;
    if (((uintptr_t)s & 7u) == 0) {
#pragma unroll
        for (int i = 0; i < V / 8; i++) {
            const uint2 w = ((const uint2 *)s)[i];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                v[8 * i + k] = rotq_small_flip(v[8 * i + k], w.x, k);
                v[8 * i + 4 + k] = rotq_small_flip(v[8 * i + 4 + k], w.y, k);
            }
        }
    } else {
#pragma unroll
        for (int r = 0; r < V; r++) v[r] = rotq_apply_sign(s, r, v[r]);
    }
}

// Round-0 values of the thread whose first tile element is e0 (signs applied);
// zeros past the end.
template <int L>
__device__ __forceinline__ void rotq_small_load(const rotq_had_args &a, uint32_t e0, uint32_t total, float *v) {
    typedef rotq_small_plan<L> P;
    if (L >= P::LOGV) { // one row block
        if (e0 < total) {
            rotq_small_load_row<P::V>(a, e0 >> L, e0 & ((1u << L) - 1u), v);
        } else {
#pragma unroll
            for (int r = 0; r < P::V; r++) v[r] = 0.0f;
        }
        return;
    }
    // n < V: the thread holds V / n row blocks. Vector loads only when they are
    // packed back to back (the host allows vec_in for n * size < 16 only then).
    constexpr int RB = (1 << L) < P::V ? (1 << L) : P::V; // elements per row block here
    const bool vec = a.vec_in && e0 + P::V <= total && ((1 << L) * (a.in_dtype == ROTQ_DTYPE_F32 ? 4 : 2)) % 16 != 0;
    if (vec) {
        uint32_t sb;
        rotq_small_read<P::V>(a, rotq_small_base(a, e0 >> L, a.x_stride, &sb), true, v);
    } else {
#pragma unroll
        for (int q = 0; q < P::V / RB; q++) {
            const uint32_t e = e0 + q * RB;
            uint32_t sb;
            if (e < total)
                rotq_small_read<RB>(a, rotq_small_base(a, e >> L, a.x_stride, &sb), a.vec_in != 0, v + q * RB);
            else
#pragma unroll
                for (int r = 0; r < RB; r++) v[q * RB + r] = 0.0f;
        }
    }
    if (a.signs) {
#pragma unroll
        for (int q = 0; q < P::V / RB; q++) {
            const uint32_t e = e0 + q * RB;
            uint32_t sb;
            rotq_small_base(a, e >> L, 0, &sb);
#pragma unroll
            for (int r = 0; r < RB; r++)
                if (e < total) v[q * RB + r] = rotq_apply_sign(a.signs, sb + r, v[q * RB + r]);
        }
    }
}

// The butterflies of round K on the register bits active in it.
template <int L, int K>
__device__ __forceinline__ void rotq_small_butterflies(float *v) {
    typedef rotq_small_plan<L> P;
#pragma unroll
    for (int i = 0; i < P::LOGV; i++) {
        if (!P::active(K, i)) continue;
#pragma unroll
        for (int r = 0; r < P::V; r++) {
            if (r & (1 << i)) continue;
            const float x = v[r], y = v[r | (1 << i)];
            v[r] = x + y;
            v[r | (1 << i)] = x - y;
        }
    }
}

// Round 0's shuffle bits: address bit LOGV + s is lane bit s. The lower lane
// keeps a + b, the upper one a - b: one FFMA with a +-1 factor (exact).
template <int L>
__device__ __forceinline__ void rotq_small_shuffles(float *v) {
    typedef rotq_small_plan<L> P;
#pragma unroll
    for (int s = 0; s < P::S0; s++) {
        const float sg = (threadIdx.x >> s) & 1u ? -1.0f : 1.0f;
#pragma unroll
        for (int r = 0; r < P::V; r++) v[r] = fmaf(sg, v[r], __shfl_xor_sync(0xffffffffu, v[r], 1 << s));
    }
}

// Values from round K-1's layout to round K's, through W. One barrier: before
// the next exchange each thread writes back exactly the W slots it has read.
template <int L, int K>
__device__ __forceinline__ void rotq_small_exchange(float *W, unsigned t, float *v) {
    typedef rotq_small_plan<L> P;
    const unsigned wb = P::pad(rotq_small_dep<L, K - 1>(t));
#pragma unroll
    for (int r = 0; r < P::V; r++) W[wb + P::pad((unsigned)r << P::lo(K - 1))] = v[r];
    __syncthreads();
    const unsigned rb = P::pad(rotq_small_dep<L, K>(t));
#pragma unroll
    for (int r = 0; r < P::V; r++) v[r] = W[rb + P::pad((unsigned)r << P::lo(K))];
}

// Scales and stores the values of the last round.
template <int L>
__device__ __forceinline__ void rotq_small_store(const rotq_had_args &a, uint32_t e_tile, uint32_t total, unsigned t,
                                                 float *v) {
    typedef rotq_small_plan<L> P;
    constexpr int K = P::ROUNDS - 1;
    const uint32_t mask = (1u << L) - 1u;
    const uint32_t e = e_tile + rotq_small_dep<L, K>(t);
#pragma unroll
    for (int r = 0; r < P::V; r++) v[r] *= a.scale;
    uint32_t sb;
    if (L >= P::LOGV) { // one row block, registers at stride 2^lo
        if (e >= total) return;
        const int64_t off = rotq_small_base(a, e >> L, a.y_stride, &sb) + (e & mask);
        rotq_small_write<P::V, 1 << P::lo(K)>(a, off, a.vec_out != 0, v);
        return;
    }
    constexpr int RB = (1 << L) < P::V ? (1 << L) : P::V;
    if (a.vec_out && e + P::V <= total && ((1 << L) * (a.out_dtype == ROTQ_DTYPE_F32 ? 4 : 2)) % 16 != 0) {
        rotq_small_write<P::V, 1>(a, rotq_small_base(a, e >> L, a.y_stride, &sb), true, v);
        return;
    }
#pragma unroll
    for (int q = 0; q < P::V / RB; q++)
        if (e + q * RB < total)
            rotq_small_write<RB, 1>(a, rotq_small_base(a, (e + q * RB) >> L, a.y_stride, &sb), a.vec_out != 0,
                                    v + q * RB);
}

// Every round of plan L on the values of round 0 (loaded): they end in the last
// round's layout. W: plan::W_WORDS floats of shared memory.
template <int L>
__device__ __forceinline__ void rotq_small_rounds(float *W, unsigned t, float *v) {
    typedef rotq_small_plan<L> P;
    static_assert(P::valid(), "rotq_small_plan: a round is not a conflict-free layout");
    static_assert(P::ROUNDS <= 3, "rotq_small_rounds handles three rounds");
    rotq_small_butterflies<L, 0>(v);
    rotq_small_shuffles<L>(v);
    if constexpr (P::ROUNDS > 1) {
        rotq_small_exchange<L, 1>(W, t, v);
        rotq_small_butterflies<L, 1>(v);
    }
    if constexpr (P::ROUNDS > 2) {
        rotq_small_exchange<L, 2>(W, t, v);
        rotq_small_butterflies<L, 2>(v);
    }
}

// DT >= 0: the build for rotq_had_fast_case with vector output. The generic
// build's executed path jumps over the f32, sign and element-wise blocks; this
// one is a short straight line (rotq_had_small<7>: 172 SASS instructions against
// 384), 0.2-0.3 us less per call on the H100 (perf-notes, decode v6).
template <int L, int DT = -1>
__global__ void __launch_bounds__(rotq_small_plan<L>::THREADS) rotq_had_small(rotq_had_args a) {
    typedef rotq_small_plan<L> P;
    if (DT >= 0) rotq_had_fast_args(a, DT, true);
    extern __shared__ float rotq_small_w[];
    const unsigned t = threadIdx.x;
    const uint32_t total = (uint32_t)a.groups << L; // <= ROTQ_HAD_SMALL_MAX_ELEMENTS
    const uint32_t e_tile = blockIdx.x << P::LE;
    float v[P::V];
    rotq_small_load<L>(a, e_tile + (t << P::LOGV), total, v);
    rotq_small_rounds<L>(rotq_small_w, t, v);
    rotq_small_store<L>(a, e_tile, total, t, v);
}
