"""Uses of ``tools`` that are not a direct call: where a shell command may hide.

``const f = tools.exec_command; await f({cmd})``, ``const {exec_command} = tools``,
``tools.exec_command.call(null, {…})``, ``run(tools)``: the script runs commands that no call names, so
its shell command list would be silently partial. Issue 2 §7 ("a partial list would silently drop the
unreadable commands") makes the whole script the one shell command instead; these findings are what
triggers that (``exec_grammar.entries``), and they say where.

Backend-independent and cheap: a regex over the text settles nearly every script (each ``tools`` is
followed by ``.NAME(`` or ``["NAME"](``); only a script with some other ``tools`` is tokenized by the
(linear, total) lexer, which tells text in strings and comments from code.
"""

from __future__ import annotations

import re

from exec_grammar.lexer import Token, TokenKind, iter_tokens
from exec_grammar.literals import decode_string_literal
from exec_grammar.model import Finding

__all__ = ["ESCAPE_CODE", "SHADOW_CODE", "escapes_in_tokens", "suspect", "tool_escapes"]

#: The finding code; ``entries`` falls back to the whole script when one is present.
ESCAPE_CODE = "tools-escape"
#: The finding code for a ``tools`` the script declares itself (``const tools = {…}``, a parameter…):
#: in its scope ``tools.x(…)`` calls that object, not a code-mode tool, so no call is listed there.
SHADOW_CODE = "tools-shadowed"

_TOOLS_RE = re.compile(r"tools(?![\w$])")
#: What follows a ``tools`` that is plainly a direct call: ``.NAME(``, ``?.NAME?.(``, ``["NAME"](``.
_DIRECT_CALL_RE = re.compile(
    r"""\s*(?:\??\.\s*[A-Za-z_$][\w$]*|\[\s*(?:"[^"\\\n]*"|'[^'\\\n]*')\s*\])\s*(?:\?\.\s*)?\("""
)
_DECLARERS = frozenset({"const", "let", "var", "function", "class"})
_OPEN = {"(": ")", "[": "]", "{": "}"}


def suspect(script: str) -> bool:
    """True unless every ``tools`` in the text is plainly followed by a direct call (regex only)."""
    for m in _TOOLS_RE.finditer(script):
        start = m.start()
        if start and (script[start - 1].isalnum() or script[start - 1] in "_$."):
            continue  # mytools / a.tools: not the global
        if not _DIRECT_CALL_RE.match(script, m.end()):
            return True
    return False


def _is_call_at(toks: list[Token], j: int) -> bool:
    """``toks[j]`` starts the argument list of a call: ``(`` or ``?.(``."""
    if j < len(toks) and toks[j].text == "(":
        return True
    return j + 1 < len(toks) and toks[j].text == "?." and toks[j + 1].text == "("


def tool_escapes(script: str) -> list[Finding]:
    """Every use of the global ``tools`` that is neither a direct call nor a reference to another
    tool: a non-call reference to ``tools.exec_command`` (alias, ``.call``/``.apply``/``.bind``), a
    computed ``tools[…]`` that is not called, and ``tools`` itself used as a value (an argument, a
    destructuring source, an assignment). Linear: one token pass, brackets matched with a stack."""
    if "tools" not in script or not suspect(script):
        return []
    return escapes_in_tokens(list(iter_tokens(script, trivia=False)))


#: ``tools.X.Y(…)``, ``tools.X.call(…)``, ``tools.X[…]``: a member of a tool is reached, so the script may
#: run a tool no direct call names (a namespaced tool: ``tools.ns.tool(…)`` would otherwise be silently dropped).
AS_OBJECT = "a tool used as an object (tools.X.Y, tools.X.call)"


def escapes_in_tokens(tokens: list[Token]) -> list[Finding]:
    """:func:`tool_escapes` over a token list the caller already has (the lexer backend's)."""
    toks = [t for t in tokens if t.kind not in (TokenKind.WHITESPACE, TokenKind.COMMENT, TokenKind.HASHBANG)]
    closer: dict[int, int] = {}
    stack: list[int] = []
    for i, t in enumerate(toks):
        if t.kind is TokenKind.PUNCT:
            if t.text in _OPEN:
                stack.append(i)
            elif t.text in (")", "]", "}") and stack and _OPEN[toks[stack[-1]].text] == t.text:
                closer[stack.pop()] = i
    out: list[Finding] = []
    for i, t in enumerate(toks):
        if t.kind is not TokenKind.IDENT or t.text != "tools":
            continue
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if prev is not None and (prev.text in (".", "?.") or prev.text in _DECLARERS):
            continue  # a property of something else, or a local declaration
        if nxt is not None and nxt.text == ":" and prev is not None and prev.text in ("{", ","):
            continue  # an object key
        if nxt is not None and nxt.text in (".", "?.") and i + 2 < len(toks):
            name = toks[i + 2].text
            if _is_call_at(toks, i + 3):
                continue
            after = toks[i + 3].text if i + 3 < len(toks) else ""
            if after in (".", "?.", "["):
                out.append(Finding(ESCAPE_CODE, AS_OBJECT, t.start))
                continue
            if name != "exec_command":
                continue
            out.append(Finding(ESCAPE_CODE, "tools.exec_command used without being called", t.start))
        elif nxt is not None and nxt.text == "[" and (i + 1) in closer:
            end = closer[i + 1]
            if _is_call_at(toks, end + 1):
                continue  # tools[…](…) is a call (named "*" when computed)
            key = toks[i + 2 : end]
            if len(key) == 1 and key[0].kind is TokenKind.STRING:
                if decode_string_literal(key[0].text) != "exec_command":
                    continue
            out.append(Finding(ESCAPE_CODE, "tools[…] used without being called", t.start))
        else:
            out.append(Finding(ESCAPE_CODE, "tools used as a value", t.start))
    return out
