"""The session commands, run as a user runs them: a real subprocess (``python -m transcript_reader``)
with ``CODEX_HOME`` pointing at a fake home built from fixtures/codex_home, standing in the project
directory, not a TTY, ``COLUMNS=100``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import sessions_home as H

ANSI = re.compile(r"\x1b\[")


@pytest.fixture
def home(tmp_path: Path) -> H.FakeHome:
    return H.build_home(tmp_path)


def run(home: H.FakeHome, *args: str, cwd: Path | None = None, check: bool = True,
        env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    where = cwd or home.project
    full_env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home.home.parent / "userhome"),
        "CODEX_HOME": str(home.home),
        "XDG_CACHE_HOME": str(home.home.parent / "cache"),
        "COLUMNS": "100",
        "LINES": "40",
        "TZ": "UTC",
        "PWD": str(where),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    full_env.update(env or {})
    p = subprocess.run([sys.executable, "-m", "transcript_reader", *args], cwd=where, env=full_env,
                       capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    if check:
        assert p.returncode == 0, (p.stdout, p.stderr)
    return p


def plain_lines(out: str) -> list[str]:
    assert not ANSI.search(out), "colour codes in piped output"
    lines = out.rstrip("\n").split("\n")
    # a pipe gets whole lines: nothing is wrapped at $COLUMNS, nothing padded (a tab ends an empty last field)
    assert all(line == line.rstrip(" ") for line in lines)
    return lines


# ---- ls ---------------------------------------------------------------------------------------------


def test_ls_json_lists_the_project_newest_first_with_the_subagent_under_its_parent(home: H.FakeHome) -> None:
    doc = json.loads(run(home, "ls", "--json").stdout)
    assert doc["ok"] is True and doc["stats"] == "cached"
    rows = doc["sessions"]
    assert [r["id"] for r in rows] == H.PROJECT_LIVE_ORDER
    by_id = {r["id"]: r for r in rows}
    assert by_id[H.SUBAGENT]["depth"] == 1 and by_id[H.SUBAGENT]["parent_session_id"] == H.PARENT
    assert by_id[H.CODE_MODE]["title"] == "Code-mode cells demo"  # renamed in session_index.jsonl
    assert by_id[H.CODE_MODE]["first_prompt"] == "make calc tests pass"
    assert by_id[H.ZST]["path"].endswith(".jsonl.zst")
    assert by_id[H.EARLY]["format"] == "early-rust"
    assert by_id[H.PARENT]["tokens"]["total"] == 38891
    # the session store read every session once: the whole-read figures come with every row
    assert all(r["stats"] is not None for r in rows)
    assert by_id[H.ZST]["tokens"]["total"] > 0  # a compressed file's tail cannot be read; its whole read can


def test_ls_plain_text_in_a_pipe(home: H.FakeHome) -> None:
    """In a pipe every column is whole (no title cut at $COLUMNS) and nothing is padded: one tab between
    fields, so a long title never widens the other rows; the figures of the whole read come from the
    session store (built on this first run); times are local (here TZ=UTC) and the header names the zone."""
    lines = plain_lines(run(home, "ls").stdout)
    assert [[f.strip() for f in line.split("\t")] for line in lines] == [
        ["when (UTC)", "took", "id", "title", "model", "codex", "turns", "cmds", "files", "tests", "tokens"],
        ["2026-11-30 17:59", "424ms", "01a22d9c-5", "Code-mode cells demo", "gpt-5.6-terra", "0.171.0", "1", "2 (1✗)", "1", "-", "50k"],
        ["2026-11-29 17:58", "1.0s", "01a22d9c-26", "Fix calc.py", "gpt-5.5", "0.171.0", "1", "2", "2", "-", "39k"],
        ["2026-11-29 17:59", "984ms", "01a22d9c-3", "└ [scout] what is wrong with calc.py?", "gpt-5.5", "0.171.0", "2", "1", "1", "-", "39k"],
        ["2026-11-28 17:57", "4.6s", "01a22d9a-dc", "fix calc.py and verify", "gpt-5.5", "0.150.0", "1", "2", "2", "-", "40k"],
        ["2026-11-28 17:57", "2.2s", "01a22d9a-d4", "fix calc.py and verify", "gpt-5.5", "0.130.0", "1", "2", "2", "-", "48k"],
        ["2026-11-27 17:57", "", "a15ecbf8", "what is wrong with calc.py?", "", "", "2", "1", "1", "-", ""],
        ["2026-11-26 17:58", "1.0s", "01a22d9c-7", "fix calc.py and verify", "gpt-5.5", "0.171.0", "1", "2", "2", "1✓ 0✗", "39k"],
    ]
    utc = plain_lines(run(home, "ls", env={"TZ": "America/New_York"}).stdout)
    assert utc[0].startswith("when (EST)") and utc[1].startswith("2026-11-30 12:59\t")
    assert plain_lines(run(home, "ls", "--utc", env={"TZ": "America/New_York"}).stdout)[1].startswith(
        "2026-11-30 17:59\t")


def test_ls_stats_are_computed_once_then_cached(home: H.FakeHome) -> None:
    doc = json.loads(run(home, "ls", "--stats", "--json").stdout)
    by_id = {r["id"]: r for r in doc["sessions"]}
    assert by_id[H.CODE_MODE]["stats"] == {"turns": 1, "commands": 2, "commands_failed": 1, "files_changed": 1,
                                           "tests_passed": 0, "tests_failed": 0}
    assert by_id[H.PARENT]["stats"]["files_changed"] == 2
    assert (by_id[H.PYTEST]["stats"]["tests_passed"], by_id[H.PYTEST]["stats"]["tests_failed"]) == (1, 0)
    # one store per home (Claude Code's folder does not exist here: no store for it)
    assert len(list((home.home.parent / "cache" / "transcript-reader").glob("store-*.sqlite"))) == 1
    again = json.loads(run(home, "ls", "--json").stdout)  # no --stats: served from the store
    assert [r["stats"] for r in again["sessions"]] == [r["stats"] for r in doc["sessions"]]
    lines = plain_lines(run(home, "ls").stdout)
    assert not any(line.endswith("…") for line in lines), lines  # every figure column is filled
    assert lines[1].split("\t")[3:] == ["Code-mode cells demo", "gpt-5.6-terra", "0.171.0", "1", "2 (1✗)", "1", "-",
                                        "50k"], lines
    assert lines[7].split("\t")[3:] == ["fix calc.py and verify", "gpt-5.5", "0.171.0", "1", "2", "2", "1✓ 0✗",
                                        "39k"], lines[7]


def test_ls_all_projects_and_archived(home: H.FakeHome) -> None:
    rows = json.loads(run(home, "ls", "--all", "--all-projects", "--json").stdout)["sessions"]
    assert len(rows) == 10
    assert {r["id"] for r in rows if r["archived"]} == {H.ARCHIVED}
    only = json.loads(run(home, "ls", "--archived", "--json").stdout)["sessions"]
    assert [r["id"] for r in only] == [H.ARCHIVED]
    text = run(home, "ls", "--all", "--all-projects", env={"COLUMNS": "160"}).stdout
    assert "[archived] fix calc.py and verify" in text
    assert "\tcwd\t" in text.split("\n")[0]  # several projects: the cwd column appears
    assert re.search(r"/work/other\tgpt-5\.5", text)


def test_ls_filters(home: H.FakeHome) -> None:
    def listed(*args: str) -> list[str]:
        return [r["id"] for r in json.loads(run(home, "ls", "--json", *args).stdout)["sessions"]]

    assert listed("--since", "2026-11-29") == [H.CODE_MODE, H.PARENT, H.SUBAGENT]
    assert listed("--until", "2026-11-27") == [H.EARLY, H.PYTEST]  # a bare date includes that whole day
    assert listed("--grep", "cells") == [H.CODE_MODE]
    assert listed("--limit", "1") == [H.CODE_MODE]
    assert listed("--cwd", str(home.other)) == [H.OTHER_PROJECT]
    assert listed("--all-projects", "--grep", "say hello") == [H.OTHER_PROJECT]
    bad = run(home, "ls", "--since", "soonish", "--json", check=False)
    # a usage error, before any file is read: exit 2, one message naming the option
    assert bad.returncode == 2 and "Invalid value for '--since'" in bad.stderr and bad.stdout == ""


def test_ls_in_a_directory_without_sessions(home: H.FakeHome, tmp_path: Path) -> None:
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    out = run(home, "ls", cwd=empty).stdout
    assert "No sessions under" in out and "--all-projects" in out


# ---- show -------------------------------------------------------------------------------------------


def test_show_renders_the_timeline_as_plain_text(home: H.FakeHome) -> None:
    out = run(home, "show", "last").stdout
    lines = plain_lines(out)
    assert lines[0] == "Code-mode cells demo"
    assert lines[1].startswith("01a22d9c-5471-7953-942f-93603d8b9241 · 2026-11-30 17:59:09 UTC ·")
    assert any(line.startswith("Turn 1 · 17:59:09 ───") for line in lines)
    assert "› make calc tests pass" in lines
    cmd_lines = [line for line in lines if "$ python3" in line]
    assert len(cmd_lines) == 2
    assert cmd_lines[0].startswith("  ✗ exit 1     0s  ran · code cell  in .  $ python3 -c 'import calc;")
    assert cmd_lines[1].startswith("  ✓ exit 0     0s  ran · code cell  in .  $ python3 -c 'import calc;")
    assert any("✎ patch  failed (not applied)  did not run · code cell" in line for line in lines)
    assert "assistant · final answer" in lines
    assert lines[-1].startswith("1 turn · 2 commands (1 failed) · 1 file changed · tokens 49,976")


def test_show_filters_and_session_references(home: H.FakeHome) -> None:
    only_cmds = plain_lines(run(home, "show", "last", "--commands").stdout)
    assert sum(1 for line in only_cmds if "$ python3" in line) == 2
    assert not any("assistant" in line or line.startswith("›") or "code cell (exec)" in line for line in only_cmds)
    final = run(home, "show", "last", "--final").stdout
    assert "calc.add is fixed" in final and "$ python3" not in final
    sub = run(home, "show", H.SUBAGENT[:11], "--conversation").stdout
    assert "› what is wrong with calc.py?" in sub and "› yes, fix it" in sub
    assert "sub-agent of " + H.PARENT in sub
    assert "Fix calc.py" in run(home, "show", "last~1").stdout.split("\n")[0]


def test_show_folds_long_outputs_and_full_unfolds(home: H.FakeHome, tmp_path: Path) -> None:
    src = home.file_of(H.PARENT)
    lines = src.read_text().split("\n")
    long_output = "\\n".join(f"line {i}" for i in range(40))
    patched = [ln.replace("calc.py\\nhello.txt\\ndef add(a, b):\\n    return a - b\\n", long_output) for ln in lines]
    src.write_text("\n".join(patched))
    folded = run(home, "show", str(src)).stdout
    assert "line 5" in folded and "line 39" not in folded
    assert re.search(r"… \d+ more lines \(--full\)", folded)
    full = run(home, "show", str(src), "--full").stdout
    assert "line 39" in full


def test_show_folds_a_long_prompt_and_full_unfolds(home: H.FakeHome) -> None:
    """A prompt with a pasted log was printed whole; it folds with a count, --full shows it."""
    f = home.file_of(H.CODE_MODE)
    pasted = "\\n".join(f"pasted log line {i}" for i in range(5000))  # JSON-escaped newlines
    f.write_text(f.read_text(encoding="utf-8").replace("make calc tests pass", "make calc tests pass\\n" + pasted),
                 encoding="utf-8")
    out = run(home, "show", H.CODE_MODE, "--no-pager").stdout
    assert "pasted log line 58" in out and "pasted log line 59" not in out
    assert re.search(r"… 4,941 more lines, [\d,]+ more chars \(--full\)", out)
    assert len(out.splitlines()) < 200
    full = run(home, "show", H.CODE_MODE, "--no-pager", "--full").stdout
    assert "pasted log line 4999" in full and "more chars (--full)" not in full


def test_show_diff_and_scripts(home: H.FakeHome) -> None:
    scripts = run(home, "show", "last", "--scripts").stdout
    assert "const r = await tools.exec_command(" in scripts
    assert "↳ cell output" in scripts
    diff = run(home, "show", H.V130, "--diff").stdout
    assert "M calc.py  +1 -1" in diff and "A NOTES.md  +2 -0" in diff
    # each file's diff under its own name (the reader takes the hunks from the apply_patch text)
    calc, notes = diff.index("── calc.py"), diff.index("── NOTES.md")
    assert calc < diff.index("+    return a + b") < notes < diff.index("+# Notes")


def test_show_unknown_session_is_one_error_line(home: H.FakeHome) -> None:
    p = run(home, "show", "deadbeef", check=False)
    assert p.returncode == 1
    assert p.stderr.strip().startswith("Error: no session matches 'deadbeef'")
    p = run(home, "show", "last~9", check=False)
    assert p.returncode == 1 and "only 6 session(s)" in p.stderr  # top-level sessions; the sub-agent is nested


def test_no_arguments_shows_the_latest_session_of_the_project(home: H.FakeHome, tmp_path: Path) -> None:
    out = run(home).stdout
    assert out.split("\n")[0] == "Code-mode cells demo"
    other = run(home, cwd=home.other).stdout
    assert other.split("\n")[0] == "say hello"
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    example = run(home, cwd=empty).stdout
    # nothing here: the bundled real recording, labelled, with where it looked and how to point elsewhere
    assert example.startswith("Example session, bundled with transcript-reader")
    assert f"no Codex session under {empty} in {home.home}" in example and "CODEX_HOME=" in example
    assert "fix calc.py and verify" in example and "$ ls && cat calc.py" in example
    assert run(home, "show", "--example").stdout.startswith("Example session, bundled")
    missing = run(home, cwd=empty, env={"CODEX_HOME": str(home.home) + "-typo"}).stdout
    assert f"there is no Codex home at {home.home}-typo (CODEX_HOME={home.home}-typo)" in missing


def test_read_and_inspect_accept_session_references(home: H.FakeHome) -> None:
    doc = json.loads(run(home, "inspect", "last", "--json").stdout)
    assert doc["ok"] is True and doc["info"]["session_id"] == H.CODE_MODE
    doc = json.loads(run(home, "read", H.SUBAGENT[:11], "--json").stdout)
    assert doc["ok"] is True and doc["path"].endswith(f"{H.SUBAGENT}.jsonl")


# ---- export -----------------------------------------------------------------------------------------


def test_export_markdown(home: H.FakeHome) -> None:
    md = run(home, "export", "last", "--format", "md", "--scripts").stdout
    assert md.startswith("# Code-mode cells demo\n")
    assert "## Turn 1" in md and "> make calc tests pass" in md
    assert "- ❌ exit 1 · 0s · ran · code cell · in `.`: `python3 -c 'import calc; assert calc.add(2, 2) == 4, calc.add(2, 2)'`" in md
    assert "```js\n// @exec:" in md
    assert "- ✏️ patch failed · did not run · code cell" in md
    assert md.count("```") % 2 == 0


def test_export_json_is_the_read_timeline(home: H.FakeHome, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    p = run(home, "export", H.PARENT[:11], "--format", "json", "-o", str(out))
    assert "wrote" in p.stderr
    doc = json.loads(out.read_text())
    read_doc = json.loads(run(home, "read", str(home.file_of(H.PARENT)), "--json").stdout)
    assert doc["items"] == read_doc["items"] and doc["ok"] is True
    assert [i["command"] for i in doc["items"] if i["kind"] == "shell_command"] == [
        "ls && cat calc.py", "python3 -c 'import calc; print(calc.add(2,3))'"]
    err = run(home, "export", "nope-nope", "--format", "json", check=False)
    assert err.returncode == 1 and json.loads(err.stdout)["error"]["code"] == "session_not_found"


def test_export_html_is_self_contained(home: H.FakeHome, tmp_path: Path) -> None:
    out = tmp_path / "s.html"
    run(home, "export", "last", "--format", "html", "-o", str(out))
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and not re.search(r"""(src|href)=["']?https?:""", page)
    assert '<meta name="viewport"' in page and "<style>" in page
    assert page.count('class="cmd-text"') == 2
    assert '<mark class="call">' in page  # calls marked in the highlighted cell


