"""The conformance check that follows a recording, run over the real recordings of ../shared (every
Codex version with an ``exec --json`` stream): the reader's reading of each rollout matches its stream.
The TypeScript CLI (0.1.x) printed no stream, which the check reports instead of passing silently."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from corpus_tools.record.conformance import check, check_dir

REALCODEX = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "realcodex"


def _versions() -> list[str]:
    if not REALCODEX.is_dir():
        return []
    return sorted(p.name for p in REALCODEX.iterdir() if p.is_dir() and p.name[0].isdigit())


@pytest.mark.skipif(not REALCODEX.is_dir(), reason=f"{REALCODEX} is absent (fresh clone without ../shared)")
@pytest.mark.parametrize("version", _versions())
def test_real_recordings_conform(version: str) -> None:
    results = check_dir(REALCODEX / version)
    assert results
    if version.startswith("0.1."):
        assert all(r.problems == ["no exec --json stream"] for r in results)
        return
    assert [(r.name, r.problems) for r in results if not r.ok] == []
    if version == "0.144.0":  # code mode before records: commands only statically known, said so
        assert {r.name for r in results if r.notes} == {"code_mode_flag", "code_mode_multi_cell", "code_mode_only"}


@pytest.mark.skipif(not REALCODEX.is_dir(), reason=f"{REALCODEX} is absent (fresh clone without ../shared)")
def test_a_drift_is_reported(tmp_path: Path) -> None:
    src = REALCODEX / "0.171.0"
    for name in ("multi_step.rollout.jsonl", "multi_step.exec.jsonl"):
        shutil.copy(src / name, tmp_path / name)
    assert check(tmp_path, "multi_step").ok
    stream = tmp_path / "multi_step.exec.jsonl"
    lines = stream.read_text().splitlines()
    stream.write_text("\n".join(line.replace('"exit_code":0', '"exit_code":3') for line in lines) + "\n")
    result = check(tmp_path, "multi_step")
    assert not result.ok and result.problems[0].startswith("commands differ")
    (tmp_path / "multi_step.rollout.jsonl").unlink()
    assert check(tmp_path, "multi_step").problems == ["no rollout was written"]


def test_this_projects_recordings_conform() -> None:
    """The recordings this project's recorder made (fixtures/recorder; present on a fresh clone)."""
    root = Path(__file__).resolve().parents[1] / "fixtures" / "recorder" / "0.171.0"
    results = {r.name: r for r in check_dir(root)}
    assert set(results) == {"code_mode_cell", "shell_and_patch"}
    assert all(r.ok and not r.notes for r in results.values()), [r.problems for r in results.values()]
    cell = results["code_mode_cell"]
    assert cell.commands == [("cat calc.py", 0), ("python3 -c 'import calc; print(calc.add(2, 3))'", 0)]
    assert cell.files == [("calc.py",)]
