"""The torch "namespace" used by rotq._core: CPU tensors run on the CPU backend
(through data_ptr), CUDA tensors on the CUDA backend on torch's current stream."""

from __future__ import annotations

import contextlib
import ctypes

import torch

from . import _ffi
from ._ffi import RotqExec, error

FP8_DTYPE = getattr(torch, "float8_e4m3fn", None)

_KIND_DTYPES = {
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "i8": torch.int8,
    "u8": torch.uint8,
    "fp8": FP8_DTYPE if FP8_DTYPE is not None else torch.uint8,
    "i32": torch.int32,
}

_CODES = {
    torch.float32: _ffi.ROTQ_DTYPE_F32,
    torch.float16: _ffi.ROTQ_DTYPE_F16,
    torch.bfloat16: _ffi.ROTQ_DTYPE_BF16,
    torch.int8: _ffi.ROTQ_DTYPE_I8,
}
if FP8_DTYPE is not None:
    _CODES[FP8_DTYPE] = _ffi.ROTQ_DTYPE_FP8_E4M3


class TorchNS:
    name = "torch"

    @staticmethod
    def shape(a):
        return tuple(a.shape)

    @staticmethod
    def strides(a):
        return tuple(a.stride())

    @staticmethod
    def ptr(a):
        return a.data_ptr()

    @staticmethod
    def numel(a):
        return int(a.numel())

    @staticmethod
    def dtype_code(a):
        return _CODES.get(a.dtype)

    @staticmethod
    def dtype_str(a):
        return str(a.dtype)

    @staticmethod
    def dtype_of(a):
        return a.dtype

    @staticmethod
    def is_byte_dtype(q, code):
        dt = q.dtype
        if code == _ffi.ROTQ_DTYPE_I8:
            return dt == torch.int8
        if code == _ffi.ROTQ_DTYPE_FP8_E4M3:
            return dt == torch.uint8 or (FP8_DTYPE is not None and dt == FP8_DTYPE)
        if code == _ffi.ROTQ_DTYPE_I4X2:
            return dt in (torch.uint8, torch.int8)
        return False

    @staticmethod
    def as_bytes(q):
        return q if q.dtype == torch.uint8 else q.view(torch.uint8)

    @staticmethod
    def empty(shape, dtype, like):
        if isinstance(dtype, str):
            dtype = _KIND_DTYPES[dtype]
        return torch.empty(shape, dtype=dtype, device=like.device)

    @staticmethod
    def empty_like_contig(a):
        return torch.empty(a.shape, dtype=a.dtype, device=a.device)

    @staticmethod
    def contiguous(a):
        return a.contiguous()

    @staticmethod
    def fresh_copy(a):
        return a.clone(memory_format=torch.contiguous_format)

    @staticmethod
    def copy_(dst, src):
        dst.copy_(src)

    @staticmethod
    def same_array(a, b):
        if a is b:
            return True
        return (a.device == b.device and a.data_ptr() == b.data_ptr() and a.shape == b.shape
                and a.stride() == b.stride() and a.dtype == b.dtype)

    @staticmethod
    def exec_for(a, threads):
        dev = a.device
        if dev.type == "cpu":
            return RotqExec(_ffi.ROTQ_BACKEND_CPU, threads, None), contextlib.nullcontext()
        if dev.type == "cuda":
            stream = torch.cuda.current_stream(dev).cuda_stream
            return (RotqExec(_ffi.ROTQ_BACKEND_CUDA, threads, stream or None),
                    torch.cuda.device(dev))
        raise error(_ffi.ROTQ_ERR_BACKEND_UNAVAILABLE,
                    f"tensors on device {dev} are not supported (only cpu and cuda)")

    @staticmethod
    def workspace(ex, like, query):
        """Points ex at the device workspace a CUDA call needs, if any: ``query(p)``
        is the op's rotq_*_workspace_size with the call's arguments, writing the
        bytes to the size_t p. The buffer is a uint8 tensor from torch's caching
        allocator on ``like``'s device (aligned beyond the 256 bytes rotq asks for),
        so torch owns the memory and CUDA-graph capture draws it from the graph's
        pool. Returned to be held until the call is enqueued: freed after that,
        the allocator hands it out again only in the current stream's order, which
        is the call's. None (and ex without a workspace) when nothing is needed or
        the query fails (the call itself then reports the problem)."""
        ex.workspace = None
        ex.workspace_bytes = 0
        if ex.backend != _ffi.ROTQ_BACKEND_CUDA:
            return None
        n = ctypes.c_size_t(0)
        if query(ctypes.byref(n)) != _ffi.ROTQ_OK or n.value == 0:
            return None
        buf = torch.empty(n.value, dtype=torch.uint8, device=like.device)
        ex.workspace = buf.data_ptr()
        ex.workspace_bytes = n.value
        return buf

    @staticmethod
    def f32_contig(s, like):
        s = torch.as_tensor(s)
        return s.to(device=like.device, dtype=torch.float32).contiguous()

    @staticmethod
    def signs_int8(signs, like, n):
        s = signs if isinstance(signs, torch.Tensor) else torch.as_tensor(signs)
        if s.dtype == torch.bool or s.is_complex():
            raise error(_ffi.ROTQ_ERR_UNSUPPORTED_DTYPE,
                        f"signs must be an integer or float tensor of +-1, not {s.dtype}")
        if s.dim() != 1 or s.shape[0] != n:
            raise error(_ffi.ROTQ_ERR_INVALID_ARGUMENT,
                        f"signs must be a vector with one entry per element of the last dim "
                        f"({n}), got shape {tuple(s.shape)}")
        if s.dtype == torch.int8 and s.device == like.device and s.is_contiguous():
            return s
        s = s.to(like.device)
        return torch.where(s < 0, -1, 1).to(torch.int8).contiguous()
