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
    """Each value rounded to the nearest float32 (as a Python float)."""
    count = len(values)
    return struct.unpack(f"<{count}f", struct.pack(f"<{count}f", *values))


def _norm(values: tuple[float, ...]) -> float:
    """The float32 norm of float32 `values` (see the module's docstring)."""
    return _f32((math.sqrt(math.fsum(v * v for v in values)),))[0]


def _quantise_pure(values: list[float]) -> tuple[float, bytes]:
    vector = _f32(values)
    norm = _norm(vector)
    if norm > 0:
        vector = _f32([v / norm for v in vector])
    peak = max((abs(v) for v in vector), default=0.0)
    scale = peak / 127.0 if peak > 0 else 1.0
    step = _f32((scale,))[0]
    divided = _f32([v / step for v in vector])
    q = array("b", (max(-127, min(127, round(v))) for v in divided))
    return scale, q.tobytes()


def _quantise_numpy(values: list[float]) -> tuple[float, bytes]:
    import numpy as np

    return quantise_unit(unit_of(np.asarray(values, dtype=np.float32)))


def quantise_unit(vector: npt.NDArray[np.float32]) -> tuple[float, bytes]:
    """A float32 unit vector as (scale, int8 bytes) with `vector ≈ scale * int8`."""
    import numpy as np

    peak = float(np.max(np.abs(vector))) if vector.size else 0.0
    scale = peak / 127.0 if peak > 0 else 1.0
    q = np.clip(np.rint(vector / np.float32(scale)), -127, 127).astype(np.int8)
    return scale, q.tobytes()


def unit_of(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """A float32 vector over its norm, the norm computed as the pure path does."""
    import numpy as np

    norm = np.float32(math.sqrt(math.fsum((vector.astype(np.float64) ** 2).tolist())))
    return vector / norm if norm > 0 else vector


def quantise_one(values: list[float], *, use_numpy: bool) -> tuple[float, bytes]:
    """The service's `values` as (scale, int8 bytes) of their unit vector."""
    if not all(math.isfinite(v) and abs(v) < 1e38 for v in values):
        # Out of float32's range: the pure path cannot round it; numpy gives inf/nan as before.
        use_numpy = True
    return _quantise_numpy(values) if use_numpy else _quantise_pure(values)


def quantise_all(batch: list[list[float]]) -> list[tuple[float, bytes]]:
    """Every vector of `batch` quantised; numpy only for a batch of `NUMPY_FROM` or more."""
    use_numpy = len(batch) >= NUMPY_FROM
    return [quantise_one(values, use_numpy=use_numpy) for values in batch]
