// In-shared-memory power-of-two Walsh-Hadamard transform of every block of
// 2^L consecutive floats of a buffer W (the rows a quantize block holds).
//
// W holds element e at rotq_q_pad(e) = e + e/32 (one padding float per 32).
// The padding is additive over disjoint bit sets, so a thread's 32 accesses
// are one base register plus compile-time offsets (no per-value address
// registers), and every phase below is free of bank conflicts: the lanes of a
// warp always differ in element bits 0..4, or (phase 0) the pad shifts each
// lane's 32-float run by one bank. A phase gives each thread *slots* of 32 values
// whose element indices differ in the 5 bits [lo, lo+5), applies the radix-2
// stages of the bits that phase owns, and writes the values back where it read
// them (so a phase needs no barrier inside, one after). Stages run in
// ascending bit order, phase after phase, exactly the order of the CPU
// backend's FWHT, so the fp32 results are identical to it.
//   L <= 5: one phase, lo = 0, stages on register bits 0..L-1 (bits >= L of the
//           slot are block-index bits: a slot holds 32 / 2^L whole blocks);
//   L > 5:  ceil(L/5) phases, lo = min(5p, L-5), stages on register bits i with
//           lo + i >= 5p (bits below were done by the previous phase).
// W holds w_elems elements, a multiple of max(2^L, 32) (w_elems + w_elems/32
// floats); the last phase multiplies by scale (the CPU's out * scale).
#pragma once
#include "hadamard_plan.cuh" // rotq_butterfly

__host__ __device__ constexpr unsigned rotq_q_pad(unsigned e) { return e + (e >> 5); }

template <int LO>
__device__ __forceinline__ void rotq_q_fwht_phase(float *W, unsigned slots, int amin, int amax, bool last,
                                                  float scale) {
    for (unsigned s = threadIdx.x; s < slots; s += blockDim.x) {
        float *p = W + rotq_q_pad((s & ((1u << LO) - 1u)) | ((s >> LO) << (LO + 5)));
        float v[32];
#pragma unroll
        for (int r = 0; r < 32; r++) v[r] = p[rotq_q_pad((unsigned)r << LO)];
        if (amin <= 0 && 0 < amax) rotq_butterfly<0>(v);
        if (amin <= 1 && 1 < amax) rotq_butterfly<1>(v);
        if (amin <= 2 && 2 < amax) rotq_butterfly<2>(v);
        if (amin <= 3 && 3 < amax) rotq_butterfly<3>(v);
        if (amin <= 4 && 4 < amax) rotq_butterfly<4>(v);
        if (last) {
#pragma unroll
            for (int r = 0; r < 32; r++) v[r] *= scale;
        }
#pragma unroll
        for (int r = 0; r < 32; r++) p[rotq_q_pad((unsigned)r << LO)] = v[r];
    }
}

// The whole transform, barrier after each phase (the caller has synced after filling W).
__device__ __forceinline__ void rotq_q_fwht(float *W, unsigned w_elems, int L, float scale) {
    const unsigned slots = w_elems / 32;
    const int phases = L <= 5 ? 1 : (L + 4) / 5;
    for (int p = 0; p < phases; p++) {
        const int lo = L <= 5 ? 0 : (5 * p < L - 5 ? 5 * p : L - 5);
        const int amin = 5 * p - lo, amax = L < 5 ? L : 5;
        const bool last = p == phases - 1;
        switch (lo) {
        case 0: rotq_q_fwht_phase<0>(W, slots, amin, amax, last, scale); break;
        case 1: rotq_q_fwht_phase<1>(W, slots, amin, amax, last, scale); break;
        case 2: rotq_q_fwht_phase<2>(W, slots, amin, amax, last, scale); break;
        case 3: rotq_q_fwht_phase<3>(W, slots, amin, amax, last, scale); break;
        case 4: rotq_q_fwht_phase<4>(W, slots, amin, amax, last, scale); break;
        case 5: rotq_q_fwht_phase<5>(W, slots, amin, amax, last, scale); break;
        case 6: rotq_q_fwht_phase<6>(W, slots, amin, amax, last, scale); break;
        case 7: rotq_q_fwht_phase<7>(W, slots, amin, amax, last, scale); break;
        case 8: rotq_q_fwht_phase<8>(W, slots, amin, amax, last, scale); break;
        case 9: rotq_q_fwht_phase<9>(W, slots, amin, amax, last, scale); break;
        default: rotq_q_fwht_phase<10>(W, slots, amin, amax, last, scale); break;
        }
        __syncthreads();
    }
}
