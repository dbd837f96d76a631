"""Array-level implementation shared by the numpy path and the torch ops.

Everything here takes arrays of one "namespace" (numpy ndarrays, or torch
tensors through :mod:`rotq._torch_ns`) and turns them into rotq_matrix views:
pointer, dtype, rows, cols and a row stride. Arrays whose layout cannot be
described that way (last dimension not contiguous, leading dimensions that do
not collapse into one uniform row stride, negative strides) are copied first.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from . import _ffi
from ._ffi import (
    RotqError, RotqExec, RotqHadamardParams, RotqMatrix, RotqQuantParams, check, error,
)

# Quantization kinds as accepted by the Python API.
KINDS = {
    "int8": _ffi.ROTQ_QUANT_INT8_ROW,
    "fp8": _ffi.ROTQ_QUANT_FP8_ROW,
    "fp8_static": _ffi.ROTQ_QUANT_FP8_TENSOR,
    "int4": _ffi.ROTQ_QUANT_INT4_GROUP,
}
_KIND_ALIASES = {
    "int8_row": "int8", "i8": "int8",
    "fp8_row": "fp8", "fp8_e4m3": "fp8", "e4m3": "fp8",
    "fp8_tensor": "fp8_static", "fp8_e4m3_static": "fp8_static",
    "int4_group": "int4", "i4": "int4",
}
ORDERS = {
    "quarot": _ffi.ROTQ_ORDER_QUAROT,
    "spinquant": _ffi.ROTQ_ORDER_SPINQUANT,
    "quipsharp": _ffi.ROTQ_ORDER_QUIPSHARP,
    "quip#": _ffi.ROTQ_ORDER_QUIPSHARP,
    "quip_sharp": _ffi.ROTQ_ORDER_QUIPSHARP,
    "quip-sharp": _ffi.ROTQ_ORDER_QUIPSHARP,
}

# Number of CPU worker threads passed in rotq_exec (0 = one per core).
_threads = 0


def set_num_threads(n):
    """Worker threads for the CPU backend (0 = one per core, the default)."""
    global _threads
    n = int(n)
    if n < 0:
        raise RotqError(_ffi.ROTQ_ERR_INVALID_ARGUMENT, "ROTQ_ERR_INVALID_ARGUMENT",
                        "set_num_threads: the thread count must be >= 0")
    _threads = n


def get_num_threads():
    return _threads


def bad_arg(detail, status=_ffi.ROTQ_ERR_INVALID_ARGUMENT):
    return error(status, detail)


def kind_code(kind):
    if isinstance(kind, int) and not isinstance(kind, bool):
        if kind in KINDS.values():
            return kind
        raise bad_arg(f"unknown quantization kind {kind!r}", _ffi.ROTQ_ERR_INVALID_FLAGS)
    k = str(kind).lower()
    k = _KIND_ALIASES.get(k, k)
    if k not in KINDS:
        raise bad_arg(f"unknown quantization kind {kind!r}; use one of {sorted(KINDS)}",
                      _ffi.ROTQ_ERR_INVALID_FLAGS)
    return KINDS[k]


def order_code(order):
    if isinstance(order, int) and not isinstance(order, bool):
        return order
    o = str(order).lower()
    if o not in ORDERS:
        raise bad_arg(f"unknown factor order {order!r}; use 'quarot', 'spinquant' or 'quipsharp'",
                      _ffi.ROTQ_ERR_INVALID_FLAGS)
    return ORDERS[o]


# ---------------------------------------------------------------------------
# Small library queries
# ---------------------------------------------------------------------------

def pick_factor(n, order="quarot"):
    k = ctypes.c_int32()
    check(_ffi.lib.rotq_hadamard_pick_factor(int(n), order_code(order), ctypes.byref(k)),
          "rotq_hadamard_pick_factor", f"size {n}")
    return int(k.value)


def resolve(size, factor):
    k = ctypes.c_int32()
    m = ctypes.c_int32()
    check(_ffi.lib.rotq_hadamard_resolve(int(size), int(factor), ctypes.byref(k), ctypes.byref(m)),
          "rotq_hadamard_resolve", f"size {size}, factor {factor}")
    return int(k.value), int(m.value)


def factor_matrix(k):
    k = int(k)
    if k < 1 or k > 4096:
        raise error(_ffi.ROTQ_ERR_INVALID_FACTOR, f"hadamard_factor_matrix: K={k}")
    out = np.empty((k, k), dtype=np.int8)
    check(_ffi.lib.rotq_hadamard_factor_matrix(k, out.ctypes.data, out.size),
          "rotq_hadamard_factor_matrix", f"K={k}")
    return out


def factors():
    n = _ffi.lib.rotq_hadamard_factor_count()
    return [int(_ffi.lib.rotq_hadamard_factor_at(i)) for i in range(n)]


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------

def matrix_layout(shape, strides):
    """(rows, cols, row_stride) of an array viewed as a row-major matrix whose
    rows are the last dimension, or None when the layout needs a copy.
    ``strides`` are in elements."""
    if strides is None or len(shape) == 0:
        return None
    cols = int(shape[-1])
    rows = 1
    for s in shape[:-1]:
        rows *= int(s)
    if rows == 0 or cols == 0:
        return rows, cols, max(cols, 1)
    if cols > 1 and strides[-1] != 1:
        return None
    lead = [(int(s), int(st)) for s, st in zip(shape[:-1], strides[:-1]) if s != 1]
    if not lead:
        return rows, cols, cols
    row_stride = lead[-1][1]
    expected = row_stride
    for s, st in reversed(lead):
        if st != expected:
            return None
        expected = st * s
    if row_stride < cols or row_stride <= 0:
        return None
    return rows, cols, row_stride


class _View:
    """An array plus the matrix it is passed to the library as."""

    __slots__ = ("arr", "rows", "cols", "stride", "dtype", "ptr")

    def as_matrix(self):
        return RotqMatrix(self.ptr, self.dtype, self.rows, self.cols, self.stride)


def check_pow2(n):
    if n < 1 or (n & (n - 1)) or n > _ffi.ROTQ_HADAMARD_MAX_POW2:
        raise _ffi.error(
            _ffi.ROTQ_ERR_UNSUPPORTED_SIZE,
            f"hadamard_transform needs the last dim to be a power of two <= "
            f"{_ffi.ROTQ_HADAMARD_MAX_POW2}, got {n}. rotq does not zero-pad (as "
            "fast_hadamard_transform does, which is not orthogonal). Use "
            "rotq.hadamard_transform_k(x) for K*2^m sizes (e.g. 12, 20, 28, 40, 172 times a "
            "power of two), or rotq.hadamard(x, size=b) for a block-diagonal transform")


def _hadamard_params(ns, x, n, size, factor, transpose, scale, signs):
    """RotqHadamardParams for rows of n elements, and the int8 signs it points to
    (the caller keeps them alive until the library call returns)."""
    params = RotqHadamardParams()
    params.size = n if size is None else int(size)
    params.factor = int(factor)
    params.flags = _ffi.ROTQ_HADAMARD_TRANSPOSE_FACTOR if transpose else 0
    params.scale = float(scale)
    if signs is not None:
        signs = ns.signs_int8(signs, x, n)
    params.signs = ns.ptr(signs) if signs is not None else None
    return params, signs


def view(ns, arr, dtype_code, packed=False, copy_ok=True):
    """A _View of ``arr``; None when its layout needs a copy and copy_ok is False.
    ``packed``: arr holds two int4 values per element (byte); cols and stride
    are reported in values."""
    lay = matrix_layout(ns.shape(arr), ns.strides(arr))
    if lay is None:
        if not copy_ok:
            return None
        arr = ns.contiguous(arr)
        lay = matrix_layout(ns.shape(arr), ns.strides(arr))
        assert lay is not None
    v = _View()
    v.arr = arr
    v.rows, v.cols, v.stride = lay
    if packed:
        v.cols *= 2
        v.stride *= 2
    v.dtype = dtype_code
    v.ptr = ns.ptr(arr)
    return v


def _dtype_or_raise(ns, arr, what, allowed=(_ffi.ROTQ_DTYPE_F32, _ffi.ROTQ_DTYPE_F16,
                                            _ffi.ROTQ_DTYPE_BF16)):
    code = ns.dtype_code(arr)
    if code not in allowed:
        raise error(_ffi.ROTQ_ERR_UNSUPPORTED_DTYPE,
                    f"{what} has dtype {ns.dtype_str(arr)}; supported: float32, float16, bfloat16")
    return code


def refresh(ns, v, arr, packed=False):
    """Point the _View v at a new (contiguous) array arr."""
    lay = matrix_layout(ns.shape(arr), ns.strides(arr))
    v.arr = arr
    v.rows, v.cols, v.stride = lay
    if packed:
        v.cols *= 2
        v.stride *= 2
    v.ptr = ns.ptr(arr)


# ---------------------------------------------------------------------------
# Hadamard
# ---------------------------------------------------------------------------

def _hadamard_setup(ns, x, out, size, factor, transpose, scale, signs):
    """The checks and matrix views of a Hadamard call (shared by hadamard_into and
    its workspace query): (params, signs, xv, ov, inplace)."""
    shape = ns.shape(x)
    if ns.shape(out) != shape:
        raise bad_arg(f"out has shape {ns.shape(out)}, expected {shape}",
                      _ffi.ROTQ_ERR_INVALID_SHAPE)
    if len(shape) == 0:
        raise bad_arg("hadamard needs at least one dimension", _ffi.ROTQ_ERR_INVALID_SHAPE)
    xd = _dtype_or_raise(ns, x, "x")
    od = _dtype_or_raise(ns, out, "out")
    n = int(shape[-1])
    if n == 0:
        raise bad_arg("the last dim is 0", _ffi.ROTQ_ERR_INVALID_SHAPE)
    params, signs = _hadamard_params(ns, x, n, size, factor, transpose, scale, signs)

    inplace = ns.same_array(x, out)
    xv = view(ns, x, xd, copy_ok=True)
    if inplace:
        ov = xv  # a copy of x (if one was made) is transformed in place, then copied back
    else:
        ov = view(ns, out, od, copy_ok=False)
        if ov is None:
            ov = view(ns, ns.empty_like_contig(out), od)
    return params, signs, xv, ov, inplace


def _refresh_misaligned(ns, x, out, xv, ov, inplace):
    """After ROTQ_ERR_MISALIGNED (a view into a larger buffer): fresh, aligned buffers."""
    if inplace:
        refresh(ns, xv, ns.fresh_copy(x))
    else:
        refresh(ns, xv, ns.fresh_copy(xv.arr))
        if ov.arr is out:
            refresh(ns, ov, ns.empty_like_contig(out))


def _size_query(fn, *args):
    """Calls a rotq_*_workspace_size with a size_t out-argument: (status, bytes)."""
    n = ctypes.c_size_t(0)
    st = fn(*args, ctypes.byref(n))
    return st, int(n.value)


def hadamard_into(ns, x, out, size, factor, transpose, scale, signs):
    """out = scale * H(signs .* x) per block of ``size`` along the last dim.
    ``out`` has x's shape (any float dtype) and may be x itself (in place).
    ``signs`` is None or an int8 1-D contiguous array of length x.shape[-1] in
    x's memory space."""
    shape = ns.shape(x)
    params, signs, xv, ov, inplace = _hadamard_setup(ns, x, out, size, factor, transpose, scale,
                                                     signs)
    if xv.rows == 0:
        # Nothing to do, but reject what the library would reject.
        resolve(params.size, factor)
        return out

    ex, guard = ns.exec_for(x, _threads)
    xm = xv.as_matrix()
    om = ov.as_matrix()
    workspace = [None]
    # Only K*2^m sizes can take the two-pass path that needs scratch: a power of
    # two skips the query (host work on every call otherwise).
    may_need_scratch = params.size & (params.size - 1) != 0

    def run():
        xm.data, xm.stride, om.data, om.stride = xv.ptr, xv.stride, ov.ptr, ov.stride
        # A CUDA fallback path's scratch, from the array library's allocator
        # (ns.workspace; held until the call has been enqueued).
        if may_need_scratch:
            workspace[0] = ns.workspace(ex, x, lambda nbytes: _ffi.lib.rotq_hadamard_workspace_size(
                ctypes.byref(ex), ctypes.byref(params), ctypes.byref(xm), ctypes.byref(om), nbytes))
        return _ffi.lib.rotq_hadamard(ctypes.byref(ex), ctypes.byref(params),
                                      ctypes.byref(xm), ctypes.byref(om))

    with guard:
        st = run()
        if st == _ffi.ROTQ_ERR_MISALIGNED:
            # A view into a larger buffer: retry once on fresh (aligned) buffers.
            _refresh_misaligned(ns, x, out, xv, ov, inplace)
            st = run()
        check(st, "rotq_hadamard", f"shape {tuple(shape)}, size {params.size}, factor {factor}")
        if ov.arr is not out:
            ns.copy_(out, ov.arr)
    return out


