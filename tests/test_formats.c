/*
 * Exhaustive checks of src/common/formats.h against an independent
 * double-precision definition of each format: decoding from the bit fields,
 * round-to-nearest-even by scaling to an integer quantum, saturation/overflow
 * and NaN rules, int4 packing and the quantization rules.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"

static int g_case_failures, g_passed, g_failed;

#define CHECK(cond, ...)                                        \
    do {                                                        \
        if (!(cond)) {                                          \
            if (g_case_failures++ < 8) {                        \
                printf("    ");                                 \
                printf(__VA_ARGS__);                            \
                printf("\n");                                   \
            }                                                   \
        }                                                       \
    } while (0)

static void run(const char *name, void (*fn)(void)) {
    g_case_failures = 0;
    fn();
    if (g_case_failures) {
        g_failed++;
        printf("FAIL %s (%d mismatches)\n", name, g_case_failures);
    } else {
        g_passed++;
        printf("ok   %s\n", name);
    }
}

/* ---- the independent definition ---- */

typedef struct fmt {
    const char *name;
    int ebits, mbits, bias;
    int ieee;    /* 1: exponent all ones is Inf/NaN; 0: e4m3 (only S.1111.111 is NaN) */
    double maxv; /* largest finite value */
    int emin;    /* exponent of the smallest normal */
} fmt;

static const fmt F16 = {"f16", 5, 10, 15, 1, 65504.0, -14};
static const fmt BF16 = {"bf16", 8, 7, 127, 1, 0x1.fep127, -126};
static const fmt E4M3 = {"fp8_e4m3", 4, 3, 7, 0, 448.0, -6};

static double decode(const fmt *f, uint32_t bits) {
    uint32_t man = bits & ((1u << f->mbits) - 1u);
    uint32_t exp = (bits >> f->mbits) & ((1u << f->ebits) - 1u);
    int neg = (bits >> (f->mbits + f->ebits)) & 1u;
    uint32_t emax = (1u << f->ebits) - 1u;
    double v;
    if (f->ieee && exp == emax) v = man ? NAN : INFINITY;
    else if (!f->ieee && exp == emax && man == (1u << f->mbits) - 1u) v = NAN;
    else if (exp == 0) v = ldexp((double)man, 1 - f->bias - f->mbits);
    else v = ldexp(1.0 + ldexp((double)man, -f->mbits), (int)exp - f->bias);
    return neg ? -v : v;
}

/* v rounded to the format: RNE at the quantum of v's binade (the subnormal quantum
   below the normal range); beyond the largest finite value: Inf (IEEE) or the
   largest value (e4m3, saturating). */
static double round_to(const fmt *f, double v) {
    if (isnan(v)) return v;
    if (isinf(v)) return f->ieee ? v : copysign(f->maxv, v);
    if (v == 0) return v;
    double a = fabs(v);
    int e;
    frexp(a, &e);
    int E = e - 1 < f->emin ? f->emin : e - 1;
    double q = ldexp(1.0, E - f->mbits);
    double r = nearbyint(a / q) * q;
    if (r > f->maxv) r = f->ieee ? INFINITY : f->maxv;
    return copysign(r, v);
}

static uint32_t encode_lib(const fmt *f, float x) {
    if (f == &F16) return rotq_f32_to_f16(x);
    if (f == &BF16) return rotq_f32_to_bf16(x);
    return rotq_f32_to_fp8_e4m3(x);
}

static float decode_lib(const fmt *f, uint32_t b) {
    if (f == &F16) return rotq_f16_to_f32((uint16_t)b);
    if (f == &BF16) return rotq_bf16_to_f32((uint16_t)b);
    return rotq_fp8_e4m3_to_f32((uint8_t)b);
}

static int same(double a, double b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && !signbit(a) == !signbit(b);
}

