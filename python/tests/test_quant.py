"""CPU path with numpy arrays: quantize / dequantize against a numpy
re-implementation of src/common/formats.h."""
import math

import numpy as np
import pytest

import rotq
from rotq_refs import (
    f32_to_fp8, fp8_to_f32, fwht, hadamard_ref, ref_dequant, ref_fp8, ref_fp8_static, ref_int4,
    ref_int8, unpack_i4,
)


def _x(rng, shape, dtype=np.float32, spread=True):
    x = rng.standard_normal(shape)
    if spread:  # rows with very different magnitudes
        x = x * np.exp(rng.uniform(-6, 6, size=shape[:-1] + (1,)))
    return x.astype(dtype)


def _specials(n, dtype=np.float32):
    """Rows exercising the NaN/Inf/zero rules."""
    rows = np.zeros((8, n), dtype=np.float64)
    rows[1, :] = np.linspace(-3, 3, n)
    rows[1, 3] = np.nan
    rows[2, :] = np.linspace(-1, 2, n)
    rows[2, 5] = np.inf
    rows[2, 6] = -np.inf
    rows[3, :] = np.nan
    rows[4, :] = np.inf
    rows[4, 1] = -np.inf
    rows[5, :] = 1e-30          # tiny but nonzero
    rows[5, 0] = -2e-30
    rows[6, :] = np.arange(n) - n / 2 + 0.5  # ties after scaling
    rows[7, :] = 60000.0 if dtype == np.float16 else 3e38
    rows[7, 2] = -rows[7, 2]
    with np.errstate(over="ignore"):
        return rows.astype(dtype)


DTYPES = [np.float32, np.float16]


# ---------------------------------------------------------------------------
# exact comparisons (no rotation)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [32, 256, 4096, 1000])
def test_int8_exact(rng, dtype, n):
    x = _x(rng, (17, n), dtype)
    q, s, r = rotq.quantize(x, "int8")
    qr, sr, rr = ref_int8(x)
    assert q.dtype == np.int8 and q.shape == x.shape
    assert s.dtype == np.float32 and s.shape == (17, 1)
    assert r.dtype == np.int32 and r.shape == (17,)
    np.testing.assert_array_equal(s, sr)
    np.testing.assert_array_equal(q, qr)
    np.testing.assert_array_equal(r, rr)
    assert np.abs(q).max() <= 127


@pytest.mark.parametrize("dtype", DTYPES)
def test_int8_special_values(dtype):
    x = _specials(64, dtype)
    q, s, r = rotq.quantize(x, "int8")
    qr, sr, rr = ref_int8(x)
    np.testing.assert_array_equal(s, sr)
    np.testing.assert_array_equal(q, qr)
    np.testing.assert_array_equal(r, rr)
    assert s[0, 0] == 0 and not q[0].any()      # all zero row
    assert q[1, 3] == 0                           # NaN -> 0
    assert q[2, 5] == 127 and q[2, 6] == -127     # +-Inf saturate
    assert s[3, 0] == 0 and not q[3].any()        # all NaN
    assert s[4, 0] == 0 and not q[4].any()        # all Inf: absmax over finite values = 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [64, 512, 1000])
def test_fp8_exact(rng, dtype, n):
    x = _x(rng, (9, n), dtype)
    q, s, r = rotq.quantize(x, "fp8")
    qr, sr = ref_fp8(x)
    assert q.dtype == np.uint8 and q.shape == x.shape and r is None
    np.testing.assert_array_equal(s, sr)
    np.testing.assert_array_equal(q, qr)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fp8_special_values(dtype):
    x = _specials(64, dtype)
    q, s, _ = rotq.quantize(x, "fp8")
    qr, sr = ref_fp8(x)
    np.testing.assert_array_equal(s, sr)
    np.testing.assert_array_equal(q, qr)
    assert q[1, 3] == 0x7F                         # NaN -> 0x7f
    assert q[2, 5] == 0x7E and q[2, 6] == 0xFE     # +-Inf -> +-448


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("static", [1.0, 0.01, 3.7e-3, 250.0])
def test_fp8_static_exact(rng, dtype, static):
    x = np.concatenate([_x(rng, (6, 128), dtype, spread=False), _specials(128, dtype)])
    q, s, r = rotq.quantize(x, "fp8_static", static_scale=static)
    assert s is None and r is None and q.dtype == np.uint8
    np.testing.assert_array_equal(q, ref_fp8_static(x, static))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("g", [32, 64, 128])
