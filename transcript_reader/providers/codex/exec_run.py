"""How a ``codex exec`` run ended, from the decoder's state once the stream was read: its status, its
token usage and the summary of both (``ExecStreamDecoder.summary``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from transcript_reader.model import Format, LineAccounting, TokenUsage

if TYPE_CHECKING:
    from transcript_reader.providers.codex.exec_stream import ExecStreamDecoder


class RunStatus(StrEnum):
    """How an exec run ended (seed ``002_…``, plus ``incomplete`` for a stream that stops mid-turn)."""

    COMPLETED = "completed"
    FAILED = "failed"
    NO_REPORT = "no_report"
    INCOMPLETE = "incomplete"


@dataclass(frozen=True, slots=True)
class ExecStreamSummary:
    """What a whole exec stream says about its run, beyond the items."""

    format: Format
    run_status: RunStatus
    run_error: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    turns: int = 0
    completed_turns: int = 0
    thread_id: str | None = None
    model: str | None = None
    cwd: str | None = None
    lines: LineAccounting = field(default_factory=LineAccounting)


def summary_of(d: ExecStreamDecoder) -> ExecStreamSummary:
    """The run's status, usage, turns and line accounting (complete once :meth:`items` is exhausted)."""
    return ExecStreamSummary(
        format=d._format,
        run_status=run_status_of(d),
        run_error=d._failure,
        usage=usage_of(d),
        turns=d._turns,
        completed_turns=d._completed_turns,
        thread_id=d._thread_id,
        model=d._model,
        cwd=d._cwd,
        lines=LineAccounting(
            lines=d._counts["lines"],
            decoded=d._counts["decoded"],
            known_noise=d._counts["noise"],
            unknown=d._counts["unknown"],
            unreadable=d._counts["unreadable"],
            blank=d._counts["blank"],
            unknown_types=tuple(sorted(d._unknown_types.items())),
            noise_types=tuple(sorted(d._noise_types.items())),
            cut_last_line=d._cut_line,
        ),
    )


def run_status_of(d: ExecStreamDecoder) -> RunStatus:
    if d._failure is not None:
        return RunStatus.FAILED
    if d._unfinished_turns or d._open or d._cut_line is not None or d._in_turn:
        return RunStatus.INCOMPLETE
    if d._turns == 0:
        return RunStatus.INCOMPLETE if d._anything else RunStatus.NO_REPORT
    if not d._last_closed_turn_messages:
        return RunStatus.NO_REPORT
    return RunStatus.COMPLETED


def usage_of(d: ExecStreamDecoder) -> TokenUsage:
    if d._usage_turns:
        i, c, o, r, t = d._usage_sum
        return TokenUsage(
            input=i, cached_input=c, output=o, reasoning=r, total=t, source="sum of turn.completed usage"
        )
    if d._usage_cumulative is not None:
        return d._usage_cumulative
    if d._usage_flat:
        i, c, o, r, t = d._usage_sum
        return TokenUsage(
            input=i,
            cached_input=c,
            output=o,
            reasoning=r,
            total=t,
            source="sum of per-request token_count",
        )
    return TokenUsage()
