"""The tokens of a cell as the module rules read them (``ts_exports``, ``ts_module``): significant tokens
with byte offsets and whether a line break comes before each, the value of a string as strict code
reads it, where a statement may start (ASI, blocks, heads of loops, ``do … while``) and HTML-like
comments."""

from __future__ import annotations

import functools
import re
from typing import Any, NamedTuple

from exec_grammar.lexer import TokenKind, iter_tokens

__all__ = [
    "CLOSERS", "CONTINUING", "OPENERS", "RESERVED", "Tok", "begins_statement", "expects_more", "html_comment",
    "starts_statement", "strict_string", "tokens",
]

RESERVED = frozenset(
    "break case catch class const continue debugger default delete do else enum export extends false finally "
    "for function if import in instanceof new null return super switch this throw true try typeof var void "
    "while with yield let static implements interface package private protected public await".split()
)
#: keywords after which a line break does not end a statement
# (not `async`, `of`, `get`, `set`: names at a statement's level, and `async` before a line break is one)
CONTINUING = RESERVED - {"this", "super", "null", "true", "false"}
OPENERS = {"(", "[", "{"}
CLOSERS = {")", "]", "}"}
_BLOCK_OWNERS = frozenset(
    {"program", "statement_block", "if_statement", "else_clause", "for_statement", "for_in_statement",
     "while_statement", "do_statement", "try_statement", "catch_clause", "finally_clause", "labeled_statement",
     "function_declaration", "generator_function_declaration", "class_declaration", "switch_statement",
     "switch_case", "switch_default", "with_statement", "export_statement", "class_static_block"}
)
#: statements whose head a statement must follow (a do-while's `)` ends its statement)
_HEADS = frozenset({"if_statement", "while_statement", "for_statement", "for_in_statement", "with_statement",
                    "switch_statement"})
_ESCAPE_RE = re.compile(
    r"\\(?:(\r\n|[\n\r\u2028\u2029])|0(?![0-9])|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|u\{([0-9a-fA-F]+)\}|([^0-9xu])|(.))",
    re.S,
)



class Tok(NamedTuple):
    kind: TokenKind
    text: str
    start: int  # byte
    end: int  # byte
    newline: bool  # a line break between the previous significant token and this one



