"""Accounting and ``SessionInfo``: every line's class, the session's header facts, timestamps, models,
token usage and the counts of what came out, read once at the end of the pass."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from transcript_reader.assembly import rules
from transcript_reader.errors import DecodeError
from transcript_reader.model import (
    Format,
    Kind,
    LineAccounting,
    Notice,
    ScriptStats,
    SessionInfo,
)
from transcript_reader.providers.codex.common import is_fork_handoff
from transcript_reader.providers.records import (
    BLANK,
    DECODED,
    NOISE,
    UNKNOWN,
    UNREADABLE,
    Decoded,
    Meta,
    Output,
    RunReport,
    Tokens,
    TurnContext,
    UsageEvent,
)
from transcript_reader.timestamps import session_duration, session_start
from transcript_reader.usage.accounting import Accountant

if TYPE_CHECKING:
    from transcript_reader.assembly.peers import Peers


class Session:
    """What the whole pass learns about the session (not about its items)."""

    def __init__(self, a: Peers) -> None:
        self.a = a
        self.meta = Meta()
        # ids of the sessions whose replayed history is being read (a fork's copy), innermost last
        self.replaying: list[str] = []
        self.models: list[str] = []
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        # how many lines carry a timestamp: a duration needs two (0.1.x/0.20/0.29 record one)
        self.ts_lines = 0
        self.usage = Accountant()
        # the timestamp of the replayed header that opened the copy being read (a fork with no end marker:
        # its copied lines carry the instant of the copy, the fork's own lines come later)
        self.replay_ts: str | None = None
        self.title: str | None = None
        # the session writes item_completed records for what a cell ran (seen one, or cli_version >= 0.150)
        self.records_seen = False
        self.acc: Counter[str] = Counter()
        self.unknown_types: Counter[str] = Counter()
        self.noise_types: Counter[str] = Counter()
        self.cut_line: int | None = None
        self.kind_counts: Counter[Kind] = Counter()
        self.run: RunReport | None = None
        #: gaps in the record numbering so far (``codex.numbering``): a call or cell that began before
        #: one may have records in it, so a missing record proves nothing about it
        self.gaps = 0

    def other_line(self, d: Decoded) -> None:
        """A line of another session in this file (``codex.numbering``): counted as known noise under
        ``other_session``, never read (its timestamps are not this session's either)."""
        self.acc[NOISE] += 1
        self.noise_types["other_session"] += 1

    def on_run_report(self, rec: RunReport, line: int, ts: str | None) -> None:
        self.run = rec

    def on_tokens(self, rec: Tokens, line: int, ts: str | None) -> None:
        if rec.usage.source != "unknown":  # an exec stream that reported no usage: unknown, not 0
            self.usage.add_total(rec.usage, timestamp=ts or self.first_ts)

    def on_usage(self, rec: UsageEvent, line: int, ts: str | None) -> None:
        self.usage.add(rec.call, rec.running, key=rec.key, model=rec.model, tier=rec.tier,
                       timestamp=ts or self.last_ts, replayed=self._replayed(ts))

    def _replayed(self, ts: str | None) -> bool:
        """Whether a usage event at ``ts`` belongs to history copied from another session: inside a copy
        a forked sub-agent ends with its hand-off marker, or, in a copy that has no marker (a fork a person
        made), written no later than the copied header."""
        if not self.replaying:
            return False
        m = self.meta
        if m.parent_session_id is not None or self.replay_ts is None or ts is None:
            return True
        return ts <= self.replay_ts

    def on_turn_context(self, rec: TurnContext, line: int, ts: str | None) -> None:
        turns = self.a.turns
        if rec.model:
            self.usage.model = rec.model
            if rec.model not in self.models:
                self.models.append(rec.model)
        self.usage.tier = rec.tier
        if rec.cwd:
            turns.turn_cwd = rec.cwd
            if self.meta.cwd is None:
                self.meta.cwd = rec.cwd
        if rec.turn_id and rec.turn_id != turns.turn_id:
            turns.turn_start(rec.turn_id, line, ts)

    def fork_handoff(self, rec: Output, line: int, ts: str | None) -> None:
        """An output that hands a forked sub-agent over to its own work ends the innermost replayed copy
        only: a fork of a forked sub-agent holds two (fixture forked_nested)."""
        if not (self.replaying and is_fork_handoff(rec.text)):
            return
        ended = self.replaying.pop()
        whose = (f"the work of session {self.replaying[-1]} (replayed too) follows" if self.replaying
                 else "this session's own work starts here")
        self.a.q.push([Notice(line=line, timestamp=ts, turn_id=self.a.turns.turn_id, category="fork",
                              message=f"end of the history replayed from session {ended}: {whose}")])

    def account(self, d: Decoded) -> None:
        """Accounting of a line that is not plainly decoded (its class is already counted)."""
        cls = d.cls
        if cls == UNKNOWN or cls == NOISE:
            types = self.unknown_types if cls == UNKNOWN else self.noise_types
            name = d.type_name or "?"
            if name not in types and len(types) >= rules.MAX_TYPE_NAMES:
                name = "(other types)"  # a hostile file cannot grow the figures without bound
            types[name] += 1
        elif cls == BLANK:
            if d.count != 1:  # a run of blank lines, given as one entry
                self.acc[BLANK] += d.count - 1
        elif cls == UNREADABLE:
            if d.cut:
                self.cut_line = d.line
            if self.a.strict:
                raise DecodeError(d.reason or "unreadable line", path=self.a.path, line=d.line)

    def on_meta(self, m: Meta, line: int, ts: str | None) -> None:
        cur = self.meta
        sid = m.session_id
        if sid is not None:
            if sid == cur.session_id:
                self.replaying.clear()  # this session's own header again (a resume): no copy goes on
            elif (cur.session_id is not None or sid in (cur.forked_from_id, cur.parent_session_id)
                    or self.replaying):
                # another session's header: a copy of its history (also when this file's own
                # header has no id, the parent's must not lend it one)
                if sid not in self.replaying:
                    self.replayed_header(m, line, ts)
                return
        for name in ("session_id", "cwd", "originator", "version", "source", "parent_session_id",
                     "forked_from_id", "timestamp"):
            if getattr(cur, name) is None and getattr(m, name) is not None:
                setattr(cur, name, getattr(m, name))
        if m.model and m.model not in self.models:
            self.models.append(m.model)
        if m.model and self.usage.model is None:
            self.usage.model = m.model
        if self.first_ts is None and m.timestamp:
            self.first_ts = m.timestamp
            self.ts_lines += 1
        if self.a.turns.turn_cwd is None:
            self.a.turns.turn_cwd = m.cwd
        v = rules.version_tuple(m.version)
        if v is not None and v >= rules.RECORDS_SINCE and self.a.fmt is Format.ROLLOUT:
            self.records_seen = True

    def replayed_header(self, m: Meta, line: int, ts: str | None) -> None:
        """Another session's ``session_meta`` inside this file: Codex copies a parent's rollout items,
        its header included, into a fork or a forked sub-agent (codex-rs ``InitialHistory::Forked``,
        persisted as-is), so the lines that follow replay history done in that session. Its fields are
        not this session's (nothing is merged); a notice marks where the copy starts. The copy's end
        is marked only for a forked sub-agent (``is_fork_handoff``); a fork a person made has no marker."""
        cur = self.meta
        sid = m.session_id
        if sid == cur.forked_from_id or sid == cur.parent_session_id:
            relation = "this session was forked from it" if sid == cur.forked_from_id else "this session's parent"
            message = (f"history replayed from session {sid} ({relation}) starts here: "
                       "the items that follow were done in that session, up to where this session's own "
                       "turns begin")
        else:
            message = (f"header of another session ({sid}): the history that follows was copied from it "
                       "(a fork or a resume)")
        self.replaying.append(sid or "?")
        self.replay_ts = ts
        self.a.q.push([Notice(line=line, timestamp=ts, turn_id=self.a.turns.turn_id, category="fork", message=message)])

    def info(self) -> SessionInfo:
        a = self.acc
        lines = LineAccounting(
            lines=a["lines"], decoded=a[DECODED], known_noise=a[NOISE], unknown=a[UNKNOWN],
            unreadable=a[UNREADABLE], blank=a[BLANK],
            unknown_types=tuple(sorted(self.unknown_types.items())),
            noise_types=tuple(sorted(self.noise_types.items())),
            cut_last_line=self.cut_line,
        )
        duration = None
        # one timestamped line measures nothing: unknown, never a measured-looking 0; two lines
        # with the same timestamp are a genuinely instantaneous session (0)
        if self.ts_lines >= 2:
            duration = session_duration(session_start(self.meta.timestamp, self.first_ts), self.last_ts)
        m = self.meta
        return SessionInfo(
            path=self.a.path, format=self.a.fmt, version=m.version, session_id=m.session_id, cwd=m.cwd,
            models=tuple(self.models), originator=m.originator, source=m.source,
            parent_session_id=m.parent_session_id, forked_from_id=m.forked_from_id,
            first_timestamp=self.first_ts, last_timestamp=self.last_ts, duration_s=duration,
            turns=self.run.turns if self.run is not None else self.a.turns.turn_count, counts=tuple(sorted((str(k.value), n) for k, n in self.kind_counts.items())),
            tokens=self.usage.total(), usage=self.usage.rows(),
            scripts=ScriptStats(
                scripts=self.a.cells.script_count, calls_by_tool=tuple(sorted(self.a.cells.calls_by_tool.items())),
                by_parser=tuple(sorted(self.a.cells.by_parser.items())),
                executed=tuple(sorted(self.a.cells.script_executed.items())),
                unresolved_patch_paths=self.a.cells.unresolved_paths, whole_script_commands=self.a.cells.whole_script,
            ),
            lines=lines, title=self.title,
            run_status=self.run.status if self.run is not None else None,
            run_error=self.run.error if self.run is not None else None,
        )
