"""Early errors of a regular expression literal, as V8 reports them at parse time (issue 11 §2).

tree-sitter accepts any ``/…/flags``; V8 compiles the pattern when it parses the module, so an invalid
one means the script never ran. Checked: the flags (only ``dgimsuyv``, none twice, not both ``u`` and
``v``), unbalanced groups, a quantifier with nothing to repeat, ``{n,m}`` out of order, duplicate
named groups, bad group syntax, and with ``u``/``v`` the stricter Unicode-mode rules (lone ``{``/``}``,
``]``, invalid escapes, ``\\u{…}`` beyond U+10FFFF). Annex B's lenient reading applies otherwise
(``/{/``, ``/]/`` and ``/\\1/`` are valid). Not checked: the class-set syntax of ``v`` beyond balance,
back-references to unknown names. Linear: one pass over the pattern.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["regex_error", "unterminated_comment"]

_QUANT_BRACE = re.compile(r"\{(\d+)(,(\d*))?\}")
_GROUP_NAME = re.compile(r"\?<([A-Za-z_$][\w$]*)>")
_UNICODE_ESCAPE_OK = frozenset("dDwWsSbBfnrtv0^$\\.*+?()[]{}|/-")


#: Class escapes that stand for one character, as a range's end.
_CLASS_ESCAPES = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "0": "\0"}


def regex_error(pattern: str, flags: str) -> str | None:
    """V8's complaint about ``/pattern/flags``, or None when it compiles."""
    if len(set(flags)) != len(flags) or any(f not in "dgimsuyv" for f in flags) or ("u" in flags and "v" in flags):
        return "Invalid regular expression flags"
    unicode = "u" in flags or "v" in flags
    n = len(pattern)
    i = 0
    depth = 0
    can_repeat = False  # the previous item is an atom a quantifier may follow
    names: set[str] = set()
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return f"/{pattern}/: \\ at end of pattern"
            e = pattern[i + 1]
            if unicode:
                if e == "u" and pattern.startswith("{", i + 2):
                    k = pattern.find("}", i + 3)
                    h = pattern[i + 3 : k] if k > 0 else ""
                    if not h or any(ch not in "0123456789abcdefABCDEF" for ch in h) or int(h, 16) > 0x10FFFF:
                        return f"/{pattern}/{flags}: Invalid Unicode escape"
                    i = k + 1
                    can_repeat = True
                    continue
                if e in "pP":
                    if not pattern.startswith("{", i + 2) or pattern.find("}", i + 3) < 0:
                        return f"/{pattern}/{flags}: Invalid property name"
                    i = pattern.find("}", i + 3) + 1
                    can_repeat = True
                    continue
                if e == "u":
                    if not re.fullmatch(r"[0-9a-fA-F]{4}", pattern[i + 2 : i + 6]):
                        return f"/{pattern}/{flags}: Invalid Unicode escape"
                    i += 6
                    can_repeat = True
                    continue
                if e == "x":
                    if not re.fullmatch(r"[0-9a-fA-F]{2}", pattern[i + 2 : i + 4]):
                        return f"/{pattern}/{flags}: Invalid escape"
                    i += 4
                    can_repeat = True
                    continue
                if e == "c":
                    if i + 2 >= n or not pattern[i + 2].isascii() or not pattern[i + 2].isalpha():
                        return f"/{pattern}/{flags}: Invalid unicode escape"
                    i += 3
                    can_repeat = True
                    continue
                if e.isdigit() and e != "0":
                    pass  # a back-reference (checked against the group count by V8: not here)
                elif e == "k":
                    pass
                elif e not in _UNICODE_ESCAPE_OK and not e.isdigit():
                    return f"/{pattern}/{flags}: Invalid escape"
            can_repeat = e not in "bB"
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            nest = 1
            prev = ""  # the class atom before a `-`, when it is one character
            while j < n:
                d = pattern[j]
                if d == "\\":
                    prev = ""
                    j += 2
                    continue
                if d == "-" and prev and j + 1 < n and pattern[j + 1] != "]" and "v" not in flags:
                    hi = pattern[j + 1]
                    step = 2
                    if hi == "\\":
                        hi = _CLASS_ESCAPES.get(pattern[j + 2 : j + 3], "")
                        step = 3
                    if hi and ord(hi) < ord(prev):
                        return f"/{pattern}/{flags}: Range out of order in character class"
                    prev = ""
                    j += step
                    continue
                prev = d
                if d == "[" and "v" in flags:
                    nest += 1
                elif d == "]":
                    nest -= 1
                    if nest == 0:
                        break
                j += 1
            if j >= n:
                return "missing /"
            i = j + 1
            can_repeat = True
            continue
        if c == "(":
            if pattern.startswith("(?", i):
                m = _GROUP_NAME.match(pattern, i + 1)
                if m is not None:
                    if m.group(1) in names:
                        return f"/{pattern}/{flags}: Duplicate capture group name"
                    names.add(m.group(1))
                    i = m.end()
                elif pattern.startswith(("(?:", "(?=", "(?!"), i):
                    i += 3
                elif pattern.startswith(("(?<=", "(?<!"), i):
                    i += 4
                elif re.match(r"\(\?[ims]*(-[ims]*)?:", pattern[i:]):
                    i = pattern.index(":", i) + 1
                else:
                    return f"/{pattern}/{flags}: Invalid group"
            else:
                i += 1
            depth += 1
            can_repeat = False
            continue
        if c == ")":
            if depth == 0:
                return f"/{pattern}/{flags}: Unmatched ')'"
            depth -= 1
            i += 1
            can_repeat = True
            continue
        if c in "*+?":
            if not can_repeat:
                return f"/{pattern}/{flags}: Nothing to repeat"
            i += 1
            if i < n and pattern[i] == "?":
                i += 1
            can_repeat = False
            continue
        if c == "{":
            m = _QUANT_BRACE.match(pattern, i)
            if m is not None:
                if not can_repeat:
                    return f"/{pattern}/{flags}: Nothing to repeat"
                lo, hi = int(m.group(1)), m.group(3)
                if hi and int(hi) < lo:
                    return f"/{pattern}/{flags}: numbers out of order in {{}} quantifier"
                i = m.end()
                if i < n and pattern[i] == "?":
                    i += 1
                can_repeat = False
                continue
            if unicode:
                return f"/{pattern}/{flags}: Lone quantifier brackets"
            i += 1
            can_repeat = True
            continue
        if c in "}]" and unicode:
            return f"/{pattern}/{flags}: Lone quantifier brackets"
        if c == "|":
            can_repeat = False
        elif c in "^$":
            can_repeat = not unicode and False
        else:
            can_repeat = True
        i += 1
    if depth:
        return f"/{pattern}/{flags}: Unterminated group"
    return None


