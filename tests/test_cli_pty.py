"""The terminal as a person meets it: the real command in a real pseudo-terminal
(``tests/ptyterm.py``), against the fixtures home. The pager's environment and what it shows, the
progress bar cleared before hits, ``--follow`` showing a running command and completing it in place,
control characters from content neutralised, and widths 20, 60, 120 and 220."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests import ptyterm
from tests import sessions_home as H

EXAMPLE = H.EXAMPLE
LONG_COMMAND = ("python3 -m pytest tests/test_an_unusually_long_module_name_for_wrapping.py::TestWrapping::"
                "test_that_the_command_is_never_cut -x -q --tb=short --no-header")


@pytest.fixture
def home(tmp_path: Path) -> H.FakeHome:
    return H.build_home(tmp_path)


def env_for(home: H.FakeHome, **extra: str) -> dict[str, str]:
    env = {"HOME": str(home.home.parent / "userhome"), "CODEX_HOME": str(home.home), "TZ": "UTC",
           "XDG_CACHE_HOME": str(home.home.parent / "cache"), "PWD": str(home.project), "PAGER": "cat"}
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


# ---- the pager ------------------------------------------------------------------------------------


def test_the_pager_gets_less_frx_when_the_user_has_no_less(home: H.FakeHome, tmp_path: Path) -> None:
    seen = tmp_path / "pager-env"
    pager = f"sh -c 'echo \"LESS=$LESS LV=$LV\" > {seen}; cat'"
    s = ptyterm.run(["show", "last"], env=env_for(home, PAGER=pager), cwd=home.project)
    assert s.returncode == 0, s.raw
    assert seen.read_text().strip() == "LESS=FRX LV=-c"
    assert "Code-mode cells demo" in s.text and "\x1b[1m" in s.raw  # styled text went through the pager
    # a LESS of the user's own is kept as it is
    s = ptyterm.run(["show", "last"], env=env_for(home, PAGER=pager, LESS="-S"), cwd=home.project)
    assert s.returncode == 0 and seen.read_text().strip() == "LESS=-S LV=-c"


@pytest.mark.skipif(shutil.which("less") is None, reason="less is not installed")
def test_less_shows_colours_not_escape_codes_and_quits_cleanly(home: H.FakeHome) -> None:
    """Debian's default: LESS unset. Before, less showed ``ESC[1m`` as text in every long ``show``."""
    s = ptyterm.run(["show", "last"], env=env_for(home, PAGER="less", LESS=None), cwd=home.project, rows=12,
                    keys=[("Turn 1", b"q")])  # type: ignore[arg-type]
    assert s.returncode == 0, s.raw
    assert "ESC[" not in s.text and "Code-mode cells demo" in s.text
    assert "\x1b[1m" in s.raw  # the bold reached the terminal as a real escape (less -R)
    # short output: less -F prints it and exits by itself, nothing to type
    short = ptyterm.run(["show", "last", "--final"], env=env_for(home, PAGER="less", LESS=None),
                        cwd=home.project, rows=40)
    assert short.returncode == 0 and "calc.add is fixed" in short.text


# ---- progress, follow, Ctrl-C ---------------------------------------------------------------------------


def test_the_progress_bar_is_cleared_before_each_hit(home: H.FakeHome) -> None:
    s = ptyterm.run(["search", "calc.py", "--kind", "shell_command"], env=env_for(home), cwd=home.project)
    assert s.returncode == 0, s.raw
    assert "searching" in s.raw  # the bar was drawn (stderr is the terminal)
    shown = ptyterm.visible_lines(s.raw, 100)
    hits = [line for line in shown if "shell_command" in line]
    assert len(hits) == 6, shown
    assert not any("searching" in line for line in shown), shown  # never glued to a hit, gone at the end
    assert all(line.startswith(("01a22d9", "a15ecbf8")) for line in hits), hits


def test_a_mistyped_kind_is_one_usage_error(home: H.FakeHome) -> None:
    s = ptyterm.run(["search", "foo", "--kind", "shellcommand"], env=env_for(home), cwd=home.project)
    assert s.returncode == 2
    assert s.text.count("unknown kind") == 1 and "skipped" not in s.text and "Traceback" not in s.text


def test_follow_shows_a_running_command_and_completes_it_in_place(tmp_path: Path) -> None:
    live = tmp_path / "live.jsonl"
    lines = EXAMPLE.read_text(encoding="utf-8").split("\n")
    live.write_text("\n".join(lines[:13]) + "\n", encoding="utf-8")  # up to the first command's call

    answered: list[float] = []

    def codex_answers() -> None:  # once the command shows as running, and a second later, it completes
        time.sleep(1)
        answered.append(time.monotonic())
        with live.open("a", encoding="utf-8") as fh:
            fh.write("\n".join(lines[13:]) + "\n")

    start = time.monotonic()
    s = ptyterm.run(["show", str(live), "--follow"], cwd=tmp_path, marks=("running", "exit 0", "1 turn"),
                    env={"HOME": str(tmp_path), "TZ": "UTC", "TRANSCRIPT_READER_FOLLOW_IDLE_EXIT": "3"},
                    when=[("running", codex_answers)])
    assert s.returncode == 0, s.raw
    assert s.marks["running"] < answered[0] - start < s.marks["exit 0"], s.marks  # shown while it ran
    shown = ptyterm.visible_lines(s.raw, 100)
    assert not any("running" in line for line in shown), shown  # completed in place
    assert sum("$ ls && cat calc.py" in line for line in shown) == 1
    assert shown[-3].startswith("1 turn · 2 commands · 2 files changed"), shown  # the footer on exit


