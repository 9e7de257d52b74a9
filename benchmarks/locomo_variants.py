"""Ranking variants on LoCoMo, in process, over the data dirs `bench_locomo.py --dir` left.

Run by hand (not by pytest), after `bench_locomo.py --dir DIR` has imported and embedded the
development split into DIR:
    uv run --group bench python benchmarks/locomo_variants.py DIR [--only NAME ...]

Each question goes through the real `HybridSearch` over the real store of its data dir
(WordLlama embeds the query in process, as the fake server does for `koroku search`), so the
first two rows ("shipped") give `bench_locomo.py`'s hybrid and `--keyword` figures exactly.
The variants change one thing through a wrapper around the store or a subclass of the
search, never the product's code:

- `prf`: pseudo-relevance feedback on the keyword leg (RM3-style): the first pass's top K
  units give their terms (RM1 weights: each unit's share of the top K's BM25 relevance times
  the term's share of the unit, the own text counting `OWN_WEIGHT`) times the term's idf in
  the index; the best M terms that are not the query's and occur in two
  of the K units or more go to FTS5 as a second query, and a
  unit's relevance is its first score plus LAMBDA times its second (units only the second
  query found come in with that alone).
- `dense-prf`: the query vector moved towards the mean of the top K fused hits' vectors
  (q + BETA x mean), the candidates' cosines re-read with it and fused again.
- `none`, `session`, `coverage`, `proximity`: a bonus added to the fused scores
  (`locomo_rescoring.py`; `none` adds nothing and must give the shipped rows).
- `centred`, `weight`: the meaning leg's cosines taken after centring the query and every
  candidate's vector on the candidates' mean vector (what the keyword leg's and the meaning
  leg's candidates share, the speakers' names and the query's own words among them, taken
  out), at meaning weight W; `weight` is the shipped cosines at the same weights.
- `bm25-b`: BM25 over the keyword leg's 200 candidates recomputed outside FTS5 (its k1 1.2,
  its idf floored at 1e-6, its column weights, one length per unit) with another length
  normalisation b (FTS5's is fixed at 0.75; b 0.75 gives the shipped ranking exactly).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_locomo as bench  # noqa: E402
import locomo_rescoring as rescoring  # noqa: E402

from koroku_desktop.agent import recall  # noqa: E402
from koroku_desktop.agent.recall import HybridSearch, candidate_scores  # noqa: E402
from koroku_desktop.domain.recall import VectorMatch  # noqa: E402
from koroku_desktop.store.data_dir import data_dir_for  # noqa: E402
from koroku_desktop.store.search.context import OWN_WEIGHT  # noqa: E402
from koroku_desktop.store.search.searchable import fts_any_query  # noqa: E402
from koroku_desktop.store.search.stop_words import STOP_WORDS  # noqa: E402
from koroku_desktop.store.vectors.store import VectorStore  # noqa: E402

MODEL, DIMS = "gemini-embedding-001", 768
shipped_weight = recall.SIMILARITY_WEIGHT
WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
TOKEN = re.compile(r"[^\W_]+")


class LocalEmbedder:
    """WordLlama in process, as the fake Gemini server serves it to `koroku search`."""

    model, dimensions = MODEL, DIMS

    def __init__(self, embed: bench.WordLlamaEmbedder) -> None:
        self.embed = embed

    async def embed_query(self, text: str) -> list[float]:
        return self.embed([text], DIMS, MODEL)[0]

    async def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed(texts, DIMS, MODEL)


class Stems:
    """FTS5's own Porter stems of words (through a TEMP table with the index's tokenizer)."""

    def __init__(self) -> None:
        self.known: dict[str, str | None] = {}

    def of(self, conn: Any, words: list[str]) -> dict[str, str | None]:
        todo = [w for w in set(words) if w not in self.known]
        if todo:
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.stems USING fts5("
                "w, tokenize = 'porter unicode61 remove_diacritics 2')"
            )
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.stems_v"
                " USING fts5vocab(temp, stems, instance)"
            )
            conn.executemany("INSERT INTO temp.stems (rowid, w) VALUES (?, ?)", enumerate(todo))
            found = dict(conn.execute("SELECT doc, term FROM temp.stems_v").fetchall())
            conn.execute("DELETE FROM temp.stems")
            self.known.update((w, found.get(n)) for n, w in enumerate(todo))
        return {w: self.known[w] for w in words}


STEMS = Stems()


def content_words(text: str) -> list[str]:
    """Lower-case words of 3+ characters, stop words, numbers and possessives' 's out."""
    found = []
    for word in WORD.findall(text.lower()):
        word = word.removesuffix("'s")
        if len(word) >= 3 and word not in STOP_WORDS and not word.isdigit():
            found.append(word)
    return found


class WrappedStore:
    """The store with its keyword leg changed by a subclass; everything else as it is."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


