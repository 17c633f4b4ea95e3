"""JSON for host-side records: numpy scalars and arrays and paths become plain values."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np


def json_default(x):
    """``json.dumps(..., default=json_default)``: numpy scalars/arrays as Python values, paths as str."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (np.ndarray, jax.Array)):
        return np.asarray(x).tolist()
    if isinstance(x, Path):
        return str(x)
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")
