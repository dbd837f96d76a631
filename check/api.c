/*
 * Backend-independent checks (reported under the CPU backend): status texts,
 * version, dtype and factor tables, factor picking against the orders written in
 * rotq.h, orthogonality of every H_K, and a self-test of the float64 reference
 * against the dense definition of (H_K (x) H_{2^m}).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "ref.h"
#include "rng.h"

static const int32_t k_factors[] = {12, 20, 28, 36, 40, 44, 52, 60, 108, 116, 124, 140, 156, 172};
#define N_FACTORS ((int)(sizeof k_factors / sizeof k_factors[0]))

static void check_status(ck_result *r, uint64_t seed) {
    (void)seed;
    static const struct {
        rotq_status code;
        const char *name;
    } all[] = {
#define CK_STATUS_ROW_(name, value, text) {name, #name},
        ROTQ_STATUS_MAP(CK_STATUS_ROW_)
#undef CK_STATUS_ROW_
    };
    int n = (int)(sizeof all / sizeof all[0]);
    if (n != 1 - ROTQ_STATUS_MIN) ck_fail(r, "ROTQ_STATUS_MIN %d does not match the table's %d codes", ROTQ_STATUS_MIN, n);
    for (int i = 0; i < n; i++) {
        const char *s = rotq_status_string(all[i].code), *nm = rotq_status_name(all[i].code);
        if (!s || !*s) ck_fail(r, "rotq_status_string(%d) is NULL or empty", (int)all[i].code);
        if (!nm || strcmp(nm, all[i].name) != 0)
            ck_fail(r, "rotq_status_name(%d) = \"%s\", expected \"%s\"", (int)all[i].code, nm ? nm : "(null)", all[i].name);
        for (int j = 0; j < i && s; j++) {
            const char *t = rotq_status_string(all[j].code);
            if (t && strcmp(s, t) == 0) ck_fail(r, "%s and %s have the same text", all[i].name, all[j].name);
        }
    }
    static const int unknown[] = {1, 7, ROTQ_STATUS_MIN - 1, -1000, 0x7fffffff};
    for (int i = 0; i < 5; i++) {
        if (!rotq_status_string((rotq_status)unknown[i]) || !rotq_status_name((rotq_status)unknown[i]))
            ck_fail(r, "rotq_status_string/name(%d) returned NULL for an unknown code", unknown[i]);
    }
}

static void check_version(ck_result *r, uint64_t seed) {
    (void)seed;
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", ROTQ_VERSION_MAJOR, ROTQ_VERSION_MINOR, ROTQ_VERSION_PATCH);
    const char *v = rotq_version();
    if (!v || strcmp(v, want) != 0) ck_fail(r, "rotq_version() = \"%s\", the header says %s", v ? v : "(null)", want);
    int num = ROTQ_VERSION_MAJOR * 10000 + ROTQ_VERSION_MINOR * 100 + ROTQ_VERSION_PATCH;
    if (rotq_version_number() != num) ck_fail(r, "rotq_version_number() = %d, expected %d", rotq_version_number(), num);
    if (!rotq_build_info() || !*rotq_build_info()) ck_fail(r, "rotq_build_info() is NULL or empty");
}

static void check_dtypes_backends(ck_result *r, uint64_t seed) {
    (void)seed;
    static const int bits[ROTQ_DTYPE_COUNT] = {32, 16, 16, 8, 8, 4};
    static const char *names[ROTQ_DTYPE_COUNT] = {"f32", "f16", "bf16", "i8", "fp8_e4m3", "i4x2"};
    for (int d = 0; d < ROTQ_DTYPE_COUNT; d++) {
        if (rotq_dtype_bits((rotq_dtype)d) != bits[d]) ck_fail(r, "rotq_dtype_bits(%d) = %d, expected %d", d, rotq_dtype_bits((rotq_dtype)d), bits[d]);
        const char *nm = rotq_dtype_name((rotq_dtype)d);
        if (!nm || strcmp(nm, names[d]) != 0) ck_fail(r, "rotq_dtype_name(%d) = \"%s\", expected \"%s\"", d, nm ? nm : "(null)", names[d]);
    }
    static const int bad[] = {-1, ROTQ_DTYPE_COUNT, 1000};
    for (int i = 0; i < 3; i++) {
        const char *nm = rotq_dtype_name((rotq_dtype)bad[i]);
        if (rotq_dtype_bits((rotq_dtype)bad[i]) != 0) ck_fail(r, "rotq_dtype_bits(%d) is not 0", bad[i]);
        if (!nm || strcmp(nm, "invalid") != 0) ck_fail(r, "rotq_dtype_name(%d) is not \"invalid\"", bad[i]);
    }
    if (!rotq_backend_available(ROTQ_BACKEND_CPU)) ck_fail(r, "rotq_backend_available(CPU) is 0");
    if (rotq_backend_available(ROTQ_BACKEND_COUNT) || rotq_backend_available((rotq_backend)-1))
        ck_fail(r, "rotq_backend_available is nonzero for an invalid backend");
    int count = -1;
    rotq_status st = rotq_cuda_device_count(&count);
    if (st != ROTQ_OK || count < 0) ck_fail(r, "rotq_cuda_device_count: %s, count %d", rotq_status_name(st), count);
    if (rotq_backend_available(ROTQ_BACKEND_CUDA) && count < 1) ck_fail(r, "CUDA available but device count %d", count);
#ifndef ROTQ_WITH_CUDA
    if (count != 0) ck_fail(r, "a CPU-only build reports %d CUDA devices", count);
    if (rotq_backend_available(ROTQ_BACKEND_CUDA)) ck_fail(r, "a CPU-only build reports CUDA available");
#endif
}

static void check_factors(ck_result *r, uint64_t seed) {
    (void)seed;
    if (rotq_hadamard_factor_count() != N_FACTORS)
        ck_fail(r, "rotq_hadamard_factor_count() = %d, expected %d", rotq_hadamard_factor_count(), N_FACTORS);
    for (int i = 0; i < N_FACTORS && i < rotq_hadamard_factor_count(); i++)
        if (rotq_hadamard_factor_at(i) != k_factors[i])
            ck_fail(r, "rotq_hadamard_factor_at(%d) = %d, expected %d", i, rotq_hadamard_factor_at(i), k_factors[i]);
    int8_t one = 0;
    if (rotq_hadamard_factor_matrix(1, &one, 1) != ROTQ_OK || one != 1) ck_fail(r, "factor matrix of K = 1 is not [1]");
    int8_t *h = malloc(172 * 172);
    for (int i = 0; h && i < N_FACTORS; i++) {
        int32_t k = k_factors[i];
        memset(h, 0, (size_t)(k * k));
        rotq_status st = rotq_hadamard_factor_matrix(k, h, (size_t)(k * k));
        if (st != ROTQ_OK) {
            ck_fail(r, "rotq_hadamard_factor_matrix(%d): %s", k, rotq_status_name(st));
            continue;
        }
        int bad = 0;
        for (int32_t a = 0; a < k * k; a++) bad += h[a] != 1 && h[a] != -1;
        for (int32_t a = 0; a < k && !bad; a++)
            for (int32_t b = 0; b < k; b++) {
                int dot = 0;
                for (int32_t j = 0; j < k; j++) dot += h[a * k + j] * h[b * k + j];
                if (dot != (a == b ? k : 0)) bad++;
            }
        if (bad) ck_fail(r, "H_%d is not a +-1 matrix with H H^T = %d I (%d bad entries/products)", k, k, bad);
    }
    free(h);
}

static void check_pick(ck_result *r, uint64_t seed) {
    (void)seed;
    static const char *orders[ROTQ_ORDER_COUNT] = {"quarot", "spinquant", "quipsharp"};
    int bad = 0;
    for (int o = 0; o < ROTQ_ORDER_COUNT; o++)
        for (int32_t n = 1; n <= ROTQ_HADAMARD_MAX_SIZE + 4; n++) {
            int32_t want = ck_ref_pick_factor(n, (rotq_factor_order)o), k = -7;
            rotq_status st = rotq_hadamard_pick_factor(n, (rotq_factor_order)o, &k);
            int ok = want ? (st == ROTQ_OK && k == want) : (st == ROTQ_ERR_UNSUPPORTED_SIZE);
            if (!ok && bad++ < 5)
                ck_fail(r, "rotq_hadamard_pick_factor(%d, %s): %s, k %d; expected %s k %d", n, orders[o],
                        rotq_status_name(st), k, want ? "ROTQ_OK" : "ROTQ_ERR_UNSUPPORTED_SIZE", want);
        }
    /* resolve: AUTO follows QuaRot's pick, POW2 only powers of two, explicit K when it divides. */
    for (int32_t n = 1; n <= ROTQ_HADAMARD_MAX_SIZE + 4; n++) {
        int32_t k = -7, m = -7;
        int32_t want = ck_ref_pick_factor(n, ROTQ_ORDER_QUAROT);
        rotq_status st = rotq_hadamard_resolve(n, ROTQ_HADAMARD_FACTOR_AUTO, &k, &m);
        int ok = want ? (st == ROTQ_OK && k == want && m >= 0 && m < 31 && (k << m) == n) : (st != ROTQ_OK);
        if (!ok && bad++ < 10)
            ck_fail(r, "rotq_hadamard_resolve(%d, AUTO): %s k %d m %d; expected k %d", n, rotq_status_name(st), k, m, want);
        int pow2 = (n & (n - 1)) == 0 && n <= ROTQ_HADAMARD_MAX_POW2;
        st = rotq_hadamard_resolve(n, ROTQ_HADAMARD_FACTOR_POW2, &k, &m);
        ok = pow2 ? (st == ROTQ_OK && k == 1 && (1 << m) == n) : (st != ROTQ_OK);
        if (!ok && bad++ < 10) ck_fail(r, "rotq_hadamard_resolve(%d, POW2): %s k %d m %d", n, rotq_status_name(st), k, m);
    }
    for (int i = 0; i < N_FACTORS; i++)
        for (int32_t n = k_factors[i]; n <= ROTQ_HADAMARD_MAX_SIZE; n += k_factors[i]) {
            int32_t q = n / k_factors[i], k = -7, m = -7;
            int want = (q & (q - 1)) == 0;
            rotq_status st = rotq_hadamard_resolve(n, k_factors[i], &k, &m);
            int ok = want ? (st == ROTQ_OK && k == k_factors[i] && (k << m) == n) : (st == ROTQ_ERR_INVALID_FACTOR);
            if (!ok && bad++ < 15)
                ck_fail(r, "rotq_hadamard_resolve(%d, %d): %s k %d m %d; expected %s", n, k_factors[i],
                        rotq_status_name(st), k, m, want ? "ROTQ_OK" : "ROTQ_ERR_INVALID_FACTOR");
        }
    if (bad > 15) ck_fail(r, "... %d mismatches in all", bad);
}

