"""Memory stays bounded on hostile files, on scaled-down copies of the benchmark's four
(``python -m corpus_tools.bench_hostile`` builds the full-size ones: a 2 GiB-line ``.zst`` bomb, 2 GB of
NUL bytes, a 300 MB TypeScript ``.json``, a 500 MB line, and reports their peak RSS). Each file is read
in a fresh interpreter; its peak RSS over an interpreter that only imported the same modules must stay
a small fraction of what the file would take held whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corpus_tools.bench_hostile import build_nul, build_single_line, build_ts_json, build_zst_bomb
from tests.conftest import ROOT

PRELUDE = "import resource, transcript_reader.api, transcript_reader.assembly, orjson, zstandard\n"
CAP = 4 << 20  # a 4 MiB line cap: the hostile lines are 16x to 64x over it


def _peak_mb(code: str) -> float:
    full = PRELUDE + code + "\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    out = subprocess.run([sys.executable, "-c", full], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1]) / 1024


READ = ("from transcript_reader.api import Transcript\nfrom transcript_reader.reading.source import ReadCaps\n"
        "t = Transcript({p!r}, caps=ReadCaps(line_bytes={cap}))\nfor _ in t.items():\n    pass\ninfo = t.info()\n"
        "a = info.lines\nassert a.lines == a.decoded + a.known_noise + a.unknown + a.unreadable + a.blank\n"
        "assert a.unreadable == {unreadable}, a\n")


@pytest.mark.slow
@pytest.mark.parametrize("name,build,unreadable,budget_mb", [
    ("bomb.jsonl.zst", lambda p: build_zst_bomb(p, line_mib=256), 1, 80),
    ("single.jsonl", lambda p: build_single_line(p, line_mib=64), 1, 30),
    ("ts.json", lambda p: build_ts_json(p, size=32 << 20), 0, 30),
], ids=["zst_bomb_256MiB_line", "single_64MiB_line", "ts_json_32MB"])
def test_hostile_files_are_read_in_bounded_memory(tmp_path: Path, name: str, build: object,
                                                  unreadable: int, budget_mb: float) -> None:
    path = tmp_path / name
    build(path)  # type: ignore[operator]
    baseline = _peak_mb("")
    peak = _peak_mb(READ.format(p=str(path), cap=CAP, unreadable=unreadable))
    assert peak - baseline < budget_mb, f"{name}: peak {peak:.1f} MB vs baseline {baseline:.1f} MB"


@pytest.mark.slow
def test_a_file_of_nul_bytes_is_refused_after_a_bounded_prefix(tmp_path: Path) -> None:
    path = tmp_path / "nul.jsonl"
    build_nul(path, mib=256)
    baseline = _peak_mb("")
    code = ("from transcript_reader import inspect\nfrom transcript_reader.errors import UnsupportedFormatError\n"
            f"try:\n    inspect({str(path)!r})\nexcept UnsupportedFormatError:\n    pass\nelse:\n    raise SystemExit(3)\n")
    assert _peak_mb(code) - baseline < 30
