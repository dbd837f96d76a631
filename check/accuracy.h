/*
 * Accuracy of the quantization formats with and without a rotation, measured
 * on synthetic activations with outlier channels (docs/accuracy.md describes
 * the generator, the SNR and the measured table). One implementation, used by
 * `rotq accuracy`, `rotq demo` and the CTest test `accuracy`.
 *
 * A round trip is x -> quantize -> dequantize -> x_hat without a rotation, and
 * x -> quantize(H x) -> dequantize -> H^-1 -> x_hat with one (H orthonormal:
 * H^-1 = H^T, the factor transposed and the random signs undone after it).
 * SNR = 10 log10(sum x^2 / sum (x - x_hat)^2), over the whole matrix.
 */
#ifndef ROTQ_CHECK_ACCURACY_H
#define ROTQ_CHECK_ACCURACY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rotq.h"

/* The generator: x[t][c] = g[t] * o[c] * z[t][c] (docs/accuracy.md). */
#define ROTQ_ACCURACY_OUTLIERS 8 /* outlier channels, o[c] uniform in [50, 100) */
#define ROTQ_ACCURACY_BLOCK 128  /* size of the block-diagonal rotation */

/* Fills x (tokens x channels, row-major) from seed; channels >= ROTQ_ACCURACY_OUTLIERS.
   outlier_channels, when non-NULL, receives the ROTQ_ACCURACY_OUTLIERS channels. */
void rotq_accuracy_activations(float *x, int64_t tokens, int64_t channels, uint64_t seed,
                               int64_t *outlier_channels);
/* Random +-1 signs, one per channel, from seed (a stream apart from the activations'). */
void rotq_accuracy_signs(int8_t *signs, int64_t channels, uint64_t seed);
/* 10 log10(sum x^2 / sum (x - xh)^2), in double; +Inf when the two are equal. */
double rotq_accuracy_snr_db(const float *x, const float *xh, size_t n);
/* The same over rows of `channels` values, leaving out the sorted `skip` channels. */
double rotq_accuracy_snr_db_except(const float *x, const float *xh, size_t n, int64_t channels,
                                   const int64_t *skip, int n_skip);

typedef enum rotq_accuracy_format {
    ROTQ_ACCURACY_INT8 = 0, /* int8, one scale per token */
    ROTQ_ACCURACY_FP8,      /* fp8 e4m3, one scale per token */
    ROTQ_ACCURACY_INT4_G32, /* int4, one scale per group of 32 channels */
    ROTQ_ACCURACY_INT4_G64,
    ROTQ_ACCURACY_INT4_G128,
    ROTQ_ACCURACY_FORMAT_COUNT
} rotq_accuracy_format;

typedef enum rotq_accuracy_rotation {
    ROTQ_ACCURACY_NONE = 0,       /* quantize x itself */
    ROTQ_ACCURACY_HADAMARD,       /* orthonormal Hadamard, n = channels (K*2^m: QuaRot's K) */
    ROTQ_ACCURACY_HADAMARD_SIGNS, /* the same with random signs first (H D) */
    ROTQ_ACCURACY_BLOCK128,       /* block-diagonal orthonormal Hadamard of size 128 */
    ROTQ_ACCURACY_ROTATION_COUNT
} rotq_accuracy_rotation;

/* Short machine names ("int4_g128", "hadamard_signs") and table labels. */
const char *rotq_accuracy_format_key(rotq_accuracy_format f);
const char *rotq_accuracy_format_label(rotq_accuracy_format f);
const char *rotq_accuracy_rotation_key(rotq_accuracy_rotation r);

typedef struct rotq_accuracy_options {
    rotq_backend backend;
    int64_t tokens;   /* 1 .. 65536 */
    int64_t channels; /* a multiple of 128 up to 65536 with a Hadamard construction */
    uint64_t seed;
    int brief; /* 1: only int8, fp8, int4 g128 x none, Hadamard n, and only the
                  all-channel table (what `rotq demo` shows) */
} rotq_accuracy_options;

typedef enum rotq_accuracy_state {
    ROTQ_ACCURACY_SKIPPED = 0,   /* not measured (brief) */
    ROTQ_ACCURACY_OK,            /* snr_db holds the number */
    ROTQ_ACCURACY_NOT_SUPPORTED, /* the backend returned ROTQ_ERR_NOT_SUPPORTED */
    ROTQ_ACCURACY_ERROR          /* another status, or a harness failure: a failure */
} rotq_accuracy_state;

typedef struct rotq_accuracy_results {
    rotq_accuracy_options opt;
    int32_t factor;                        /* K of the full-size Hadamard (1 for 2^m) */
    int64_t outlier_channels[ROTQ_ACCURACY_OUTLIERS];
    double crest[ROTQ_ACCURACY_ROTATION_COUNT]; /* mean over tokens of absmax/RMS of the
                                                   (rotated) row; 0 when not measured */
    double snr_db[ROTQ_ACCURACY_FORMAT_COUNT][ROTQ_ACCURACY_ROTATION_COUNT];
    /* The same SNR over the ordinary (non-outlier) channels only: what the
       outlier-dominated total hides (docs/accuracy.md). */
    double snr_ordinary_db[ROTQ_ACCURACY_FORMAT_COUNT][ROTQ_ACCURACY_ROTATION_COUNT];
    rotq_accuracy_state state[ROTQ_ACCURACY_FORMAT_COUNT][ROTQ_ACCURACY_ROTATION_COUNT];
    rotq_status status[ROTQ_ACCURACY_FORMAT_COUNT][ROTQ_ACCURACY_ROTATION_COUNT];
    int failures;    /* cells in state ERROR, plus harness failures */
    char error[160]; /* the first failure, as text ("" if none) */
} rotq_accuracy_results;

/* NULL when the options are valid, else why not (for a usage error). */
const char *rotq_accuracy_check_options(const rotq_accuracy_options *o);
/* Generates the data and measures every cell. Returns 0 when nothing failed
   (NOT_SUPPORTED cells are not failures), -1 otherwise; r is filled either way. */
int rotq_accuracy_measure(const rotq_accuracy_options *o, rotq_accuracy_results *r);
/* The tables: formats x rotations, SNR dB and the gain over no rotation, for all
   channels and for the ordinary channels; then absmax/RMS per rotation. */
void rotq_accuracy_print(const rotq_accuracy_results *r, FILE *f);
/* One JSON object: the options, crest factors and a row per measured cell. */
void rotq_accuracy_write_json(const rotq_accuracy_results *r, FILE *f);

#endif
