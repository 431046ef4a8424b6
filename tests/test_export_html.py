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


def _pixel(png: Path, x: int, y: int) -> tuple[int, int, int]:
    """The RGB of one pixel of an 8-bit, non-interlaced PNG (what chromium writes): enough of a decoder
    to read a background colour without an imaging library."""
    import struct
    import zlib

    data = png.read_bytes()
    pos, idat = 8, b""
    width = ctype = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, chunk = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, _, _, ctype = struct.unpack(">IIBB", chunk[:10])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    raw = zlib.decompress(idat)
    bpp = {2: 3, 6: 4}[ctype]
    stride = width * bpp
    prev = bytearray(stride)
    for row in range(y + 1):
        f = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
    return prev[x * bpp], prev[x * bpp + 1], prev[x * bpp + 2]


def screenshot(page: Path, out: Path, profile: Path, *, width: int, height: int, dark: bool) -> Path:
    assert CHROMIUM is not None
    p = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
         f"--blink-settings=preferredColorScheme={0 if dark else 1}", "--hide-scrollbars",
         f"--window-size={width},{height}", f"--screenshot={out}", page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert p.returncode == 0 and out.is_file(), p.stderr[-2000:]
    return out


@pytest.mark.parametrize("width", [1280, 390], ids=["desktop", "phone"])
@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_html_export_in_both_schemes_at_desktop_and_phone_widths(tmp_path: Path, width: int, dark: bool) -> None:
    """The page follows the reader's colour scheme (the page and its scrollbars: ``color-scheme``) at a
    desktop and a phone width."""
    home = H.build_home(tmp_path)
    page = tmp_path / "session.html"
    export(home, H.CODE_MODE, page)
    shot = screenshot(page, tmp_path / "shot.png", tmp_path / "profile", width=width, height=900, dark=dark)
    expected = (13, 17, 23) if dark else (255, 255, 255)  # --bg of the scheme
    assert _pixel(shot, 2, 2) == expected
    assert _pixel(shot, width - 3, 2) == expected
    assert "color-scheme:light dark" in page.read_text(encoding="utf-8")
