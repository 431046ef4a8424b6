"""A tool call's argument read as a value where an interpolated template may stand for a string: the
template's literal parts and its holes as written (``{cmd: `echo ${name}`}``), for a reader that shows a
command with its holes marked instead of the whole script. Everything else is read by
:mod:`exec_grammar.literals`' rules, by its own reader."""

from __future__ import annotations

from typing import Any, NamedTuple

from exec_grammar.js_text import _NotLiteral, cook_template_text
from exec_grammar.lexer import TokenKind, iter_tokens
from exec_grammar.literals import _STRING_RES, COMPUTED, _Reader

__all__ = ["Template", "decode_with_templates"]


class Template(NamedTuple):
    """An interpolated template as written: its literal parts (escapes cooked, one more than the holes)
    and the source text of each ``${…}`` hole, whose value exists only when the script runs."""

    parts: tuple[str, ...]
    holes: tuple[str, ...]

    def text(self) -> str:
        """The template's text with each hole kept as written (``echo ${name}``)."""
        out = [self.parts[0]]
        for hole, part in zip(self.holes, self.parts[1:], strict=True):
            out.append("${" + hole + "}")
            out.append(part)
        return "".join(out)


def decode_with_templates(text: str) -> Any:
    """:func:`decode_literal`, except that an interpolated template is read as a :class:`Template`
    (its literal parts and its holes as written) instead of making the whole value computed. What a
    reader can show of ``{cmd: `echo ${name}`}``: the command's text with its hole marked, never a
    guessed value. Total, like :func:`decode_literal`; COMPUTED for anything else that is not a literal."""
    try:
        value, pos = _TemplateReader(text).whole()
    except (_NotLiteral, RecursionError):
        return COMPUTED
    return value if pos == len(text) else COMPUTED


class _TemplateReader(_Reader):
    """The literal reader, with interpolated templates read as :class:`Template` values."""

    __slots__ = ()

    def string(self, pos: int) -> tuple[Any, int]:  # type: ignore[override]
        t = self.text
        if t[pos] == "`":
            m = _STRING_RES["`"].match(t, pos)
            if m is not None and m.group(2) == "${":
                return self.template(pos)
        return super().string(pos)

    def template(self, pos: int) -> tuple[Template, int]:
        """The template opening at ``pos``, walked with the lexer (a hole may hold strings, objects and
        templates of its own; the lexer knows which ``}`` closes it)."""
        t = self.text
        parts: list[str] = []
        holes: list[str] = []
        depth = 0  # templates opened inside the current hole
        hole_start = -1
        for tok in iter_tokens(t[pos:], trivia=True):
            k = tok.kind
            if hole_start < 0:  # the template's head
                if k is not TokenKind.TEMPLATE_HEAD:
                    raise _NotLiteral("not a template")
                parts.append(self._cook(tok.text[1:-2]))
                hole_start = pos + tok.end
                continue
            if depth == 0 and k in (TokenKind.TEMPLATE_MIDDLE, TokenKind.TEMPLATE_TAIL):
                hole = t[hole_start:pos + tok.start].strip()
                if not hole:
                    raise _NotLiteral("empty hole")
                holes.append(hole)
                if k is TokenKind.TEMPLATE_MIDDLE:
                    parts.append(self._cook(tok.text[1:-2]))
                    hole_start = pos + tok.end
                    continue
                parts.append(self._cook(tok.text[1:-1]))
                return Template(tuple(parts), tuple(holes)), pos + tok.end
            if k is TokenKind.TEMPLATE_HEAD:
                depth += 1
            elif k is TokenKind.TEMPLATE_TAIL:
                depth -= 1
            elif k is TokenKind.ERROR:
                raise _NotLiteral("not a template")
        raise _NotLiteral("unterminated template")

    @staticmethod
    def _cook(chunk: str) -> str:
        cooked = cook_template_text(chunk)
        if cooked is None:
            raise _NotLiteral("invalid escape in a template")
        return cooked
