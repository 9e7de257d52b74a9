"""Rescoring variants for `locomo_variants.py`: one more term added to each fused score.

Each variant is the shipped hybrid (`agent/recall.py`: `candidate_scores` plus the recency
prior) with a bonus added to each candidate's score before the ranking is cut, never the
product's code. A bonus is in the fusion's units (standard deviations of BM25 relevance):

- `session`: a candidate written within `window` hours of other candidates (one sitting; in
  LoCoMo one session, whose turns are seconds apart and sessions days apart) gets `share`
  of the mean of the best `top` of their scores (positive parts only); a negative share is
  the opposite, a session already represented pushing its other candidates down.
- `coverage`: `gamma` times the share of the query's idf a unit matches (rare words matched
  over rare words asked: a unit with the query's one rare word beats one with two common
  ones by more than BM25's sum says), over the whole unit or its own text only (`own`).
- `proximity`: among the first `depth` candidates, a unit where the query's two rarest words
  occur within `near` tokens of each other (an FTS5 NEAR group) gets `delta`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from koroku_desktop.agent.recall import HybridSearch
from koroku_desktop.store.search.searchable import fts_any_query

Bonus = Callable[[Any, str, dict[int, float], dict[int, float]], dict[int, float]]
"""(store, query, fused scores, created_at by seq) -> extra score by seq."""


@dataclass
class Rescored(HybridSearch):
    """The shipped hybrid with `bonus` added to the fused scores (none: the shipped one)."""

    bonus: Bonus | None = None

    def _adjust(self, query: str, scores: dict[int, float], created: dict[int, float]) -> None:
        if self.bonus is not None:
            for seq, extra in self.bonus(self.store, query, dict(scores), created).items():
                scores[seq] += extra


def session(share: float, window_hours: float, top: int) -> Bonus:
    """The session prior (see the module's doc)."""
    window = window_hours * 3600

    def bonus(
        store: Any, query: str, scores: dict[int, float], created: dict[int, float]
    ) -> dict[int, float]:
        timed = sorted((created[s], s) for s in scores if s in created)
        extra: dict[int, float] = {}
        for at, seq in timed:
            near = sorted(
                (max(scores[o], 0.0) for t, o in timed if o != seq and abs(t - at) < window),
                reverse=True,
            )[:top]
            if near:
                extra[seq] = share * sum(near) / top
        return extra

    return bonus


def _terms(query: str) -> list[str]:
    """The FTS5 phrases of the ranked query (its words, stop words out)."""
    match = fts_any_query(query)
    return match.split(" OR ") if match else []


def _idf(conn: Any, phrase: str, units: int) -> float:
    (df,) = conn.execute("SELECT COUNT(*) FROM context_fts WHERE context_fts MATCH ?", (phrase,))
    return max(0.0, math.log((units - df[0] + 0.5) / (df[0] + 0.5)))


def _matching(conn: Any, match: str, seqs: list[int]) -> set[int]:
    marks = ",".join("?" * len(seqs))
    sql = f"SELECT rowid FROM context_fts WHERE context_fts MATCH ? AND rowid IN ({marks})"
    return {int(r[0]) for r in conn.execute(sql, (match, *seqs))}


def _query_idf(store: Any, query: str) -> tuple[Any, dict[str, float]]:
    """The store's connection and the idf of each of the query's terms (none for < 2 terms)."""
    conn = store._db.conn()
    terms = _terms(query)
    if len(terms) < 2:
        return conn, {}
    (units,) = conn.execute("SELECT COUNT(*) FROM context_fts").fetchone()
    return conn, {t: _idf(conn, t, units) for t in terms}


def coverage(gamma: float, own: bool) -> Bonus:
    """The idf-weighted query coverage (see the module's doc)."""

    def bonus(
        store: Any, query: str, scores: dict[int, float], created: dict[int, float]
    ) -> dict[int, float]:
        conn, idf = _query_idf(store, query)
        total = sum(idf.values())
        if total <= 0:
            return {}
        seqs = list(scores)
        extra = dict.fromkeys(seqs, 0.0)
        for term, weight in idf.items():
            for seq in _matching(conn, f"body : {term}" if own else term, seqs):
                extra[seq] += gamma * weight / total
        return extra

    return bonus


def proximity(delta: float, near: int, depth: int) -> Bonus:
    """The proximity rescoring of the first candidates (see the module's doc)."""

    def bonus(
        store: Any, query: str, scores: dict[int, float], created: dict[int, float]
    ) -> dict[int, float]:
        conn, idf = _query_idf(store, query)
        if not idf:
            return {}
        rarest = sorted(idf, key=lambda t: -idf[t])[:2]
        first = sorted(scores, key=lambda s: -scores[s])[:depth]
        found = _matching(conn, f"NEAR({rarest[0]} {rarest[1]}, {near})", first)
        return dict.fromkeys(found, delta)

    return bonus


VARIANTS: dict[str, list[tuple[str, dict[str, float]]]] = {
    "none": [("shipped, through Rescored", {})],
    "session": [
        (f"share {s} window {w}h top {t}", {"share": s, "window": w, "top": t})
        for s, w, t in [
            (0.05, 1, 1),
            (0.1, 1, 1),
            (0.2, 1, 1),
            (0.1, 1, 3),
            (0.2, 1, 3),
            (0.1, 6, 1),
            (-0.05, 1, 1),
            (-0.1, 1, 1),
        ]
    ],
    "coverage": [
        (f"gamma {g}{' own' if o else ''}", {"gamma": g, "own": o})
        for g, o in [(0.25, 0), (0.5, 0), (1.0, 0), (0.25, 1), (0.5, 1), (1.0, 1)]
    ],
    "proximity": [
        (f"delta {d} near {n} depth 30", {"delta": d, "near": n, "depth": 30})
        for d, n in [(0.25, 5), (0.5, 5), (1.0, 5), (0.5, 15), (1.0, 15)]
    ],
}


def make(store: Any, embedder: Any, variant: str, options: dict[str, float]) -> HybridSearch:
    """The search of one rescoring variant."""
    bonus: Bonus | None = None
    if variant == "session":
        bonus = session(options["share"], options["window"], int(options["top"]))
    elif variant == "coverage":
        bonus = coverage(options["gamma"], bool(options["own"]))
    elif variant == "proximity":
        bonus = proximity(options["delta"], int(options["near"]), int(options["depth"]))
    return Rescored(store, embedder, bonus=bonus)