class FeedbackStore(WrappedStore):
    """The store with an RM3-style second pass on the keyword leg (see the module's doc)."""

    def __init__(self, store: VectorStore, k: int, m: int, weight: float) -> None:
        super().__init__(store)
        self.k, self.m, self.weight = k, m, weight

    def keyword_scored(
        self, query: str, limit: int, below_seq: int | None = None
    ) -> list[tuple[int, float]]:
        first = self.store.keyword_scored(query, limit, below_seq)
        terms = self.expansion(query, first[: self.k])
        if not terms:
            return first
        bound = below_seq if below_seq is not None else 2**62
        second = {seq: -rank for seq, rank in self.store.context.ranked(terms, limit, bound)}
        relevance = dict(first)
        mixed = {
            s: relevance.get(s, 0.0) + self.weight * second.get(s, 0.0)
            for s in set(relevance) | set(second)
        }
        return sorted(mixed.items(), key=lambda pair: -pair[1])[:limit]

    def expansion(self, query: str, top: list[tuple[int, float]]) -> str | None:
        """The FTS5 query of the feedback's best `m` terms (None: none)."""
        if not top:
            return None
        conn = self.store._db.conn()
        marks = ",".join("?" * len(top))
        sql = f"SELECT rowid, context, body FROM context_fts WHERE rowid IN ({marks})"
        texts = {int(r[0]): (r[1], r[2]) for r in conn.execute(sql, [s for s, _ in top])}
        counts: list[tuple[float, Counter[str]]] = []
        for seq, relevance in top:
            if seq in texts:
                count: Counter[str] = Counter(content_words(texts[seq][0]))
                for word in content_words(texts[seq][1]):
                    count[word] += OWN_WEIGHT
                counts.append((max(relevance, 0.0), count))
        asked = content_words(query)
        stem = STEMS.of(conn, asked + [w for _, c in counts for w in c])
        skip = {stem[w] for w in asked}
        total = sum(r for r, _ in counts) or 1.0
        weight: Counter[str] = Counter()
        units: Counter[str] = Counter()
        surface: dict[str, str] = {}
        for relevance, count in counts:
            size = sum(count.values()) or 1.0
            seen = set()
            for word, n in count.items():
                s = stem[word]
                if s is not None and s not in skip:
                    weight[s] += relevance / total * n / size
                    surface.setdefault(s, word)
                    seen.add(s)
            units.update(seen)
        weight = Counter({s: w for s, w in weight.items() if units[s] >= 2})
        if not weight:
            return None
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.context_v"
            " USING fts5vocab(main, context_fts, row)"
        )
        marks = ",".join("?" * len(weight))
        sql = f"SELECT term, doc FROM temp.context_v WHERE term IN ({marks})"
        df = dict(conn.execute(sql, list(weight)).fetchall())
        total_units = self.store.context.done_seq() or 1
        idf = {
            s: math.log((total_units - df.get(s, 1) + 0.5) / (df.get(s, 1) + 0.5)) for s in weight
        }
        best = sorted(weight, key=lambda s: -weight[s] * idf[s])[: self.m]
        chosen = [s for s in best if idf[s] > 0]
        return " OR ".join(f'"{surface[s]}"' for s in chosen) or None


