"""The lexer backend: tool calls found from tokens alone, for scripts no parser accepts.

A call is the token shape ``tools`` (a whole identifier, not after ``.``/``?.``/``new``), then ``.`` or
``?.`` and a name, or ``[`` key ``]`` (a single string / plain template key names the tool, any other
key is the computed name ``"*"``), then an optional ``?.``, then ``(``. Whitespace, newlines and comments
may sit between the tokens. The argument text runs from the first token after ``(`` to the last token
before the first top-level ``,`` or the closing ``)``.

One left-to-right pass keeps a stack of open brackets; a call's ``(`` carries the call record, which is
completed when that paren closes. Nested calls (in arguments, ``${…}``, callbacks) are found in the same
pass, so the cost is linear in the number of tokens however deep the nesting. A closer with no matching
opener is skipped; a closer that skips over other openers closes them (their calls end there); calls
still open at the end of input end there. All three are reported as a parse error.

Known limits: a parenthesised callee ``(tools.x)(…)`` is not recognised (tree-sitter recognises it), and
the regex/division limits of :mod:`exec_grammar.lexer` apply.
"""

from __future__ import annotations

from exec_grammar.backends import BackendResult, Binding, LineIndex, RawCall
from exec_grammar.escapes import escapes_in_tokens, suspect
from exec_grammar.lexer import Token, TokenKind, iter_tokens
from exec_grammar.literals import cook_template_text, decode_string_literal
from exec_grammar.model import ParseError

__all__ = ["parse_calls", "const_bindings"]

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")": "(", "]": "[", "}": "{"}

# Stages of a call candidate after the `tools` identifier.
_AFTER_TOOLS, _AFTER_DOT, _AFTER_NAME, _AFTER_OPTIONAL = range(4)


class _Call:
    __slots__ = ("name", "start", "arg_start", "arg_end", "spread", "prev_end")

    def __init__(self, name: str, start: int) -> None:
        self.name = name
        self.start = start
        self.arg_start = -1
        self.arg_end = -1
        self.spread = False
        self.prev_end = -1


class _Frame:
    """One open bracket. ``call`` is set on a call's ``(``; ``key_of`` on a ``tools[`` key bracket."""

    __slots__ = ("opener", "call", "key_of", "key_tokens")

    def __init__(self, opener: str, call: _Call | None = None, key_of: int = -1) -> None:
        self.opener = opener
        self.call = call
        self.key_of = key_of
        self.key_tokens: list[Token] | None = [] if key_of >= 0 else None


def _key_name(tokens: list[Token]) -> str:
    if len(tokens) == 1:
        t = tokens[0]
        if t.kind is TokenKind.STRING:
            name = decode_string_literal(t.text)
            return "*" if name is None else name
        if t.kind is TokenKind.TEMPLATE:
            cooked = cook_template_text(t.text[1:-1])
            return "*" if cooked is None else cooked
    return "*"


