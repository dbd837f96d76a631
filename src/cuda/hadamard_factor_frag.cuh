// The K * 2^L Hadamard kernel for K <= 64 and 2^L = 256 .. 1024 on sm_90
// (16-bit inputs by TMA): the power-of-two part starts on the K step's mma
// fragments, in registers, and the block's warps run as a dataflow over
// mbarriers instead of block-wide phases.
//
// A row block (a tile) is X[k][j], k < K, j < 2^L (K slowest). y = H_K X
// H_{2^L}: the two factors commute, so H_K goes first, on tensor cores, on the
// input itself (exact up to fp32 accumulation), then the butterflies of
// H_{2^L} in fp32. The general factor kernel (hadamard_factor.cuh) writes the K
// step's result to W and runs the power-of-two phases on it: at 2^9 / 2^10 two
// W round trips and three block barriers a tile. Here a tile is two kinds of
// warp tasks:
//
// A (m tile mt, 64-column block q): mma.sync m16n8k16 with H_K's rows 16mt ..
//   16mt + 15 as A and the stage's 8 chunks of block q (8 n tiles,
//   ldmatrix.trans) as B. Lane (g, t) then holds, for rows 16mt + g and + 8,
//   columns 64q + 8nt + 2t + {0, 1}: column bit 0 and bits 3..5 (nt) are
//   register bits, so 4 of the L butterfly levels are done right there. The
//   32 values go to W as 8-byte pairs.
// B (2^(10-L) rows): a lane holds 8 consecutive columns (bits 0..2) at 4
//   positions of bits 6, 7, its lane bits 0..2 on column bits 3..5 and lane
//   bits 3.. on bits 8..L-1: bits 1, 2, 6, 7 in registers, bits 8.. between
//   lanes (shuffles); the scale, and 16-byte stores (8 lanes write 128
//   contiguous bytes).
// With a sign vector, each A task flips the signs of its own B fragments in
// registers, by XOR masks that the block builds once from the vector
// (rotq_frag_sign_table): no pass over the stage, and no m tile waits for
// another's.
//
// One W round trip (STS.64 + LDS.128: 0.75 shared-memory instructions an
// element against 4). W row k holds 2^L + 8 words (== 8 mod 32) and column j
// sits at word j ^ (bit 5 of j << 2) of it ("the W slot"): A's 8-byte stores
// (4 rows x 8 words a half warp) and B's 16-byte loads (8 lanes on column bits
// 3..5) are conflict-free.
//
// Dataflow. The warps take tasks in one order (tile by tile: A, then B) from a
// shared counter, and each task waits only for what it reads, on mbarriers:
// A(i, mt) for its stage and, before its W stores, for B(i - 1) of the rows of
// m tile mt ("empty"); B(i) for A(i) of its m tile ("full"). Tiles overlap (B
// of one tile, A of the next, the stage loads), and no block barrier holds
// every warp for the slowest one. The input arrives by TMA (the general kernel's
// box, rotq_tma_map_factor) in slices of a half, a quarter or an eighth of a row
// (2^ls columns of every K row), into a ring of S slots (half a tile to 4 tiles
// ahead, as shared memory allows); the A task that reads a slot last refills it.
// Progress relies on free warps taking the tasks in order: where the ring holds
// less than a tile, an A task's slot is refilled by a later task (the last m
// tile's reader of the slice S uses back), so a warp must never hold a task it
// has not started (perf-notes, f14: taking the next task ahead deadlocked), and
// per-row int8 / fp8 B tasks also wait for one another (the row absmax).
// full, empty and the slots' mbarriers alternate by tile / use parity, and no
// task of tile i starts before every task of tile i - 2 is done (tile_done), so
// each wait finds its mbarrier in the phase it means.
//
// At 2^10 with K >= 20, out of place, several blocks ("parts") can share a
// row block, each computing some of its K output rows from the whole row
// block (the PARTS build, rotq_frag_parts): for small calls, and wherever a
// split into 2 to 4 parts needs fewer K-step m tiles or leaves more input
// slots ahead than whole row blocks (28 * 1024: two parts; 40, 44 * 1024:
// three; 52, 60 * 1024, whose whole row blocks do not fit: four); at least two
// for calls under 4 rounds.
//
// Built with QUANT, the kernel is the fused rotate + quantize for these sizes
// (quantize_rot_factor.cu): the B tasks write codes instead of y
// (rotq_frag_quant_b, quantize_frag.cuh).
//
// The host side (shared-memory plan, parts, launch): hadamard_factor_frag_launch.cuh.
#pragma once
#include "hadamard_launch.cuh"
#include "quantize_frag.cuh"

// Threads of a block at most (the launcher picks 32 warps an SM over 1 to 3
// blocks): ptxas caps the kernel at 64 registers.
#define ROTQ_FRAG_MAX_THREADS 1024
#define ROTQ_FRAG_MAX_SLOTS 8
// Entries of the dynamic tail's tile ring (rotq_frag_claim): at least the claim
// distance E (<= ROTQ_FRAG_MAX_SLOTS + 2, even) + 2, and even.
#define ROTQ_FRAG_TILE_RING 16

template <int L>
struct rotq_frag_plan {
    static_assert(L >= 8 && L <= 10, "rotq_frag_plan: rows of 2^8 .. 2^10");
    static constexpr int RS = (1 << L) + 8; // W words per row, == 8 mod 32
    static constexpr int QB = 1 << (L - 6); // 64-column blocks per row
    static constexpr int SB = L - 8;        // B: column bits 8 .. L-1 on lane bits 3 ..
    static constexpr int RB = 10 - L;       // B: rows per task = 2^RB (the top lane bits)
};

// The block's control words (shared memory): mbarriers by parity, the slots'
// read counts and the task counter.
typedef struct rotq_frag_ctl {
    uint64_t tma[2][ROTQ_FRAG_MAX_SLOTS];  // slot arrived (TMA), by use parity
    uint64_t full[2][4];                   // A(i) of m tile mt written W, by tile parity
    uint64_t empty[2][4];                  // B(i) read m tile mt's rows of W, by tile parity
    uint64_t tile_done[4];                 // every task of tile i arrived, by i mod 4
    uint64_t amx[2];                       // QUANT: B(i) added to the row absmax, by tile parity
    uint64_t rsd[2];                       // QUANT: B(i) read the absmax (and added to the row sum)
    uint32_t am[2], rs[2];                 // QUANT: the row's absmax (float bits) and int8 code sum
    uint32_t reads[ROTQ_FRAG_MAX_SLOTS];   // A tasks done reading the slot's current use
    uint32_t next;                         // the next task
    uint64_t tile_of[ROTQ_FRAG_TILE_RING]; // DYN: iteration << 32 | its tile, by iteration mod R
    uint32_t tile_fills[ROTQ_FRAG_TILE_RING]; // DYN: the fills that have read the entry
#ifdef ROTQ_TIMELINE
    unsigned long long tl_g0; // the block's start (timeline.cuh; here, so the launcher counts it)
#endif
} rotq_frag_ctl;

