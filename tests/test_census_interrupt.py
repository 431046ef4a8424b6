"""Ctrl-C: a census interrupted mid-run stops its worker processes cleanly and prints what it counted.

The census runs as a real subprocess in its own session over a generated corpus big enough to take a
while; once its first batch is written to ``--rows``, it gets SIGINT (what Ctrl-C sends). No timing is
asserted: the test waits for evidence of progress, then checks the exit and the partial figures.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from corpus_tools.gen_corpus import generate

ROOT = Path(__file__).resolve().parents[1]


def _rows_written(path: Path) -> int:
    try:
        return max(0, len(path.read_text().splitlines()) - 1)
    except OSError:
        return 0


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sigint_stops_workers_and_prints_partial_figures(tmp_path: Path, workers: str) -> None:
    manifest = generate(tmp_path / "corpus", rollouts=160, seed=3, cells=44)
    rows = tmp_path / "rows.csv"
    proc = subprocess.Popen(
        [sys.executable, "-m", "transcript_reader", "census", str(tmp_path / "corpus" / "sessions"), "--json",
         "--workers", workers, "--rows", str(rows), "--batch-files", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 600  # a safety net for a broken census, not a timed assertion
        while _rows_written(rows) == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the census finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    result = json.loads(out)
    figures = result["figures"]
    assert result["ok"] is True and result["interrupted"] is True and figures["interrupted"] is True
    assert 0 < figures["files"] < manifest["rollouts"]
    assert 0 < figures["scripts"] < manifest["exec_cells"]
    assert figures["transcripts"] == figures["files"] and figures["crashes"]["count"] == 0
    assert result["rows"]["count"] == _rows_written(rows)
    # no worker left behind: nothing survives in the census's process group (multiprocessing's
    # resource tracker may take a moment to notice its parent is gone)
    survivors = _group(proc.pid)
    for _ in range(100):
        if not survivors:
            break
        time.sleep(0.1)
        survivors = _group(proc.pid)
    assert not survivors


def _group(pgid: int) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pgid=,pid=,args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.split()[0] == str(pgid)]
