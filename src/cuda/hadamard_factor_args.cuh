// The K * 2^m kernels' description of H_K (rotq_had_factor: packed sign bits
// and the launch plan's choices, passed by value) and their build bounds.
#pragma once
#include "hadamard_pow2.cuh"
#include "quantize_tile.cuh"

#define ROTQ_FACTOR_MAX_WORDS 1032 /* 172 rows x 6 words */

// H_K as packed sign bits, passed by value (<= 4.2 KB of kernel parameters).
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
    uint32_t bits[ROTQ_FACTOR_MAX_WORDS];
    int32_t dyn_from;          // fragment kernel's DYN build: the block's first iteration whose tile
                               // comes from the counter (rotq_frag_claim)
    // The fragment kernel's DYN build (whole tiles) reads these instead of
    // working them out (rotq_had_frag_kernel):
    uint32_t tasks;            // tasks a tile (A + B)
    uint32_t tasks_magic;      // rotq_frag_magic(tasks)
    uint32_t stages_magic;     // rotq_frag_magic(stages)
    uint32_t slot_bytes;       // bytes of an input slot (K rows of a slice)
    uint32_t w_off, afr_off;   // W's and the A fragments' byte offsets in shared memory
    uint32_t tab_off;          // the signed builds' mask table's offset (rotq_frag_sign_table)
} rotq_had_factor;

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
