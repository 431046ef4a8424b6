"""Where a rendering goes, as the row builders see it: a :data:`Row` (a styled line, or text rich already
laid out) and the :class:`Layout` it is laid out for. Kept apart from the builders (``terminal``) and
from what rich lays out (``richtext``) so that both use the same types and neither imports the other
to name them."""

from __future__ import annotations

from dataclasses import dataclass

from transcript_reader.present.common import Clock
from transcript_reader.present.text import Line

#: A row of output: a styled line, or text rich already laid out (a Markdown answer, a diff).
Row = Line | str


@dataclass(frozen=True, slots=True)
class Layout:
    """What the rendering needs to know of where it goes: the width (None: a pipe, nothing wraps),
    whether rich may lay out Markdown and code (a terminal), with colour or not, and the clock."""

    width: int | None = None
    rich: bool = False
    color: bool = False
    clock: Clock = Clock()
