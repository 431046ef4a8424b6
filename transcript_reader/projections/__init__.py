"""Projections and limits: the contract the CLI and the MCP server share.

A projection names the kinds a reader wants (``timeline``, ``conversation``, ``final``, …); ``include`` /
``exclude`` adjust it per kind. Limits then apply in a fixed order, over a stream, keeping only what the
result will hold: ``tail`` (the last N), ``max_items`` (the first N), ``max_chars_per_item`` (each item's
text fields cut, the item says how many characters in ``truncated_chars``), ``max_chars`` (the result's
total text; items past it are dropped and counted). Nothing is dropped silently: the result says
``truncated`` and how many items it dropped.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from transcript_reader.errors import InvalidArgumentError
from transcript_reader.model import HIDDEN_BY_DEFAULT, AnyItem, Kind, PatchItem, SearchMatch

_ALL = frozenset(Kind)
_TIMELINE = _ALL - HIDDEN_BY_DEFAULT

#: projection name -> kinds it shows by default
PROJECTIONS: dict[str, frozenset[Kind]] = {
    "timeline": _TIMELINE,
    "conversation": frozenset({Kind.USER_MESSAGE, Kind.ASSISTANT_MESSAGE}),
    "final": frozenset({Kind.ASSISTANT_MESSAGE}),
    "assistant_messages": frozenset({Kind.ASSISTANT_MESSAGE}),
    "shell_commands": frozenset({Kind.SHELL_COMMAND, Kind.STDIN_WRITE}),
    "file_changes": frozenset({Kind.PATCH}),
    "tests": frozenset({Kind.TEST_RUN}),
    "tool_calls": frozenset({Kind.TOOL_CALL}),
    "raw_outputs": frozenset({Kind.RAW_OUTPUT}),
}

#: text fields of each kind, in the order a per-item budget is spent (short identifying fields first)
TEXT_FIELDS: dict[Kind, tuple[str, ...]] = {
    Kind.USER_MESSAGE: ("text",),
    Kind.CONTEXT: ("text",),
    Kind.ASSISTANT_MESSAGE: ("text",),
    Kind.REASONING: ("text",),
    Kind.SHELL_COMMAND: ("command", "output"),
    Kind.STDIN_WRITE: ("chars", "output"),
    Kind.PATCH: ("error",),
    Kind.TEST_RUN: ("command",),
    Kind.TOOL_CALL: ("name", "arguments", "result"),
    Kind.RAW_OUTPUT: ("text",),
    Kind.NOTICE: ("message",),
    Kind.UNREADABLE: ("reason",),
}


def parse_kinds(names: Iterable[str]) -> frozenset[Kind]:
    out = set()
    for n in names:
        try:
            out.add(Kind(n))
        except ValueError:
            known = ", ".join(k.value for k in Kind)
            raise InvalidArgumentError(f"unknown kind {n!r} (known: {known})") from None
    return frozenset(out)


def selected_kinds(projection: str, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> frozenset[Kind]:
    """Every kind :func:`selector` may keep (``final`` keeps some assistant messages only)."""
    if projection not in PROJECTIONS:
        raise InvalidArgumentError(f"unknown projection {projection!r} (known: {', '.join(PROJECTIONS)})")
    return (PROJECTIONS[projection] | parse_kinds(include)) - parse_kinds(exclude)


def selector(projection: str, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> Callable[[AnyItem], bool]:
    """A predicate for the items ``projection`` (adjusted by include/exclude) selects."""
    if projection not in PROJECTIONS:
        raise InvalidArgumentError(f"unknown projection {projection!r} (known: {', '.join(PROJECTIONS)})")
    inc, exc = parse_kinds(include), parse_kinds(exclude)
    kinds = (PROJECTIONS[projection] | inc) - exc
    if projection == "final":
        extra = inc - exc

        def pick_final(item: AnyItem) -> bool:
            k = item.kind
            if k is Kind.ASSISTANT_MESSAGE and Kind.ASSISTANT_MESSAGE not in exc:
                return bool(item.final) or Kind.ASSISTANT_MESSAGE in extra  # type: ignore[union-attr]
            return k in extra

        return pick_final
    return lambda item: item.kind in kinds


@dataclass(slots=True)
class Limits:
    tail: int | None = None
    max_items: int | None = None
    max_chars: int | None = None
    max_chars_per_item: int | None = None

    def check(self) -> None:
        for name in ("tail", "max_items", "max_chars", "max_chars_per_item"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise InvalidArgumentError(f"{name} must be a non-negative integer, got {v!r}")


def item_chars(item: AnyItem) -> int:
    n = 0
    for f in TEXT_FIELDS[item.kind]:
        v = getattr(item, f)
        if isinstance(v, str):
            n += len(v)
    if isinstance(item, PatchItem):
        # a patch's per-file diffs are its bulk: --max-chars must bound them too
        n += sum(len(fc.diff or "") for fc in item.files)
    return n


def cut_item(item: AnyItem, budget: int) -> AnyItem:
    """``item`` with its text fields cut to ``budget`` characters in total (``truncated_chars`` set)."""
    changes: dict[str, object] = {}
    removed = 0
    left = budget
    for f in TEXT_FIELDS[item.kind]:
        v = getattr(item, f)
        if not isinstance(v, str):
            continue
        if len(v) <= left:
            left -= len(v)
            continue
        changes[f] = v[:left]
        removed += len(v) - left
        left = 0
    if isinstance(item, PatchItem):
        files = []
        for fc in item.files:
            if fc.diff and len(fc.diff) > left:
                removed += len(fc.diff) - left
                fc = dataclasses.replace(fc, diff=fc.diff[:left])
                left = 0
            elif fc.diff:
                left -= len(fc.diff)
            files.append(fc)
        if removed:
            changes["files"] = tuple(files)
    if not removed:
        return item
    return dataclasses.replace(item, truncated_chars=item.truncated_chars + removed, **changes)  # type: ignore[arg-type]


def apply_projection(items: Iterable[AnyItem], limits: Limits) -> tuple[list[AnyItem], int, int, int, bool]:
    """(kept, total selected, dropped, characters cut, truncated) over a stream of selected items."""
    total = 0
    if limits.tail is not None:
        window: deque[AnyItem] = deque(maxlen=limits.tail)
        for it in items:
            total += 1
            window.append(it)
        kept = list(window)
        if limits.max_items is not None:
            kept = kept[: limits.max_items]
    else:
        kept = []
        cap = limits.max_items
        for it in items:
            total += 1
            if cap is None or len(kept) < cap:
                kept.append(it)
    cut_chars = 0
    if limits.max_chars_per_item is not None:
        out = []
        for it in kept:
            c = cut_item(it, limits.max_chars_per_item)
            cut_chars += c.truncated_chars - it.truncated_chars
            out.append(c)
        kept = out
    if limits.max_chars is not None:
        budget = limits.max_chars
        order = reversed(kept) if limits.tail is not None else iter(kept)
        fitted: list[AnyItem] = []
        for it in order:
            n = item_chars(it)
            if n <= budget:
                fitted.append(it)
                budget -= n
                continue
            if not fitted and budget > 0:
                c = cut_item(it, budget)  # never return nothing when one cut item fits
                cut_chars += c.truncated_chars - it.truncated_chars
                fitted.append(c)
            break
        if limits.tail is not None:
            fitted.reverse()
        kept = fitted
    dropped = total - len(kept)
    truncated = dropped > 0 or cut_chars > 0
    return kept, total, dropped, cut_chars, truncated


# ---------------------------------------------------------------- search


def search_text(item: AnyItem) -> str:
    """The text a search looks at: the item's text fields, plus patch file paths."""
    parts = [v for f in TEXT_FIELDS[item.kind] if isinstance(v := getattr(item, f), str) and v]
    if item.kind is Kind.PATCH:
        parts.extend(f.path for f in item.files)  # type: ignore[union-attr]
    if item.kind is Kind.TEST_RUN:
        parts.append(item.framework)  # type: ignore[union-attr]
    return "\n".join(parts)