def strict_string(text: str) -> str | None:
    """The value of a string token, or None when strict code rejects it (a legacy octal escape, ``\\8``,
    a short ``\\x``/``\\u``, a code point past U+10FFFF, a raw line break)."""
    body = text[1:-1]
    if "\n" in _ESCAPE_RE.sub("", body) or "\r" in _ESCAPE_RE.sub("", body):
        return None
    out: list[str] = []
    last = 0
    for m in _ESCAPE_RE.finditer(body):
        out.append(body[last : m.start()])
        last = m.end()
        if m.group(4) is not None:  # \1-\9 (octal in sloppy code), \x or \u without their digits
            return None
        if m.group(1) is not None:
            continue
        s = m.group(0)
        if s == "\\0":
            out.append("\0")
        elif s[1] == "x":
            out.append(chr(int(s[2:], 16)))
        elif s[1] == "u":
            code = int(m.group(2) or s[2:], 16)
            if code > 0x10FFFF:
                return None
            out.append(chr(code))
        else:
            out.append({"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}.get(s[1], s[1]))
    out.append(body[last:])
    value = "".join(out)
    # a \uD83D\uDE00 pair is one character to JavaScript
    return value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass") if "\\u" in body else value


@functools.lru_cache(maxsize=4)
def tokens(data: bytes) -> list[Tok]:
    """The significant tokens of ``data`` with their byte offsets. Kept for the last few cells: the
    repair of a cell tree-sitter cannot read, its module rules and its import/export reading each need
    them, often for the same bytes. Shared: callers only read the list."""
    text = data.decode("utf-8", "surrogatepass")
    out: list[Tok] = []
    at = 0
    newline = False
    for t in iter_tokens(text):
        size = len(t.text.encode("utf-8", "surrogatepass")) if not t.text.isascii() else len(t.text)
        if t.kind in (TokenKind.WHITESPACE, TokenKind.COMMENT, TokenKind.HASHBANG):
            newline = newline or any(c in t.text for c in "\n\r\u2028\u2029")
        else:
            out.append(Tok(t.kind, t.text, at, at + size, newline))
            newline = False
        at += size
    return out



def _closes_block(root: Any, at: int) -> bool:
    """The ``}`` at byte ``at`` ends a statement (a block, a body of a declaration), not an expression."""
    node = root.descendant_for_byte_range(at, at + 1)
    owner = node.parent if node is not None else None
    if owner is None:
        return False
    if owner.type == "statement_block":
        owner = owner.parent
    return owner is not None and owner.type in _BLOCK_OWNERS


def begins_statement(t: Tok) -> bool:
    """``t`` cannot continue an expression from the line before (so a line break ends it there)."""
    if t.kind is TokenKind.PUNCT:
        return t.text in ("{", "!", "~", "++", "--", ";")
    if t.kind is TokenKind.IDENT:
        return t.text not in ("in", "instanceof", "of")
    return t.kind in (TokenKind.NUMBER, TokenKind.STRING, TokenKind.PRIVATE)


def expects_more(prev: Tok) -> bool:
    """After ``prev`` an expression is not complete (an operator, a comma, an opening bracket)."""
    if prev.kind is TokenKind.PUNCT:
        return prev.text not in (")", "]", "}", "++", "--")
    return prev.kind is TokenKind.IDENT and prev.text in CONTINUING


def _match_back(toks: list[Tok], k: int) -> int:
    """The index of the bracket that ``toks[k]`` (a closing one) closes, or -1."""
    depth = 0
    for j in range(k, -1, -1):
        t = toks[j].text
        if t in CLOSERS:
            depth += 1
        elif t in OPENERS:
            depth -= 1
            if depth == 0:
                return j
    return -1


def _ends_do_while(toks: list[Tok], k: int) -> bool:
    """The ``)`` at ``toks[k]`` ends ``do … while (…)`` (a statement may follow it at once), read from
    the tokens (tree-sitter may take it for the head of a ``while`` loop around what follows)."""
    open_ = _match_back(toks, k)
    if open_ < 2 or toks[open_ - 1].text != "while":
        return False
    j = open_ - 2
    if toks[j].text == "}":
        start = _match_back(toks, j)
        return start > 0 and toks[start - 1].text == "do"
    # the body ends with `;`, or where a line break before `while` ends it (`do n++` / `while (…)`)
    asi = toks[j].text != ";"
    if asi and (not toks[open_ - 1].newline or expects_more(toks[j])):
        return False
    if not asi:
        j -= 1
    while j >= 0:  # back to the start of the body statement, at its own depth
        tok = toks[j]
        t = tok.text
        if t in CLOSERS:
            j = _match_back(toks, j) - 1
            continue
        if t in (";", "{") or t in OPENERS:
            return False
        if t == "do":
            return True
        if asi and tok.newline and j and toks[j - 1].text != "do" and not expects_more(toks[j - 1]):
            return False  # a line break ended an earlier statement: this body's `do` is not before it
        j -= 1
    return False


def _closes_head(root: Any, at: int) -> bool:
    """The ``)`` at byte ``at`` closes the head of ``if``, ``while``, ``for``, ``with`` or ``switch``: a
    statement must follow it."""
    node = root.descendant_for_byte_range(at, at + 1)
    owner = node.parent if node is not None else None
    if owner is not None and owner.type == "parenthesized_expression":
        owner = owner.parent
    return owner is not None and owner.type in _HEADS


def starts_statement(toks: list[Tok], i: int, root: Any) -> bool:
    if i == 0:
        return True
    prev = toks[i - 1]
    if prev.text == ";":
        return True
    if prev.text == "}" and _closes_block(root, prev.start):
        return True
    if prev.text == ")" and _ends_do_while(toks, i - 1):
        return True  # a do-while needs no `;` or line break after it
    if not toks[i].newline:
        return False
    if prev.kind is TokenKind.IDENT:
        return prev.text not in CONTINUING
    if prev.kind is TokenKind.PUNCT:
        if prev.text == ")":
            return not _closes_head(root, prev.start)
        return prev.text in ("]", "}", "++", "--")
    return prev.kind is not TokenKind.TEMPLATE_HEAD and prev.kind is not TokenKind.TEMPLATE_MIDDLE



def html_comment(data: bytes) -> int | None:
    """The byte of the first HTML-like comment in code, by the tokens: ``<!--`` anywhere, ``-->`` first
    on its line (or first in the cell)."""
    toks = tokens(data)
    for k, t in enumerate(toks):
        if t.text == "<" and k + 2 < len(toks):
            a, b = toks[k + 1], toks[k + 2]
            if a.text == "!" and b.text == "--" and a.start == t.end and b.start == a.end:
                return t.start
        elif t.text == "--" and (k == 0 or t.newline) and k + 1 < len(toks):
            a = toks[k + 1]
            if a.text == ">" and a.start == t.end:
                return t.start
    return None