def parse_calls(script: str) -> BackendResult:
    """Every ``tools`` call the token stream shows; a parse error when the tokens are not balanced."""
    calls: list[RawCall] = []
    stack: list[_Frame] = []
    open_counts = {"(": 0, "[": 0, "{": 0, "${": 0}
    problem: tuple[str, int] | None = None
    # Candidate state: the `tools` token's start, the stage, and the name once known.
    cand_start = -1
    cand_stage = -1
    cand_name = ""
    prev_text = ""
    prev_end = 0
    K = TokenKind

    def finish(frame: _Frame, end: int) -> None:
        call = frame.call
        if call is None:
            return
        a0 = call.arg_start
        a1 = call.arg_end if call.arg_end >= 0 else call.prev_end
        if a0 < 0:
            a0 = a1 = end
        calls.append(RawCall(call.name, call.start, end, a0, max(a0, a1), call.spread))

    toks: list[Token] = []
    for tok in iter_tokens(script, trivia=False):
        toks.append(tok)
        kind, start, end, text = tok
        if kind is K.ERROR and problem is None:
            problem = (f"unreadable text {text[:20]!r}", start)
        top = stack[-1] if stack else None
        # Argument bookkeeping for the innermost open call paren.
        if top is not None:
            if top.call is not None:
                call = top.call
                if call.arg_start < 0 and text != ")":
                    call.arg_start = start
                    call.spread = text == "..."
                elif text == "," and call.arg_end < 0:
                    call.arg_end = prev_end
            elif top.key_tokens is not None and text != "]":
                top.key_tokens.append(tok)
        # Advance or drop the call candidate.
        new_call: _Call | None = None
        key_frame_of = -1
        if cand_stage >= 0:
            stage = cand_stage
            cand_stage = -1
            if stage == _AFTER_TOOLS:
                if text == "." or text == "?.":
                    cand_stage = _AFTER_DOT
                elif text == "[":
                    key_frame_of = cand_start
            elif stage == _AFTER_DOT:
                if kind is K.IDENT:
                    cand_name, cand_stage = text, _AFTER_NAME
                elif kind is K.PRIVATE:
                    cand_name, cand_stage = text, _AFTER_NAME
                elif text == "[":
                    # tools?.[key]
                    key_frame_of = cand_start
            elif stage == _AFTER_NAME or stage == _AFTER_OPTIONAL:
                if text == "(":
                    new_call = _Call(cand_name, cand_start)
                elif text == "?." and stage == _AFTER_NAME:
                    cand_stage = _AFTER_OPTIONAL
        if kind is K.IDENT and text == "tools" and prev_text not in (".", "?.", "new"):
            cand_start, cand_stage = start, _AFTER_TOOLS
        # Brackets.
        if kind is K.PUNCT and (text in _OPEN):
            if key_frame_of >= 0:
                stack.append(_Frame(text, key_of=key_frame_of))
            else:
                stack.append(_Frame(text, new_call))
            open_counts[text] += 1
        elif kind is K.TEMPLATE_HEAD:
            stack.append(_Frame("${"))
            open_counts["${"] += 1
        elif kind is K.TEMPLATE_MIDDLE or kind is K.TEMPLATE_TAIL or (kind is K.PUNCT and text in _CLOSE):
            want = "${" if kind is not K.PUNCT else _CLOSE[text]
            if open_counts[want] == 0:
                if problem is None:
                    problem = (f"unmatched {text[:1]!r}", start)
            else:
                while stack:
                    frame = stack.pop()
                    open_counts[frame.opener] -= 1
                    if frame.opener == want:
                        if frame.call is not None:
                            if frame.call.arg_start >= 0 and frame.call.arg_end < 0:
                                frame.call.arg_end = prev_end
                            finish(frame, end)
                        elif frame.key_tokens is not None:
                            cand_start, cand_name, cand_stage = (
                                frame.key_of,
                                _key_name(frame.key_tokens),
                                (_AFTER_NAME),
                            )
                        break
                    if problem is None:
                        problem = (f"unclosed {frame.opener!r} before {text[:1]!r}", start)
                    if frame.call is not None:
                        frame.call.prev_end = prev_end
                        finish(frame, prev_end)
            if kind is K.TEMPLATE_MIDDLE:
                stack.append(_Frame("${"))
                open_counts["${"] += 1
        if stack and stack[-1].call is not None:
            stack[-1].call.prev_end = end
        prev_text = text
        prev_end = end
    if stack:
        if problem is None:
            problem = (f"unclosed {stack[-1].opener!r} at the end of input", len(script))
        while stack:
            frame = stack.pop()
            if frame.call is not None:
                finish(frame, len(script))
    error = None
    if problem is not None:
        pos = LineIndex(script).position(problem[1])
        error = ParseError(problem[0], pos.line, pos.column)
    escapes = escapes_in_tokens(toks) if "tools" in script and suspect(script) else []
    return BackendResult(calls, error, binding_of=_TokenBindings(script, toks), escapes=escapes)


# --- const bindings from the same tokens (used by the entries of a lexer-read script) ------------------


