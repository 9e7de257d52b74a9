"""Retrieval on LoCoMo: does `koroku search` find the turns that answer a question?

Run by hand (not by pytest):
    uv run --group bench python benchmarks/bench_locomo.py [--data PATH] [--limit N]

For each conversation of the development split (../shared/benchmarks/locomo-dev/, read its
README; figures on it are for development, the other seven conversations are held out):

1. the dialogue becomes a Koroku JSON export (one message a turn: the first speaker as the
   person, the second as the model; "Name: text", a shared photo as its caption; each
   session's turns at its date) and goes in through `koroku import` into a fresh data dir,
   which embeds it through the fake Gemini server's `:batchEmbedContents`, here backed by
   WordLlama (a small static embedding model whose weights ship in its wheel: 256
   dimensions, zero-padded to the 768 Koroku asks for, which leaves every cosine as it is);
2. every question of categories 1-4 is asked through one `koroku search --queries FILE`
   process (hybrid, the default) and one `--keyword` process (its keyword leg alone);
3. in the same run, the baselines over the same turns: BM25 (`bm25s`, Snowball-stemmed,
   English stop words) and dense cosine with the same WordLlama vectors.

Scores per category and overall, on the evidence turns: any@5, any@10 (at least one
evidence turn in the top k), all@10 (every one) and R@10 (the paper's recall: the mean share
of a question's evidence turns in the top 10). Writes benchmarks/results/bench_locomo.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from koroku_desktop.domain.events import MessageEvent, dump_event  # noqa: E402
from koroku_desktop.domain.ids import new_id  # noqa: E402
from koroku_desktop.domain.parts import TextPart  # noqa: E402
from tests.fakes.fixtures import TEST_API_KEY  # noqa: E402
from tests.fakes.gemini_server import FakeGemini  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
STOP_WORDS = "en"
Ranking = list[int]
"""Turn indexes, best first."""


def find_data() -> Path:
    """The split beside the repository (../shared/benchmarks/locomo-dev/)."""
    for parent in ROOT.parents:
        candidate = parent / "shared" / "benchmarks" / "locomo-dev" / "locomo-dev.json"
        if candidate.is_file():
            return candidate
    raise SystemExit("LoCoMo development split not found: pass --data PATH")


def turns_of(sample: dict[str, Any]) -> list[dict[str, Any]]:
    """The dialogue's turns in order: id, speaker, text (a shared photo as its caption) and
    the session's date."""
    conv = sample["conversation"]
    turns: list[dict[str, Any]] = []
    n = 1
    while f"session_{n}" in conv:
        date = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
        for turn in conv[f"session_{n}"]:
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            turns.append(
                {
                    "id": turn["dia_id"],
                    "speaker": turn["speaker"],
                    "line": f"{turn['speaker']}: {text}",
                    "at": date.timestamp(),
                }
            )
        n += 1
    return turns


def evidence_ids(raw: list[str]) -> list[str]:
    """Evidence ids normalised (`D:11:26` -> `D11:26`, `D30:05` -> `D30:5`, `a; b` split)."""
    found: list[str] = []
    for item in raw:
        for piece in re.split(r"[;,]\s*", item):
            match = re.fullmatch(r"D:?(\d+):0*(\d+)", piece.strip())
            if match:
                found.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return found


