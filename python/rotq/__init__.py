"""rotq: kernels for rotated, low-precision LLM inference (ctypes bindings).

Functions take numpy arrays (CPU backend) or torch tensors (CPU tensors on the
CPU backend, CUDA tensors on the CUDA backend on torch's current stream). torch
is optional; with torch the calls go through torch.library custom ops
(``torch.ops.rotq.*``) so they work under torch.compile and CUDA graphs.

``hadamard_transform(x, scale)`` is a drop-in for
``fast_hadamard_transform.hadamard_transform`` (unnormalized Sylvester
transform over the last dimension, times ``scale``) for power-of-two sizes.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from . import _core, _ffi
from ._ffi import RotqError, library_path
from ._numpy_ns import NumpyNS as _NP

__version__ = "0.2.0"

__all__ = [
    "RotqError",
    "hadamard_transform",
    "hadamard_transform_k",
    "hadamard",
    "quantize",
    "dequantize",
    "hadamard_workspace_size",
    "quantize_workspace_size",
    "hadamard_factor_matrix",
    "hadamard_factors",
    "pick_factor",
    "version",
    "build_info",
    "cuda_available",
    "cuda_device_count",
    "library_path",
    "set_num_threads",
    "get_num_threads",
]

set_num_threads = _core.set_num_threads
get_num_threads = _core.get_num_threads

_INT32_MAX = 2**31 - 1


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _is_torch(x):
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def _torch_ops():
    from . import torch_ops  # imports torch; only reached with a torch tensor
    return torch_ops


def _as_numpy(x, what="x"):
    if isinstance(x, np.ndarray):
        return x
    try:
        return np.asarray(x)
    except Exception as e:  # pragma: no cover
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT,
                         f"{what} must be a numpy array or a torch tensor") from e


def _last_dim(x):
    if len(x.shape) == 0:
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_SHAPE, "x must have at least one dimension")
    return int(x.shape[-1])


def _int32(v, what, status):
    try:
        iv = int(v)
    except (TypeError, ValueError):
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT, f"{what} must be an integer, got {v!r}")
    if iv != v or not (-_INT32_MAX - 1 <= iv <= _INT32_MAX):
        raise _ffi.error(status, f"{what} = {v!r} is out of range")
    return iv


def _size_arg(size, n):
    if size is None:
        return n
    size = _int32(size, "size", _ffi.ROTQ_ERR_UNSUPPORTED_SIZE)
    if size <= 0:
        raise _ffi.error(_ffi.ROTQ_ERR_UNSUPPORTED_SIZE, f"size = {size}")
    return size


def _factor_arg(k):
    if k is None:
        return _ffi.ROTQ_HADAMARD_FACTOR_AUTO
    k = _int32(k, "k", _ffi.ROTQ_ERR_INVALID_FACTOR)
    if k < 0:
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_FACTOR, f"k = {k}")
    return k  # 0 = AUTO, 1 = power of two (ROTQ_HADAMARD_FACTOR_POW2), else K


def _pick_for(n, order, is_torch):
    """K for size n by ``order``; 0 (AUTO: the library picks by QuaRot's order)
    for 'quarot'. With torch the lookup is a trace-time constant under
    torch.compile (ctypes calls cannot be traced)."""
    if order in ("quarot", _ffi.ROTQ_ORDER_QUAROT):
        return _ffi.ROTQ_HADAMARD_FACTOR_AUTO
    if is_torch:
        return _torch_ops().pick_factor_const(int(n), order)
    return pick_factor(n, order)


def _default_scale(scale, size):
    if scale is None:
        return 1.0 / math.sqrt(size) if size > 0 else 1.0
    return float(scale)


# ---------------------------------------------------------------------------
# Hadamard
# ---------------------------------------------------------------------------

def hadamard_transform(x, scale=1.0):
    """``scale * (x @ H_n)`` over the last dim n, H_n the unnormalized Sylvester
    (natural order, scipy.linalg.hadamard) matrix. n must be a power of two
    <= 32768. Returns a new array/tensor of x's shape and dtype.

    Drop-in for ``fast_hadamard_transform.hadamard_transform`` (pass
    ``scale=1/sqrt(n)`` for the orthonormal transform); differentiable for torch
    tensors (the backward is the same transform).
    """
    if _is_torch(x):
        return _torch_ops().hadamard_transform(x, scale)
    x = _as_numpy(x)
    n = _last_dim(x)
    _core.check_pow2(n)
    return _core.hadamard(_NP, x, n, _ffi.ROTQ_HADAMARD_FACTOR_POW2, False, float(scale), None)


def hadamard_transform_k(x, k=None, scale=None, transpose=False, order="quarot"):
    """``scale * (H_K (x) H_{2^m})`` over the last dim n = K*2^m, with H_K one of
    the QuaRot/SpinQuant/QuIP# factor matrices (the K index is the slow one, as in
    QuaRot's ``matmul_hadU``). ``k=None`` picks K as ``order`` ('quarot',
    'spinquant', 'quipsharp') would; ``k=1`` requires a power of two.
    ``scale=None`` means 1/sqrt(n) (orthonormal). ``transpose`` uses H_K^T
    (the inverse direction, up to the scale, when H_K is not symmetric).
    """
    n = _last_dim(x)
    is_torch = _is_torch(x)
    if k is None:
        k = _pick_for(n, order, is_torch)
    factor = _factor_arg(k)
    scale = _default_scale(scale, n)
    if is_torch:
        return _torch_ops().hadamard(x, size=n, factor=factor, transpose=bool(transpose),
                                     scale=scale, signs=None)
    x = _as_numpy(x)
    return _core.hadamard(_NP, x, n, factor, bool(transpose), scale, None)


def _hadamard_args(x, size, scale, k, out, inplace):
    """hadamard's arguments checked and converted: (size, factor, scale)."""
    size = _size_arg(size, _last_dim(x))
    factor = _factor_arg(k)
    scale = _default_scale(scale, size)
    if inplace and out is not None:
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT, "pass either out= or inplace=True")
    return size, factor, scale