class _TokenBindings:
    """``name -> Binding`` computed on first use from tokens the call pass already produced."""

    __slots__ = ("script", "toks", "table")

    def __init__(self, script: str, toks: list[Token]) -> None:
        self.script = script
        self.toks = toks
        self.table: dict[str, Binding | None] | None = None

    def __call__(self, name: str, at: int | None = None) -> Binding | None:  # noqa: ARG002 (no scopes)
        if self.table is None:
            self.table = const_bindings(self.script, self.toks)
        return self.table.get(name)


_DECLARATION_KEYWORDS = frozenset({"const", "let", "var", "function", "class"})


def _newline_between(source: str, a: Token, b: Token) -> bool:
    gap = source[a.end : b.start]
    return "\n" in gap or "\r" in gap or "\u2028" in gap or "\u2029" in gap


def _template_end(toks: list[Token], i: int) -> int:
    """Index after the template starting at toks[i] (a TEMPLATE or TEMPLATE_HEAD token)."""
    if toks[i].kind is TokenKind.TEMPLATE:
        return i + 1
    depth = 0
    while i < len(toks):
        k = toks[i].kind
        if k is TokenKind.TEMPLATE_HEAD:
            depth += 1
        elif k is TokenKind.TEMPLATE_TAIL:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def const_bindings(script: str, toks: list[Token] | None = None) -> dict[str, Binding | None]:
    """Every declared name -> its binding when it is declared exactly once, by ``const``, with a string
    or template initialiser; None when it is declared more than once or otherwise. ``toks``: the
    script's significant tokens when the caller already has them."""
    if toks is None:
        toks = list(iter_tokens(script, trivia=False))
    counts: dict[str, int] = {}
    found: dict[str, Binding] = {}
    n = len(toks)
    i = 0
    while i < n:
        tok = toks[i]
        prev = toks[i - 1].text if i else ""
        if tok.kind is TokenKind.IDENT and tok.text in _DECLARATION_KEYWORDS and prev not in (".", "?."):
            keyword = tok.text
            i += 1
            while i < n and toks[i].kind is TokenKind.IDENT:
                name = toks[i].text
                counts[name] = counts.get(name, 0) + 1
                i += 1
                if keyword != "const" or i >= n or toks[i].text != "=":
                    break
                i += 1
                binding, i = _initialiser(script, toks, i)
                if binding is not None:
                    found[name] = binding
                if i < n and toks[i].text == ",":
                    i += 1
                    continue
                break
            continue
        i += 1
    return {name: (found.get(name) if c == 1 else None) for name, c in counts.items()}


def _initialiser(script: str, toks: list[Token], i: int) -> tuple[Binding | None, int]:
    n = len(toks)
    if i >= n:
        return None, i
    tok = toks[i]
    raw = False
    start_tok = i
    if tok.kind is TokenKind.IDENT and tok.text == "String" and i + 3 < n:
        if toks[i + 1].text == "." and toks[i + 2].text == "raw":
            if toks[i + 3].kind in (TokenKind.TEMPLATE, TokenKind.TEMPLATE_HEAD):
                raw = True
                i += 3
                tok = toks[i]
    if tok.kind is TokenKind.STRING:
        end = i + 1
    elif tok.kind in (TokenKind.TEMPLATE, TokenKind.TEMPLATE_HEAD):
        end = _template_end(toks, i)
    else:
        return None, i + 1
    # The initialiser must be the whole expression: `"a" + b` or `"x".trim()` is not a literal.
    if end < n:
        nxt = toks[end]
        if nxt.text not in (";", ",", "}", ")") and not (
            nxt.kind is TokenKind.IDENT and _newline_between(script, toks[end - 1], nxt)
        ):
            return None, end
    source = script[toks[i].start : toks[end - 1].end]
    del start_tok
    if tok.kind is TokenKind.STRING:
        return Binding(decode_string_literal(source)), end
    if tok.kind is TokenKind.TEMPLATE and not raw:
        return Binding(cook_template_text(source[1:-1])), end
    return Binding(None, source, raw), end