/* One f32 input through the library's encoder, judged by the definition. */
static void check_encode(const fmt *f, float x) {
    uint32_t b = encode_lib(f, x);
    double got = decode(f, b), want = round_to(f, (double)x);
    if (isnan(x)) {
        if (f->ieee) CHECK(isnan(got) && !signbit(got) == !signbit(x), "%s(NaN 0x%08x) = 0x%x, not a NaN of the same sign", f->name, rotq_f32_bits(x), b);
        else CHECK(b == ROTQ_FP8_E4M3_NAN, "fp8(NaN 0x%08x) = 0x%02x, expected 0x7f", rotq_f32_bits(x), b);
        return;
    }
    CHECK(same(got, want), "%s(%a = 0x%08x) = 0x%x (%a), expected %a", f->name, (double)x, rotq_f32_bits(x), b, got, want);
}

/* ---- the checks ---- */

static void test_decode_all(const fmt *f, int n) {
    for (uint32_t b = 0; b < (uint32_t)n; b++) {
        double want = decode(f, b), got = (double)decode_lib(f, b);
        CHECK(same(got, want), "%s decode 0x%x = %a, expected %a", f->name, b, got, want);
    }
}
static void t_f16_decode(void) { test_decode_all(&F16, 65536); }
static void t_bf16_decode(void) { test_decode_all(&BF16, 65536); }
static void t_fp8_decode(void) { test_decode_all(&E4M3, 256); }

static void t_f16_roundtrip(void) {
    for (uint32_t h = 0; h < 65536; h++) {
        uint32_t back = rotq_f32_to_f16(rotq_f16_to_f32((uint16_t)h));
        int nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
        uint32_t want = nan ? (h | 0x0200u) : h; /* NaN: sign and payload kept, made quiet */
        CHECK(back == want, "f16 0x%04x -> f32 -> 0x%04x, expected 0x%04x", h, back, want);
    }
}

static void t_bf16_roundtrip(void) {
    for (uint32_t h = 0; h < 65536; h++) {
        uint32_t back = rotq_f32_to_bf16(rotq_bf16_to_f32((uint16_t)h));
        int nan = (h & 0x7f80u) == 0x7f80u && (h & 0x7fu);
        uint32_t want = nan ? (h | 0x0040u) : h;
        CHECK(back == want, "bf16 0x%04x -> f32 -> 0x%04x, expected 0x%04x", h, back, want);
    }
}

static void t_fp8_roundtrip(void) {
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t back = rotq_f32_to_fp8_e4m3(rotq_fp8_e4m3_to_f32((uint8_t)b));
        uint32_t want = (b & 0x7fu) == 0x7fu ? ROTQ_FP8_E4M3_NAN : b;
        CHECK(back == want, "fp8 0x%02x -> f32 -> 0x%02x, expected 0x%02x", b, back, want);
    }
}

/* Every value of the format, both neighbours in f32, every midpoint between
   adjacent values and its f32 neighbours, on both signs; then a walk over all
   f32 bit patterns; then the specials. */
static void test_encode(const fmt *f, int ncodes) {
    int nfin = 0;
    double *vals = malloc(sizeof(double) * (size_t)ncodes);
    for (uint32_t b = 0; b < (uint32_t)ncodes / 2; b++) { /* non-negative codes in increasing order */
        double v = decode(f, b);
        if (isfinite(v)) vals[nfin++] = v;
    }
    for (int i = 0; i < nfin; i++) {
        float pts[6];
        int np = 0;
        float v = (float)vals[i];
        pts[np++] = v, pts[np++] = nextafterf(v, INFINITY), pts[np++] = nextafterf(v, -INFINITY);
        double mid = i + 1 < nfin ? 0.5 * (vals[i] + vals[i + 1]) : vals[i] + 0.5 * (vals[i] - vals[i - 1]);
        float m = (float)mid; /* exact: a midpoint has one more bit than the format */
        CHECK((double)m == mid, "%s midpoint %a not exact in f32", f->name, mid);
        pts[np++] = m, pts[np++] = nextafterf(m, INFINITY), pts[np++] = nextafterf(m, -INFINITY);
        for (int k = 0; k < np; k++) check_encode(f, pts[k]), check_encode(f, -pts[k]);
    }
    free(vals);
    for (uint64_t u = 0; u < 0x100000000ull; u += 4093) check_encode(f, rotq_f32_from_bits((uint32_t)u));
    static const uint32_t specials[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u,
                                        0x7fbfffffu, 0x00000001u, 0x80000001u, 0x007fffffu, 0x7f7fffffu,
                                        0xff7fffffu, 0x00000000u, 0x80000000u};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) check_encode(f, rotq_f32_from_bits(specials[i]));
}
static void t_f16_encode(void) { test_encode(&F16, 65536); }
static void t_bf16_encode(void) { test_encode(&BF16, 65536); }
static void t_fp8_encode(void) { test_encode(&E4M3, 256); }

