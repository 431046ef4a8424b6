"""What text the reader may derive from one line that holds derivation evidence (``search.scan``): a
superset, so that the pre-filter can still skip a file whose evidence cannot make the query's missing
pieces.

A file that lacks one of the query's pieces in its bytes used to be read whole as soon as it held any
derivation evidence: a regex in a code-mode script (``\\d``: a JavaScript escape) was enough, and
such files are common (80 of the 1,000 sessions of the benchmark home, 47% of the real rollouts).
Here each evidence line is decoded and every text the reader could make of it is built
generously: each string value (keys too), the strings of a JSON document inside a string (call
arguments), each with its JavaScript escapes decoded (an exec cell's script), with shell quotes and
backslashes removed (``py'test'``), percent-decoded (a ``file://`` cwd), and the values the reader may
join with nothing between them joined (text parts, refusal parts, stdout then stderr, the elements of a
string array), all case-folded as Python's case-insensitive match equates them. A missing piece that is
in none of these texts cannot be derived from the line. Kept conservative: a line that does not decode,
or an exec script with a template substitution (``${…}``: the analyzer substitutes values from
elsewhere in the script), may derive anything.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import orjson

#: The non-ASCII characters Python's case-insensitive matching equates with an ASCII letter.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u212a": "k", "\u017f": "s"})


def fold(text: str) -> str:
    """``text`` lowered, with the non-ASCII partners of ASCII letters made those letters."""
    return text.translate(_FOLD).lower()


#: A JavaScript escape sequence (the analyzer decodes string literals: ``\x41``, ``\u0041``,
#: ``\u{41}``, octal, a line continuation, an identity escape).
_JS_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|([0-7]{1,3})|"
                        r"(\r\n|[\n\r\u2028\u2029])|(.))", re.DOTALL)
_JS_CONTROL = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
#: Keys whose several string values the reader joins with nothing between them.
_JOINED_KEYS = ("text", "refusal")
#: Most strings looked at in one line (a pathological line is then simply a candidate).
_MAX_STRINGS = 20_000


class _TooMuch(Exception):
    pass


def _js_char(m: re.Match[str]) -> str:
    hx, brace, u4, octal, cont, other = m.groups()
    try:
        if hx is not None:
            return chr(int(hx, 16))
        if brace is not None:
            return chr(int(brace, 16))
        if u4 is not None:
            return chr(int(u4, 16))
        if octal is not None:
            return chr(int(octal, 8))
    except (ValueError, OverflowError):
        return ""
    if cont is not None:
        return ""
    return _JS_CONTROL.get(other, other)


def js_unescape(text: str) -> str:
    return _JS_ESCAPE.sub(_js_char, text) if "\\" in text else text


def _shell_strip(text: str) -> str:
    return text.replace("\\\n", "").replace("'", "").replace('"', "").replace("\\", "")


class _Walk:
    """The strings of a decoded line, and the joins the reader may make of them."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self.by_key: dict[str, list[str]] = {}
        self.joins: list[str] = []

    def add(self, s: str) -> None:
        self.strings.append(s)
        if len(self.strings) > _MAX_STRINGS:
            raise _TooMuch
        if len(s) > 1 and s[0] in "{[" and s[-1] in "}]":
            try:
                inner = orjson.loads(s)
            except orjson.JSONDecodeError:
                return
            self.walk(inner)

    def walk(self, obj: Any) -> None:
        if isinstance(obj, str):
            self.add(obj)
        elif isinstance(obj, dict):
            for k, v in obj.items():
                self.add(k)
                if isinstance(v, str):
                    self.by_key.setdefault(k, []).append(v)
                self.walk(v)
            out, err = obj.get("stdout"), obj.get("stderr")
            if isinstance(out, str) and isinstance(err, str):
                self.joins.append(out + err)
        elif isinstance(obj, list):
            if obj and all(isinstance(x, str) for x in obj):
                self.joins.append("".join(obj))
            for x in obj:
                self.walk(x)


