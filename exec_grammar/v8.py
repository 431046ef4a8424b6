"""V8's own compile verdict on a cell, from the V8 embedded by ``mini-racer``; nothing is ever run.

Codex code mode compiles each cell with V8's ``compile_module`` (an ES module: strict, top-level
``await``). mini-racer exposes no module compiler, so the cell is handed, as a string value (never as
source text spliced into a script), to V8's ``AsyncFunction`` constructor: a strict async function body
is compiled, the function object is created and dropped, and it is never called. The constructor parses
the body on its own (V8 requires a single function literal), so a cell cannot close the wrapper early:
``}); evil(); (function(){`` is a syntax error, reported where node's module compile reports it (the
``}`` that would close it).

An async function body and a module differ by a few rules only; those are checked on the tree by the
tree-sitter backend (``backends/ts_module.py``) and the earlier of the two errors is the verdict. A
hashbang line, legal at the start of a module only, is compiled as a ``//`` comment of the same length.

Lazy: V8 is started by the first cell compiled, so a command that analyses nothing never loads it
(about 0.2 s and 80 MB of shared library). Where it cannot load, :func:`compile_cell` says ``unknown``
and :func:`load_error` gives the one-line notice.
"""

from __future__ import annotations

import atexit
import re
import threading
from typing import Any, NamedTuple

__all__ = ["Compiled", "Pending", "available", "compile_cell", "load_error", "submit", "v8_version"]

#: ``'use strict';`` on the cell's first line (no newline, so lines keep their numbers; columns of the
#: first line shift by its length).
_PROLOGUE = "'use strict';"
#: The constructor's source is ``(async function anonymous(\n) {\n`` + body + ``\n})``.
_LINE_SHIFT = 2
_HEAD_RE = re.compile(r"\A[^\n]*?:(\d+): ([^\n]*)\n([^\n]*)\n( *)\^")
_COMPILE_JS = """globalThis.__cell_compile = (body) => {
  const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
  new AsyncFunction(body);
  return 0;
};"""


class Compiled(NamedTuple):
    """``status``: ``ok`` (V8 compiles it), ``error`` (``message`` at 1-based ``line`` and 0-based
    code-point ``column`` of the cell), ``unknown`` (V8 could not be used: ``message`` says why)."""

    status: str
    message: str | None = None
    line: int = 0
    column: int = 0


_lock = threading.Lock()
_state: dict[str, Any] = {}


def _compiler() -> Any:
    """The compiling function in the one shared V8 context, started on first use; None when V8 cannot
    load (the reason is kept for :func:`load_error`)."""
    fn = _state.get("fn")
    if fn is not None or "error" in _state:
        return fn
    with _lock:
        if "fn" in _state or "error" in _state:
            return _state.get("fn")
        try:
            from py_mini_racer import MiniRacer

            ctx = MiniRacer()
            ctx.eval(_COMPILE_JS)
            _state["ctx"] = ctx
            _state["version"] = ctx.v8_version
            public = ctx.eval("__cell_compile")
            _state["public"] = public
            _state["fn"] = _direct_caller(ctx, public) or _PublicCaller(public)
            atexit.register(_close)  # a live function handle at interpreter exit hangs mini-racer's loop
        except Exception as e:  # ImportError, OSError (no wheel for this platform), a V8 start failure
            _state["error"] = f"V8 (mini-racer) could not be loaded: {type(e).__name__}: {e}".splitlines()[0]
        return _state.get("fn")


#: Cells compiled by both callers when V8 starts: the direct caller is used only if it gives what the
#: public one gives on each (a cell that compiles, a syntax error with its place, a stack overflow).
_SELF_CHECK = ("await tools.x({a: 1});", "let a = 1;\n}", "const x = ;", "(" * 20000 + ")" * 20000)


class _PublicCaller:
    """mini-racer's public call, made when the result is asked for (no overlap)."""

    __slots__ = ("_fn", "_body")

    def __init__(self, fn: Any) -> None:
        self._fn = fn
        self._body = ""

    def start(self, body: str) -> None:
        self._body = body

    def finish(self) -> Any:
        body, self._body = self._body, ""
        return self._fn(body)