def hadamard_workspace_size(ns, x, out, size, factor, transpose, scale, signs):
    """The device workspace (bytes) that hadamard_into(ns, x, out, ...) passes to
    the library: 0 on the CPU and for every size a one-pass kernel takes."""
    shape = ns.shape(x)
    params, signs, xv, ov, inplace = _hadamard_setup(ns, x, out, size, factor, transpose, scale,
                                                     signs)
    if xv.rows == 0:
        resolve(params.size, factor)
        return 0
    ex, guard = ns.exec_for(x, _threads)

    def query():
        return _size_query(_ffi.lib.rotq_hadamard_workspace_size, ctypes.byref(ex),
                           ctypes.byref(params), ctypes.byref(xv.as_matrix()),
                           ctypes.byref(ov.as_matrix()))

    with guard:
        st, nbytes = query()
        if st == _ffi.ROTQ_ERR_MISALIGNED:  # as the call does: fresh buffers
            _refresh_misaligned(ns, x, out, xv, ov, inplace)
            st, nbytes = query()
        check(st, "rotq_hadamard_workspace_size",
              f"shape {tuple(shape)}, size {params.size}, factor {factor}")
    return nbytes


def hadamard(ns, x, size, factor, transpose, scale, signs):
    out = ns.empty(ns.shape(x), ns.dtype_of(x), x)
    return hadamard_into(ns, x, out, size, factor, transpose, scale, signs)


