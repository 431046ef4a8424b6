"""Shared by the browser's tests: an app over a fixture home, in a fixed time zone, and a way to wait
for the app's workers (reading runs in threads) without sleeping a fixed time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tests.sessions_home import FakeHome, build_home
from transcript_reader.browse.sources import BrowseConfig

#: a fixed "now": nothing on screen may depend on the day the tests run
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def fixed_zone(monkeypatch: object) -> None:
    """Local time is UTC (the list shows local times)."""
    monkeypatch.setenv("TZ", "UTC")  # type: ignore[attr-defined]
    time.tzset()


def home_and_config(tmp_path: Path, *, keep_paths: bool = False, **kw: object) -> tuple[FakeHome, BrowseConfig]:
    h = build_home(tmp_path, keep_paths=keep_paths)
    cwd = "/home/user/project" if keep_paths else str(h.project)
    cfg = BrowseConfig(codex_home=h.home, cwd=cwd, store_dir=tmp_path / "cache", now=NOW,
                       still=True, **kw)  # type: ignore[arg-type]
    return h, cfg


async def until(pilot: object, cond: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    """Let the app run until ``cond()`` holds (workers are threads: their results arrive as messages)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or cond}")
        await pilot.pause(0.05)  # type: ignore[attr-defined]
        await asyncio.sleep(0)

