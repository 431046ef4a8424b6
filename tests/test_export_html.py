"""The HTML export in a real headless browser (Debian's chromium): the page loads without a console
message of any kind (a CSP violation, i.e. any attempt to load something, would log one) and shows
every command of the session. Skipped with a reason when chromium is not installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests import sessions_home as H
from transcript_reader import api
from transcript_reader.model import ShellCommand

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")


def load(page: Path, profile: Path) -> tuple[str, list[str]]:
    """``(serialized DOM, console messages)`` of ``page`` after load."""
    assert CHROMIUM is not None
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
         "--enable-logging=stderr", "--v=0", "--dump-dom", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
    return p.stdout, console


class _CommandTexts(HTMLParser):
    """Text of every element with class ``cmd-text``."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._depth:
            self._depth += 1
        elif "cmd-text" in (dict(attrs).get("class") or "").split():
            self._depth = 1
            self.texts.append("")

    def handle_endtag(self, tag: str) -> None:
        if self._depth:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.texts[-1] += data


def export(home: H.FakeHome, session: str, out: Path) -> None:
    env = {**os.environ, "CODEX_HOME": str(home.home), "XDG_CACHE_HOME": str(out.parent / "cache"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    subprocess.run([sys.executable, "-m", "transcript_reader", "export", session, "--format", "html", "-o", str(out)],
                   check=True, env=env, cwd=home.project, capture_output=True, timeout=120)


def test_console_detection_works(tmp_path: Path) -> None:
    """Control: a page that logs is caught, so an empty console list below means something."""
    page = tmp_path / "canary.html"
    page.write_text('<!DOCTYPE html><html><body><script>console.error("canary-7")</script></body></html>')
    _, console = load(page, tmp_path / "profile")
    assert any("canary-7" in line for line in console)


@pytest.mark.parametrize("session", [H.CODE_MODE, H.PARENT, H.EARLY])
def test_html_export_loads_cleanly_and_shows_every_command(tmp_path: Path, session: str) -> None:
    home = H.build_home(tmp_path)
    page = tmp_path / "session.html"
    export(home, session, page)
    dom, console = load(page, tmp_path / "profile")
    assert console == []
    parser = _CommandTexts()
    parser.feed(dom)
    expected = [f"$ {i.command}" for i in api.read(home.file_of(session)).items if isinstance(i, ShellCommand)]
    assert expected, "the fixture has commands"
    assert parser.texts == expected
