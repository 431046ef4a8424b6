"""One tool call, start to finish, in the wire profile's shapes: what both protocol shells (:mod:`.stdio`,
:mod:`.sdk`) send back. Everything becomes an :class:`Outcome`; nothing raises, no traceback leaves."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from transcript_reader.mcp.names import WIRE_AGENT_CODE, ErrorCode, ToolFailure, ToolName

log = logging.getLogger("transcript_reader.mcp")

#: Past the call's own budget (its reading stops itself at the deadline, the analyzer's child is killed
#: at it), a shell stops waiting after this much more and answers ``timeout``: a safety net only, wide
#: enough for the analyzer's child to start on a loaded machine (``worker.START_S``, not in the budget).
GRACE_S = 30.0


@dataclass(frozen=True, slots=True)
class Outcome:
    """A call's result on the wire: its one text block, the structured payload (our profile's
    successes only) and the MCP error flag (our profile's failures only)."""

    text: str
    structured: dict[str, Any] | None
    is_error: bool

    def to_wire(self) -> dict[str, Any]:
        """The ``CallToolResult`` as JSON-RPC carries it."""
        out: dict[str, Any] = {"content": [{"type": "text", "text": self.text}]}
        if self.structured is not None:
            out["structuredContent"] = self.structured
        out["isError"] = self.is_error
        return out


def _dumps(payload: Any) -> str:
    """``payload`` as JSON text that every transport can write: orjson, or where orjson refuses a value
    (a lone surrogate from a path argument or a file name that is not UTF-8) the json module with
    every non-ASCII character escaped (the same value)."""
    import orjson

    try:
        return orjson.dumps(payload).decode("utf-8")
    except TypeError:
        import json

        return json.dumps(payload)


def failed(failure: ToolFailure, wire: str) -> Outcome:
    if wire == WIRE_AGENT_CODE:
        from transcript_reader.mcp import agent_code

        return Outcome(_dumps(agent_code.error_body(failure)), None, False)
    from transcript_reader.projections.render import error_to_dict

    return Outcome(_dumps(error_to_dict(failure.code, failure.message)), None, True)


def timed_out(name: str, budget_s: float, wire: str) -> Outcome:
    return failed(ToolFailure(ErrorCode.TIMEOUT, f"{name[:100]} ran over the server's time budget "
                              f"({budget_s:g} s; --call-timeout)"), wire)


def run_call(name: str, arguments: Mapping[str, Any] | None, config: Any, state: Any) -> Outcome:
    """Run ``name`` (synchronously: the shells call this in a worker thread)."""
    from transcript_reader.errors import TranscriptError
    from transcript_reader.mcp import tools

    try:
        answer = tools.call_tool(name, arguments, config, state)
    except ToolFailure as failure:
        return failed(failure, config.wire)
    except TranscriptError as exc:  # e.g. a listing that ran over its budget while resolving `last`
        return failed(tools.library_failure(exc, None, "codex"), config.wire)
    except Exception:  # the boundary: a bug of ours must not crash the server or leak a traceback
        log.exception("tool %s failed unexpectedly", name)
        return failed(ToolFailure(ErrorCode.INTERNAL_ERROR, f"{name[:100]} failed unexpectedly; see the server log"),
                      config.wire)
    if config.wire == WIRE_AGENT_CODE:
        from transcript_reader.mcp import agent_code

        body = agent_code.reshape(ToolName(name), answer.payload, dict(arguments or {}))
        return Outcome(_dumps(body), None, False)
    return Outcome(answer.text, answer.payload, False)