#: Bytes after which a ``/`` is a division or lies in text (a path, a glob), so tree-sitter cannot have
#: read a regex there, unless they end a keyword that a regex may follow.
_NO_REGEX_BEFORE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.*~-/\"'`")
_REGEX_KEYWORD_BEFORE = re.compile(rb"(?<![\w$])(?:return|typeof|void|delete|case|do|else|in|of|new|throw|yield|await)$")


def unterminated_comment(data: bytes, root: Any) -> tuple[str, int] | None:
    """A ``/*`` with no ``*/`` after it that tree-sitter read as a regular expression (``/**{/``: its
    lexer falls back to a regex when the comment never ends). ``/*`` always opens a comment, so V8
    reports an unterminated comment there. Only openers after the text's last ``*/`` are looked up."""
    last = data.rfind(b"*/")
    p = data.find(b"/*", max(0, last - 1))
    while p >= 0:
        if p and data[p - 1] in _NO_REGEX_BEFORE and not _REGEX_KEYWORD_BEFORE.search(data, max(0, p - 8), p):
            p = data.find(b"/*", p + 1)  # `build/*`, `"./*"`: a division or text, never a regex
            continue
        node = root.descendant_for_byte_range(p, p + 2)
        for _ in range(3):
            if node is None or node.start_byte != p:
                break
            if node.type == "regex":
                return "Invalid or unexpected token", p
            node = node.parent
        p = data.find(b"/*", p + 1)
    return None
