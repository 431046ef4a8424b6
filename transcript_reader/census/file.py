"""The census of one file and one batch: read every transcript with the library, analyse every exec
script, add the figures up (the coordinators that run batches are in ``census/pool.py``).

Layering: this module only calls the public library (``transcript_reader.inspect`` / ``iter_items``
and ``exec_grammar.analyze``); it never reads a transcript's raw keys (it is a script over library calls). It never prints either: progress goes through a callback and the
figures come back as data, so the CLI, the benchmark and the tests share it.

Execution: ``census_file`` is the unit of work, ``run_batch`` the unit shipped to a worker (a local
process or a Dask task); both return pure data (:class:`~transcript_reader.census.figures.Figures` and rows),
which ``merge`` adds up in any order with the same result.

Interruption: a worker checks a stop flag between files, so Ctrl-C ends every batch after its current
file and the coordinator still merges what was counted (``Figures.interrupted`` says so).
"""

from __future__ import annotations

import json
import os
import resource
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from transcript_reader.census.figures import Figures, bump
from transcript_reader.census.rows import ScriptRow
from transcript_reader.census.walk import FileJob

if TYPE_CHECKING:
    from exec_grammar import AnalysisCache


@dataclass(frozen=True)
class CensusOptions:
    rows: bool = False  # build one ScriptRow per exec script
    cross_check: bool = True  # also run the lexer and esprima on every script and compare
    per_file: bool = False  # also return each file's own figures (the session store keeps them)


#: The options a census runs with when none are given.
DEFAULT_OPTIONS = CensusOptions()


@dataclass
class BatchResult:
    figures: Figures
    rows: list[ScriptRow] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    scripts: int = 0
    cpu_s: float = 0.0  # CPU of the worker process since its previous report (pool workers only)
    #: ``(path, figures)`` of each file counted whole (``CensusOptions.per_file``)
    per_file: list[tuple[str, Figures]] = field(default_factory=list)


# -- one file ----------------------------------------------------------------------------------------

#: A stop flag shared with worker processes (set by the initializer); None in-process and on Dask.
_STOP: Any = None
#: In a pool worker: the process CPU time already reported with earlier batches (None elsewhere).
_CPU_REPORTED: float | None = None


