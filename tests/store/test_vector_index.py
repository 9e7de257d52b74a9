"""The in-memory vector index: int8 quantisation, the sign-bit pass and exact rescoring."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from koroku_desktop.store.vectors import index as vector_index
from koroku_desktop.store.vectors.index import CANDIDATES, VectorIndex, dot_rows, sign_bits, unit
from koroku_desktop.store.vectors.quantise import quantise_all

DIMS = 768


def quantise(vector: np.ndarray) -> tuple[float, bytes]:
    """`vector` quantised as the store does it."""
    return quantise_all([vector.tolist()])[0]


def _index(vectors: np.ndarray) -> VectorIndex:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE TABLE event_vectors (space INTEGER, seq INTEGER, chunk INTEGER,"
        " scale REAL, vector BLOB, PRIMARY KEY (space, seq, chunk))"
    )
    rows = []
    for n, v in enumerate(vectors, start=1):
        scale, blob = quantise(v.astype(np.float32))
        rows.append((1, n, 0, scale, blob))
    conn.executemany("INSERT INTO event_vectors VALUES (?, ?, ?, ?, ?)", rows)
    index = VectorIndex(1, DIMS)
    index.refresh(conn)
    return index


def test_quantised_similarity_stays_close_to_the_float_one() -> None:
    rng = np.random.default_rng(1)
    a, b = (unit(list(rng.standard_normal(DIMS))) for _ in range(2))
    b = unit(list(a + 0.5 * b))
    sa, qa = quantise(a)
    sb, qb = quantise(b)
    approx = float(np.frombuffer(qa, np.int8).astype(np.float32) @ np.frombuffer(qb, np.int8))
    assert abs(approx * sa * sb - float(a @ b)) < 0.01


def test_rows_dotted_with_the_query_match_the_exact_product() -> None:
    # The index's own product (numpy's loop, not BLAS): int8 rows and float32 rows alike.
    rng = np.random.default_rng(3)
    rows = rng.integers(-127, 128, (CANDIDATES, DIMS)).astype(np.int8)
    query = unit(list(rng.standard_normal(DIMS)))
    exact = rows.astype(np.float64) @ query.astype(np.float64)
    found = dot_rows(rows, query)
    assert found.dtype == np.float32 and found.shape == (CANDIDATES,)
    assert np.allclose(found, exact, rtol=1e-5, atol=1e-3)
    floats = rows[:50].astype(np.float32) / 127
    assert np.allclose(dot_rows(floats, query), exact[:50] / 127, rtol=1e-5, atol=1e-5)


def test_the_sign_bit_pass_picks_the_same_rows_block_by_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = CANDIDATES * 3
    rng = np.random.default_rng(4)
    bits = sign_bits(rng.standard_normal((rows, DIMS)).astype(np.float32))
    columns = [np.ascontiguousarray(bits[:, w]) for w in range(bits.shape[1])]
    query = unit(list(rng.standard_normal(DIMS)))
    allowed = np.arange(rows) % 3 != 0  # the short last block has allowed rows too
    count = CANDIDATES // 4
    # The reference: every row's Hamming distance to the query at once, no blocks.
    distance = np.bitwise_count(bits ^ sign_bits(query[None, :])).sum(axis=1)
    distance[~allowed] = DIMS + 1
    whole = vector_index._candidates(columns, query, allowed, count)
    block = 1_024
    assert rows % block, "the last block must be a short one"
    monkeypatch.setattr(vector_index, "HAMMING_BLOCK", block)
    blocks = vector_index._candidates(columns, query, allowed, count)
    assert np.array_equal(whole, blocks) and bool(allowed[blocks].all())
    # The nearest `count` rows by the reference (ties at the cut may go either way).
    cut = np.sort(distance)[count - 1]
    assert int(distance[blocks].max()) == cut
    assert set(np.flatnonzero(distance < cut)) <= set(blocks.tolist())


def test_a_large_index_finds_the_near_neighbour_through_the_sign_bit_pass() -> None:
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((CANDIDATES * 3, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = unit(list(rng.standard_normal(DIMS)))
    planted = 4321
    vectors[planted - 1] = unit(list(query + 0.3 * vectors[planted - 1]))
    index = _index(vectors)
    assert len(index) == CANDIDATES * 3

    (best, *_rest) = index.nearest(query, 5)
    assert best.seq == planted and best.similarity > 0.9
    # Events from the running turn on are left out.
    assert all(m.seq != planted for m in index.nearest(query, 5, below_seq=planted))
    assert all(m.seq < 100 for m in index.nearest(query, 5, below_seq=100))
