"""Mergeable census figures: pure data that workers return and the coordinator adds up.

Why a class of its own: the same census runs in one process, in a local process pool or on a Dask
cluster, and the issue asks that all of them give exactly the same figures. That holds only if the
merge is associative and commutative and every figure is a count (never "the first N seen"). So:

- counters are ``dict[str, int]`` and merge by addition;
- sample references (file:line of disagreements) keep the ``SAMPLE`` smallest ``(file, line)`` pairs,
  which is independent of the order in which batches finish;
- the parse-time distribution is a log-bucket histogram (integer counts, 2% wide buckets), so p50 and
  p99 merge exactly; its bucket resolution is the precision of the quantiles.

Timings are measurements, not counts: :meth:`Figures.counts` leaves them out, and that is what the
local-vs-Dask comparison checks. Everything here pickles (Dask and ``multiprocessing`` ship it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: How many file:line references a sample keeps.
SAMPLE = 10

#: Parse-time histogram: bucket k holds times t (µs) with floor(log(t)/log(BASE)) == k.
BASE = 1.02
_LOG_BASE = math.log(BASE)


def bump(counter: dict[str, int], key: str, n: int = 1) -> None:
    if n:
        counter[key] = counter.get(key, 0) + n


def add_counters(into: dict[str, int], other: Mapping[str, int]) -> None:
    for key, n in other.items():
        into[key] = into.get(key, 0) + n


@dataclass
class Sample:
    """A count plus the smallest ``SAMPLE`` references (``(path, line)``) among everything counted."""

    count: int = 0
    refs: list[tuple[str, int]] = field(default_factory=list)

    def add(self, path: str, line: int) -> None:
        self.count += 1
        self._keep([(path, line)])

    def merge(self, other: Sample) -> None:
        self.count += other.count
        self._keep(other.refs)

    def _keep(self, refs: Iterable[tuple[str, int]]) -> None:
        self.refs = sorted(set(self.refs).union(refs))[:SAMPLE]

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "sample": [f"{p}:{n}" for p, n in self.refs]}


@dataclass
class Histogram:
    """Log-bucket histogram of durations in microseconds (exactly mergeable)."""

    buckets: dict[int, int] = field(default_factory=dict)
    count: int = 0
    total_us: float = 0.0
    worst_us: float = 0.0
    worst_ref: tuple[str, int] | None = None

    def add(self, us: float, ref: tuple[str, int]) -> None:
        k = math.floor(math.log(us) / _LOG_BASE) if us > 1.0 else 0
        self.buckets[k] = self.buckets.get(k, 0) + 1
        self.count += 1
        self.total_us += us
        if us > self.worst_us:
            self.worst_us, self.worst_ref = us, ref

    def merge(self, other: Histogram) -> None:
        for k, n in other.buckets.items():
            self.buckets[k] = self.buckets.get(k, 0) + n
        self.count += other.count
        self.total_us += other.total_us
        if other.worst_us > self.worst_us:
            self.worst_us, self.worst_ref = other.worst_us, other.worst_ref

    def quantile(self, q: float) -> float:
        """The upper edge of the bucket that holds the q-quantile (within 2% of the true value)."""
        if not self.count:
            return 0.0
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for k in sorted(self.buckets):
            seen += self.buckets[k]
            if seen >= rank:
                return min(float(BASE ** (k + 1)) if k else 1.0, self.worst_us)
        return self.worst_us

    def to_json(self) -> dict[str, Any]:
        return {
            "scripts": self.count,
            "total_ms": round(self.total_us / 1000, 3),
            "p50_us": round(self.quantile(0.50), 1),
            "p99_us": round(self.quantile(0.99), 1),
            "worst_us": round(self.worst_us, 1),
            "worst": f"{self.worst_ref[0]}:{self.worst_ref[1]}" if self.worst_ref else None,
        }


#: Counter-valued figures (each a ``dict[str, int]``), in the order the report shows them.
COUNTERS = (
    "files_by_format",  # format -> transcripts
    "files_by_version",  # "format version" -> transcripts
    "errors",  # typed error code -> files the library refused (unsupported_format, permission_denied…)
    "lines",  # lines, decoded, known_noise, unknown, unreadable, blank
    "unknown_types",  # raw type name -> lines the reader did not know
    "noise_types",  # raw type name -> lines known and deliberately not shown
    "items_by_kind",
    "direct_calls_by_tool",  # top-level calls (function_call, custom_tool_call, local_shell_call…)
    "script_calls_by_tool",  # tools.NAME(…) calls inside exec scripts
    "exec_command_args",  # all, not_json, decoded, computed
    "script_parsers",  # which parser produced each script's analysis (tree-sitter / lexer)
    "script_entries",  # entry kind -> entries the static reading gives
    "executed",  # yes/no/unknown over script entries, as the reader settled them
    "record_entries",  # origin=record entries (commands the cell's records show, no script entry)
    "test_runs",  # pass/fail/unknown
    "tokens",  # input, cached_input, output, reasoning, total
    "token_sources",
    "run_status",  # exec streams: completed/failed/no_report/incomplete
)

SAMPLES = (
    "primary_rejected",  # scripts the primary parser rejected (the lexer's reading used)
    "lexer_disagrees",  # primary vs lexer: different call names or order
    "esprima_disagrees",  # primary vs esprima, on scripts esprima parses
    "whole_script",  # whole-script fallbacks (a computed exec_command argument)
    "unreadable",  # files with unreadable lines
    "refused",  # files the library refused with a typed error (counted by code in ``errors``)
    "crashes",  # files on which the library raised something untyped (a bug to report)
)

SCALARS = (
    "files",
    "duplicates_skipped",  # spellings of a file already counted (``..``, symlink, named twice), set by the walk
    "bytes",
    "transcripts",  # files the library read
    "turns",
    "exec_cells",
    "scripts",  # exec scripts analysed
    "top_level_apply_patch",
    "unresolved_patch_paths",
    "esprima_parsed",
    "esprima_rejected",
)


@dataclass
class Figures:
    """Every figure of a census, mergeable. Build one per file, merge them all."""

    scalars: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SCALARS, 0))
    counters: dict[str, dict[str, int]] = field(default_factory=lambda: {k: {} for k in COUNTERS})
    samples: dict[str, Sample] = field(default_factory=lambda: {k: Sample() for k in SAMPLES})
    sessions: set[str] = field(default_factory=set)
    parse_time: Histogram = field(default_factory=Histogram)
    interrupted: bool = False

    def merge(self, other: Figures) -> Figures:
        add_counters(self.scalars, other.scalars)
        for k, c in other.counters.items():
            add_counters(self.counters.setdefault(k, {}), c)
        for k, s in other.samples.items():
            self.samples.setdefault(k, Sample()).merge(s)
        self.sessions |= other.sessions
        self.parse_time.merge(other.parse_time)
        self.interrupted = self.interrupted or other.interrupted
        return self

    def counts(self) -> dict[str, Any]:
        """Every figure that is a count (no timing): equal for any split of the work."""
        return {
            **{k: self.scalars.get(k, 0) for k in SCALARS},
            "sessions": len(self.sessions),
            **{k: dict(sorted(self.counters.get(k, {}).items())) for k in COUNTERS},
            **{k: self.samples.get(k, Sample()).to_json() for k in SAMPLES},
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.counts(), "parse_time": self.parse_time.to_json(), "interrupted": self.interrupted}


def figures_to_state(fig: Figures) -> dict[str, Any]:
    """Everything ``fig`` holds, as JSON-ready data that :func:`figures_from_state` makes the same
    Figures again (the session store keeps each file's census figures this way)."""
    h = fig.parse_time
    return {
        "scalars": fig.scalars, "counters": fig.counters,
        "samples": {k: [s.count, [list(r) for r in s.refs]] for k, s in fig.samples.items()},
        "sessions": sorted(fig.sessions),
        "parse_time": [[[k, n] for k, n in sorted(h.buckets.items())], h.count, h.total_us, h.worst_us,
                       list(h.worst_ref) if h.worst_ref else None],
        "interrupted": fig.interrupted,
    }


def figures_from_state(state: dict[str, Any]) -> Figures:
    buckets, count, total_us, worst_us, worst_ref = state["parse_time"]
    return Figures(
        scalars=dict(state["scalars"]),
        counters={k: dict(v) for k, v in state["counters"].items()},
        samples={k: Sample(count=c, refs=[(p, n) for p, n in refs]) for k, (c, refs) in state["samples"].items()},
        sessions=set(state["sessions"]),
        parse_time=Histogram(buckets={int(k): n for k, n in buckets}, count=count, total_us=total_us,
                             worst_us=worst_us, worst_ref=(worst_ref[0], worst_ref[1]) if worst_ref else None),
        interrupted=bool(state["interrupted"]),
    )