// One k tile (K = 12): column bits 3 and 4 of the A task (n tile bits 0, 1)
// are butterflied by the tensor cores themselves. Output n tile 4g + o
// accumulates (-1)^popc(o & i) H_K X_i over the input n tiles 4g + i, with H_K
// or -H_K (the sign bits flipped) as A; accumulated in the order of the input
// n tiles, the mma whose accumulator and operands repeat across the outputs
// are one (the compiler keeps one): 11 mma a group of four outputs against 4
// mma and 32 FADD, and the A task's butterflies skip those two register bits.
// Same-run on the H100: 12 * 1024 at 2^20 / 2^23 and with signs -1 to -2%, at
// 2^25 +0.1 to +0.5%, at 2^27 unchanged; with two k tiles too (ROTQ_FRAG_FOLD_KT 2: about
// three times the mma) 20 * 1024 +9%, the fused 14336 rows +12%: the A task's
// longer mma chain delays the B tasks that wait on it (perf-notes, fragment
// f42). ROTQ_FRAG_FOLD_KT 0: A/B switch.
#ifndef ROTQ_FRAG_FOLD_KT
#define ROTQ_FRAG_FOLD_KT 1
#endif
template <int KT>
__host__ __device__ constexpr int rotq_frag_fold_bits(void) {
    return KT <= ROTQ_FRAG_FOLD_KT ? 2 : 0;
}

// The stage's K step for A task (mt, block qq of the slot): v[4 nt + i], i bit
// 0 = column bit 0, bit 1 = the row half h (rows 16mt + g + 8h), nt = column
// bits 3..5; the low rotq_frag_fold_bits of nt already butterflied. F16: fp16
// operands. SG: the B fragments' signs flipped by the lane's masks of this
// column block, sw[32 kt] (rotq_frag_sign_table).
template <int L, int KT, bool F16, bool SG>
__device__ __forceinline__ void rotq_frag_kstep(int K, const char *slot, const char *zero16, const uint4 *afr,
                                                int mt, int qq, const uint32_t *sw, float v[32]) {
    const int lane = (int)ptx_lane_id();
    // register i of ldmatrix p: bits 4p + i and + 16 of its k tile's mask
    auto sign = [&](uint32_t b[4], uint32_t mask, int p) {
        if (SG) {
#pragma unroll
            for (int i = 0; i < 4; i++) b[i] ^= rotq_sign_pair_mask(mask, 4 * p + i);
        }
    };
    // ldmatrix.x4.trans: lanes 8i .. 8i + 7 address the 8 rows of matrix i, which
    // is k rows 8 (i & 1) .. + 7 of chunk 2p + (i >> 1) (n tiles 2p, 2p + 1).
    const int k0 = ((lane >> 3) & 1) * 8 + (lane & 7);
    const unsigned jb = (unsigned)lane >> 4;
    float acc[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; nt++) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
    // This lane's ldmatrix source of chunk c at k tile kt: line qq K + kr of
    // the slot, its chunks XORed with the line's low 3 bits; rows past K read
    // the zero chunk.
    auto chunk = [&](int kt, int c) -> const char * {
        const int kr = 16 * kt + k0;
        const unsigned line = (unsigned)(qq * K + kr);
        const bool in = kt < KT - 1 || kr < K;
        return in ? slot + line * ROTQ_TMA_ROW_BYTES + (((unsigned)c ^ ((line & 7u) ^ jb)) << 4) : zero16;
    };
    auto mma = [&](float d[4], const uint32_t a[4], const uint32_t b[2]) {
        if (F16)
            ptx_mma_f16_16816(d, a, b);
        else
            ptx_mma_bf16_16816(d, a, b);
    };
    if constexpr (rotq_frag_fold_bits<KT>() > 0) {
        uint32_t ap[KT][4], an[KT][4];
        uint32_t mask[KT];
#pragma unroll
        for (int kt = 0; kt < KT; kt++) mask[kt] = SG ? sw[32 * kt] : 0u;
#pragma unroll
        for (int kt = 0; kt < KT; kt++) {
            const uint4 av = afr[(mt * KT + kt) * 32 + lane];
            ap[kt][0] = av.x, ap[kt][1] = av.y, ap[kt][2] = av.z, ap[kt][3] = av.w;
#pragma unroll
            for (int e = 0; e < 4; e++) an[kt][e] = ap[kt][e] ^ 0x80008000u; // -H_K
        }
#pragma unroll
        for (int p = 0; p < 4; p++) { // input n tiles 2p, 2p + 1
#pragma unroll
            for (int kt = 0; kt < KT; kt++) {
                uint32_t b[4];
                ptx_ldmatrix_x4_trans(b, ptx_smem_addr(chunk(kt, 2 * p)));
                sign(b, mask[kt], p);
#pragma unroll
                for (int j = 0; j < 2; j++) {
                    const int g = p >> 1, i = 2 * (p & 1) + j;
                    const uint32_t bi[2] = {b[2 * j], b[2 * j + 1]};
#pragma unroll
                    for (int o = 0; o < 4; o++) mma(acc[4 * g + o], (__popc(o & i) & 1) ? an[kt] : ap[kt], bi);
                }
            }
        }
    } else {
#pragma unroll
        for (int kt = 0; kt < KT; kt++) {
            const uint4 av = afr[(mt * KT + kt) * 32 + lane];
            const uint32_t a4[4] = {av.x, av.y, av.z, av.w};
            const uint32_t mask = SG ? sw[32 * kt] : 0u;
#pragma unroll
            for (int p = 0; p < 4; p++) {
                uint32_t b[4];
                ptx_ldmatrix_x4_trans(b, ptx_smem_addr(chunk(kt, 2 * p)));
                sign(b, mask, p);
                const uint32_t b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
                mma(acc[2 * p], a4, b0);
                mma(acc[2 * p + 1], a4, b1);
            }
        }
    }
#pragma unroll
    for (int nt = 0; nt < 8; nt++)
#pragma unroll
        for (int i = 0; i < 4; i++) v[4 * nt + i] = acc[nt][i];
}