_RUN = re.compile(r"[a-z0-9]+")


def derived_texts(line: bytes) -> tuple[list[str], set[str]] | None:
    """Every text (case-folded) the reader may make of this line, and the letter-and-digit runs a
    template substitution may join; None when the line may make anything."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    w = _Walk()
    try:
        w.walk(obj)
    except _TooMuch:
        return None
    runs: set[str] = set()
    for s in w.strings:
        if "${" in s:
            js = js_unescape(s)
            for v in (js, _shell_strip(js)):
                runs.update(_RUN.findall(fold(v)))
    return list(_variants(w)), runs


def _joinable(piece: str, runs: set[str]) -> bool:
    """Whether ``piece`` is a suffix of one of ``runs``, then whole runs, then a prefix of one."""
    if not runs:
        return False
    n = len(piece)
    heads = {r[-i:] for r in runs for i in range(1, min(len(r), n) + 1)}  # suffixes of runs
    tails = {r[:i] for r in runs for i in range(1, min(len(r), n) + 1)}  # prefixes of runs
    reached = [False] * (n + 1)
    for i in range(1, n + 1):
        reached[i] = piece[:i] in heads
    for i in range(1, n):
        if not reached[i]:
            continue
        if piece[i:] in tails:
            return True
        for j in range(i + 1, n + 1):
            if piece[i:j] in runs:
                reached[j] = True
    return reached[n]


def _variants(w: _Walk) -> Iterator[str]:
    for key in _JOINED_KEYS:
        vals = w.by_key.get(key)
        if vals and len(vals) > 1:
            w.joins.append("".join(vals))
    for s in (*w.strings, *w.joins):
        js = js_unescape(s)
        for v in {s, js, _shell_strip(s), _shell_strip(js)}:
            yield fold(v)
            if "%" in v:
                yield fold(unquote(v))


#: A file's summary is kept in the scan cache up to this many characters of runs (a bigger one is
#: rebuilt from its evidence lines when a search needs it).
MAX_SUMMARY_CHARS = 256 << 10


@dataclass(frozen=True, slots=True)
class Derivable:
    """What a file's evidence lines may make, query-independent (kept in the scan cache): every maximal
    ASCII letter-and-digit run of every text they may make (``runs``, NUL-separated: a piece of a query
    occurs in such a text only inside one of them), the runs template substitutions may join
    (``joined``), or ``anything`` (a line that does not decode)."""

    anything: bool = False
    runs: str = ""
    joined: tuple[str, ...] = ()

    def may_make(self, pieces: Iterable[bytes]) -> bool:
        """Whether every one of ``pieces`` (lower-case ASCII runs a file lacks) may be derived."""
        if self.anything:
            return True
        joined = set(self.joined)
        return all(p in self.runs or _joinable(p, joined) for p in (q.decode("ascii") for q in pieces))


def summarize(lines: Iterable[bytes]) -> Derivable:
    """The :class:`Derivable` of these evidence lines."""
    runs: set[str] = set()
    joined: set[str] = set()
    seen: set[bytes] = set()
    for line in lines:
        digest = hashlib.blake2b(line, digest_size=16).digest()
        if digest in seen:  # a line repeated word for word derives nothing new
            continue
        seen.add(digest)
        got = derived_texts(line)
        if got is None:
            return Derivable(anything=True)
        texts, line_runs = got
        runs.update(_RUN.findall("\x00".join(texts)))
        joined |= line_runs
    return Derivable(runs="\x00".join(sorted(runs)), joined=tuple(sorted(joined)))


def may_derive(lines: Iterable[bytes], pieces: Iterable[bytes]) -> bool:
    """Whether every one of ``pieces`` (lower-case ASCII runs a file lacks) may be derived from these
    evidence lines (the runs of all their template strings are pooled: a superset still)."""
    return summarize(lines).may_make(pieces)
