"""``transcript-reader census`` / ``corpus-census``: the command line of the census (presentation only).

It resolves the targets (``$CODEX_HOME`` by default: read here, in the CLI layer), runs the census
locally or on Dask, shows a progress bar on stderr and prints the figures on stdout. Ctrl-C prints what
was counted so far and exits 130.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from typing import Any

import click
from rich.console import Console

from transcript_reader.census.figures import Figures
from transcript_reader.census.file import CensusOptions, process_cpu
from transcript_reader.census.pool import StopOnSigint, WorkersFailedError, run_dask, run_local
from transcript_reader.census.rows import RowsWriter
from transcript_reader.census.walk import iter_transcripts, plan_batches
from transcript_reader.present.census_progress import CensusProgress
from transcript_reader.present.census_report import print_report
from transcript_reader.projections.render import error_to_dict


def default_targets(provider: str = "all") -> list[str]:
    """The session folders of each provider's home, and only those, so configuration files there
    (``config.json``, credentials, settings) are never read as transcripts: ``$CODEX_HOME`` (else
    ``~/.codex``) ``sessions`` and ``archived_sessions``; Claude Code's ``$CLAUDE_CONFIG_DIR`` (else
    ``~/.claude``) ``projects``."""
    from transcript_reader.cli._common import homes

    folders = {"codex": ("sessions", "archived_sessions"), "claude": ("projects",)}
    return [str(home / d) for name, home in homes(provider).items() for d in folders[name] if (home / d).is_dir()]


def _fail(message: str, as_json: bool, code: str = "invalid_argument", exit_code: int = 2) -> None:
    """One error line (or the JSON error object), exit 2 for usage, 1 for data/environment."""
    if as_json:
        click.echo(json.dumps(error_to_dict(code, message)))
    else:
        from rich.text import Text

        from transcript_reader.present.text import clean

        Console(stderr=True).print(Text("Error:", style="bold red") + Text(f" {clean(message)}"))
    sys.exit(exit_code)


@click.command("census")
@click.argument("targets", nargs=-1, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
@click.option("--workers", "-w", type=click.IntRange(1, 1024), default=None, help="Worker processes (default: CPU count).")
@click.option("--rows", "rows_path", type=click.Path(dir_okay=False),
              help="Write one row per exec script to FILE.parquet or FILE.csv.")
@click.option("--dask", "dask_address", metavar="SCHEDULER_ADDRESS",
              help="Run on a Dask cluster (tcp://host:8786); workers must see the same paths.")
@click.option("--no-cross-check", is_flag=True,
              help="Skip the lexer and esprima cross-checks (faster; those figures stay 0).")
@click.option("--no-progress", is_flag=True, help="No progress bar on stderr.")
@click.option("--batch-files", type=click.IntRange(1, 1 << 20), default=16, show_default=True, help="Files per batch (task).")
@click.option("--provider", type=click.Choice(("all", "codex", "claude")), default="all", show_default=True,
              help="With no TARGETS: whose session folders, Codex's ($CODEX_HOME), Claude Code's "
                   "($CLAUDE_CONFIG_DIR) or both.")
@click.option("--no-store", is_flag=True,
              help="Count every file from the file itself, not from the session store (see docs/store.md).")
def census_command(
    targets: tuple[str, ...],
    as_json: bool,
    workers: int | None,
    rows_path: str | None,
    dask_address: str | None,
    no_cross_check: bool,
    no_progress: bool,
    batch_files: int,
    provider: str,
    no_store: bool,
) -> None:
    """Census over many transcripts: formats, versions, line accounting, items, exec cells and their
    scripts (parsers, disagreements, fallbacks), tools, tests, tokens, parse times.

    Example: transcript-reader census ~/.codex/sessions --workers 2 --rows scripts.parquet
    """
    paths = list(targets) or default_targets(provider)
    if not paths:
        where = {"codex": "$CODEX_HOME/sessions", "claude": "Claude Code projects/"}.get(
            provider, "$CODEX_HOME/sessions or Claude Code projects/")
        _fail(f"no targets given and no {where} folder found", as_json)
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        _fail(f"no such file or folder: {missing[0]}", as_json, "file_not_found")
    duplicates: list[tuple[str, str]] = []
    jobs = list(iter_transcripts(paths, duplicates=duplicates))
    options = CensusOptions(rows=rows_path is not None, cross_check=not no_cross_check)
    try:
        writer = RowsWriter(rows_path) if rows_path else None
    except ValueError as exc:
        _fail(str(exc), as_json)
        return
    except OSError as exc:
        # checked before any file is read: a bad --rows target must not cost a whole census
        _fail(f"cannot write --rows file {rows_path}: {exc.strerror or exc}", as_json, "rows_unwritable")
        return
    if dask_address:
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            _fail("--dask needs dask.distributed: pip install 'transcript-reader[dask]'", as_json, "missing_extra")
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    show = not no_progress
    figures: Figures
    worker_cpu = [0.0]
    # the session store answers for the files of a home it holds as they are now (not with --rows:
    # script rows are not stored); the rest is counted below, and kept for the next census
    stored, todo, store = Figures(), jobs, None
    if not no_store and rows_path is None:
        stored, todo, store = _from_store(jobs, options, n_workers, show)
        options = replace(options, per_file=True)
    batches = plan_batches(todo, max_files=max(1, batch_files))
    with CensusProgress(len(todo), sum(j.size for j in todo), enabled=show) as progress:
        def on_batch(res: Any) -> None:
            worker_cpu[0] += res.cpu_s
            if writer is not None:
                writer.write(res.rows)
            if store is not None and res.per_file:
                store.save(res.per_file)
            progress.advance(res)

        try:
            with StopOnSigint() as stop:
                if dask_address:
                    figures = run_dask(batches, dask_address, options=options, on_batch=on_batch, stop=stop)
                else:
                    figures = run_local(batches, workers=n_workers, options=options, on_batch=on_batch, stop=stop)
        except WorkersFailedError as exc:
            progress.__exit__(None, None, None)
            _fail(str(exc), as_json, "workers_failed", exit_code=1)
            return
        except (OSError, TimeoutError) as exc:
            if not dask_address:
                raise
            # the scheduler could not be reached (or went away): say so, no traceback
            progress.__exit__(None, None, None)
            _fail(f"Dask scheduler {dask_address}: {exc}", as_json, "dask_unreachable", exit_code=1)
            return
        finally:
            if writer is not None:
                writer.close()
    if store is not None:
        store.close()
    figures = stored.merge(figures)
    # a figure of the walk, not of any worker: the census counted each file once, however often it was named
    figures.scalars["duplicates_skipped"] = len(duplicates)
    if as_json:
        out: dict[str, Any] = {"ok": True, "targets": paths, "figures": figures.to_json(),
                               "interrupted": figures.interrupted}
        if not dask_address:
            # this process plus what the worker processes reported (a fork server's one-off imports excepted)
            out["cpu_s"] = round(process_cpu() + worker_cpu[0], 3)
        if writer is not None:
            out["rows"] = {"path": rows_path, "count": writer.rows}
        click.echo(json.dumps(out, ensure_ascii=False))
    else:
        console = Console()
        if console.is_terminal:
            print_report(figures, console)
        else:  # a pipe or a file: the table without the spaces rich pads each line with
            with console.capture() as cap:
                print_report(figures, console)
            sys.stdout.write("".join(line.rstrip() + "\n" for line in cap.get().splitlines()))
        if writer is not None:
            console.print(f"{writer.rows:,} rows written to {rows_path}")
    if figures.interrupted:
        sys.exit(130)


def _from_store(jobs: list[Any], options: CensusOptions, workers: int, show: bool) -> tuple[Figures, list[Any], Any]:
    """The figures the homes' session stores hold for ``jobs`` (each store brought in step first: a
    first build reads the home on every worker, with a progress bar on a terminal), the jobs left to
    count, and the stores to keep the new figures in."""
    from transcript_reader.census.from_store import CensusStore
    from transcript_reader.cli._common import cache_dir, homes
    from transcript_reader.cli.output import ProgressLine

    store = CensusStore(homes(), cache_dir(), options, notice=lambda t: click.echo(t, err=True))
    bars: list[Any] = []

    def bar(s: Any) -> Any:
        if not show:
            return None
        bars.append(ProgressLine(f"indexing {s.home}"))
        return bars[-1].update

    try:
        store.refresh(jobs, workers, progress=bar)
    except KeyboardInterrupt:
        # Ctrl-C while the store is built: every session written so far stays, the next run reads the rest
        click.echo("interrupted while indexing the session store; the next census continues from there", err=True)
        sys.exit(130)
    finally:
        for b in bars:
            b.clear()
    stored, todo, _answered = store.split(jobs)
    return stored, todo, store


census_cmd = census_command


def main(argv: list[str] | None = None) -> Any:
    return census_command.main(args=argv, prog_name="corpus-census")


if __name__ == "__main__":
    main()