// A task's butterflies: column bit 0 (register bit 0) and bits 3..5 (register
// bits 2..4) but the FOLDED lowest of those the K step did; HALF: only the
// values of row half h = 0 (register bit 1 clear).
template <bool HALF, int FOLDED = 0>
__device__ __forceinline__ void rotq_frag_butterflies_a(float v[32]) {
#pragma unroll
    for (int b = 0; b < 5; b++) {
        if (b == 1 || (b >= 2 && b < 2 + FOLDED)) continue;
#pragma unroll
        for (int r = 0; r < 32; r++) {
            if ((r & (1 << b)) || (HALF && (r & 2))) continue;
            const float x = v[r], y = v[r | (1 << b)];
            v[r] = x + y;
            v[r | (1 << b)] = x - y;
        }
    }
}

// A task's values to W: row 16mt + g + 8h, columns 64q + 8nt + 2t (+1), at
// the W slot, i.e. word 2t ^ 4 for nt >= 4 (column bit 5 set): two lane bases.
// rows: the block's rows of W, in mts m tiles. HALF: row half h = 0 only.
template <int L, bool HALF>
__device__ __forceinline__ void rotq_frag_store_w(float *W, int rows, int mts, int mt, int q, const float v[32]) {
    typedef rotq_frag_plan<L> plan;
    const int lane = (int)ptx_lane_id(), g = lane >> 2, t = lane & 3;
    const int r0 = 16 * mt + g;
    float *w0 = W + r0 * plan::RS + 64 * q + 2 * t;
    float *w1 = W + r0 * plan::RS + 64 * q + ((2 * t) ^ 4);
    const bool last = mt == mts - 1; // only the last m tile has rows past the block's
#pragma unroll
    for (int h = 0; h < (HALF ? 1 : 2); h++) {
        if (last && r0 + 8 * h >= rows) continue;
#pragma unroll
        for (int nt = 0; nt < 8; nt++) {
            float *d = (nt < 4 ? w0 : w1) + 8 * nt + h * 8 * plan::RS;
            *(float2 *)d = make_float2(v[4 * nt + 2 * h], v[4 * nt + 2 * h + 1]);
        }
    }
}

// Butterflies between lanes that differ in lane bit `mask`: the lower lane
// keeps a + b, the upper one a - b (as rotq_lane_butterfly, one FFMA a value).
__device__ __forceinline__ void rotq_frag_lane_butterfly(float v[32], unsigned mask) {
    const float s = (ptx_lane_id() & mask) ? -1.0f : 1.0f;
#pragma unroll
    for (int r = 0; r < 32; r++) v[r] = fmaf(s, v[r], __shfl_xor_sync(0xffffffffu, v[r], mask));
}

// 8 consecutive outputs at element off of y.
template <int DT, bool VEC>
__device__ __forceinline__ void rotq_frag_store8(void *y, int64_t off, const float *v) {
    if (DT == ROTQ_DTYPE_F32) {
        float *d = (float *)y + off;
        if (VEC) {
            *(float4 *)d = make_float4(v[0], v[1], v[2], v[3]);
            *(float4 *)(d + 4) = make_float4(v[4], v[5], v[6], v[7]);
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++) d[i] = v[i];
        }
    } else {
        uint16_t *d = (uint16_t *)y + off;
        if (VEC) {
            *(uint4 *)d = make_uint4(rotq_pack_16x2(v[0], v[1], DT), rotq_pack_16x2(v[2], v[3], DT),
                                     rotq_pack_16x2(v[4], v[5], DT), rotq_pack_16x2(v[6], v[7], DT));
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++) d[i] = rotq_to_16(v[i], DT);
        }
    }
}
template <int DT, bool VEC>
__device__ __forceinline__ void rotq_frag_store_row(void *y, int64_t off, const float v[32]) {
#pragma unroll
    for (int grp = 0; grp < 4; grp++) rotq_frag_store8<DT, VEC>(y, off + 64 * grp, v + 8 * grp);
}

// B's values of row `row` (lane layout in the file comment): v[8 grp + c] is
// column jl + 64 grp + c, jl the lane's column bits 3..5 and 8..
template <int L>
__device__ __forceinline__ void rotq_frag_load_w(const float *W, unsigned row, unsigned jl, float v[32]) {
    typedef rotq_frag_plan<L> plan;
    // The W slot: with column bit 5 set the two 4-word halves of a chunk swap.
    const unsigned b5 = (jl >> 5) & 1u;
    const float *p = W + row * plan::RS + jl;
    const float *p0 = p + 4 * b5, *p1 = p + 4 - 4 * b5;
#pragma unroll
    for (int grp = 0; grp < 4; grp++) {
        const float4 lo = *(const float4 *)(p0 + 64 * grp), hi = *(const float4 *)(p1 + 64 * grp);
        v[8 * grp + 0] = lo.x, v[8 * grp + 1] = lo.y, v[8 * grp + 2] = lo.z, v[8 * grp + 3] = lo.w;
        v[8 * grp + 4] = hi.x, v[8 * grp + 5] = hi.y, v[8 * grp + 6] = hi.z, v[8 * grp + 7] = hi.w;
    }
}

// B's butterflies (column bits 1, 2, 6, 7 in registers, 8.. between lanes)
// and, SCALED, the scale sc (the fused quantize build folds it into its
// multipliers instead: rotq_frag_quant_b).
template <int L, bool SCALED>
__device__ __forceinline__ void rotq_frag_butterflies_b(float v[32], float sc) {
    typedef rotq_frag_plan<L> plan;
    if (SCALED) {
        // The scale in the first level: (x + y) s, (x - y) s as fma(x, s, +-RN(y s)),
        // three instructions a pair where a separate multiply took four.
#pragma unroll
        for (int r = 0; r < 32; r++) {
            if (r & 2) continue;
            const float x = v[r], ys = v[r | 2] * sc;
            v[r] = fmaf(x, sc, ys);
            v[r | 2] = fmaf(x, sc, -ys);
        }
    } else {
        rotq_butterfly<1>(v);
    }
    rotq_butterfly<2>(v);
    rotq_butterfly<3>(v);
    rotq_butterfly<4>(v);
    if (plan::SB >= 1) rotq_frag_lane_butterfly(v, 8u);
    if (plan::SB >= 2) rotq_frag_lane_butterfly(v, 16u);
}

