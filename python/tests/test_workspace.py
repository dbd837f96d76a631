"""The caller-owned workspace (rotq_exec.workspace) and its queries.

On the CPU (CI): the ctypes layout of rotq_exec against the library, the new
status, the queries' validation (the ops' own) and their 0 bytes. With torch and
a CUDA device: the sizes that take a fallback path report a workspace, the torch
ops pass one from torch's allocator, and the results are bit-identical to the
pooled path (and under CUDA-graph capture)."""
import ctypes

import numpy as np
import pytest

import rotq
from rotq import _ffi

RNG = np.random.default_rng(20261122)


def _x(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------
# CPU: layout, status, queries
# ---------------------------------------------------------------------------

def test_exec_layout_matches_header():
    # {int backend; int threads; void *stream; void *workspace; size_t workspace_bytes}
    p = ctypes.sizeof(ctypes.c_void_p)
    assert _ffi.RotqExec.stream.offset == 8
    assert _ffi.RotqExec.workspace.offset == 8 + p
    assert _ffi.RotqExec.workspace_bytes.offset == 8 + 2 * p
    assert ctypes.sizeof(_ffi.RotqExec) == 8 + 2 * p + ctypes.sizeof(ctypes.c_size_t)


def test_exec_workspace_fields_reach_the_library():
    # A CUDA exec with a workspace size but no pointer is rejected before anything
    # else of the backend (and before the device check): the library read the
    # fields where the ctypes struct put them. Host arrays: nothing is touched.
    x = np.zeros((2, 64), np.float32)
    y = np.zeros_like(x)
    p = rotq._ffi.lib.rotq_hadamard_params_default(64)
    mx = _ffi.RotqMatrix(x.ctypes.data, _ffi.ROTQ_DTYPE_F32, 2, 64, 64)
    my = _ffi.RotqMatrix(y.ctypes.data, _ffi.ROTQ_DTYPE_F32, 2, 64, 64)
    ex = _ffi.RotqExec(_ffi.ROTQ_BACKEND_CUDA, 0, None, None, 256)
    st = _ffi.lib.rotq_hadamard(ctypes.byref(ex), ctypes.byref(p), ctypes.byref(mx), ctypes.byref(my))
    assert st == _ffi.ROTQ_ERR_INVALID_ARGUMENT
    n = ctypes.c_size_t(7)
    st = _ffi.lib.rotq_hadamard_workspace_size(ctypes.byref(ex), ctypes.byref(p), ctypes.byref(mx),
                                               ctypes.byref(my), ctypes.byref(n))
    assert st == _ffi.ROTQ_ERR_INVALID_ARGUMENT and n.value == 7
    # The CPU backend ignores the fields.
    ex = _ffi.RotqExec(_ffi.ROTQ_BACKEND_CPU, 1, None, None, 256)
    st = _ffi.lib.rotq_hadamard(ctypes.byref(ex), ctypes.byref(p), ctypes.byref(mx), ctypes.byref(my))
    assert st == _ffi.ROTQ_OK
    np.testing.assert_allclose(y, 0.0)


def test_workspace_status():
    assert _ffi.ROTQ_ERR_WORKSPACE == -18
    assert _ffi.status_name(-18) == "ROTQ_ERR_WORKSPACE"
    assert "workspace" in _ffi.status_string(-18)


@pytest.mark.parametrize("n,k", [(4096, None), (14336, None), (12 * 4096, 12), (52 * 1024, 52)])
def test_hadamard_query_cpu_is_zero(n, k):
    x = _x((3, n))
    assert rotq.hadamard_workspace_size(x, k=k) == 0
    assert rotq.hadamard_workspace_size(x, k=k, inplace=True) == 0
    assert rotq.hadamard_workspace_size(x, k=k, out=np.empty(x.shape, np.float16)) == 0


@pytest.mark.parametrize("kind,rotate", [
    ("int8", None), ("int8", True), ("fp8", dict(size=14336, k=28)), ("int4", dict(size=14336)),
    ("int8", dict(size=4096, k=1)),
])
def test_quantize_query_cpu_is_zero(kind, rotate):
    cols = 65536 if rotate and rotate is not True and rotate.get("size") == 4096 else 2 * 14336
    x = _x((2, cols))
    assert rotq.quantize_workspace_size(x, kind, rotate=rotate) == 0


def test_queries_validate_as_the_ops():
    x = _x((2, 704))
    for call in (rotq.hadamard, rotq.hadamard_workspace_size):
        with pytest.raises(rotq.RotqError) as e:
            call(x)  # 704 = 11 * 64: no construction
        assert e.value.name == "ROTQ_ERR_UNSUPPORTED_SIZE"
        with pytest.raises(rotq.RotqError) as e:
            call(_x((2, 64)), scale=float("nan"))
        assert e.value.name == "ROTQ_ERR_INVALID_SCALE"
        with pytest.raises(rotq.RotqError) as e:
            call(_x((2, 64)), size=48, k=13)
        assert e.value.name == "ROTQ_ERR_INVALID_FACTOR"
    for call in (rotq.quantize, rotq.quantize_workspace_size):
        with pytest.raises(rotq.RotqError) as e:
            call(_x((2, 96)), "int4", group_size=64)
        assert e.value.name == "ROTQ_ERR_INVALID_GROUP"
        with pytest.raises(rotq.RotqError) as e:
            call(_x((2, 128)), "int8", rotate=dict(size=256))
        assert e.value.name == "ROTQ_ERR_INVALID_SHAPE"
        with pytest.raises(rotq.RotqError) as e:
            call(_x((2, 128)).astype(np.int32), "int8")
        assert e.value.name == "ROTQ_ERR_UNSUPPORTED_DTYPE"


def test_hadamard_query_checks_out_as_the_op():
    # The numpy out checks of hadamard (a writable numpy array; x itself with
    # inplace) hold for the query too.
    x = _x((2, 64))
    read_only = np.empty_like(x)
    read_only.flags.writeable = False
    x_read_only = x.copy()
    x_read_only.flags.writeable = False
    for args, kwargs in (((x,), dict(out=read_only)), ((x,), dict(out=[[0.0] * 64] * 2)),
                         ((x_read_only,), dict(inplace=True))):
        for call in (rotq.hadamard, rotq.hadamard_workspace_size):
            with pytest.raises(rotq.RotqError) as e:
                call(*args, **kwargs)
            assert e.value.name == "ROTQ_ERR_INVALID_ARGUMENT"


def test_query_of_strided_views_cpu():
    big = _x((4, 12 * 4096 + 64))
    x = big[:, 32:32 + 12 * 4096]  # a view: rows 12 * 4096 + 64 elements apart
    assert rotq.hadamard_workspace_size(x, k=12) == 0
    assert rotq.quantize_workspace_size(x, "fp8", rotate=dict(k=12)) == 0


# ---------------------------------------------------------------------------
# torch
# ---------------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


def _needs_cuda(torch):
    if not (torch.cuda.is_available() and rotq.cuda_available()):
        pytest.skip("needs a CUDA device and librotq with CUDA")


def test_torch_cpu_queries_are_zero():
    torch = _torch()
    x = torch.randn(3, 12 * 4096)
    assert rotq.hadamard_workspace_size(x, k=12) == 0
    x = torch.randn(3, 28 * 512, dtype=torch.float32)
    assert rotq.quantize_workspace_size(x, "int8", rotate=dict(k=28, size=14336)) == 0


class _Spy:
    """Wraps TorchNS.workspace: records the buffers handed to the library, or
    (pool=True) hands none, so the library draws from its stream-ordered pool."""

    def __init__(self, monkeypatch, pool=False):
        from rotq import _torch_ns
        self.sizes = []
        real = _torch_ns.TorchNS.workspace

        def spy(ex, like, query):
            if pool:
                ex.workspace, ex.workspace_bytes = None, 0
                return None
            buf = real(ex, like, query)
            if buf is not None:
                self.sizes.append(int(buf.numel()))
                assert buf.data_ptr() % 256 == 0 and ex.workspace == buf.data_ptr()
            return buf

        monkeypatch.setattr(_torch_ns.TorchNS, "workspace", staticmethod(spy))


HAD_CASES = [  # (rows, n, k, dtype): the two-pass path on every device
    (5, 12 * 4096, 12, "float16"),
    (3, 12 * 4096, 12, "float32"),
    (4, 12 * 4096, 12, "bfloat16"),  # (52 * 1024 out of place: the fragment kernel's parts on sm_90)
]


@pytest.mark.parametrize("rows,n,k,dtype", HAD_CASES)
def test_cuda_hadamard_workspace_from_torch(monkeypatch, rows, n, k, dtype):
    torch = _torch()
    _needs_cuda(torch)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(rows, n, generator=g).to("cuda", getattr(torch, dtype))
    want = rotq.hadamard_workspace_size(x, k=k)
    assert want > 0
    with monkeypatch.context() as m:
        spy = _Spy(m)
        y = rotq.hadamard(x, k=k)
        torch.cuda.synchronize()
    assert spy.sizes == [want]
    with monkeypatch.context() as m:
        _Spy(m, pool=True)
        y_pool = rotq.hadamard(x, k=k)
        torch.cuda.synchronize()
    assert torch.equal(y.view(torch.uint8), y_pool.view(torch.uint8))  # bit-identical
    ref = rotq.hadamard(x.cpu(), k=k)
    tol = {"float32": 2e-5, "float16": 4e-3, "bfloat16": 3e-2}[dtype]
    err = (y.cpu().double() - ref.double()).norm() / ref.double().norm()
    assert err < tol


QUANT_CASES = [  # (rows, cols, kind, rotate, dtype): the two-step path on every device
    (7, 14336, "int8", dict(k=28), "float32"),
    (3, 2 * 14336, "int4", dict(size=14336, k=28), "bfloat16"),
    (3, 52 * 1024, "fp8", dict(k=52), "float32"),
]


@pytest.mark.parametrize("rows,cols,kind,rotate,dtype", QUANT_CASES)
def test_cuda_quantize_workspace_from_torch(monkeypatch, rows, cols, kind, rotate, dtype):
    torch = _torch()
    _needs_cuda(torch)
    g = torch.Generator().manual_seed(11)
    x = torch.randn(rows, cols, generator=g).to("cuda", getattr(torch, dtype))
    want = rotq.quantize_workspace_size(x, kind, rotate=rotate)
    assert want > 0
    with monkeypatch.context() as m:
        spy = _Spy(m)
        got = rotq.quantize(x, kind, rotate=rotate)
        torch.cuda.synchronize()
    assert spy.sizes == [want]
    with monkeypatch.context() as m:
        _Spy(m, pool=True)
        pooled = rotq.quantize(x, kind, rotate=rotate)
        torch.cuda.synchronize()
    for a, b in zip(got, pooled):
        if a is None:
            assert b is None
            continue
        assert torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def test_cuda_needs_none_for_fused_sizes():
    torch = _torch()
    _needs_cuda(torch)
    x = torch.randn(4, 14336, device="cuda", dtype=torch.bfloat16)
    assert rotq.hadamard_workspace_size(x) == 0  # 28 * 512: one pass
    assert rotq.quantize_workspace_size(x, "int8", rotate=True) == 0  # fused
    x = torch.randn(4, 4096, device="cuda", dtype=torch.float16)
    assert rotq.hadamard_workspace_size(x) == 0
    assert rotq.quantize_workspace_size(x, "fp8", rotate=True) == 0


def test_cuda_graph_capture_with_workspace():
    torch = _torch()
    _needs_cuda(torch)
    x = torch.randn(3, 12 * 4096, device="cuda", dtype=torch.float16)
    xs = torch.randn(3, 14336, device="cuda", dtype=torch.float32)
    assert rotq.hadamard_workspace_size(x, k=12) > 0
    assert rotq.quantize_workspace_size(xs, "int8", rotate=dict(k=28)) > 0
    eager_y = rotq.hadamard(x, k=12)
    eager_q = rotq.quantize(xs, "int8", rotate=dict(k=28))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up off the capture (lazy module loads, attributes)
        rotq.hadamard(x, k=12)
        rotq.quantize(xs, "int8", rotate=dict(k=28))
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = rotq.hadamard(x, k=12)
        q = rotq.quantize(xs, "int8", rotate=dict(k=28))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(y.view(torch.uint8), eager_y.view(torch.uint8))
    for a, b in zip(q, eager_q):
        assert torch.equal(a.view(torch.uint8), b.view(torch.uint8))