def test_ctrl_c_while_following_prints_the_footer_and_exits_130(tmp_path: Path) -> None:
    live = tmp_path / "live.jsonl"
    live.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    s = ptyterm.run(["show", str(live), "--follow"], cwd=tmp_path, env={"HOME": str(tmp_path), "TZ": "UTC"},
                    keys=[("final answer", b"\x03")])
    assert s.returncode == 130, s.raw
    assert "1 turn · 2 commands" in s.text and "Aborted" not in s.text and "Traceback" not in s.text


def test_ctrl_c_is_quiet_and_exits_130(tmp_path: Path) -> None:
    """``script -`` waits on the terminal: Ctrl-C there (as in a long ``search``) exits 130, no "Aborted!"."""
    s = ptyterm.run(["script", "-"], cwd=tmp_path, env={"HOME": str(tmp_path)}, keys=[("", b"\x03")],
                    timeout=30)
    assert s.returncode == 130 and "Aborted" not in s.text and "Traceback" not in s.text


# ---- content safety and widths ----------------------------------------------------------------------------


def test_control_characters_from_a_transcript_never_reach_the_terminal(tmp_path: Path) -> None:
    """An OSC 52 sequence (writes the clipboard), OSC 0 (sets the title) and ESC[2J (clears the screen)
    inside a command and its output are shown as text, in `show` and in `read`."""
    osc = "\\u001b]52;c;aGVsbG8=\\u0007 \\u001b]0;pwned\\u0007 \\u001b[2J"
    f = H.edited_example(tmp_path, "ls && cat calc.py", "echo " + osc)
    for args in (["show", str(f), "--no-pager"], ["read", str(f)]):
        s = ptyterm.run(args, cwd=tmp_path, env={"HOME": str(tmp_path), "TZ": "UTC"})
        assert s.returncode == 0, s.raw
        assert "\x1b]" not in s.raw and "\x07" not in s.raw and "\x1b[2J" not in s.raw
        assert "\\x1b]52;c;aGVsbG8=\\x07" in s.text


@pytest.mark.parametrize("cols", [20, 60, 120, 220])
def test_commands_wrap_and_are_never_cut_at_any_width(tmp_path: Path, cols: int) -> None:
    f = H.edited_example(tmp_path, "python3 -c 'import calc; print(calc.add(2,3))'", LONG_COMMAND)
    for extra in ([], ["--commands"]):
        s = ptyterm.run(["show", str(f), "--no-pager", *extra], cwd=tmp_path, cols=cols,
                        env={"HOME": str(tmp_path), "TZ": "UTC"})
        assert s.returncode == 0, s.raw
        shown = ptyterm.visible_lines(s.raw, cols)
        assert all(len(line) <= cols for line in shown), shown
        assert len(shown) > 8
        joined = "".join(line.strip() for line in shown).replace(" ", "")
        assert LONG_COMMAND.replace(" ", "") in joined, (cols, shown)
        assert "$ ls && cat calc.py" in "".join(shown) or cols < 60


def test_columns_zero_is_not_an_empty_screen(home: H.FakeHome) -> None:
    s = ptyterm.run(["show", "last", "--no-pager"], env=env_for(home, COLUMNS="0"), cwd=home.project, cols=80)
    assert s.returncode == 0 and "Code-mode cells demo" in s.text and "$ python3" in s.text


def test_no_color_means_no_styling_at_all(home: H.FakeHome) -> None:
    for args in (["show", "last", "--no-pager"], ["ls"], ["search", "calc.py"]):
        s = ptyterm.run(args, env=env_for(home, NO_COLOR="1"), cwd=home.project)
        assert s.returncode == 0, s.raw
        assert "\x1b[1m" not in s.raw and "\x1b[2m" not in s.raw and "\x1b[3" not in s.raw, args
    styled = ptyterm.run(["show", "last", "--no-pager"], env=env_for(home), cwd=home.project)
    assert "\x1b[1m" in styled.raw


def test_ls_on_a_terminal_pages_and_reports_an_unreadable_session(home: H.FakeHome) -> None:
    import os

    if os.geteuid() == 0:
        # root reads every file: make one unreadable by replacing it with a directory of its name
        victim = home.file_of(H.PYTEST)
        victim.unlink()
        victim.mkdir()
    else:  # pragma: no cover - CI runs as root
        home.file_of(H.PYTEST).chmod(0)
    s = ptyterm.run(["ls"], env=env_for(home), cwd=home.project, cols=220)
    assert s.returncode == 0, s.raw
    shown = ptyterm.visible_lines(s.raw, 220)
    assert shown[0].startswith("when (UTC)")
    title_col = shown[0].index("title")
    assert all(len(line) <= 220 for line in shown)
    assert len(shown[0]) - title_col < 150  # the title no longer takes 140 columns at 220
    doc = json.loads(ptyterm.run(["ls", "--json"], env=env_for(home), cwd=home.project).text)
    assert doc["count"] >= 6