static void t_fp8_named_values(void) {
    CHECK(rotq_f32_to_fp8_e4m3(448.0f) == 0x7e, "448 -> 0x%02x", rotq_f32_to_fp8_e4m3(448.0f));
    CHECK(rotq_f32_to_fp8_e4m3(464.0f) == 0x7e, "464 must saturate to 448");
    CHECK(rotq_f32_to_fp8_e4m3(1e30f) == 0x7e && rotq_f32_to_fp8_e4m3(-1e30f) == 0xfe, "large values must saturate");
    CHECK(rotq_f32_to_fp8_e4m3(INFINITY) == 0x7e && rotq_f32_to_fp8_e4m3(-INFINITY) == 0xfe, "+-Inf must saturate to +-448");
    CHECK(rotq_f32_to_fp8_e4m3(NAN) == 0x7f && rotq_f32_to_fp8_e4m3(-NAN) == 0x7f, "NaN must give 0x7f");
    CHECK(rotq_f32_to_fp8_e4m3(0x1p-10f) == 0x00, "2^-10 (a tie) must round to 0");
    CHECK(rotq_f32_to_fp8_e4m3(0x3p-10f) == 0x02, "3*2^-10 (a tie) must round to 2*2^-9");
    CHECK(rotq_f32_to_fp8_e4m3(0x1.ep-7f) == 0x08, "15/16 * 2^-6 rounds up into the first normal");
    CHECK(rotq_f32_to_f16(65519.0f) == 0x7bff && rotq_f32_to_f16(65520.0f) == 0x7c00, "f16 overflow threshold");
    CHECK(rotq_f32_to_f16(0x1p-25f) == 0x0000 && rotq_f32_to_f16(0x3p-25f) == 0x0002, "f16 subnormal ties");
    CHECK(rotq_f32_to_bf16(0x1.ff8p127f) == 0x7f80, "bf16 rounds past its max to Inf");
}

static void t_int4_pack(void) {
    for (int a = -8; a < 8; a++)
        for (int b = -8; b < 8; b++) {
            uint8_t p = rotq_i4_pack((int8_t)a, (int8_t)b);
            CHECK((p & 0xf) == ((unsigned)a & 0xfu) && (p >> 4) == ((unsigned)b & 0xfu), "pack(%d, %d) = 0x%02x: even index must be the low nibble", a, b, p);
            CHECK(rotq_i4_lo(p) == a && rotq_i4_hi(p) == b, "unpack(pack(%d, %d)) = (%d, %d)", a, b, rotq_i4_lo(p), rotq_i4_hi(p));
        }
}

/* Independent integer quantizer: NaN -> 0, clamp to +-qmax, round half to even. */
static int quant_ref(double v, double qmax) {
    if (isnan(v)) return 0;
    if (v > qmax) v = qmax;
    if (v < -qmax) v = -qmax;
    double fl = floor(v), d = v - fl;
    double r = d > 0.5 ? fl + 1 : d < 0.5 ? fl : (fmod(fl, 2.0) == 0 ? fl : fl + 1);
    return (int)r;
}

