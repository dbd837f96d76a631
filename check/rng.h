/* Deterministic random numbers for the op suite: splitmix64 seeding, xoshiro256**. */
#ifndef ROTQ_CHECK_RNG_H
#define ROTQ_CHECK_RNG_H

#include <stdint.h>

typedef struct ck_rng {
    uint64_t s[4];
} ck_rng;

/* One splitmix64 step: a good 64-bit mix of x (used to derive per-case seeds). */
uint64_t ck_mix64(uint64_t x);
void ck_rng_seed(ck_rng *r, uint64_t seed);
uint64_t ck_rng_u64(ck_rng *r);
/* Uniform integer in [0, n), n > 0. */
uint64_t ck_rng_below(ck_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double ck_rng_uniform(ck_rng *r);
/* Standard normal (Box-Muller). */
double ck_rng_normal(ck_rng *r);
/* An activation-like value: mostly N(0,1), about 1 in 64 an outlier up to 8x. */
double ck_rng_activation(ck_rng *r);

#endif
