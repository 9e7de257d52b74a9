"""Quantising embeddings to int8, with or without numpy, to the same bytes.

A stored vector is the unit vector of the service's values, in float32, as `scale * int8`
(`scale` is the largest magnitude over 127). The steps are exact IEEE float32 operations
so that the two ways of computing them agree to the byte:

- each value rounded to float32;
- the norm: the square root of the correctly rounded sum of the (exact, in float64)
  squares (`math.fsum`), rounded to float32 — not BLAS's `sdot`, whose summation order
  depends on the CPU's kernel;
- each value divided by the norm in float32 (a float64 division rounded to float32 is the
  correctly rounded float32 quotient);
- each unit value divided by `float32(scale)`, rounded half to even, clipped to ±127.

A process that stores a few vectors (the post-turn embedding of `koroku ask`, a memory
file) does it in pure Python and never imports numpy (60–90 ms of its start); a batch of
`NUMPY_FROM` or more goes through numpy, where the per-value work is cheaper.
"""

from __future__ import annotations

import math
import struct
from array import array
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

NUMPY_FROM = 16
"""Batches of at least this many vectors are quantised with numpy."""


def _f32(values: list[float] | tuple[float, ...]) -> tuple[float, ...]:
    """Each value rounded to the nearest float32 (raises OverflowError beyond its range)."""
    count = len(values)
    return struct.unpack(f"<{count}f", struct.pack(f"<{count}f", *values))


def _norm(squares: list[float]) -> float:
    """The float32 norm from the float64 squares of float32 values (see the docstring)."""
    return _f32((math.sqrt(math.fsum(squares)),))[0]


def _quantise_pure(values: list[float]) -> tuple[float, bytes] | None:
    """None when a value is out of float32's range or not finite (numpy's path handles it)."""
    try:
        vector = _f32(values)
        norm = _norm([v * v for v in vector])
    except (OverflowError, ValueError):
        return None
    if not math.isfinite(norm):
        return None
    if norm > 0:
        vector = _f32([v / norm for v in vector])
    peak = max((abs(v) for v in vector), default=0.0)
    scale = peak / 127.0 if peak > 0 else 1.0
    step = _f32((scale,))[0]
    divided = _f32([v / step for v in vector])
    q = array("b", (max(-127, min(127, round(v))) for v in divided))
    return scale, q.tobytes()


def _quantise_numpy(batch: list[list[float]]) -> list[tuple[float, bytes]]:
    """The same steps over the whole batch at once (rows of one length)."""
    import numpy as np

    if len({len(values) for values in batch}) > 1:
        return [_quantise_numpy([values])[0] for values in batch]
    matrix = np.asarray(batch, dtype=np.float32).reshape(len(batch), -1)
    norms = _norms(matrix)
    with np.errstate(divide="ignore", invalid="ignore"):
        units = np.where(norms[:, None] > 0, matrix / norms[:, None], matrix)
        peaks = np.max(np.abs(units), axis=1) if units.shape[1] else np.zeros(len(batch))
    scales = [float(p) / 127.0 if p > 0 else 1.0 for p in peaks.tolist()]
    steps = np.asarray(scales, dtype=np.float32)[:, None]
    with np.errstate(invalid="ignore"):
        q = np.clip(np.rint(units / steps), -127, 127).astype(np.int8)
    return [(scale, row.tobytes()) for scale, row in zip(scales, q, strict=True)]


def _norms(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each row's float32 norm, computed as the pure path does (nan when not finite)."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        squares = (matrix.astype(np.float64) ** 2).tolist()
    norms = []
    for row in squares:
        try:
            norms.append(math.sqrt(math.fsum(row)))
        except (OverflowError, ValueError):  # inf - inf in the sum; nan stays nan
            norms.append(math.nan)
    return np.asarray(norms, dtype=np.float32)


def unit_of(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """A float32 vector over its norm, the norm computed as the pure path does."""
    norm = _norms(vector.reshape(1, -1))[0]
    return vector / norm if norm > 0 else vector


def quantise_one(values: list[float], *, use_numpy: bool) -> tuple[float, bytes]:
    """The service's `values` as (scale, int8 bytes) of their unit vector."""
    found = None if use_numpy else _quantise_pure(values)
    return _quantise_numpy([values])[0] if found is None else found


def quantise_all(batch: list[list[float]]) -> list[tuple[float, bytes]]:
    """Every vector of `batch` quantised; numpy only for a batch of `NUMPY_FROM` or more."""
    if len(batch) >= NUMPY_FROM:
        return _quantise_numpy(batch)
    return [quantise_one(values, use_numpy=False) for values in batch]
