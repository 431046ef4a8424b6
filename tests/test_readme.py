"""Every ``transcript-reader`` command the README shows runs as shown: each is taken from the
README's code blocks (a line of a ``bash`` block, or a ``$ …`` line of an output block), its file
placeholders pointed at fixtures, and run in a shell against the fixtures home; it must exit 0 without
a traceback. Servers (``mcp``) and a Dask cluster address are the only commands left out, by name."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests import sessions_home as H

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: placeholders in the README -> what stands for them here (relative to the test's directory)
PLACEHOLDERS = {
    "rollout.jsonl": "rollout.jsonl", "cell.js": "cell.js", "~/.codex/sessions": "$CODEX_HOME/sessions",
    "DIR FILE…": "$CODEX_HOME rollout.jsonl", "DIR": "$CODEX_HOME",
}


def readme_commands() -> list[str]:
    commands = []
    block: str | None = None
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            block = line[3:].strip() if block is None else None
            continue
        if block is None:
            continue
        if block == "bash" and line.startswith("transcript-reader "):
            commands.append(line)
        elif block == "" and line.startswith("$ transcript-reader "):
            commands.append(line[2:])
    return commands


def runnable(line: str) -> str | None:
    """The line as this test runs it, or None for a command that is not a one-shot (a server)."""
    cmd = re.split(r"\s{2,}#", line)[0].strip()
    words = cmd.split()
    if words[1] == "mcp" or "--dask" in words:
        return None
    for old, new in PLACEHOLDERS.items():
        cmd = re.sub(rf"(?<![\w/.-]){re.escape(old)}(?![\w/.-])", new, cmd)
    return cmd


COMMANDS = readme_commands()


def test_the_readme_has_commands_to_run() -> None:
    assert len(COMMANDS) >= 20 and sum(runnable(c) is not None for c in COMMANDS) >= 15


@pytest.mark.parametrize("line", [c for c in COMMANDS if runnable(c) is not None])
def test_a_readme_command_runs_as_shown(line: str, tmp_path: Path) -> None:
    home = H.build_home(tmp_path)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "transcript-reader"
    tool.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m transcript_reader \"$@\"\n")
    tool.chmod(0o755)
    (home.project / "rollout.jsonl").write_bytes(home.file_of(H.CODE_MODE).read_bytes())
    (home.project / "cell.js").write_text((ROOT / "fixtures/js/hand").glob("*.js").__next__().read_text())
    env = {"PATH": f"{bindir}:{os.environ.get('PATH', '')}", "HOME": str(tmp_path / "userhome"),
           "CODEX_HOME": str(home.home), "XDG_CACHE_HOME": str(tmp_path / "cache"), "TZ": "UTC",
           "PWD": str(home.project), "PYTHONPATH": str(ROOT), "TRANSCRIPT_READER_FOLLOW_IDLE_EXIT": "0.5"}
    cmd = runnable(line)
    assert cmd is not None
    p = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=home.project, env=env, capture_output=True,
                       text=True, timeout=300)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 0, (cmd, p.stdout[-2000:], p.stderr[-2000:])
    assert p.stdout.strip() or p.stderr.strip(), cmd
