"""exec_grammar: find every tool call in Codex code-mode ``exec`` scripts, without running them.

>>> from exec_grammar import analyze
>>> a = analyze('const r = await tools.exec_command({cmd: "ls -la", workdir: "/repo"});\\ntext(r.output);')
>>> [(c.name, c.start.line, c.argument) for c in a.calls]
[('exec_command', 1, {'cmd': 'ls -la', 'workdir': '/repo'})]
>>> a.entries[0].command, a.entries[0].cwd, a.entries[0].executed
('ls -la', '/repo', 'unknown')
>>> analyze("// tools.exec_command({cmd: 'rm -rf /'}) is only quoted here").calls
()

Backends: ``tree-sitter`` (primary; a script it rejects falls back to the lexer, since it never ran as
written, and ``parse_error`` says why), ``esprima`` (an independent ES2017 parser, for cross-checks) and
``lexer`` (hand-written, total, linear). All return the same :class:`Analysis`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from exec_grammar.analysis import (
        AnalysisCache,
        analyze,
        analyze_cached,
        clear_analysis_cache,
        decode_pragma,
        shared_analyses,
    )
    from exec_grammar.model import (
        EXECUTED_UNKNOWN,
        Analysis,
        Entry,
        EntryKind,
        Finding,
        ParseError,
        ParserName,
        Patch,
        PatchEntry,
        PatchFile,
        PatchOp,
        Position,
        ShellCommandEntry,
        StdinWriteEntry,
        ToolCall,
        ToolCallEntry,
    )
    from exec_grammar.patch import parse_patch

#: Where each public name lives. The package imports them on first use (PEP 562): a module that needs
#: only ``exec_grammar.render`` or ``exec_grammar.model`` (a session listing's JSON) does not load the
#: parsers, which cost more than the rest of such a command's start-up.
_HOME = {
    **dict.fromkeys(("AnalysisCache", "analyze", "analyze_cached", "clear_analysis_cache", "decode_pragma",
                     "shared_analyses"), "exec_grammar.analysis"),
    **dict.fromkeys(("EXECUTED_UNKNOWN", "Analysis", "Entry", "EntryKind", "Finding", "ParseError", "ParserName",
                     "Patch", "PatchEntry", "PatchFile", "PatchOp", "Position", "ShellCommandEntry",
                     "StdinWriteEntry", "ToolCall", "ToolCallEntry"), "exec_grammar.model"),
    "parse_patch": "exec_grammar.patch",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'exec_grammar' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))


__all__ = [
    "EXECUTED_UNKNOWN",
    "Analysis",
    "AnalysisCache",
    "Entry",
    "EntryKind",
    "Finding",
    "ParseError",
    "ParserName",
    "Patch",
    "PatchEntry",
    "PatchFile",
    "PatchOp",
    "Position",
    "ShellCommandEntry",
    "StdinWriteEntry",
    "ToolCall",
    "ToolCallEntry",
    "analyze",
    "analyze_cached",
    "clear_analysis_cache",
    "decode_pragma",
    "parse_patch",
    "shared_analyses",
]