# ---- search -----------------------------------------------------------------------------------------


def test_search_across_sessions_streams_json_lines(home: H.FakeHome) -> None:
    out = run(home, "search", "--json", "--kind", "shell_command", "calc.py").stdout
    hits = [json.loads(line) for line in out.strip().split("\n")]
    assert {h["session"] for h in hits} == {H.PARENT, H.SUBAGENT, H.ZST, H.V130, H.EARLY, H.PYTEST}
    assert all(h["kind"] == "shell_command" and "calc.py" in h["excerpt"].lower() for h in hits)
    assert hits[0]["session"] == H.PARENT  # newest session first
    none = run(home, "search", "--json", "no-such-words-anywhere").stdout
    assert none.strip() == ""


def test_search_across_sessions_plain(home: H.FakeHome) -> None:
    p = run(home, "search", "does_not_exist")
    lines = plain_lines(p.stdout)
    assert len(lines) == 3 and all(line.startswith("01a22d9c-5471 2026-11-30 17:59:10 ") for line in lines)
    assert "assistant_message" in lines[2]
    assert "3 hits in 7 session(s)" in p.stderr
    regex = run(home, "search", "--regex", r"add\(2, ?3\)", "--all-projects", "--json").stdout
    assert {json.loads(x)["session"] for x in regex.strip().split("\n")} == {H.PARENT, H.ZST, H.V130, H.TS}


