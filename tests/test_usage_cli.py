"""``transcript-reader usage``, run as a user runs it (a real process over a fake ``$CODEX_HOME``), against
witnesses that are not the reader's code: the token fields read straight off the raw lines here (a few
lines of JSON), on every real recording of ``../shared/corpus/realcodex`` and on files written here with
a resumed counter, a re-emitted count, a fork and a sub-agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import sessions_home as H
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[1]
REAL = CORPUS / "realcodex"
FIELDS = ("input", "cached_input", "output", "reasoning", "total")
_RAW = {"input": "input_tokens", "cached_input": "cached_input_tokens", "output": "output_tokens",
        "reasoning": "reasoning_output_tokens", "total": "total_tokens"}


def usage(home: Path, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home.parent / "userhome"), "CODEX_HOME": str(home),
           "CLAUDE_CONFIG_DIR": str(home.parent / "no-claude"), "XDG_CACHE_HOME": str(home.parent / "cache"),
           "COLUMNS": "120", "TZ": "UTC", "PYTHONPATH": str(ROOT)}
    where = cwd or home.parent
    env["PWD"] = str(where)
    p = subprocess.run([sys.executable, "-m", "transcript_reader", "usage", *args], cwd=where, env=env,
                       capture_output=True, text=True, timeout=300)
    assert "Traceback" not in p.stderr, p.stderr
    if check:
        assert p.returncode == 0, (p.stdout, p.stderr)
    return p


def usage_json(home: Path, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(usage(home, *args, "--json", cwd=cwd).stdout)
    assert out["ok"] is True
    return out


# ---- the independent count -------------------------------------------------------------------------


def raw_tokens(path: Path) -> dict[str, int] | None:
    """Token fields read straight off the lines: every ``token_count`` whose running total moved adds its
    ``last_token_usage`` (a drop in the running total is a resumed run: its calls count too); in a fork,
    the events written in the instant of the copied header are the parent's and are left out. None when
    no line carries usage."""
    prev: Any = None
    fork_at: str | None = None
    sums = dict.fromkeys(FIELDS, 0)
    seen = False
    data = path.read_bytes()
    if path.suffix == ".zst":
        import zstandard

        data = zstandard.ZstdDecompressor().stream_reader(data).read()
    for n, line in enumerate(data.decode("utf-8").splitlines()):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        p = obj.get("payload")
        if n == 0 and obj.get("type") == "session_meta" and isinstance(p, dict) and p.get("forked_from_id"):
            fork_at = obj.get("timestamp")
        if not (isinstance(p, dict) and p.get("type") == "token_count" and isinstance(p.get("info"), dict)):
            continue
        running = p["info"].get("total_token_usage")
        if running == prev:
            continue  # re-emitted
        prev = running
        if fork_at is not None and obj.get("timestamp") == fork_at:
            continue  # the parent's usage, copied into the fork
        seen = True
        last = p["info"]["last_token_usage"]
        for f in FIELDS:
            sums[f] += int(last.get(_RAW[f]) or 0)
    return sums if seen else None


def tokens_of(row: dict[str, Any]) -> dict[str, int] | None:
    t = row["tokens"]
    return None if t is None else {f: t[f] for f in FIELDS}


# ---- a home written here ---------------------------------------------------------------------------

PARENT = "00000000-0000-7000-8000-0000000000a1"
RESUMED = "00000000-0000-7000-8000-0000000000a2"
FORK = "00000000-0000-7000-8000-0000000000a3"
SUB = "00000000-0000-7000-8000-0000000000a4"
NOUSAGE = "00000000-0000-7000-8000-0000000000a5"


def _u(total: int, cached: int = 0, reasoning: int = 0) -> dict[str, int]:
    return {"input_tokens": total - 10, "cached_input_tokens": cached, "output_tokens": 10,
            "reasoning_output_tokens": reasoning, "total_tokens": total}


def _tc(ts: str, running: int, last: int) -> dict[str, Any]:
    return {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count", "info": {
        "total_token_usage": _u(running, running // 4), "last_token_usage": _u(last, last // 4, 2)}}}


def _meta(ts: str, sid: str, cwd: str, **extra: Any) -> dict[str, Any]:
    return {"timestamp": ts, "type": "session_meta", "payload": {
        "id": sid, "timestamp": ts, "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.160.0", **extra}}


def _turn(ts: str, model: str, cwd: str) -> dict[str, Any]:
    return {"timestamp": ts, "type": "turn_context", "payload": {"model": model, "cwd": cwd}}


def _prompt(ts: str, text: str) -> dict[str, Any]:
    return {"timestamp": ts, "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}


def write_home(root: Path) -> tuple[Path, Path]:
    """A home of five sessions in the project ``root/proj``: a parent with a sub-agent, a file resumed
    into itself (its counter restarts), a fork of the parent (the parent's usage copied in), and a
    session whose file records no usage."""
    home, proj = root / "codex_home", root / "proj"
    proj.mkdir(parents=True)
    cwd = str(proj)
    day = home / "sessions" / "2026" / "03" / "01"
    day.mkdir(parents=True)
    files = {
        PARENT: [_meta("2026-03-01T00:00:00.000Z", PARENT, cwd, source="cli"),
                 _turn("2026-03-01T00:00:00.500Z", "gpt-5", cwd), _prompt("2026-03-01T00:00:00.600Z", "fix it"),
                 _tc("2026-03-01T00:00:01.000Z", 100, 100),
                 _tc("2026-03-01T00:00:01.500Z", 100, 100),  # re-emitted: the same running total again
                 _tc("2026-03-01T00:00:02.000Z", 160, 60)],
        SUB: [_meta("2026-03-01T00:00:03.000Z", SUB, cwd,
                    source={"subagent": {"thread_spawn": {"parent_thread_id": PARENT, "depth": 1}}}),
              _turn("2026-03-01T00:00:03.500Z", "gpt-5-mini", cwd), _prompt("2026-03-01T00:00:03.600Z", "look"),
              _tc("2026-03-01T00:00:04.000Z", 40, 40)],
        RESUMED: [_meta("2026-03-01T01:00:00.000Z", RESUMED, cwd, source="cli"),
                  _turn("2026-03-01T01:00:00.500Z", "gpt-5", cwd), _prompt("2026-03-01T01:00:00.600Z", "first run"),
                  _tc("2026-03-01T01:00:01.000Z", 300, 300),
                  _tc("2026-03-01T01:00:02.000Z", 500, 200),
                  # resumed into the same file, on the next day: a new counter starts from zero
                  _turn("2026-03-02T09:00:00.500Z", "gpt-5", cwd), _prompt("2026-03-02T09:00:00.600Z", "again"),
                  _tc("2026-03-02T09:00:01.000Z", 70, 70),
                  _tc("2026-03-02T09:00:02.000Z", 120, 50)],
        FORK: [_meta("2026-03-01T02:00:00.000Z", FORK, cwd, forked_from_id=PARENT),
               {**_meta("2026-03-01T02:00:00.000Z", PARENT, cwd, source="cli")},
               _turn("2026-03-01T02:00:00.000Z", "gpt-5", cwd),
               _tc("2026-03-01T02:00:00.000Z", 160, 160),  # the parent's usage, replayed
               _prompt("2026-03-01T02:00:01.000Z", "a fork"),
               _tc("2026-03-01T02:00:02.000Z", 190, 30)],
        NOUSAGE: [_meta("2026-03-01T03:00:00.000Z", NOUSAGE, cwd, source="cli"),
                  _turn("2026-03-01T03:00:00.500Z", "gpt-5", cwd), _prompt("2026-03-01T03:00:00.600Z", "no usage")],
    }
    for sid, lines in files.items():
        stamp = lines[0]["timestamp"][:19].replace(":", "-")
        (day / f"rollout-{stamp}-{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return home, proj


@pytest.fixture()
def written(tmp_path: Path) -> tuple[Path, Path]:
    return write_home(tmp_path)


def _by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in report["rows"]}


def test_by_session_equals_the_raw_line_count_of_each_file(written: tuple[Path, Path]) -> None:
    home, proj = written
    report = usage_json(home, "--by", "session", cwd=proj)
    rows = _by_id(report)
    assert set(rows) == {PARENT, SUB, RESUMED, FORK, NOUSAGE}
    for sid, row in rows.items():
        assert tokens_of(row) == raw_tokens(Path(row["path"])), sid
    # the figures the rule gives, spelled out: a re-emission adds nothing, a resumed run's calls count,
    # a fork's replayed parent usage is not the fork's
    assert rows[PARENT]["tokens"]["total"] == 160
    assert rows[RESUMED]["tokens"]["total"] == 500 + 120
    assert rows[FORK]["tokens"]["total"] == 30
    assert rows[NOUSAGE]["tokens"] is None and rows[NOUSAGE]["unknown_tokens"] == 1
    assert rows[NOUSAGE]["cost"]["usd"] is None and rows[NOUSAGE]["cost"]["unknown"] == 1


def test_a_sessions_total_includes_its_subagents_each_shown_with_its_own(written: tuple[Path, Path]) -> None:
    home, proj = written
    rows = _by_id(usage_json(home, "--by", "session", cwd=proj))
    parent, sub = rows[PARENT], rows[SUB]
    assert (parent["depth"], sub["depth"], sub["parent_id"], sub["subagent"]) == (0, 1, PARENT, True)
    assert sub["tokens"]["total"] == 40 and parent["tokens"]["total"] == 160  # each its own
    both = parent["with_subagents"]
    assert both["sessions"] == 2 and both["tokens"]["total"] == 200
    # the fork sits under the parent too, but it is a session of its own: not in the parent's total
    assert rows[FORK]["parent_id"] == PARENT and rows[FORK]["subagent"] is False
    assert rows[FORK]["with_subagents"] is None and sub["with_subagents"] is None
    # one session and its sub-agents, as a tree
    tree = usage_json(home, PARENT, cwd=proj)
    assert [(r["id"], r["depth"]) for r in tree["rows"]] == [(PARENT, 0), (SUB, 1), (FORK, 1)]
    assert tree["rows"][0]["with_subagents"]["tokens"]["total"] == 200


def test_sums_leave_unknown_out_and_count_it(written: tuple[Path, Path]) -> None:
    home, proj = written
    sessions = usage_json(home, "--by", "session", cwd=proj)
    known = [tokens_of(r) for r in sessions["rows"] if r["tokens"] is not None]
    for by in ("day", "week", "month", "model", "project"):
        report = usage_json(home, "--by", by, cwd=proj)
        total = report["total"]
        assert total["tokens"]["total"] == sum(t["total"] for t in known if t) == 160 + 40 + 620 + 30, by
        assert total["unknown_tokens"] == 1 and total["sessions"] == 5, by
        # the lines add up to the total, and the unknown session is counted in exactly one line
        assert sum(r["tokens"]["total"] for r in report["rows"] if r["tokens"]) == total["tokens"]["total"], by
        assert sum(r["unknown_tokens"] for r in report["rows"]) == 1, by
    days = usage_json(home, "--by", "day", cwd=proj)["rows"]
    # the resumed run spent on the next day: usage goes to the day it was spent
    assert [(r["key"], r["tokens"]["total"]) for r in days] == [("2026-03-01", 160 + 40 + 500 + 30),
                                                                 ("2026-03-02", 120)]
    models = {r["key"]: r["tokens"]["total"] if r["tokens"] else None
              for r in usage_json(home, "--by", "model", cwd=proj)["rows"]}
    assert models == {"gpt-5": 160 + 620 + 30, "gpt-5-mini": 40, "unknown": None} or models == {
        "gpt-5": 160 + 620 + 30, "gpt-5-mini": 40}  # the session with no usage names its model or not


def test_since_and_until_select_the_days_usage_was_spent(written: tuple[Path, Path]) -> None:
    home, proj = written
    late = usage_json(home, "--since", "2026-03-02", cwd=proj)
    assert [r["key"] for r in late["rows"]] == ["2026-03-02"] and late["total"]["tokens"]["total"] == 120
    early = usage_json(home, "--until", "2026-03-01", "--by", "session", cwd=proj)
    assert _by_id(early)[RESUMED]["tokens"]["total"] == 500
    bad = usage(home, "--since", "yesterday-ish", cwd=proj, check=False)
    assert bad.returncode == 2 and "cannot read" in bad.stderr
    huge = usage(home, "--since", "999999999d", cwd=proj, check=False)
    assert huge.returncode == 2 and "Traceback" not in huge.stderr


def test_project_scoping_is_ls_scoping(written: tuple[Path, Path], tmp_path: Path) -> None:
    home, proj = written
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert usage_json(home, cwd=elsewhere)["rows"] == []
    assert usage_json(home, "--all-projects", cwd=elsewhere)["total"]["sessions"] == 5
    assert usage_json(home, "--cwd", str(proj), cwd=elsewhere)["total"]["sessions"] == 5


def test_a_pipe_gets_tab_separated_fields_made_terminal_safe(tmp_path: Path) -> None:
    home, proj = write_home(tmp_path)
    # a cwd carrying an escape sequence (clear the screen) is shown, never sent
    evil = proj / "x\x1b[2Jy"
    evil.mkdir()
    day = home / "sessions" / "2026" / "03" / "01"
    sid = "00000000-0000-7000-8000-0000000000a9"
    lines = [_meta("2026-03-01T05:00:00.000Z", sid, str(evil), source="cli"),
             _turn("2026-03-01T05:00:00.500Z", "gpt-5\x1b]0;title\x07", str(evil)),
             _tc("2026-03-01T05:00:01.000Z", 10, 10)]
    (day / f"rollout-2026-03-01T05-00-00-{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    for by in ("project", "model", "session"):
        out = usage(home, "--by", by, cwd=proj).stdout
        assert "\x1b" not in out and "\x07" not in out, by
        table = [ln.split("\t") for ln in out.splitlines() if not ln.startswith("#")]
        assert len({len(r) for r in table}) == 1, by  # every line has the header's fields
        assert table[-1][0] == "total"
    assert "unknown" in usage(home, "--by", "session", cwd=proj).stdout  # the session with no usage


def test_a_terminal_gets_a_table(written: tuple[Path, Path]) -> None:
    from tests import ptyterm

    home, proj = written
    env = {"HOME": str(home.parent / "userhome"), "CODEX_HOME": str(home), "TZ": "UTC",
           "CLAUDE_CONFIG_DIR": str(home.parent / "no-claude"), "XDG_CACHE_HOME": str(home.parent / "cache"),
           "PWD": str(proj)}
    s = ptyterm.run(["usage", "--by", "session"], env=env, cwd=proj, cols=160)
    assert s.returncode == 0, s.raw
    text = s.text
    assert "with sub-agents" in text and "unknown" in text and "\t" not in text
    assert "1 session(s) record no usage" in text
    assert "160" in text and "200" in text  # the parent's own figure and its figure with its sub-agent


# ---- the fixtures home and the real recordings -----------------------------------------------------


def test_the_fixture_home_equals_the_raw_line_count(tmp_path: Path) -> None:
    h = H.build_home(tmp_path)
    report = usage_json(h.home, "--by", "session", "--all-projects")
    assert len(report["rows"]) >= 10
    for row in report["rows"]:
        path = Path(row["path"])
        assert tokens_of(row) == raw_tokens(path), path.name


def _real_home(root: Path) -> Path:
    """Every real recording placed in a home under the name Codex gave it."""
    home = root / "codex_home"
    seen: set[str] = set()
    for rollout in sorted(REAL.glob("*/*.rollout.jsonl")):
        name = Path(rollout.with_name(rollout.name.replace(".rollout.jsonl", ".rollout.path")).read_text().strip()).name
        if name in seen:
            continue
        seen.add(name)
        d = home / "sessions" / "2026" / "01" / "01"
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(rollout.read_bytes())
    return home


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/corpus/realcodex is absent")
def test_every_real_recording_equals_the_raw_line_count(tmp_path: Path) -> None:
    home = _real_home(tmp_path)
    report = usage_json(home, "--by", "session", "--all-projects")
    rows = report["rows"]
    assert len(rows) >= 100
    wrong = [(Path(r["path"]).name, tokens_of(r), raw_tokens(Path(r["path"]))) for r in rows
             if tokens_of(r) != raw_tokens(Path(r["path"]))]
    assert not wrong
    known = [r for r in rows if r["tokens"] is not None]
    assert report["total"]["tokens"]["total"] == sum(r["tokens"]["total"] for r in known)
    assert report["total"]["unknown_tokens"] == len(rows) - len(known)
    # the resumed file counts both runs (the last counter alone says 8,534)
    resumed = Path((REAL / "0.50.0" / "two_turns_resume.rollout.path").read_text().strip()).name
    assert [r["tokens"]["total"] for r in rows if Path(r["path"]).name == resumed] == [16787]