@pytest.mark.parametrize("n", [128, 1024, 384])
def test_int4_exact(rng, dtype, g, n):
    x = _x(rng, (5, n), dtype)
    q, s, r = rotq.quantize(x, "int4", group_size=g)
    qr, sr = ref_int4(x, g)
    assert q.dtype == np.uint8 and q.shape == (5, n // 2) and r is None
    assert s.shape == (5, n // g)
    np.testing.assert_array_equal(s, sr)
    np.testing.assert_array_equal(q, qr)
    v = unpack_i4(q)
    assert v.min() >= -7 and v.max() <= 7


def test_int4_special_values():
    x = _specials(128)
    q, s, _ = rotq.quantize(x, "int4", group_size=32)
    qr, sr = ref_int4(x, 32)
    np.testing.assert_array_equal(s, sr)
    np.testing.assert_array_equal(q, qr)


def test_int4_packing_layout():
    # even index in the low nibble, two's complement
    x = np.array([[7, -7, 1, -1] + [0] * 28], np.float32)
    q, s, _ = rotq.quantize(x, "int4", group_size=32)
    assert s[0, 0] == 1.0
    assert q[0, 0] == (7 | (0x9 << 4)) and q[0, 1] == (1 | (0xF << 4))


@pytest.mark.parametrize("kind", ["int8", "fp8", "fp8_static", "int4"])
def test_nd_and_strided_inputs(rng, kind):
    kw = dict(static_scale=0.05) if kind == "fp8_static" else {}
    base = _x(rng, (3, 4, 300))
    x = base[:, :, 20:276]  # (3, 4, 256) with row stride 300
    q, s, r = rotq.quantize(x, kind, group_size=64, **kw)
    q2, s2, r2 = rotq.quantize(np.ascontiguousarray(x), kind, group_size=64, **kw)
    assert q.shape[:2] == (3, 4)
    np.testing.assert_array_equal(q, q2)
    if s is not None:
        assert s.shape[:2] == (3, 4)
        np.testing.assert_array_equal(s, s2)
    if r is not None:
        assert r.shape == (3, 4)
        np.testing.assert_array_equal(r, r2)
    # 1-D input: one row
    q1, s1, _ = rotq.quantize(np.ascontiguousarray(x[1, 2]), kind, group_size=64, **kw)
    np.testing.assert_array_equal(q1, q[1, 2])


def test_empty_batch():
    q, s, r = rotq.quantize(np.zeros((0, 64), np.float32), "int8")
    assert q.shape == (0, 64) and s.shape == (0, 1) and r.shape == (0,)
    q, s, _ = rotq.quantize(np.zeros((2, 0, 128), np.float16), "int4", group_size=32)
    assert q.shape == (2, 0, 64) and s.shape == (2, 0, 4)
    y = rotq.dequantize(q, s, "int4", group_size=32)
    assert y.shape == (2, 0, 128)


# ---------------------------------------------------------------------------
# dequantize
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["int8", "fp8", "fp8_static", "int4"])
@pytest.mark.parametrize("odtype", [np.float32, np.float16])
def test_dequantize_exact(rng, kind, odtype):
    g = 64
    static = 0.02
    x = _x(rng, (7, 512), spread=False)
    q, s, _ = rotq.quantize(x, kind, group_size=g,
                            static_scale=static if kind == "fp8_static" else None)
    y = rotq.dequantize(q, s, kind, group_size=g,
                        static_scale=static if kind == "fp8_static" else None, dtype=odtype)
    assert y.shape == x.shape and y.dtype == odtype
    ref = ref_dequant(kind, q, s, g=g, static=static).astype(odtype)
    np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_error_bounds(rng, dtype):
    x = _x(rng, (11, 1024), dtype)
    xf = x.astype(np.float64)
    # int8: |x - dq| <= scale / 2
    q, s, _ = rotq.quantize(x, "int8")
    err = np.abs(rotq.dequantize(q, s, "int8") - xf)
    assert np.all(err <= s.astype(np.float64) * 0.5 * (1 + 1e-5) + 1e-30)
    # int4 per group
    q, s, _ = rotq.quantize(x, "int4", group_size=128)
    err = np.abs(rotq.dequantize(q, s, "int4", group_size=128) - xf).reshape(11, 8, 128)
    assert np.all(err <= s[..., None] * 0.5 * (1 + 1e-5) + 1e-30)
    # fp8: half an ulp (2^-4 relative) for normals, 2^-10 * scale absolute below
    q, s, _ = rotq.quantize(x, "fp8")
    err = np.abs(rotq.dequantize(q, s, "fp8") - xf)
    bound = np.maximum(np.abs(xf) * 2.0**-4, s * 2.0**-10) * (1 + 1e-5)
    assert np.all(err <= bound)


def test_dequantize_accepts_flat_scales_and_ndim(rng):
    x = _x(rng, (2, 3, 256))
    q, s, _ = rotq.quantize(x, "int4", group_size=32)
    y1 = rotq.dequantize(q, s, "int4", group_size=32)
    y2 = rotq.dequantize(q, s.ravel().astype(np.float64), "int4", group_size=32)
    np.testing.assert_array_equal(y1, y2)
    assert y1.shape == x.shape
    # strided q
    qb = np.zeros((2, 3, 200), np.uint8)
    qb[..., 10:138] = q
    np.testing.assert_array_equal(rotq.dequantize(qb[..., 10:138], s, "int4", group_size=32), y1)


# ---------------------------------------------------------------------------
# fused rotation
# ---------------------------------------------------------------------------

def _close_codes(a, b, frac=0.995):
    """Quantized codes of a fused rotation vs a separate one: rounding of the
    rotated value may differ in the last float bit, flipping a tie."""
    a = a.astype(np.int32)
    b = b.astype(np.int32)
    assert np.abs(a - b).max() <= 1
    assert np.mean(a == b) >= frac


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [256, 28 * 64, 172 * 16])
def test_int8_rotate_true(rng, dtype, n):
    x = _x(rng, (6, n), dtype)
    q, s, r = rotq.quantize(x, "int8", rotate=True)
    k = rotq.pick_factor(n)
    xr = hadamard_ref(x, rotq.hadamard_factor_matrix(k), scale=1 / math.sqrt(n)).astype(np.float32)
    qr, sr, rr = ref_int8(xr)
    np.testing.assert_allclose(s, sr, rtol=1e-5)
    _close_codes(q, qr)
    np.testing.assert_array_equal(r, q.astype(np.int32).sum(-1))