# ---------------------------------------------------------------------------
# Quantization
# ---------------------------------------------------------------------------

def quant_shapes(shape, kind, group_size):
    """(q_shape, q_kind, scales_shape or None, row_sums_shape or None)."""
    lead = tuple(int(s) for s in shape[:-1])
    n = int(shape[-1])
    if kind == _ffi.ROTQ_QUANT_INT4_GROUP:
        g = int(group_size)
        groups = n // g if g > 0 else 0
        return lead + ((n + 1) // 2,), "u8", lead + (groups,), None
    if kind == _ffi.ROTQ_QUANT_INT8_ROW:
        return lead + (n,), "i8", lead + (1,), lead
    if kind == _ffi.ROTQ_QUANT_FP8_ROW:
        return lead + (n,), "fp8", lead + (1,), None
    return lead + (n,), "fp8", None, None


def _quant_params(kind, group_size, static_scale):
    p = RotqQuantParams()
    p.kind = kind
    p.group_size = int(group_size) if kind == _ffi.ROTQ_QUANT_INT4_GROUP else 0
    p.static_scale = float(static_scale) if kind == _ffi.ROTQ_QUANT_FP8_TENSOR else 0.0
    p.rotate = None
    return p


def _check_int4_group(n, group_size):
    g = int(group_size)
    if g <= 0 or n % g != 0 or n % 2 != 0:
        raise error(_ffi.ROTQ_ERR_INVALID_GROUP,
                    f"int4 group_size {g} must be 32, 64 or 128 and divide the last dim {n}")


class _QuantCall:
    """The outputs, parameters and matrix views of a quantize call."""

    __slots__ = ("shape", "q", "scales", "row_sums", "p", "hp", "rsigns", "xv", "qv")


def _quantize_setup(ns, x, kind, group_size, static_scale, rotate):
    """The checks, outputs and views of a quantize call (shared by quantize and its
    workspace query)."""
    c = _QuantCall()
    c.shape = shape = ns.shape(x)
    if len(shape) == 0:
        raise bad_arg("quantize needs at least one dimension", _ffi.ROTQ_ERR_INVALID_SHAPE)
    xd = _dtype_or_raise(ns, x, "x")
    n = int(shape[-1])
    if n == 0:
        raise bad_arg("the last dim is 0", _ffi.ROTQ_ERR_INVALID_SHAPE)
    if kind == _ffi.ROTQ_QUANT_INT4_GROUP:
        _check_int4_group(n, group_size)
    q_shape, q_kind, s_shape, r_shape = quant_shapes(shape, kind, group_size)
    c.q = ns.empty(q_shape, q_kind, x)
    c.scales = ns.empty(s_shape, "f32", x) if s_shape is not None else None
    c.row_sums = ns.empty(r_shape, "i32", x) if r_shape is not None else None

    c.p = _quant_params(kind, group_size, static_scale)
    c.hp = c.rsigns = None
    if rotate is not None:
        c.hp, c.rsigns = _hadamard_params(ns, x, n, *rotate)
        c.p.rotate = ctypes.pointer(c.hp)

    c.xv = view(ns, x, xd)
    q_code = {"i8": _ffi.ROTQ_DTYPE_I8, "fp8": _ffi.ROTQ_DTYPE_FP8_E4M3,
              "u8": _ffi.ROTQ_DTYPE_I4X2}[q_kind]
    c.qv = view(ns, c.q, q_code, packed=(q_kind == "u8"))
    return c


def _quantize_empty(c, kind, static_scale):
    """No rows: reject what the library would reject."""
    if c.hp is not None:
        resolve(c.hp.size, c.hp.factor)
    if kind == _ffi.ROTQ_QUANT_FP8_TENSOR:
        s = float(static_scale)
        if not (math.isfinite(s) and s > 0):
            raise error(_ffi.ROTQ_ERR_INVALID_SCALE, f"static_scale {s}")


def quantize(ns, x, kind, group_size, static_scale, rotate):
    """Returns (q, scales, row_sums). ``rotate`` is None or a tuple
    (size, factor, transpose, scale, signs) with signs as for hadamard_into."""
    c = _quantize_setup(ns, x, kind, group_size, static_scale, rotate)
    xv = c.xv
    if xv.rows == 0:
        _quantize_empty(c, kind, static_scale)
        return c.q, c.scales, c.row_sums

    ex, guard = ns.exec_for(x, _threads)
    xm = xv.as_matrix()
    qm = c.qv.as_matrix()
    sp = ns.ptr(c.scales) if c.scales is not None else None
    rp = ns.ptr(c.row_sums) if c.row_sums is not None else None
    workspace = [None]

    def run():
        xm.data, xm.stride = xv.ptr, xv.stride
        # A CUDA fallback path's scratch (as in hadamard_into); without a rotation
        # the plain kernels need none, so no query.
        if rotate is not None:
            workspace[0] = ns.workspace(ex, x, lambda nbytes: _ffi.lib.rotq_quantize_workspace_size(
                ctypes.byref(ex), ctypes.byref(c.p), ctypes.byref(xm), ctypes.byref(qm), nbytes))
        return _ffi.lib.rotq_quantize(ctypes.byref(ex), ctypes.byref(c.p), ctypes.byref(xm),
                                      ctypes.byref(qm), sp, rp)

    with guard:
        st = run()
        if st == _ffi.ROTQ_ERR_MISALIGNED:
            refresh(ns, xv, ns.fresh_copy(xv.arr))
            st = run()
        check(st, "rotq_quantize", f"kind {kind}, shape {tuple(c.shape)}")
    return c.q, c.scales, c.row_sums


def quantize_workspace_size(ns, x, kind, group_size, static_scale, rotate):
    """The device workspace (bytes) that quantize(ns, x, ...) passes to the
    library: 0 on the CPU and wherever a fused kernel takes the call."""
    c = _quantize_setup(ns, x, kind, group_size, static_scale, rotate)
    if c.xv.rows == 0:
        _quantize_empty(c, kind, static_scale)
        return 0
    ex, guard = ns.exec_for(x, _threads)

    def query():
        return _size_query(_ffi.lib.rotq_quantize_workspace_size, ctypes.byref(ex),
                           ctypes.byref(c.p), ctypes.byref(c.xv.as_matrix()),
                           ctypes.byref(c.qv.as_matrix()))

    with guard:
        st, nbytes = query()
        if st == _ffi.ROTQ_ERR_MISALIGNED:
            refresh(ns, c.xv, ns.fresh_copy(c.xv.arr))
            st, nbytes = query()
        check(st, "rotq_quantize_workspace_size", f"kind {kind}, shape {tuple(c.shape)}")
    return nbytes


def dequantize(ns, q, scales, kind, group_size, static_scale, out_dtype):
    shape = ns.shape(q)
    if len(shape) == 0:
        raise bad_arg("dequantize needs at least one dimension", _ffi.ROTQ_ERR_INVALID_SHAPE)
    packed = kind == _ffi.ROTQ_QUANT_INT4_GROUP
    q_code = {
        _ffi.ROTQ_QUANT_INT8_ROW: _ffi.ROTQ_DTYPE_I8,
        _ffi.ROTQ_QUANT_FP8_ROW: _ffi.ROTQ_DTYPE_FP8_E4M3,
        _ffi.ROTQ_QUANT_FP8_TENSOR: _ffi.ROTQ_DTYPE_FP8_E4M3,
        _ffi.ROTQ_QUANT_INT4_GROUP: _ffi.ROTQ_DTYPE_I4X2,
    }[kind]
    if not ns.is_byte_dtype(q, q_code):
        raise error(_ffi.ROTQ_ERR_UNSUPPORTED_DTYPE,
                    f"q has dtype {ns.dtype_str(q)}, which does not hold this kind's codes "
                    "(int8: int8; fp8: uint8 or float8_e4m3fn; int4: uint8 packed pairs)")
    lead = tuple(int(s) for s in shape[:-1])
    n = int(shape[-1]) * (2 if packed else 1)
    if n == 0:
        raise bad_arg("the last dim is 0", _ffi.ROTQ_ERR_INVALID_SHAPE)
    rows = 1
    for s in lead:
        rows *= s
    if kind == _ffi.ROTQ_QUANT_INT4_GROUP:
        _check_int4_group(n, group_size)
        nscales = rows * (n // int(group_size))
    elif kind == _ffi.ROTQ_QUANT_FP8_TENSOR:
        nscales = 0
    else:
        nscales = rows

    sv = None
    if kind != _ffi.ROTQ_QUANT_FP8_TENSOR:
        if scales is None:
            raise error(_ffi.ROTQ_ERR_NULL_POINTER, "dequantize needs the scales from quantize")
        sv = ns.f32_contig(scales, q)
        if ns.numel(sv) != nscales:
            raise bad_arg(f"scales has {ns.numel(sv)} elements, expected {nscales} "
                          f"(rows {rows} x groups {nscales // max(rows, 1)})",
                          _ffi.ROTQ_ERR_INVALID_SHAPE)
    y = ns.empty(lead + (n,), out_dtype, q)
    yd = _dtype_or_raise(ns, y, "dtype")
    p = _quant_params(kind, group_size, static_scale if static_scale is not None else 0.0)
    if kind == _ffi.ROTQ_QUANT_FP8_TENSOR and static_scale is None:
        raise error(_ffi.ROTQ_ERR_INVALID_SCALE, "kind 'fp8_static' needs static_scale")
    qv = view(ns, ns.as_bytes(q) if q_code != _ffi.ROTQ_DTYPE_I8 else q, q_code, packed=packed)
    yv = view(ns, y, yd)
    if qv.rows == 0:
        return y
    ex, guard = ns.exec_for(q, _threads)
    qm = qv.as_matrix()
    ym = yv.as_matrix()
    holder = [sv]

    def run():
        qm.data, qm.stride = qv.ptr, qv.stride
        spp = ns.ptr(holder[0]) if holder[0] is not None else None
        return _ffi.lib.rotq_dequantize(ctypes.byref(ex), ctypes.byref(p), ctypes.byref(qm),
                                        spp, ctypes.byref(ym))

    with guard:
        st = run()
        if st == _ffi.ROTQ_ERR_MISALIGNED:
            refresh(ns, qv, ns.fresh_copy(qv.arr), packed=packed)
            if holder[0] is not None:
                holder[0] = ns.fresh_copy(holder[0])
            st = run()
        check(st, "rotq_dequantize", f"kind {kind}, shape {tuple(shape)}")
    return y
