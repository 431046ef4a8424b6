"""Runs of comments read another way: tree-sitter's parse is superlinear on them (
``tools/**//**/….exec_command(…)`` took 12.8 s at 80 KB, 55 s at 160 KB, and stalled the MCP server).

Detected cheaply (more than ``_MANY`` comment openers in the text), the script is then parsed as a
copy with every comment blanked: each of its characters replaced by as many spaces as its UTF-8 bytes,
line terminators kept. Byte offsets are unchanged (so every node maps back to the original text, which
argument sources are sliced from), and the meaning too: a comment is whitespace, and one holding a line
terminator still separates lines for automatic semicolon insertion. Comments are found by the
lexer (linear, total), which tells them from strings, templates and regular expressions.
"""

from __future__ import annotations

from exec_grammar.lexer import TokenKind, iter_tokens

__all__ = ["blank_comments"]

#: More comment openers than this and the script is parsed comment-blanked (a normal script has a
#: few; the parse cost shows from a few hundred in a run).
_MANY = 64
_TERMINATORS = frozenset("\n\r\u2028\u2029")


def blank_comments(script: str) -> str | None:
    """The script with its comments blanked (same UTF-8 length), or None when it has few comments."""
    if script.count("/*") + script.count("//") <= _MANY:
        return None
    parts: list[str] = []
    last = 0
    blanked = False
    for tok in iter_tokens(script, trivia=True):
        if tok.kind is not TokenKind.COMMENT:
            continue
        parts.append(script[last : tok.start])
        text = script[tok.start : tok.end]
        if text.isascii():
            parts.append("".join(c if c in _TERMINATORS else " " for c in text))
        else:
            parts.append(
                "".join(c if c in _TERMINATORS else " " * len(c.encode("utf-8", "surrogatepass")) for c in text)
            )
        last = tok.end
        blanked = True
    if not blanked:
        return None
    parts.append(script[last:])
    return "".join(parts)