@pytest.mark.parametrize("kind", ["int8", "fp8", "int4", "fp8_static"])
def test_rotate_dict_matches_separate_hadamard(rng, kind):
    n = 512
    x = _x(rng, (8, n), spread=False)
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    rot = dict(size=128, signs=signs, k=None, transpose=False, scale=0.125)
    kw = dict(group_size=64, static_scale=0.01 if kind == "fp8_static" else None)
    q, s, _ = rotq.quantize(x, kind, rotate=rot, **kw)
    xr = rotq.hadamard(x, size=128, signs=signs, scale=0.125)
    q2, s2, _ = rotq.quantize(xr, kind, **kw)
    if s is not None:
        np.testing.assert_allclose(s, s2, rtol=1e-5)
    if kind == "int4":
        _close_codes(unpack_i4(q), unpack_i4(q2))
    elif kind in ("fp8", "fp8_static"):
        # neighbouring fp8 codes of the same sign differ by one
        _close_codes(q.view(np.int8) & 0x7F, q2.view(np.int8) & 0x7F)
    else:
        _close_codes(q, q2)


def test_rotate_k_transpose(rng):
    n = 28 * 32
    x = _x(rng, (4, n))
    q, s, _ = rotq.quantize(x, "int8", rotate=dict(k=28, transpose=True))
    xr = hadamard_ref(x, rotq.hadamard_factor_matrix(28).T, scale=1 / math.sqrt(n))
    qr, sr, _ = ref_int8(xr.astype(np.float32))
    np.testing.assert_allclose(s, sr, rtol=1e-5)
    _close_codes(q, qr)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

def _err(fn, name):
    with pytest.raises(rotq.RotqError) as e:
        fn()
    assert e.value.name == name, str(e.value)
    return e.value