def test_search_one_file_follows_the_reader_contract(home: H.FakeHome) -> None:
    doc = json.loads(run(home, "search", "last", "calc", "--context", "1", "--json").stdout)
    assert doc["ok"] is True and doc["format"] == "rollout"
    assert doc["path"].endswith(f"{H.CODE_MODE}.jsonl")
    assert all(set(m) == {"item", "before", "after", "excerpt"} for m in doc["matches"])
    assert [len(m["before"]) for m in doc["matches"]][:2] == [0, 1]  # the first item has nothing before it
    text = run(home, "search", str(home.file_of(H.PARENT)), "verify").stdout
    assert "▶" in text and "user_message" in text


def test_search_across_sessions_finds_hits_in_js_escaped_script_text(home: H.FakeHome) -> None:
    """The cell's command is `echo it's HERE && echo ABC` only after decoding the JS literal
    `'echo it\\'s HERE && echo \\x41BC'` inside the JSON string; the raw-byte pre-check skipped the
    session, so `search QUERY` missed what `search PATH QUERY` found."""
    f = home.file_of(H.CODE_MODE)
    cmd = "python3 -c 'import calc; assert calc.add(2, 2) == 4, calc.add(2, 2)'"
    f.write_text(f.read_text(encoding="utf-8").replace(cmd, "echo it\\\\'s HERE && echo \\\\x41BC"),
                 encoding="utf-8")
    for query in ("it's here", "echo ABC", "HERE && echo abc"):
        one = json.loads(run(home, "search", str(f), query, "--json").stdout)
        # the edited command no longer matches the cell's record: the reader adds a notice that names it
        cmds = [m for m in one["matches"] if m["item"]["kind"] == "shell_command"]
        assert cmds and cmds[0]["item"]["command"] == "echo it's HERE && echo ABC"
        out = run(home, "search", "--json", "--kind", "shell_command", query).stdout
        hits = [json.loads(line) for line in out.strip().split("\n") if line]
        assert [h["session"] for h in hits] == [H.CODE_MODE] * len(cmds), (query, out)


