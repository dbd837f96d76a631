// The power-of-two transform on a thread's 32 registers: butterflies, lane
// butterflies, the exchanges through W between phases (32-bit, and the pair
// exchanges of 2^11 .. 2^14), and the phases driver with its output stores. The
// layout of each phase: hadamard_plan.cuh.
#pragma once
#include "hadamard_io.cuh"
#include "hadamard_plan.cuh"
#include "tma.cuh"

// Butterflies of phase p for the register bits that are active in it.
template <int L>
__device__ __forceinline__ void rotq_phase(int p, float v[32]) {
    typedef rotq_pow2_plan<L> plan;
    if (plan::active(p, 0)) rotq_butterfly<0>(v);
    if (plan::active(p, 1)) rotq_butterfly<1>(v);
    if (plan::active(p, 2)) rotq_butterfly<2>(v);
    if (plan::active(p, 3)) rotq_butterfly<3>(v);
    if (plan::active(p, 4)) rotq_butterfly<4>(v);
}

// The butterflies of phase p with the scale s folded into its last level:
// (a + b) s, (a - b) s as fma(a, s, RN(b s)), fma(a, s, -RN(b s)), three
// instructions for two values instead of four (the Hadamard output path; the
// fused quantize kernels keep the CPU's order, butterflies then * s).
template <int BIT>
__device__ __forceinline__ void rotq_butterfly_scaled(float v[32], float s) {
#pragma unroll
    for (int r = 0; r < 32; r++) {
        if (r & (1 << BIT)) continue;
        const float a = v[r], bs = v[r | (1 << BIT)] * s;
        v[r] = fmaf(a, s, bs);
        v[r | (1 << BIT)] = fmaf(a, s, -bs);
    }
}
template <int L>
__device__ __forceinline__ void rotq_phase_scaled(int p, float v[32], float s) {
    typedef rotq_pow2_plan<L> plan;
    // the highest active register bit takes the scale
    const int top = plan::active(p, 4) ? 4 : plan::active(p, 3) ? 3 : plan::active(p, 2) ? 2 : plan::active(p, 1) ? 1 : 0;
    if (plan::active(p, 0)) { if (top == 0) rotq_butterfly_scaled<0>(v, s); else rotq_butterfly<0>(v); }
    if (plan::active(p, 1)) { if (top == 1) rotq_butterfly_scaled<1>(v, s); else rotq_butterfly<1>(v); }
    if (plan::active(p, 2)) { if (top == 2) rotq_butterfly_scaled<2>(v, s); else rotq_butterfly<2>(v); }
    if (plan::active(p, 3)) { if (top == 3) rotq_butterfly_scaled<3>(v, s); else rotq_butterfly<3>(v); }
    if (plan::active(p, 4)) rotq_butterfly_scaled<4>(v, s);
}

// Radix-2 butterflies between lanes that differ in lane bit `mask` (1, 2, 4, ...):
// the lower lane keeps a + b, the upper one a - b.
template <int N = 32>
__device__ __forceinline__ void rotq_lane_butterfly(float v[N], int mask) {
    const bool upper = (threadIdx.x & mask) != 0;
#pragma unroll
    for (int r = 0; r < N; r++) {
        const float other = __shfl_xor_sync(0xffffffffu, v[r], mask);
        v[r] = upper ? other - v[r] : v[r] + other;
    }
}

// Rows of 2^L <= 1024 in phase-0 layout (a thread's 32 consecutive elements
// of a one-warp subtile): address bits 5 .. L - 1 are lane bits 0 .. L - 6, so
// shuffle butterflies finish the rows without an exchange; then the scale s.
template <int L>
__device__ __forceinline__ void rotq_finish_lane_rows(float v[32], float s) {
    static_assert(L <= 10, "rotq_finish_lane_rows: the row must lie in one warp");
    if (L >= 6) rotq_lane_butterfly(v, 1);
    if (L >= 7) rotq_lane_butterfly(v, 2);
    if (L >= 8) rotq_lane_butterfly(v, 4);
    if (L >= 9) rotq_lane_butterfly(v, 8);
    if (L >= 10) rotq_lane_butterfly(v, 16);
#pragma unroll
    for (int r = 0; r < 32; r++) v[r] *= s;
}

// Barrier between phases: a warp when a subtile is one warp, else the block.
template <int SUB_THREADS>
__device__ __forceinline__ void rotq_subtile_sync(void) {
    if (SUB_THREADS == 32)
        __syncwarp();
    else
        __syncthreads();
}

