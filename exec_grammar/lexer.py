"""A hand-written JavaScript lexer: total (never raises), linear time, and a round trip.

Why it exists: a script that tree-sitter rejects never ran as written, yet a reader still wants to see
which tools it tried to call; and when tree-sitter cannot be imported the analyzer must still work. The
lexer is also the third voice in the differential tests. Joining the texts of its tokens gives the input
back exactly; unreadable text becomes ``ERROR`` tokens.

What it skips correctly: ``//`` and ``/* */`` comments, a ``#!`` line at the very start, ``'…'`` and
``"…"`` strings (escapes, ``\\``-newline continuations), template literals with nested ``${…}`` (a brace
stack; templates, strings, regexes and comments inside an interpolation are lexed as code), and regex
literals (``[…]`` classes in which ``/`` does not end the regex, escapes, flags).

**Regex or division.** A ``/`` that does not start a comment is a regex when the previous significant
token cannot end an expression, and a division when it can:

- regex: at the start of input; after any punctuator or operator except the ones below; after the
  keywords ``return typeof instanceof in of new delete void throw case do else await yield extends``;
  after the ``)`` that closes ``if (…)``, ``while (…)``, ``for (…)``, ``for await (…)``, ``with (…)``
  (a paren stack remembers which parens are control heads); after a ``}`` that closes a block (a brace
  stack classifies each ``{``: a block after ``) ; { } =>``, a non-keyword identifier such as a class
  name, ``else do try finally``, or at the start; otherwise an expression);
- division: after an identifier (also a keyword used as a property name, ``x.return``), a number, a
  string, a template, a regex, ``this super null true false``, ``]``, a ``)`` of an expression or call,
  a ``}`` that closes an object literal, and after postfix ``++``/``--``.

Known limits of this rule (each is legal but rare in exec scripts; tree-sitter, the primary parser,
gets them right): a ``}`` that closes a function *expression* or arrow body followed by ``/`` on the next
line is read as a regex (acorn: division); ``++``/``--`` before a regex (``++/x/.lastIndex``) are taken
as postfix; a ``{`` after ``:`` is taken as an object literal even after a label or ``case x:``. An identifier
written with ``\\u`` escapes is one ``IDENT`` token whose text is as written (:func:`identifier_name`
gives its name).

**Totality and linear time.** Every scanning regex either always matches or has alternatives that are
disjoint by their first character, so no pattern backtracks more than a constant. An unterminated
string, regex or line comment becomes an ``ERROR`` token that reaches as far as the scan went (the line
end or the end of input), an unterminated block comment or template reaches the end of input; in every
case the text scanned is consumed, so no character is scanned more than a constant number of times.
Brackets are tracked on explicit stacks (no recursion), so deep nesting costs nothing extra.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import StrEnum
from typing import NamedTuple

__all__ = ["TokenKind", "Token", "iter_tokens", "tokenize", "SIGNIFICANT"]


class TokenKind(StrEnum):
    WHITESPACE = "whitespace"
    COMMENT = "comment"
    HASHBANG = "hashbang"
    STRING = "string"
    #: a template without ``${}``
    TEMPLATE = "template"
    #: `` `text${ `` / ``}text${`` / ``}text` ``
    TEMPLATE_HEAD = "template_head"
    TEMPLATE_MIDDLE = "template_middle"
    TEMPLATE_TAIL = "template_tail"
    REGEX = "regex"
    NUMBER = "number"
    IDENT = "ident"
    PRIVATE = "private"
    PUNCT = "punct"
    ERROR = "error"


class Token(NamedTuple):
    kind: TokenKind
    start: int
    end: int
    #: the token's text (``source[start:end]``)
    text: str


SIGNIFICANT = frozenset(TokenKind) - {TokenKind.WHITESPACE, TokenKind.COMMENT, TokenKind.HASHBANG}

_LT = "\n\r\u2028\u2029"
_WS_RE = re.compile(r"[^\S\n\r\u2028\u2029]*[\s\ufeff]*")
_LINE_END_RE = re.compile(r"[^\n\r\u2028\u2029]*")
#: an identifier, its characters written plainly or as ``\\uXXXX`` / ``\\u{X…}`` escapes (each alternative
#: starts with its own character: no backtracking past a constant)
_IDENT_RE = re.compile(
    r"(?:[A-Za-z_$]|[^\x00-\x7f\s\ufeff]|\\u(?:[0-9a-fA-F]{4}|\{[0-9a-fA-F]++\}))"
    r"(?:[\w$]|[^\x00-\x7f\s\ufeff]|\\u(?:[0-9a-fA-F]{4}|\{[0-9a-fA-F]++\}))*"
)
_ID_ESCAPE_RE = re.compile(r"\\u(?:([0-9a-fA-F]{4})|\{([0-9a-fA-F]+)\})")


def identifier_name(text: str) -> str:
    """An identifier token's name as the engine binds it: ``\\u0062`` and ``\\u{62}`` are ``b``
    (``function \\u{62}(){}`` declares ``b``). An escape past U+10FFFF is left as written (the engine
    rejects the token anyway)."""
    if "\\" not in text:
        return text

    def char(m: re.Match[str]) -> str:
        code = int(m.group(1) or m.group(2), 16)
        return chr(code) if code <= 0x10FFFF else m.group(0)

    return _ID_ESCAPE_RE.sub(char, text)
_NUMBER_RE = re.compile(
    r"(?:0[xX][\da-fA-F_]*|0[oO][0-7_]*|0[bB][01_]*|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?[\d_]*)?)n?"
)
_PUNCT_RE = re.compile(
    r">>>=|\.\.\.|===|!==|\*\*=|<<=|>>=|>>>|&&=|\|\|=|\?\?=|=>|==|!=|<=|>=|&&|\|\||\?\?|\?\.(?!\d)"
    r"|\+\+|--|\+=|-=|\*=|%=|&=|\|=|\^=|\*\*|<<|>>|[{}()\[\];,<>+\-*%&|^!~?:=.@]"
)
_STRING_RES = {
    "'": re.compile(r"'[^'\\\n\r]*+(?:\\(?:\r\n|[\s\S])[^'\\\n\r]*+)*+(')?"),
    '"': re.compile(r'"[^"\\\n\r]*+(?:\\(?:\r\n|[\s\S])[^"\\\n\r]*+)*+(")?'),
}
#: template text from after ` or } up to and including ` or ${ (or to the end of input: unterminated)
_TEMPLATE_RE = re.compile(r"[^`\\$]*+(?:(?:\\[\s\S]|\$(?!\{))[^`\\$]*+)*+(`|\$\{)?")
_REGEX_RE = re.compile(
    r"/(?:[^/\\\[\n\r\u2028\u2029]|\\[^\n\r\u2028\u2029]|\[(?:[^\]\\\n\r\u2028\u2029]|\\[^\n\r\u2028\u2029])*\])+"
    r"(/[\w$]*)?"
)

_REGEX_AFTER_KEYWORDS = frozenset(
    "return typeof instanceof in of new delete void throw case do else await yield extends".split()
)
_VALUE_KEYWORDS = frozenset("this super null true false".split())
_BLOCK_AFTER_KEYWORDS = frozenset("else do try finally".split())
_CONTROL_KEYWORDS = frozenset("if while for with".split())
_KEYWORDS = (
    _REGEX_AFTER_KEYWORDS
    | _VALUE_KEYWORDS
    | _BLOCK_AFTER_KEYWORDS
    | _CONTROL_KEYWORDS
    | frozenset(
        "var let const function class async static get set import export switch catch default break "
        "continue debugger".split()
    )
)

_BLOCK, _EXPR, _TEMPLATE = 0, 1, 2


def tokenize(source: str) -> list[Token]:
    return list(iter_tokens(source))


#: Whitespace and complete comments, as one run (the fast path skips them in one C call). An unclosed
#: ``/*`` is not matched here; the main loop turns it into an ERROR token.
_TRIVIA_RE = re.compile(r"(?:[\s\ufeff]++|//[^\n\r\u2028\u2029]*+|/\*[^*]*+\*++(?:[^/*][^*]*+\*++)*+/)++")
#: One trivia token at a time, for callers that want whitespace and comments as tokens.
_TRIVIA_PART_RE = re.compile(
    r"(?P<ws>[\s\ufeff]++)|(?P<comment>//[^\n\r\u2028\u2029]*+|/\*[^*]*+\*++(?:[^/*][^*]*+\*++)*+/)"
)
#: First character -> how the main loop reads the token.
_IDENT_START, _DIGIT, _QUOTE, _BACKTICK, _SLASH, _CLOSE_BRACE, _HASH, _DOT, _OTHER = range(9)
_DISPATCH: dict[str, int] = {}
for _c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$":
    _DISPATCH[_c] = _IDENT_START
for _c in "0123456789":
    _DISPATCH[_c] = _DIGIT
_DISPATCH.update(
    {"'": _QUOTE, '"': _QUOTE, "`": _BACKTICK, "/": _SLASH, "}": _CLOSE_BRACE, "#": _HASH, ".": _DOT}
)


def iter_tokens(source: str, trivia: bool = True) -> Iterator[Token]:
    """Yield every token of ``source``; with ``trivia=False`` whitespace and comments are skipped (the
    call finder's fast path). Never raises."""
    n = len(source)
    pos = 0
    K = TokenKind
    # State for the regex/division decision (see the module docstring).
    regex_ok = True
    prev_text = ""  # text of the previous significant token
    prev_kind: TokenKind | None = None
    prev_prev_text = ""
    paren_stack: list[bool] = []  # True: the parens of a control head (if/while/for/with)
    brace_stack: list[int] = []  # _BLOCK, _EXPR or _TEMPLATE
    trivia_match = _TRIVIA_RE.match
    dispatch = _DISPATCH.get
    if source.startswith("#!"):
        m = _LINE_END_RE.match(source, 2)
        end = m.end() if m else n
        if trivia:
            yield Token(K.HASHBANG, 0, end, source[:end])
        pos = end
    while pos < n:
        t = trivia_match(source, pos)
        if t is not None:
            end = t.end()
            if trivia:
                for part in _TRIVIA_PART_RE.finditer(source, pos, end):
                    yield Token(
                        K.WHITESPACE if part.lastgroup == "ws" else K.COMMENT,
                        part.start(),
                        part.end(),
                        part.group(),
                    )
            pos = end
            if pos >= n:
                return
        c = source[pos]
        kind: TokenKind
        how = dispatch(c, _OTHER)
        if how == _IDENT_START:
            m = _IDENT_RE.match(source, pos)
            end = m.end() if m else pos + 1
            kind = K.IDENT
        elif how == _DIGIT or (how == _DOT and source[pos + 1 : pos + 2].isdigit()):
            m = _NUMBER_RE.match(source, pos)
            end = m.end() if m else pos + 1
            kind = K.NUMBER
        elif how == _SLASH:
            nxt = source[pos + 1 : pos + 2]
            if nxt == "*":
                # An unterminated block comment (a closed one is trivia): the rest of the input.
                yield Token(K.ERROR, pos, n, source[pos:])
                return
            if regex_ok:
                m = _REGEX_RE.match(source, pos)
                if m is not None and m.group(1) is not None:
                    end = m.end()
                    kind = K.REGEX
                else:
                    # Unterminated regex: consume to the end of the line (the scan went that far).
                    m2 = _LINE_END_RE.match(source, pos)
                    end = m2.end() if m2 else n
                    if end == pos:
                        end = pos + 1
                    kind = K.ERROR
            else:
                end = pos + 2 if nxt == "=" else pos + 1
                kind = K.PUNCT
        elif how == _QUOTE:
            m = _STRING_RES[c].match(source, pos)
            end = m.end() if m else pos + 1
            kind = K.STRING if m is not None and m.group(1) is not None else K.ERROR
        elif how == _BACKTICK or (how == _CLOSE_BRACE and brace_stack and brace_stack[-1] == _TEMPLATE):
            # a template chunk: after its opening backtick, or after the `}` that closes a `${…}`
            opening = how == _BACKTICK
            if not opening:
                brace_stack.pop()
            m = _TEMPLATE_RE.match(source, pos + 1)
            end = m.end() if m else n
            closer = m.group(1) if m else None
            if closer == "`":
                kind = K.TEMPLATE if opening else K.TEMPLATE_TAIL
            elif closer == "${":
                kind = K.TEMPLATE_HEAD if opening else K.TEMPLATE_MIDDLE
                brace_stack.append(_TEMPLATE)
            else:
                yield Token(K.ERROR, pos, n, source[pos:])
                return
        elif how == _HASH and _IDENT_RE.match(source, pos + 1):
            m = _IDENT_RE.match(source, pos + 1)
            end = m.end() if m else pos + 1
            kind = K.PRIVATE
        else:
            m = _PUNCT_RE.match(source, pos)
            if m is not None:
                end = m.end()
                kind = K.PUNCT
            else:
                m = _IDENT_RE.match(source, pos)  # a non-ASCII identifier
                if m is not None:
                    end = m.end()
                    kind = K.IDENT
                else:
                    end = pos + 1
                    kind = K.ERROR
        text = source[pos:end]
        # --- update the regex/division state from this significant token ---
        if kind is K.IDENT:
            if prev_text == "." or prev_text == "?.":
                regex_ok = False
            else:
                regex_ok = text in _REGEX_AFTER_KEYWORDS
        elif kind is K.PUNCT:
            if text == "(":
                control = prev_kind is K.IDENT and (
                    prev_text in _CONTROL_KEYWORDS or (prev_text == "await" and prev_prev_text == "for")
                )
                paren_stack.append(control)
                regex_ok = True
            elif text == ")":
                regex_ok = paren_stack.pop() if paren_stack else False
            elif text == "{":
                brace_stack.append(_BLOCK if _opens_block(prev_kind, prev_text) else _EXPR)
                regex_ok = True
            elif text == "}":
                regex_ok = (brace_stack.pop() == _BLOCK) if brace_stack else True
            elif text == "]" or text == "++" or text == "--":
                regex_ok = False
            else:
                regex_ok = True
        elif kind is K.TEMPLATE_HEAD or kind is K.TEMPLATE_MIDDLE or kind is K.ERROR:
            regex_ok = True
        else:
            regex_ok = False
        prev_prev_text = prev_text
        prev_text = text
        prev_kind = kind
        yield Token(kind, pos, end, text)
        pos = end


def _opens_block(prev_kind: TokenKind | None, prev_text: str) -> bool:
    if prev_kind is None:
        return True
    if prev_kind is TokenKind.PUNCT:
        return prev_text in (")", ";", "{", "}", "=>")
    if prev_kind is TokenKind.IDENT:
        if prev_text in _BLOCK_AFTER_KEYWORDS:
            return True
        # A non-keyword identifier before `{` is a class name or `extends X` (class body).
        return prev_text not in _KEYWORDS
    return prev_kind is TokenKind.ERROR
