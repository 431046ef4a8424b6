"""The census progress bar on stderr: files, MB, scripts, rate and ETA, advanced per finished batch."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from transcript_reader.census.file import BatchResult


class _Bytes(ProgressColumn):
    def render(self, task: Task) -> Text:
        mb = task.fields.get("mb_done", 0.0)
        return Text(f"{mb:,.1f}/{task.fields.get('mb_total', 0.0):,.1f} MB", style="progress.download")


class _Rate(ProgressColumn):
    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        if elapsed <= 0:
            return Text("")
        return Text(
            f"{task.completed / elapsed:,.0f} files/s {task.fields.get('mb_done', 0.0) / elapsed:,.1f} MB/s",
            style="progress.data.speed",
        )


class CensusProgress:
    """Context manager; ``advance`` is the ``on_batch`` callback of the coordinators."""

    def __init__(self, files: int, total_bytes: int, *, enabled: bool = True, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = enabled
        self.scripts = 0
        self.files_done = 0
        self.bytes_done = 0
        self._progress = Progress(
            TextColumn("[bold]census"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("files"),
            _Bytes(),
            TextColumn("{task.fields[scripts]:,} scripts"),
            _Rate(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
            disable=not enabled,
        )
        self._task = self._progress.add_task(
            "census", total=files, scripts=0, mb_done=0.0, mb_total=total_bytes / 1e6
        )

    def __enter__(self) -> CensusProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._progress.stop()

    def advance(self, res: BatchResult) -> None:
        self.scripts += res.scripts
        self.files_done += res.files
        self.bytes_done += res.bytes
        self._progress.update(
            self._task, advance=res.files, scripts=self.scripts, mb_done=self.bytes_done / 1e6
        )
