"""The strict checks' textual scans that ``re`` runs slowly, run by RE2 instead (issue 15: the analyzer
near its parser's floor).

A ``re`` pattern that starts with a character class or an alternation cannot search for a literal: it is
tried at every byte, and the eleven such triggers of ``strict_hits`` cost about three times the parse.
RE2 (google-re2, already a dependency) runs them as a DFA, about ten times faster. Each scan keeps its
``re`` pattern as the reference: it runs when RE2 is missing, and ``tests/test_exec_strict_scan.py``
checks on generated text that both give the same spans, so the checks see the same hits (no verdict
changes). RE2 has no lookaround: each lookahead ``X(?![…])`` becomes a test of the byte after the match,
which drops the same matches, because in every pattern here the bytes a failed match covered cannot
start another match (the comment on each pattern says why). RE2's ``\\s`` lacks ``\\v``, so whitespace
is spelled out; Latin-1 mode makes RE2 read bytes as ``re`` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

try:
    import re2 as _re2

    _OPTIONS: Any = _re2.Options()
    _OPTIONS.encoding = _re2.Options.Encoding.LATIN1
    _UNANCHORED: Any = _re2._re2.RE2.Anchor.UNANCHORED
except ImportError:  # pragma: no cover - google-re2 is a dependency; the reference patterns still work
    _re2 = None

__all__ = ["Scan", "present", "literal", "declaration_words", "LITERALS", "DIGIT_ESCAPE", "LABEL", "NUMBER", "OPERAND_ASSIGN", "SLASH", "KEYWORD_SLASH", "RARE", "BLOCK_OBJECT", "COMPOUND",
           "HOLE", "ASSIGN", "AWAIT_SLASH", "FOR_OF_COMMA", "RAW_NEWLINE", "DECLARATION_WORDS"]

_WS = rb"[ \t\n\r\f\v]"  # ``re``'s \s on bytes

#: A pattern's last group when it holds one byte and ends the pattern: ``(=)``, ``(/)``, ``(\n)``.
_TAIL_GROUP_RE = re.compile(rb"\(([^()\\[\]*+?{}|]|\\n)\)$")

_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")

Drop = Callable[[bytes, int, int], bool]


class Scan:
    """One trigger pattern: ``spans(data)`` gives, per match, the span of its first group that took
    part (or of the whole match), in order, as the ``re`` reference does. ``drop`` filters the matches
    of both (for the reference it only does what its own lookaheads and its caller did already)."""

    __slots__ = ("reference", "reference_fn", "fast", "drop", "_match", "index", "last", "follow", "tail")

    def __init__(
        self,
        reference: bytes | None,
        fast: bytes | None,
        drop: Drop | None = None,
        flags: int = 0,
        reference_fn: Callable[[bytes], list[tuple[int, int]]] | None = None,
    ) -> None:
        self.reference = re.compile(reference, flags) if reference is not None else None
        self.reference_fn = reference_fn  # the Python code a scan replaced, when it was not a pattern
        self.fast = _re2.compile(fast, options=_OPTIONS) if _re2 is not None and fast is not None else None
        self.index = -1  # in the gate's set (``present``)
        self.drop = drop
        # The compiled RE2's own Match(anchor, text, pos, endpos) -> spans: a third cheaper than the
        # module's finditer, which builds a match object per match (most scans run on every script).
        low = getattr(self.fast, "_regexp", None)
        self.last = low is not None and low.NumberOfCapturingGroups() <= 1
        # A pattern whose one group is its last byte (``…(=)``) is searched without the group: its
        # span is the match's last byte, and RE2 needs no submatch engine to give the whole match.
        self.tail = False
        tail = _TAIL_GROUP_RE.search(fast) if fast is not None and self.last and low is not None else None
        if tail is not None and fast is not None and low is not None and low.NumberOfCapturingGroups() == 1:
            low = _re2.compile(fast[: tail.start()] + tail.group(1), options=_OPTIONS)._regexp
            self.tail = True
        self._match = getattr(low, "Match", None)
        self.follow = drop.follow if isinstance(drop, _FollowedBy) else None

    def spans(self, data: bytes, present: frozenset[int] | None = None) -> list[tuple[int, int]]:
        """The spans; ``present`` (from :func:`present`) skips a pattern that matches nowhere."""
        if present is not None and self.index >= 0 and self.index not in present:
            return []
        if self.fast is None:  # no RE2, or a scan that is a Python loop
            return self.reference_spans(data)
        drop = self.drop
        out: list[tuple[int, int]] = []
        match = self._match
        if match is None:
            for m in self.fast.finditer(data):
                s, e = _group_span(m)
                if drop is None or not drop(data, s, e):
                    out.append((s, e))
            return out
        n = len(data)
        pos = 0
        follow = self.follow
        last = self.last
        while pos <= n:
            spans = match(_UNANCHORED, data, pos, n)
            whole = spans[0]
            if whole[0] < 0:
                break
            if self.tail:
                s = whole[1] - 1
                e = whole[1]
            elif last:  # one group at most: the group's span, or the whole match's when it took no part
                s, e = spans[-1]
                if s < 0:
                    s, e = whole
            else:
                s, e = whole
                for g in spans[1:]:
                    if g[0] >= 0:
                        s, e = g
                        break
            if follow is not None:  # a lookahead, tested inline
                if e >= n or data[e] not in follow:
                    out.append((s, e))
            elif drop is None or not drop(data, s, e):
                out.append((s, e))
            pos = whole[1] if whole[1] > pos else pos + 1  # no pattern here matches the empty string
        return out

    def reference_spans(self, data: bytes) -> list[tuple[int, int]]:
        if self.reference_fn is not None:
            return self.reference_fn(data)
        if self.reference is None:
            raise ValueError("this scan has no reference")
        drop = self.drop
        spans = [_group_span(m) for m in self.reference.finditer(data)]
        return spans if drop is None else [(s, e) for s, e in spans if not drop(data, s, e)]


def _group_span(m: Any) -> tuple[int, int]:
    for g in range(1, len(m.groups()) + 1):
        s = m.start(g)
        if s >= 0:
            return s, m.end(g)
    return m.start(), m.end()


class _FollowedBy:
    """A lookahead ``(?![chars])`` at the end of the match (or of its group); :meth:`Scan.spans` tests
    its ``follow`` bytes inline."""

    __slots__ = ("follow",)

    def __init__(self, chars: bytes) -> None:
        self.follow = frozenset(chars)

    def __call__(self, data: bytes, s: int, e: int) -> bool:
        return e < len(data) and data[e] in self.follow


def _followed_by(chars: bytes) -> Drop:
    return _FollowedBy(chars)


_NOT_BEFORE_NUMBER = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$\\.") | frozenset(
    range(0x80, 0x100)
)


def _number_drop(data: bytes, s: int, e: int) -> bool:
    """Inside an identifier or after a ``.``; or ``\\d_(?!\\d)``, the one alternative with a lookahead
    (``0_`` is matched before it)."""
    if s and data[s - 1] in _NOT_BEFORE_NUMBER:
        return True
    return e - s == 2 and data[s + 1] == 0x5F and data[s] != 0x30 and e < len(data) and 0x30 <= data[e] <= 0x39


#: A number that is legacy octal, has a leading zero, a separator problem, or an identifier right after
#: it; not inside an identifier. RE2 reads the byte before it (no lookbehind): every byte a match ends
#: with is one a kept match cannot follow, so reading it hides no kept match, and a dropped ``1_``
#: covers ``_``, which starts no match.
NUMBER = Scan(
    rb"0\d|0_|\d[\d_.]*[A-Za-z$\\]|\d__|\d_(?!\d)",
    rb"(?:^|[^\w$\\.\x80-\xff])(0\d|0_|\d[\d_.]*[A-Za-z$\\]|\d__|\d_)",
    _number_drop,
)

#: An assignment whose target follows an operator on its line (``a + b.c = d``). The ``=`` reached is the
#: first one after the match's start (no segment crosses an ``=``), so a start inside a dropped match
#: reaches the same ``=`` and is dropped too.
OPERAND_ASSIGN = Scan(
    rb"(?:[-+*/%<>&|^!~?]|\btypeof\b|\bvoid\b)[^;{}(),\n=]*?[\w$\])]\s*(=)(?![=>])"
    rb"|\bawait\b[^;\n=]*?[\w$\])]\s*(=)(?![=>])",
    rb"(?:(?:[-+*/%<>&|^!~?]|\btypeof\b|\bvoid\b)[^;{}(),\n=]*?|\bawait\b[^;\n=]*?)[\w$\])]" + _WS + rb"*(=)",
    _followed_by(b"=>"),
)

#: A ``/`` where an expression starts: a regular expression literal. A dropped match covers only
#: whitespace (the ``\n`` in it leads to the same ``/``) and its ``/``.
SLASH = Scan(
    rb"[=(,:!&|?{};\[\n<>+\-*%^~]\s*(/)(?![/*])",
    rb"[=(,:!&|?{};\[\n<>+\-*%^~]" + _WS + rb"*(/)",
    _followed_by(b"/*"),
)

KEYWORD_SLASH = Scan(
    rb"(?:\b(?:await|return|typeof|void|delete|case|do|else|in|of|new|throw|yield)|\))\s*(/)(?![/*])",
    rb"(?:\b(?:await|return|typeof|void|delete|case|do|else|in|of|new|throw|yield)|\))" + _WS + rb"*(/)",
    _followed_by(b"/*"),
)

#: The rare words of the strict checks. No word is a prefix of another, so a word dropped for the
#: identifier byte after it hides no other match at its start; one starting inside it follows an
#: identifier byte and is dropped by the caller.
_RARE_WORDS = (
    rb"(?:with|delete|yield|implements|interface|package|private|protected|public|static|eval|arguments"
    rb"|break|continue|super|target|constructor|get|set|async|try)"
)
RARE = Scan(_RARE_WORDS + rb"(?![\w$])", _RARE_WORDS, _followed_by(bytes(sorted(_WORD_BYTES))))

#: ``{`` starting a statement and then a quoted or numeric key: V8 reads a block there, not an object.
BLOCK_OBJECT = Scan(
    rb"(?:^|[;{}])\s*(\{)\s*[\"'\d\[]",
    rb"(?m)(?:^|[;{}])" + _WS + rb"*(\{)" + _WS + rb"*[\"'\d\[]",
    None,
    re.M,
)

#: A compound assignment operator. At most one alternative reaches an ``=`` from a given start.
COMPOUND = Scan(
    rb"(?:\*\*|<<|>>>|>>|&&|\|\||\?\?|[-+*/%&|^])=(?!=)",
    rb"(?:\*\*|<<|>>>|>>|&&|\|\||\?\?|[-+*/%&|^])=",
    _followed_by(b"="),
)

#: A comma right after ``(``, ``,`` or ``{``: a hole, which only an array (or array pattern) may have.
HOLE = Scan(rb"[(,{]\s*(,)", rb"[(,{]" + _WS + rb"*(,)")

#: ``=`` after a closing bracket: a pattern or a call as a target.
ASSIGN = Scan(rb"[})\]]\s*(=)(?![=>])", rb"[})\]]" + _WS + rb"*(=)", _followed_by(b"=>"))

AWAIT_SLASH = Scan(rb"\bawait\s*(/)(?![/*])", rb"\bawait" + _WS + rb"*(/)", _followed_by(b"/*"))

#: ``for (x of a, b)`` and ``for await (…)``: a comma in a for-of head.
FOR_OF_COMMA = Scan(
    rb"\bfor(?:\s+await)?\s*\([^;\n]*\bof\b[^;\n]*,",
    rb"\bfor(?:" + _WS + rb"+await)?" + _WS + rb"*\([^;\n]*\bof\b[^;\n]*,",
)

def _odd_line(q: bytes) -> bytes:
    """A line with an odd number of ``q`` not right after a backslash, through its ``\\n``. Each
    backslash run is read with the byte after it, so a line splits one way only."""
    unit = rb"(?:[^" + q + rb"\n\\]|\\+[^" + q + rb"\n\\]|\\+" + q + rb")"
    return unit + b"*" + q + rb"(?:" + unit + b"*" + q + unit + b"*" + q + rb")*" + unit + rb"*\\*"


def _raw_newline_lines(data: bytes) -> list[tuple[int, int]]:
    """The reference: the line loop the scan replaced."""
    out: list[tuple[int, int]] = []
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            return out
        line = data[start:end]
        if (line.count(b'"') - line.count(b'\\"')) % 2 or (line.count(b"'") - line.count(b"\\'")) % 2:
            out.append((end, end + 1))
        start = end + 1


#: The line ends of lines with an odd number of quotes of one kind: a string may run over them, which
#: V8 rejects (tree-sitter may not).
RAW_NEWLINE = Scan(
    None, rb"(?m)^(?:" + _odd_line(b'"') + b"|" + _odd_line(b"'") + rb")(\n)", reference_fn=_raw_newline_lines
)

_DECLARATION_WORDS = (b"let", b"const", b"var", b"class", b"function", b"catch")
_ID_BYTES = _WORD_BYTES | frozenset(b"\\")


def _declaration_words(data: bytes, words: tuple[bytes, ...] = _DECLARATION_WORDS) -> list[tuple[int, int]]:
    """The reference: each word found by ``bytes.find``, kept when no identifier byte touches it."""
    out: list[tuple[int, int]] = []
    n = len(data)
    for w in words:
        i = data.find(w)
        while i >= 0:
            j = i + len(w)
            if (i == 0 or data[i - 1] not in _ID_BYTES) and (j >= n or data[j] not in _ID_BYTES):
                out.append((i, j))
            i = data.find(w, j)
    return sorted(out)


#: The declaration keywords as whole words (``$`` and ``\\`` continue a name too), in text order, by
#: ``bytes.find`` loops: a script holds about eight, and one call into RE2 per match cost more.
DECLARATION_WORDS = Scan(None, None, reference_fn=_declaration_words)


#: Literals whose presence the strict checks test: found by the same set pass as the scans (a
#: ``bytes`` containment test costs a pass over the text each, about 1 us per KB; thirty of them cost
#: more than the whole set pass).
LITERALS = (b"await", b"for", b"var", b"...", b"<!--", b"-->", b"??", b"__proto__", b"use strict", b"**", b"=>",
            b"\\u", b"/", b"#", b"?.", b"return", b"class", b"||", b"&&", b"let", b"const", b"function", b"catch")

#: Patterns only tested for presence (their ``re`` scans in ``strict_hits`` run when they match):
#: a backslash and a digit (an octal escape), and the label triggers (``:`` then a loop keyword, or a
#: second name and ``:``), without the lookahead the ``re`` pattern adds (a superset, so a gate).
_PRESENCE = (rb"\\[0-9]", rb":" + _WS + rb"*(?:for|while|do|switch|function|[A-Za-z_$][\w$]*" + _WS + rb"*:)")


def declaration_words(data: bytes, gate: frozenset[int]) -> list[tuple[int, int]]:
    """:data:`DECLARATION_WORDS`, looking only for the words ``gate`` (:func:`present`) says the text holds."""
    return _declaration_words(data, tuple(w for w in _DECLARATION_WORDS if literal(w) in gate))


def present(data: bytes) -> frozenset[int]:
    """The indices of the scans whose RE2 pattern matches somewhere in ``data``, and (from
    ``len(_GATED)`` on, see :func:`literal`) of the :data:`LITERALS` it contains, in one pass of an
    RE2 set: most scripts match only a few, and each scan skipped saves a call into RE2."""
    if _GATE is None:
        n = len(_GATED) + len(LITERALS)
        return frozenset(i for i in range(n + len(_PRESENCE)) if i < len(_GATED) or i >= n or LITERALS[i - len(_GATED)] in data)
    return frozenset(_GATE.Match(data) or ())  # None when nothing matches


def literal(lit: bytes) -> int:
    """The index :func:`present` gives ``lit`` (one of :data:`LITERALS`) when the text contains it."""
    return len(_GATED) + LITERALS.index(lit)


def _gate() -> Any:
    if _re2 is None:
        return None
    gate = _re2.Set.SearchSet(_OPTIONS)
    for i, scan in enumerate(_GATED):
        scan.index = gate.Add(_FAST_PATTERNS[i])
        assert scan.index == i
    for k, lit in enumerate(LITERALS):
        assert gate.Add(_re2.escape(lit)) == len(_GATED) + k
    for k, pattern in enumerate(_PRESENCE):
        assert gate.Add(pattern) == len(_GATED) + len(LITERALS) + k
    gate.Compile()
    return gate


_GATED = [NUMBER, OPERAND_ASSIGN, SLASH, KEYWORD_SLASH, RARE, BLOCK_OBJECT, COMPOUND, HOLE, ASSIGN, AWAIT_SLASH,
          FOR_OF_COMMA, RAW_NEWLINE]
_FAST_PATTERNS = [scan.fast.pattern for scan in _GATED if scan.fast is not None]
#: The indices :func:`present` gives the presence patterns.
DIGIT_ESCAPE, LABEL = len(_GATED) + len(LITERALS), len(_GATED) + len(LITERALS) + 1
_GATE = _gate()
