// Quantization with a K*2^m rotation. Fused where it can be, one pass over
// memory: the fragment kernel built with its quantize epilogue
// (hadamard_factor_frag.cuh: K <= 64 at 2^8 .. 2^10 on sm_90), the warpgroup
// kernel's (hadamard_factor_wg.cuh: K >= 12 at 2^6, 2^7 on sm_90a), else the factor
// Hadamard kernel built with its own (hadamard_factor.cuh). Otherwise (f32
// input, block-diagonal K, rows longer than the kernel's shared memory) the
// Hadamard kernels write the rotated rows to a temporary fp32 buffer, then the
// plain quantize kernels read it. Two passes over memory, not one, but the same
// results as the CPU backend's within the op suite's rotation rules (both
// quantize fp32 rotated values; only the summation order differs).
// The chunking does not change the results: the rotation of every chunk picks
// its kernels as for the pool path's chunk (rotq_hadamard_chunk), and the plain
// quantize kernels are exact.
// The buffer (rows in chunks, workspace.cuh) is the caller's workspace, or
// comes from the stream-ordered pool (at most 64 MB), so the call stays
// capturable in a CUDA graph either way.
#include "hadamard_launch.cuh"
#include "quantize_launch.cuh"
#include "workspace.cuh"

rotq_status rotq_dispatch_factor_quant_es2(int L, const rotq_had_args &a, rotq_had_factor &f, const rotq_q_args &qa,
                                           cudaStream_t s, const rotq_cuda_device_info *d, bool dry);
// The fragment kernel's quantize build (quantize_rot_frag.cu): K <= 64 at
// 2^8 .. 2^10 on sm_90, ROTQ_ERR_NOT_SUPPORTED elsewhere.
rotq_status rotq_dispatch_frag_quant_es2(int L, const rotq_had_args &a, const rotq_had_factor &f,
                                         const rotq_q_args &qa, cudaStream_t s, const rotq_cuda_device_info *d,
                                         bool dry);

// The warpgroup kernel's quantize build (quantize_rot_wg.cu): K >= 12 at 2^6,
// 2^7 on sm_90a, ROTQ_ERR_NOT_SUPPORTED elsewhere.
rotq_status rotq_dispatch_wg_quant_es2(int L, const rotq_had_args &a, const rotq_had_factor &f,
                                       const rotq_q_args &qa, cudaStream_t s, const rotq_cuda_device_info *d,
                                       bool dry);

rotq_status rotq_q_launch_rot_factor(int kind, rotq_q_args qa, const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                     cudaStream_t stream, const rotq_cuda_device_info *dev, bool dry) {
    const int n = rotate->size;
    if (x->dtype == ROTQ_DTYPE_F32 || x->cols != n || n % 8 != 0 || !qa.vec_q) return ROTQ_ERR_NOT_SUPPORTED;
    rotq_had_factor f; // copied into the launch parameters
    rotq_status st = rotq_factor_init(rotate, x->dtype, &f);
    if (st != ROTQ_OK) return st;
    rotq_had_args a;
    memset(&a, 0, sizeof a);
    a.x = x->data;
    a.x_stride = x->stride;
    a.groups = x->rows;
    a.blocks_per_row = 1;
    a.n = n;
    a.in_dtype = x->dtype;
    a.out_dtype = ROTQ_DTYPE_F32; // unused: the values stay in shared memory
    a.scale = rotate->scale;
    a.signs = rotate->signs;
    a.vec_in = rotq_q_aligned(x->data, 16) && (x->stride * 2) % 16 == 0 && (n * 2) % 16 == 0;
    qa.kind = kind;
    // K <= 64 at 2^8 .. 2^10 on sm_90: the fragment kernel; K >= 12 at 2^6, 2^7
    // on sm_90a: the warpgroup kernel; else the general one.
    const rotq_status sf = rotq_dispatch_frag_quant_es2(rotate->log2_pow2, a, f, qa, stream, dev, dry);
    if (sf != ROTQ_ERR_NOT_SUPPORTED) return sf;
    const rotq_status sw = rotq_dispatch_wg_quant_es2(rotate->log2_pow2, a, f, qa, stream, dev, dry);
    if (sw != ROTQ_ERR_NOT_SUPPORTED) return sw;
    return rotq_dispatch_factor_quant_es2(rotate->log2_pow2, a, f, qa, stream, dev, dry);
}