def hadamard(x, size=None, scale=None, signs=None, k=None, transpose=False, out=None,
             inplace=False):
    """The general transform: ``y = scale * (H_K (x) H_{2^m}) (signs .* x)`` on each
    consecutive block of ``size`` elements of the last dim (block-diagonal when
    ``size`` < last dim; size must divide it).

    size:      block size, default the last dim; K*2^m or a power of two.
    scale:     default 1/sqrt(size).
    signs:     optional vector of +-1 (any int/float dtype; negative flips),
               one per element of the last dim, applied before the transform.
    k:         None/0: K chosen by QuaRot's order; 1: size must be a power of
               two; otherwise the factor K (12, 20, 28, ..., 172).
    transpose: use H_K^T.
    out:       optional output array of x's shape (float32/float16/bfloat16).
    inplace:   write the result into x (returns x).
    """
    size, factor, scale = _hadamard_args(x, size, scale, k, out, inplace)
    if _is_torch(x):
        return _torch_ops().hadamard(x, size=size, factor=factor, transpose=bool(transpose),
                                     scale=scale, signs=signs, out=out, inplace=inplace)
    x = _as_numpy(x)
    out = _np_hadamard_out(x, out, inplace)
    if out is not None:
        return _core.hadamard_into(_NP, x, out, size, factor, bool(transpose), scale, signs)
    return _core.hadamard(_NP, x, size, factor, bool(transpose), scale, signs)


def _np_hadamard_out(x, out, inplace):
    """hadamard's output for a numpy x: x itself (inplace), the caller's out
    (checked: a writable numpy array), or None for a new array."""
    if inplace:
        out = x
    if out is not None:
        if _is_torch(out) or not isinstance(out, np.ndarray):
            raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT, "out must be a numpy array like x")
        if not out.flags.writeable:
            raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT, "out (or x with inplace) is read-only")
    return out


# ---------------------------------------------------------------------------
# Quantization
# ---------------------------------------------------------------------------

_ROTATE_KEYS = {"size", "signs", "k", "transpose", "scale", "order"}


def _rotate_arg(rotate, n, is_torch=False):
    """None, or (size, factor, transpose, scale, signs)."""
    if rotate is None or rotate is False:
        return None
    if rotate is True:
        rotate = {}
    if not isinstance(rotate, dict):
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT,
                         "rotate must be None, True or a dict(size=, signs=, k=, transpose=, "
                         "scale=, order=)")
    unknown = set(rotate) - _ROTATE_KEYS
    if unknown:
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT,
                         f"unknown rotate keys {sorted(unknown)}; allowed: {sorted(_ROTATE_KEYS)}")
    size = _size_arg(rotate.get("size"), n)
    k = rotate.get("k")
    if k is None:
        k = _pick_for(size, rotate.get("order", "quarot"), is_torch)
    factor = _factor_arg(k)
    scale = _default_scale(rotate.get("scale"), size)
    return (size, factor, bool(rotate.get("transpose", False)), scale, rotate.get("signs"))


