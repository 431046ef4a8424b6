"""Scale-out: the census on a Dask cluster (one task per batch of files) gives exactly the figures of the
local run. A LocalCluster stands in for a real one: in-process (threads) for the library call, and
reached over TCP by a ``transcript-reader census --dask ADDRESS`` subprocess for the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_tools.gen_corpus import generate, write_hostile
from transcript_reader.census.file import CensusOptions
from transcript_reader.census.pool import run_dask, run_local
from transcript_reader.census.walk import iter_transcripts, plan_batches

distributed = pytest.importorskip("dask.distributed", reason="dask[distributed] (the `dask` extra) is not installed")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dask-corpus")
    generate(out, rollouts=40, seed=11, cells=10)
    write_hostile(out / "sessions" / "hostile", big_line_mb=1)  # refusals and unreadable lines merge too
    return out / "sessions"


@pytest.fixture(scope="module")
def cluster():  # type: ignore[no-untyped-def]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1",
                                  dashboard_address=":0") as c:
        yield c


def test_dask_and_local_agree_exactly(corpus: Path, cluster) -> None:  # type: ignore[no-untyped-def]
    batches = plan_batches(iter_transcripts([corpus]), max_files=3)
    local = run_local(batches, workers=2, options=CensusOptions())
    on_dask = run_dask(batches, cluster.scheduler_address, options=CensusOptions())
    assert on_dask.counts() == local.counts()
    assert on_dask.counts()["scripts"] > 300 and on_dask.counts()["errors"]
    assert on_dask.parse_time.count == local.parse_time.count == local.counts()["scripts"]


def test_cli_dask_matches_cli_local(corpus: Path, cluster) -> None:  # type: ignore[no-untyped-def]
    def census(*extra: str) -> dict:  # type: ignore[type-arg]
        proc = subprocess.run([sys.executable, "-m", "transcript_reader", "census", str(corpus), "--json",
                               "--no-progress", "--batch-files", "5", *extra],
                              capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        figures: dict = json.loads(proc.stdout)["figures"]  # type: ignore[type-arg]
        figures.pop("parse_time")  # a measurement, not a count
        return figures

    assert census("--dask", cluster.scheduler_address) == census("--workers", "2")


def test_unreachable_scheduler_is_one_error_line(tmp_path: Path) -> None:
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    proc = subprocess.run([sys.executable, "-m", "transcript_reader", "census", str(tmp_path), "--json",
                           "--no-progress", "--dask", "tcp://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "dask_unreachable"
    assert "Traceback" not in proc.stderr