static void check_defaults(ck_result *r, uint64_t seed) {
    (void)seed;
    static const int32_t sizes[] = {1, 2, 64, 12, 11008, 14336, 32768, 65536 - 4096};
    for (int i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); i++) {
        rotq_hadamard_params p = rotq_hadamard_params_default(sizes[i]);
        float want = (float)(1.0 / sqrt((double)sizes[i]));
        if (p.size != sizes[i] || p.factor != ROTQ_HADAMARD_FACTOR_AUTO || p.flags != 0 || p.signs != NULL ||
            !(fabsf(p.scale - want) <= 0x1p-24f * want))
            ck_fail(r, "rotq_hadamard_params_default(%d) = {size %d, factor %d, flags %u, scale %.9g, signs %p}; "
                    "expected scale %.9g", sizes[i], p.size, p.factor, p.flags, p.scale, (const void *)p.signs, want);
    }
}

/* The reference against the dense definition: entry (i, j) of H_K (x) H_{2^m} is
   H_K[i >> m][j >> m] * (-1)^popcount((i & j) & (2^m - 1)). */
static void check_reference(ck_result *r, uint64_t seed) {
    ck_rng rng;
    ck_rng_seed(&rng, seed);
    static const int32_t sizes[][2] = {{1, 0}, {1, 1}, {1, 3}, {1, 7}, {12, 0}, {12, 2}, {20, 1}, {28, 3}, {172, 0}, {44, 2}};
    for (int t = 0; t < (int)(sizeof sizes / sizeof sizes[0]); t++)
        for (int tr = 0; tr < 2; tr++) {
            int32_t k = sizes[t][0], m = sizes[t][1], n = k << m;
            rotq_hadamard_params p = rotq_hadamard_params_default(n);
            p.factor = k == 1 ? ROTQ_HADAMARD_FACTOR_POW2 : k;
            p.flags = tr ? ROTQ_HADAMARD_TRANSPOSE_FACTOR : 0;
            int8_t *signs = malloc((size_t)n * 2), *hk = malloc((size_t)(k * k));
            double *x = malloc(sizeof(double) * (size_t)n * 3), *y = x + n, *d = y + n;
            for (int32_t i = 0; i < n; i++) signs[i] = (int8_t)ck_rng_u64(&rng), x[i] = ck_rng_normal(&rng);
            ck_had_ref h;
            if (ck_had_ref_init(&h, &p, signs) != 0 || (k > 1 && rotq_hadamard_factor_matrix(k, hk, (size_t)(k * k)))) {
                ck_fail(r, "reference init failed for K %d m %d", k, m);
            } else {
                if (k == 1) hk[0] = 1;
                ck_ref_hadamard_row(&h, n, x, y);
                double err = 0, mx = 0;
                for (int32_t i = 0; i < n; i++) {
                    double s = 0;
                    for (int32_t j = 0; j < n; j++) {
                        int32_t a = i >> m, b = j >> m;
                        int hv = tr ? hk[b * k + a] : hk[a * k + b];
                        unsigned low = (unsigned)(i & j) & ((1u << m) - 1u);
                        int par = 0;
                        while (low) par ^= 1, low &= low - 1;
                        double xj = signs[j] < 0 ? -x[j] : x[j];
                        s += (par ? -hv : hv) * xj;
                    }
                    d[i] = s * (double)p.scale;
                    err = fmax(err, fabs(d[i] - y[i]));
                    mx = fmax(mx, fabs(d[i]));
                }
                if (!(err <= 1e-12 * mx))
                    ck_fail(r, "reference FWHT/Kronecker disagrees with the dense definition: K %d m %d%s, max err %.3e",
                            k, m, tr ? " (transposed)" : "", err);
            }
            ck_had_ref_free(&h);
            free(signs);
            free(hk);
            free(x);
        }
}