// Phases 1.. of a subtile: values in registers (phase-0 layout) go through W
// (block-local, padded fp32: rotq_w_index) and come back with every butterfly applied, in
// the last phase's layout. sub_base: the subtile's first block-local element.
// SCALED: the last phase applies the scale s too (rotq_phase_scaled).
template <int L, bool SCALED = false>
__device__ __forceinline__ void rotq_pow2_exchanges(float *W, unsigned sub_base, unsigned tid, float v[32],
                                                    float s = 1.0f) {
    typedef rotq_pow2_plan<L> plan;
#pragma unroll
    for (int p = 1; p < plan::PHASES; p++) {
        const unsigned wbase = rotq_phase_base(sub_base, tid, plan::lo(p - 1));
#pragma unroll
        for (int r = 0; r < 32; r++) W[wbase + rotq_w_index((unsigned)r << plan::lo(p - 1))] = v[r];
        rotq_subtile_sync<plan::SUB_THREADS>();
        const unsigned rbase = rotq_phase_base(sub_base, tid, plan::lo(p));
#pragma unroll
        for (int r = 0; r < 32; r++) v[r] = W[rbase + rotq_w_index((unsigned)r << plan::lo(p))];
        if (SCALED && p == plan::PHASES - 1)
            rotq_phase_scaled<L>(p, v, s);
        else
            rotq_phase<L>(p, v);
        // No barrier before the next phase's writes: each thread writes back
        // exactly the W slots it has just read.
    }
}

// The last phase's values (layout of rotq_pow2_exchanges), scaled, back to the
// W slots they were just read from (no barrier needed before): the fused
// quantize kernels read rows from W afterwards.
template <int L>
__device__ __forceinline__ void rotq_pow2_store_w(float *W, unsigned sub_base, unsigned tid, const float v[32],
                                                  float scale) {
    typedef rotq_pow2_plan<L> plan;
    constexpr int lo = plan::lo(plan::PHASES - 1);
    const unsigned wbase = rotq_phase_base(sub_base, tid, lo);
#pragma unroll
    for (int r = 0; r < 32; r++) W[wbase + rotq_w_index((unsigned)r << lo)] = v[r] * scale;
}

// Element offset in y of column 0 of "row" R of a tile sequence, and whether R
// exists. Power-of-two kernels: R is a row block of 2^L. Factor kernels (KF):
// R indexes the K*G rows of 2^L that a block holds in W, G row blocks of
// n = K*2^L starting at row block g0.
template <int L, bool KF>
__device__ __forceinline__ int64_t rotq_row_offset(const rotq_had_args &a, int64_t R, int32_t k, int64_t g0,
                                                   bool *live) {
    if (!KF) {
        *live = R < a.groups;
        return rotq_group_base(a, R, a.y_stride);
    }
    const int32_t gl = (int32_t)R < k ? 0 : (int32_t)R / k; // no division for one row block per tile
    const int64_t g = g0 + gl;
    *live = g < a.groups;
    return rotq_group_base(a, g, a.y_stride) + ((int64_t)((int32_t)R - gl * k) << L);
}

// Hadamard output of n = 2^11 .. 2^13 (one row per subtile, three phases of
// 5, 4 and L - 9 butterfly bits): address bit 0 stays in a register in every
// phase, so each exchange through W moves pairs (bit 0 = 0, 1) of adjacent W
// words, rotq_w2_index, with 8-byte STS / LDS: half the shared-memory
// instructions of 32-bit exchanges. Phase 1 holds address bits {0, 5..8},
// phase 2 the low P = 14 - L bits and 9 .. L-1, so a thread ends with 2^P
// consecutive elements per register group, stored as vectors (4, 8 or 16
// bytes of 16-bit values, lanes contiguous on bits P .. P + 4). The same
// butterfly levels in the same order as the 32-bit exchanges (bits 0..4, then
// 5.., then the scale folded into the last level): the results are identical.
// (Before: 5 + 5 + (L - 10) bits with 32-bit exchanges and 8- or 16-byte stores.)
template <int L>
struct rotq_pow2_pair_plan {
    static constexpr bool ON = L >= 11 && L <= 13;
    static constexpr int P = ON ? 14 - L : 1;                       // low bits held in phase 2
    // 2^14 (5 + 4 + 5 bits): only the first exchange is by pairs; phase 2 holds
    // bits 9..13 with the lanes on bits 0..4, as the 32-bit exchanges' last phase
    // (rotq_pow2_pair14_phases). Either way W has the pair layout.
    static constexpr bool W2 = L >= 11 && L <= 14;
    __device__ static constexpr unsigned addr1(int r) {             // phase 1: subtile address of register r
        return ((unsigned)r & 1u) | ((unsigned)(r >> 1) << 5);
    }
    __device__ static unsigned dep1(unsigned tid) {                 // ... of thread tid's register 0
        return ((tid & 15u) << 1) | ((tid >> 4) << 9);
    }
    __device__ static constexpr unsigned addr2(int r) {             // phase 2
        return ((unsigned)r & ((1u << P) - 1u)) | ((unsigned)(r >> P) << 9);
    }
    __device__ static unsigned dep2(unsigned tid) { return tid << P; }
};

