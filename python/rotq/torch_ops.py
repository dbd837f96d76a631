"""torch custom ops around librotq (imported only when torch is used).

Registered with ``torch.library.custom_op`` (torch >= 2.4) plus fake (meta)
implementations, so the calls are single opaque nodes under torch.compile
(fullgraph works) and can be captured in CUDA graphs (the kernels are enqueued
on ``torch.cuda.current_stream()``):

  torch.ops.rotq.hadamard_transform(x, scale) -> Tensor          (power of two)
  torch.ops.rotq.hadamard(x, size, factor, transpose, scale, signs) -> Tensor
  torch.ops.rotq.hadamard_out(x, out!, size, factor, transpose, scale, signs)
  torch.ops.rotq.hadamard_inplace(x!, size, factor, transpose, scale, signs)
  torch.ops.rotq.quantize(x, kind, group_size, static_scale, rotate, rot_size,
                          rot_factor, rot_transpose, rot_scale, rot_signs)
        -> (q, scales, row_sums)    (empty scales / row_sums where there are none)
  torch.ops.rotq.dequantize(q, scales, kind, group_size, static_scale, dtype) -> Tensor

The CUDA calls that go through an fp32 buffer (rotq_*_workspace_size > 0) get it as
a uint8 tensor from torch's caching allocator (TorchNS.workspace), passed as the
library's caller-owned workspace: torch owns the memory, and under CUDA-graph
capture it comes from the graph's pool.

hadamard_transform and hadamard are differentiable (the adjoint of
y = s * M * diag(signs) * x is signs .* (s * M^T * g); M^T only swaps H_K for H_K^T).
With an older torch the same functions run eagerly without registration.

``factor`` and ``kind`` are the C enum values (rotq._ffi); the friendlier
Python API is rotq.hadamard / rotq.quantize / ..., which route tensors here.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from . import _core, _ffi
from ._torch_ns import FP8_DTYPE, TorchNS as _NS

Tensor = torch.Tensor

HAS_CUSTOM_OP = hasattr(torch, "library") and hasattr(torch.library, "custom_op") and \
    hasattr(torch.library, "register_fake")

_POW2 = _ffi.ROTQ_HADAMARD_FACTOR_POW2


# ---------------------------------------------------------------------------
# eager implementations
# ---------------------------------------------------------------------------

def _hadamard_transform_impl(x: Tensor, scale: float) -> Tensor:
    n = int(x.shape[-1]) if x.dim() else 0
    _core.check_pow2(n)
    return _core.hadamard(_NS, x, n, _POW2, False, scale, None)


def _hadamard_impl(x: Tensor, size: int, factor: int, transpose: bool, scale: float,
                   signs: Optional[Tensor]) -> Tensor:
    return _core.hadamard(_NS, x, size, factor, transpose, scale, signs)


def _hadamard_out_impl(x: Tensor, out: Tensor, size: int, factor: int, transpose: bool,
                       scale: float, signs: Optional[Tensor]) -> None:
    if out.device != x.device:
        raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT,
                         f"out is on {out.device}, x on {x.device}")
    _core.hadamard_into(_NS, x, out, size, factor, transpose, scale, signs)


def _hadamard_inplace_impl(x: Tensor, size: int, factor: int, transpose: bool, scale: float,
                           signs: Optional[Tensor]) -> None:
    _core.hadamard_into(_NS, x, x, size, factor, transpose, scale, signs)


def _empty_like_none(x: Tensor, dtype) -> Tensor:
    return torch.empty((0,), dtype=dtype, device=x.device)


def _quantize_impl(x: Tensor, kind: int, group_size: int, static_scale: float, rotate: bool,
                   rot_size: int, rot_factor: int, rot_transpose: bool, rot_scale: float,
                   rot_signs: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor]:
    rot = (rot_size, rot_factor, rot_transpose, rot_scale, rot_signs) if rotate else None
    q, s, r = _core.quantize(_NS, x, kind, group_size, static_scale, rot)
    if s is None:
        s = _empty_like_none(x, torch.float32)
    if r is None:
        r = _empty_like_none(x, torch.int32)
    return q, s, r


def _dequantize_impl(q: Tensor, scales: Optional[Tensor], kind: int, group_size: int,
                     static_scale: float, dtype: torch.dtype) -> Tensor:
    static = static_scale if kind == _ffi.ROTQ_QUANT_FP8_TENSOR else None
    return _core.dequantize(_NS, q, scales, kind, group_size, static, dtype)


# ---------------------------------------------------------------------------
# fake (meta) implementations: shapes and dtypes only
# ---------------------------------------------------------------------------

def _q_dtype(kind):
    if kind == _ffi.ROTQ_QUANT_INT8_ROW:
        return torch.int8
    if kind == _ffi.ROTQ_QUANT_INT4_GROUP:
        return torch.uint8
    return FP8_DTYPE if FP8_DTYPE is not None else torch.uint8


def _quantize_fake(x, kind, group_size, static_scale, rotate, rot_size, rot_factor,
                   rot_transpose, rot_scale, rot_signs):
    q_shape, _, s_shape, r_shape = _core.quant_shapes(tuple(x.shape), kind, group_size)
    q = x.new_empty(q_shape, dtype=_q_dtype(kind))
    s = x.new_empty(s_shape if s_shape is not None else (0,), dtype=torch.float32)
    r = x.new_empty(r_shape if r_shape is not None else (0,), dtype=torch.int32)
    return q, s, r


def _dequantize_fake(q, scales, kind, group_size, static_scale, dtype):
    shape = tuple(q.shape)
    n = shape[-1] * (2 if kind == _ffi.ROTQ_QUANT_INT4_GROUP else 1)
    return q.new_empty(shape[:-1] + (n,), dtype=dtype)


# ---------------------------------------------------------------------------
# registration
# ---------------------------------------------------------------------------

if HAS_CUSTOM_OP:
    @torch.library.custom_op("rotq::hadamard_transform", mutates_args=())
    def hadamard_transform_op(x: Tensor, scale: float) -> Tensor:
        return _hadamard_transform_impl(x, scale)

    @hadamard_transform_op.register_fake
    def _(x, scale):
        n = int(x.shape[-1]) if x.dim() else 0
        _core.check_pow2(n)
        return x.new_empty(x.shape)

    @torch.library.custom_op("rotq::hadamard", mutates_args=())
    def hadamard_op(x: Tensor, size: int, factor: int, transpose: bool, scale: float,
                    signs: Optional[Tensor]) -> Tensor:
        return _hadamard_impl(x, size, factor, transpose, scale, signs)

    @hadamard_op.register_fake
    def _(x, size, factor, transpose, scale, signs):
        return x.new_empty(x.shape)

    @torch.library.custom_op("rotq::hadamard_out", mutates_args=("out",))
    def hadamard_out_op(x: Tensor, out: Tensor, size: int, factor: int, transpose: bool,
                        scale: float, signs: Optional[Tensor]) -> None:
        _hadamard_out_impl(x, out, size, factor, transpose, scale, signs)

    @hadamard_out_op.register_fake
    def _(x, out, size, factor, transpose, scale, signs):
        return None

    @torch.library.custom_op("rotq::hadamard_inplace", mutates_args=("x",))
    def hadamard_inplace_op(x: Tensor, size: int, factor: int, transpose: bool, scale: float,
                            signs: Optional[Tensor]) -> None:
        _hadamard_inplace_impl(x, size, factor, transpose, scale, signs)

    @hadamard_inplace_op.register_fake
    def _(x, size, factor, transpose, scale, signs):
        return None

    @torch.library.custom_op("rotq::quantize", mutates_args=())
    def quantize_op(x: Tensor, kind: int, group_size: int, static_scale: float, rotate: bool,
                    rot_size: int, rot_factor: int, rot_transpose: bool, rot_scale: float,
                    rot_signs: Optional[Tensor]) -> Tuple[Tensor, Tensor, Tensor]:
        return _quantize_impl(x, kind, group_size, static_scale, rotate, rot_size, rot_factor,
                              rot_transpose, rot_scale, rot_signs)

    quantize_op.register_fake(_quantize_fake)

    @torch.library.custom_op("rotq::dequantize", mutates_args=())
    def dequantize_op(q: Tensor, scales: Optional[Tensor], kind: int, group_size: int,
                      static_scale: float, dtype: torch.dtype) -> Tensor:
        return _dequantize_impl(q, scales, kind, group_size, static_scale, dtype)

    dequantize_op.register_fake(_dequantize_fake)

    # ---- autograd ----
    def _ht_setup(ctx, inputs, output):
        ctx.scale = inputs[1]

    def _ht_backward(ctx, grad):
        return hadamard_transform_op(grad, ctx.scale), None

    hadamard_transform_op.register_autograd(_ht_backward, setup_context=_ht_setup)

    def _h_setup(ctx, inputs, output):
        x, size, factor, transpose, scale, signs = inputs
        ctx.args = (size, factor, not transpose, scale)
        ctx.has_signs = signs is not None
        if signs is not None:
            ctx.save_for_backward(signs)

    def _h_backward(ctx, grad):
        size, factor, transpose, scale = ctx.args
        g = hadamard_op(grad, size, factor, transpose, scale, None)
        if ctx.has_signs:
            (signs,) = ctx.saved_tensors
            g = g * torch.where(signs < 0, -1, 1).to(device=g.device, dtype=g.dtype)
        return g, None, None, None, None, None

    hadamard_op.register_autograd(_h_backward, setup_context=_h_setup)

else:  # pragma: no cover - torch < 2.4: eager only, no autograd
    def hadamard_transform_op(x, scale):
        return _hadamard_transform_impl(x.detach(), float(scale))

    def hadamard_op(x, size, factor, transpose, scale, signs):
        return _hadamard_impl(x.detach(), size, factor, transpose, scale, signs)

    def hadamard_out_op(x, out, size, factor, transpose, scale, signs):
        _hadamard_out_impl(x.detach(), out, size, factor, transpose, scale, signs)

    def hadamard_inplace_op(x, size, factor, transpose, scale, signs):
        _hadamard_inplace_impl(x, size, factor, transpose, scale, signs)

    def quantize_op(x, kind, group_size, static_scale, rotate, rot_size, rot_factor,
                    rot_transpose, rot_scale, rot_signs):
        return _quantize_impl(x.detach(), kind, group_size, static_scale, rotate, rot_size,
                              rot_factor, rot_transpose, rot_scale, rot_signs)

    def dequantize_op(q, scales, kind, group_size, static_scale, dtype):
        return _dequantize_impl(q, scales, kind, group_size, static_scale, dtype)


# ---------------------------------------------------------------------------
# helpers used by the public rotq functions
# ---------------------------------------------------------------------------

def _pick_factor(n: int, order) -> int:
    return _core.pick_factor(n, order)


# Evaluated at trace time under torch.compile (it is a ctypes call).
_assume_const = getattr(getattr(torch, "_dynamo", None), "assume_constant_result", None)
pick_factor_const = _assume_const(_pick_factor) if _assume_const is not None else _pick_factor


def _signs_tensor(signs, x):
    """signs as an int8 tensor on x's device (None stays None)."""
    if signs is None:
        return None
    if not isinstance(signs, torch.Tensor):
        import numpy as np
        signs = torch.as_tensor(np.asarray(signs))
    return _NS.signs_int8(signs, x, int(x.shape[-1]))


