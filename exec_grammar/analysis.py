"""``analyze``: choose a backend, fall back when the primary parser rejects a script, add the pragma
and the entries. The façade every caller uses; backends never see each other."""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from exec_grammar.backends import BackendResult, _fast_constructor, build_calls
from exec_grammar.entries import build_entries
from exec_grammar.escapes import tool_escapes
from exec_grammar.literals import decode_literal, is_computed
from exec_grammar.model import Analysis, Finding, ParseError, ParserName, ToolCall

__all__ = ["AnalysisCache", "analyze", "analyze_cached", "clear_analysis_cache", "decode_pragma", "shared_analyses"]

_PRAGMA_RE = re.compile(r"\A[\ufeff \t]*//[ \t]*@exec:[ \t]*(.*)")


def decode_pragma(script: str) -> tuple[Mapping[str, Any] | None, Finding | None]:
    """The first-line ``// @exec: {...}`` object, decoded with JavaScript's literal rules (JSON is a
    subset); a finding when the pragma is present but is not an object literal."""
    if "@exec" not in script[:200]:
        return None, None
    first = script.split("\n", 1)[0].rstrip("\r")
    m = _PRAGMA_RE.match(first)
    if m is None:
        return None, None
    value = decode_literal(m.group(1))
    if is_computed(value) or not isinstance(value, dict):
        return None, Finding("bad-pragma", f"pragma is not an object literal: {m.group(1)[:60]!r}", 0)
    return value, None


def _run(parser: ParserName, script: str) -> BackendResult:
    if parser is ParserName.TREE_SITTER:
        from exec_grammar.backends import treesitter

        return treesitter.parse_calls(script)
    if parser is ParserName.ESPRIMA:
        import exec_grammar.backends.esprima as esprima_backend

        return esprima_backend.parse_calls(script)
    from exec_grammar.backends import lexical

    return lexical.parse_calls(script)


#: ``Finding.code`` when V8's verdict could not be had (V8 did not load, or the cell was over the
#: budget): ``parse_error`` is then None without meaning "compiles", and nothing is proven.
VERDICT_UNKNOWN = "verdict-unknown"
#: ``Finding.code`` when the cell was over the budget and was read by the lexer alone.
OVER_BUDGET = "over-budget"


def analyze(script: str, parser: str = "tree-sitter", budget: int | None = None) -> Analysis:
    """Read one exec script: its tool calls in source order, the parse error when the chosen parser
    rejected it, the pragma and the entries.

    With ``parser="tree-sitter"`` (the default) the verdict (``parse_error``) is V8's own, compiled
    without running anything (``exec_grammar.v8``), and the few module-only rules checked on the tree;
    a script tree-sitter cannot read is read by the lexer instead (``Analysis.parser`` is then
    ``"lexer"``). Where V8 cannot be loaded the verdict is unknown: a ``verdict-unknown`` finding,
    ``parse_error`` None and nothing proven. With ``"esprima"`` or ``"lexer"``, ``parse_error`` is that
    parser's own.

    ``budget``: the most characters a cell may have to be parsed (None: no bound). A longer cell is
    read by the lexer alone (linear, no tree), with an unknown verdict and an ``over-budget`` finding,
    so one huge cell cannot hold up the rest of a session. Raises ValueError for an unknown parser
    name only."""
    chosen = ParserName(parser)
    if budget is not None and len(script) > budget:
        return _over_budget(script, budget)
    pending = None
    if chosen is ParserName.TREE_SITTER:
        from exec_grammar import v8

        pending = v8.submit(script)  # V8 compiles on its own thread while the tree is read here
    try:
        result = _run(chosen, script)
    finally:
        if pending is not None:
            compiled = pending.result()
    used = chosen
    findings = list(result.findings)
    error = result.error
    unknown = False
    if pending is not None:
        if result.v8_source is not None:
            compiled = pending.result(result.v8_source)  # module syntax hidden from V8: compiled again
        if compiled.status == "unknown":
            unknown = True
            findings.append(Finding(VERDICT_UNKNOWN, compiled.message or "V8 gave no verdict", None))
            verdict = None
        else:
            verdict = (
                ParseError(compiled.message or "SyntaxError", compiled.line, compiled.column)
                if compiled.status == "error"
                else None
            )
        module_error = result.module_error
        if module_error is not None and (
            verdict is None or (module_error.line, module_error.column) < (verdict.line, verdict.column)
        ):
            verdict = module_error
            unknown = False
        # a script V8 rejects is read by the lexer; one V8 could not compile for want of stack (nesting
        # thousands deep) keeps tree-sitter's calls
        if error is not None or (verdict is not None and verdict.message.startswith("SyntaxError")):
            fallback = _run(ParserName.LEXER, script)
            used = ParserName.LEXER
            findings.extend(fallback.findings)
            result = fallback
        error = verdict
    elif error is not None and chosen is not ParserName.LEXER:
        fallback = _run(ParserName.LEXER, script)
        used = ParserName.LEXER
        findings.extend(fallback.findings)
        result = fallback
    calls = build_calls(script, result.calls)
    proven = _proven(result, calls) if error is None and used is chosen and not unknown else ()
    pragma, bad = decode_pragma(script)
    if bad is not None:
        findings.append(bad)
    escapes = result.escapes if result.escapes is not None else tool_escapes(script)
    findings.extend(escapes)
    entries = build_entries(script, calls, result.binding_of, hidden_calls=bool(escapes))
    return _new_analysis(script, used, calls, error, pragma, entries, tuple(findings), proven)


