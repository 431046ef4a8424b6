"""Bounding what a tool returns, built for an agent's budget.

Two tools here. :func:`fit_items` spends a character budget on a list of rendered items the way an agent
needs it: the whole shape first (every item in short form: a command on one line with its exit code, a
patch's files, a prompt, an answer), and only then outputs, diffs and long texts, shrunk alike so that no
single item eats the budget. Items are cut before any is dropped; when even the short forms do not fit,
items are dropped from the end (or from the front, keeping the newest, for a ``tail`` read or a
``handoff``). :func:`bound_payload` is the final guard on the serialized text: no result outgrows its
limit whatever the file, the rendering overhead or the envelope.
"""

from __future__ import annotations

from typing import Any

import orjson

from transcript_reader.mcp.names import ENVELOPE_CHARS

#: Long text fields in the short form, largest first (a prompt or a final answer gets PRIORITY times more).
TEXT_LEVELS = (2_000, 1_000, 600, 300, 160, 80)
#: Output and diff excerpts once the shape fits, largest first (0: none; the size is still said).
OUTPUT_LEVELS = (4_000, 2_000, 1_000, 600, 300, 160, 80, 0)
#: Files a patch keeps in short form at each text level; the rest are counted in ``more_files``.
FILE_LEVELS = (200, 100, 50, 20, 10, 5)
PRIORITY = 4
#: Content that is detail, not shape: shown only when the budget allows, cut alike.
OUTPUT_FIELDS = frozenset({"output", "result", "arguments", "diff", "excerpt"})
TEXT_FIELDS = frozenset({"text", "command", "summary", "chars", "error", "reason", "message"})
#: Fields the short form leaves out: identifiers and defaults an agent does not read.
QUIET_FIELDS = frozenset({"call_id", "turn_id", "script_order", "argv", "duration_s", "truncated_chars",
                          "images", "phase", "refusal"})
QUIET_VALUES = {"status": "completed", "origin": "direct", "tool": ("exec_command", "shell", "shell_command",
                                                                   "local_shell", "apply_patch")}
KEEP_FALSE = frozenset({"success", "final"})
TRUNCATED = "\n[truncated]"


def _cut(value: str, limit: int) -> tuple[str, int]:
    if len(value) <= limit:
        return value, 0
    return value[: max(0, limit)] + TRUNCATED, len(value) - limit


def _quiet(key: str, value: Any) -> bool:
    if key in QUIET_FIELDS or value is None or value == "" or value == [] or value == {}:
        return True
    if value is False and key not in KEEP_FALSE:
        return True
    quiet = QUIET_VALUES.get(key)
    return quiet is not None and (value == quiet or isinstance(quiet, tuple) and value in quiet)


def short_form(item: dict[str, Any], text: int, output: int, files: int, *, cwd: str | None = None) -> dict[str, Any]:
    """``item`` in short form: quiet fields out, texts cut to ``text``, outputs to ``output`` (0: left out,
    its size kept in ``*_chars``), at most ``files`` patch files (``more_files`` counts the rest), and a
    ``cwd`` equal to the previous item's left out. The characters cut are added to ``truncated_chars``."""
    out: dict[str, Any] = {}
    cut = int(item.get("truncated_chars") or 0)
    if item.get("kind") == "user_message" or item.get("final"):
        text *= PRIORITY
    for key, value in item.items():
        if key == "cwd" and value == cwd:
            continue
        if _quiet(key, value):
            continue
        if key == "files" and isinstance(value, list):
            out["files"], n = _short_files(value, output, files)
            cut += n
            if len(value) > files:
                out["more_files"] = len(value) - files
            continue
        if isinstance(value, str) and key in OUTPUT_FIELDS:
            if output <= 0:
                cut += len(value)
                out.setdefault(f"{key}_chars", len(value))
                continue
            value, n = _cut(value, output)
            cut += n
        elif isinstance(value, str) and key in TEXT_FIELDS:
            value, n = _cut(value, text)
            cut += n
        out[key] = value
    if cut:
        out["truncated_chars"] = cut
    return out


def _short_files(files: list[Any], output: int, limit: int) -> tuple[list[Any], int]:
    kept, cut = [], 0
    for f in files[:limit]:
        if not isinstance(f, dict):
            kept.append(f)
            continue
        g = {k: v for k, v in f.items() if k != "diff" and v is not None}
        diff = f.get("diff")
        if isinstance(diff, str) and diff:
            if output > 0:
                g["diff"], n = _cut(diff, output)
                cut += n
            else:
                cut += len(diff)
        kept.append(g)
    for f in files[limit:]:
        diff = f.get("diff") if isinstance(f, dict) else None
        cut += len(diff) if isinstance(diff, str) else 0
    return kept, cut


def _sizes(items: list[dict[str, Any]]) -> int:
    return sum(len(dumps(i)) + 1 for i in items)


def _shorten(items: list[dict[str, Any]], text: int, output: int, files: int) -> list[dict[str, Any]]:
    out, cwd = [], None
    for item in items:
        out.append(short_form(item, text, output, files, cwd=cwd))
        cwd = item.get("cwd") if isinstance(item.get("cwd"), str) else cwd
    return out