def _static_scale_arg(kind, static_scale):
    if kind == _ffi.ROTQ_QUANT_FP8_TENSOR:
        if static_scale is None:
            raise _ffi.error(_ffi.ROTQ_ERR_INVALID_SCALE, "kind 'fp8_static' needs static_scale")
        return float(static_scale)
    if static_scale is not None:
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT,
                         "static_scale is only used by kind='fp8_static'")
    return 0.0


def quantize(x, kind="int8", group_size=128, static_scale=None, rotate=None):
    """Symmetric quantization of each row (last dim) of x, optionally rotated first.

    kind:
      'int8'       per row: scale = absmax/127, q int8 in [-127, 127]
      'fp8'        per row: scale = absmax/448, q fp8 e4m3 (OCP, saturating)
      'fp8_static' q = e4m3(x / static_scale); no scales returned
      'int4'       per group of ``group_size`` (32, 64, 128) along the row:
                   scale = absmax/7, q in [-7, 7], packed two per byte (even index
                   in the low nibble) into uint8 of shape (..., n/2)
    rotate: None, True (full-row Hadamard, orthonormal, K chosen by QuaRot's
      order) or dict(size=, signs=, k=, transpose=, scale=, order=) as for
      :func:`hadamard`.

    Returns (q, scales, row_sums):
      q        (..., n) int8 / fp8 codes (numpy: uint8; torch: float8_e4m3fn
               when available), or (..., n/2) uint8 for int4;
      scales   float32 (..., 1) per row, or (..., n/group_size) for int4;
               None for fp8_static;
      row_sums int32 (...,) sums of q per row for int8, else None.
    Formats and rounding: docs/formats.md (round-to-nearest-even, absmax over
    finite values, NaN -> 0 for integers).
    """
    args = _quantize_args(x, kind, group_size, static_scale, rotate)
    if _is_torch(x):
        return _torch_ops().quantize(x, *args)
    return _core.quantize(_NP, _as_numpy(x), *args)


def _quantize_args(x, kind, group_size, static_scale, rotate):
    """quantize's arguments checked and converted: (kind, group_size, static, rot)."""
    kind = _core.kind_code(kind)
    rot = _rotate_arg(rotate, _last_dim(x), _is_torch(x))
    static = _static_scale_arg(kind, static_scale)
    group_size = _int32(group_size, "group_size", _ffi.ROTQ_ERR_INVALID_GROUP)
    return kind, group_size, static, rot


def _np_out_dtype(dtype):
    if dtype is None:
        return np.dtype(np.float32)
    t = sys.modules.get("torch")
    if t is not None and isinstance(dtype, t.dtype):
        dtype = str(dtype).replace("torch.", "")
    if isinstance(dtype, str) and dtype in ("bfloat16", "bf16"):
        bf = _NP.empty((0,), "bf16", None).dtype if _has_ml_dtypes() else None
        if bf is None:
            raise _ffi.error(_ffi.ROTQ_ERR_UNSUPPORTED_DTYPE,
                             "numpy has no bfloat16 (install ml_dtypes, or use torch tensors)")
        return bf
    try:
        return np.dtype(dtype)
    except TypeError as e:
        raise _ffi.error(_ffi.ROTQ_ERR_UNSUPPORTED_DTYPE, f"dtype {dtype!r}") from e


def _has_ml_dtypes():
    try:
        import ml_dtypes  # noqa: F401
        return True
    except Exception:
        return False


