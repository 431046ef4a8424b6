"""A worker process that dies (the kernel's OOM killer, a crash in a C extension) does not end the
census: the batches it had not finished are retried one file per task in a fresh pool, and the file
that kills its worker twice is counted under ``errors["worker_died"]``; every other file is counted."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from corpus_tools.gen_corpus import generate
from transcript_reader.census.file import BatchResult, CensusOptions, run_batch
from transcript_reader.census.pool import WorkersFailedError, run_local
from transcript_reader.census.walk import FileJob, iter_transcripts, plan_batches

POISON = "poison"


def dying_task(jobs: Sequence[FileJob], options: CensusOptions) -> BatchResult:
    """run_batch, except that a file named *poison* kills the worker process outright."""
    if any(POISON in Path(j.path).name for j in jobs):
        os._exit(9)
    return run_batch(jobs, options)


def test_a_file_that_kills_its_worker_is_counted_and_the_rest_goes_on(tmp_path: Path) -> None:
    generate(tmp_path, rollouts=9, seed=21, cells=3)
    sessions = tmp_path / "sessions"
    victim = sorted(sessions.rglob("*.jsonl"))[4]
    victim.rename(victim.with_name(f"{POISON}-{victim.name}"))
    batches = plan_batches(iter_transcripts([sessions]), max_files=3)
    fig = run_local(batches, workers=2, options=CensusOptions(cross_check=False), task=dying_task).counts()
    assert fig["files"] == 9 and fig["transcripts"] == 8
    assert fig["errors"] == {"worker_died": 1}
    assert [Path(r.rsplit(":", 1)[0]).name.startswith(POISON) for r in fig["crashes"]["sample"]] == [True]
    clean = run_local(plan_batches([j for j in iter_transcripts([sessions]) if POISON not in j.path]),
                      workers=1, options=CensusOptions(cross_check=False)).counts()
    for key in ("scripts", "exec_cells", "turns", "script_calls_by_tool", "executed", "lines"):
        assert fig[key] == clean[key], key


def always_dying_task(jobs: Sequence[FileJob], options: CensusOptions) -> BatchResult:
    os._exit(9)


def test_workers_that_cannot_run_at_all_are_an_error_not_a_list_of_bad_files(tmp_path: Path) -> None:
    generate(tmp_path, rollouts=6, seed=22, cells=2)
    batches = plan_batches(iter_transcripts([tmp_path / "sessions"]), max_files=2)
    with pytest.raises(WorkersFailedError, match="died before finishing any batch"):
        run_local(batches, workers=2, options=CensusOptions(cross_check=False), task=always_dying_task)