// B's outputs: row `row` of row block g in y.
template <int L>
__device__ __forceinline__ void rotq_frag_store(const rotq_had_args &a, int64_t g, unsigned row, unsigned jl,
                                                const float v[32]) {
    const int64_t off = rotq_group_base(a, g, a.y_stride) + ((int64_t)row << L) + jl;
    if (a.out_dtype == ROTQ_DTYPE_F32) {
        if (a.vec_out)
            rotq_frag_store_row<ROTQ_DTYPE_F32, true>(a.y, off, v);
        else
            rotq_frag_store_row<ROTQ_DTYPE_F32, false>(a.y, off, v);
    } else if (a.out_dtype == ROTQ_DTYPE_F16) {
        if (a.vec_out)
            rotq_frag_store_row<ROTQ_DTYPE_F16, true>(a.y, off, v);
        else
            rotq_frag_store_row<ROTQ_DTYPE_F16, false>(a.y, off, v);
    } else {
        if (a.vec_out)
            rotq_frag_store_row<ROTQ_DTYPE_BF16, true>(a.y, off, v);
        else
            rotq_frag_store_row<ROTQ_DTYPE_BF16, false>(a.y, off, v);
    }
}

// Waits for phase `parity` of an mbarrier (every lane that reads what it guards).
__device__ __forceinline__ void rotq_frag_wait(const uint64_t *mbar, unsigned parity) {
    // (try_wait with a suspend-time hint, sleeping instead of spinning, measured
    // the same or 1-3% slower in a same-run A/B on the H100; on the B tasks' waits
    // of the fused int8 / fp8 build, which spin the most, the same.)
    rotq_tma_wait(ptx_smem_addr(mbar), parity);
}

// x / d for the kernel's small run-time divisors (tasks a tile, slots), as
// x * m >> 32 with m = 2^32 / d + 1 (rotq_frag_magic): exact while x * d < 2^32
// (the launcher bounds the tasks of a block).
__host__ __device__ inline uint32_t rotq_frag_magic(uint32_t d) { return (uint32_t)(0xffffffffu / d) + 1u; }
__device__ __forceinline__ uint32_t rotq_frag_div(uint32_t x, uint32_t m) { return __umulhi(x, m); }

// Bytes from one slot to the next: a slice, rounded up to 1024.
__host__ __device__ constexpr unsigned rotq_frag_slot_stride(unsigned slot_bytes) {
    return (slot_bytes + 1023u) & ~1023u;
}

// The block's tile i: with `parts` consecutive blocks a tile, tile b / parts
// + i (gridDim.x / parts) of block b (parts = 1: b + i gridDim.x). pm:
// rotq_frag_magic(parts), the host's f.parts_magic (as a run-time division the
// PARTS build spent about 25 instructions on it in every task).
__device__ __forceinline__ int64_t rotq_frag_tile(unsigned parts, unsigned pm, unsigned i) {
    if (parts == 1u) return (int64_t)blockIdx.x + (int64_t)i * gridDim.x;
    return (int64_t)rotq_frag_div(blockIdx.x, pm) + (int64_t)i * rotq_frag_div(gridDim.x, pm);
}

// The dynamic tail (the DYN build: whole tiles, f.dyn_from; perf-notes,
// fragment kernel f30). The blocks sharing an SM run at rates the warp
// scheduler sets (f28), so with equal tile counts the favoured ones idle at the
// end. A block's iterations below dyn_from keep the static tile b + i grid (the
// task loop's arithmetic); iteration j >= dyn_from takes tile dyn_from grid +
// (the launch's counter), claimed by lane 0 of task 0 of iteration j - E after
// that task's gate, into ring entry j mod R (tag j). E = the slots' tiles ahead
// + 1, rounded up to even (also the launcher's), so that
//   - every task of iteration j sees the entry without a wait: its gate
//     (tile_done(j - 2)) follows tile_done(j - 4) ... tile_done(j - E), which
//     the claimer arrives on after claiming; it reads the entry after its gate
//     (a stale tag there means the claimer had found the end: so is j);
//   - a slot fill of iteration j (in a task of iteration j - E + 1 .. j, not all
//     of them on that chain) waits for the tag, then counts its read
//     (tile_fills), and claim j + R waits for all 2^sl of them;
//   - claim j + R comes after the tasks of iteration j are done (the chain
//     again, R - E even and >= 2).
// Claims go in iteration order (each after the previous one is in), so a
// block's tiles increase and the first one past the end ends the block; a task
// that finds the end still arrives on tile_done (a later task's gate may wait on
// it). The entries are atomics (the waits have no barrier between).
// E for S slots of 2^-sl of a tile each.
__host__ __device__ inline unsigned rotq_frag_claim_distance(unsigned S, int sl) {
    const unsigned ahead = ((S + (1u << sl) - 1u) >> sl) + 1u;
    return (ahead + 1u) & ~1u;
}

__device__ __forceinline__ uint64_t rotq_frag_entry(rotq_frag_ctl *ctl, unsigned j) {
    return atomicAdd((unsigned long long *)&ctl->tile_of[j % ROTQ_FRAG_TILE_RING], 0ull);
}

// Claims iteration j's tile (one thread; j >= dyn_from).
__device__ __forceinline__ void rotq_frag_claim(rotq_frag_ctl *ctl, const rotq_had_args &a, const rotq_had_factor &f,
                                                int L, unsigned j) {
    const unsigned ns = (unsigned)f.dyn_from, e = j % ROTQ_FRAG_TILE_RING;
    if (j > ns) // the previous claim
        while ((unsigned)(rotq_frag_entry(ctl, j - 1) >> 32) != j - 1) {
        }
    if (j >= ns + ROTQ_FRAG_TILE_RING) { // the entry's last fills have read it
        const unsigned fills = 1u << (L - f.slice_log);
        while (atomicAdd(&ctl->tile_fills[e], 0u) != fills) {
        }
        atomicExch(&ctl->tile_fills[e], 0u);
    }
    const uint32_t tile = ns * gridDim.x + atomicAdd(a.tiles_next, 1u);
    atomicExch((unsigned long long *)&ctl->tile_of[e], (unsigned long long)j << 32 | tile);
}

// Iteration i's entry as a task reads it, after its gate (the chain above).
__device__ __forceinline__ uint64_t rotq_frag_entry_seen(const rotq_frag_ctl *ctl, unsigned i) {
    return ((const volatile uint64_t *)ctl->tile_of)[i % ROTQ_FRAG_TILE_RING];
}

// The tile of a dynamic iteration i at the task's loop top: past the end where
// the entry holds an older iteration.
__device__ __forceinline__ int64_t rotq_frag_tile_dyn(const rotq_frag_ctl *ctl, unsigned i) {
    const uint64_t w = rotq_frag_entry_seen(ctl, i);
    return (unsigned)(w >> 32) == i ? (int64_t)(uint32_t)w : INT64_MAX;
}