def questions_of(sample: dict[str, Any], turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Questions of categories 1-4 with the indexes of their evidence turns (ids that name
    no turn are skipped; a question left without evidence is left out)."""
    where = {t["id"]: n for n, t in enumerate(turns)}
    found = []
    for qa in sample["qa"]:
        if qa.get("category") not in CATEGORIES:
            continue
        evidence = {where[e] for e in evidence_ids(qa.get("evidence", [])) if e in where}
        if evidence:
            found.append({"question": qa["question"], "category": qa["category"], "ev": evidence})
    return found


def write_export(turns: list[dict[str, Any]], path: Path) -> None:
    """The dialogue as a Koroku export: seq n+1 is turn n (a turn a second within a session)."""
    events = []
    for n, turn in enumerate(turns):
        role = "user" if n == 0 or turn["speaker"] == turns[0]["speaker"] else "model"
        event = MessageEvent(role=role, parts=[TextPart(text=turn["line"])])
        events.append(
            {
                "seq": n + 1,
                "conversation_id": "default",
                "created_at": turn["at"] + n,
                "kind": "message",
                "payload": dump_event(event),
                "event_id": new_id(),
                "turn_id": new_id(),
                "writer": "bench@locomo",
            }
        )
    body = {"format": "koroku-export", "version": 1, "scope": "all", "exported_at": time.time()}
    body["events"] = events
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")


class WordLlamaEmbedder:
    """WordLlama's bundled model as the fake server's embedder (loaded from its own wheel:
    `cache_dir` is the package folder, so nothing is downloaded)."""

    def __init__(self) -> None:
        import wordllama

        folder = Path(wordllama.__file__).parent
        self.model = wordllama.WordLlama.load(cache_dir=folder, disable_download=True)

    def vectors(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of `texts` (256 dimensions)."""
        v = np.asarray(self.model.embed(texts), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)

    def __call__(self, texts: list[str], dims: int, model: str) -> list[list[float]]:
        v = self.vectors(texts)
        padded = np.zeros((len(texts), max(dims, v.shape[1])), dtype=np.float32)
        padded[:, : v.shape[1]] = v
        return padded[:, :dims].tolist()


def koroku(home: Path, fake: FakeGemini, *args: str, stdin: str | None = None) -> str:
    """Run `koroku ARGS` on `home` against the fake server; its stdout."""
    env = dict(os.environ)
    env.update(
        KOROKU_HOME=str(home),
        GOOGLE_GEMINI_BASE_URL=fake.base_url,
        GEMINI_API_KEY=TEST_API_KEY,
        PYTHONPATH=str(ROOT),
    )
    done = subprocess.run(
        [sys.executable, "-m", "koroku_desktop", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=3600,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"koroku {args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def koroku_rankings(
    home: Path, fake: FakeGemini, questions: list[str], limit: int, *extra: str
) -> list[Ranking]:
    """Turn indexes (seq - 1) `koroku search` returns per question, best first."""
    queries = home / "queries.txt"
    queries.write_text("\n".join(questions) + "\n", encoding="utf-8")
    out = koroku(home, fake, "search", "--queries", str(queries), "--limit", str(limit), *extra)
    lines = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(lines) == len(questions), (len(lines), len(questions))
    return [[h["seq"] - 1 for h in line["hits"] if "seq" in h] for line in lines]


def bm25_rankings(lines: list[str], questions: list[str], k: int) -> list[Ranking]:
    """The BM25 baseline: bm25s over the turns, stemmed, stop words out."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    corpus = bm25s.tokenize(lines, stopwords=STOP_WORDS, stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    found = []
    for question in questions:
        tokens = bm25s.tokenize(
            [question], stopwords=STOP_WORDS, stemmer=stemmer, show_progress=False
        )
        if not tokens.vocab:
            found.append([])
            continue
        docs, _ = retriever.retrieve(tokens, k=min(k, len(lines)), show_progress=False)
        found.append([int(d) for d in docs[0]])
    return found


def dense_rankings(
    embed: WordLlamaEmbedder, lines: list[str], questions: list[str], k: int
) -> list[Ranking]:
    """The dense baseline: cosine between the question's and each turn's WordLlama vector."""
    scores = embed.vectors(questions) @ embed.vectors(lines).T
    return [list(np.argsort(-row, kind="stable")[:k]) for row in scores]


def score(rankings: list[Ranking], questions: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """any@5, any@10, all@10 and R@10 per category and overall."""
    sums: dict[str, list[float]] = {}
    for ranked, q in zip(rankings, questions, strict=True):
        ev = q["ev"]
        top5, top10 = set(ranked[:5]), set(ranked[:10])
        row = [1, bool(top5 & ev), bool(top10 & ev), ev <= top10, len(top10 & ev) / len(ev)]
        for key in (CATEGORIES[q["category"]], "overall"):
            acc = sums.setdefault(key, [0.0] * 5)
            for i, value in enumerate(row):
                acc[i] += float(value)
    return {
        key: {
            "questions": int(acc[0]),
            "any@5": acc[1] / acc[0],
            "any@10": acc[2] / acc[0],
            "all@10": acc[3] / acc[0],
            "R@10": acc[4] / acc[0],
        }
        for key, acc in sums.items()
    }


def run(data: Path, limit: int, work: Path) -> dict[str, Any]:
    """Import, search and score every conversation; the baselines in the same run."""
    samples = json.loads(data.read_text(encoding="utf-8"))
    embed = WordLlamaEmbedder()
    fake = FakeGemini()
    fake.embedder = embed
    rankings: dict[str, list[Ranking]] = {}
    questions_all: list[dict[str, Any]] = []
    timings: dict[str, float] = {}
    with fake:
        for sample in samples:
            turns = turns_of(sample)
            questions = questions_of(sample, turns)
            texts = [q["question"] for q in questions]
            lines = [t["line"] for t in turns]
            home = work / sample["sample_id"]
            home.mkdir(parents=True)
            export = home / "export.json"
            write_export(turns, export)
            started = time.perf_counter()
            koroku(home, fake, "import", str(export))
            timings[f"import {sample['sample_id']}"] = time.perf_counter() - started
            started = time.perf_counter()
            found = {
                "koroku hybrid": koroku_rankings(home, fake, texts, limit),
            }
            timings[f"search {sample['sample_id']}"] = time.perf_counter() - started
            found["koroku --keyword"] = koroku_rankings(home, fake, texts, limit, "--keyword")
            found["BM25 (bm25s)"] = bm25_rankings(lines, texts, limit)
            found["dense (WordLlama)"] = dense_rankings(embed, lines, texts, limit)
            for name, ranked in found.items():
                rankings.setdefault(name, []).extend(ranked)
            questions_all.extend(questions)
            print(
                f"{sample['sample_id']}: {len(turns)} turns, {len(questions)} questions",
                file=sys.stderr,
            )
    return {
        "data": str(data),
        "turns": sum(len(turns_of(s)) for s in samples),
        "questions": len(questions_all),
        "scores": {name: score(r, questions_all) for name, r in rankings.items()},
        "timings_s": timings,
    }


def print_table(result: dict[str, Any]) -> None:
    """Per method and category: any@5 / any@10 / all@10 / R@10."""
    keys = ["overall", *CATEGORIES.values()]
    print(f"LoCoMo development split: {result['turns']:,} turns, {result['questions']} questions")
    header = f"{'method':<20}" + "".join(f" | {k:^27}" for k in keys)
    print(header)
    print(f"{'':<20}" + " | any@5 any@10 all@10  R@10" * len(keys))
    for name, scores in result["scores"].items():
        cells = "".join(
            f" | {s['any@5']:.3f} {s['any@10']:.3f}  {s['all@10']:.3f} {s['R@10']:.3f}"
            for s in (scores[k] for k in keys)
        )
        print(f"{name:<20}{cells}")
    counts = ", ".join(f"{k} {result['scores']['koroku hybrid'][k]['questions']}" for k in keys)
    print(f"questions: {counts}")


def main() -> None:
    """Parse the options, run, print and save."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="locomo-dev.json")
    parser.add_argument("--limit", type=int, default=10, help="results per question")
    parser.add_argument("--dir", type=Path, default=None, help="work dir (default: a temp dir)")
    args = parser.parse_args()
    data = args.data or find_data()
    with tempfile.TemporaryDirectory(prefix="bench-locomo-") as tmp:
        result = run(data, args.limit, args.dir or Path(tmp))
    print_table(result)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_locomo.json").write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
