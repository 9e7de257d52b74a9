"""Importing a big ChatGPT data export: time and peak memory of `koroku import`.

Writes a synthetic `conversations.json` of about `--mb` megabytes in the real export's shape
(each conversation a `mapping` tree with a hidden system node, a regenerated answer on a
second branch, a code-interpreter cell and its output, a reasoning node, a deleted node, and
ordinary user/assistant turns of a few hundred characters), then runs the real `koroku
import` in a subprocess on a fresh data dir (no API key: nothing is embedded) and reports
its wall time and peak RSS. For comparison in the same run: the same import of an export a
tenth the size (memory should not grow with the file: the export is streamed), and a
subprocess that only `json.load`s the whole file (what loading it whole would cost), and a
second import of the same file (idempotent: adds nothing). Run:

    uv run python benchmarks/bench_foreign_import.py            # 100 MB
    uv run python benchmarks/bench_foreign_import.py --mb 20    # quicker

Target: 100 MB in < 60 s, memory bounded. Not a test: timing belongs here, not in asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.imports.samples import msg  # noqa: E402

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "or",
    "from",
    "at",
    "an",
    "which",
    "Berlin",
    "Gemini",
    "zebra",
    "ocean",
    "résumé",
    "東京",
    "garden",
    "python",
    "memory",
    "export",
    "branch",
    "cube",
]


def _text(seed: int, length: int) -> str:
    out: list[str] = []
    n = seed
    size = 0
    while size < length:
        n = (n * 1103515245 + 12345) & 0x7FFFFFFF
        word = WORDS[n % len(WORDS)]
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def _msg(node_id: str, role: str, at: float | None, **content: Any) -> dict[str, Any]:
    """A message as the export writes it (tests/imports/samples.py), from a model."""
    code = content.get("content_type") == "code"
    return msg(node_id, role, at=at, recipient="python" if code else "all",
               name="python" if role == "tool" else None, model_slug="gpt-4o",
               finish_details={"type": "stop"}, **content)  # fmt: skip


def conversation(n: int, turns: int) -> dict[str, Any]:
    """One conversation of `turns` question/answer pairs with the odd nodes of a real one."""
    t0 = 1_600_000_000.0 + n * 3600
    nodes: dict[str, dict[str, Any]] = {}

    def add(node_id: str, parent: str | None, message: dict[str, Any] | None) -> None:
        nodes[node_id] = {"id": node_id, "message": message, "parent": parent, "children": []}
        if parent is not None:
            nodes[parent]["children"].append(node_id)

    add(f"{n}-root", None, None)
    add(f"{n}-sys", f"{n}-root", _msg(f"{n}-sys", "system", None, content_type="text", parts=[""]))
    nodes[f"{n}-sys"]["message"]["metadata"]["is_visually_hidden_from_conversation"] = True
    parent = f"{n}-sys"
    for k in range(turns):
        at = t0 + k * 60
        q, a = f"{n}-{k}-q", f"{n}-{k}-a"
        add(q, parent, _msg(q, "user", at, content_type="text", parts=[_text(n * 7 + k, 180)]))
        if k == 1:  # a regenerated answer: the first one stays on its own branch
            old = f"{n}-{k}-old"
            add(old, q, _msg(old, "assistant", at + 1, content_type="text", parts=[_text(k, 500)]))
        if k == 2:  # a code-interpreter cell, its output, a reasoning node, a deleted node
            code, out, think, gone = (f"{n}-{k}-{s}" for s in ("code", "out", "think", "gone"))
            add(code, q, _msg(code, "assistant", at + 2, content_type="code", language="python",
                              text="print(sum(range(10)))"))  # fmt: skip
            add(out, code, _msg(out, "tool", at + 3, content_type="execution_output", text="45"))
            add(think, out, _msg(think, "assistant", at + 4, content_type="thoughts", thoughts=[]))
            add(gone, think, None)
            q = gone
        add(a, q, _msg(a, "assistant", at + 5, content_type="text", parts=[_text(n + k, 650)]))
        parent = a
    return {
        "title": _text(n, 30),
        "create_time": t0,
        "update_time": t0 + turns * 60,
        "mapping": nodes,
        "current_node": parent,
        "conversation_id": f"bench-{n}",
        "id": f"bench-{n}",
        "moderation_results": [],
        "default_model_slug": "gpt-4o",
    }


def write_export(path: Path, megabytes: float, turns: int = 15) -> int:
    """Write conversations until the file is `megabytes` big; return how many."""
    limit = int(megabytes * 1_000_000)
    count = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        while out.tell() < limit:
            out.write(",\n" if count else "\n")
            out.write(json.dumps(conversation(count, turns), ensure_ascii=False))
            count += 1
        out.write("\n]\n")
    return count


def _run_child(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) and stdout of one child process (RSS from wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    output = proc.stdout.read().decode()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{args[2:]} failed ({proc.returncode}): {output}")
    return elapsed, usage.ru_maxrss / 1024, output.strip()


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env.update(KOROKU_HOME=str(home), PYTHONPATH=str(ROOT))
    return env


def main() -> None:
    """Run the measurements and print them (and write JSON to benchmarks/results/)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="export size in MB")
    parser.add_argument("--dir", type=Path, help="work dir (default: a temp dir)")
    args = parser.parse_args()
    work = Path(args.dir or tempfile.mkdtemp(prefix="koroku-bench-import-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"mb": args.mb}
    py = sys.executable
    for label, size in (("small", args.mb / 10), ("big", args.mb)):
        export = work / f"{label}" / "conversations.json"
        export.parent.mkdir(exist_ok=True)
        chats = write_export(export, size)
        real_mb = export.stat().st_size / 1e6
        home = work / f"{label}-home"
        cmd = [py, "-m", "koroku_desktop", "import", str(export)]
        seconds, rss, said = _run_child(cmd, _env(home))
        again_s, again_rss, again_said = _run_child(cmd, _env(home))
        results[label] = {
            "file_mb": round(real_mb, 1),
            "conversations": chats,
            "seconds": round(seconds, 2),
            "peak_rss_mib": round(rss, 1),
            "reimport_seconds": round(again_s, 2),
            "reimport_peak_rss_mib": round(again_rss, 1),
            "said": said,
            "reimport_said": again_said,
        }
        print(
            f"{label:>5}: {real_mb:6.1f} MB, {chats:,} conversations: import {seconds:6.2f} s, "
            f"peak RSS {rss:6.1f} MiB; again (adds nothing) {again_s:6.2f} s, {again_rss:6.1f} MiB"
        )
        print(f"       {said}")
    export = work / "big" / "conversations.json"
    load = [py, "-c", f"import json; json.load(open({str(export)!r}, 'rb')); print('ok')"]
    seconds, rss, _ = _run_child(load, dict(os.environ))
    results["json_load_whole"] = {"seconds": round(seconds, 2), "peak_rss_mib": round(rss, 1)}
    print(f"baseline: json.load of the whole {args.mb:.0f} MB file: {seconds:.2f} s, {rss:.1f} MiB")
    out_dir = ROOT / "benchmarks" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "foreign_import.json").write_text(json.dumps(results, indent=2))
    if args.dir is None:
        subprocess.run(["rm", "-rf", str(work)], check=False)


if __name__ == "__main__":
    main()