# The pre-filter itself (every derivation, the property against the full reader): tests/test_search.py.


# ---- follow -----------------------------------------------------------------------------------------


def test_follow_prints_items_as_they_arrive_and_waits_for_a_cut_line(home: H.FakeHome, tmp_path: Path) -> None:
    """The file starts with half a session ending in half a line; once the follower has printed the first
    half (so it has seen the cut line), the rest arrives. Nothing is reported unreadable or printed twice."""
    import threading

    src = home.file_of(H.PARENT).read_bytes().split(b"\n")
    live = tmp_path / "live" / f"rollout-2026-11-29T17-58-57-{H.PARENT}.jsonl"
    live.parent.mkdir()
    half = len(src) // 2
    cut_line = src[half]
    live.write_bytes(b"\n".join(src[:half]) + b"\n" + cut_line[: len(cut_line) // 2])
    full_env = {**os.environ, "COLUMNS": "100", "TZ": "UTC", "CODEX_HOME": str(home.home),
                "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "TRANSCRIPT_READER_FOLLOW_IDLE_EXIT": "5"}
    proc = subprocess.Popen([sys.executable, "-m", "transcript_reader", "show", str(live), "--follow"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                            cwd=home.project)
    lines: list[str] = []
    first_half_seen = threading.Event()

    def collect() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "$ ls && cat calc.py" in line:
                first_half_seen.set()

    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        assert first_half_seen.wait(timeout=90), "".join(lines)
        with open(live, "ab") as fh:  # the rest of the cut line, then the rest of the session
            fh.write(cut_line[len(cut_line) // 2:] + b"\n")
            fh.flush()
            time.sleep(1.0)
            fh.write(b"\n".join(src[half + 1:]))
        proc.wait(timeout=120)
        reader.join(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read() if proc.stderr else ""
    out = "".join(lines)
    assert "Traceback" not in err, err
    assert "unreadable" not in out
    assert "› fix calc.py and verify" in out
    assert out.count("$ ls && cat calc.py") == 1
    assert "$ python3 -c 'import calc; print(calc.add(2,3))'" in out
    assert "final answer" in out


def test_an_unexpected_bug_is_one_error_line_not_a_traceback(tmp_path: Path) -> None:
    code = (
        "import click\n"
        "from transcript_reader.cli._common import guard\n"
        "@click.command()\n@click.option('--json', 'as_json', is_flag=True)\n@guard()\n"
        "def boom(as_json):\n    raise ValueError('kaput')\n"
        "boom()\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.strip() == "Error: internal error (ValueError: kaput); please report it"
    j = subprocess.run([sys.executable, "-c", code, "--json"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert json.loads(j.stdout)["error"]["code"] == "internal_error"


# ---- QA findings F3, F4, F5 ---------------------------------------------------------------------------

_SHORT_ID = re.compile(r"(?<![\w-])([0-9a-f]{8}(?:-[0-9a-f]{1,4})?)(?![\w-])")


def _printed_ids(out: str) -> list[str]:
    """The id column of plain ``ls`` rows (the header line and the trailing note carry none)."""
    found = []
    for line in plain_lines(out)[1:]:
        m = _SHORT_ID.search(line)
        if m:
            found.append(m.group(1))
    return found


@pytest.mark.parametrize("filters", [
    ("--limit", "1"),  # one row: an 8-digit prefix would match six sessions of the home
    ("--all-projects", "--limit", "3"),
    ("--since", "2026-11-29"),  # PARENT's 01a22d9c-2 also starts the archived 01a22d9c-2200
    ("--cwd", "OTHER"),
])
def test_ls_prints_id_prefixes_that_resolve_to_the_row_even_when_filtered(home: H.FakeHome,
                                                                         filters: tuple[str, ...]) -> None:
    """The prefix `ls` prints is unique among every session `show PREFIX` resolves against, not
    only among the rows left after --limit/--since/--cwd."""
    args = tuple(str(home.other) if a == "OTHER" else a for a in filters)
    listed = [r["id"] for r in json.loads(run(home, "ls", "--json", *args).stdout)["sessions"]]
    printed = _printed_ids(run(home, "ls", *args).stdout)
    assert len(printed) == len(listed) and printed, printed
    for short, full in zip(printed, listed, strict=True):
        assert full.startswith(short), (short, full)
        doc = json.loads(run(home, "inspect", short, "--json").stdout)  # resolves (exit 0), to this session
        assert doc["info"]["session_id"] == full, (short, full)


def test_ls_limit_one_prints_a_prefix_longer_than_eight_digits(home: H.FakeHome) -> None:
    # Six sessions of the fixture home start 01a22d9c-: the lone row of --limit 1 still needs its 10th digit.
    assert _printed_ids(run(home, "ls", "--limit", "1").stdout) == ["01a22d9c-5"]


def test_search_prints_session_ids_that_resolve(home: H.FakeHome) -> None:
    lines = run(home, "search", "--all", "--all-projects", "calc.py", "--max-matches", "1").stdout.splitlines()
    shorts = {line.split(" ", 1)[0] for line in lines if line and not line.startswith(" ")}
    assert shorts, lines
    for short in shorts:
        doc = json.loads(run(home, "inspect", short, "--json").stdout)
        assert doc["info"]["session_id"].startswith(short)


DEV_FULL = Path("/dev/full")


def run_to_dev_full(home: H.FakeHome, *args: str) -> subprocess.CompletedProcess[str]:
    """The command with its stdout on /dev/full (every write fails with ENOSPC, like a full disk)."""
    if not DEV_FULL.exists():
        pytest.skip("/dev/full is absent on this system: cannot make stdout fail")
    env = {**os.environ, "CODEX_HOME": str(home.home), "XDG_CACHE_HOME": str(home.home.parent / "cache"),
           "COLUMNS": "100", "TZ": "UTC", "PWD": str(home.project),
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    with open(DEV_FULL, "w") as full:
        return subprocess.run([sys.executable, "-m", "transcript_reader", *args], cwd=home.project, env=env,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)


@pytest.mark.parametrize("args", [
    ("ls",), ("ls", "--all-projects", "--json"), ("show", "01a22d9c-5471", "--no-pager"),
    ("export", "01a22d9c-5471"), ("export", "01a22d9c-5471", "--format", "json"),
    ("search", "calc.py"), ("search", "calc.py", "--json"), ("read", "01a22d9c-5471"),
    ("read", "01a22d9c-5471", "--json"), ("inspect", "01a22d9c-5471"), ("inspect", "01a22d9c-5471", "--json"),
])
def test_a_failing_stdout_is_one_error_line_on_stderr_not_a_traceback(home: H.FakeHome,
                                                                       args: tuple[str, ...]) -> None:
    """`> /dev/full` gave tracebacks (read, inspect) or a second one (the --json envelope written
    to the same full stdout). Now: non-zero exit, one line on stderr naming the cause."""
    p = run_to_dev_full(home, *args)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    err_lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(err_lines) == 1, p.stderr
    if "--json" in args:
        doc = json.loads(err_lines[0])
        assert doc["ok"] is False and doc["error"]["code"] == "output_error"
        assert "No space left on device" in doc["error"]["message"]
    else:
        assert err_lines[0] == "Error: cannot write the output: No space left on device"


def test_export_to_a_missing_directory_is_a_user_error(home: H.FakeHome, tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "x.md"
    p = run(home, "export", H.CODE_MODE, "-o", str(target), check=False)
    assert p.returncode == 1 and not target.exists()
    assert p.stderr.strip() == f"Error: cannot write {target}: No such file or directory"
    j = run(home, "export", H.CODE_MODE, "--format", "json", "-o", str(target), check=False)
    assert j.returncode == 1 and json.loads(j.stdout)["error"]["code"] == "output_error"


@pytest.mark.parametrize("spelling", ["same path", "symlink", "hard link", "session id"])
def test_export_never_overwrites_the_session_it_reads(home: H.FakeHome, tmp_path: Path, spelling: str) -> None:
    """``-o`` naming the input rollout (directly, through a link, or via a session reference)
    replaced the transcript with its export, exit 0. It is refused with one line and the file is intact."""
    victim = tmp_path / "victim.jsonl"
    victim.write_bytes(home.file_of(H.CODE_MODE).read_bytes())
    before = victim.read_bytes()
    session, target = str(victim), victim
    if spelling == "symlink":
        target = tmp_path / "victim.md"
        target.symlink_to(victim)
    elif spelling == "hard link":
        target = tmp_path / "victim-hard.md"
        os.link(victim, target)
    elif spelling == "session id":
        victim = home.file_of(H.CODE_MODE)
        before, session, target = victim.read_bytes(), H.CODE_MODE[:13], victim
    for fmt in ("md", "html", "json"):
        p = run(home, "export", session, "--format", fmt, "-o", str(target), check=False)
        assert p.returncode == 1, (p.stdout, p.stderr)
        assert victim.read_bytes() == before
        if fmt == "json":
            assert json.loads(p.stdout)["error"]["code"] == "output_error"
        else:
            assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"Error: refusing to write {target}: ")
    ok = run(home, "export", session, "-o", str(tmp_path / "elsewhere.md"))
    assert "wrote" in ok.stderr and victim.read_bytes() == before


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_non_regular_session_index_is_ignored(home: H.FakeHome, kind: str) -> None:
    """A FIFO named session_index.jsonl blocked ls/search/read-by-id forever; a directory made
    every listing an internal error. The index only decorates: listing works without its names. The
    subprocess timeouts turn a regression into a failure, not a hung suite."""
    index = home.home / "session_index.jsonl"
    index.unlink()
    if kind == "fifo":
        os.mkfifo(index)
    else:
        index.mkdir()
    doc = json.loads(run(home, "ls", "--json", timeout=60).stdout)
    by_id = {r["id"]: r for r in doc["sessions"]}
    assert [r["id"] for r in doc["sessions"]] == H.PROJECT_LIVE_ORDER
    assert by_id[H.CODE_MODE]["title"] == "make calc tests pass" and by_id[H.CODE_MODE]["name"] is None
    assert "Code-mode cells demo" not in run(home, "ls", timeout=60).stdout
    read = json.loads(run(home, "read", "--json", "01a22d9c-5471", timeout=60).stdout)
    assert read["ok"] is True and read["items"]
    assert "calc" in run(home, "search", "calc.py", timeout=60).stdout
    assert "make calc tests pass" in run(home, "show", "01a22d9c-5471", "--no-pager", timeout=60).stdout


def test_exit_on_output_failure_covers_what_click_prints_itself(tmp_path: Path) -> None:
    """`--help > /dev/full` fails inside click, before any command's guard: the entry point wrapper
    (for cli.main) makes that one stderr line too."""
    if not DEV_FULL.exists():
        pytest.skip("/dev/full is absent on this system: cannot make stdout fail")
    code = ("from transcript_reader.cli import cli\n"
            "from transcript_reader.cli._common import exit_on_output_failure\n"
            "exit_on_output_failure(lambda: cli.main(args=['--help'], prog_name='transcript-reader'))\n")
    with open(DEV_FULL, "w") as full:
        p = subprocess.run([sys.executable, "-c", code], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60,
                           env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert p.returncode == 1 and p.stderr.strip() == "Error: cannot write the output: No space left on device"


# ---- symlinked project directories -----------------------------------------------------------


def _project_views(home: H.FakeHome, stand_in: Path, elsewhere: Path) -> None:
    """From ``stand_in`` (the project through a symlink, or its physical path when the sessions
    recorded the symlink): ls, ``--cwd``, ``show last``, the no-arg default and search see the project."""
    doc = json.loads(run(home, "ls", "--json", cwd=stand_in).stdout)
    assert [r["id"] for r in doc["sessions"]] == H.PROJECT_LIVE_ORDER
    typed = json.loads(run(home, "ls", "--json", "--cwd", str(stand_in), cwd=elsewhere).stdout)
    assert [r["id"] for r in typed["sessions"]] == H.PROJECT_LIVE_ORDER
    assert run(home, "show", "last", cwd=stand_in).stdout.split("\n")[0] == "Code-mode cells demo"
    assert "Fix calc.py" in run(home, "show", "last~1", cwd=stand_in).stdout.split("\n")[0]
    assert run(home, cwd=stand_in).stdout.split("\n")[0] == "Code-mode cells demo"
    out = run(home, "search", "--json", "--kind", "shell_command", "calc.py", cwd=stand_in).stdout
    assert {json.loads(line)["session"] for line in out.strip().split("\n")} == {
        H.PARENT, H.SUBAGENT, H.ZST, H.V130, H.EARLY, H.PYTEST}


def test_standing_in_a_symlink_to_the_project_lists_its_sessions(home: H.FakeHome, tmp_path: Path) -> None:
    # Codex records getcwd(), the physical path; the user cd'd through a symlink ($PWD keeps the link)
    link = tmp_path / "links" / "p"
    link.parent.mkdir()
    link.symlink_to(home.project, target_is_directory=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _project_views(home, link, elsewhere)
    # a link to a parent directory: the project's sessions are below it, the other project's too
    up = tmp_path / "links" / "work"
    up.symlink_to(home.project.parent, target_is_directory=True)
    rows = json.loads(run(home, "ls", "--json", cwd=up).stdout)["sessions"]
    assert {r["id"] for r in rows} == set(H.PROJECT_LIVE_ORDER) | {H.OTHER_PROJECT}
    # standing in the link does not widen an explicit --cwd: the other project only
    other = json.loads(run(home, "ls", "--json", "--cwd", str(home.other), cwd=link).stdout)["sessions"]
    assert [r["id"] for r in other] == [H.OTHER_PROJECT]


def test_sessions_that_recorded_a_symlinked_path_are_listed_from_its_target(home: H.FakeHome,
                                                                          tmp_path: Path) -> None:
    # vice versa: the recorded cwd is (today) a symlink, the user stands in its target
    real = tmp_path / "real-project"
    home.project.rename(real)
    home.project.symlink_to(real, target_is_directory=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _project_views(home, real, elsewhere)


# ---- parent links that do not form a tree ------------------------------------------------------


def test_ls_lists_sessions_whose_parent_links_form_a_cycle(home: H.FakeHome) -> None:
    """A -> B -> A, C -> C, D -> a missing parent, E -> A. Before, A, B and E vanished from
    ``ls`` (and so from ``last~N`` and cross-session search); now every session is listed once."""
    from tests.test_discovery import CYC_A, CYC_B, OFF_CYCLE_E, ORPHAN_D, SELF_C, build_hostile_links

    before = [r["id"] for r in json.loads(run(home, "ls", "--all-projects", "--json").stdout)["sessions"]]
    build_hostile_links(home)
    doc = json.loads(run(home, "ls", "--all-projects", "--json").stdout)
    rows = doc["sessions"]
    added = [CYC_A, CYC_B, SELF_C, ORPHAN_D, OFF_CYCLE_E]
    assert doc["count"] == len(rows) == len(before) + 5
    assert sorted(r["id"] for r in rows) == sorted(before + added)
    by_id = {r["id"]: r for r in rows}
    assert {s: (by_id[s]["depth"], by_id[s]["parent_note"]) for s in added} == {
        CYC_A: (0, "cycle"), CYC_B: (0, "cycle"), SELF_C: (0, "self"), ORPHAN_D: (0, "not listed"),
        OFF_CYCLE_E: (1, None)}
    ids = [r["id"] for r in rows]
    assert ids[ids.index(CYC_A) + 1] == OFF_CYCLE_E
    # Plain text: the rows that break a cycle say so; the one hanging off it is drawn under its parent.
    lines = plain_lines(run(home, "ls").stdout)
    assert sum("[parent cycle] " in line for line in lines) == 3
    tagged = {m.group(0): line for line in lines[1:-1] if (m := re.search(r"01a22d9c-cccc-\S+", line))}
    assert "[parent cycle] " in tagged[CYC_A] and "[parent cycle] " in tagged[CYC_B]
    assert "[parent cycle] " in tagged[SELF_C] and "[parent cycle]" not in tagged[ORPHAN_D]
    assert lines.index(tagged[OFF_CYCLE_E]) == lines.index(tagged[CYC_A]) + 1
    assert tagged[OFF_CYCLE_E].split()[4:6] == ["└", "[scout]"]
    # `last~N` reaches a cycle member, and cross-session search scans it.
    tops = [r["id"] for r in json.loads(run(home, "ls", "--json").stdout)["sessions"] if r["depth"] == 0]
    shown = json.loads(run(home, "export", f"last~{tops.index(CYC_B)}", "--format", "json").stdout)
    assert CYC_B in json.dumps(shown)
    out = run(home, "search", "--json", "--kind", "shell_command", "calc.py").stdout
    assert set(added) <= {json.loads(line)["session"] for line in out.strip().split("\n")}


def test_follow_of_a_finished_file_shows_it_once(home: H.FakeHome) -> None:
    """A .zst rollout (or a 0.1.x document) is never appended to: ``--follow`` shows it once and says why
    it does not wait, instead of printing a header and failing."""
    zst = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "compressed_rollout.jsonl.zst"
    p = run(home, "show", str(zst), "--follow", "--no-pager")
    assert p.returncode == 0
    assert "start the server and stop it" in p.stdout and "Turn 1" in p.stdout
    assert "not following: a .zst transcript cannot be followed" in p.stderr


@pytest.mark.parametrize("full", [(), ("--full",)])
@pytest.mark.parametrize("name", ["code_mode_records.jsonl", "code_mode_late_record.jsonl", "forked_session.jsonl",
                                  "windows_shell_records.jsonl", "test_runs.jsonl", "pairing_records_direct.jsonl"])
def test_follow_renders_like_show(home: H.FakeHome, name: str, full: tuple[str, ...]) -> None:
    """A followed session reads like ``show``, with ``--full`` too: code cells with their
    entries and output, whole raw outputs of direct commands, turns numbered from 1, the footer once the
    file stops growing."""
    path = str(Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / name)
    shown = run(home, "show", path, "--no-pager", "--no-color", *full).stdout
    followed = run(home, "show", path, "--follow", "--no-color", *full,
                   env={"TRANSCRIPT_READER_FOLLOW_IDLE_EXIT": "0.1"}).stdout
    assert followed == shown


def test_follow_idle_exit_must_be_seconds(home: H.FakeHome) -> None:
    path = str(Path(__file__).resolve().parents[1] / "fixtures" / "transcripts" / "dedupe.jsonl")
    p = run(home, "show", path, "--follow", check=False, env={"TRANSCRIPT_READER_FOLLOW_IDLE_EXIT": "abc"})
    assert p.returncode == 2 and "TRANSCRIPT_READER_FOLLOW_IDLE_EXIT" in p.stderr