class LengthStore(WrappedStore):
    """The store with the keyword leg's candidates re-scored by BM25 with length
    normalisation `b` (see the module's doc)."""

    def __init__(self, store: VectorStore, b: float) -> None:
        super().__init__(store)
        self.b = b
        conn = store._db.conn()
        rows = conn.execute("SELECT rowid, context, body FROM context_fts").fetchall()
        tokens = {
            int(r[0]): (TOKEN.findall(r[1].lower()), TOKEN.findall(r[2].lower())) for r in rows
        }
        stem = STEMS.of(conn, list({w for c, b_ in tokens.values() for w in c + b_}))
        self.units = {
            seq: (
                Counter(stem[w] or w for w in c),
                Counter(stem[w] or w for w in b_),
                len(c) + len(b_),
            )
            for seq, (c, b_) in tokens.items()
        }
        self.df: Counter[str] = Counter()
        for context, body, _ in self.units.values():
            self.df.update(set(context) | set(body))
        self.average = sum(n for _, _, n in self.units.values()) / max(1, len(self.units))

    def keyword_scored(
        self, query: str, limit: int, below_seq: int | None = None
    ) -> list[tuple[int, float]]:
        first = self.store.keyword_scored(query, limit, below_seq)
        match = fts_any_query(query) or ""
        words = [w for phrase in match.split(" OR ") for w in TOKEN.findall(phrase.lower())]
        terms = {s or w for w, s in STEMS.of(self.store._db.conn(), words).items()}
        n, k1 = len(self.units), 1.2
        scored = []
        for seq, _ in first:
            context, body, length = self.units[seq]
            norm = 1 - self.b + self.b * length / self.average
            score = 0.0
            for t in terms:
                tf = context[t] + OWN_WEIGHT * body[t]
                if tf:
                    idf = max(1e-6, math.log((n - self.df[t] + 0.5) / (self.df[t] + 0.5)))
                    score += idf * tf * (k1 + 1) / (tf + k1 * norm)
            scored.append((seq, score))
        return sorted(scored, key=lambda pair: -pair[1])


class DenseFeedback(HybridSearch):
    """The hybrid with the query vector moved towards its top `k` fused hits' mean."""

    k: int = 10
    beta: float = 0.5

    async def _cosines(
        self,
        vector: list[float] | None,
        keyword: list[tuple[int, float]],
        matches: list[VectorMatch],
    ) -> dict[int, float]:
        """The shipped cosines fuse a first pass; its top `k` move the query, whose cosines
        with every candidate are the ones fused."""
        cosines = await super()._cosines(vector, keyword, matches)
        if vector is None:
            return cosines
        scores = candidate_scores(keyword, matches, cosines)
        top = sorted(scores, key=lambda s: -scores[s])[: self.k]
        found = stored_vectors(self.store, top)
        if not found:
            return cosines
        q = np.asarray(vector, dtype=np.float32)
        mean = np.mean([unit(v) for v in found.values()], axis=0)
        moved = unit(q) + self.beta * mean
        return self.store.similarities(MODEL, DIMS, moved.tolist(), list(scores))


def stored_vectors(store: Any, seqs: list[int]) -> dict[int, Any]:
    """The stored (int8, scaled) first-chunk vectors of `seqs` that have one, as float32."""
    space = store._space_id(MODEL, DIMS)
    marks = ",".join("?" * len(seqs))
    rows = store._db.conn().execute(
        "SELECT seq, scale, vector FROM event_vectors WHERE space = ? AND chunk = 0"
        f" AND seq IN ({marks})",
        (space, *seqs),
    )
    return {int(seq): np.frombuffer(v, dtype=np.int8).astype(np.float32) * s for seq, s, v in rows}


def unit(v: Any) -> Any:
    """`v` scaled to length 1 (a zero vector stays near zero)."""
    return v / max(float(np.linalg.norm(v)), 1e-9)


class Centred(HybridSearch):
    """The hybrid with the cosines of vectors centred on the candidates' mean."""

    async def _cosines(
        self,
        vector: list[float] | None,
        keyword: list[tuple[int, float]],
        matches: list[VectorMatch],
    ) -> dict[int, float]:
        if vector is None:
            return {}
        seqs = list(dict.fromkeys([s for s, _ in keyword] + [m.seq for m in matches]))
        found = stored_vectors(self.store, seqs)
        if not found:
            return {}
        units = {seq: unit(v) for seq, v in found.items()}
        mean = np.mean(list(units.values()), axis=0)
        q = unit(unit(np.asarray(vector, dtype=np.float32)) - mean)
        return {
            seq: float((v - mean) @ q / max(float(np.linalg.norm(v - mean)), 1e-9))
            for seq, v in units.items()
        }


