"""Golden tests: each fixture in ``fixtures/transcripts/`` is one behaviour of the reader (its name says
which), and its ``.golden.json`` holds every item and the inspect figures. The goldens were reviewed by
hand when written; ``pytest --update-golden`` rewrites them (review the diff)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import golden_path, transcript_fixtures
from transcript_reader.api import Transcript
from transcript_reader.projections.render import info_to_dict, item_to_dict

FIXTURES = transcript_fixtures()


def snapshot(path: Path) -> dict[str, Any]:
    t = Transcript(path)
    items = [item_to_dict(i) for i in t.items()]
    info = info_to_dict(t.info())
    info["path"] = path.name
    return {"items": items, "info": info}


@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.name for p in FIXTURES])
def test_golden(fixture: Path, update_golden: bool) -> None:
    got = snapshot(fixture)
    golden = golden_path(fixture)
    if update_golden or not golden.exists():
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if not update_golden:
            pytest.fail(f"{golden.name} did not exist; written now, review it and re-run")
    want = json.loads(golden.read_text(encoding="utf-8"))
    assert got == want


def test_every_fixture_has_a_golden() -> None:
    missing = [p.name for p in FIXTURES if not golden_path(p).exists()]
    assert not missing, f"fixtures without golden JSON: {missing} (run pytest --update-golden and review)"