static void t_quant_int(void) {
    static const float special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.5f, 1.5f, 2.5f, -2.5f, -0.5f, 126.5f, -126.5f,
                                    127.49f, 127.5f, 1e30f, -1e30f, 6.5f, -6.5f, 7.5f, -7.5f, 0.0f, -0.0f};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        float v = special[i];
        CHECK(rotq_quant_i8(v) == quant_ref(v, 127), "quant_i8(%g) = %d, expected %d", (double)v, rotq_quant_i8(v), quant_ref(v, 127));
        CHECK(rotq_quant_i4(v) == quant_ref(v, 7), "quant_i4(%g) = %d, expected %d", (double)v, rotq_quant_i4(v), quant_ref(v, 7));
    }
    for (int k = -200 * 64; k <= 200 * 64; k++) { /* every multiple of 1/64: all ties included */
        float v = (float)k / 64.0f;
        CHECK(rotq_quant_i8(v) == quant_ref(v, 127), "quant_i8(%g) = %d, expected %d", (double)v, rotq_quant_i8(v), quant_ref(v, 127));
        CHECK(rotq_quant_i4(v) == quant_ref(v, 7), "quant_i4(%g) = %d, expected %d", (double)v, rotq_quant_i4(v), quant_ref(v, 7));
    }
}

static void t_absmax_scale(void) {
    float am = 0.0f;
    static const float vals[] = {1.0f, -3.0f, NAN, INFINITY, -INFINITY, 2.0f, -0.0f, -NAN};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) am = rotq_absmax_update(am, vals[i]);
    CHECK(am == 3.0f, "absmax over {1,-3,NaN,Inf,-Inf,2,-0,-NaN} = %g, expected 3 (finite values only)", (double)am);
    am = 0.0f;
    for (int i = 2; i < 5; i++) am = rotq_absmax_update(am, vals[i]);
    CHECK(am == 0.0f, "absmax of only non-finite values = %g, expected 0", (double)am);
    CHECK(rotq_quant_scale(0.0f, 127.0f) == 0.0f && rotq_quant_inv(0.0f, 127.0f) == 0.0f, "absmax 0 must give scale = inv = 0");
    static const float qm[3] = {127.0f, 7.0f, 448.0f};
    for (int i = 0; i < 3; i++)
        for (uint32_t u = 1; u < 0x7f800000u; u += 8191) { /* positive finite absmax, subnormal to max */
            float a = rotq_f32_from_bits(u);
            /* float division is correctly rounded; double then float is too (53 >= 2*24 + 2) */
            float ws = (float)((double)a / qm[i]), wi = (float)((double)qm[i] / a);
            if (isinf(wi)) ws = wi = 0.0f; /* QMAX/absmax overflows: the row is flushed to zero codes */
            CHECK(rotq_quant_scale(a, qm[i]) == ws, "scale(%a, %g) = %a, expected %a", (double)a, (double)qm[i], (double)rotq_quant_scale(a, qm[i]), (double)ws);
            CHECK(rotq_quant_inv(a, qm[i]) == wi, "inv(%a, %g) = %a, expected %a", (double)a, (double)qm[i], (double)rotq_quant_inv(a, qm[i]), (double)wi);
        }
    for (uint32_t u = 1; u < 0x7f800000u; u += 65521) {
        float s = rotq_f32_from_bits(u);
        CHECK(rotq_static_inv(s) == (float)(1.0 / (double)s), "static_inv(%a)", (double)s);
    }
    /* Inf saturates through the whole rule: q = convert(x * inv). */
    float inv = rotq_quant_inv(2.0f, 127.0f);
    CHECK(rotq_quant_i8(INFINITY * inv) == 127 && rotq_quant_i8(-INFINITY * inv) == -127, "Inf must saturate to +-127");
    CHECK(rotq_quant_i8(NAN * inv) == 0, "NaN must quantize to 0");
    CHECK(rotq_quant_i8(2.0f * inv) == 127 && rotq_quant_i8(-2.0f * inv) == -127, "absmax must map to +-127");
}

