/*
 * Hadamard factor matrices H_K (K = 12 ... 172): lookups into the generated table
 * (hadamard_factor_data.h, made by tools/gen_hadamard_factors.py).
 */
#include "internal.h"
#include "hadamard_factors.h"
#include "hadamard_factor_data.h"

int rotq__factor_count(void) { return ROTQ__FACTOR_COUNT; }

int32_t rotq__factor_at(int index) {
    return (index >= 0 && index < ROTQ__FACTOR_COUNT) ? rotq__factor_k[index] : 0;
}

int rotq__factor_index(int32_t k) {
    for (int i = 0; i < ROTQ__FACTOR_COUNT; ++i) {
        if (rotq__factor_k[i] == k) return i;
        if (rotq__factor_k[i] > k) break; /* ascending */
    }
    return -1;
}

int rotq__factor_entry(int32_t k, int32_t r, int32_t c) {
    int i = rotq__factor_index(k);
    if (i < 0 || r < 0 || c < 0 || r >= k || c >= k) return 0; /* contract violation */
    const uint32_t *row = rotq__factor_bits_data + rotq__factor_offset[i] + r * rotq__factor_words_per_row[i];
    return ((row[c >> 5] >> (c & 31)) & 1u) ? -1 : 1;
}

const uint32_t *rotq__factor_bits(int32_t k, int32_t *words_per_row) {
    int i = rotq__factor_index(k);
    if (i < 0) return NULL;
    if (words_per_row) *words_per_row = rotq__factor_words_per_row[i];
    return rotq__factor_bits_data + rotq__factor_offset[i];
}
