"""Build a fake ``$CODEX_HOME`` in a test's tmp_path from ``fixtures/codex_home``.

The home holds several dates, an archived session, a ``.jsonl.zst`` one, a sub-agent under its parent,
the TS CLI's ``.json``, an early Rust file and a session index with a rename. Recorded cwds are moved
into the test's own directories so ``ls`` run from ``project`` finds "the current project".
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import zstandard

FIXTURE_HOME = Path(__file__).resolve().parents[1] / "fixtures" / "codex_home"

#: Session ids of the fixture home (see fixtures/codex_home/README.md).
CODE_MODE = "01a22d9c-5471-7953-942f-93603d8b9241"  # 11-30, renamed "Code-mode cells demo"
OTHER_PROJECT = "01a22d9c-0b64-7760-ab6e-8ce6ad3eeddb"  # 11-30, cwd = other project
PARENT = "01a22d9c-2643-7350-8a76-f18f2f46ae21"  # 11-29, named "Fix calc.py"
SUBAGENT = "01a22d9c-3ed4-7040-9dc9-79464ca7358c"  # 11-29, thread_spawn child of PARENT
V130 = "01a22d9a-d425-77e3-892e-19a55b5feda8"  # 11-28
ZST = "01a22d9a-dccf-7c32-ae28-aa589c193733"  # 11-28, compressed
EARLY = "a15ecbf8-dd23-4bc0-bd21-281b20e67e5a"  # 11-27, 0.29 early Rust
PYTEST = "01a22d9c-7e57-7000-8000-00000000a11d"  # 11-26, runs pytest (2 passed)
TS = "644b77d0-e8b0-4c9f-8b98-4376343dbf5f"  # 11-26, TS CLI .json (records no cwd)
ARCHIVED = "01a22d9c-2200-7ec1-96c6-d9fecf45419e"  # 11-25, archived

#: Top-level sessions of the project, newest first (the sub-agent sits under PARENT).
PROJECT_LIVE_ORDER = [CODE_MODE, PARENT, SUBAGENT, ZST, V130, EARLY, PYTEST]


@dataclass(frozen=True)
class FakeHome:
    home: Path
    project: Path
    other: Path

    def file_of(self, session_id: str) -> Path:
        hits = [p for p in self.home.rglob("rollout-*") if session_id in p.name]
        assert len(hits) == 1, hits
        return hits[0]


def build_home(tmp_path: Path, *, plain_twin_of_zst: bool = False, keep_paths: bool = False) -> FakeHome:
    """``keep_paths``: leave the recorded cwds (``/home/user/project``) as they are, for output that must
    not depend on where the test runs (the browser's SVG snapshots)."""
    home = tmp_path / "codex_home"
    project = tmp_path / "work" / "project"
    other = tmp_path / "work" / "other"
    project.mkdir(parents=True)
    other.mkdir(parents=True)
    for src in sorted(FIXTURE_HOME.rglob("*")):
        if not src.is_file() or src.name == "README.md":
            continue
        rel = src.relative_to(FIXTURE_HOME)
        if rel.parts[0] == "exec_streams":
            continue
        text = src.read_text(encoding="utf-8")
        if not keep_paths:
            text = text.replace("/home/user/project", str(project)).replace("/home/user/other", str(other))
        if rel.parts[0] == "zst_sources":
            dst = home / Path(*rel.parts[1:])
            dst.parent.mkdir(parents=True, exist_ok=True)
            data = text.encode("utf-8")
            (dst.parent / (dst.name + ".zst")).write_bytes(zstandard.ZstdCompressor().compress(data))
            if plain_twin_of_zst:
                dst.write_bytes(data)
            continue
        dst = home / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(text, encoding="utf-8")
    return FakeHome(home=home, project=project, other=other)


def copy_fixture(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


#: The real recording the package bundles as its example (``transcript_reader/examples``).
EXAMPLE = Path(__file__).resolve().parents[1] / "transcript_reader" / "examples" / \
    "codex-0.171.0-multi_step.rollout.jsonl"


def edited_example(tmp_path: Path, old: str, new: str) -> Path:
    """The bundled real recording with one piece of its JSON text replaced (a long command, control
    characters, a big output), written to ``tmp_path``."""
    text = EXAMPLE.read_text(encoding="utf-8")
    assert old in text
    out = tmp_path / "edited.rollout.jsonl"
    out.write_text(text.replace(old, new), encoding="utf-8")
    return out