/* The rules applied to whole rows of finite values whose absmax is a normal float
   but so small that QMAX/absmax overflows (absmax < QMAX/FLT_MAX, about 3.7e-37 for
   int8, 1.3e-36 for fp8). A finite row must quantize to finite codes, and every
   dequantized value must lie within half a step (times the scale) of its input,
   unless the rule flushes the whole row to zero (scale 0, codes 0). */
static void t_tiny_absmax(void) {
    static const float absmaxes[] = {0x1p-126f, 3e-38f, 1e-37f, 3e-37f, 1e-36f, 1e-30f};
    static const float qmaxes[3] = {ROTQ_I8_QMAX, ROTQ_I4_QMAX, ROTQ_FP8_E4M3_MAX};
    static const char *names[3] = {"int8", "int4", "fp8"};
    for (size_t i = 0; i < sizeof absmaxes / sizeof absmaxes[0]; i++)
        for (int k = 0; k < 3; k++) {
            float a = absmaxes[i], row[5] = {a, 0.0f, -a / 3.0f, a / 7.0f, -a};
            float am = 0.0f;
            for (int j = 0; j < 5; j++) am = rotq_absmax_update(am, row[j]);
            float scale = rotq_quant_scale(am, qmaxes[k]), inv = rotq_quant_inv(am, qmaxes[k]);
            for (int j = 0; j < 5; j++) {
                float s = row[j] * inv;
                double v, half;
                if (k == 2) {
                    uint8_t c = rotq_f32_to_fp8_e4m3(s);
                    CHECK((c & 0x7f) != 0x7f, "fp8 row with absmax %g: finite x = %g gives the NaN code 0x%02x (inv = %g)",
                          (double)a, (double)row[j], c, (double)inv);
                    v = rotq_fp8_e4m3_to_f32(c);
                    half = fmax(fabs((double)row[j]) / scale * 0x1p-4, 0x1p-10);
                } else {
                    v = k == 0 ? rotq_quant_i8(s) : rotq_quant_i4(s);
                    half = 0.5;
                }
                double err = fabs(v * scale - (double)row[j]), lim = half * scale * (1 + 1e-3);
                int flushed = scale == 0.0f && v == 0.0; /* a rule that flushes such rows to 0 is fine too */
                CHECK(isfinite(v) && (err <= lim || flushed), "%s row with absmax %g: x = %g dequantizes to %g (error %.3g > %.3g; inv = %g)",
                      names[k], (double)a, (double)row[j], v * scale, err, lim, (double)inv);
            }
        }
}

int main(void) {
    run("f16 decode, all 65536 patterns", t_f16_decode);
    run("bf16 decode, all 65536 patterns", t_bf16_decode);
    run("fp8 e4m3 decode, all 256 patterns", t_fp8_decode);
    run("f16 decode -> encode round trip", t_f16_roundtrip);
    run("bf16 decode -> encode round trip", t_bf16_roundtrip);
    run("fp8 e4m3 decode -> encode round trip", t_fp8_roundtrip);
    run("f32 -> f16 rounding (values, midpoints, neighbours, f32 walk, specials)", t_f16_encode);
    run("f32 -> bf16 rounding (values, midpoints, neighbours, f32 walk, specials)", t_bf16_encode);
    run("f32 -> fp8 e4m3 rounding (values, midpoints, neighbours, f32 walk, specials)", t_fp8_encode);
    run("named values: saturation, overflow, subnormal ties", t_fp8_named_values);
    run("int4 pack/unpack, all 256 pairs", t_int4_pack);
    run("integer quantization: NaN, Inf, clamp, ties", t_quant_int);
    run("absmax, scale, inv, static inv", t_absmax_scale);
    run("finite rows with a tiny absmax (QMAX/absmax overflows)", t_tiny_absmax);
    printf("%d passed, %d failed, 0 skipped\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
