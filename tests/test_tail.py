"""The last items from the end (``transcript_reader.projections.tail``): exactly a full read's last N items, on every
fixture and corpus file and on a long generated rollout, whichever way each was served."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from transcript_reader import api
from transcript_reader.errors import TranscriptError
from transcript_reader.projections import selector
from transcript_reader.projections.tail import last_items, read_tail

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpus"


def _files() -> list[Path]:
    out = sorted((ROOT / "fixtures").rglob("*.jsonl")) + sorted((ROOT / "fixtures").rglob("*.zst"))
    if SHARED.is_dir():
        out += sorted(SHARED.rglob("*.jsonl"))
    return out


@pytest.fixture(scope="module")
def long_rollout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from corpus_tools.bench_reader import DEFAULT_SOURCES, FALLBACK_SOURCES, build

    path = tmp_path_factory.mktemp("tail") / "long.rollout.jsonl"
    build(path, 3, [p for p in DEFAULT_SOURCES if p.exists()] or FALLBACK_SOURCES)
    return path


def _full(path: Path, projection: str) -> list[object]:
    sel = selector(projection)
    return [i for i in api.Transcript(path).items() if sel(i)]


def test_last_items_equal_a_full_read_on_every_recorded_file() -> None:
    served = 0
    for f in _files():
        for projection in ("timeline", "shell_commands", "conversation"):
            try:
                full = _full(f, projection)
            except TranscriptError:
                continue
            t = api.Transcript(f)
            for n in (1, 2, 5, 20):
                got = last_items(t.path, t.format, n, selector(projection))
                if got is not None:
                    served += 1
                    assert got == full[-n:], (f.name, projection, n)
                r = read_tail(f, n, projection=projection)
                assert list(r.items) == full[-n:], (f.name, projection, n)
    assert served > 20  # the shortcut itself was compared, not only the fallback


@pytest.mark.parametrize("n", [1, 7, 100, 400])
def test_last_items_of_a_long_rollout(long_rollout: Path, n: int) -> None:
    full = _full(long_rollout, "timeline")
    t = api.Transcript(long_rollout)
    got = last_items(t.path, t.format, n, selector("timeline"))
    assert got == full[-n:] if n <= 100 else got in (None, full[-n:])
    r = read_tail(long_rollout, n)
    assert list(r.items) == full[-n:]
    if got is not None:
        assert r.total_items is None and r.dropped_items is None and r.info is None and r.truncated


def test_read_tail_cli_says_the_totals_are_not_counted(long_rollout: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "transcript_reader", "read", str(long_rollout), "--tail", "3", "--json"],
                       capture_output=True, text=True, cwd=ROOT, check=True)
    doc = json.loads(p.stdout)
    full = api.read(long_rollout, tail=3)
    assert [i["line"] for i in doc["items"]] == [i.line for i in full.items]
    assert doc["stats"]["total_items"] is None and doc["stats"]["dropped_items"] is None and doc["truncated"]
    text = subprocess.run([sys.executable, "-m", "transcript_reader", "read", str(long_rollout), "--tail", "3"],
                          capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "not counted" in text


def test_line_cache_counts_only_what_was_appended(long_rollout: Path, tmp_path: Path) -> None:
    """A later tail of a grown file starts counting at the offset the cache kept; a file rewritten
    before that offset (same name, same inode) is counted again: items always equal a full read's."""
    from transcript_reader.projections.tail import LineCache

    f = tmp_path / "grow.jsonl"
    data = long_rollout.read_bytes()
    lines = data.splitlines(keepends=True)
    f.write_bytes(b"".join(lines[: len(lines) * 2 // 3]))
    where = tmp_path / "cache" / "lines.json"
    cache = LineCache(where)
    first = read_tail(f, 5, line_cache=cache)
    cache.save()
    assert list(first.items) == _full(f, "timeline")[-5:]
    with open(f, "ab") as fh:  # Codex appends: the checkpoint stays valid
        fh.write(b"".join(lines[len(lines) * 2 // 3:]))
    cache = LineCache(where)
    st = f.stat()
    with open(f, "rb") as fh:
        assert cache.get(f, fh, st) is not None
    assert list(read_tail(f, 5, line_cache=cache).items) == _full(f, "timeline")[-5:]
    cache.save()
    # rewritten in place (same size, two lines more near the start): counted again
    with open(f, "r+b") as fh:
        fh.write(b"\n\n")
    cache = LineCache(where)
    with open(f, "rb") as fh:
        assert cache.get(f, fh, f.stat()) is None
    full = _full(f, "timeline")[-5:]
    assert list(read_tail(f, 5, line_cache=cache).items) == full
    cache.save()
    # grown, with its first bytes changed too: counted again
    with open(f, "r+b") as fh:
        fh.write(b" \n")
    with open(f, "ab") as fh:
        fh.write(lines[-1])
    cache = LineCache(where)
    with open(f, "rb") as fh:
        assert cache.get(f, fh, f.stat()) is None
    full = _full(f, "timeline")[-5:]
    assert list(read_tail(f, 5, line_cache=cache).items) == full
    # a damaged cache file only costs speed
    where.write_bytes(b"{not json")
    assert list(read_tail(f, 5, line_cache=LineCache(where)).items) == full
