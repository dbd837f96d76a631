"""ctypes mirror of include/rotq.h and the loader for librotq.

Nothing here knows about numpy or torch: it describes the C structs, finds and
loads the shared library, declares the prototypes and turns a negative
rotq_status into a :class:`RotqError`.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

__all__ = [
    "RotqError",
    "lib",
    "check",
    "status_name",
    "status_string",
    "library_path",
    "RotqExec",
    "RotqMatrix",
    "RotqHadamardParams",
    "RotqQuantParams",
]

# ---------------------------------------------------------------------------
# Constants (values are ABI; keep in sync with include/rotq.h)
# ---------------------------------------------------------------------------

# rotq_status: (name, value, text). The text is only a fallback for errors raised
# before the library is loaded; once loaded, rotq_status_string() is used.
STATUS_TABLE = (
    ("ROTQ_OK", 0, "success"),
    ("ROTQ_ERR_NULL_POINTER", -1, "a required pointer argument is NULL"),
    ("ROTQ_ERR_INVALID_SHAPE", -2, "rows or cols is zero, negative or too large for the op"),
    ("ROTQ_ERR_UNSUPPORTED_SIZE", -3,
     "no Hadamard construction for this size (supported: 2^m up to 2^15, K*2^m up to 65536)"),
    ("ROTQ_ERR_INVALID_FACTOR", -4,
     "the requested Hadamard factor K is unknown or does not divide the size into K*2^m"),
    ("ROTQ_ERR_INVALID_STRIDE", -5, "a row stride is smaller than the row or is not a valid value"),
    ("ROTQ_ERR_MISALIGNED", -6, "a pointer or stride is not aligned as the op requires"),
    ("ROTQ_ERR_UNSUPPORTED_DTYPE", -7, "this dtype or dtype combination is not supported by the op"),
    ("ROTQ_ERR_OVERLAP", -8, "buffers overlap in a way the op does not allow"),
    ("ROTQ_ERR_INVALID_SCALE", -9, "a scale argument is zero, negative, NaN or infinite"),
    ("ROTQ_ERR_INVALID_GROUP", -10, "the group size is not 32, 64 or 128, or does not divide cols"),
    ("ROTQ_ERR_INVALID_FLAGS", -11, "unknown flag bits or an invalid enum value"),
    ("ROTQ_ERR_INVALID_ARGUMENT", -12, "an argument is not valid for this op (see the op's docs)"),
    ("ROTQ_ERR_INVALID_BACKEND", -13, "unknown backend in rotq_exec"),
    ("ROTQ_ERR_BACKEND_UNAVAILABLE", -14,
     "the backend is not compiled into this build, or no usable device is present"),
    ("ROTQ_ERR_NOT_SUPPORTED", -15, "this op or configuration is not implemented on this backend"),
    ("ROTQ_ERR_OUT_OF_MEMORY", -16, "a host allocation failed"),
    ("ROTQ_ERR_CUDA", -17, "a CUDA runtime call or kernel launch failed"),
    ("ROTQ_ERR_WORKSPACE", -18,
     "workspace too small or misaligned for this call (see rotq_*_workspace_size)"),
)
_STATUS_BY_VALUE = {v: (n, t) for n, v, t in STATUS_TABLE}
for _n, _v, _t in STATUS_TABLE:
    globals()[_n] = _v
    __all__.append(_n)

# rotq_dtype
ROTQ_DTYPE_F32 = 0
ROTQ_DTYPE_F16 = 1
ROTQ_DTYPE_BF16 = 2
ROTQ_DTYPE_I8 = 3
ROTQ_DTYPE_FP8_E4M3 = 4
ROTQ_DTYPE_I4X2 = 5

# rotq_backend
ROTQ_BACKEND_CPU = 0
ROTQ_BACKEND_CUDA = 1

# Hadamard
ROTQ_HADAMARD_FACTOR_AUTO = 0
ROTQ_HADAMARD_FACTOR_POW2 = 1
ROTQ_HADAMARD_TRANSPOSE_FACTOR = 0x1
ROTQ_HADAMARD_MAX_POW2 = 32768
ROTQ_HADAMARD_MAX_SIZE = 65536

# rotq_factor_order
ROTQ_ORDER_QUAROT = 0
ROTQ_ORDER_SPINQUANT = 1
ROTQ_ORDER_QUIPSHARP = 2

# rotq_quant_kind
ROTQ_QUANT_INT8_ROW = 0
ROTQ_QUANT_FP8_ROW = 1
ROTQ_QUANT_FP8_TENSOR = 2
ROTQ_QUANT_INT4_GROUP = 3

__all__ += [k for k in list(globals()) if k.startswith("ROTQ_") and k not in __all__]


# ---------------------------------------------------------------------------
# Structs
# ---------------------------------------------------------------------------

class RotqExec(ctypes.Structure):
    _fields_ = [
        ("backend", ctypes.c_int),
        ("threads", ctypes.c_int),
        ("stream", ctypes.c_void_p),  # struct CUstream_st *
        ("workspace", ctypes.c_void_p),  # CUDA: device scratch, or NULL for the pool
        ("workspace_bytes", ctypes.c_size_t),
    ]


class RotqMatrix(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("rows", ctypes.c_int64),
        ("cols", ctypes.c_int64),
        ("stride", ctypes.c_int64),
    ]


class RotqHadamardParams(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_int32),
        ("factor", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
        ("scale", ctypes.c_float),
        ("signs", ctypes.c_void_p),  # const int8_t *
    ]


class RotqQuantParams(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("group_size", ctypes.c_int32),
        ("static_scale", ctypes.c_float),
        ("rotate", ctypes.POINTER(RotqHadamardParams)),
    ]


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

class RotqError(RuntimeError):
    """A rotq call failed (or was rejected before reaching the library).

    Attributes: ``status`` (the negative rotq_status value), ``name`` (e.g.
    ``"ROTQ_ERR_UNSUPPORTED_SIZE"``) and ``message`` (rotq_status_string plus,
    where the Python layer knows more, what was wrong and what to do).
    """

    def __init__(self, status, name, message):
        self.status = int(status)
        self.name = str(name)
        self.message = str(message)
        super().__init__(status, name, message)

    def __str__(self):
        return f"{self.name} ({self.status}): {self.message}"

    def __reduce__(self):
        return (type(self), (self.status, self.name, self.message))


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------

_lib = None
_lib_path = None
_lock = threading.Lock()


def _candidate_paths():
    env = os.environ.get("ROTQ_LIBRARY")
    if env:
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    libdir = os.path.join(here, "_lib")
    if sys.platform == "darwin":
        names = ["librotq.dylib"]
    elif sys.platform == "win32":
        names = ["rotq.dll", "librotq.dll"]
    else:
        names = ["librotq.so"]
    return [os.path.join(libdir, n) for n in names], False


def _load():
    global _lib, _lib_path
    with _lock:
        if _lib is not None:
            return _lib
        paths, from_env = _candidate_paths()
        errors = []
        for p in paths:
            if from_env and not os.path.exists(p):
                raise OSError(f"ROTQ_LIBRARY={p!r} does not exist")
            if not os.path.exists(p):
                errors.append(f"{p}: not found")
                continue
            try:
                handle = ctypes.CDLL(os.path.abspath(p))
            except OSError as e:
                if from_env:
                    raise OSError(f"could not load ROTQ_LIBRARY={p!r}: {e}") from e
                errors.append(f"{p}: {e}")
                continue
            _check_abi(handle, p)
            _declare(handle)
            _lib, _lib_path = handle, os.path.abspath(p)
            return _lib
        raise OSError(
            "librotq was not found: the rotq package has no bundled library "
            "(build it with `pip install ./python` from the repository) and "
            "ROTQ_LIBRARY is not set. Tried: " + "; ".join(errors))


# The library ABI this package speaks, (major, minor): 0.2 added rotq_exec's
# workspace fields (another layout would read this package's exec wrongly) and
# the workspace queries. While the major version is 0 every minor version is
# its own ABI (the SONAME says so too); from 1 on, later minors extend it.
_LIBRARY_ABI = (0, 2)


def _check_abi(handle, path):
    """OSError unless the library at path is a rotq of this package's ABI."""
    try:
        number = handle.rotq_version_number
    except AttributeError:
        raise OSError(f"{path!r} is not a rotq library (no rotq_version_number)") from None
    number.restype = ctypes.c_int
    number.argtypes = []
    v = number()
    major, minor = v // 10000, v // 100 % 100
    want_major, want_minor = _LIBRARY_ABI
    if major != want_major or (minor != want_minor if major == 0 else minor < want_minor):
        raise OSError(f"{path!r} is rotq {major}.{minor}.{v % 100}; this package needs the ABI of "
                      f"{want_major}.{want_minor} (rebuild the library, or install the matching package)")