// Pairs of registers (r, r + 1; r even) to and from W slots base + rotq_w2_index(addr(r)).
template <unsigned (*ADDR)(int)>
__device__ __forceinline__ void rotq_w2_store_pairs(float *W, unsigned base, const float v[32]) {
#pragma unroll
    for (int r = 0; r < 32; r += 2) *(float2 *)(W + base + rotq_w2_index(ADDR(r))) = make_float2(v[r], v[r + 1]);
}
template <unsigned (*ADDR)(int)>
__device__ __forceinline__ void rotq_w2_load_pairs(const float *W, unsigned base, float v[32]) {
#pragma unroll
    for (int r = 0; r < 32; r += 2) {
        const float2 t = *(const float2 *)(W + base + rotq_w2_index(ADDR(r)));
        v[r] = t.x, v[r + 1] = t.y;
    }
}
__device__ constexpr unsigned rotq_pow2_addr0(int r) { return (unsigned)r; } // phase 0: 32 consecutive

// Phase 1 of rotq_pow2_pair_plan (2^11 .. 2^14) on the phase-0 values v
// (butterflied), through W and back, ending with the barrier before phase 2's reads.
template <int L>
__device__ __forceinline__ void rotq_pow2_pair_phase1(float *W, unsigned sub_base, unsigned tid, float v[32]) {
    typedef rotq_pow2_pair_plan<L> pp;
    rotq_w2_store_pairs<rotq_pow2_addr0>(W, rotq_w2_index(sub_base | (tid << 5)), v);
    __syncthreads();
    const unsigned b1 = rotq_w2_index(sub_base | pp::dep1(tid));
    rotq_w2_load_pairs<pp::addr1>(W, b1, v);
    rotq_butterfly<1>(v);
    rotq_butterfly<2>(v);
    rotq_butterfly<3>(v);
    rotq_butterfly<4>(v);
    // back to the slots just read: no barrier before these writes
    rotq_w2_store_pairs<pp::addr1>(W, b1, v);
    __syncthreads();
}
// Phases 1 and 2 (2^11 .. 2^13), the last level scaled by s when SCALED (the
// fused quantize kernels scale afterwards, as the CPU does).
template <int L, bool SCALED = true>
__device__ __forceinline__ void rotq_pow2_pair_phases(float *W, unsigned sub_base, unsigned tid, float v[32],
                                                      float s = 1.0f) {
    typedef rotq_pow2_pair_plan<L> pp;
    rotq_pow2_pair_phase1<L>(W, sub_base, tid, v);
    rotq_w2_load_pairs<pp::addr2>(W, rotq_w2_index(sub_base | pp::dep2(tid)), v);
    if (pp::P <= 1) rotq_butterfly<1>(v);
    if (pp::P <= 2) rotq_butterfly<2>(v);
    if (pp::P <= 3) rotq_butterfly<3>(v);
    if (SCALED)
        rotq_butterfly_scaled<4>(v, s);
    else
        rotq_butterfly<4>(v);
}

// 2^14 (a subtile of 512 threads, one row): phase 0 -> 1 by pairs as
// rotq_pow2_pair_phases; phase 1 writes its pairs back, and phase 2 reads
// single words in the layout of rotq_pow2_exchanges' last phase (register r:
// address tid | r << 9; lanes on bits 0..4: 32 consecutive words, no bank
// conflict), so the stores are those of the 32-bit path. The same butterfly
// levels in the same order.
template <bool SCALED>
__device__ __forceinline__ void rotq_pow2_pair14_phases(float *W, unsigned sub_base, unsigned tid, float v[32],
                                                        float s) {
    rotq_pow2_pair_phase1<14>(W, sub_base, tid, v);
    const unsigned b2 = rotq_w2_index(sub_base | tid);
#pragma unroll
    for (int r = 0; r < 32; r++) v[r] = W[b2 + rotq_w2_index((unsigned)r << 9)];
    rotq_butterfly<0>(v);
    rotq_butterfly<1>(v);
    rotq_butterfly<2>(v);
    rotq_butterfly<3>(v);
    if (SCALED)
        rotq_butterfly_scaled<4>(v, s);
    else
        rotq_butterfly<4>(v);
}

