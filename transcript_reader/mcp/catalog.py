"""What ``tools/list`` shows: each tool's title, description (written for the model that calls it), input
schema (from :mod:`.args`), output schema and annotations, in the wire form (camelCase keys).

The stdio server answers ``tools/list`` before it imports anything heavy, so the list is also kept as a
file in the package (``tools.<wire>.json``, written by :func:`write_packaged`); a test holds the file equal
to what :func:`tool_definitions` builds, and to the golden snapshot."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from transcript_reader.mcp.names import WIRE_OURS, WIRES, ToolName

PACKAGED = Path(__file__).parent


# Output schemas (a loose contract: the shape render.py emits, every field documented once there)

_ITEM = {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]}
_ENVELOPE = {
    "ok": {"type": "boolean", "const": True},
    "path": {"type": "string"},
    "provider": {"type": "string", "enum": ["codex", "claude"]},
}
_TRUNCATED = {"type": "boolean", "description": "true when entries were left out to respect the limits"}


def _object(required: Sequence[str], **properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


OUTPUT_SCHEMAS: dict[ToolName, dict[str, Any]] = {
    ToolName.READ: _object(
        ["ok", "path", "provider", "format", "projection", "items", "truncated"],
        **_ENVELOPE,
        truncated=_TRUNCATED,
        format={"type": "string"},
        projection={"type": "string"},
        items={"type": "array", "items": _ITEM},
        stats={"type": "object"},
    ),
    ToolName.SEARCH: _object(
        ["ok", "path", "provider", "format", "query", "matches", "truncated"],
        **_ENVELOPE,
        truncated=_TRUNCATED,
        format={"type": "string"},
        query={"type": "string"},
        matches={
            "type": "array",
            "items": _object(
                ["item"],
                item=_ITEM,
                before={"type": "array", "items": _ITEM},
                after={"type": "array", "items": _ITEM},
                excerpt={"type": "string"},
            ),
        },
    ),
    ToolName.INSPECT: _object(
        ["ok", "path", "provider", "format", "info"],
        **_ENVELOPE,
        format={"type": "string"},
        info=_object(["format", "turns", "counts", "tokens", "lines"], format={"type": "string"}),
        truncated=_TRUNCATED,
    ),
    ToolName.LIST_SESSIONS: _object(
        ["ok", "sessions", "truncated"],
        ok=_ENVELOPE["ok"],
        truncated=_TRUNCATED,
        sessions={"type": "array", "items": _object(["path"], path={"type": "string"})},
        next_cursor={"type": "string", "description": "pass as cursor for the next page (absent on the last page)"},
    ),
    ToolName.ANALYZE: _object(
        ["ok", "parser", "calls", "entries", "truncated"],
        ok=_ENVELOPE["ok"],
        truncated=_TRUNCATED,
        parser={"type": "string"},
        parse_error={"type": ["object", "null"]},
        calls={"type": "array", "items": _object(["name", "computed"], name={"type": "string"})},
        entries={
            "type": "array",
            "items": _object(["kind", "executed"], kind={"type": "string"}, executed={"type": "string"}),
        },
        findings={"type": "array", "items": {"type": "object"}},
    ),
}


# --------------------------------------------------------------------------------------------------
# Descriptions, written for the model that calls the tools

_EXECUTED = (
    "`executed` on shell_command, stdin_write, patch, test_run and tool_call items: \"yes\" = the transcript "
    "proves it ran (an output or an execution record exists); \"no\" = positive evidence it did not run "
    "(declined, rejected or unsupported call, a code cell that failed to parse, or a dead branch in a cell "
    "whose session records every run); \"unknown\" = the transcript cannot tell (it ends first, or a call "
    "read from a code-mode exec script has no record). `origin`: \"direct\" = a call the model made; "
    "\"script\" = read statically from the JavaScript of a code-mode `exec` cell (it may sit in a branch "
    "that never ran, hence often \"unknown\"); \"record\" = a command or patch Codex recorded as run that no "
    "script call matches (computed commands, loops); \"stream\" = from a `codex exec --json` stream."
)
_ERRORS = (
    "Errors come back as isError results whose text is {\"ok\":false,\"error\":{\"code\",\"message\"}}; codes: "
    "path_required, file_not_found, session_not_found, not_a_file, hard_linked (a file with several hard "
    "links is refused), permission_denied, outside_allowed_roots, too_large, timeout (the call ran over the "
    "server's time budget: narrow it), unsupported_format (not a transcript; its content is never echoed), "
    "provider_detection_failed (JSON records, but no Codex or Claude Code format found), provider_mismatch "
    "(the file is another provider's than the one asked for), invalid_argument; internal_error "
    "only for a bug of ours."
)

DESCRIPTIONS: dict[ToolName, str] = {
    ToolName.READ: (
        "Read one Codex CLI transcript and return a bounded, projected list of what happened: user prompts, "
        "assistant messages (final=true marks each turn's answer), shell commands with cwd, exit code and an "
        "output excerpt, file changes (patches: files, operation, +/- lines), test runs (pytest, npm test, "
        "go test, cargo test… with pass/fail and counts) and other tool calls. Use it to learn what another "
        "agent did without loading the whole file: the default projection \"handoff\" is the session's shape "
        "(prompts, every command with its exit code, every changed file, test runs, final answers); use "
        "agent_transcript_search_file to find one thing, agent_transcript_inspect_file for metadata only.\n"
        "Projections (the origin's names are accepted): timeline = every visible item; conversation = user "
        "+ assistant messages; final = each turn's final answer; assistant_messages; shell_commands; "
        "file_changes and tool_writes = patches; tests = real test runs only (test_run items, never every "
        "command); tool_reads = tool_calls (MCP, web search, plan updates, image views, sub-agents); "
        "handoff = the prompts, each turn's final answer and every patch, shell command and test run, in "
        "order (when it must cut, it keeps the newest); "
        "raw_outputs = full call outputs (ours).\n"
        "include (true adds, false removes, absent defers to the projection): userMessages -> user_message, "
        "assistantMessages -> assistant_message, toolReads -> tool_call, toolWrites and patches -> patch, "
        "shellCommands -> shell_command + stdin_write, testRuns -> test_run, rawToolOutputs -> raw_output; "
        "ours: reasoning, contextMessages (harness-injected environment, AGENTS.md, skills), notices "
        "(errors, aborted turns, compactions).\n"
        + _EXECUTED
        + "\nLimits: maxItems (default 100), maxChars (24,000: bound on the whole result), maxCharsPerItem "
        "(4,000; a cut item carries truncated_chars); tail=N keeps the last N items, then maxItems the last "
        "of those. Over maxChars, items are cut before any is dropped: first outputs and diffs shrink "
        "(stats.compacted_items counts items shown in short form), then long texts, a long patch keeps its "
        "first files and says how many more (more_files). truncated=true means items were dropped: read "
        "again with tail, a narrower projection or include flags, or search.\n"
        + _ERRORS
    ),
    ToolName.SEARCH: (
        "Search one Codex CLI transcript for a case-insensitive substring (as the origin: no regex) and "
        "return the matching items in file order, each with contextItems items before and after and an "
        "excerpt centred on the hit. Use it to find the command, file, error or message that mattered "
        "without reading the transcript. kinds limits which items can match: the origin's kinds "
        "(user_message, assistant_message, tool_read -> tool_call, tool_write -> patch, shell_command, "
        "patch, test_run) or ours (tool_call, stdin_write, reasoning, context, notice, raw_output). "
        "maxMatches (25), contextItems (1), maxCharsPerMatch (2,000), maxChars (24,000 bound on the whole "
        "result); truncated=true means matches were dropped.\n" + _EXECUTED + "\n" + _ERRORS
    ),
    ToolName.INSPECT: (
        "Describe one Codex CLI transcript without its content: format and Codex version, session id, cwd, "
        "model(s), originator, source and parent session (sub-agents), first/last timestamp, duration, turns, "
        "item counts by kind, token usage, code-mode exec-script figures (scripts, calls by tool, executed "
        "yes/no/unknown counts) and line accounting (lines = decoded + known noise + unknown + unreadable + "
        "blank). Use it first to size a transcript or check it is the right session.\n" + _ERRORS
    ),
    ToolName.LIST_SESSIONS: (
        "List agent sessions: Codex's under the server's $CODEX_HOME (sessions/YYYY/MM/DD, optionally "
        "archived_sessions) and Claude Code's under its home (projects/<slug>/*.jsonl), newest first: provider, path, start time, duration, title (session index name or first "
        "prompt), cwd, model, Codex version, size and tokens; sub-agents follow their parent (depth 1). "
        "Filters: cwd (this directory or below), since/until (a date such as 2026-11-30, or 3d, 2w, 12h), "
        "grep (text in the title, name, cwd, id or model; use agent_transcript_search_file for full text), "
        "limit (20 per page; next_cursor gives the next page), archived, provider (all, codex or claude), stats (adds turns, commands, files "
        "changed, tests: reads each listed file whole, slower). Only sessions inside the server's roots are "
        "listed. Use it to find a child agent's transcript, then pass its path or session id to "
        "agent_transcript_read_file.\n" + _ERRORS
    ),
    ToolName.ANALYZE: (
        "Statically analyse the JavaScript of a Codex code-mode `exec` cell without running it: every "
        "tools.NAME(...) call in source order with its decoded argument, and the entries a transcript reader "
        "derives from them (shell commands with cwd, stdin writes, one patch entry naming every file, other "
        "tool calls). Entries read this way always carry executed=\"unknown\": a static reading cannot tell "
        "whether a call in a branch ran. A computed shell-call argument (exec_command, shell_command, shell) "
        "makes the whole script one shell "
        "command (whole_script=true), never a partial list. parse_error is set when the script does not parse "
        "(it then never ran as written). Errors: invalid_argument, too_large (over 200,000 characters), "
        "timeout (the analysis ran over the server's time budget)."
    ),
}

TITLES: dict[ToolName, str] = {
    ToolName.READ: "Read an agent transcript",
    ToolName.SEARCH: "Search an agent transcript",
    ToolName.INSPECT: "Inspect an agent transcript",
    ToolName.LIST_SESSIONS: "List Codex and Claude Code sessions",
    ToolName.ANALYZE: "Analyse a code-mode exec script",
}

ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}


def tool_definitions(wire: str = WIRE_OURS) -> list[dict[str, Any]]:
    """The tool list in its wire form, in a fixed order (the golden snapshot pins it). The agent-code
    profile returns the origin's shapes, which have no output schema (text results only)."""
    from transcript_reader.mcp.args import ARG_MODELS, input_schema

    tools = []
    for name in ToolName:
        tool: dict[str, Any] = {"name": name.value, "title": TITLES[name], "description": DESCRIPTIONS[name],
                                "inputSchema": input_schema(ARG_MODELS[name])}
        if wire == WIRE_OURS:
            tool["outputSchema"] = OUTPUT_SCHEMAS[name]
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
