"""An exec stream's items (``Call.origin`` STREAM): what differs from a direct call is only how they
settle. A stream prints no output item: an item's events are the whole call. Its first event places it,
a later one moves it to that line, its end (on its completion's line, or given by its turn's end when it
never completed) settles it; ``executed`` comes from the status that end reports. The pairing, the
items and their test runs are the same code as every call's (``calls``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from transcript_reader.assembly.rules import stream_executed, test_run_items
from transcript_reader.assembly.state import PendingCall
from transcript_reader.model import AnyItem, Executed, Origin, RawOutput, ShellCommand
from transcript_reader.providers.records import Call, ExecEnd, PatchEnd, ToolEnd

if TYPE_CHECKING:
    from transcript_reader.assembly.peers import Peers


class StreamItems:
    """Places and settles an exec stream's items in the pending calls of ``Calls``."""

    def __init__(self, a: Peers) -> None:
        self.a = a

    def call(self, c: Call, line: int, ts: str | None) -> None:
        """An event of an exec stream's item. The stream prints no output item: the item waits in its
        place for its end (on this line: ``c.end``, or at its turn's end), and a later event of the same
        item (``item.updated``, its completion) gives its new form and moves it to that line, so an item
        is shown where it completed, or where it was last heard of when it never did."""
        pc = self.a.calls.calls.get(c.call_id) if c.call_id is not None else None
        if pc is not None and pc.call.origin is Origin.STREAM:
            pc.slot.items = []
            pc.slot = self.a.q.pending()
            pc.slot.owner = pc
            pc.call, pc.line, pc.ts = c, line, ts
            if c.end is None:
                return  # the same item, updated: no new item of the turn
        else:
            key = c.call_id if c.call_id is not None and c.call_id not in self.a.calls.calls else None
            if key is None:
                self.a.calls.anon += 1
                key = f"\0anon{self.a.calls.anon}"
            slot = self.a.q.pending()
            pc = PendingCall(c, line, ts, self.a.turns.turn_id, slot, None, key=key)
            slot.owner = pc
            self.a.calls.calls[key] = pc
        self.a.turns.interrupt()
        if c.end is not None:
            self.settle(pc, c.end)

    def settle(self, pc: PendingCall, end: ExecEnd | PatchEnd | ToolEnd) -> None:
        if isinstance(end, ExecEnd):
            pc.exec_end = end
        elif isinstance(end, PatchEnd):
            pc.patch_end = end
        else:
            pc.tool_end = end
        self.a.calls.resolve_call(pc, None, None, None)


def executed(pc: PendingCall) -> Executed:
    """A stream item ran when its end says it completed or failed (a command: with an exit code)."""
    if pc.call.kind == "shell":
        ee = pc.exec_end
        return stream_executed(ee.status if ee else None, ee.exit_code if ee else None, exit_required=True)
    end = pc.patch_end if pc.call.kind == "patch" else pc.tool_end
    return stream_executed(end.status if end else None)


def shell_items(item: ShellCommand, body: str | None) -> list[AnyItem]:
    """A stream's command, its test run, and its whole output (the end carries it: no output item)."""
    raw = [RawOutput(line=item.line, timestamp=item.timestamp, turn_id=item.turn_id, call_id=item.call_id,
                     tool=item.tool, text=body)] if body else []
    return [item, *test_run_items(item, body or None), *raw]
