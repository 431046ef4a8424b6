"""The MCP server: lets an agent read what another agent did, bounded and safe.

Why it exists: agents hand work to other agents and need the child's final answer, commands, changes and
test runs without pulling a whole transcript into their context. The origin project (agent-code) exposes
this as three MCP tools; we answer the same calls (same names, parameters, ranges and defaults, see
``../shared/docs/peers.md`` §1) with our reader, and add discovery and the exec-script analyzer.

The parts, each small:

- :mod:`.names`: tool names, error codes, the refusal type (imports nothing heavy);
- :mod:`.policy`: the roots, and opening a path (or a session reference) once, by descriptor;
- :mod:`.args`, :mod:`.catalog`: the arguments and what ``tools/list`` shows;
- :mod:`.tools`: the five tools as plain functions; :mod:`.budget`: spending an agent's character budget;
- :mod:`.agent_code`: the origin's wire profile; :mod:`.worker`: the analyzer's child process;
- :mod:`.dispatch`: one call, start to finish; :mod:`.stdio`: the fast stdio loop; :mod:`.sdk`: the SDK
  shells (in memory, streamable HTTP).

Names are imported from their module on first use (``transcript_reader.mcp.ServerConfig`` works), so
``import transcript_reader.mcp`` costs nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOME = {
    "ServerConfig": "policy", "open_argument": "policy", "open_verified": "policy", "PSEUDO_ROOTS": "policy",
    "ToolName": "names", "ErrorCode": "names", "ToolFailure": "names", "ENVELOPE_CHARS": "names",
    "INSPECT_CHARS": "names", "MIB": "names", "WIRES": "names", "WIRE_OURS": "names", "WIRE_AGENT_CODE": "names",
    "MAX_SCRIPT_CHARS": "names",
    "PROJECTIONS": "args", "INCLUDE_FLAGS": "args", "SEARCH_KINDS": "args", "read_selection": "args",
    "tool_definitions": "catalog", "packaged_tools": "catalog",
    "call_tool": "tools", "CallState": "tools", "Answer": "tools", "UNDECODED": "tools",
    "bound_payload": "budget", "shrink_envelope": "budget", "cut_strings": "budget", "dumps": "budget",
    "fit_items": "budget", "TOP_ENTRIES": "budget",
    "run_call": "dispatch", "Outcome": "dispatch",
    "create_server": "sdk", "serve_http": "sdk", "serve_stdio": "stdio",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = sorted(_HOME)
