"""`koroku import` of hostile exports (the inputs that gave tracebacks): one line, exit 2,
nothing written; the data dir is then used normally. (Every other field type, NaN and
number case runs in-process in tests/store/test_import_total.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import Koroku
from tests.sync.test_sync_crash import write_turns


def _export(koroku: Koroku) -> str:
    write_turns(koroku, 2, "A")
    done = koroku.run("export", "--format", "json")
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda t: t.replace('"A a0"', "[" * 1000 + "]" * 1000, 1), "nests deeper than"),
        (lambda t: t.replace('"A a0"', '"\\ud800"', 1), "lone surrogate"),
        (lambda t: t.replace('"schema_version": 1', '"schema_version": "x"', 1), "whole number"),
    ],
)
def test_a_hostile_export_is_refused_in_one_line_and_nothing_written(
    koroku: Koroku, tmp_path: Path, change: object, why: str
) -> None:
    text = _export(koroku)
    assert callable(change)
    hostile = change(text)
    assert hostile != text
    path = tmp_path / "hostile.json"
    path.write_text(hostile)
    target = Koroku(tmp_path / "fresh", koroku.workspace)
    done = target.run("import", str(path), KOROKU_HOME=str(target.home))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and why in done.stderr, done.stderr
    listed = target.run("history", "--all", "--jsonl", KOROKU_HOME=str(target.home))
    assert listed.returncode == 0 and listed.stdout == "", listed.stderr
    (tmp_path / "ok.json").write_text(text)
    again = target.run("import", str(tmp_path / "ok.json"), KOROKU_HOME=str(target.home))
    assert again.returncode == 0, again.stderr
    lines = target.run("history", "--all", "--jsonl", KOROKU_HOME=str(target.home)).stdout
    assert [json.loads(line)["parts"][0]["text"] for line in lines.splitlines()] == [
        "A q0",
        "A a0",
        "A q1",
        "A a1",
    ]
