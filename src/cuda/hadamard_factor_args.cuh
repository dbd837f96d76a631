// The K * 2^m kernels' description of H_K (rotq_had_factor: where its sign
// bits are and the launch plan's choices, passed by value) and their build bounds.
#pragma once
#include "hadamard_pow2.cuh"
#include "quantize_tile.cuh"

#include "../common/hadamard_factor_data.h"

// Every H_K's rows (one bit an entry, a set bit for -1: hadamard_factor_data.h)
// in constant memory, a copy in each translation unit that builds these kernels.
// They were 4 KB of kernel parameters: a parameter block that large cost every
// launch 0.2-0.3 us on the H100, and up to 1 us more on every other launch in
// some states of the process (perf-notes, "Kernel parameter size"). Read as the
// parameters were, through the constant cache (a table in global memory made
// the H_K builds at kernel start 4-15% slower at 2^23 / 2^25).
static __constant__ uint32_t rotq_factor_bits_const[ROTQ__FACTOR_TOTAL_WORDS] = ROTQ__FACTOR_BITS_INIT;

// The first word of H_K in the table; -1 for a K without one.
static inline int32_t rotq_factor_bits_offset(int32_t k) {
    for (int i = 0; i < ROTQ__FACTOR_COUNT; i++)
        if (rotq__factor_k[i] == k) return rotq__factor_offset[i];
    return -1;
}

#define ROTQ_FACTOR_MAX_WORDS 1032 /* 172 rows x 6 words */

typedef struct rotq_had_factor {
    int32_t k;                 // K
    int32_t kt;                // ceil(K / 16): mma tiles along K
    int32_t words;             // 32-bit words per row of bits
    int32_t transpose;         // use H_K^T
    int32_t groups_per_block;  // G
    int32_t f16_mma;           // 1: fp16 operands, 0: bf16 operands
    int32_t stages;            // staging buffers: 2 (prefetch), 1, or 3 (rotq_factor_pipelined)
    int32_t slice_log;         // log2 of the columns per K row a stage holds (L: whole row blocks)
    int32_t wgmma;             // 1: the K step of TMA stages runs on wgmma (sm_90a, large-K builds)
    int32_t krows;             // rows of a TMA stage per 64-column block: K, or 16 kt with wgmma
    int32_t half_rows;         // 2^9 rows of a tile's last round done one per warp (rotq_factor_half_row9)
    int32_t parts;             // fragment kernel: blocks sharing a tile, each its own output rows (1: whole tiles)
    int32_t part_rows;         // fragment kernel: output rows of H_K a part computes (K when parts = 1)
    uint32_t parts_magic;      // fragment kernel: rotq_frag_magic(parts) where parts > 1
    int32_t bits_offset;       // H_K's first word in rotq_factor_bits_const (rotq_factor_word)
    int32_t dyn_from;          // fragment kernel's DYN build: the block's first iteration whose tile
                               // comes from the counter (rotq_frag_claim)
} rotq_had_factor;

// Word w of H_K's row-major bits (rows of f.words words).
__device__ __forceinline__ uint32_t rotq_factor_word(const rotq_had_factor &f, int w) {
    return rotq_factor_bits_const[f.bits_offset + w];
}

#define ROTQ_FACTOR_MAX_KT 11
// Kernels are built for two bounds on ceil(K / 16): 4 (K <= 64: 12 .. 60,
// B fragments in 16 registers) and 11 (up to 172). The small bound leaves room
// for two 512-thread blocks per SM under a 64-register cap (see
// rotq_factor_min_blocks), the difference between one and two row blocks in
// flight per SM.
#define ROTQ_FACTOR_SMALL_KT 4
// Column slices of a row block (rotq_factor_shape::SLICES) from 2^8 columns:
// n > 32768 = K * 2^L with K <= 172 has L >= 8.
#define ROTQ_FACTOR_SLICE_MIN_L 8
// Rows per tile whose int8 / fp8 absmax the QUANT build takes in the last
// phase (tiles of about 8192 elements: G <= 8 for rows of 1024 or more).
#define ROTQ_FACTOR_AM_ROWS 8
