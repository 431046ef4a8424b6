"""What ``tools/list`` shows: each tool's title, description (written for the model that calls it), input
schema (from :mod:`.args`) and annotations, in the wire form (camelCase keys). A new tool is one entry in
each of ``DESCRIPTIONS`` and ``TITLES`` (and its arguments model in :mod:`.args`).

The stdio server answers ``tools/list`` before it imports anything heavy, so the list is also kept as a
file in the package (``tools.<wire>.json``, written by :func:`write_packaged`); a test holds the file equal
to what :func:`tool_definitions` builds, and to the golden snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from transcript_reader.mcp.names import WIRE_OURS, WIRES, ToolName

PACKAGED = Path(__file__).parent


# --------------------------------------------------------------------------------------------------
# Descriptions, written for the model that calls the tools: what the tool is for and when to use it
# rather than another, in a few lines (every agent pays for the whole list at start: it stays under
# 6 KB, ``tests/test_mcp_catalog_size.py``). What every result shares (``executed``, errors) is said once,
# in the server's instructions (``stdio.INSTRUCTIONS``).

DESCRIPTIONS: dict[ToolName, str] = {
    ToolName.READ: (
        "What an agent did in one session: the commands it ran (exit code, output excerpt), the files it "
        "changed, test runs, prompts and final answers. "
        "truncated=true: use tail, a narrower projection or search."
    ),
    ToolName.SEARCH: (
        "Find the items of one session that contain a text (an error, a name, a message), each with "
        "contextItems around it; kinds narrows what may match."
    ),
    ToolName.INSPECT: (
        "One session's facts, no content: format, version, ids, cwd, models, times, turns, counts by kind, "
        "tokens, cost, line accounting. Use it first to size or check a session."
    ),
    ToolName.LIST_SESSIONS: (
        "Find sessions (Codex and Claude Code), newest first: path, id, start, title, cwd, model, tokens; "
        "sub-agents under their parent. text: only sessions whose items hold it, with hits. Pass a row's "
        "path or id to the other tools."
    ),
    ToolName.ANALYZE: (
        "Read a Codex code-mode exec cell's JavaScript without running it: each tools.X(...) call and "
        "the commands, patches and tool calls it means (executed unknown)."
    ),
    ToolName.USAGE: (
        "What sessions cost: tokens and USD (price source, date) by day, week, month, model, project or "
        "session, and the total; path: a session with its sub-agents, cwd: a project. Unknown: null, counted."
    ),
}

TITLES: dict[ToolName, str] = {
    ToolName.READ: "Read an agent transcript",
    ToolName.SEARCH: "Search an agent transcript",
    ToolName.INSPECT: "Inspect an agent transcript",
    ToolName.LIST_SESSIONS: "List agent sessions",
    ToolName.ANALYZE: "Analyse a code-mode exec script",
    ToolName.USAGE: "Session cost",
}

ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def tool_definitions(wire: str = WIRE_OURS) -> list[dict[str, Any]]:
    """The tool list in its wire form, in a fixed order (the golden snapshot pins it). No output schema:
    results carry their JSON as text and as structured content, documented in ``docs/``; a schema
    per tool cost the list a seventh of its size for a contract clients do not need to call."""
    from transcript_reader.mcp.args import ARG_MODELS, input_schema

    tools = []
    for name in ToolName:
        tool: dict[str, Any] = {"name": name.value, "title": TITLES[name], "description": DESCRIPTIONS[name],
                                "inputSchema": input_schema(ARG_MODELS[name])}
        tool["annotations"] = dict(ANNOTATIONS)
        tools.append(tool)
    return tools


def packaged_path(wire: str) -> Path:
    return PACKAGED / f"tools.{wire}.json"


def packaged_tools(wire: str = WIRE_OURS) -> list[dict[str, Any]]:
    """The tool list as shipped (read without importing pydantic or the library)."""
    tools: list[dict[str, Any]] = json.loads(packaged_path(wire).read_text(encoding="utf-8"))
    return tools


def write_packaged() -> None:
    """Regenerate the shipped tool lists (``python -m transcript_reader.mcp.catalog``)."""
    for wire in WIRES:
        text = json.dumps(tool_definitions(wire), indent=1, ensure_ascii=False) + "\n"
        packaged_path(wire).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write_packaged()