def process_cpu() -> float:
    """CPU seconds (user + system) this process has used."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _stopped() -> bool:
    return _STOP is not None and _STOP.is_set()


def _call_names(analysis: Any) -> list[str]:
    return [c.name for c in analysis.calls]


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


#: A census keeps more analyses than a reader does: it meets the same script in many cells and many
#: sessions (a recorded agent repeats its cells, a fork its parent's), and each text is analysed once a run.
CENSUS_CHARS = 64 << 20
CENSUS_ENTRIES = 1 << 20


def analyses() -> AnalysisCache:
    """The process's analyses by script text: exec_grammar's shared cache, the one the reader analyses
    every cell through (so the script figures reuse the reader's analyses), widened to the census's
    bounds. A pool worker keeps its own. Each entry remembers how long its analysis took, so
    ``parse_time`` still says what analysing each script costs when the analysis is shared."""
    from exec_grammar import shared_analyses

    cache = shared_analyses()
    cache.max_chars = max(cache.max_chars, CENSUS_CHARS)
    cache.max_entries = max(cache.max_entries, CENSUS_ENTRIES)
    return cache


def census_file(path: str, options: CensusOptions = CensusOptions()) -> tuple[Figures, list[ScriptRow]]:
    """Everything one transcript contributes. Library refusals are counted by their error code; a
    crash of the library on one file is counted as ``crash:<ExceptionClass>`` (with the file in the
    ``crashes`` sample) so one bad file never stops a census of thousands."""
    from transcript_reader.errors import TranscriptError

    fig = Figures()
    fig.scalars["files"] = 1
    try:
        fig.scalars["bytes"] = os.stat(path).st_size
    except OSError:
        pass
    rows: list[ScriptRow] = []
    try:
        _census_transcript(path, options, fig, rows)
    except TranscriptError as exc:
        bump(fig.counters["errors"], exc.code)
        fig.samples["refused"].add(path, exc.line or 0)
    except Exception as exc:  # noqa: BLE001 -- a library bug on one file must not end the census
        bump(fig.counters["errors"], f"crash:{type(exc).__name__}")
        fig.samples["crashes"].add(path, 0)
    return fig, rows


def _census_transcript(path: str, options: CensusOptions, fig: Figures, rows: list[ScriptRow]) -> None:
    from transcript_reader.api import Transcript
    from transcript_reader.model import Origin

    # One pass: items first, then the session's figures (the hostile-file rule: a file, even one made
    # of a single 200 MB line, is read and decoded once). Each script text is analysed once per run
    # (:func:`analyses`): the reader analyses every cell through it, and the script figures below reuse
    # that analysis.
    cache = analyses()
    transcript = Transcript(path)
    cells: list[tuple[int, str, str]] = []  # (line, call_id, script)
    executed_by_cell: dict[str, dict[str, int]] = {}
    c = fig.counters
    first_unreadable: int | None = None  # the file's first unreadable line, for the sample
    for item in transcript.items():
        kind = str(item.kind)
        if kind == "unreadable":
            if first_unreadable is None or item.line < first_unreadable:
                first_unreadable = item.line
            continue
        origin = getattr(item, "origin", None)
        if kind == "test_run":
            bump(c["test_runs"], str(item.result))  # type: ignore[union-attr]
            continue
        if origin is None:
            continue
        if origin == Origin.DIRECT:
            tool = _tool_name(item)
            script = getattr(item, "script", None)
            if tool == "exec" and kind == "tool_call" and isinstance(script, str):
                # a code-mode cell (its entries follow) is what the library says is one: the freeform
                # ``exec`` custom tool, whose whole source it exposes as ``script``. A JSON function tool
                # that happens to be named ``exec`` (public DanielEnriq__Vowe fixture, line 11:
                # ``{"command":"pnpm test"}``) is a direct call, not a script: the census counts what inspect does
                fig.scalars["exec_cells"] += 1
                cells.append((item.line, item.call_id or "", script))  # type: ignore[union-attr]
            bump(c["direct_calls_by_tool"], tool)
            if kind == "patch" and tool == "apply_patch":
                fig.scalars["top_level_apply_patch"] += 1
        elif origin == Origin.SCRIPT:
            executed = str(item.executed)  # type: ignore[union-attr]
            bump(c["executed"], executed)
            per_cell = executed_by_cell.setdefault(item.call_id or "", {})  # type: ignore[union-attr]
            bump(per_cell, executed)
        elif origin == Origin.RECORD:
            bump(c["record_entries"], kind)
    info = transcript.info()
    fmt = str(info.format)
    version = info.version or "unknown"
    fig.scalars["transcripts"] += 1
    bump(c["files_by_format"], fmt)
    bump(c["files_by_version"], f"{fmt} {version}")
    if info.session_id:
        fig.sessions.add(info.session_id)
    fig.scalars["turns"] += info.turns
    for kind, n in info.counts:
        bump(c["items_by_kind"], str(kind), n)
    la = info.lines
    for name in ("lines", "decoded", "known_noise", "unknown", "unreadable", "blank"):
        bump(c["lines"], name, getattr(la, name))
    for name, n in la.unknown_types:
        bump(c["unknown_types"], name, n)
    for name, n in la.noise_types:
        bump(c["noise_types"], name, n)
    if la.unreadable:
        # the sample names the first unreadable line the library reported as an Unreadable item; the cut
        # last line when no item carried one; 0 only if the library gave neither (a sample at line 0 pointed
        # nowhere while the library had named the line)
        line = first_unreadable if first_unreadable is not None else getattr(la, "cut_last_line", None)
        fig.samples["unreadable"].add(path, line or 0)
    tok = info.tokens
    if tok is not None:  # a file without usage adds nothing (unknown, not 0); token_sources counts it
        for name in ("input", "cached_input", "output", "reasoning", "total"):
            bump(c["tokens"], name, getattr(tok, name))
    bump(c["token_sources"], tok.source if tok is not None else "unknown")
    if info.run_status:
        bump(c["run_status"], info.run_status)

    for line, call_id, script in cells:
        if _stopped():
            fig.interrupted = True
            return
        analysis, seconds = cache.get(script)
        us = seconds * 1e6
        ref = (path, line)
        fig.scalars["scripts"] += 1
        fig.parse_time.add(us, ref)
        parser = str(analysis.parser)
        bump(c["script_parsers"], parser)
        if analysis.parse_error is not None:
            fig.samples["primary_rejected"].add(*ref)
        computed = 0
        for call in analysis.calls:
            bump(c["script_calls_by_tool"], call.name)
            computed += call.computed
            if call.name == "exec_command":
                args = c["exec_command_args"]
                bump(args, "all")
                if not _is_json(call.argument_source):
                    bump(args, "not_json")
                if call.computed:
                    bump(args, "computed")
                elif call.argument is not None:
                    bump(args, "decoded")
        for entry in analysis.entries:
            bump(c["script_entries"], str(entry.kind))
            if getattr(entry, "whole_script", False):
                fig.samples["whole_script"].add(*ref)
            fig.scalars["unresolved_patch_paths"] += getattr(entry, "unresolved_paths", 0)
        if options.cross_check:
            names = _call_names(analysis)
            if analysis.parse_error is None and _call_names(cache.get(script, "lexer")[0]) != names:
                fig.samples["lexer_disagrees"].add(*ref)
            esp = cache.get(script, "esprima")[0]
            if esp.parse_error is None and str(esp.parser) == "esprima":
                fig.scalars["esprima_parsed"] += 1
                if _call_names(esp) != names:
                    fig.samples["esprima_disagrees"].add(*ref)
            else:
                fig.scalars["esprima_rejected"] += 1
        if options.rows:
            ex = executed_by_cell.get(call_id, {})
            tools = ",".join(dict.fromkeys(_call_names(analysis)))
            rows.append(ScriptRow(
                file=path, line=line, call_id=call_id, codex_version=version,
                bytes=len(script.encode("utf-8", "surrogatepass")), parser=parser, calls=len(analysis.calls),
                tools=tools, computed=computed, entries=len(analysis.entries),
                executed_yes=ex.get("yes", 0), executed_no=ex.get("no", 0),
                executed_unknown=ex.get("unknown", 0), parse_us=round(us, 1),
            ))


def _tool_name(item: Any) -> str:
    kind = str(item.kind)
    if kind == "tool_call":
        return str(item.name)
    if kind == "stdin_write":
        return "write_stdin"
    return str(getattr(item, "tool", kind))


# -- one batch ---------------------------------------------------------------------------------------


def run_batch(jobs: Sequence[FileJob], options: CensusOptions = CensusOptions()) -> BatchResult:
    """The unit of work of a worker: census every file of the batch (stopping early when asked)."""
    total = Figures()
    result = BatchResult(total)
    for job in jobs:
        if _stopped():
            total.interrupted = True
            break
        fig, rows = census_file(job.path, options)
        if options.per_file and not fig.interrupted:
            result.per_file.append((job.path, Figures().merge(fig)))
        total.merge(fig)
        result.rows.extend(rows)
        result.files += 1
        result.bytes += job.size
        result.scripts += fig.scalars["scripts"]
        if fig.interrupted:
            break
    global _CPU_REPORTED
    if _CPU_REPORTED is not None:
        now = process_cpu()
        result.cpu_s, _CPU_REPORTED = now - _CPU_REPORTED, now
    return result


def init_worker(stop: Any) -> None:
    """Worker processes leave Ctrl-C to the coordinator, which sets the shared stop flag."""
    global _STOP, _CPU_REPORTED
    _STOP = stop
    _CPU_REPORTED = 0.0  # so the first batch also reports the worker's start-up
    signal.signal(signal.SIGINT, signal.SIG_IGN)
