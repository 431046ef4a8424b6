"""One Codex thread read across its files: the base file and the segments Codex writes after a rewind
(``history_base``; the provider finds the files, ``providers/codex/threads.py`` says how).

Reading a segment reads the whole thread, oldest file first: each earlier file up to where the next one
continues it, its later lines (the turns Codex rewound away) still shown but marked: a ``rewound``
notice opens each such turn and none of its messages is a final answer. Reading a base file alone marks
its rewound turns the same way and says where the thread continues. Each file after the first opens
with its own ``segment`` notice, and line numbers are each file's own.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from transcript_reader.model import AnyItem, AssistantMessage, LineAccounting, Notice, SessionInfo
from transcript_reader.reading.source import open_binary

_COUNT_CHUNK = 1 << 20


def lines_before(path: Path, offset: int) -> int:
    """How many whole lines the first ``offset`` bytes of ``path`` hold (a history_base cut)."""
    n = 0
    left = offset
    with open_binary(path) as fh:
        while left > 0:
            block = fh.read(min(_COUNT_CHUNK, left))
            if not block:
                break
            n += block.count(b"\n")
            left -= len(block)
    return n


def mark_rewound(items: Iterable[AnyItem], after_line: int, why: str) -> Iterator[AnyItem]:
    """``items`` with those past ``after_line`` marked as rewound: a notice opens each rewound turn,
    and a rewound answer is never final."""
    marked: Any = object()
    for item in items:
        if item.line > after_line:
            if item.turn_id != marked:
                marked = item.turn_id
                yield Notice(line=item.line, timestamp=item.timestamp, turn_id=item.turn_id, category="rewound",
                             message=why)
            if isinstance(item, AssistantMessage) and item.final:
                item = dataclasses.replace(item, final=False)
        yield item


def rewound_turns(items: list[AnyItem]) -> int:
    return len({i.turn_id for i in items if isinstance(i, Notice) and i.category == "rewound"})


def merge_infos(infos: list[SessionInfo], rewound: int, path: str) -> SessionInfo:
    """One ``SessionInfo`` for a thread read across files: counts and line accounting summed (every line
    of every file accounted for), turns without the rewound ones, times and title from the ends."""
    first, last = infos[0], infos[-1]
    counts: Counter[str] = Counter()
    acc = Counter[str]()
    for info in infos:
        counts.update(dict(info.counts))
        a = info.lines
        acc.update(lines=a.lines, decoded=a.decoded, known_noise=a.known_noise, unknown=a.unknown,
                   unreadable=a.unreadable, blank=a.blank)
    lines = LineAccounting(lines=acc["lines"], decoded=acc["decoded"], known_noise=acc["known_noise"],
                           unknown=acc["unknown"], unreadable=acc["unreadable"], blank=acc["blank"],
                           unknown_types=last.lines.unknown_types, noise_types=last.lines.noise_types,
                           cut_last_line=last.lines.cut_last_line)
    models = tuple(dict.fromkeys(m for info in infos for m in info.models))
    return dataclasses.replace(
        last, path=path, first_timestamp=first.first_timestamp, models=models,
        turns=max(0, sum(i.turns for i in infos) - rewound), counts=tuple(sorted(counts.items())), lines=lines,
        title=next((i.title for i in infos if i.title), None),
    )
