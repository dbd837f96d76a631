/*
 * Enumeration of the Hadamard factors in the generated table, for the API layer
 * (rotq_hadamard_factor_count / _at). The lookups themselves are declared in
 * internal.h; all are defined in hadamard_factors.c.
 */
#ifndef ROTQ_HADAMARD_FACTORS_H
#define ROTQ_HADAMARD_FACTORS_H

#include <stdint.h>

/* Number of factors K in the table (K = 1 not counted). */
int rotq__factor_count(void);
/* The i-th factor, ascending; 0 when i is out of range. */
int32_t rotq__factor_at(int index);

#endif /* ROTQ_HADAMARD_FACTORS_H */
