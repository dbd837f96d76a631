"""torch tensors: CPU tensors (run here when torch is installed) and CUDA tensors
(skipped without a GPU and a librotq built with the CUDA backend)."""
import math

import numpy as np
import pytest

import rotq
from rotq_refs import fwht, hadamard_ref, rel_err, sylvester

torch = pytest.importorskip("torch")

HAS_CUDA = torch.cuda.is_available() and rotq.cuda_available()
DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA device and librotq with CUDA")
FP8 = getattr(torch, "float8_e4m3fn", None)

TOL = {torch.float32: 2e-6, torch.float16: 4e-3, torch.bfloat16: 3e-2}


def _t(shape, dtype=torch.float32, device="cpu", seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float32).to(device=device, dtype=dtype)


def _np(t):
    return t.detach().float().cpu().numpy().astype(np.float64)


def _explicit(n, k=1, transpose=False, device="cpu"):
    """kron(H_K, H_{n/K}) as a float64 tensor."""
    hk = rotq.hadamard_factor_matrix(k).astype(np.float64)
    if transpose:
        hk = hk.T
    return torch.from_numpy(np.kron(hk, sylvester(n // k))).to(device)


# ---------------------------------------------------------------------------
# hadamard
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n", [8, 128, 1024, 32768])
def test_hadamard_transform_vs_matmul(device, dtype, n):
    rows = max(1, min(16, (1 << 16) // n))
    x = _t((rows, n), dtype, device)
    scale = 1.0 / math.sqrt(n)
    y = rotq.hadamard_transform(x, scale)
    assert y.shape == x.shape and y.dtype == dtype and y.device == x.device
    if n <= 4096:
        ref = (x.double() @ _explicit(n, device=device).T) * scale
        ref = ref.cpu().numpy()
    else:
        ref = fwht(_np(x)) * scale
    assert rel_err(_np(y), ref) < TOL[dtype] * (1 + math.log2(n) / 4)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("k,p", [(12, 64), (20, 8), (28, 512), (36, 4), (40, 128), (44, 2),
                                 (52, 16), (60, 4), (108, 128), (116, 2), (124, 4), (140, 128),
                                 (156, 16), (172, 64)])
@pytest.mark.parametrize("transpose", [False, True])
def test_k_factor_vs_matmul(device, k, p, transpose):
    n = k * p
    x = _t((4, n), torch.float32, device)
    y = rotq.hadamard(x, k=k, transpose=transpose)
    if n <= 4096:
        ref = (x.double() @ _explicit(n, k, transpose, device).T) / math.sqrt(n)
        ref = ref.cpu().numpy()
    else:
        hk = rotq.hadamard_factor_matrix(k)
        ref = hadamard_ref(_np(x), hk.T if transpose else hk, scale=1 / math.sqrt(n))
    assert rel_err(_np(y), ref) < 1e-5


@pytest.mark.parametrize("device", DEVICES)
def test_matches_numpy_path(device):
    for dtype, npd in ((torch.float32, np.float32), (torch.float16, np.float16)):
        x = _t((5, 28 * 64), dtype, device)
        y = rotq.hadamard_transform_k(x)
        yn = rotq.hadamard_transform_k(x.cpu().numpy())
        if device == "cpu":
            np.testing.assert_array_equal(y.numpy(), yn)
        else:
            assert rel_err(_np(y), yn.astype(np.float64)) < TOL[dtype] * 4
        assert yn.dtype == npd


@pytest.mark.parametrize("device", DEVICES)
def test_layouts_signs_blocks_out_inplace(device):
    n = 256
    base = _t((3, 5, 300), torch.float32, device)
    x = base[:, :, 10:10 + n]            # strided rows
    xs = [x, x.transpose(0, 1), base[:, ::2, :n], _t((n, 6), device=device).T]
    for v in xs:
        y = rotq.hadamard_transform(v)
        assert rel_err(_np(y), fwht(_np(v))) < 1e-5
    signs = torch.where(torch.rand(n) < 0.5, -1.0, 1.0)
    for s in (signs, signs.to(device=device, dtype=torch.int8), signs.numpy(), signs.tolist()):
        y = rotq.hadamard(x, size=64, signs=s)
        ref = hadamard_ref(_np(x), np.ones((1, 1)), size=64, scale=1 / 8, signs=signs.numpy())
        assert rel_err(_np(y), ref) < 1e-5
    out = torch.zeros(x.shape, dtype=torch.bfloat16, device=device)
    r = rotq.hadamard(x, out=out, scale=1.0)
    assert r is out
    assert rel_err(_np(out), fwht(_np(x))) < 3e-2
    xc = x.clone()
    r = rotq.hadamard(xc, inplace=True, scale=1.0)
    assert r is xc
    assert rel_err(_np(xc), fwht(_np(x))) < 1e-5
    # in place on a strided view: the rest of the buffer is untouched
    b2 = base.clone()
    rotq.hadamard(b2[:, :, 10:10 + n], inplace=True, scale=1.0)
    assert torch.equal(b2[..., :10], base[..., :10]) and torch.equal(b2[..., 266:], base[..., 266:])
    assert rel_err(_np(b2[:, :, 10:10 + n]), fwht(_np(x))) < 1e-5


def test_errors_cpu():
    x = _t((2, 12))
    with pytest.raises(rotq.RotqError) as e:
        rotq.hadamard_transform(x)
    assert e.value.name == "ROTQ_ERR_UNSUPPORTED_SIZE"
    with pytest.raises(rotq.RotqError) as e:
        rotq.hadamard(_t((2, 64)), k=13)
    assert e.value.name == "ROTQ_ERR_INVALID_FACTOR"
    with pytest.raises(rotq.RotqError) as e:
        rotq.hadamard_transform(_t((2, 64)).double())
    assert e.value.name == "ROTQ_ERR_UNSUPPORTED_DTYPE"
    with pytest.raises(rotq.RotqError) as e:
        rotq.quantize(_t((2, 64)), "int4", group_size=48)
    assert e.value.name == "ROTQ_ERR_INVALID_GROUP"


@needs_cuda
def test_cuda_tensor_errors_come_from_library():
    with pytest.raises(rotq.RotqError) as e:
        rotq.hadamard(_t((2, 64), device="cuda"), scale=float("nan"))
    assert e.value.name == "ROTQ_ERR_INVALID_SCALE"


# ---------------------------------------------------------------------------
# autograd
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
def test_autograd_hadamard_transform(device):
    n = 64
    x = _t((3, n), device=device).requires_grad_()
    g = _t((3, n), device=device, seed=1)
    y = rotq.hadamard_transform(x, 0.5)
    y.backward(g)
    ref = (g.double() @ _explicit(n, device=device)) * 0.5
    assert rel_err(_np(x.grad), ref.cpu().numpy()) < 1e-5


@pytest.mark.parametrize("device", DEVICES)
def test_autograd_general(device):
    n, size, k = 28 * 8 * 2, 28 * 8, 28
    x = _t((3, n), device=device).requires_grad_()
    g = _t((3, n), device=device, seed=1)
    signs = torch.where(torch.rand(n, generator=torch.Generator().manual_seed(2)) < 0.5, -1, 1)
    y = rotq.hadamard(x, size=size, k=k, transpose=True, signs=signs)
    y.backward(g)
    blk = _explicit(size, k, transpose=True, device=device) / math.sqrt(size)
    m = torch.block_diag(blk, blk) @ torch.diag(signs.double().to(device))  # y = x @ m.T
    ref = g.double() @ m
    assert rel_err(_np(x.grad), ref.cpu().numpy()) < 1e-5


# ---------------------------------------------------------------------------
# quantization
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kind", ["int8", "fp8", "fp8_static", "int4"])
def test_quantize_matches_numpy(device, dtype, kind):
    x = _t((4, 3, 512), dtype, device) * 3
    kw = dict(group_size=64, static_scale=0.05 if kind == "fp8_static" else None)
    q, s, r = rotq.quantize(x, kind, **kw)
    xn = x.float().cpu().numpy()  # bf16 -> f32 is exact, so the codes must agree
    qn, sn, rn = rotq.quantize(xn if dtype != torch.float16 else x.cpu().numpy(), kind, **kw)
    if kind in ("fp8", "fp8_static"):
        assert q.dtype == (FP8 or torch.uint8)
        qb = q.view(torch.uint8) if FP8 is not None else q
    else:
        assert q.dtype == (torch.int8 if kind == "int8" else torch.uint8)
        qb = q
    assert q.device == x.device
    np.testing.assert_array_equal(qb.cpu().numpy(), qn.view(qb.cpu().numpy().dtype))
    if sn is None:
        assert s is None
    else:
        np.testing.assert_array_equal(s.cpu().numpy(), sn)
    if rn is None:
        assert r is None
    else:
        np.testing.assert_array_equal(r.cpu().numpy(), rn)
    y = rotq.dequantize(q, s, kind, group_size=64,
                        static_scale=kw["static_scale"], dtype=torch.bfloat16)
    yn = rotq.dequantize(qn, sn, kind, group_size=64, static_scale=kw["static_scale"])
    assert y.dtype == torch.bfloat16 and y.shape == x.shape
    np.testing.assert_array_equal(y.float().cpu().numpy(),
                                  torch.from_numpy(yn).to(torch.bfloat16).float().numpy())


@pytest.mark.parametrize("device", DEVICES)
def test_quantize_rotate(device):
    n = 28 * 128
    x = _t((5, n), torch.bfloat16, device)
    signs = torch.where(torch.rand(n) < 0.5, -1, 1).to(torch.int8)
    q, s, r = rotq.quantize(x, "int8", rotate=dict(signs=signs))
    xr = rotq.hadamard(x.float(), signs=signs)
    q2, s2, r2 = rotq.quantize(xr, "int8")
    torch.testing.assert_close(s, s2, rtol=1e-5, atol=0)
    d = (q.int() - q2.int()).abs()
    assert d.max() <= 1 and (d == 0).float().mean() > 0.99


# ---------------------------------------------------------------------------
# custom ops, torch.compile
# ---------------------------------------------------------------------------

from rotq import torch_ops  # noqa: E402

needs_custom_op = pytest.mark.skipif(not torch_ops.HAS_CUSTOM_OP,
                                     reason="torch.library.custom_op needs torch >= 2.4")


def _opcheck():
    opcheck = getattr(torch.library, "opcheck", None)
    if opcheck is None:
        pytest.skip("torch.library.opcheck not available")
    return opcheck


@needs_custom_op
@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_hadamard(device):
    opcheck = _opcheck()
    x = _t((4, 256), device=device)
    xg = _t((4, 256), device=device).requires_grad_()
    signs = torch.ones(256, dtype=torch.int8, device=device)
    opcheck(torch.ops.rotq.hadamard_transform.default, (xg, 0.5))
    opcheck(torch.ops.rotq.hadamard.default, (xg, 128, 0, True, 0.25, signs))
    opcheck(torch.ops.rotq.hadamard.default, (x, 256, 1, False, 1.0, None))
    opcheck(torch.ops.rotq.hadamard_out.default,
            (x, torch.empty_like(x), 256, 0, False, 1.0, None))
    opcheck(torch.ops.rotq.hadamard_inplace.default, (x.clone(), 256, 0, False, 1.0, None))


@needs_custom_op
@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_quantize(device):
    opcheck = _opcheck()
    x = _t((4, 256), device=device)
    signs = torch.ones(256, dtype=torch.int8, device=device)
    for kind, gs, st in ((0, 0, 0.0), (1, 0, 0.0), (2, 0, 0.1), (3, 64, 0.0)):
        opcheck(torch.ops.rotq.quantize.default, (x, kind, gs, st, False, 0, 0, False, 1.0, None))
        opcheck(torch.ops.rotq.quantize.default,
                (x, kind, gs, st, True, 256, 0, False, 0.0625, signs))
    q, s, _ = torch.ops.rotq.quantize(x, 3, 64, 0.0, False, 0, 0, False, 1.0, None)
    opcheck(torch.ops.rotq.dequantize.default, (q, s, 3, 64, 0.0, torch.float16))


@needs_custom_op
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_torch_compile_fullgraph_hadamard(device, backend):
    """The acceptance case: a compiled function calling rotq.hadamard_transform."""
    torch._dynamo.reset()
    n = 1024

    def f(x, w):
        h = rotq.hadamard_transform(x * 2.0, scale=1.0 / math.sqrt(n))
        h = rotq.hadamard(h, size=256, signs=w) + 1.0
        return rotq.hadamard_transform_k(h.to(torch.bfloat16)[:, :28 * 32], transpose=True)

    x = _t((8, n), device=device)
    w = torch.where(torch.rand(n) < 0.5, -1, 1).to(device=device, dtype=torch.int8)
    cf = torch.compile(f, fullgraph=True, backend=backend)
    y = cf(x, w)
    y0 = f(x, w)
    assert y.dtype == torch.bfloat16
    torch.testing.assert_close(y, y0)
    ref = (x.double() * 2) @ _explicit(n, device=device).T / math.sqrt(n)
    hk = _explicit(256, device=device) / 16
    ref = (ref * w.double()).reshape(8, 4, 256) @ hk.T
    ref = ref.reshape(8, n) + 1.0
    ref = ref.to(torch.bfloat16).double()[:, :28 * 32] @ _explicit(28 * 32, 28, True, device).T
    ref = ref / math.sqrt(28 * 32)
    # The format's bound, element-wise: the bf16 output rounds each value to
    # within 2^-9 of itself (the DC term, ~30 against an rms of ~1.7, alone can
    # round by 0.04 rms), doubled for the bf16 intermediate h, plus a norm-wise
    # term for the accumulated rounding of that intermediate.
    yv, rv = _np(y).astype(np.float64), ref.cpu().numpy()
    rms = float(np.sqrt(np.mean(rv ** 2)))
    assert np.all(np.abs(yv - rv) <= 2.0 ** -8 * np.abs(rv) + 2e-2 * rms)


@needs_custom_op
@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_factor_order(device):
    """A factor picked by a non-QuaRot order is a trace-time constant."""
    torch._dynamo.reset()

    def f(x):
        y = rotq.hadamard_transform_k(x, order="spinquant", scale=1.0)
        q, s, _ = rotq.quantize(x, "fp8", rotate=dict(order="spinquant"))
        return y, rotq.dequantize(q, s, "fp8")

    x = _t((3, 176), device=device)
    y, d = torch.compile(f, fullgraph=True, backend="aot_eager")(x)
    y0, d0 = f(x)
    torch.testing.assert_close(y, y0)
    torch.testing.assert_close(d, d0)
    assert d.dtype == torch.float32
    hk = rotq.hadamard_factor_matrix(44)
    assert rel_err(_np(y), hadamard_ref(_np(x), hk)) < 1e-5


@needs_custom_op
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_torch_compile_fullgraph_quantize(device, backend):
    torch._dynamo.reset()
    n = 1024

    def f(x, w):
        q, s, r = rotq.quantize(x + 1.0, "int8", rotate=dict(size=256, signs=w))
        return rotq.dequantize(q, s, "int8"), r

    x = _t((8, n), device=device)
    w = torch.where(torch.rand(n) < 0.5, -1, 1).to(device=device, dtype=torch.int8)
    cf = torch.compile(f, fullgraph=True, backend=backend)
    y, r = cf(x, w)
    y0, r0 = f(x, w)
    torch.testing.assert_close(y, y0)
    assert torch.equal(r, r0)


@needs_custom_op
def test_torch_compile_backward():
    torch._dynamo.reset()

    def f(x):
        return (rotq.hadamard_transform(x, 0.125) ** 2).sum()

    x = _t((4, 64)).requires_grad_()
    cf = torch.compile(f, fullgraph=True, backend="aot_eager")
    cf(x).backward()
    g1 = x.grad.clone()
    x.grad = None
    f(x).backward()
    torch.testing.assert_close(g1, x.grad)


# ---------------------------------------------------------------------------
# CUDA only: streams, CUDA graphs, compile with reduce-overhead
# ---------------------------------------------------------------------------

def _on_side_stream(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        out = fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    return out


@needs_cuda
def test_cuda_non_default_stream_hadamard():
    x = _t((64, 4096), torch.float16, "cuda")
    ref = rotq.hadamard_transform(x, 1 / 64)
    y = _on_side_stream(lambda: rotq.hadamard_transform(x, 1 / 64))
    assert torch.equal(y, ref)
    xi = x.clone()
    _on_side_stream(lambda: rotq.hadamard(xi, inplace=True, scale=1 / 64))
    assert torch.equal(xi, ref)


@needs_cuda
def test_cuda_non_default_stream_quantize():
    x = _t((64, 4096), torch.float16, "cuda")
    q, sc, _ = _on_side_stream(lambda: rotq.quantize(x, "fp8", rotate=True))
    q2, sc2, _ = rotq.quantize(x, "fp8", rotate=True)
    assert torch.equal(sc, sc2) and torch.equal(q.view(torch.uint8), q2.view(torch.uint8))


def _graph_roundtrip(step, shape, dtype):
    static_x = _t(shape, dtype, "cuda")
    _on_side_stream(lambda: [step(static_x) for _ in range(2)])  # warm up
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step(static_x)
    x2 = _t(shape, dtype, "cuda", seed=5)
    static_x.copy_(x2)
    g.replay()
    torch.cuda.synchronize()
    ref = step(x2)
    outs = out if isinstance(out, tuple) else (out,)
    refs = ref if isinstance(ref, tuple) else (ref,)
    for a, b in zip(outs, refs):
        assert torch.equal(a, b)


@needs_cuda
def test_cuda_graph_capture_hadamard():
    signs = torch.where(torch.rand(2048, device="cuda") < 0.5, -1, 1).to(torch.int8)
    _graph_roundtrip(lambda x: rotq.hadamard_transform_k(
        rotq.hadamard(x, signs=signs)[:, :28 * 64]), (32, 2048), torch.bfloat16)


@needs_cuda
def test_cuda_graph_capture_quantize():
    signs = torch.where(torch.rand(2048, device="cuda") < 0.5, -1, 1).to(torch.int8)
    _graph_roundtrip(lambda x: rotq.quantize(x, "int8", rotate=dict(signs=signs)),
                     (32, 2048), torch.bfloat16)


@needs_cuda
def test_cuda_compile_reduce_overhead():
    torch._dynamo.reset()

    def f(x):
        return rotq.hadamard_transform(x, 1.0 / 32) * 3

    x = _t((16, 1024), torch.float16, "cuda")
    cf = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    for _ in range(3):
        y = cf(x)
    torch.testing.assert_close(y, f(x))


@needs_cuda
@pytest.mark.parametrize("kind", ["int8", "fp8", "fp8_static", "int4"])
def test_cuda_quant_equals_cpu(kind):
    x = _t((64, 4096), torch.bfloat16, "cuda") * 5
    kw = dict(group_size=128, static_scale=0.02 if kind == "fp8_static" else None)
    a = rotq.quantize(x, kind, **kw)
    b = rotq.quantize(x.cpu(), kind, **kw)
    for u, v in zip(a, b):
        if u is None:
            assert v is None
            continue
        if FP8 is not None and u.dtype == FP8:
            u, v = u.view(torch.uint8), v.view(torch.uint8)
        assert torch.equal(u.cpu(), v)