/* The rule that compares rotated quantize codes (ck_quant_code_within): codes
   agree, or a value within the allowed deviation of the reference's scaled value
   rounds to the backend's code; one that no such value reaches must fail. */
static void check_quant_compare(ck_result *r, uint64_t seed) {
    (void)seed;
    static const struct {
        rotq_quant_kind kind;
        uint32_t got, ref;
        double sref, dl;
        int want;
    } t[] = {
        {ROTQ_QUANT_INT8_ROW, 0x05, 0x05, 5.2, 0.0, 1},   /* the same code */
        {ROTQ_QUANT_INT8_ROW, 0x06, 0x05, 5.49, 0.02, 1}, /* across the boundary at 5.5 */
        {ROTQ_QUANT_INT8_ROW, 0x06, 0x05, 5.4, 0.02, 0},  /* the boundary out of reach */
        {ROTQ_QUANT_INT8_ROW, 0x07, 0x05, 5.49, 0.02, 0}, /* two steps: the edge at 6.5 */
        {ROTQ_QUANT_INT8_ROW, 0xff, 0x00, -0.49, 0.02, 1}, /* -1 against 0 */
        {ROTQ_QUANT_INT4_GROUP, 0x5, 0x3, 3.2, 0.1, 0},
        {ROTQ_QUANT_INT4_GROUP, 0x4, 0x3, 3.45, 0.1, 1},
        /* fp8 e4m3 near zero, steps of 2^-9: 5 * 2^-9 against 7 * 2^-9 */
        {ROTQ_QUANT_FP8_ROW, 0x05, 0x07, 0.0128173828, 0.41, 1},
        {ROTQ_QUANT_FP8_ROW, 0x05, 0x07, 0.0128173828, 0.001, 0},
        {ROTQ_QUANT_FP8_ROW, 0x85, 0x87, -0.0128173828, 0.41, 1},
        {ROTQ_QUANT_FP8_ROW, 0x81, 0x01, 0.002, 0.01, 1}, /* across zero: the edge at -2^-10 */
        {ROTQ_QUANT_FP8_ROW, 0x81, 0x01, 0.002, 0.001, 0},
        {ROTQ_QUANT_FP8_ROW, 0x7e, 0x7d, 435.0, 4.1, 1}, /* 448 against 416: the boundary at 432 */
        {ROTQ_QUANT_FP8_ROW, 0x7e, 0x7d, 420.0, 4.1, 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const int got = ck_quant_code_within(t[i].kind, t[i].got, t[i].ref, t[i].sref, t[i].dl);
        if (got != t[i].want)
            ck_fail(r, "code comparison case %zu: code 0x%x against 0x%x at %g (deviation %g) %s", i, t[i].got,
                    t[i].ref, t[i].sref, t[i].dl, t[i].want ? "rejected" : "accepted");
    }
}

void ck_op_api(ck_ctx *c) {
    static const struct {
        const char *name;
        void (*fn)(ck_result *, uint64_t);
    } checks[] = {
        {"api status-texts", check_status},
        {"api version", check_version},
        {"api dtypes-backends", check_dtypes_backends},
        {"api factor-matrices", check_factors},
        {"api pick-and-resolve", check_pick},
        {"api params-default", check_defaults},
        {"api reference-selftest", check_reference},
        {"api quant-compare-selftest", check_quant_compare},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        uint64_t seed;
        if (!ck_case_begin(c, checks[i].name, &seed)) continue;
        if (!ck_backend_begin(c, ROTQ_BACKEND_CPU, checks[i].name)) continue;
        ck_result r = {0};
        checks[i].fn(&r, seed);
        ck_report(c, ROTQ_BACKEND_CPU, checks[i].name, &r);
    }
}
