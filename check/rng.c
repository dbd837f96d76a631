#include "rng.h"

#include <math.h>

uint64_t ck_mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void ck_rng_seed(ck_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) {
        seed = ck_mix64(seed);
        r->s[i] = seed;
    }
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ck_rng_u64(ck_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t ck_rng_below(ck_rng *r, uint64_t n) { return ck_rng_u64(r) % n; /* bias negligible */ }

double ck_rng_uniform(ck_rng *r) { return (double)(ck_rng_u64(r) >> 11) * 0x1.0p-53; }

double ck_rng_normal(ck_rng *r) {
    double u1 = 1.0 - ck_rng_uniform(r); /* (0, 1] */
    double u2 = ck_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double ck_rng_activation(ck_rng *r) {
    double v = ck_rng_normal(r);
    if ((ck_rng_u64(r) & 63) == 0) v *= 1.0 + 7.0 * ck_rng_uniform(r);
    return v;
}