// Stores of rotq_pow2_pair_phases: register group h (2^P values) is columns
// dep2(t) + addr2(h << P) ... of the subtile's row; vector stores where the
// output rows are 16-byte aligned (a.vec_out), else element stores. Each
// (dtype, vector) case is its own loop: with the tests inside one loop, ptxas
// predicated both conversions and both store forms for every value (ncu at
// 2^12: 106 instructions per warp and tile where 30 do).
template <int L, int DT>
__device__ __forceinline__ void rotq_pow2_store_pairs_vec16(uint16_t *y, const float v[32]) {
    typedef rotq_pow2_pair_plan<L> pp;
    constexpr int P = pp::P, V = 1 << P, H = 32 >> P;
#pragma unroll
    for (int h = 0; h < H; h++) {
        uint32_t w[V / 2];
#pragma unroll
        for (int i = 0; i < V / 2; i++) w[i] = rotq_pack_16x2(v[h * V + 2 * i], v[h * V + 2 * i + 1], DT);
        uint16_t *d = y + pp::addr2(h << P);
        if (V == 8)
            *(uint4 *)d = make_uint4(w[0], w[1 % (V / 2)], w[2 % (V / 2)], w[3 % (V / 2)]);
        else if (V == 4)
            *(uint2 *)d = make_uint2(w[0], w[1 % (V / 2)]);
        else
            *(uint32_t *)d = w[0];
    }
}
template <int L>
__device__ __forceinline__ void rotq_pow2_store_pairs(const rotq_had_args &a, unsigned tid, int64_t e_tile,
                                                      int64_t total, const float v[32]) {
    typedef rotq_pow2_pair_plan<L> pp;
    constexpr int P = pp::P, V = 1 << P, H = 32 >> P;
    if (e_tile >= total) return; // rows are whole: a subtile is one row
    bool live;
    const int64_t off = rotq_row_offset<L, false>(a, e_tile >> L, 1, 0, &live) + (int64_t)pp::dep2(tid);
    if (!live) return;
    if (a.out_dtype == ROTQ_DTYPE_F32) {
        float *y = (float *)a.y + off;
        if (a.vec_out) {
#pragma unroll
            for (int h = 0; h < H; h++) {
                float *d = y + pp::addr2(h << P);
                const float *u = v + h * V;
                if (V == 2) *(float2 *)d = make_float2(u[0], u[1]);
#pragma unroll
                for (int i = 0; i + 3 < V; i += 4) *(float4 *)(d + i) = make_float4(u[i], u[i + 1], u[i + 2], u[i + 3]);
            }
        } else {
#pragma unroll
            for (int h = 0; h < H; h++)
#pragma unroll
                for (int i = 0; i < V; i++) y[pp::addr2(h << P) + i] = v[h * V + i];
        }
        return;
    }
    uint16_t *y = (uint16_t *)a.y + off;
    if (!a.vec_out) {
#pragma unroll
        for (int h = 0; h < H; h++)
#pragma unroll
            for (int i = 0; i < V; i++) y[pp::addr2(h << P) + i] = rotq_to_16(v[h * V + i], a.out_dtype);
    } else if (a.out_dtype == ROTQ_DTYPE_F16) {
        rotq_pow2_store_pairs_vec16<L, ROTQ_DTYPE_F16>(y, v);
    } else {
        rotq_pow2_store_pairs_vec16<L, ROTQ_DTYPE_BF16>(y, v);
    }
}

