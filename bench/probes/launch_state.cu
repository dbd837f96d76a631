/*
 * Probe (not part of the library): what a short launch pays beyond its kernel,
 * timed as the bench times its decode rows (5 warm-up launches, then 50 of:
 * memset of 2x L2, event, launch, event; median).
 *
 * 1. Instruction fetch. The L2 flush (a memset) leaves the SMs' instruction
 *    caches alone. Each row of the first table is timed three ways:
 *      flush   the bench's loop
 *      evict   the same with an evictor launched after the memset and before
 *              the first event: 256 KB of straight-line code run by two blocks
 *              on every SM, so no SM keeps the timed kernel's code
 *      warm    no flush, no evictor
 *    `code N` is one warp running N FFMAs of straight-line code (N * 16 bytes
 *    of SASS); the rotq rows are decode rows through the library (f16 in).
 *    The line before the status: the SMs that the 50 launches of `code 1024`
 *    ran on. (The evictor's grid is two blocks per SM; the block scheduler
 *    decides where they run.)
 * 2. Kernel parameter size. Each "loops" line is one row timed in 12 loops one
 *    after another (each a median of 50): `params B` is a one-block copy-like
 *    kernel (8 KB in, 4 KB out) with B bytes of parameters, `busy B` a launch
 *    of four 256-thread blocks an SM (about 14 us) with B bytes, then rotq
 *    rows at decode and 2^20 sizes. Then every repetition of two loops of the
 *    528-byte kernel, in order.
 *
 * Build (from the repository root, after a build in $B):
 *   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -Iinclude -o launch_state bench/probes/launch_state.cu \
 *        -L$B -lrotq -Xlinker -rpath=$B
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_timing.h"
#include "rotq.h"

template <int ID, int N>
__global__ void code_kernel(float *out, unsigned *smid_out, int slot) {
    float a0 = (float)threadIdx.x, a1 = a0 + 1.0f, a2 = a0 + 2.0f, a3 = a0 + 3.0f;
    float a4 = a0 + 4.0f, a5 = a0 + 5.0f, a6 = a0 + 6.0f, a7 = a0 + 7.0f;
    const float b = 1.0f + 1e-7f * (float)(ID + 1), c = 1e-9f;
#pragma unroll
    for (int i = 0; i < N / 8; i++) {
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a0) : "f"(b), "f"(c));
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a1) : "f"(b), "f"(c));
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a2) : "f"(b), "f"(c));
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a3) : "f"(b), "f"(c));
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a4) : "f"(b), "f"(c));
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a5) : "f"(b), "f"(c));
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a6) : "f"(b), "f"(c));
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a7) : "f"(b), "f"(c));
    }
    if (threadIdx.x == 0 && smid_out) {
        unsigned id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        smid_out[slot & 63] = id;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

__global__ void empty_kernel(void) {}

// The decode quantize kernel's traffic at n = 4096 x 1 without its work: 256
// threads load 32 bytes each, store 16, thread 0 a scale; thread 0 records its SM.
__global__ void mimic_kernel(const uint4 *x, uint4 *q, float *scale, unsigned *smid_out, int slot) {
    const unsigned t = threadIdx.x;
    uint4 a = x[2 * t], b = x[2 * t + 1];
    q[t] = make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
    if (t == 0) {
        scale[0] = (float)a.x;
        unsigned id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        smid_out[slot & 63] = id;
    }
}

// The mimic kernel's loads and code stores with 528 bytes of parameters: its
// output pointer at byte 8 (beside the input pointer) or at byte 512 (ptxas reads
// both at the start).
typedef struct pblob {
    const uint4 *x;
    uint4 *q_near;
    uint32_t pad[124];
    uint4 *q_far;
    uint64_t pad2;
} pblob;
template <bool FAR>
__global__ void param_kernel(pblob p) {
    const unsigned t = threadIdx.x;
    uint4 a = p.x[2 * t], b = p.x[2 * t + 1];
    uint4 *q = FAR ? p.q_far : p.q_near;
    q[t] = make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

// The mimic kernel's traffic with B bytes of parameters, the first and last
// words read (the output pointer, and a word added to the codes).
template <int B>
struct sized {
    const uint4 *x;
    uint4 *q;
    uint32_t w[(B - 16) / 4];
};
template <int B>
__global__ void sized_kernel(sized<B> p) {
    const unsigned t = threadIdx.x;
    uint4 a = p.x[2 * t], b = p.x[2 * t + 1];
    const uint32_t k = p.w[(B - 16) / 4 - 1];
    p.q[t] = make_uint4(a.x ^ b.x ^ k, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

// A launch of about 14 us on every SM (four blocks of 256 threads an SM, 2000
// dependent FMAs a thread) with B bytes of parameters.
template <int B>
struct wide {
    float *out;
    uint32_t w[(B - 8) / 4];
};
template <int B>
__global__ void busy_kernel(wide<B> p) {
    float a = (float)threadIdx.x + p.w[(B - 8) / 4 - 1];
#pragma unroll 16
    for (int i = 0; i < 2000; i++) a = fmaf(a, 1.0000001f, 1e-9f);
    p.out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

typedef struct ctx {
    float *out;
    unsigned *smid;
    int slot;
    int sms;
    void *x, *q;
    float *scales;
    cudaStream_t s;
    rotq_exec exec;
} ctx;

typedef void (*launch_fn)(ctx *);

static void l_empty(ctx *c) { empty_kernel<<<1, 32, 0, c->s>>>(); }
static void l_code64(ctx *c) { code_kernel<1, 64><<<1, 32, 0, c->s>>>(c->out, c->smid, c->slot); }
static void l_code256(ctx *c) { code_kernel<2, 256><<<1, 32, 0, c->s>>>(c->out, c->smid, c->slot); }
static void l_code1024(ctx *c) { code_kernel<3, 1024><<<1, 32, 0, c->s>>>(c->out, c->smid, c->slot); }
static void l_code4096(ctx *c) { code_kernel<4, 4096><<<1, 32, 0, c->s>>>(c->out, c->smid, c->slot); }
static void l_mimic(ctx *c) {
    mimic_kernel<<<1, 256, 0, c->s>>>((const uint4 *)c->x, (uint4 *)c->q, c->scales, c->smid, c->slot);
}
static void l_param(ctx *c, bool far) {
    pblob p;
    memset(&p, 0, sizeof p);
    p.x = (const uint4 *)c->x;
    p.q_near = p.q_far = (uint4 *)c->q;
    if (far) param_kernel<true><<<1, 256, 0, c->s>>>(p);
    else param_kernel<false><<<1, 256, 0, c->s>>>(p);
}
static void l_param_near(ctx *c) { l_param(c, false); }
static void l_param_far(ctx *c) { l_param(c, true); }
template <int B>
static void l_sized(ctx *c) {
    sized<B> p;
    memset(&p, 0, sizeof p);
    p.x = (const uint4 *)c->x;
    p.q = (uint4 *)c->q;
    sized_kernel<B><<<1, 256, 0, c->s>>>(p);
}
template <int B>
static void l_busy(ctx *c) {
    wide<B> p;
    memset(&p, 0, sizeof p);
    p.out = c->out;
    busy_kernel<B><<<4 * c->sms, 256, 0, c->s>>>(p);
}
static void l_evict(ctx *c) { code_kernel<5, 16384><<<2 * c->sms, 32, 0, c->s>>>(c->out, NULL, 0); }

static void rotq_q(ctx *c, int32_t n, int64_t rows, rotq_quant_kind kind, int32_t group) {
    rotq_hadamard_params rp = rotq_hadamard_params_default(n);
    rotq_quant_params qp;
    memset(&qp, 0, sizeof qp);
    qp.kind = kind;
    qp.group_size = group;
    qp.rotate = &rp;
    rotq_matrix x = {c->x, ROTQ_DTYPE_F16, rows, n, n};
    rotq_matrix q = {c->q, kind == ROTQ_QUANT_INT8_ROW ? ROTQ_DTYPE_I8
                           : kind == ROTQ_QUANT_INT4_GROUP ? ROTQ_DTYPE_I4X2
                                                           : ROTQ_DTYPE_FP8_E4M3,
                     rows, n, n};
    rotq_status st = rotq_quantize(&c->exec, &qp, &x, &q, c->scales, NULL);
    if (st != ROTQ_OK) fprintf(stderr, "rotq_quantize: %s\n", rotq_status_string(st)), exit(1);
}
static void rotq_h(ctx *c, int32_t n, int64_t rows) {
    rotq_hadamard_params p = rotq_hadamard_params_default(n);
    rotq_matrix x = {c->x, ROTQ_DTYPE_F16, rows, n, n}, y = {c->q, ROTQ_DTYPE_F16, rows, n, n};
    rotq_status st = rotq_hadamard(&c->exec, &p, &x, &y);
    if (st != ROTQ_OK) fprintf(stderr, "rotq_hadamard: %s\n", rotq_status_string(st)), exit(1);
}
static void l_h128(ctx *c) { rotq_h(c, 128, 32); }
static void l_h4096(ctx *c) { rotq_h(c, 4096, 1); }
static void l_h1024_mid(ctx *c) { rotq_h(c, 1024, 1024); }
static void l_h12k_mid(ctx *c) { rotq_h(c, 12288, 85); }
static void l_q4096_mid(ctx *c) { rotq_q(c, 4096, 256, ROTQ_QUANT_INT8_ROW, 0); }
static void l_q128(ctx *c) { rotq_q(c, 128, 32, ROTQ_QUANT_INT8_ROW, 0); }
static void l_q4096(ctx *c) { rotq_q(c, 4096, 1, ROTQ_QUANT_INT8_ROW, 0); }
static void l_q4096x16(ctx *c) { rotq_q(c, 4096, 16, ROTQ_QUANT_INT8_ROW, 0); }
static void l_q4096i4(ctx *c) { rotq_q(c, 4096, 1, ROTQ_QUANT_INT4_GROUP, 128); }

enum { FLUSH, EVICT, WARM };

// One row in one mode, as probe_time_us_before's context: the launch records
// its SM (where it does) in slot rep; EVICT runs the evictor before the first event.
typedef struct row_run {
    launch_fn f;
    ctx *c;
    int mode;
} row_run;
static void run_row(cudaStream_t s, const void *p) {
    (void)s;
    const row_run *r = (const row_run *)p;
    r->f(r->c);
}
static void before_row(cudaStream_t s, const void *p, int rep) {
    (void)s;
    const row_run *r = (const row_run *)p;
    r->c->slot = rep;
    if (r->mode == EVICT) l_evict(r->c);
}
static float time_us(launch_fn f, ctx *c, int mode, void *flush, size_t flush_bytes) {
    const row_run r = {f, c, mode};
    const float us = probe_time_us_before(run_row, &r, flush, mode == WARM ? 0 : flush_bytes, c->s, before_row);
    const cudaError_t e = cudaGetLastError(); // a launch that failed would otherwise time as if it ran
    if (e != cudaSuccess) fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(e)), exit(1);
    return us;
}

int main(void) {
    cudaDeviceProp dp;
    cudaGetDeviceProperties(&dp, 0);
    size_t flush_bytes;
    void *flush = probe_flush_alloc(&dp, &flush_bytes);
    ctx c;
    memset(&c, 0, sizeof c);
    c.sms = dp.multiProcessorCount;
    cudaMalloc((void **)&c.out, 1 << 20);
    cudaMalloc((void **)&c.smid, 64 * sizeof(unsigned));
    cudaMalloc(&c.x, 4 << 20);
    cudaMalloc(&c.q, 4 << 20);
    cudaMalloc((void **)&c.scales, 1 << 16);
    cudaMemset(c.x, 0x31, 4 << 20); // f16 0x3131: finite values
    cudaStreamCreate(&c.s);
    c.exec = (rotq_exec){ROTQ_BACKEND_CUDA, 0, (struct CUstream_st *)c.s, NULL, 0};
    printf("device: %s, %d SMs\n", dp.name, c.sms);

    const struct {
        const char *name;
        launch_fn f;
    } rows[] = {{"empty", l_empty},
                {"code 64", l_code64},
                {"code 256", l_code256},
                {"code 1024", l_code1024},
                {"code 4096", l_code4096},
                {"rotq hadamard 128 x 32", l_h128},
                {"rotq hadamard 4096 x 1", l_h4096},
                {"rotq int8 128 x 32", l_q128},
                {"rotq int8 4096 x 1", l_q4096},
                {"rotq int8 4096 x 16", l_q4096x16},
                {"rotq int4 4096 x 1", l_q4096i4}};
    const int nrows = (int)(sizeof rows / sizeof rows[0]);
    printf("%-24s %8s %8s %8s   (us, median of 50; two passes)\n", "row", "flush", "evict", "warm");
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nrows; i++) {
            float a = time_us(rows[i].f, &c, FLUSH, flush, flush_bytes);
            float b = time_us(rows[i].f, &c, EVICT, flush, flush_bytes);
            float w = time_us(rows[i].f, &c, WARM, flush, flush_bytes);
            printf("%-24s %8.2f %8.2f %8.2f\n", rows[i].name, a, b, w);
        }

    // Loops of the flush mode, one after another: the spread between loops, and
    // for the mimic kernel the SM its 26th timed launch of each loop ran on.
    const struct {
        const char *name;
        launch_fn f;
        int records;
    } loops[] = {{"mimic", l_mimic, 1}, {"param near", l_param_near, 0}, {"param far", l_param_far, 0},
                 {"params 32 B", l_sized<32>, 0}, {"params 64 B", l_sized<64>, 0}, {"params 96 B", l_sized<96>, 0},
                 {"params 128 B", l_sized<128>, 0}, {"params 160 B", l_sized<160>, 0},
                 {"params 192 B", l_sized<192>, 0}, {"params 224 B", l_sized<224>, 0},
                 {"params 256 B", l_sized<256>, 0}, {"params 288 B", l_sized<288>, 0},
                 {"params 320 B", l_sized<320>, 0}, {"params 384 B", l_sized<384>, 0},
                 {"params 512 B", l_sized<512>, 0}, {"params 1024 B", l_sized<1024>, 0},
                 {"busy 32 B", l_busy<32>, 0}, {"busy 368 B", l_busy<368>, 0}, {"busy 1024 B", l_busy<1024>, 0},
                 {"busy 4720 B", l_busy<4720>, 0}, {"rotq hadamard 1024 x 1024", l_h1024_mid, 0},
                 {"rotq hadamard 12288 x 85", l_h12k_mid, 0}, {"rotq int8 4096 x 256", l_q4096_mid, 0},
                 {"rotq int8 4096 x 1", l_q4096, 0}, {"rotq int4 4096 x 1", l_q4096i4, 0},
                 {"rotq int8 4096 x 16", l_q4096x16, 0},
                 {"rotq int8 128 x 32", l_q128, 0}, {"rotq hadamard 4096 x 1", l_h4096, 0}};
    for (int i = 0; i < (int)(sizeof loops / sizeof loops[0]); i++) {
        printf("%-24s", loops[i].name);
        for (int k = 0; k < 12; k++) {
            float t = time_us(loops[i].f, &c, FLUSH, flush, flush_bytes);
            unsigned sm0 = 0;
            if (loops[i].records) cudaMemcpy(&sm0, c.smid + 25, sizeof sm0, cudaMemcpyDeviceToHost);
            if (loops[i].records) printf(" %.2f@%u", t, sm0);
            else printf(" %.2f", t);
        }
        printf("\n");
    }

    // Each repetition of two loops of the 528-byte kernel, in order: within a
    // loop or between loops?
    for (int k = 0; k < 2; k++) {
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        for (int w = 0; w < 5; w++) l_param_near(&c);
        printf("param near, loop %d, each of 24 reps:", k);
        for (int r = 0; r < 24; r++) {
            float t;
            cudaMemsetAsync(flush, r, flush_bytes, c.s);
            cudaEventRecord(e0, c.s);
            l_param_near(&c);
            cudaEventRecord(e1, c.s);
            cudaEventSynchronize(e1);
            cudaEventElapsedTime(&t, e0, e1);
            printf(" %.2f", t * 1000.0f);
        }
        printf("\n");
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }

    // Where the 50 timed launches of `code 1024` ran, in the bench's loop.
    unsigned sm[64];
    time_us(l_code1024, &c, FLUSH, flush, flush_bytes);
    cudaMemcpy(sm, c.smid, sizeof sm, cudaMemcpyDeviceToHost);
    int distinct = 0;
    for (int i = 0; i < 50; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= sm[j] == sm[i];
        distinct += !seen;
    }
    printf("code 1024 in the flush loop: %d distinct SMs over 50 launches; first 12:", distinct);
    for (int i = 0; i < 12; i++) printf(" %u", sm[i]);
    printf("\n");
    cudaError_t e = cudaDeviceSynchronize();
    printf("status: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