def _over_budget(script: str, budget: int) -> Analysis:
    from exec_grammar.backends import lexical

    result = lexical.parse_calls(script)
    findings = list(result.findings)
    findings.append(
        Finding(OVER_BUDGET, f"cell of {len(script):,} characters is over the budget of {budget:,}: read by the lexer", None)
    )
    findings.append(Finding(VERDICT_UNKNOWN, "over the budget: V8 was not asked", None))
    calls = build_calls(script, result.calls)
    pragma, bad = decode_pragma(script)
    if bad is not None:
        findings.append(bad)
    escapes = tool_escapes(script)
    findings.extend(escapes)
    entries = build_entries(script, calls, result.binding_of, hidden_calls=bool(escapes))
    return _new_analysis(script, ParserName.LEXER, calls, None, pragma, entries, tuple(findings), ())


_new_analysis = _fast_constructor(
    Analysis, ("source", "parser", "calls", "parse_error", "pragma", "entries", "findings", "proven")
)


def _proven(result: BackendResult, calls: tuple[ToolCall, ...]) -> tuple[int, ...]:
    """The calls on the top-level program's unconditional path (``Analysis.proven``): the backend marks
    each call awaited directly by a top-level statement; its argument must be a literal (evaluating
    anything else may throw before the call); and no earlier top-level statement may end the cell
    early, when the script names something that can (``result.statements``)."""
    tops = sorted({c.top for c in result.calls if c.top >= 0})
    if not tops:
        return ()
    by_start = {c.start.offset: i for i, c in enumerate(calls)}
    candidates = [
        (c.top, by_start[c.start])
        for c in result.calls
        if c.top >= 0 and c.start in by_start and not calls[by_start[c.start]].computed
    ]
    stop = 1 << 62
    if result.statements is not None:
        proven_tops = {t for t, _ in candidates}
        for start, runs_nothing in result.statements:
            if not runs_nothing and start not in proven_tops:
                stop = start
                break
    return tuple(sorted(i for t, i in candidates if t < stop))


class AnalysisCache:
    """A bounded LRU of analyses keyed by ``(parser, script text)``, for the callers that meet the same
    script more than once in a run: ``show --scripts`` and the HTML export mark the calls of a cell the
    reader has just analysed, a forked or resumed session repeats its parent's cells, and a census reads
    both. An :class:`Analysis` is frozen, so one instance can be shared.

    Bounded by entries and by the characters of the scripts held (a script longer than a quarter of
    that bound is analysed but not kept); thread-safe (the MCP server reads concurrently). Each entry
    remembers how long its analysis took, so a census reports a script's analysis time whether or not
    the analysis was shared."""

    __slots__ = ("_entries", "_chars", "_lock", "max_entries", "max_chars", "hits", "misses")

    def __init__(self, max_entries: int = 256, max_chars: int = 8_000_000) -> None:
        self._entries: OrderedDict[tuple[str, str], tuple[Analysis, float]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.hits = 0
        self.misses = 0

    def get(self, script: str, parser: str = "tree-sitter", budget: int | None = None) -> tuple[Analysis, float]:
        """``(analysis, seconds its analysis took)``, analysed now unless it is held."""
        if budget is not None and len(script) > budget:
            parser = f"{parser}/over-budget"  # a separate key: the lexer's reading, not the parser's
        key = (parser, script)
        with self._lock:
            held = self._entries.get(key)
            if held is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return held
            self.misses += 1
        import exec_grammar  # looked up per call: a caller (the reader benchmark) may wrap analyze

        t0 = time.perf_counter()
        if parser.endswith("/over-budget"):
            analysis = exec_grammar.analyze(script, parser=parser.split("/")[0], budget=budget)
        else:
            analysis = exec_grammar.analyze(script, parser=parser)
        entry = (analysis, time.perf_counter() - t0)
        if len(script) * 4 <= self.max_chars:
            with self._lock:
                if key not in self._entries:
                    self._entries[key] = entry
                    self._chars += len(script)
                    while len(self._entries) > self.max_entries or self._chars > self.max_chars:
                        (_, old), _ = self._entries.popitem(last=False)
                        self._chars -= len(old)
        return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._chars = 0

    def __len__(self) -> int:
        return len(self._entries)


_SHARED = AnalysisCache()


def shared_analyses() -> AnalysisCache:
    """The process's cache, used by :func:`analyze_cached`."""
    return _SHARED


#: The reader's per-cell budget in characters: a longer cell is read by the lexer with an unknown
#: verdict (``over-budget``), so the rest of the session is read as usual.
CELL_BUDGET = 2_000_000


def analyze_cached(script: str, parser: str = "tree-sitter", budget: int | None = CELL_BUDGET) -> Analysis:
    """:func:`analyze`, through the process's bounded cache: the same text gives the same instance. The
    reader's cells go through here, with :data:`CELL_BUDGET`."""
    return _SHARED.get(script, parser, budget)[0]


def clear_analysis_cache() -> None:
    """Forget every shared analysis (a benchmark's passes must each analyse)."""
    _SHARED.clear()