def test_quant_errors(rng):
    x = _x(rng, (2, 256))
    _err(lambda: rotq.quantize(x, "int3"), "ROTQ_ERR_INVALID_FLAGS")
    _err(lambda: rotq.quantize(x, "int4", group_size=48), "ROTQ_ERR_INVALID_GROUP")
    _err(lambda: rotq.quantize(x, "int4", group_size=16), "ROTQ_ERR_INVALID_GROUP")
    _err(lambda: rotq.quantize(x[:, :96], "int4", group_size=64), "ROTQ_ERR_INVALID_GROUP")
    _err(lambda: rotq.quantize(x, "fp8_static"), "ROTQ_ERR_INVALID_SCALE")
    _err(lambda: rotq.quantize(x, "fp8_static", static_scale=-1.0), "ROTQ_ERR_INVALID_SCALE")
    _err(lambda: rotq.quantize(x, "fp8_static", static_scale=0.0), "ROTQ_ERR_INVALID_SCALE")
    _err(lambda: rotq.quantize(x, "fp8_static", static_scale=float("inf")),
         "ROTQ_ERR_INVALID_SCALE")
    _err(lambda: rotq.quantize(x, "fp8", static_scale=1.0), "ROTQ_ERR_INVALID_ARGUMENT")
    _err(lambda: rotq.quantize(x.astype(np.float64)), "ROTQ_ERR_UNSUPPORTED_DTYPE")
    _err(lambda: rotq.quantize(x, rotate=dict(size=48)), "ROTQ_ERR_INVALID_SHAPE")
    _err(lambda: rotq.quantize(x, rotate=dict(k=13)), "ROTQ_ERR_INVALID_FACTOR")
    _err(lambda: rotq.quantize(x, rotate=dict(scale=0.0)), "ROTQ_ERR_INVALID_SCALE")
    _err(lambda: rotq.quantize(x, rotate=dict(bogus=1)), "ROTQ_ERR_INVALID_ARGUMENT")
    _err(lambda: rotq.quantize(x, rotate=dict(signs=np.ones(3))), "ROTQ_ERR_INVALID_ARGUMENT")
    _err(lambda: rotq.quantize(x, rotate="yes"), "ROTQ_ERR_INVALID_ARGUMENT")
    _err(lambda: rotq.quantize(np.zeros((2, 148), np.float32), rotate=True),
         "ROTQ_ERR_UNSUPPORTED_SIZE")


def test_dequant_errors(rng):
    x = _x(rng, (2, 256))
    q, s, _ = rotq.quantize(x, "int8")
    _err(lambda: rotq.dequantize(q, s[:1], "int8"), "ROTQ_ERR_INVALID_SHAPE")
    _err(lambda: rotq.dequantize(q, None, "int8"), "ROTQ_ERR_NULL_POINTER")
    _err(lambda: rotq.dequantize(q.view(np.uint8), s, "int8"), "ROTQ_ERR_UNSUPPORTED_DTYPE")
    _err(lambda: rotq.dequantize(q, s, "int8", dtype=np.float64), "ROTQ_ERR_UNSUPPORTED_DTYPE")
    _err(lambda: rotq.dequantize(q.view(np.uint8), None, "fp8_static"), "ROTQ_ERR_INVALID_SCALE")
    q4, s4, _ = rotq.quantize(x, "int4", group_size=32)
    _err(lambda: rotq.dequantize(q4, s4, "int4", group_size=64), "ROTQ_ERR_INVALID_SHAPE")
    _err(lambda: rotq.dequantize(q4, s4, "int4", group_size=48), "ROTQ_ERR_INVALID_GROUP")


def test_fp8_reference_self_check():
    """The numpy fp8 codec used above agrees with itself on all 256 codes."""
    b = np.arange(256, dtype=np.uint8)
    f = fp8_to_f32(b)
    ok = (f32_to_fp8(f) == b) | np.isnan(f)
    assert ok.all()
    assert f[0x7E] == 448 and f[0x01] == 2.0**-9 and np.isnan(f[0xFF])
    assert fwht(np.eye(2))[0].tolist() == [1, 1]


def test_numpy_bfloat16_via_ml_dtypes(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = np.dtype(ml_dtypes.bfloat16)
    x = _x(rng, (4, 256)).astype(bf)
    for kind in ("int8", "fp8", "int4"):
        q, s, _ = rotq.quantize(x, kind, group_size=64)
        q2, s2, _ = rotq.quantize(x.astype(np.float32), kind, group_size=64)  # exact widening
        np.testing.assert_array_equal(q, q2)
        np.testing.assert_array_equal(s, s2)
    q, s, _ = rotq.quantize(x, "int8")
    y = rotq.dequantize(q, s, "int8", dtype="bfloat16")
    assert y.dtype == bf
    np.testing.assert_array_equal(y, ref_dequant("int8", q, s).astype(bf))