def centred_excerpt(text: str, start: int, end: int, width: int) -> str:
    """A window of ``width`` characters of ``text`` centred on ``[start, end)``."""
    if len(text) <= width:
        return text
    hit = end - start
    if hit >= width:
        return text[start:start + width] + "…"
    lo = max(0, start - (width - hit) // 2)
    hi = min(len(text), lo + width)
    lo = max(0, hi - width)
    return ("…" if lo > 0 else "") + text[lo:hi] + ("…" if hi < len(text) else "")


def search_items(
    items: Iterable[AnyItem], query: str, *, regex: bool, kinds: Iterable[str], context: int, max_matches: int,
    max_chars_per_match: int,
) -> tuple[list[SearchMatch], int, bool]:
    """(matches, total matches, truncated) over a stream; keeps only what the result holds."""
    if not query:
        raise InvalidArgumentError("empty query")
    for name, v in (("context", context), ("max_matches", max_matches), ("max_chars_per_match", max_chars_per_match)):
        if not isinstance(v, int) or v < 0:
            raise InvalidArgumentError(f"{name} must be a non-negative integer, got {v!r}")
    try:
        pattern = re.compile(query if regex else re.escape(query), re.IGNORECASE)
    except re.error as e:
        raise InvalidArgumentError(f"invalid regex: {e}") from None
    wanted = parse_kinds(kinds) or _TIMELINE
    before: deque[AnyItem] = deque(maxlen=context or None) if context else deque(maxlen=0)
    open_after: list[tuple[list[AnyItem], int]] = []
    built: list[tuple[AnyItem, tuple[AnyItem, ...], list[AnyItem], str]] = []
    total = 0

    def stream() -> Iterator[AnyItem]:
        return (i for i in items if i.kind in wanted)

    for it in stream():
        if open_after:
            still = []
            for lst, need in open_after:
                lst.append(it)
                if need > 1:
                    still.append((lst, need - 1))
            open_after = still
        text = search_text(it)
        m = pattern.search(text)
        if m is not None:
            total += 1
            if len(built) < max_matches:
                after: list[AnyItem] = []
                built.append((it, tuple(before), after,
                               centred_excerpt(text, m.start(), m.end(), max_chars_per_match)))
                if context:
                    open_after.append((after, context))
        if context:
            before.append(it)
    matches = [SearchMatch(item=i, before=b, after=tuple(a), excerpt=e) for i, b, a, e in built]
    return matches, total, total > len(matches)