def hadamard_transform(x, scale=1.0):
    return hadamard_transform_op(x, float(scale))


def hadamard(x, size, factor, transpose, scale, signs=None, out=None, inplace=False):
    signs = _signs_tensor(signs, x)
    if inplace:
        hadamard_inplace_op(x, int(size), int(factor), bool(transpose), float(scale), signs)
        return x
    if out is not None:
        if not isinstance(out, torch.Tensor):
            raise _ffi.error(_ffi.ROTQ_ERR_INVALID_ARGUMENT, "out must be a tensor like x")
        if tuple(out.shape) != tuple(x.shape):
            raise _ffi.error(_ffi.ROTQ_ERR_INVALID_SHAPE,
                             f"out has shape {tuple(out.shape)}, expected {tuple(x.shape)}")
        hadamard_out_op(x, out, int(size), int(factor), bool(transpose), float(scale), signs)
        return out
    return hadamard_op(x, int(size), int(factor), bool(transpose), float(scale), signs)


def quantize(x, kind, group_size, static_scale, rot):
    if rot is None:
        args = (False, 0, 0, False, 1.0, None)
    else:
        size, factor, transpose, scale, signs = rot
        args = (True, int(size), int(factor), bool(transpose), float(scale),
                _signs_tensor(signs, x))
    q, s, r = quantize_op(x, int(kind), int(group_size), float(static_scale), *args)
    if kind == _ffi.ROTQ_QUANT_FP8_TENSOR:
        s = None
    if kind != _ffi.ROTQ_QUANT_INT8_ROW:
        r = None
    return q, s, r


