"""What the strict-mode checks share: node type sets, the error they raise, small node helpers."""

from __future__ import annotations

import re
from typing import Any

_FUNCTION_TYPES = frozenset(
    {
        "function_declaration",
        "function_expression",
        "function",
        "generator_function",
        "generator_function_declaration",
        "arrow_function",
        "method_definition",
    }
)

_GENERATORS = frozenset({"generator_function", "generator_function_declaration"})

_LOOPS = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})

_STRICT_RESERVED = frozenset(
    {"implements", "interface", "let", "package", "private", "protected", "public", "static", "yield"}
)

_NAME_NODES = frozenset({"identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern"})

_KEYWORDS = frozenset(
    "break case catch class const continue debugger default delete do else export extends finally for "
    "function if import in instanceof new return super switch this throw try typeof var void while with "
    "null true false enum".split()
)

_ID_CONTINUE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$\\")

#: Words that cannot begin an operand: after ``await`` V8 reports them (``await\nif (x)``) where
#: tree-sitter reads the identifier ``await`` and a new statement. ``let`` is a strict-mode reserved word.
_NO_OPERAND_WORDS = frozenset(
    b"break case catch const continue debugger default do else enum export extends finally for if in "
    b"instanceof let return switch throw try var while with".split()
)
_WORD_AT_RE = re.compile(rb"[A-Za-z_$][\w$]*")
#: ``await`` then a word that cannot begin its operand (``await`` / ``if (x)``), looked up only after
#: one of these first bytes; or then a binary-only operator (``await * x``).
_NO_OPERAND_FIRST = frozenset(b"bcdefilrstvw")
_NO_OPERAND_RE = re.compile(rb"(?:" + b"|".join(sorted(_NO_OPERAND_WORDS)) + rb")(?![\w$])")
_BINARY_ONLY = frozenset(b"*%<>&|^")


def _after_trivia(data: bytes, i: int) -> int:
    """The offset of the first byte at or after ``i`` that is neither a blank nor inside a comment
    (``await //c`` then a line: the next token is on the next line)."""
    n = len(data)
    while i < n:
        c = data[i]
        if c in b" \t\r\n\v\f":
            i += 1
        elif c == 0x2F and data[i + 1 : i + 2] == b"/":
            j = data.find(b"\n", i)
            i = n if j < 0 else j
        elif c == 0x2F and data[i + 1 : i + 2] == b"*":
            j = data.find(b"*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            break
    return i


def _operand_follows(data: bytes, i: int) -> bool:
    """Something that may begin an operand starts at ``i`` (after ``_after_trivia``)."""
    if i >= len(data):
        return False
    m = _WORD_AT_RE.match(data, i)
    if m is not None:
        return m.group() not in _NO_OPERAND_WORDS
    c = data[i]
    return c in _ID_CONTINUE or c in b"([{'\"`!~+-/#" or c >= 0x80


#: How far a break/continue looks up for its target (beyond: not checked, see the module docstring).
_CLIMB = 256

class EarlyError(Exception):
    """Raised inside a check at the first error; carries V8's message and the byte offset."""

    def __init__(self, message: str, byte: int) -> None:
        super().__init__(message)
        self.message = message
        self.byte = byte

def _fail(message: str, node_or_byte: Any) -> None:
    byte = node_or_byte if isinstance(node_or_byte, int) else node_or_byte.start_byte
    raise EarlyError(message, byte)

_ESCAPE_RE = re.compile(r"\\u\{([0-9a-fA-F]+)\}|\\u([0-9a-fA-F]{4})")

_BIG_ESCAPE_RE = re.compile(rb"\\u\{0*([0-9a-fA-F]+)\}")

def decode_identifier(text: str) -> str:
    """An identifier's name with its ``\\uXXXX``/``\\u{…}`` escapes decoded (V8 compares names so)."""
    if "\\" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        v = int(m.group(1) or m.group(2), 16)
        return chr(v) if v <= 0x10FFFF else "\\"

    return _ESCAPE_RE.sub(one, text)

def _unwrap(node: Any) -> Any:
    while node is not None and node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        node = inner[0] if len(inner) == 1 else None
    return node

def _is_async(fn: Any) -> bool:
    for c in fn.children:
        t = c.type
        if t == "async":
            return True
        if t in ("formal_parameters", "statement_block", "identifier", "property_identifier", "=>"):
            return False
    return False

def _is_generator(fn: Any) -> bool:
    if fn.type in _GENERATORS:
        return True
    return fn.type == "method_definition" and any(c.type == "*" for c in fn.children)


# -- text helpers of the triggers (``strict_hits``) ----------------------------------------------
_WS = b" \t\r\n"


def _finds(data: bytes, lit: bytes) -> list[int]:
    out: list[int] = []
    i = data.find(lit)
    while i >= 0:
        out.append(i)
        i = data.find(lit, i + len(lit))
    return out

def _next_index(data: bytes, i: int) -> int:
    while i < len(data) and data[i] in _WS:
        i += 1
    if i + 1 < len(data) and data[i] == 0x2F and data[i + 1] in b"/*":  # a comment is a blank too
        i = _after_trivia(data, i)
    return i

def _next_char(data: bytes, i: int) -> int:
    i = _next_index(data, i)
    return data[i] if i < len(data) else -1

def _prev_char(data: bytes, i: int) -> int:
    i -= 1
    while i >= 0 and data[i] in _WS:
        i -= 1
    return data[i] if i >= 0 else -1

def _prev_word(data: bytes, i: int) -> bytes:
    """The identifier ending right before ``i`` (spaces skipped), at most 16 bytes of it."""
    i -= 1
    while i >= 0 and data[i] in _WS:
        i -= 1
    j = i
    while j >= 0 and i - j < 16 and data[j] in _ID_CONTINUE:
        j -= 1
    return data[j + 1 : i + 1]

def _skip_ws(data: bytes, i: int) -> int:
    while i < len(data) and data[i] in b" \t\r\n":
        i += 1
    return i

def _words(data: bytes, word: bytes) -> list[int]:
    """Offsets of ``word`` as a whole word (``bytes.find`` in C: a regex starting with ``\\b`` is ~7x
    slower, it cannot search for its literal)."""
    out: list[int] = []
    n = len(word)
    i = data.find(word)
    while i >= 0:
        j = i + n
        if (i == 0 or data[i - 1] not in _ID_CONTINUE) and (j >= len(data) or data[j] not in _ID_CONTINUE):
            out.append(i)
        i = data.find(word, j)
    return out