def dequantize(q, scales, kind="int8", group_size=128, static_scale=None, dtype=None):
    """y = q * scale, the inverse of :func:`quantize` without the rotation.

    q, scales as returned by quantize (scales may be any float array with
    rows*groups elements; ignored for 'fp8_static', which needs static_scale).
    dtype: None (float32), float32, float16 or bfloat16 (torch, or numpy with
    ml_dtypes); numpy dtypes, torch dtypes and names are accepted.
    """
    kind = _core.kind_code(kind)
    static = _static_scale_arg(kind, static_scale)
    group_size = _int32(group_size, "group_size", _ffi.ROTQ_ERR_INVALID_GROUP)
    if _is_torch(q):
        return _torch_ops().dequantize(q, scales, kind, group_size, static, dtype)
    q = _as_numpy(q, "q")
    if _is_torch(scales):
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT, "q is a numpy array but scales a tensor")
    return _core.dequantize(_NP, q, scales, kind, group_size,
                            static if kind == _ffi.ROTQ_QUANT_FP8_TENSOR else None,
                            _np_out_dtype(dtype))


# ---------------------------------------------------------------------------
# Workspace queries
# ---------------------------------------------------------------------------

def hadamard_workspace_size(x, size=None, scale=None, signs=None, k=None, transpose=False,
                            out=None, inplace=False):
    """Bytes of device workspace that ``hadamard(x, ...)`` with the same arguments
    uses (rotq_hadamard_workspace_size): 0 for numpy arrays and CPU tensors, and
    for every CUDA size a one-pass kernel takes; > 0 for the K*2^m sizes that take
    two passes through an fp32 buffer (e.g. 12*4096; 52*1024 in place). The call allocates
    that buffer itself, as a torch tensor (informational: for memory planning).
    Raises RotqError for arguments the call would reject."""
    size, factor, scale = _hadamard_args(x, size, scale, k, out, inplace)
    if _is_torch(x):
        return _torch_ops().hadamard_workspace_size(x, size=size, factor=factor,
                                                    transpose=bool(transpose), scale=scale,
                                                    signs=signs, out=out, inplace=inplace)
    x = _as_numpy(x)
    out = _np_hadamard_out(x, out, inplace)  # the call's own checks of out
    if out is None:
        out = _NP.empty(x.shape, x.dtype, x)
    return _core.hadamard_workspace_size(_NP, x, out, size, factor, bool(transpose), scale, signs)


def quantize_workspace_size(x, kind="int8", group_size=128, static_scale=None, rotate=None):
    """Bytes of device workspace that ``quantize(x, ...)`` with the same arguments
    uses (rotq_quantize_workspace_size): 0 for numpy arrays and CPU tensors, and
    wherever a fused CUDA kernel takes the call; > 0 where the rotation goes
    through an fp32 buffer first (e.g. a K*2^m rotation of float32 input, a
    block-diagonal K*2^m rotation, rows too long for the fused kernels; the
    full list: docs/api.md, "Workspace"). The call allocates that buffer
    itself, as a torch tensor (informational).
    Raises RotqError for arguments the call would reject."""
    args = _quantize_args(x, kind, group_size, static_scale, rotate)
    if _is_torch(x):
        return _torch_ops().quantize_workspace_size(x, *args)
    return _core.quantize_workspace_size(_NP, _as_numpy(x), *args)


# ---------------------------------------------------------------------------
# Factors, version, build
# ---------------------------------------------------------------------------

def hadamard_factor_matrix(k):
    """The K x K +-1 factor matrix H_K (int8 numpy array); K = 1 gives [[1]]."""
    return _core.factor_matrix(_int32(k, "k", _ffi.ROTQ_ERR_INVALID_FACTOR))


def hadamard_factors():
    """The supported factors K (ascending)."""
    return _core.factors()


def pick_factor(n, order="quarot"):
    """The K that ``order`` ('quarot', 'spinquant', 'quipsharp') uses for size n
    (1 for a power of two). RotqError ROTQ_ERR_UNSUPPORTED_SIZE if none."""
    return _core.pick_factor(_int32(n, "n", _ffi.ROTQ_ERR_UNSUPPORTED_SIZE), order)


def version():
    """Version string of the loaded librotq ("MAJOR.MINOR.PATCH")."""
    return _ffi.lib.rotq_version().decode()


def build_info():
    """One-line description of the loaded librotq build (backends, CUDA archs)."""
    return _ffi.lib.rotq_build_info().decode()


def cuda_available():
    """Whether librotq has the CUDA backend and a usable device."""
    return bool(_ffi.lib.rotq_backend_available(_ffi.ROTQ_BACKEND_CUDA))


def cuda_device_count():
    import ctypes
    c = ctypes.c_int(0)
    _ffi.check(_ffi.lib.rotq_cuda_device_count(ctypes.byref(c)), "rotq_cuda_device_count")
    return int(c.value)
