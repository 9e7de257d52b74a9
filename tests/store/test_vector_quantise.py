"""Quantising embeddings: the pure-Python path (a few vectors) and the numpy path (a batch)
give the same bytes and scale, and storing a few vectors never imports numpy."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from koroku_desktop.store.vectors.quantise import NUMPY_FROM, quantise_all, quantise_one

ROOT = Path(__file__).resolve().parents[2]


def _cases() -> list[list[float]]:
    rng = np.random.default_rng(20)
    cases: list[list[float]] = []
    for dims in (1, 3, 64, 768, 3072):
        for _ in range(40):
            cases.append([float(x) for x in rng.standard_normal(dims)])
    # Gemini-like magnitudes, already near unit length, and float64 values between float32s
    cases += [[float(x) for x in rng.standard_normal(768) * 0.036] for _ in range(40)]
    cases += [[float(x) * (1 + 1e-9) for x in rng.uniform(-1, 1, 768)] for _ in range(40)]
    # values that land exactly on .5 steps of the scale (rounding half to even decides)
    cases += [[float(x) / 2 for x in range(-254, 255)], [127.0, 63.5, -0.5, 0.5, 1.5, 2.5]]
    # a zero vector, one value, tiny and huge magnitudes, negative peaks
    cases += [[0.0] * 16, [5.0], [1e-30] * 8 + [3e-30], [1e30, -2e30, 3.0], [-9.0, 1.0, 2.0]]
    return cases


@pytest.mark.parametrize("values", _cases())
def test_the_pure_path_gives_the_numpy_paths_bytes(values: list[float]) -> None:
    assert quantise_one(values, use_numpy=False) == quantise_one(values, use_numpy=True)


def test_a_batch_is_the_same_whichever_path_it_takes() -> None:
    rng = np.random.default_rng(7)
    batch = [[float(x) for x in rng.standard_normal(768)] for _ in range(NUMPY_FROM)]
    assert quantise_all(batch) == quantise_all(batch[:2]) + quantise_all(batch[2:3]) + [
        quantise_one(v, use_numpy=False) for v in batch[3:]
    ]


def test_the_quantised_vector_is_close_to_the_unit_vector() -> None:
    values = [float(x) for x in np.random.default_rng(3).standard_normal(768)]
    scale, blob = quantise_one(values, use_numpy=False)
    restored = np.frombuffer(blob, np.int8).astype(np.float64) * scale
    unit = np.asarray(values) / np.linalg.norm(values)
    assert float(np.max(np.abs(restored - unit))) <= scale / 2 + 1e-7
    assert max(abs(b) for b in np.frombuffer(blob, np.int8)) == 127


def test_out_of_range_values_fall_back_to_numpy_without_an_error() -> None:
    values = [float("inf"), 1.0, 3e38 * 10]
    with np.errstate(all="ignore"):
        _, blob = quantise_one(values, use_numpy=False)
    assert len(blob) == 3


def test_storing_a_few_vectors_does_not_import_numpy(tmp_path: Path) -> None:
    """The post-turn embedding of `koroku ask` stores one or two vectors, and a search of a
    space without vectors finds nothing: no numpy."""
    code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from koroku_desktop.domain.events import MessageEvent
        from koroku_desktop.domain.parts import TextPart
        from koroku_desktop.domain.recall import Chunk, EmbeddingBatch
        from koroku_desktop.store import SqliteEventLog
        log = SqliteEventLog(Path({str(tmp_path / "koroku.db")!r}))
        events = [MessageEvent(role="user", parts=[TextPart(text="my car is crimson")])] * 2
        seqs = [s.seq for s in log.append("default", events)]
        assert log.vectors.nearest("m", 4, [1.0, 0.0, 0.0, 0.0], 5) == []
        assert log.vectors.similarity_floor("m", 4, [1.0, 0.0, 0.0, 0.0]) is None
        batch = EmbeddingBatch([Chunk(s, 0, "x") for s in seqs], seqs[-1], len(seqs))
        log.vectors.store("m", 4, batch, [[0.1, 0.2, 0.3, 0.4], [0.4, -0.3, 0.2, 0.1]])
        status = log.vectors.status("m", 4)
        assert "numpy" not in sys.modules, "numpy imported"
        print(status)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
