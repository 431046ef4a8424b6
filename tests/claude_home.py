"""Build a fake home with both providers in a test's tmp_path: ``$CODEX_HOME`` from ``fixtures/codex_home``
(``tests/sessions_home.py``) and a Claude Code configuration folder (``$CLAUDE_CONFIG_DIR``) whose
``projects/`` holds the real CLI's recordings of ``fixtures/claude/recorded`` (sessions and sub-agent files,
as the CLI laid them out). Recorded cwds are moved into the test's own project directory, so "the current
project" means the same folder for both providers."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.sessions_home import FakeHome, build_home

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "recorded" / "2.1.332"
RECORDED_CWD = "/home/user/project"


@dataclass(frozen=True)
class MixedHome:
    codex: FakeHome
    claude: Path  # the Claude Code configuration folder ($CLAUDE_CONFIG_DIR)

    @property
    def project(self) -> Path:
        return self.codex.project


def slug(cwd: str) -> str:
    return cwd.replace("/", "-")


def build_mixed_home(tmp_path: Path, scenarios: tuple[str, ...] = ("bash_fail", "edit_write", "task_agent")) -> MixedHome:
    codex = build_home(tmp_path)
    claude = tmp_path / "claude_config"
    dest = claude / "projects" / slug(str(codex.project))
    for name in scenarios:
        src_root = RECORDED / f"{name}.projects" / slug(RECORDED_CWD)
        for src in sorted(src_root.rglob("*")):
            if not src.is_file() or src.name.endswith(".golden.json"):
                continue
            dst = dest / src.relative_to(src_root)
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.suffix == ".jsonl":
                dst.write_text(src.read_text(encoding="utf-8").replace(RECORDED_CWD, str(codex.project)),
                               encoding="utf-8")
            else:
                shutil.copyfile(src, dst)
    return MixedHome(codex=codex, claude=claude)