def fit_items(items: list[dict[str, Any]], budget: int, *, keep_newest: bool) -> tuple[list[dict[str, Any]], int, int]:
    """``(items, dropped, compacted)``: ``items`` within ``budget`` characters (their JSON, one separator
    each), whole when they fit; else the shape first, then outputs (see the module docstring)."""
    if _sizes(items) <= budget:
        return items, 0, 0
    chosen = None
    for text, files in zip(TEXT_LEVELS, FILE_LEVELS):
        shape = _shorten(items, text, 0, files)
        if _sizes(shape) <= budget:
            chosen = (text, files)
            break
    if chosen is None:  # even the shortest forms do not fit: drop items, never the end a reader needs
        shape = _shorten(items, TEXT_LEVELS[-1], 0, FILE_LEVELS[-1])
        kept, left = [], budget
        order = range(len(shape) - 1, -1, -1) if keep_newest else range(len(shape))
        for i in order:
            size = len(dumps(shape[i])) + 1
            if size > left:
                break
            kept.append(shape[i])
            left -= size
        if keep_newest:
            kept.reverse()
        return kept, len(items) - len(kept), len(kept)
    text, files = chosen
    for output in OUTPUT_LEVELS:
        fitted = _shorten(items, text, output, files)
        if _sizes(fitted) <= budget:
            return fitted, 0, len(fitted)
    return shape, 0, len(shape)


def dumps(payload: Any) -> str:
    return orjson.dumps(payload).decode("utf-8")


def bound_payload(payload: dict[str, Any], key: str, limit: int, *, drop_front: bool) -> tuple[dict[str, Any], str]:
    """Serialize ``payload``; if the text exceeds ``limit``, drop entries of ``payload[key]`` (from the
    front for a tail read, else from the end) until it fits, set ``truncated`` and count what was dropped
    in ``stats`` (``dropped_items``/``returned_items``, ``returned_matches``) or ``dropped``.

    The library already applies ``maxChars`` to item text; this is the final guard at the server boundary
    on the serialized text, so no result outgrows ``maxChars + ENVELOPE_CHARS`` whatever the file or the
    rendering overhead (every item carries its line, timestamp, turn id, kind fields). An envelope that is
    itself too big (a file with thousands of unknown record types) is shrunk first.
    """
    text = dumps(payload)
    if len(text) <= limit:
        return payload, text
    entries = list(payload.get(key) or [])
    sizes = [len(dumps(e)) + 1 for e in entries]
    shell = _with_drop(payload, key, [], len(entries))
    if len(dumps(shell)) > ENVELOPE_CHARS:
        payload = {**shrink_envelope({k: v for k, v in payload.items() if k != key}), key: entries}
        shell = _with_drop(payload, key, [], len(entries))
    budget = limit - len(dumps(shell)) - 16  # the counts' digits differ a little from the shell's
    keep = 0
    order = range(len(entries) - 1, -1, -1) if drop_front else range(len(entries))
    for i in order:
        if sizes[i] > budget:
            break
        budget -= sizes[i]
        keep += 1
    kept = entries[len(entries) - keep :] if drop_front else entries[:keep]
    bounded = _with_drop(payload, key, kept, len(entries) - keep)
    text = dumps(bounded)
    if len(text) > limit:  # still too big: keep the scalars that identify the result, empty lists
        minimal: dict[str, Any] = {
            k: ([] if isinstance(v, list) else v)
            for k, v in shrink_envelope(payload, strings=200).items()
            if not isinstance(v, dict)
        }
        bounded = {**minimal, key: [], "truncated": True, "dropped": len(entries)}
        text = dumps(bounded)
    return bounded, text


def _with_drop(payload: dict[str, Any], key: str, kept: list[Any], dropped: int) -> dict[str, Any]:
    out = {**payload, key: kept, "truncated": True}
    stats = payload.get("stats")
    if isinstance(stats, dict) and key == "items":
        out["stats"] = {**stats, "returned_items": len(kept),
                        "dropped_items": int(stats.get("dropped_items") or 0) + dropped}
    elif isinstance(stats, dict) and key == "matches":
        out["stats"] = {**stats, "returned_matches": len(kept)}
    else:
        out["dropped"] = int(payload.get("dropped") or 0) + dropped
    return out


#: Envelope shrinking: how many entries of a {name: count} table, how many list entries, how long a string.
TOP_ENTRIES = 20
OTHER = "(others)"


def shrink_envelope(value: Any, *, strings: int = 1_000) -> Any:
    """A copy of ``value`` that cannot be large: ``{name: count}`` tables keep their ``TOP_ENTRIES`` biggest
    entries plus ``"(others)"`` with the rest's total (so sums still hold), lists keep ``TOP_ENTRIES``
    entries, strings are cut to ``strings`` characters."""
    if isinstance(value, str):
        return value if len(value) <= strings else value[:strings] + "…"
    if isinstance(value, list):
        return [shrink_envelope(v, strings=strings) for v in value[:TOP_ENTRIES]]
    if isinstance(value, dict):
        if len(value) > TOP_ENTRIES and all(isinstance(v, int) for v in value.values()):
            ranked = sorted(value.items(), key=lambda kv: (-kv[1], kv[0]))
            top = {shrink_envelope(k, strings=100): v for k, v in ranked[:TOP_ENTRIES]}
            top[OTHER] = sum(v for _, v in ranked[TOP_ENTRIES:])
            return top
        return {k: shrink_envelope(v, strings=strings) for k, v in value.items()}
    return value


def cut_strings(item: dict[str, Any], per_item: int) -> int:
    """Cut every string of a rendered item to ``per_item`` characters, counting the cut in
    ``truncated_chars``. The reader budgets each kind's text fields; this also covers the rest (a patch's
    diffs, a cwd, an argv) so one huge field never pushes its whole item out of a result."""
    cut = 0

    def walk(v: Any) -> Any:
        nonlocal cut
        if isinstance(v, str) and len(v) > per_item:
            cut += len(v) - per_item
            return v[:per_item] + "\n[truncated]"
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v

    for k, v in list(item.items()):
        item[k] = walk(v)
    if cut:
        item["truncated_chars"] = int(item.get("truncated_chars") or 0) + cut
    return cut