def hadamard_workspace_size(x, size, factor, transpose, scale, signs=None, out=None,
                            inplace=False):
    """rotq.hadamard_workspace_size for a tensor (a host-side query, not an op)."""
    signs = _signs_tensor(signs, x)
    if inplace:
        out = x
    elif out is None:
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
    return _core.hadamard_workspace_size(_NS, x, out, int(size), int(factor), bool(transpose),
                                         float(scale), signs)


def quantize_workspace_size(x, kind, group_size, static_scale, rot):
    """rotq.quantize_workspace_size for a tensor (a host-side query, not an op)."""
    if rot is not None:
        size, factor, transpose, scale, signs = rot
        rot = (int(size), int(factor), bool(transpose), float(scale), _signs_tensor(signs, x))
    return _core.quantize_workspace_size(_NS, x, int(kind), int(group_size), float(static_scale),
                                         rot)


_DTYPE_NAMES = {
    "float32": torch.float32, "float": torch.float32, "f32": torch.float32,
    "float16": torch.float16, "half": torch.float16, "f16": torch.float16,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
}


def _torch_dtype(dtype):
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str) and dtype in _DTYPE_NAMES:
        return _DTYPE_NAMES[dtype]
    try:
        import numpy as np
        name = np.dtype(dtype).name
        if name in _DTYPE_NAMES:
            return _DTYPE_NAMES[name]
    except TypeError:
        pass
    raise _ffi.error(_ffi.ROTQ_ERR_UNSUPPORTED_DTYPE, f"dtype {dtype!r}")


def dequantize(q, scales, kind, group_size, static_scale, dtype=None):
    if scales is not None and not isinstance(scales, torch.Tensor):
        import numpy as np
        scales = torch.as_tensor(np.asarray(scales, dtype=np.float32))
    if scales is not None and (scales.device != q.device or scales.dtype != torch.float32):
        scales = scales.to(device=q.device, dtype=torch.float32)
    if kind == _ffi.ROTQ_QUANT_FP8_TENSOR:
        scales = None
    return dequantize_op(q, scales, int(kind), int(group_size), float(static_scale),
                         _torch_dtype(dtype))


__all__ = [
    "HAS_CUSTOM_OP", "hadamard_transform_op", "hadamard_op", "hadamard_out_op",
    "hadamard_inplace_op", "quantize_op", "dequantize_op",
]
