import numpy as np
import pytest

import rotq
from rotq_refs import sylvester


def test_version_and_build_info():
    assert rotq.version() == rotq.__version__
    info = rotq.build_info()
    assert isinstance(info, str) and rotq.version() in info
    assert isinstance(rotq.cuda_available(), bool)
    assert rotq.cuda_device_count() >= 0
    assert rotq.library_path().endswith((".so", ".dylib", ".dll")) or "librotq" in rotq.library_path()


def test_factors_are_hadamard():
    ks = rotq.hadamard_factors()
    assert ks == sorted(ks)
    for k in (12, 20, 28, 36, 40, 44, 52, 60, 108, 116, 124, 140, 156, 172):
        assert k in ks
    for k in ks:
        h = rotq.hadamard_factor_matrix(k)
        assert h.dtype == np.int8 and h.shape == (k, k)
        assert set(np.unique(h)) <= {-1, 1}
        hh = h.astype(np.int64)
        np.testing.assert_array_equal(hh @ hh.T, k * np.eye(k, dtype=np.int64))
    np.testing.assert_array_equal(rotq.hadamard_factor_matrix(1), [[1]])


def test_factor_matrix_errors():
    with pytest.raises(rotq.RotqError) as e:
        rotq.hadamard_factor_matrix(13)
    assert e.value.name == "ROTQ_ERR_INVALID_FACTOR"
    assert e.value.status == -4


@pytest.mark.parametrize("n,order,k", [
    (4096, "quarot", 1), (14336, "quarot", 28), (11008, "quarot", 172), (13824, "quarot", 108),
    (5120, "quarot", 40), (3072, "quarot", 12), (176, "spinquant", 44), (5120, "quipsharp", 20),
    (124 * 64, "quipsharp", 124), (65536, "quarot", None), (18944, "quarot", None),
    (176, "quarot", None),
])
def test_pick_factor(n, order, k):
    if k is None:
        with pytest.raises(rotq.RotqError) as e:
            rotq.pick_factor(n, order)
        assert e.value.name == "ROTQ_ERR_UNSUPPORTED_SIZE"
    else:
        assert rotq.pick_factor(n, order) == k


def test_pick_factor_bad_order():
    with pytest.raises(rotq.RotqError) as e:
        rotq.pick_factor(64, "nope")
    assert e.value.name == "ROTQ_ERR_INVALID_FLAGS"


def test_error_object():
    e = rotq.RotqError(-3, "ROTQ_ERR_UNSUPPORTED_SIZE", "msg")
    assert isinstance(e, RuntimeError)
    assert (e.status, e.name, e.message) == (-3, "ROTQ_ERR_UNSUPPORTED_SIZE", "msg")
    assert "ROTQ_ERR_UNSUPPORTED_SIZE" in str(e)
    import pickle
    e2 = pickle.loads(pickle.dumps(e))
    assert (e2.status, e2.name, e2.message) == (e.status, e.name, e.message)


def test_status_strings_come_from_library():
    from rotq import _ffi
    for name, value, _ in _ffi.STATUS_TABLE:
        assert _ffi.status_name(value) == name
        assert _ffi.status_string(value)


def test_threads_setting(rng):
    old = rotq.get_num_threads()
    try:
        x = rng.standard_normal((64, 256)).astype(np.float32)
        ref = x @ sylvester(256).T
        for t in (1, 2, 0):
            rotq.set_num_threads(t)
            np.testing.assert_allclose(rotq.hadamard_transform(x), ref, rtol=1e-5, atol=1e-4)
    finally:
        rotq.set_num_threads(old)


def test_library_abi_check():
    """The loader refuses a library of another ABI with an OSError naming it."""
    from rotq import _ffi

    class Lib:
        def __init__(self, v):
            self.rotq_version_number = lambda: v

    _ffi._check_abi(Lib(200), "ok.so")
    _ffi._check_abi(Lib(203), "ok.so")
    for v in (100, 199, 300, 10200):
        with pytest.raises(OSError, match="rotq"):
            _ffi._check_abi(Lib(v), "old.so")
    with pytest.raises(OSError, match="not a rotq library"):
        _ffi._check_abi(object(), "other.so")