class _DirectCaller:
    """A caller of the JS compile function that makes one trip to V8's thread per cell, and lets the
    calling thread work while V8 compiles (:meth:`start`, then :meth:`finish`).

    mini-racer's public call goes from the calling thread to its asyncio loop thread, which builds the
    argument array in V8 (one task), then starts the call (another), and hands the result back through
    a future: about 0.25 ms of CPU per call, more than the tree-sitter parse of a typical cell. The
    same library calls, made from here on a persistent argument array, wait for the one task on the
    queue mini-racer uses for its own uncancelable tasks. Only this module uses the context, one call
    at a time under :data:`_lock`, so results cannot be taken out of order. mini-racer is pinned below
    0.15; should its internals differ, building this fails and the public caller is used."""

    __slots__ = ("_handles", "_start", "_results", "_to_python")

    def __init__(self, ctx: Any, public: Any) -> None:
        from py_mini_racer import JSUndefined

        c = ctx._ctx
        dll, raw_ctx = c._dll, c._ctx
        to_handle, wrap = c._python_to_value_handle, c._wrap_raw_handle
        argv = ctx.eval("[0]")
        self._handles = [to_handle(v) for v in (public, JSUndefined, argv, 0)]  # kept alive here
        fn_raw, this_raw, argv_raw, zero_raw = (h.raw for h in self._handles)
        set_item, call = dll.mr_set_object_item, dll.mr_call_function

        def start(body: str) -> None:
            value = to_handle(body)
            wrap(set_item(raw_ctx, argv_raw, zero_raw, value.raw))
            call(raw_ctx, fn_raw, this_raw, argv_raw, 0)

        self._start = start
        self._results = c._non_cancelable_mr_task_results_queue
        self._to_python = c._value_handle_to_python

    def start(self, body: str) -> None:
        self._start(body)

    def finish(self) -> Any:
        return self._to_python(self._results.get())


def _direct_caller(ctx: Any, public: Any) -> _DirectCaller | None:
    """The direct caller, if mini-racer's internals are as expected and it agrees with the public
    caller on :data:`_SELF_CHECK`; else None."""
    try:
        direct = _DirectCaller(ctx, public)
        pub = _PublicCaller(public)
        for cell in _SELF_CHECK:
            if _outcome(direct, cell) != _outcome(pub, cell):
                return None
        return direct
    except Exception:  # an attribute renamed or a signature changed in another mini-racer
        return None


def _outcome(caller: Any, cell: str) -> Compiled:
    try:
        caller.start(_PROLOGUE + cell)
        caller.finish()
    except Exception as e:
        return _located(cell, str(e))
    return Compiled("ok")


def _close() -> None:
    with _lock:
        _state.pop("fn", None)
        _state.pop("public", None)
        ctx = _state.pop("ctx", None)
        _state["error"] = "V8 was closed"
    if ctx is not None:
        ctx.close()


def available() -> bool:
    return _compiler() is not None


def load_error() -> str | None:
    """The one-line notice when V8 could not be loaded (after a first :func:`compile_cell`)."""
    _compiler()
    return _state.get("error")


def v8_version() -> str | None:
    _compiler()
    return _state.get("version")


def compile_cell(script: str) -> Compiled:
    """V8's verdict on ``script`` compiled as a strict async function body (see the module docstring)."""
    return submit(script).result()