def _declare(L):
    c_int, c_int32, c_char_p, c_void_p, c_size_t = (
        ctypes.c_int, ctypes.c_int32, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)
    P = ctypes.POINTER

    def fn(name, restype, *argtypes):
        f = getattr(L, name)
        f.restype = restype
        f.argtypes = list(argtypes)

    fn("rotq_status_string", c_char_p, c_int)
    fn("rotq_status_name", c_char_p, c_int)
    fn("rotq_version", c_char_p)
    fn("rotq_version_number", c_int)
    fn("rotq_dtype_bits", c_int, c_int)
    fn("rotq_dtype_name", c_char_p, c_int)
    fn("rotq_backend_available", c_int, c_int)
    fn("rotq_build_info", c_char_p)
    fn("rotq_cuda_device_count", c_int, P(c_int))
    fn("rotq_cuda_device_describe", c_int, c_int, ctypes.c_char_p, c_size_t)
    fn("rotq_hadamard_params_default", RotqHadamardParams, c_int32)
    fn("rotq_hadamard_pick_factor", c_int, c_int32, c_int, P(c_int32))
    fn("rotq_hadamard_resolve", c_int, c_int32, c_int32, P(c_int32), P(c_int32))
    fn("rotq_hadamard_factor_matrix", c_int, c_int32, c_void_p, c_size_t)
    fn("rotq_hadamard_factor_count", c_int)
    fn("rotq_hadamard_factor_at", c_int32, c_int)
    fn("rotq_hadamard", c_int, P(RotqExec), P(RotqHadamardParams), P(RotqMatrix), P(RotqMatrix))
    fn("rotq_quantize", c_int, P(RotqExec), P(RotqQuantParams), P(RotqMatrix), P(RotqMatrix),
       c_void_p, c_void_p)
    fn("rotq_dequantize", c_int, P(RotqExec), P(RotqQuantParams), P(RotqMatrix), c_void_p,
       P(RotqMatrix))
    fn("rotq_hadamard_workspace_size", c_int, P(RotqExec), P(RotqHadamardParams), P(RotqMatrix),
       P(RotqMatrix), P(c_size_t))
    fn("rotq_quantize_workspace_size", c_int, P(RotqExec), P(RotqQuantParams), P(RotqMatrix),
       P(RotqMatrix), P(c_size_t))


class _LazyLib:
    """Attribute access loads the library on first use."""

    def __getattr__(self, name):
        return getattr(_load(), name)


lib = _LazyLib()


def library_path():
    """Absolute path of the loaded librotq (loads it if needed)."""
    _load()
    return _lib_path


def status_name(status):
    status = int(status)
    try:
        return lib.rotq_status_name(status).decode()
    except OSError:
        return _STATUS_BY_VALUE.get(status, ("ROTQ_ERR_UNKNOWN", ""))[0]


def status_string(status):
    status = int(status)
    try:
        return lib.rotq_status_string(status).decode()
    except OSError:
        return _STATUS_BY_VALUE.get(status, ("", "unknown status"))[1]


def error(status, detail=None):
    """A RotqError for ``status``, with rotq_status_string and an optional detail."""
    msg = status_string(status)
    if detail:
        msg = f"{msg}: {detail}"
    return RotqError(status, status_name(status), msg)


def check(status, what=None, detail=None):
    """Raise RotqError unless ``status`` is ROTQ_OK."""
    status = int(status)
    if status != 0:
        d = detail
        if what:
            d = f"{what}" + (f" ({detail})" if detail else "")
        raise error(status, d)
