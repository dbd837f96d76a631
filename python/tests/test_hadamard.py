"""CPU path with numpy arrays: hadamard_transform, hadamard_transform_k, hadamard."""
import math

import numpy as np
import pytest

import rotq
from rotq_refs import fwht, hadamard_ref, rel_err, sylvester

TOL = {np.float32: 2e-6, np.float16: 4e-3}
POW2 = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]


def _x(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def _tol(dtype, n):
    return TOL[dtype] * (1 + math.log2(max(n, 2)) / 4)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", [2, 8, 64, 256, 1024])
def test_hadamard_transform_vs_explicit_matrix(rng, dtype, n):
    x = _x(rng, (5, n), dtype)
    scale = 1.0 / math.sqrt(n)
    y = rotq.hadamard_transform(x, scale=scale)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert y is not x and not np.shares_memory(x, y)
    ref = (x.astype(np.float64) @ sylvester(n).T) * scale  # F.linear(x, H) * scale
    assert rel_err(y, ref) < _tol(dtype, n)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", POW2)
def test_hadamard_transform_all_sizes(rng, dtype, n):
    rows = max(1, min(33, (1 << 17) // n))
    x = _x(rng, (rows, n), dtype)
    y = rotq.hadamard_transform(x, 1.0 / math.sqrt(n))
    assert rel_err(y, fwht(x) / math.sqrt(n)) < _tol(dtype, n)


def test_hadamard_transform_default_scale_is_one(rng):
    x = _x(rng, (3, 32), np.float32)
    np.testing.assert_allclose(rotq.hadamard_transform(x), fwht(x), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(rotq.hadamard_transform(x, 0.25), fwht(x) * 0.25, rtol=1e-5,
                               atol=1e-4)


@pytest.mark.parametrize("shape", [(64,), (2, 3, 64), (2, 1, 3, 128), (1, 256), (4, 2, 2, 2, 32)])
def test_nd_shapes(rng, shape):
    x = _x(rng, shape, np.float32)
    y = rotq.hadamard_transform(x, 0.5)
    assert y.shape == x.shape
    np.testing.assert_allclose(y, fwht(x) * 0.5, rtol=1e-5, atol=1e-4)


def test_strided_rows(rng):
    big = _x(rng, (7, 300), np.float32)
    x = big[:, 10:138]  # row stride 300 != 128, misaligned start
    assert not x.flags.c_contiguous
    before = big.copy()
    y = rotq.hadamard_transform(x)
    np.testing.assert_allclose(y, fwht(x), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(big, before)  # input untouched


@pytest.mark.parametrize("make", [
    lambda a: a[:, ::2, :],          # uniform row stride (collapses)
    lambda a: a[:, :3, :],           # leading dims do not collapse: copied
    lambda a: a[::-1],               # negative stride: copied
    lambda a: a[..., ::-1],          # last dim reversed: copied
    lambda a: np.swapaxes(a, 0, 1),  # permuted leading dims
])
def test_noncontiguous_layouts(rng, make):
    base = _x(rng, (4, 6, 64), np.float32)
    x = make(base)
    y = rotq.hadamard_transform(x)
    np.testing.assert_allclose(y, fwht(x), rtol=1e-5, atol=1e-4)


def test_transposed_last_dim(rng):
    a = _x(rng, (64, 5), np.float32)
    x = a.T  # last dim not contiguous
    np.testing.assert_allclose(rotq.hadamard_transform(x), fwht(x), rtol=1e-5, atol=1e-4)


def test_empty_batch():
    x = np.zeros((0, 64), np.float32)
    y = rotq.hadamard_transform(x)
    assert y.shape == (0, 64)
    y = rotq.hadamard(np.zeros((3, 0, 64), np.float16), size=16)
    assert y.shape == (3, 0, 64)


def test_non_pow2_is_an_error_not_padding(rng):
    for n in (12, 137, 3 * 64):
        with pytest.raises(rotq.RotqError) as e:
            rotq.hadamard_transform(_x(rng, (2, n), np.float32))
        assert e.value.name == "ROTQ_ERR_UNSUPPORTED_SIZE"
        assert "hadamard_transform_k" in e.value.message
    with pytest.raises(rotq.RotqError) as e:
        rotq.hadamard_transform(np.zeros((1, 65536), np.float32))
    assert e.value.name == "ROTQ_ERR_UNSUPPORTED_SIZE"


# ---------------------------------------------------------------------------
# K * 2^m
# ---------------------------------------------------------------------------

def _k_cases():
    ks = [12, 20, 28, 36, 40, 44, 52, 60, 108, 116, 124, 140, 156, 172]
    out = []
    for k in ks:
        for p in (1, 2, 16, 128):
            out.append((k, p))
    return out


@pytest.mark.parametrize("k,p", _k_cases())
@pytest.mark.parametrize("transpose", [False, True])
def test_k_factor_vs_kron(rng, k, p, transpose):
    n = k * p
    x = _x(rng, (3, n), np.float32)
    hk = rotq.hadamard_factor_matrix(k).astype(np.float64)
    if transpose:
        hk = hk.T
    y = rotq.hadamard(x, k=k, transpose=transpose)
    if n <= 4096:
        full = np.kron(hk, sylvester(p)) / math.sqrt(n)
        ref = x.astype(np.float64) @ full.T
    else:
        ref = hadamard_ref(x, hk, scale=1 / math.sqrt(n))
    assert rel_err(y, ref) < 2e-6 * (1 + math.log2(n) / 2)


@pytest.mark.parametrize("n,k", [(28 * 512, 28), (172 * 64, 172), (108 * 128, 108),
                                 (12 * 4096, 12), (156 * 256, 156), (40 * 1024, 40),
                                 (52 * 1024, 52), (20, 20)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_hadamard_transform_k_model_sizes(rng, n, k, dtype):
    x = _x(rng, (3, n), dtype)
    y = rotq.hadamard_transform_k(x)  # k picked by QuaRot's order, scale 1/sqrt(n)
    assert y.dtype == dtype
    hk = rotq.hadamard_factor_matrix(k)
    assert rotq.pick_factor(n) == k
    assert rel_err(y, hadamard_ref(x, hk, scale=1 / math.sqrt(n))) < _tol(dtype, n) * 2


def test_hadamard_transform_k_explicit_and_orders(rng):
    n = 44 * 8
    x = _x(rng, (2, n), np.float32)
    with pytest.raises(rotq.RotqError) as e:
        rotq.hadamard_transform_k(x)  # 44 is not in QuaRot's list
    assert e.value.name == "ROTQ_ERR_UNSUPPORTED_SIZE"
    y = rotq.hadamard_transform_k(x, order="spinquant", scale=1.0)
    ref = hadamard_ref(x, rotq.hadamard_factor_matrix(44))
    assert rel_err(y, ref) < 1e-5
    np.testing.assert_allclose(rotq.hadamard_transform_k(x, k=44, scale=1.0), y)
    # k=1: power of two; pow2 sizes give the Sylvester transform
    x2 = _x(rng, (2, 256), np.float32)
    np.testing.assert_allclose(rotq.hadamard_transform_k(x2, k=1, scale=1.0), fwht(x2),
                               rtol=1e-5, atol=1e-4)


def test_orthonormal_inverse_with_transpose(rng):
    for n in (28 * 64, 172 * 4, 1024):
        x = _x(rng, (4, n), np.float32)
        y = rotq.hadamard(x)
        back = rotq.hadamard(y, transpose=True)
        np.testing.assert_allclose(back, x, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# block-diagonal, signs, dtypes, out=, in place
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("size,n", [(16, 256), (64, 4096), (128, 128 * 7), (28 * 4, 28 * 4 * 3),
                                    (1, 8), (2, 6)])
def test_block_diagonal(rng, size, n):
    x = _x(rng, (5, n), np.float32)
    y = rotq.hadamard(x, size=size)
    k = rotq.pick_factor(size)
    ref = hadamard_ref(x, rotq.hadamard_factor_matrix(k), size=size, scale=1 / math.sqrt(size))
    assert rel_err(y, ref) < 1e-5


@pytest.mark.parametrize("sdtype", [np.int8, np.int16, np.int64, np.float32, np.float64])
def test_signs(rng, sdtype):
    n = 256
    x = _x(rng, (4, n), np.float32)
    s = np.where(rng.random(n) < 0.5, -1, 1).astype(sdtype)
    y = rotq.hadamard(x, signs=s, scale=1.0)
    ref = fwht(x * s.astype(np.float64))
    assert rel_err(y, ref) < 1e-5
    # signs with a block-diagonal K-factor transform: one sign per element of the row
    n2 = 12 * 8 * 4
    x2 = _x(rng, (3, n2), np.float32)
    s2 = np.where(rng.random(n2) < 0.5, -1, 1).astype(sdtype)
    y2 = rotq.hadamard(x2, size=96, signs=s2, k=12, transpose=True)
    ref2 = hadamard_ref(x2, rotq.hadamard_factor_matrix(12).T, size=96, scale=1 / math.sqrt(96),
                        signs=s2)
    assert rel_err(y2, ref2) < 1e-5


def test_signs_list_and_errors(rng):
    x = _x(rng, (2, 8), np.float32)
    s = [1, -1, 1, 1, -1, -1, 1, -1]
    np.testing.assert_allclose(rotq.hadamard(x, signs=s, scale=1.0), fwht(x * np.array(s)),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(rotq.RotqError) as e:
        rotq.hadamard(x, signs=s[:4])  # one sign per element of the last dim, not per block
    assert e.value.name == "ROTQ_ERR_INVALID_ARGUMENT"
    with pytest.raises(rotq.RotqError) as e:
        rotq.hadamard(x, signs=np.ones(8, bool))
    assert e.value.name == "ROTQ_ERR_UNSUPPORTED_DTYPE"


@pytest.mark.parametrize("xd", [np.float32, np.float16])
@pytest.mark.parametrize("od", [np.float32, np.float16])
def test_out_dtype_combinations(rng, xd, od):
    x = _x(rng, (3, 512), xd)
    out = np.full(x.shape, 7, dtype=od)
    r = rotq.hadamard(x, out=out)
    assert r is out
    ref = fwht(x) / math.sqrt(512)
    assert rel_err(out, ref) < _tol(np.float16 if np.float16 in (xd, od) else np.float32, 512)


def test_out_strided_and_noncontiguous(rng):
    x = _x(rng, (4, 64), np.float32)
    ref = fwht(x) / 8
    big = np.zeros((4, 100), np.float32)
    rotq.hadamard(x, out=big[:, 20:84])
    np.testing.assert_allclose(big[:, 20:84], ref, rtol=1e-5, atol=1e-5)
    assert not big[:, :20].any() and not big[:, 84:].any()
    outT = np.zeros((64, 4), np.float32).T  # not representable: written through a temporary
    rotq.hadamard(x, out=outT)
    np.testing.assert_allclose(outT, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_inplace(rng, dtype):
    x = _x(rng, (6, 28 * 16), dtype)
    ref = hadamard_ref(x, rotq.hadamard_factor_matrix(28), scale=1 / math.sqrt(28 * 16))
    r = rotq.hadamard(x, inplace=True)
    assert r is x
    assert rel_err(x, ref) < _tol(dtype, 28 * 16) * 2


def test_inplace_strided_views(rng):
    big = _x(rng, (5, 80), np.float32)
    orig = big.copy()
    view = big[:, 8:72]
    rotq.hadamard(view, inplace=True, scale=1.0)
    np.testing.assert_allclose(big[:, 8:72], fwht(orig[:, 8:72]), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(big[:, :8], orig[:, :8])
    np.testing.assert_array_equal(big[:, 72:], orig[:, 72:])
    a = _x(rng, (64, 3), np.float32)
    a0 = a.copy()
    rotq.hadamard(a.T, inplace=True, scale=1.0)  # needs a copy; result written back
    np.testing.assert_allclose(a.T, fwht(a0.T), rtol=1e-5, atol=1e-4)


def test_readonly_input_ok_but_not_inplace(rng):
    x = _x(rng, (2, 32), np.float32)
    x.flags.writeable = False
    rotq.hadamard_transform(x)
    with pytest.raises(rotq.RotqError):
        rotq.hadamard(x, inplace=True)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

def _err(fn, name):
    with pytest.raises(rotq.RotqError) as e:
        fn()
    assert e.value.name == name, str(e.value)
    assert e.value.status < 0 and e.value.message
    return e.value


def test_errors(rng):
    x = _x(rng, (2, 64), np.float32)
    _err(lambda: rotq.hadamard(x, size=48), "ROTQ_ERR_INVALID_SHAPE")  # 12*4 does not divide 64
    _err(lambda: rotq.hadamard(x, size=32 * 3), "ROTQ_ERR_INVALID_SHAPE")
    _err(lambda: rotq.hadamard(x, k=13), "ROTQ_ERR_INVALID_FACTOR")
    _err(lambda: rotq.hadamard(x, k=12), "ROTQ_ERR_INVALID_FACTOR")
    _err(lambda: rotq.hadamard(np.zeros((2, 148), np.float32)), "ROTQ_ERR_UNSUPPORTED_SIZE")  # 37*4
    _err(lambda: rotq.hadamard(x, size=0), "ROTQ_ERR_UNSUPPORTED_SIZE")
    _err(lambda: rotq.hadamard(x, size=2**40), "ROTQ_ERR_UNSUPPORTED_SIZE")
    _err(lambda: rotq.hadamard(x, scale=0.0), "ROTQ_ERR_INVALID_SCALE")
    _err(lambda: rotq.hadamard(x, scale=float("nan")), "ROTQ_ERR_INVALID_SCALE")
    _err(lambda: rotq.hadamard_transform(x, scale=float("inf")), "ROTQ_ERR_INVALID_SCALE")
    _err(lambda: rotq.hadamard_transform(x.astype(np.float64)), "ROTQ_ERR_UNSUPPORTED_DTYPE")
    _err(lambda: rotq.hadamard_transform(x.astype(np.int32)), "ROTQ_ERR_UNSUPPORTED_DTYPE")
    _err(lambda: rotq.hadamard(x, out=np.empty((2, 64), np.float64)), "ROTQ_ERR_UNSUPPORTED_DTYPE")
    _err(lambda: rotq.hadamard(x, out=np.empty((2, 32), np.float32)), "ROTQ_ERR_INVALID_SHAPE")
    _err(lambda: rotq.hadamard(x, out=x.copy(), inplace=True), "ROTQ_ERR_INVALID_ARGUMENT")
    _err(lambda: rotq.hadamard_transform(np.float32(3.0)), "ROTQ_ERR_INVALID_SHAPE")
    _err(lambda: rotq.hadamard(np.zeros((2, 0), np.float32), size=1), "ROTQ_ERR_INVALID_SHAPE")


def test_overlap_is_rejected(rng):
    big = _x(rng, (4, 65), np.float32)
    x = big[:, :64]
    out = big[:, 1:65]  # partially overlaps x: not in place
    e = _err(lambda: rotq.hadamard(x, out=out), "ROTQ_ERR_OVERLAP")
    assert "rotq_hadamard" in e.message


def test_numpy_bfloat16_via_ml_dtypes(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = np.dtype(ml_dtypes.bfloat16)
    x = _x(rng, (4, 28 * 32), np.float32).astype(bf)
    y = rotq.hadamard_transform_k(x)
    assert y.dtype == bf
    ref = hadamard_ref(x.astype(np.float64), rotq.hadamard_factor_matrix(28),
                       scale=1 / math.sqrt(28 * 32))
    assert rel_err(y.astype(np.float64), ref) < 3e-2
    out = np.empty(x.shape, np.float32)
    rotq.hadamard(x, out=out)  # bf16 in, f32 out
    assert rel_err(out, ref) < 1e-5