// The last phase's 2^CB values of one row (columns c << LO from element off of
// y), times the scale when SCALE (else already scaled), in the output dtype.
// NA: 16-bit stores that allocate no L1 line (the factor kernel: its two-block
// builds spill a few registers per tile at their 80-register cap, and with its
// 2-byte output stores filling L1 those reloads went to L2; signs come through
// L1 too. Same-run A/B on the H100: 12 * 1024 -4%, 20 * 1024 with signs -13%).
template <int CB, int LO, bool SCALE, bool NA = false>
__device__ __forceinline__ void rotq_store_row(const rotq_had_args &a, int64_t off, const float *v) {
    if (a.out_dtype == ROTQ_DTYPE_F32) {
        float *y = (float *)a.y + off;
#pragma unroll
        for (int c = 0; c < (1 << CB); c++) y[c << LO] = SCALE ? v[c] * a.scale : v[c];
    } else if (NA) {
        // The dtype chosen once: in the loop, the asm stores kept both
        // conversions, predicated, for every value.
        uint16_t *y = (uint16_t *)a.y + off;
        if (a.out_dtype == ROTQ_DTYPE_F16) {
#pragma unroll
            for (int c = 0; c < (1 << CB); c++)
                ptx_st_na_u16(y + (c << LO), rotq_to_16(SCALE ? v[c] * a.scale : v[c], ROTQ_DTYPE_F16));
        } else {
#pragma unroll
            for (int c = 0; c < (1 << CB); c++)
                ptx_st_na_u16(y + (c << LO), rotq_to_16(SCALE ? v[c] * a.scale : v[c], ROTQ_DTYPE_BF16));
        }
    } else {
        uint16_t *y = (uint16_t *)a.y + off;
#pragma unroll
        for (int c = 0; c < (1 << CB); c++) y[c << LO] = rotq_to_16(SCALE ? v[c] * a.scale : v[c], a.out_dtype);
    }
}

// The phases after phase 0, on values in registers (phase-0 layout), through
// W (block-local padded fp32). e_tile: global index of the subtile's first
// element; sub_base: its block-local index. The last phase scales and stores,
// lanes holding consecutive columns, so warp stores coalesce.
template <int L, bool KF>
__device__ __forceinline__ void rotq_pow2_phases(const rotq_had_args &a, float *W, unsigned sub_base, unsigned tid,
                                                 int64_t e_tile, int64_t total, int32_t k, int64_t g0, float v[32]) {
    typedef rotq_pow2_plan<L> plan;
    // With several phases the last one applies the scale; a single phase
    // (phase 0, by the caller) leaves it to the stores. Power-of-two kernel
    // only: same-run A/B on the H100, 32768 at 2^27 1.159 -> 1.143 of the copy
    // and the other rows within noise, but 172 * 64 in the factor kernel 3% slower.
    constexpr bool FOLD = plan::PHASES > 1 && !KF;
    if (!KF && rotq_pow2_pair_plan<L>::ON) {
        rotq_pow2_pair_phases<L>(W, sub_base, tid, v, a.scale);
        rotq_pow2_store_pairs<L>(a, tid, e_tile, total, v);
        return;
    }
    if (!KF && L == 14)
        rotq_pow2_pair14_phases<FOLD>(W, sub_base, tid, v, a.scale);
    else
        rotq_pow2_exchanges<L, FOLD>(W, sub_base, tid, v, a.scale);
    // Store. The 5 register bits of the last phase are column bits lo..L-1 and
    // then (only when a subtile holds several rows) row bits: one offset per
    // row, compile-time offsets along it.
    constexpr int lo = plan::lo(plan::PHASES - 1);
    constexpr int CB = L - lo < 5 ? L - lo : 5;  // column bits among the register bits
    constexpr int NR = 1 << (5 - CB);            // rows a thread stores to
    const int64_t e0 = e_tile + rotq_phase_dep(tid, lo);
    if (KF && a.y_packed) {
        // Row blocks of y back to back: the tile's order in W is y's from row
        // block g0 on, so one base and compile-time offsets (no row arithmetic;
        // folding this into rotq_row_offset measured 3% slower at 2^9, 2^10).
        const int64_t left = (a.groups - g0) * (int64_t)a.n, lim = left < total ? left : total;
        if (e0 >= lim) return;
        const int64_t off = g0 * (int64_t)a.n + e0;
#pragma unroll
        for (int rr = 0; rr < NR; rr++) {
            if (e0 + ((int64_t)rr << L) >= lim) break;
            rotq_store_row<CB, lo, true, true>(a, off + (rr << L), v + (rr << CB));
        }
        return;
    }
    if (e0 >= total) return;
    const int64_t R0 = e0 >> L;
    const int64_t col0 = e0 & ((1 << L) - 1);
#pragma unroll
    for (int rr = 0; rr < NR; rr++) {
        bool live;
        const int64_t off = rotq_row_offset<L, KF>(a, R0 + rr, k, g0, &live) + col0;
        if (!live || e0 + ((int64_t)rr << L) >= total) continue;
        rotq_store_row<CB, lo, !FOLD, KF>(a, off, v + (rr << CB));
    }
}
