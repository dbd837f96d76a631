"""The numpy "namespace" used by rotq._core: host arrays on the CPU backend."""

from __future__ import annotations

import contextlib

import numpy as np

from . import _ffi
from ._ffi import RotqExec, error

_KIND_DTYPES = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "i8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8),
    "fp8": np.dtype(np.uint8),  # numpy has no fp8: e4m3 codes as uint8
    "i32": np.dtype(np.int32),
}


def _bf16_dtype():
    try:
        import ml_dtypes  # optional
        return np.dtype(ml_dtypes.bfloat16)
    except Exception:  # pragma: no cover - optional dependency
        return None


class NumpyNS:
    name = "numpy"

    @staticmethod
    def shape(a):
        return tuple(a.shape)

    @staticmethod
    def strides(a):
        isz = a.itemsize
        if any(s % isz for s in a.strides):
            return None
        return tuple(s // isz for s in a.strides)

    @staticmethod
    def ptr(a):
        return a.__array_interface__["data"][0]

    @staticmethod
    def numel(a):
        return int(a.size)

    @staticmethod
    def dtype_code(a):
        dt = a.dtype
        if dt == np.float32:
            return _ffi.ROTQ_DTYPE_F32
        if dt == np.float16:
            return _ffi.ROTQ_DTYPE_F16
        if dt.name == "bfloat16" and dt.itemsize == 2:  # ml_dtypes.bfloat16
            return _ffi.ROTQ_DTYPE_BF16
        if dt == np.int8:
            return _ffi.ROTQ_DTYPE_I8
        if dt.name == "float8_e4m3fn" and dt.itemsize == 1:  # ml_dtypes.float8_e4m3fn
            return _ffi.ROTQ_DTYPE_FP8_E4M3
        return None

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
            return dt == np.int8
        if code == _ffi.ROTQ_DTYPE_FP8_E4M3:
            return dt == np.uint8 or (dt.name == "float8_e4m3fn" and dt.itemsize == 1)
        if code == _ffi.ROTQ_DTYPE_I4X2:
            return dt == np.uint8 or dt == np.int8
        return False

    @staticmethod
    def as_bytes(q):
        return q if q.dtype == np.uint8 else q.view(np.uint8)

    @staticmethod
    def empty(shape, dtype, like):
        if isinstance(dtype, str) and dtype in _KIND_DTYPES:
            dtype = _KIND_DTYPES[dtype]
        elif isinstance(dtype, str) and dtype == "bf16":
            dtype = _bf16_dtype()
        return np.empty(shape, dtype=dtype)

    @staticmethod
    def empty_like_contig(a):
        return np.empty(a.shape, dtype=a.dtype)

    @staticmethod
    def contiguous(a):
        return np.ascontiguousarray(a)

    @staticmethod
    def fresh_copy(a):
        return np.array(a, order="C", copy=True)

    @staticmethod
    def copy_(dst, src):
        np.copyto(dst, src, casting="unsafe")

    @staticmethod
    def same_array(a, b):
        if a is b:
            return True
        return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
                and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype)

    @staticmethod
    def exec_for(a, threads):
        return RotqExec(_ffi.ROTQ_BACKEND_CPU, threads, None), contextlib.nullcontext()

    @staticmethod
    def workspace(ex, like, query):
        """numpy runs on the CPU backend, which needs no workspace."""
        return None

    @staticmethod
    def f32_contig(s, like):
        return np.ascontiguousarray(np.asarray(s), dtype=np.float32)

    @staticmethod
    def signs_int8(signs, like, n):
        s = np.asarray(signs)
        if s.dtype == np.bool_ or s.dtype.kind not in "iuf":
            raise error(_ffi.ROTQ_ERR_UNSUPPORTED_DTYPE,
                        f"signs must be an integer or float array of +-1, not {s.dtype}")
        if s.ndim != 1 or s.shape[0] != n:
            raise error(_ffi.ROTQ_ERR_INVALID_ARGUMENT,
                        f"signs must be a vector with one entry per element of the last dim "
                        f"({n}), got shape {s.shape}")
        if s.dtype == np.int8 and s.flags.c_contiguous:
            return s
        return np.ascontiguousarray(np.where(s < 0, -1, 1).astype(np.int8))
