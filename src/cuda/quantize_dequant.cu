// Dequantize: y = value(q) * scale in fp32, rounded to y's dtype. Elementwise;
// a thread handles chunks of 8 elements of a row (8-byte / 4-byte int4 code
// loads and 16-byte stores when aligned), grid-stride over all chunks.
#include <string.h>

#include "quantize_launch.cuh"

typedef struct rotq_dq_args {
    const uint8_t *q;
    int64_t q_stride; // bytes between rows of q
    const float *scales;
    float static_scale; // FP8_TENSOR
    void *y;
    int64_t y_stride; // elements
    int32_t out_dtype;
    int64_t rows, cols, cpr, total; // cpr: chunks per row; total = rows * cpr
    int32_t group_shift;            // INT4_GROUP
    int64_t groups_per_row;
    int32_t vec_q, vec_y;
} rotq_dq_args;

// Row and chunk of flat chunk index g (32-bit division when the count allows).
__device__ __forceinline__ void rotq_dq_split(const rotq_dq_args &a, int64_t g, int64_t *row, int64_t *c) {
    if (a.total <= 0xffffffffll) {
        const uint32_t r = (uint32_t)g / (uint32_t)a.cpr;
        *row = r;
        *c = (int64_t)((uint32_t)g - r * (uint32_t)a.cpr);
    } else {
        *row = g / a.cpr;
        *c = g - *row * a.cpr;
    }
}

template <int KIND, int OES>
__global__ void __launch_bounds__(256) rotq_dq_kernel(rotq_dq_args a) {
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < a.total; g += step) {
        int64_t row, c;
        rotq_dq_split(a, g, &row, &c);
        const int64_t j = c * 8;
        const bool full = j + 8 <= a.cols;
        const uint8_t *qrow = a.q + row * a.q_stride;
        float v[8];
        if (KIND == ROTQ_QUANT_INT4_GROUP) {
            // cols is a multiple of the group: chunks are whole.
            uint32_t w;
            if (a.vec_q) {
                w = __ldg((const unsigned int *)(qrow + (j >> 1)));
            } else {
                w = 0;
#pragma unroll
                for (int k = 0; k < 4; k++) w |= (uint32_t)__ldg(qrow + (j >> 1) + k) << (8 * k);
            }
            const float sc = __ldg(a.scales + row * a.groups_per_row + (j >> a.group_shift));
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const uint8_t b = (uint8_t)(w >> (8 * k));
                v[2 * k] = (float)rotq_i4_lo(b) * sc;
                v[2 * k + 1] = (float)rotq_i4_hi(b) * sc;
            }
        } else {
            uint32_t lo = 0, hi = 0;
            if (a.vec_q && full) {
                const uint2 u = __ldg((const uint2 *)(qrow + j));
                lo = u.x, hi = u.y;
            } else {
#pragma unroll
                for (int k = 0; k < 8; k++)
                    if (j + k < a.cols) (k < 4 ? lo : hi) |= (uint32_t)__ldg(qrow + j + k) << (8 * (k & 3));
            }
            const float sc = KIND == ROTQ_QUANT_FP8_TENSOR ? a.static_scale : __ldg(a.scales + row);
#pragma unroll
            for (int k = 0; k < 8; k++) {
                const uint8_t b = (uint8_t)((k < 4 ? lo : hi) >> (8 * (k & 3)));
                const float x = KIND == ROTQ_QUANT_INT8_ROW ? (float)(int8_t)b : rotq_fp8_e4m3_to_f32(b);
                v[k] = x * sc;
            }
        }
        if (OES == 4) {
            float *y = (float *)a.y + row * a.y_stride + j;
            if (a.vec_y && full) {
                ((float4 *)y)[0] = make_float4(v[0], v[1], v[2], v[3]);
                ((float4 *)y)[1] = make_float4(v[4], v[5], v[6], v[7]);
            } else {
#pragma unroll
                for (int k = 0; k < 8; k++)
                    if (j + k < a.cols) y[k] = v[k];
            }
        } else {
            uint16_t *y = (uint16_t *)a.y + row * a.y_stride + j;
            if (a.vec_y && full) {
                uint32_t w[4];
#pragma unroll
                for (int k = 0; k < 4; k++) w[k] = rotq_pack_16x2(v[2 * k], v[2 * k + 1], a.out_dtype);
                *(uint4 *)y = make_uint4(w[0], w[1], w[2], w[3]);
            } else {
#pragma unroll
                for (int k = 0; k < 8; k++)
                    if (j + k < a.cols) y[k] = rotq_to_16(v[k], a.out_dtype);
            }
        }
    }
}

template <int KIND>
static void rotq_dq_launch_kind(const rotq_dq_args &a, unsigned grid, cudaStream_t stream) {
    if (a.out_dtype == ROTQ_DTYPE_F32)
        rotq_dq_kernel<KIND, 4><<<grid, 256, 0, stream>>>(a);
    else
        rotq_dq_kernel<KIND, 2><<<grid, 256, 0, stream>>>(a);
}

rotq_status rotq_q_launch_dequant(const rotq_quant_params *p, const rotq_matrix *q, const float *scales,
                                  const rotq_matrix *y, cudaStream_t stream, const rotq_cuda_device_info *dev) {
    rotq_dq_args a;
    memset(&a, 0, sizeof a);
    const int int4 = p->kind == ROTQ_QUANT_INT4_GROUP;
    const int os = y->dtype == ROTQ_DTYPE_F32 ? 4 : 2;
    a.q = (const uint8_t *)q->data;
    a.q_stride = int4 ? q->stride / 2 : q->stride;
    a.scales = scales;
    a.static_scale = p->static_scale;
    a.y = y->data;
    a.y_stride = y->stride;
    a.out_dtype = y->dtype;
    a.rows = y->rows;
    a.cols = y->cols;
    a.cpr = (y->cols + 7) / 8;
    a.total = a.rows * a.cpr;
    if (int4) {
        int sh = 0;
        while ((1 << sh) < p->group_size) sh++;
        a.group_shift = sh;
        a.groups_per_row = y->cols / p->group_size;
    }
    const uintptr_t qa = int4 ? 4 : 8;
    a.vec_q = rotq_q_aligned(q->data, qa) && (y->rows == 1 || a.q_stride % (int64_t)qa == 0);
    a.vec_y = rotq_q_aligned(y->data, 16) && (y->rows == 1 || (y->stride * os) % 16 == 0);
    int64_t grid = (a.total + 255) / 256;
    const int64_t cap = (int64_t)dev->sm_count * 64;
    if (grid > cap) grid = cap;
    switch (p->kind) {
    case ROTQ_QUANT_INT8_ROW: rotq_dq_launch_kind<ROTQ_QUANT_INT8_ROW>(a, (unsigned)grid, stream); break;
    case ROTQ_QUANT_FP8_ROW: rotq_dq_launch_kind<ROTQ_QUANT_FP8_ROW>(a, (unsigned)grid, stream); break;
    case ROTQ_QUANT_FP8_TENSOR: rotq_dq_launch_kind<ROTQ_QUANT_FP8_TENSOR>(a, (unsigned)grid, stream); break;
    case ROTQ_QUANT_INT4_GROUP: rotq_dq_launch_kind<ROTQ_QUANT_INT4_GROUP>(a, (unsigned)grid, stream); break;
    default: return ROTQ_ERR_NOT_SUPPORTED;
    }
    return rotq_cuda_check_launch();
}
