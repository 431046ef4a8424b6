"""SVG snapshots of the browser's key screens at two sizes, compared byte for byte.

Stable by construction: the fixture home keeps its recorded paths (``/home/user/project``), local
time is UTC, nothing on screen depends on today's date or on timing, the cursor does not blink, and
each screen is taken once its workers have finished. The snapshots are ``tests/snapshots/browse/*.svg``
(open one in a browser to look at it).

Reviewing a change: run ``python -m pytest tests/test_browse_snapshots.py --update-golden``, open the
rewritten SVGs (``git diff --stat tests/snapshots``; a browser shows them), and commit them only if
the screens look right. A failing comparison writes the new screen next to the test's tmp_path and
names it in the message. The snapshots hold for the Textual version they were made with (``VERSION``
beside them); another version draws differently, and the test says so instead of comparing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

textual = pytest.importorskip("textual")

from tests import sessions_home as sh  # noqa: E402
from tests.browse_helpers import fixed_zone, home_and_config, until  # noqa: E402
from transcript_reader.browse.app import BrowseApp  # noqa: E402
from transcript_reader.browse.list_screen import ListScreen  # noqa: E402
from transcript_reader.browse.search_screen import SearchScreen  # noqa: E402
from transcript_reader.browse.session_screen import SessionScreen  # noqa: E402

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots" / "browse"
SIZES = {"80x24": (80, 24), "140x40": (140, 40)}
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed_zone(monkeypatch)
    monkeypatch.delenv("NO_COLOR", raising=False)


def _textual_version() -> str:
    from importlib.metadata import version

    return version("textual")


def _check(name: str, svg: str, update: bool, tmp_path: Path) -> None:
    path = SNAPSHOTS / f"{name}.svg"
    recorded = SNAPSHOTS / "VERSION"
    if update:
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        recorded.write_text(_textual_version() + "\n", encoding="utf-8")
        return
    if recorded.exists() and recorded.read_text(encoding="utf-8").strip() != _textual_version():
        pytest.skip(f"snapshots were made with textual {recorded.read_text().strip()}, this is "
                    f"{_textual_version()}: run with --update-golden and review them")
    assert path.exists(), f"no snapshot {path}: run with --update-golden and review it"
    if path.read_text(encoding="utf-8") != svg:
        got = tmp_path / f"{name}.svg"
        got.write_text(svg, encoding="utf-8")
        pytest.fail(f"{name}: the screen changed; new screen in {got} (compare with {path}; "
                    "--update-golden rewrites the snapshot)")


async def _settled_list(pilot, app: BrowseApp) -> ListScreen:
    await until(pilot, lambda: isinstance(app.screen, ListScreen) and app.screen.loaded)
    screen = app.screen
    assert isinstance(screen, ListScreen)
    await until(pilot, lambda: screen.stats_done >= screen.stats_missing, what="figures")
    await until(pilot, lambda: screen.table.current is not None
                and screen.preview_for == screen.table.current.path, what="preview")
    await pilot.pause(0.5)  # the throttled relayout after the last figure
    return screen


@pytest.mark.parametrize("size", SIZES)
async def test_snapshot_list(size: str, tmp_path: Path, update_golden: bool) -> None:
    _, cfg = home_and_config(tmp_path, keep_paths=True)
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZES[size]) as pilot:
        await _settled_list(pilot, app)
        _check(f"list-{size}", app.export_screenshot(), update_golden, tmp_path)


@pytest.mark.parametrize("size", SIZES)
async def test_snapshot_session_failure_expanded(size: str, tmp_path: Path, update_golden: bool) -> None:
    h, cfg = home_and_config(tmp_path, keep_paths=True)
    cfg = type(cfg)(**{**cfg.__dict__, "session": str(h.file_of(sh.CODE_MODE))})
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZES[size]) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and not app.screen.reading)
        await pilot.press("x")
        await pilot.pause(0.3)
        _check(f"session-{size}", app.export_screenshot(), update_golden, tmp_path)


@pytest.mark.parametrize("size", SIZES)
async def test_snapshot_search_results(size: str, tmp_path: Path, update_golden: bool) -> None:
    _, cfg = home_and_config(tmp_path, keep_paths=True)
    app = BrowseApp(cfg)
    async with app.run_test(size=SIZES[size]) as pilot:
        await _settled_list(pilot, app)
        await pilot.press("?", *"verification", "enter")  # fewer hits than lines: no scrollbar race
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await until(pilot, lambda: not screen.searching, what="the search")
        await pilot.pause(0.3)
        _check(f"search-{size}", app.export_screenshot(), update_golden, tmp_path)


async def test_snapshot_no_color(tmp_path: Path, update_golden: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_COLOR: the same session screen with no colour at all (Textual's monochrome filter)."""
    monkeypatch.setenv("NO_COLOR", "1")
    h, cfg = home_and_config(tmp_path, keep_paths=True)
    cfg = type(cfg)(**{**cfg.__dict__, "session": str(h.file_of(sh.CODE_MODE))})
    app = BrowseApp(cfg)
    assert app.no_color
    async with app.run_test(size=SIZES["80x24"]) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionScreen) and not app.screen.reading)
        await pilot.press("x")
        await pilot.pause(0.3)
        svg = app.export_screenshot()
        _check("session-no-color-80x24", svg, update_golden, tmp_path)


#: the screenshots of docs/sessions.md are snapshots: reviewed with them, never stale
README_SHOTS = {"browse-list.svg": "list-140x40.svg", "browse-session.svg": "session-140x40.svg"}


@pytest.mark.parametrize("doc", README_SHOTS)
def test_readme_screenshots_are_the_snapshots(doc: str, update_golden: bool) -> None:
    docs = Path(__file__).resolve().parents[1] / "docs"
    snap = (SNAPSHOTS / README_SHOTS[doc]).read_text(encoding="utf-8")
    if update_golden:
        (docs / doc).write_text(snap, encoding="utf-8")
    assert (docs / doc).read_text(encoding="utf-8") == snap, f"docs/{doc} is not the current snapshot"
    assert f"({doc})" in (docs / "sessions.md").read_text(encoding="utf-8")


def test_readme_key_map_is_the_apps() -> None:
    """The key map of docs/sessions.md is the table the app's help screen shows (``help_screen.KEYS``)."""
    from transcript_reader.browse.help_screen import markdown_key_map

    doc = (Path(__file__).resolve().parents[1] / "docs" / "sessions.md").read_text(encoding="utf-8")
    assert markdown_key_map() in doc