rotq_status rotq_cuda_quantize_two_step_parts(const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                              const rotq_cuda_device_info *dev, int *parts) {
    // The rotation's output as the launch passes it: the fp32 buffer, dense rows.
    // Only its alignment matters to the dispatch (a dry run reads no data), and
    // every buffer, pooled or the caller's, starts 256-byte aligned.
    rotq_matrix b;
    b.data = (void *)(uintptr_t)ROTQ__WORKSPACE_ALIGN;
    b.dtype = ROTQ_DTYPE_F32;
    b.rows = x->rows;
    b.cols = b.stride = x->cols;
    int two_pass = 0;
    const rotq_status st = rotq_hadamard_takes_two_pass(rotate, x, &b, dev, &two_pass);
    if (st != ROTQ_OK && st != ROTQ_ERR_NOT_SUPPORTED) return st;
    *parts = two_pass ? 2 : 1; // NOT_SUPPORTED: the rotation fails before it needs a buffer
    return ROTQ_OK;
}

rotq_status rotq_cuda_quantize_two_step(const rotq_exec *exec, const rotq_quant_params *p,
                                        const rotq__hadamard_plan *rotate, const rotq_matrix *x,
                                        const rotq_matrix *q, float *scales, int32_t *row_sums,
                                        const rotq_cuda_device_info *dev) {
    cudaStream_t stream = rotq_cuda_stream(exec);
    const int64_t rows = x->rows, cols = x->cols;
    int parts = 1; // the pool path allocates its first part only (the rotation draws its own)
    rotq_status st = exec->workspace ? rotq_cuda_quantize_two_step_parts(rotate, x, dev, &parts) : ROTQ_OK;
    if (st != ROTQ_OK) return st;
    float *buf = NULL;
    int64_t chunk = 0;
    int pooled = 0;
    if ((st = rotq_ws_acquire(exec, rows, cols, parts, stream, &buf, &chunk, &pooled)) != ROTQ_OK) return st;
    // The rotation's own scratch (its two-pass buffer): the workspace's second
    // part, or the pool.
    rotq_exec rot_exec = *exec;
    rot_exec.workspace = NULL;
    rot_exec.workspace_bytes = 0;
    if (!pooled && parts == 2) {
        const size_t off = rotq_ws_round(rotq_ws_part_bytes(chunk, cols));
        rot_exec.workspace = (char *)exec->workspace + off;
        rot_exec.workspace_bytes = exec->workspace_bytes - off;
    }
    rotq_quant_params plain = *p;
    plain.rotate = NULL;
    const int xbits = x->dtype == ROTQ_DTYPE_F32 ? 32 : 16;
    const int qbits = q->dtype == ROTQ_DTYPE_I4X2 ? 4 : 8;
    const int64_t scales_per_row =
        p->kind == ROTQ_QUANT_INT4_GROUP ? cols / p->group_size : (p->kind == ROTQ_QUANT_FP8_TENSOR ? 0 : 1);
    for (int64_t r0 = 0; r0 < rows && st == ROTQ_OK; r0 += chunk) {
        const int64_t nr = rows - r0 < chunk ? rows - r0 : chunk;
        rotq_matrix xc = *x, bc, qc = *q;
        xc.data = (char *)x->data + r0 * x->stride * xbits / 8;
        xc.rows = nr;
        bc.data = buf;
        bc.dtype = ROTQ_DTYPE_F32;
        bc.rows = nr;
        bc.cols = cols;
        bc.stride = cols;
        qc.data = (char *)q->data + r0 * q->stride * qbits / 8;
        qc.rows = nr;
        st = rotq_hadamard_chunk(&rot_exec, rotate, &xc, &bc, dev, rotq_ws_pool_chunk(rows, cols));
        if (st != ROTQ_OK) break;
        st = rotq__cuda_quantize(exec, &plain, NULL, &bc, &qc, scales ? scales + r0 * scales_per_row : NULL,
                                 row_sums ? row_sums + r0 : NULL);
    }
    return rotq_ws_release(buf, pooled, stream, st);
}
