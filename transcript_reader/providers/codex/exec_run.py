"""How a ``codex exec`` run ended, from the decoder's state once the stream was read: its status, its
token usage and the summary of both (``ExecStreamDecoder.summary``); and the session and model a
stream names, which the decoder and the head read (``head.py``) both read here."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from transcript_reader.model import Format, LineAccounting, TokenUsage
from transcript_reader.providers.codex.exec_values import OpenItem
from transcript_reader.providers.codex.rollout import meta_from


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


class RunState:
    """What a stream decoder knows of its run as it reads (the decoder, ``exec_stream``, is one): its
    turns, the items still open, how the run went, its usage and its line accounting. The summary reads
    this state only, so it needs no decoder."""

    def __init__(self, fmt: Format) -> None:
        self.format = fmt
        # turns
        self.turns = 0
        self.completed_turns = 0
        self.in_turn = False
        self.turn_from_protocol = False
        self.turn_messages = 0
        self.last_closed_turn_messages: int | None = None
        self.unfinished_turns = 0
        self.loose = False  # an agent message was given outside any turn (it answers nothing)
        self.open: dict[str, OpenItem] = {}
        # the run
        self.failure: str | None = None
        self.pending_error: str | None = None  # first `error` event since the last turn.completed
        self.last_failure_notice: str | None = None
        self.thread_id: str | None = None
        self.model: str | None = None
        self.cwd: str | None = None
        self.cut_line: int | None = None
        self.anything = False
        self.finished = False
        # usage
        self.usage_sum = [0, 0, 0, 0, 0]  # input, cached, output, reasoning, total
        self.usage_turns = 0
        self.usage_cumulative: TokenUsage | None = None
        self.usage_flat = 0
        # accounting
        self.counts = Counter[str]()
        self.unknown_types = Counter[str]()
        self.noise_types = Counter[str]()


def summary_of(d: RunState) -> ExecStreamSummary:
    """The run's status, usage, turns and line accounting (complete once the stream was read)."""
    return ExecStreamSummary(
        format=d.format,
        run_status=run_status_of(d),
        run_error=d.failure,
        usage=usage_of(d),
        turns=d.turns,
        completed_turns=d.completed_turns,
        thread_id=d.thread_id,
        model=d.model,
        cwd=d.cwd,
        lines=LineAccounting(
            lines=d.counts["lines"],
            decoded=d.counts["decoded"],
            known_noise=d.counts["noise"],
            unknown=d.counts["unknown"],
            unreadable=d.counts["unreadable"],
            blank=d.counts["blank"],
            unknown_types=tuple(sorted(d.unknown_types.items())),
            noise_types=tuple(sorted(d.noise_types.items())),
            cut_last_line=d.cut_line,
        ),
    )


def run_status_of(d: RunState) -> RunStatus:
    if d.failure is not None:
        return RunStatus.FAILED
    if d.unfinished_turns or d.open or d.cut_line is not None or d.in_turn:
        return RunStatus.INCOMPLETE
    if d.turns == 0:
        return RunStatus.INCOMPLETE if d.anything else RunStatus.NO_REPORT
    if not d.last_closed_turn_messages:
        return RunStatus.NO_REPORT
    return RunStatus.COMPLETED


def usage_of(d: RunState) -> TokenUsage:
    if d.usage_turns:
        i, c, o, r, t = d.usage_sum
        return TokenUsage(
            input=i, cached_input=c, output=o, reasoning=r, total=t, source="sum of turn.completed usage"
        )
    if d.usage_cumulative is not None:
        return d.usage_cumulative
    if d.usage_flat:
        i, c, o, r, t = d.usage_sum
        return TokenUsage(
            input=i,
            cached_input=c,
            output=o,
            reasoning=r,
            total=t,
            source="sum of per-request token_count",
        )
    return TokenUsage()


def session_configured(msg: dict[str, Any]) -> tuple[str | None, str | None]:
    """(session id, model) of a protocol ``session_configured`` event, read by the rollout's
    ``session_meta`` reader: the event names the session with the keys its header does (the decoder and
    the head read of a stream both call this)."""
    meta = meta_from(msg)
    return meta.session_id, meta.model


def header_config(obj: dict[str, Any]) -> tuple[str | None, str | None]:
    """(model, cwd) of the 0.20-0.40 stream's leading config line (``{"model", "workdir", "provider",
    "approval", "sandbox", …}``), a shape no other format has (the decoder and the head read call this)."""
    return _str(obj.get("model")), _str(obj.get("workdir"))


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None