// The tile of the task's iteration i where it is used (read again rather than
// held from the loop top: the static one is recomputed, a dynamic one read from
// its entry, which stays until the task's tile_done arrival).
template <bool DYN>
__device__ __forceinline__ int64_t rotq_frag_tile_now(rotq_frag_ctl *ctl, const rotq_had_factor &f, unsigned parts,
                                                      unsigned i) {
    if (!DYN || (int)i < f.dyn_from) return rotq_frag_tile(parts, f.parts_magic, i);
    return (int64_t)(uint32_t)rotq_frag_entry_seen(ctl, i);
}

// Issues use u of the slot ring (u = i 2^sl + h: slice h of the block's tile
// i, 2^sl slices a row, 2^qs 64-column blocks a slice) into slot u mod S, if
// that tile exists. One thread. ef: the lines marked evict-first in L2
// (rotq_frag_evict_first). A dynamic iteration's tile: its entry's, once there.
template <bool DYN>
__device__ __forceinline__ void rotq_frag_fill(const CUtensorMap *xmap, rotq_frag_ctl *ctl, char *slots,
                                               unsigned slot_bytes, unsigned S, int sl, int qs, unsigned u,
                                               unsigned parts, unsigned pm, int64_t ntiles, bool ef, int dyn_from) {
    const unsigned i = u >> sl;
    int64_t tile;
    if (!DYN || (int)i < dyn_from) {
        tile = rotq_frag_tile(parts, pm, i);
    } else {
        uint64_t w;
        while ((unsigned)((w = rotq_frag_entry(ctl, i)) >> 32) != i) {
        }
        atomicAdd(&ctl->tile_fills[i % ROTQ_FRAG_TILE_RING], 1u);
        tile = (int64_t)(uint32_t)w;
    }
    if (tile >= ntiles) return;
    const unsigned s = u % S, use = u / S;
    const uint32_t mbar = ptx_smem_addr(&ctl->tma[use & 1u][s]);
    ptx_fence_proxy_async_smem(); // the slot's earlier reads (generic proxy) before the TMA writes
    ptx_mbarrier_arrive_expect_tx(mbar, slot_bytes);
    const int32_t c2 = (int32_t)((u & ((1u << sl) - 1u)) << qs); // the slice's first 64-column block
    if (ef)
        ptx_tma_load_4d_hint(ptx_smem_addr(slots + s * rotq_frag_slot_stride(slot_bytes)), xmap, 0, 0, c2,
                             (int32_t)tile, mbar, ptx_l2_evict_first());
    else
        ptx_tma_load_4d(ptx_smem_addr(slots + s * rotq_frag_slot_stride(slot_bytes)), xmap, 0, 0, c2, (int32_t)tile,
                        mbar);
}

// The sign vector as XOR masks of the K step's B fragments (rotq_frag_kstep),
// built once a block. Word ((b QB + q) KT + kt) 32 + lane holds, for the
// lane's 16 fragment registers of k tile kt, 64-column block q and row-block
// position b in a row (block-diagonal mode; else b = 0), bit m = 4p + i for
// the low value of register i of ldmatrix p and bit m + 16 for its high one:
// k rows 16kt + 8(i & 1) + 2t (+ 1), column 64q + 16p + 8(i >> 1) + g, (g, t)
// the lane's. Rows past K (the zero chunk) keep their sign.
template <int L>
__host__ __device__ constexpr unsigned rotq_frag_sign_tab_bytes(int kt, int64_t bpr) {
    return (unsigned)(bpr * rotq_frag_plan<L>::QB * kt * 128);
}
template <int L, int KT>
__device__ __forceinline__ void rotq_frag_sign_table(const rotq_had_args &a, int K, uint32_t *tab) {
    constexpr int QB = rotq_frag_plan<L>::QB;
    const int words = (int)rotq_frag_sign_tab_bytes<L>(KT, a.blocks_per_row) / 4;
    for (int w = (int)threadIdx.x; w < words; w += (int)blockDim.x) {
        const int lane = w & 31, g = lane >> 2, t = lane & 3, job = w >> 5;
        const int kt = job % KT, q = (job / KT) % QB, b = job / (KT * QB);
        const int8_t *sg = a.signs + (int64_t)b * a.n + 64 * q + g;
        uint32_t word = 0u;
#pragma unroll
        for (int m = 0; m < 16; m++) {
            const int k = 16 * kt + 8 * (m & 1) + 2 * t, c = 16 * (m >> 2) + 8 * ((m >> 1) & 1);
            if (k < K && __ldg(sg + ((int64_t)k << L) + c) < 0) word |= 1u << m;
            if (k + 1 < K && __ldg(sg + ((int64_t)(k + 1) << L) + c) < 0) word |= 1u << (m + 16);
        }
        tab[w] = word;
    }
}