VARIANTS: dict[str, list[tuple[str, dict[str, float]]]] = {
    "prf": [
        (f"k{k} m{m} lambda {w}", {"k": k, "m": m, "weight": w})
        for k, m, w in [(3, 5, 0.2), (5, 5, 0.2), (5, 10, 0.1), (5, 10, 0.3), (10, 10, 0.2)]
    ],
    "dense-prf": [
        (f"k{k} beta {b}", {"k": k, "beta": b}) for k, b in [(3, 0.5), (10, 0.5), (5, 1.0)]
    ],
    "bm25-b": [(f"b {b}", {"b": b}) for b in (0.75, 0.6, 0.4, 0.3, 0.2, 0.0)],
    "centred": [(f"W {w}", {"meaning": w}) for w in (0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)],
    "weight": [(f"W {w}", {"meaning": w}) for w in (0.3, 0.4, 0.5, 0.6, 0.8, 1.0)],
}
VARIANTS.update(rescoring.VARIANTS)  # session, coverage, proximity (and none: a check)


def rankings(
    data: list[tuple[VectorStore, list[dict[str, Any]]]],
    embedder: LocalEmbedder,
    variant: str,
    options: dict[str, float],
    keyword_only: bool,
) -> list[bench.Ranking]:
    """Turn indexes per question, best first, for one variant and one mode."""

    async def run() -> list[bench.Ranking]:
        recall.SIMILARITY_WEIGHT = options.get("meaning", shipped_weight)
        try:
            found = []
            for store, questions in data:
                search = make(store, embedder, variant, options)
                for q in questions:
                    result = await search.search(q["question"], 10, keyword_only=keyword_only)
                    found.append([h.hit.seq - 1 for h in result.hits])
            return found
        finally:
            recall.SIMILARITY_WEIGHT = shipped_weight

    return asyncio.run(run())


def make(
    store: VectorStore, embedder: LocalEmbedder, variant: str, options: dict[str, float]
) -> HybridSearch:
    if variant == "prf":
        wrapped = FeedbackStore(store, int(options["k"]), int(options["m"]), options["weight"])
        return HybridSearch(wrapped, embedder)  # type: ignore[arg-type]
    if variant == "bm25-b":
        return HybridSearch(LengthStore(store, options["b"]), embedder)  # type: ignore[arg-type]
    if variant in rescoring.VARIANTS:
        return rescoring.make(store, embedder, variant, options)
    if variant == "centred":
        return Centred(store, embedder)
    if variant == "dense-prf":
        search = DenseFeedback(store, embedder)
        search.k, search.beta = int(options["k"]), options["beta"]
        return search
    return HybridSearch(store, embedder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="the --dir of a bench_locomo.py run")
    parser.add_argument("--data", type=Path, default=None, help="locomo-dev.json")
    parser.add_argument("--only", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    args = parser.parse_args()
    samples = json.loads((args.data or bench.find_data()).read_text(encoding="utf-8"))
    data = []
    questions: list[dict[str, Any]] = []
    for sample in samples:
        asked = bench.questions_of(sample, bench.turns_of(sample))
        store = data_dir_for(args.dir / sample["sample_id"] / "koroku.db").vectors()
        data.append((store, asked))
        questions.extend(asked)
    embedder = LocalEmbedder(bench.WordLlamaEmbedder())
    runs = [("shipped", "shipped", {})] + [
        (f"{variant} {label}", variant, options)
        for variant in args.only
        for label, options in VARIANTS[variant]
    ]
    keys = ["overall", *bench.CATEGORIES.values()]
    print(f"{'variant':<34}" + "".join(f" | {k:^23}" for k in keys))
    for label, variant, options in runs:
        for mode, keyword_only in (("hybrid", False), ("keyword", True)):
            if variant in ("dense-prf", "centred", "weight") and keyword_only:
                continue  # the keyword leg is the shipped one
            scores = bench.score(
                rankings(data, embedder, variant, options, keyword_only), questions
            )
            cells = "".join(
                f" | {s['any@5']:.3f} {s['any@10']:.3f} {s['all@10']:.3f} {s['R@10']:.3f}"
                for s in (scores[k] for k in keys)
            )
            print(f"{label + ' ' + mode:<34}{cells}", flush=True)


if __name__ == "__main__":
    main()
