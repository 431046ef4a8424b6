"""Where V8 cannot be loaded (no mini-racer wheel for the platform, a broken install), a cell's verdict is
unknown, never a guess: ``parse_error`` is None with a ``verdict-unknown`` finding, nothing is proven, and
the reader takes ``executed`` from the records alone, with a one-line notice. And V8 is loaded lazily: a
command that analyses no cell never imports it.

The failure is simulated as an absent package (``sys.modules["py_mini_racer"] = None`` makes its import
fail), in this process for the library and in a child process for the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import exec_grammar
from exec_grammar import analyze, v8
from exec_grammar.proof import proven_calls
from tests.sessions_home import build_home
from transcript_reader import read

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPTS = ROOT / "fixtures" / "transcripts"
#: Codex 0.144-style: no records, so a proven call was ``executed: yes`` on the proof alone
NO_RECORDS = TRANSCRIPTS / "code_mode_no_records.jsonl"
#: Codex 0.150+: every command a cell ran is recorded
WITH_RECORDS = TRANSCRIPTS / "code_mode_records.jsonl"
#: Run before the command in a child process: the package cannot be imported there.
BLOCK_V8 = "import sys; sys.modules['py_mini_racer'] = None\n"


@pytest.fixture
def no_v8(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    saved = dict(v8._state)
    v8._state.clear()
    monkeypatch.setitem(sys.modules, "py_mini_racer", None)
    exec_grammar.clear_analysis_cache()
    try:
        yield
    finally:
        v8._state.clear()
        v8._state.update(saved)
        exec_grammar.clear_analysis_cache()


def _rows(path: Path) -> list[tuple[str, str | None, str | None, str | None]]:
    out = []
    for item in read(path).items:
        kind = item.kind.value
        if kind in ("shell_command", "tool_call", "patch"):
            executed = getattr(item, "executed", None)
            evidence = getattr(item, "evidence", None)
            out.append((kind, getattr(item, "command", None) or getattr(item, "name", None),
                        getattr(executed, "value", executed), getattr(evidence, "value", evidence)))
    return out


def test_the_verdict_is_unknown_and_nothing_is_proven(no_v8: None) -> None:
    a = analyze('const r = await tools.exec_command({cmd: "ls"});\nlet x = ;')
    assert a.parse_error is None  # not "it compiles": the finding says the verdict is unknown
    codes = {f.code: f.message for f in a.findings}
    assert "verdict-unknown" in codes and "could not be loaded" in (codes["verdict-unknown"] or "")
    assert [c.name for c in a.calls] == ["exec_command"]  # the calls are still read
    assert v8.load_error() is not None and not v8.available()
    proven_shape = analyze('await tools.exec_command({cmd: "ls"});')
    assert proven_shape.proven == () and proven_calls(proven_shape) == ()


def test_the_reader_takes_executed_from_the_records_alone(no_v8: None) -> None:
    rows = _rows(NO_RECORDS)
    # the proven `ls` is no longer "yes" on the proof: no record says it ran
    assert ("shell_command", "ls", "unknown", None) in rows
    assert not any(evidence == "proof" for *_, evidence in rows)
    notices = [i for i in read(NO_RECORDS).items if i.kind.value == "notice" and i.category == "analysis"]
    assert len(notices) == 1 and "\n" not in notices[0].message  # once a session, one line
    assert "verdicts are unknown" in notices[0].message


def test_records_give_the_same_executed_as_with_v8() -> None:
    """A session whose commands are all recorded reads the same without V8, apart from the notice."""
    exec_grammar.clear_analysis_cache()
    with_v8 = _rows(WITH_RECORDS)
    mp = pytest.MonkeyPatch()
    saved = dict(v8._state)
    try:
        v8._state.clear()
        mp.setitem(sys.modules, "py_mini_racer", None)
        exec_grammar.clear_analysis_cache()
        without = _rows(WITH_RECORDS)
    finally:
        mp.undo()
        v8._state.clear()
        v8._state.update(saved)
        exec_grammar.clear_analysis_cache()
    assert without == with_v8


def _cli(*args: str, env: dict[str, str] | None = None, block: bool = True) -> subprocess.CompletedProcess[str]:
    code = (BLOCK_V8 if block else "") + (
        "import sys\n"
        "from transcript_reader.cli import main\n"
        f"sys.argv = ['transcript-reader', *{list(args)!r}]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\nelse:\n    code = 0\n"
        "sys.stderr.write('\\nV8 IMPORTED: %s\\n' % ('py_mini_racer' in sys.modules and sys.modules['py_mini_racer'] is not None))\n"
        "sys.exit(code)\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=env)


def test_cli_read_without_v8() -> None:
    p = _cli("read", str(NO_RECORDS), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    notices = [i for i in doc["items"] if i["kind"] == "notice" and i.get("category") == "analysis"]
    assert len(notices) == 1
    ls = [i for i in doc["items"] if i["kind"] == "shell_command" and i.get("command") == "ls"]
    assert ls and ls[0]["executed"] == "unknown"
    assert "Traceback" not in p.stderr


def test_cli_script_without_v8(tmp_path: Path) -> None:
    cell = tmp_path / "cell.js"
    cell.write_text('await tools.exec_command({cmd: "ls"});\n', encoding="utf-8")
    p = _cli("script", str(cell), "--json")
    assert p.returncode == 0, p.stderr
    assert "verdict-unknown" in p.stdout and "Traceback" not in p.stderr


def test_commands_that_analyse_nothing_never_load_v8(tmp_path: Path) -> None:
    """``ls`` lists sessions (a code-mode one among them) and ``show`` renders a session without exec
    cells: neither imports mini-racer. ``show`` of a code-mode session does (the control)."""
    home = build_home(tmp_path)
    env = {**os.environ, "CODEX_HOME": str(home.home), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    plain = TRANSCRIPTS / "pairing_records_direct.jsonl"
    assert '"name": "exec"' not in plain.read_text(encoding="utf-8")
    for args in (("ls", "--all"), ("show", str(plain), "--no-pager")):
        p = _cli(*args, env=env, block=False)
        assert p.returncode == 0, (args, p.stderr)
        assert "V8 IMPORTED: False" in p.stderr, args
    p = _cli("show", str(WITH_RECORDS), "--no-pager", env=env, block=False)
    assert p.returncode == 0 and "V8 IMPORTED: True" in p.stderr
