"""The browser driven headless through Textual's Pilot against the fixture home: open, filter, select,
expand a failed command, jump between failures, search inside a session and across sessions, follow
a file as it grows, copy, export, quit."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("textual")

from tests import sessions_home as sh  # noqa: E402
from tests.browse_helpers import fixed_zone, home_and_config, until  # noqa: E402
from transcript_reader.browse.app import BrowseApp  # noqa: E402
from transcript_reader.browse.blocks import FAILURE  # noqa: E402
from transcript_reader.browse.help_screen import HelpScreen  # noqa: E402
from transcript_reader.browse.list_screen import ListScreen  # noqa: E402
from transcript_reader.browse.search_screen import SearchScreen  # noqa: E402
from transcript_reader.browse.session_screen import SessionScreen  # noqa: E402
from transcript_reader.model import PatchItem, ShellCommand, ToolCallItem  # noqa: E402

SIZE = (120, 36)
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_zone(monkeypatch)


def _ids(screen: ListScreen) -> list[str | None]:
    return [screen.table.entries[k].session_id for k in screen.table.shown]


async def _listed(pilot, app: BrowseApp) -> ListScreen:
    await until(pilot, lambda: isinstance(app.screen, ListScreen) and app.screen.loaded, what="the list")
    assert isinstance(app.screen, ListScreen)
    return app.screen


async def _opened(pilot, app: BrowseApp) -> SessionScreen:
    await until(pilot, lambda: isinstance(app.screen, SessionScreen) and not app.screen.reading,
                what="the session read")
    assert isinstance(app.screen, SessionScreen)
    return app.screen


def _rendered(screen: SessionScreen, k: int) -> str:
    return "\n".join(s.text for s in screen.view._strips(k))


async def test_list_is_ls_newest_first_with_figures_filled_in(tmp_path: Path) -> None:
    _, cfg = home_and_config(tmp_path)
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _listed(pilot, app)
        assert _ids(screen) == sh.PROJECT_LIVE_ORDER
        # the sub-agent sits under its parent, marked as ls marks it
        sub = screen.table.shown[sh.PROJECT_LIVE_ORDER.index(sh.SUBAGENT)]
        assert screen.table.entries[sub].depth == 1
        assert "└ [scout]" in screen.table._lines[sh.PROJECT_LIVE_ORDER.index(sh.SUBAGENT)].plain
        # figures come from the session store (built by this listing): the code-mode session had a
        # failed command
        await until(pilot, lambda: screen.stats_done >= screen.stats_missing, what="the figures")
        await pilot.pause(0.4)
        first = screen.table._lines[0].plain
        assert first.startswith("✗") and "2 (1✗)" in first
        assert screen.table._lines[sh.PROJECT_LIVE_ORDER.index(sh.PARENT)].plain.startswith("✓")
        # ... in the store `ls` reads
        assert len(list((tmp_path / "cache").glob("store-*.sqlite"))) == 1


async def test_live_fuzzy_filter_and_preview(tmp_path: Path) -> None:
    _, cfg = home_and_config(tmp_path)
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _listed(pilot, app)
        await pilot.press(*"scout")
        assert _ids(screen) == [sh.SUBAGENT]
        await pilot.press("escape")
        assert _ids(screen) == sh.PROJECT_LIVE_ORDER
        await pilot.press(*"cmcd")  # a subsequence of "Code-mode cells demo"
        assert _ids(screen) == [sh.CODE_MODE]
        # the preview pane reads the selected session: its prompt and final answer
        await until(pilot, lambda: screen.preview_for == screen.table.current.path, what="the preview")
        assert screen.preview is not None and screen.preview.final is not None
        assert "calc.add is fixed" in screen.preview.final
        text = str(screen.query_one("#preview").render())
        assert "final answer" in text and "make calc tests pass" in text
        await pilot.press("escape")
        await pilot.press(*"'zzz")
        assert _ids(screen) == []


async def test_open_expand_failed_command_and_jump_between_failures(tmp_path: Path) -> None:
    _, cfg = home_and_config(tmp_path)
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        await _listed(pilot, app)
        await pilot.press("enter")  # the newest: the code-mode session
        screen = await _opened(pilot, app)
        view = screen.view
        await pilot.press("x")
        first = view.current
        assert first is not None and isinstance(first.item, ShellCommand) and first.item.exit_code == 1
        assert first.expanded and "AssertionError: 0" in _rendered(screen, view.cursor)
        await pilot.press("x")  # the code cell that failed, then the patch inside it that did not apply
        assert isinstance(view.current.item, ToolCallItem) and view.current.item.success is False
        await pilot.press("x")
        third = view.current
        assert third is not None and isinstance(third.item, PatchItem) and third.item.success is False
        assert third.depth == 1 and "does_not_exist.py" in _rendered(screen, view.cursor)
        await pilot.press("X", "X")
        assert view.current is first
        # fold it again, and move by commands, changes and turns
        await pilot.press("enter")
        assert not first.expanded and len(view._strips(view.cursor)) == 1
        await pilot.press("c")
        assert isinstance(view.current.item, ShellCommand) and view.current.item.exit_code == 0
        await pilot.press("D")
        assert isinstance(view.current.item, PatchItem) and view.current.item.success is not False
        await pilot.press("T")
        assert view.current.turn == 1 and view.current.flags & FAILURE == 0
        await pilot.press("q")
        assert isinstance(app.screen, ListScreen)


async def test_search_inside_a_session_marks_hits(tmp_path: Path) -> None:
    h, cfg = home_and_config(tmp_path)
    cfg = type(cfg)(**{**cfg.__dict__, "session": str(h.file_of(sh.CODE_MODE))})
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await pilot.press("slash", *"AssertionError", "enter")
        assert screen.hits, "no hit"
        k = screen.view.cursor
        assert k in screen.hits
        # the hit is in the command's output: the block opened to show it, and the hit is marked
        assert screen.view.current.expanded
        strips = screen.view._strips(k)
        marked = [seg for s in strips for seg in s if seg.text.lower() == "assertionerror"]
        assert marked and all(seg.style and seg.style.bgcolor for seg in marked)
        await pilot.press("n")
        assert screen.view.cursor in screen.hits
        status = str(screen.query_one("#status").render())
        assert "/AssertionError:" in status
        await pilot.press("escape")  # clears the search
        assert screen.view.search is None and screen.hits == []


async def test_follow_shows_items_appended_to_the_file(tmp_path: Path) -> None:
    h, cfg = home_and_config(tmp_path)
    src = h.file_of(sh.PARENT).read_bytes().splitlines(keepends=True)
    live = tmp_path / "live" / "rollout-2026-12-01T10-00-00-01a22d9c-2643-7350-8a76-f18f2f46ae21.jsonl"
    live.parent.mkdir()
    cut = len(src) // 3
    live.write_bytes(b"".join(src[:cut]))
    cfg = type(cfg)(**{**cfg.__dict__, "session": str(live), "follow": True})
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionScreen), what="the session screen")
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        assert screen.following
        await until(pilot, lambda: len(screen.view.model.blocks) > 0, what="the first items")
        before = len(screen.view.model.blocks)
        commands_before = sum(1 for b in screen.view.model.blocks if isinstance(b.item, ShellCommand))
        with open(live, "ab") as fh:
            fh.write(b"".join(src[cut:]))
        await until(pilot, lambda: sum(1 for b in screen.view.model.blocks if isinstance(b.item, ShellCommand))
                    == 2, what="the appended commands")
        assert len(screen.view.model.blocks) > before and commands_before < 2
        # the view keeps the newest block in sight while following
        assert screen.view.cursor == len(screen.view.model.visible) - 1
        await pilot.press("f")
        assert not screen.following


async def test_cross_session_search_streams_hits_and_opens_at_the_hit(tmp_path: Path) -> None:
    _, cfg = home_and_config(tmp_path)
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        await _listed(pilot, app)
        await pilot.press("?")
        assert isinstance(app.screen, SearchScreen)
        search = app.screen
        await pilot.press(*"does_not_exist", "enter")
        await until(pilot, lambda: not search.searching, what="the search")
        assert search.hits and all(h.entry.session_id == sh.CODE_MODE for h in search.hits)
        assert search.searched == len(search.entries) and not search.notes
        hit = search.hits[0]
        await pilot.press("enter")  # the same query again: open the highlighted hit
        screen = await _opened(pilot, app)
        await until(pilot, lambda: screen.jump_line is None, what="the jump")
        b = screen.view.current
        assert b is not None and b.item.line >= hit.item.line
        assert screen.view.search is not None and screen.view.search.query == "does_not_exist"
        await pilot.press("q")
        assert app.screen is search


async def test_copy_export_toggles_and_quit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h, cfg = home_and_config(tmp_path)
    cfg = type(cfg)(**{**cfg.__dict__, "session": str(h.file_of(sh.CODE_MODE))})
    monkeypatch.chdir(tmp_path)
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await pilot.press("c", "y")
        assert app.clipboard == screen.view.current.item.command
        shown = len(screen.view.model.visible)
        await pilot.press("r")
        assert len(screen.view.model.visible) > shown  # the session's reasoning is now listed
        await pilot.press("r")
        assert len(screen.view.model.visible) == shown
        await pilot.press("h")  # the key map
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("e")
        for _ in range(40):
            await pilot.press("backspace")
        await pilot.press(*"out.md", "enter")
        await until(pilot, lambda: (tmp_path / "out.md").exists() and (tmp_path / "out.md").stat().st_size > 0,
                    what="the export")
        assert (tmp_path / "out.md").read_text(encoding="utf-8").startswith("# ")
        await pilot.press("q", "escape")
    assert app.return_code == 0


async def test_a_long_session_renders_only_what_is_on_screen(tmp_path: Path) -> None:
    """Virtual: 4,000 commands are laid out, about a screenful of blocks is rendered."""
    h, cfg = home_and_config(tmp_path)
    src = [ln for ln in h.file_of(sh.PYTEST).read_bytes().splitlines() if ln.strip()]
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as out:
        out.write(src[0] + b"\n")
        for copy in range(400):
            for ln in src[1:]:
                out.write(ln.replace(b'"call_', b'"call_c%d_' % copy) + b"\n")
    cfg = type(cfg)(**{**cfg.__dict__, "session": str(big)})
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        rendered: list[object] = []
        real = screen.view._render_block
        screen.view._render_block = lambda b: rendered.append(b) or real(b)  # type: ignore[method-assign]
        screen.view.invalidate()
        await pilot.press("G")
        await pilot.pause(0.2)
        assert len(screen.view.model.visible) > 2000
        assert 0 < len(rendered) < 150
        assert screen.view.cursor == len(screen.view.model.visible) - 1


@pytest.mark.filterwarnings("ignore")
def test_browse_without_a_terminal_is_show(tmp_path: Path) -> None:
    """stdout is a pipe: `browse SESSION` prints what `show SESSION` prints."""
    import subprocess
    import sys

    h, _ = home_and_config(tmp_path)
    env = {**__import__("os").environ, "CODEX_HOME": str(h.home), "COLUMNS": "100",
           "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    run = [sys.executable, "-m", "transcript_reader"]
    browse = subprocess.run([*run, "browse", sh.CODE_MODE], capture_output=True, text=True, env=env,
                            cwd=h.project, timeout=60)
    show = subprocess.run([*run, "show", sh.CODE_MODE], capture_output=True, text=True, env=env,
                          cwd=h.project, timeout=60)
    assert browse.returncode == 0, browse.stderr
    assert browse.stdout == show.stdout and "Code-mode cells demo" in browse.stdout


async def test_resize_lays_the_screens_out_again(tmp_path: Path) -> None:
    """A narrower terminal: expanded blocks wrap again (their height changes), the list puts its
    preview under the rows; nothing is cut to nothing."""
    _, cfg = home_and_config(tmp_path)
    app = BrowseApp(cfg)
    async with app.run_test(size=(160, 40)) as pilot:
        listing = await _listed(pilot, app)
        assert not listing.query_one("#body").has_class("narrow")
        await pilot.resize_terminal(70, 30)
        await pilot.pause(0.2)
        assert listing.query_one("#body").has_class("narrow")
        assert all(line.cell_len > 20 for line in listing.table._lines)
        await pilot.press("enter")
        screen = await _opened(pilot, app)
        await pilot.press("x")  # the failed command, expanded: its output wraps at the width
        k = screen.view.cursor
        narrow = screen.view.model.block_height(screen.view.current)
        await pilot.resize_terminal(200, 30)
        await pilot.pause(0.2)
        wide = screen.view.model.block_height(screen.view.current)
        assert screen.view.current.expanded and wide <= narrow
        assert screen.view.model.offsets[k + 1] - screen.view.model.offsets[k] == wide
        assert screen.view.text_width == 200 or screen.view.text_width > 150


async def test_f_follows_a_session_already_open(tmp_path: Path) -> None:
    """``f`` on a session read whole: it is read again as a follow, shown once caught up, then grows."""
    h, cfg = home_and_config(tmp_path)
    src = h.file_of(sh.PARENT).read_bytes().splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    cut = len(src) // 3
    live.write_bytes(b"".join(src[:cut]))
    cfg = type(cfg)(**{**cfg.__dict__, "session": str(live)})
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        assert not screen.following
        whole = len(screen.view.model.blocks)
        await pilot.press("f")
        assert screen.following
        with open(live, "ab") as fh:
            fh.write(b"".join(src[cut:]))

        def commands() -> int:
            return sum(1 for b in screen.view.model.blocks if isinstance(b.item, ShellCommand))

        await until(pilot, lambda: commands() == 2, what="the appended commands")
        assert len(screen.view.model.blocks) > whole
        await pilot.press("f")
        assert not screen.following


async def test_a_file_that_is_no_transcript_is_an_error_on_screen(tmp_path: Path) -> None:
    _, cfg = home_and_config(tmp_path)
    bad = tmp_path / "notes.jsonl"
    bad.write_text("this is not a transcript\n", encoding="utf-8")
    cfg = type(cfg)(**{**cfg.__dict__, "session": str(bad)})
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and not app.screen.reading,
                    what="the read to end")
        screen = app.screen
        assert isinstance(screen, SessionScreen) and screen.error
        assert "error" in str(screen.query_one("#status").render())
        await pilot.press("q")
        assert isinstance(app.screen, ListScreen)


@pytest.mark.parametrize(("query", "fields", "hit"), [
    ("clcpy", ["fix calc.py"], True),           # a subsequence
    ("ypclc", ["fix calc.py"], False),          # order matters
    ("fix gpt", ["fix calc.py", "gpt-5.5"], True),  # every term, each in some field
    ("fix zzz", ["fix calc.py", "gpt-5.5"], False),
    ("scout", ["what is wrong", "/tmp/cout"], False),  # never across two fields
    ("'calc.", ["fix calc.py"], True),          # ' : as typed
    ("'clc", ["fix calc.py"], False),
    ("", ["anything"], True),
    ("CALC", ["fix calc.py"], True),            # case-insensitive
])
def test_fuzzy_filter(query: str, fields: list[str], hit: bool) -> None:
    from transcript_reader.browse.fuzzy import matches

    assert matches(query, fields) is hit


def test_other_commands_do_not_import_textual(tmp_path: Path) -> None:
    """Start-up time of every other command: Textual is imported only when `browse` runs."""
    import os
    import subprocess
    import sys

    h, _ = home_and_config(tmp_path)
    code = ("import sys\nfrom click.testing import CliRunner\nfrom transcript_reader.cli import cli\n"
            "for args in (['ls', '--all-projects'], ['show', 'last'], ['--help'], ['browse', '--help']):\n"
            "    r = CliRunner().invoke(cli, args)\n    assert r.exit_code == 0, (args, r.output)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))\n")
    env = {**os.environ, "CODEX_HOME": str(h.home), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=h.project,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


async def test_an_empty_home_says_where_it_looked(tmp_path: Path) -> None:
    from transcript_reader.browse.sources import BrowseConfig

    empty = tmp_path / "nothing"
    empty.mkdir()
    cfg = BrowseConfig(codex_home=empty, cwd=str(tmp_path), store_dir=tmp_path / "cache", still=True,
                       no_color=True)
    app = BrowseApp(cfg)
    assert app.no_color  # --no-color does what NO_COLOR does
    async with app.run_test(size=SIZE) as pilot:
        screen = await _listed(pilot, app)
        assert screen.table.entries == []
        text = str(screen.query_one("#preview").render())
        assert "No sessions" in text and str(empty) in text and "--all-projects" in text
        await pilot.press("enter", "?")  # nothing to open; the search has nothing to search
        await pilot.press("escape", "escape")
    assert app.return_code == 0