// A B task of the fused quantize build (QUANT): the codes of its rotated,
// scaled values; the quantize row is the tile (one row block a row). int4
// groups and static fp8 are the warp's own. Per-row int8 / fp8 first take the
// row's absmax over the tile's B tasks (a shared atomic max, then the amx
// mbarrier: every B task of the tile is held by a warp at once, as the
// launcher's warps >= B tasks ensure); the tile's B task 0 writes the scale
// and the row sum once every task has read the absmax and added its sum (rsd),
// then clears both for tile i + 2, before its tile_done arrival.
// The values are unscaled (z) and the rotation scale fs > 0 is folded in: the
// absmax of the scaled values RN(fs z) is RN(fs absmax(z)) (rounding is
// monotonic), and the codes take RN(z RN(fs inv)); fs = 1 where v is scaled.
template <int L>
__device__ __forceinline__ void rotq_frag_quant_b(const rotq_q_args &qa, rotq_frag_ctl *ctl, int64_t tile,
                                                  unsigned it, int r, unsigned row, unsigned jl, const float v[32],
                                                  float fs) {
    const int64_t col0 = ((int64_t)row << L) + jl; // the lane's first column in the quantize row
    uint8_t *q = (uint8_t *)qa.q + tile * qa.q_stride;
    const uint32_t done = ptx_smem_addr(&ctl->tile_done[it & 3u]);
    uint32_t sum = 0;
    if (qa.kind == ROTQ_QUANT_INT4_GROUP) {
        rotq_fq_int4(v, fs, qa.group_shift, q, qa.scales + tile * qa.groups_per_row, col0);
        ptx_mbarrier_arrive(done);
        return;
    }
    if (qa.kind == ROTQ_QUANT_FP8_TENSOR) {
        rotq_fq_codes<true>(v, fs * qa.static_inv, q + col0, &sum);
        ptx_mbarrier_arrive(done);
        return;
    }
    const unsigned p = it & 1u, par = (it >> 1) & 1u, lane = ptx_lane_id();
    bool finite;
    const float m = rotq_qt_warp_absmax(v, &finite);
    if (lane == 0) atomicMax(&ctl->am[p], __float_as_uint(m)); // finite, >= 0: ordered as its bits
    ptx_mbarrier_arrive(ptx_smem_addr(&ctl->amx[p]));
    rotq_frag_wait(&ctl->amx[p], par);
    const float am = fs * __uint_as_float(*(volatile uint32_t *)&ctl->am[p]);
    const bool fp8 = qa.kind == ROTQ_QUANT_FP8_ROW;
    const float qmax = fp8 ? ROTQ_FP8_E4M3_MAX : ROTQ_I8_QMAX;
    const float inv = fs * rotq_quant_inv(am, qmax);
    // A warp of finite values needs no clamp or NaN fix-up (the row's absmax
    // bounds them, and inv is finite: formats.h).
    if (fp8) {
        if (finite)
            rotq_fq_codes<true, false>(v, inv, q + col0, &sum);
        else
            rotq_fq_codes<true>(v, inv, q + col0, &sum);
    } else {
        if (finite)
            rotq_fq_codes<false, false>(v, inv, q + col0, &sum);
        else
            rotq_fq_codes<false>(v, inv, q + col0, &sum);
        if (qa.row_sums) {
            sum = rotq_warp_sum_u32(sum);
            if (lane == 0) atomicAdd(&ctl->rs[p], sum); // wrapping, as the CPU's uint32 sum
        }
    }
    ptx_mbarrier_arrive(ptx_smem_addr(&ctl->rsd[p]));
    if (r == 0) {
        rotq_frag_wait(&ctl->rsd[p], par);
        if (lane == 0) {
            qa.scales[tile] = rotq_quant_scale(am, qmax);
            if (!fp8 && qa.row_sums) qa.row_sums[tile] = (int32_t)*(volatile uint32_t *)&ctl->rs[p];
            ctl->am[p] = 0u, ctl->rs[p] = 0u;
        }
        __syncwarp();
    }
    ptx_mbarrier_arrive(done);
}

// Shared memory: the control block and a zero chunk first, padded to 1024
// bytes (at a fixed offset every mbarrier and counter address is the window
// base plus a constant, not recomputed from the run-time sizes of what comes
// before it), then S slots of one slice of a row block, 2^ls columns of every
// K row (K 2^(ls+1) bytes, each slot on a 1024-byte boundary as TMA's 128-byte
// swizzle needs), W (the part's rows, RS words each), H_K's A fragments of
// those rows (ceil(rows / 16) KT tiles of 512 bytes), then, with a sign
// vector, its masks (tab bytes: rotq_frag_sign_tab_bytes).
#define ROTQ_FRAG_ZERO16_OFF ((sizeof(rotq_frag_ctl) + 15) / 16 * 16)
#define ROTQ_FRAG_CTL_BYTES ((ROTQ_FRAG_ZERO16_OFF + 16 + 1023) / 1024 * 1024)
__host__ __device__ constexpr unsigned rotq_frag_slot_bytes(int k, int ls) { return (unsigned)k << (ls + 1); }
__host__ __device__ constexpr unsigned rotq_frag_w_off(int k, int ls, int slots) {
    return ROTQ_FRAG_CTL_BYTES + (unsigned)slots * rotq_frag_slot_stride(rotq_frag_slot_bytes(k, ls));
}
template <int L>
__host__ __device__ constexpr unsigned rotq_frag_afr_off(int k, int ls, int slots, int rows) {
    return rotq_frag_w_off(k, ls, slots) + (unsigned)rows * rotq_frag_plan<L>::RS * 4u;
}
template <int L>
__host__ __device__ constexpr unsigned rotq_frag_tab_off(int k, int kt, int ls, int slots, int rows) {
    return rotq_frag_afr_off<L>(k, ls, slots, rows) + (unsigned)((rows + 15) / 16) * kt * 512u;
}
template <int L>
__host__ __device__ inline size_t rotq_frag_smem(int k, int kt, int rows, int slots, int ls, unsigned tab) {
    return (size_t)rotq_frag_tab_off<L>(k, kt, ls, slots, rows) + tab;
}

// The PARTS builds' first copies before their fragments too (their spills
// grew by 8 bytes with it, yet same-run on the H100, f16 at 2^25: 40 * 1024
// 59.5 -> 57.6 us, 28 * 1024 57.0 -> 55.8). 0: after the fragments (A/B switch).
#ifndef ROTQ_FRAG_PARTS_EARLY
#define ROTQ_FRAG_PARTS_EARLY 1
#endif

