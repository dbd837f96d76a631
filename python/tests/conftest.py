import os
import sys

import pytest

try:
    import rotq  # noqa: F401  (an installed package, or PYTHONPATH=python)
except ImportError:  # running from the source tree: use the package next to tests/
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # rotq_refs


def _torch():
    try:
        import torch
        return torch
    except Exception:
        return None


TORCH = _torch()


def pytest_report_header(config):
    import rotq
    lines = [f"rotq {rotq.__version__} from {os.path.dirname(rotq.__file__)}"]
    try:
        lines.append(f"librotq {rotq.version()} at {rotq.library_path()}: {rotq.build_info()}")
    except OSError as e:
        lines.append(f"librotq not loadable: {e}")
    lines.append(f"torch: {TORCH.__version__ if TORCH else 'not installed'}")
    return lines


@pytest.fixture
def rng():
    import numpy as np
    return np.random.default_rng(1234)
