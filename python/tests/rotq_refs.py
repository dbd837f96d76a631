"""numpy references for the tests: explicit Hadamard matrices, a float64 FWHT and a
re-implementation of the quantization rules in src/common/formats.h."""

import numpy as np

F32 = np.float32


# ---------------------------------------------------------------------------
# Hadamard
# ---------------------------------------------------------------------------

def sylvester(n):
    """Natural-order Sylvester Hadamard matrix (scipy.linalg.hadamard)."""
    assert n >= 1 and n & (n - 1) == 0
    h = np.ones((1, 1), dtype=np.float64)
    h2 = np.array([[1.0, 1.0], [1.0, -1.0]])
    while h.shape[0] < n:
        h = np.kron(h, h2)
    return h


def fwht(x):
    """Unnormalized natural-order Walsh-Hadamard transform of the last axis (float64)."""
    x = np.array(x, dtype=np.float64, copy=True)
    n = x.shape[-1]
    lead = x.shape[:-1]
    h = 1
    while h < n:
        v = x.reshape(lead + (n // (2 * h), 2, h))
        a = v[..., 0, :].copy()
        b = v[..., 1, :]
        v[..., 0, :] = a + b
        v[..., 1, :] = a - b
        h *= 2
    return x


def hadamard_ref(x, hk, size=None, scale=1.0, signs=None):
    """scale * (H_K (x) H_{size/K}) (signs .* x) per block of ``size`` (float64)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[-1]
    size = n if size is None else size
    if signs is not None:
        x = x * np.where(np.asarray(signs) < 0, -1.0, 1.0)
    k = hk.shape[0]
    p = size // k
    xb = x.reshape(x.shape[:-1] + (n // size, k, p))
    y = fwht(xb)
    y = np.einsum("ij,...jm->...im", hk.astype(np.float64), y)
    return (y * scale).reshape(x.shape)


def rel_err(y, ref):
    y = np.asarray(y, dtype=np.float64)
    rms = np.sqrt(np.mean(ref.astype(np.float64) ** 2)) or 1.0
    return float(np.max(np.abs(y - ref)) / rms)


# ---------------------------------------------------------------------------
# formats.h
# ---------------------------------------------------------------------------

def f32_to_fp8(v):
    """rotq_f32_to_fp8_e4m3: saturating RNE, NaN -> 0x7f, +-Inf -> +-448."""
    v = np.ascontiguousarray(v, dtype=F32)
    u = v.view(np.uint32)
    sign = ((u >> 24) & 0x80).astype(np.uint8)
    a = u & np.uint32(0x7FFFFFFF)
    af = a.view(F32)
    # subnormal range: quantum 2^-9
    sub = np.rint(np.where(a < 0x3C800000, af, F32(0)) * F32(512.0)).astype(np.uint32)
    # normal range: round the 20 dropped bits to nearest even
    rn = a + np.uint32(0x7FFFF) + ((a >> 20) & np.uint32(1))
    norm = (rn >> 20) - np.uint32(120 << 3)
    out = np.where(a < 0x3C800000, sub, norm & np.uint32(0xFF))
    out = np.where(a >= 0x43E00000, np.uint32(0x7E), out)
    out = out.astype(np.uint8) | sign
    out = np.where(a > 0x7F800000, np.uint8(0x7F), out)
    return out.astype(np.uint8)


def fp8_to_f32(b):
    b = np.asarray(b, dtype=np.uint8).astype(np.uint32)
    sign = np.where(b & 0x80, -1.0, 1.0).astype(F32)
    exp = (b >> 3) & 0xF
    man = b & 0x7
    sub = man.astype(F32) * F32(0.001953125)
    normal = (((exp + 120) << 23) | (man << 20)).astype(np.uint32).view(F32)
    val = np.where(exp == 0, sub, normal) * sign
    return np.where((exp == 0xF) & (man == 0x7), F32(np.nan), val).astype(F32)


def _absmax(x, axis=-1):
    x = x.astype(F32)
    return np.max(np.where(np.isfinite(x), np.abs(x), F32(0)), axis=axis).astype(F32)


def _scale_inv(absmax, qmax):
    qmax = F32(qmax)
    safe = np.where(absmax > 0, absmax, F32(1))
    with np.errstate(over="ignore"):
        inv = (qmax / safe).astype(F32)
    # formats.h: absmax 0, or so small that qmax/absmax overflows, flushes to 0
    pos = (absmax > 0) & np.isfinite(inv)
    scale = np.where(pos, (safe / qmax).astype(F32), F32(0)).astype(F32)
    inv = np.where(pos, inv, F32(0)).astype(F32)
    return scale, inv


def _quant_int(v, qmax):
    with np.errstate(invalid="ignore"):
        c = np.clip(v, -qmax, qmax)
    c = np.where(np.isnan(v), F32(0), c)
    return np.rint(c).astype(np.int32)


def ref_int8(x):
    """(q int8, scales (rows,1) f32, row_sums int32) of a (rows, n) array."""
    x = np.asarray(x).astype(F32)
    scale, inv = _scale_inv(_absmax(x), 127.0)
    with np.errstate(invalid="ignore"):
        v = (x * inv[..., None]).astype(F32)
    q = _quant_int(v, F32(127))
    return q.astype(np.int8), scale[..., None], q.sum(axis=-1).astype(np.int32)


def ref_fp8(x):
    x = np.asarray(x).astype(F32)
    scale, inv = _scale_inv(_absmax(x), 448.0)
    with np.errstate(invalid="ignore"):
        v = (x * inv[..., None]).astype(F32)
    return f32_to_fp8(v), scale[..., None]


def ref_fp8_static(x, s):
    x = np.asarray(x).astype(F32)
    inv = F32(1.0) / F32(s)
    with np.errstate(invalid="ignore", over="ignore"):
        return f32_to_fp8((x * inv).astype(F32))


def pack_i4(q):
    q = q.astype(np.int32)
    lo = (q[..., 0::2] & 0xF).astype(np.uint8)
    hi = (q[..., 1::2] & 0xF).astype(np.uint8)
    return (lo | (hi << 4)).astype(np.uint8)


def unpack_i4(b):
    b = np.asarray(b, dtype=np.uint8)
    lo = (b & 0xF).astype(np.int8)
    hi = (b >> 4).astype(np.int8)
    lo = np.where(lo > 7, lo - 16, lo)
    hi = np.where(hi > 7, hi - 16, hi)
    out = np.empty(b.shape[:-1] + (b.shape[-1] * 2,), dtype=np.int8)
    out[..., 0::2] = lo
    out[..., 1::2] = hi
    return out


def ref_int4(x, g):
    """(packed uint8 (rows, n/2), scales (rows, n/g))."""
    x = np.asarray(x).astype(F32)
    rows, n = x.shape
    xg = x.reshape(rows, n // g, g)
    scale, inv = _scale_inv(_absmax(xg), 7.0)
    with np.errstate(invalid="ignore"):
        v = (xg * inv[..., None]).astype(F32)
    q = _quant_int(v, F32(7)).reshape(rows, n)
    return pack_i4(q), scale


def ref_dequant(kind, q, scales, g=None, static=None):
    """float32 y = q * scale."""
    if kind == "int8":
        return (q.astype(F32) * scales.reshape(-1, 1).astype(F32)).astype(F32)
    if kind == "fp8":
        return (fp8_to_f32(q) * scales.reshape(-1, 1).astype(F32)).astype(F32)
    if kind == "fp8_static":
        return (fp8_to_f32(q) * F32(static)).astype(F32)
    v = unpack_i4(q).astype(F32)
    rows, n = v.shape
    s = scales.reshape(rows, n // g, 1).astype(F32)
    return (v.reshape(rows, n // g, g) * s).reshape(rows, n).astype(F32)
