"""Shared test setup: the ``--update-golden`` switch (rewrite golden JSON instead of comparing; review
the diff), and where the optional shared corpus lives (tests skip with a reason when it is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
TRANSCRIPT_FIXTURES = FIXTURES / "transcripts"
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden JSON files from the current output instead of comparing")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


def transcript_fixtures() -> list[Path]:
    """Every transcript fixture (one small file per behaviour), golden JSON excluded."""
    return sorted(p for p in TRANSCRIPT_FIXTURES.iterdir()
                  if p.is_file() and not p.name.endswith(".golden.json") and p.suffix in (".jsonl", ".json", ".zst"))


def golden_path(fixture: Path) -> Path:
    name = fixture.name
    for ext in (".jsonl.zst", ".jsonl", ".json"):
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    return fixture.with_name(name + ".golden.json")