// QUANT: the fused rotate + quantize build (qa as for the fused power-of-two
// kernel: kind, q, scales, row_sums, group fields; rows = row blocks, cols = n):
// B tasks write codes (rotq_frag_quant_b) instead of y. PARTS: the build whose
// blocks share tiles (f.parts, rotq_frag_parts; the others take whole tiles,
// with no run-time state for it). DYN: the Hadamard build with the dynamic
// tail (rotq_frag_claim; whole tiles); the other builds are the static order's
// code alone. SG: the build for calls with a sign vector (the others take
// none): the masks' shifts in the K step made every build spill at the task
// loop's top, so only the signed calls' builds carry them.
template <int L, int KT, bool QUANT, bool PARTS = false, bool DYN = false, bool SG = false>
__global__ void __launch_bounds__(ROTQ_FRAG_MAX_THREADS, 1)
    rotq_had_frag_kernel(rotq_had_args a, const __grid_constant__ rotq_had_factor f, const rotq_q_args qa,
                         const __grid_constant__ CUtensorMap xmap) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    typedef rotq_frag_plan<L> plan;
    extern __shared__ __align__(1024) char rotq_frag_smem_buf[];
    const int K = f.k;
    const unsigned S = (unsigned)f.stages;                // slots
    const int qs = f.slice_log - 6, sl = L - f.slice_log; // 2^qs 64-column blocks a slice, 2^sl slices a row
    // DYN: the slot size, W's and the fragments' offsets and the divisions'
    // magic numbers from the host (parameters, read again from the constant bank
    // where the task loop needs them). Worked out here, they had been held
    // across the loop and spilled in the DYN builds (4-12 bytes; perf-notes,
    // fragment f45: 28 * 512 at 2^27 -3%); the static builds keep their code
    // (with the parameters the fused ones measured +1%).
    const unsigned slot_bytes = DYN ? f.slot_bytes : rotq_frag_slot_bytes(K, f.slice_log),
                   slot_stride = rotq_frag_slot_stride(slot_bytes);
    // PARTS: f.parts consecutive blocks share each tile (rotq_frag_tile), block
    // b computing the output rows r0 .. r0 + rows - 1 of H_K X H (part b mod
    // parts, r0 = part * f.part_rows) from the whole tile. Otherwise all K rows.
    const unsigned parts = PARTS ? (unsigned)f.parts : 1u;
    const unsigned pm = PARTS ? f.parts_magic : 0u; // rotq_frag_tile
    const int r0 = PARTS ? (int)(blockIdx.x % parts) * f.part_rows : 0;
    const int rows = !PARTS ? K : K - r0 < f.part_rows ? K - r0 : f.part_rows;
    const int mts = PARTS ? (rows + 15) >> 4 : KT; // m tiles
    rotq_frag_ctl *ctl = (rotq_frag_ctl *)rotq_frag_smem_buf;
    char *zero16 = rotq_frag_smem_buf + ROTQ_FRAG_ZERO16_OFF;
    char *slots = rotq_frag_smem_buf + ROTQ_FRAG_CTL_BYTES;
    const int wrows = PARTS ? f.part_rows : K; // rows of W
    float *W = DYN ? (float *)(rotq_frag_smem_buf + f.w_off) : (float *)(slots + S * slot_stride);
    uint4 *afr = DYN ? (uint4 *)(rotq_frag_smem_buf + f.afr_off) : (uint4 *)(W + wrows * plan::RS);
    // The input read once marked evict-first in L2 where that measured faster:
    // the fused build (same-run A/B on the H100, 2^25: fused 14336 int8 / fp8
    // -1.0 / -1.3%), but not the Hadamard (20 * 1024, 28 * 512 +2.5%; signed
    // calls within +-1% since their masks, perf-notes f46), nor with parts,
    // which read a tile again from L2.
    const bool ef = !PARTS && QUANT;
    const int ta = mts << (L - 6);   // A tasks: (m tile, 64-column block)
    const int tb = rows >> plan::RB; // B tasks: 2^RB rows each
    const unsigned tpt = (unsigned)(ta + tb);
    if (threadIdx.x == 0) {
        // The slots' mbarriers, then their first copies, then the rest of the
        // control block and the fragments: the loads start first.
        for (unsigned s = 0; s < S; s++)
            for (int p = 0; p < 2; p++) ptx_mbarrier_init(ptx_smem_addr(&ctl->tma[p][s]), 1);
        ptx_fence_mbarrier_init();
        if (!PARTS || ROTQ_FRAG_PARTS_EARLY)
            for (unsigned u = 0; u < S; u++)
                rotq_frag_fill<DYN>(&xmap, ctl, slots, slot_bytes, S, sl, qs, u, parts, pm, a.groups, ef, f.dyn_from);
        for (unsigned s = 0; s < S; s++) ctl->reads[s] = 0;
        for (int mt = 0; mt < mts; mt++) {
            const int mrows = rows - 16 * mt < 16 ? rows - 16 * mt : 16;
            for (int p = 0; p < 2; p++) {
                ptx_mbarrier_init(ptx_smem_addr(&ctl->full[p][mt]), 32 * plan::QB);
                ptx_mbarrier_init(ptx_smem_addr(&ctl->empty[p][mt]), 32 * (mrows >> plan::RB));
            }
        }
        for (int i = 0; i < 4; i++) ptx_mbarrier_init(ptx_smem_addr(&ctl->tile_done[i]), 32 * tpt);
        for (int p = 0; p < 2; p++) {
            ptx_mbarrier_init(ptx_smem_addr(&ctl->amx[p]), 32 * tb);
            ptx_mbarrier_init(ptx_smem_addr(&ctl->rsd[p]), 32 * tb);
            ctl->am[p] = ctl->rs[p] = 0u;
        }
        ctl->next = 0;
        if (DYN)
            for (int i = 0; i < ROTQ_FRAG_TILE_RING; i++) ctl->tile_of[i] = ~0ull, ctl->tile_fills[i] = 0u;
        ROTQ_TL(ctl->tl_g0 = ptx_globaltimer();)
        ptx_fence_mbarrier_init();
        *(uint4 *)zero16 = make_uint4(0, 0, 0, 0);
    }
    if (PARTS)
        rotq_build_factor_frags<L, false>(f, (uint32_t *)afr, r0, rows, mts);
    else
        rotq_build_factor_frags<L, false>(f, (uint32_t *)afr);
    if (SG) rotq_frag_sign_table<L, KT>(a, K, (uint32_t *)(rotq_frag_smem_buf + f.tab_off));
    __syncthreads(); // the control block, fragments and sign masks before any use
    const int64_t ntiles = a.groups;
    if (PARTS && !ROTQ_FRAG_PARTS_EARLY && threadIdx.x == 0)
        for (unsigned u = 0; u < S; u++)
            rotq_frag_fill<DYN>(&xmap, ctl, slots, slot_bytes, S, sl, qs, u, parts, pm, ntiles, ef, f.dyn_from);

    const unsigned lane = ptx_lane_id();
    const uint32_t mtpt = DYN ? f.tasks_magic : rotq_frag_magic(tpt), ms = DYN ? f.stages_magic : rotq_frag_magic(S);
    // The block's tiles (whole-tile builds, static order): rotq_frag_tile(1, i)
    // < ntiles exactly for i < its, so the end test compares iteration numbers
    // (32-bit) instead of working out the 64-bit tile for every task. (The
    // PARTS and DYN builds keep the tile test: there this moved their spills
    // and measured 1.5-2.5% slower at 28 and 40 * 1024, same-run on the H100.)
    const int64_t its64 = (int64_t)blockIdx.x < ntiles ? (ntiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    const unsigned its = its64 < (int64_t)UINT32_MAX ? (unsigned)its64 : UINT32_MAX;
    for (;;) {
        unsigned t = 0;
        if (lane == 0) t = atomicAdd(&ctl->next, 1u);
        t = __shfl_sync(0xffffffffu, t, 0);
        const unsigned it = rotq_frag_div(t, mtpt); // the block's tile
        int r = (int)(t - it * (DYN ? f.tasks : tpt));
        // No task of tile i starts before every task of tile i - 2 has arrived
        // on tile_done (B tasks arrive once they have read W): the other
        // mbarriers alternate by parity, so a waiter then finds the one it waits
        // on in the phase it means. tile_done itself rotates over 4: with at
        // most 3 tiles of tasks per warp count (the launcher), a task of tile i
        // is handed out only after tile i - 5 is done.
        if (!DYN || (int)it < f.dyn_from) {
            if (PARTS || DYN ? rotq_frag_tile(parts, pm, it) >= ntiles : it >= its) break;
            if (it >= 2) rotq_frag_wait(&ctl->tile_done[(it - 2) & 3u], ((it - 2) >> 2) & 1u);
        } else { // the dynamic tail: the gate first (rotq_frag_claim)
            rotq_frag_wait(&ctl->tile_done[(it - 2) & 3u], ((it - 2) >> 2) & 1u);
            if (rotq_frag_tile_dyn(ctl, it) >= ntiles) {
                ptx_mbarrier_arrive(ptx_smem_addr(&ctl->tile_done[it & 3u]));
                break;
            }
        }
        if (DYN && r == 0 && lane == 0) {
            const unsigned j = it + rotq_frag_claim_distance((unsigned)f.stages, L - f.slice_log);
            if ((int)j >= f.dyn_from) rotq_frag_claim(ctl, a, f, L, j);
        }
        if (r < ta) { // A: K step of (mt, q), bits 0, 3..5, to W
            const int mt = r >> (L - 6), q = r & (plan::QB - 1);
            const int h = q >> qs, qq = q & ((1 << qs) - 1); // slice, block in it
            const unsigned u = (it << sl) + (unsigned)h, use = rotq_frag_div(u, ms), s = u - use * S;
            char *slot = slots + s * slot_stride;
            rotq_frag_wait(&ctl->tma[use & 1u][s], (use >> 1) & 1u);
            float v[32];
            const uint32_t *sw = nullptr;
            if (SG) {
                // This lane's masks of block q at the row block's position in its
                // row (32-bit: the launcher takes such calls below 2^32 row blocks).
                const unsigned bpr = (unsigned)a.blocks_per_row;
                const unsigned b = bpr == 1u ? 0u : (unsigned)rotq_frag_tile_now<DYN>(ctl, f, parts, it) % bpr;
                sw = (const uint32_t *)(rotq_frag_smem_buf + f.tab_off) + ((b * plan::QB + (unsigned)q) * KT << 5) +
                     lane;
            }
            if (f.f16_mma)
                rotq_frag_kstep<L, KT, true, SG>(K, slot, zero16, afr, mt, qq, sw, v);
            else
                rotq_frag_kstep<L, KT, false, SG>(K, slot, zero16, afr, mt, qq, sw, v);
            // The slot is read (the mma results are in registers): the last of
            // its mts 2^qs readers refills it with use u + S.
            // (No memory fence: the ldmatrix reads have completed once the mma
            // has their results, before the count; the TMA is issued after it.)
            __syncwarp();
            if (lane == 0 && atomicAdd(&ctl->reads[s], 1u) == ((unsigned)mts << qs) - 1u) {
                ctl->reads[s] = 0;
                rotq_frag_fill<DYN>(&xmap, ctl, slots, slot_bytes, S, sl, qs, u + S, parts, pm, ntiles, ef, f.dyn_from);
            }
            if (mt == mts - 1 && (rows & 15) != 0 && (rows & 15) <= 8) {
                // Rows 16mt + 8 .. are all past the block's: only the row half h = 0.
                rotq_frag_butterflies_a<true, rotq_frag_fold_bits<KT>()>(v);
                if (it > 0) rotq_frag_wait(&ctl->empty[(it - 1) & 1u][mt], ((it - 1) >> 1) & 1u);
                rotq_frag_store_w<L, true>(W, rows, mts, mt, q, v);
            } else {
                rotq_frag_butterflies_a<false, rotq_frag_fold_bits<KT>()>(v);
                if (it > 0) rotq_frag_wait(&ctl->empty[(it - 1) & 1u][mt], ((it - 1) >> 1) & 1u);
                rotq_frag_store_w<L, false>(W, rows, mts, mt, q, v);
            }
            ptx_mbarrier_arrive(ptx_smem_addr(&ctl->full[it & 1u][mt]));
            ptx_mbarrier_arrive(ptx_smem_addr(&ctl->tile_done[it & 3u]));
        } else { // B: rows (r - ta) 2^RB .., from W to y
            r -= ta;
            const unsigned row = ((unsigned)r << plan::RB) | (lane >> (3 + plan::SB));
            const int mt = (r << plan::RB) >> 4;
            const unsigned jl = ((lane & 7u) << 3) | (((lane >> 3) & ((1u << plan::SB) - 1u)) << 8);
            rotq_frag_wait(&ctl->full[it & 1u][mt], (it >> 1) & 1u);
            float v[32];
            rotq_frag_load_w<L>(W, row, jl, v);
            ptx_mbarrier_arrive(ptx_smem_addr(&ctl->empty[it & 1u][mt])); // release: after the loads
            if constexpr (QUANT) {
                // Scales up to 1 fold into the multipliers; a larger one could
                // overflow RN(s z) where z is finite, so those values are scaled.
                rotq_frag_butterflies_b<L, false>(v, 1.0f);
                float fs = a.scale;
                if (fs > 1.0f) {
#pragma unroll
                    for (int i = 0; i < 32; i++) v[i] *= fs;
                    fs = 1.0f;
                }
                rotq_frag_quant_b<L>(qa, ctl, rotq_frag_tile_now<DYN>(ctl, f, parts, it), it, r, row, jl, v, fs);
            } else {
                rotq_frag_butterflies_b<L, true>(v, a.scale);
                const int64_t tile = rotq_frag_tile_now<DYN>(ctl, f, parts, it); // before the arrival
                ptx_mbarrier_arrive(ptx_smem_addr(&ctl->tile_done[it & 3u]));
                rotq_frag_store<L>(a, tile, (unsigned)r0 + row, jl, v);
            }
        }
    }
    if (DYN) { // every claim of the block made
        __syncthreads();
        rotq_tile_counter_exit(a);
    }
#ifdef ROTQ_TIMELINE
    __syncthreads();
    { // the static order's tile count (the DYN build's blocks differ in their tail)
        const int64_t b = blockIdx.x / parts, g = gridDim.x / parts;
        rotq_tl_block_end(QUANT ? "fragq" : "frag", L, b < ntiles ? (ntiles - b + g - 1) / g : 0, ctl->tl_g0);
    }
#endif
#endif
}