class Pending:
    """A compile under way on V8's thread (:func:`submit`); :meth:`result` waits for it. While one is
    pending, no other cell can be compiled: :meth:`result` must be called (the analyzer calls it in a
    ``finally``)."""

    __slots__ = ("_script", "_caller", "_compiled")

    def __init__(self, script: str, caller: Any, compiled: Compiled | None) -> None:
        self._script = script
        self._caller = caller
        self._compiled = compiled

    def result(self, source: str | None = None) -> Compiled:
        """The verdict. ``source``: the text that must be compiled after all (the cell with module
        syntax hidden, ``backends/ts_module.py``), when it is not the text submitted."""
        compiled = self._compiled
        if compiled is None:
            try:
                self._caller.finish()
            except Exception as e:  # mini-racer's JSEvalException carries V8's message with its location
                compiled = _located(self._script, str(e))
            else:
                compiled = Compiled("ok")
            finally:
                _lock.release()
            self._compiled = compiled
        if source is not None and source != self._script:
            return compile_cell(source)
        return compiled


def submit(script: str) -> Pending:
    """Start compiling ``script`` on V8's own thread and return at once, so the caller can read the
    tree while V8 compiles: an analysis then takes about the longer of the two, not their sum."""
    caller = _compiler()
    if caller is None:
        return Pending(script, None, Compiled("unknown", _state.get("error")))
    body = script
    if body.startswith("#!"):
        body = "//" + body[2:]  # a module may start with a hashbang; a function body may not
    _lock.acquire()
    try:
        caller.start(_PROLOGUE + body)
    except Exception as e:  # a text mini-racer cannot pass (a lone surrogate is not UTF-8)
        _lock.release()
        return Pending(script, None, _located(script, str(e)))
    return Pending(script, caller, None)


def _located(script: str, text: str) -> Compiled:
    m = _HEAD_RE.match(text)
    if "RangeError: Maximum call stack size exceeded" in text.split("\n", 1)[0]:
        # V8's parser ran out of stack (nesting thousands deep): compiling failed, so nothing ran. The
        # depth at which that happens depends on the embedder's stack size.
        return Compiled("error", "RangeError: Maximum call stack size exceeded", 1, 0)
    if m is None or not m.group(2).startswith("SyntaxError"):
        return Compiled("unknown", f"V8 gave no syntax error location: {text.splitlines()[0] if text else ''}")
    message = m.group(2)
    line = int(m.group(1)) - _LINE_SHIFT
    lines = script.split("\n")
    if line > len(lines):  # at the wrapper's closing line: the end of the cell
        found = Compiled("error", message, len(lines), len(lines[-1]))
    else:
        col16 = len(m.group(4))
        if line == 1:
            col16 -= len(_PROLOGUE)
        text_line = lines[line - 1] if line >= 1 else ""
        found = Compiled("error", message, max(line, 1), _code_points(text_line, max(col16, 0)))
    # A `}` that closed the wrapper early is where a module stops (the function ended there, and V8
    # reported what followed, or "Single function literal required")
    early = _unmatched_brace(script)
    if early is not None and (message.endswith("Single function literal required") or early[:2] <= (found.line, found.column)):
        return Compiled("error", "SyntaxError: Unexpected token '}'", early[0], early[1])
    return found


def _code_points(line: str, col16: int) -> int:
    """A UTF-16 column of V8 as a code-point column of ``line``."""
    if line.isascii():
        return col16
    units = 0
    for i, ch in enumerate(line):
        if units >= col16:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def _unmatched_brace(script: str) -> tuple[int, int] | None:
    """(line, column) of the first ``}`` with no ``{`` open before it, by the project's lexer
    (strings, templates, regexes and comments skipped): given as a function body, that ``}`` closes the
    function; a module reports it as ``Unexpected token '}'``."""
    if "}" not in script:
        return None
    from exec_grammar.lexer import TokenKind, iter_tokens

    depth = 0
    for tok in iter_tokens(script, trivia=False):
        if tok.kind is TokenKind.PUNCT:
            if tok.text == "{":
                depth += 1
            elif tok.text == "}":
                if depth == 0:
                    line = script.count("\n", 0, tok.start) + 1
                    return line, tok.start - (script.rfind("\n", 0, tok.start) + 1)
                depth -= 1
        elif tok.kind is TokenKind.TEMPLATE_HEAD:
            depth += 1
        elif tok.kind is TokenKind.TEMPLATE_TAIL:
            depth -= 1
    return None
