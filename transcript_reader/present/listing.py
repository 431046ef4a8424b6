"""The ``ls`` listing laid out as text: kept apart from the timeline renderer so that listing a
thousand sessions does not import the Markdown and syntax-highlighting machinery (pygments)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text

# ---- ls ---------------------------------------------------------------------------------------------


#: ls columns: (key, header, right-aligned), in the order they appear.
LS_COLUMNS = [
    ("when", "when", False),
    ("took", "took", True),
    ("short_id", "id", False),
    ("title", "title", False),
    ("cwd_short", "cwd", False),
    ("model", "model", False),
    ("version", "codex", False),
    ("turns", "turns", True),
    ("commands", "cmds", True),
    ("files", "files", True),
    ("tests", "tests", True),
    ("tokens_short", "tokens", True),
    ("cost_short", "cost", True),
]
#: Which columns give way first when the terminal is narrow (last dropped first).
LS_PRIORITY = ["when", "short_id", "commands", "files", "tests", "tokens_short", "cost_short", "took", "cwd_short",
               "turns", "model", "version"]
TITLE_MIN = 24
#: On a wide terminal the title stops here and the rest is left empty (a 140-cell title reads badly).
TITLE_MAX = 64
CWD_MAX = 40
#: Figures that need a whole read (hidden when no row has them: ``ls --stats``).
STATS_COLUMNS = ("turns", "commands", "files", "tests")


def ls_lines(rows: Sequence[dict[str, object]], *, width: int | None, show_cwd: bool, hide_stats: bool = False,
             when_title: str = "when") -> list[list[tuple[str, str]]]:
    """The session listing at a given width, one list of ``(text, style)`` segments per line (header
    first). ``rows`` are render-ready dicts (see cli.sessions). Columns are dropped from the end of
    ``LS_PRIORITY`` until the title keeps at least ``TITLE_MIN`` cells; the title takes what is left, up
    to ``TITLE_MAX``, and is cut with an ellipsis. ``width`` None (a pipe): every column whole, the fields
    of a row separated by one tab, never padded.

    Laid out by hand rather than with a rich Table: a thousand rows render in milliseconds."""
    from rich.cells import cell_len, set_cell_size

    cells: list[dict[str, str]] = []
    for r in rows:
        depth = int(r.get("depth") or 0)  # type: ignore[call-overload]
        title = str(r.get("title") or "(no prompt)")
        if depth:
            title = "  " * (depth - 1) + "└ " + (f"[{r['agent']}] " if r.get("agent") else "") + title
        elif r.get("parent_note") in ("cycle", "self"):
            # its parent links loop back to it, so it is listed top-level; say why.
            title = "[parent cycle] " + title
        if r.get("archived"):
            title = "[archived] " + title
        row = {key: ("" if r.get(key) is None else " ".join(str(r.get(key)).split())) for key, _, _ in LS_COLUMNS}
        row["title"] = " ".join(title.split()) if not depth else title.split("\n")[0]
        cells.append(row)
    if width is not None:  # on a terminal a long cwd keeps its end: that says which project it is
        for row in cells:
            if cell_len(row["cwd_short"]) > CWD_MAX:
                row["cwd_short"] = "…" + row["cwd_short"][-(CWD_MAX - 1):]
    heads = {key: (when_title if key == "when" else head) for key, head, _ in LS_COLUMNS}
    # the version column is headed by the agent whose version it is: "claude" over Claude Code rows;
    # over rows of both agents "version", and each value names its agent
    agents = {str(r.get("agent_name")) for r in rows if r.get("version") and r.get("agent_name")}
    if len(agents) == 1:
        heads["version"] = agents.pop()
    elif agents:
        heads["version"] = "version"
        for r, row in zip(rows, cells, strict=True):
            if row["version"] and r.get("agent_name"):
                row["version"] = f"{r['agent_name']} {row['version']}"
    widths = {key: max([cell_len(heads[key])] + [cell_len(row[key]) for row in cells]) for key, _, _ in LS_COLUMNS}
    costed = any("cost_short" in r for r in rows)  # the cost column: ``ls --stats`` only
    chosen = [k for k in LS_PRIORITY if (show_cwd or k != "cwd_short") and not (hide_stats and k in STATS_COLUMNS)
              and (costed or k != "cost_short")]
    longest_title = widths["title"]
    if width is not None:
        while chosen:
            if width - (sum(widths[k] for k in chosen) + len(chosen)) >= TITLE_MIN:
                break
            chosen.pop()
        room = width - sum(widths[k] for k in chosen) - len(chosen)
        widths["title"] = max(TITLE_MIN, min(room, TITLE_MAX, longest_title))
    columns = [(k, head, right) for k, head, right in LS_COLUMNS if k == "title" or k in chosen]
    if width is None:
        # A pipe: one tab between fields, nothing padded nor cut (a padded table made every row as wide
        # as the longest title; ``column -t -s $'\t'`` aligns it again for a person).
        def fields(values: dict[str, str], header: bool) -> list[tuple[str, str]]:
            out: list[tuple[str, str]] = []
            for i, (key, _, _) in enumerate(columns):
                out.extend([("\t", "")] if i else [])
                out.append((values[key], "bold" if header else ""))
            return out

        return [fields(heads, True)] + [fields(row, False) for row in cells]
    style = {"short_id": "dim", "cwd_short": "cyan", "version": "dim"}

    def line(values: dict[str, str], header: bool) -> list[tuple[str, str]]:
        segments: list[tuple[str, str]] = []
        for i, (key, _, right) in enumerate(columns):
            v = values[key]
            w = widths[key]
            if cell_len(v) > w:
                v = set_cell_size(v, w - 1) + "…"
            pad = " " * (w - cell_len(v))
            segments.append(((" " if i else "") + (pad + v if right else v + pad),
                             "bold" if header else style.get(key, "")))
        return segments

    out = [line(heads, True)]
    out.extend(line(row, False) for row in cells)
    return out


def segments_plain(line: list[tuple[str, str]]) -> str:
    return "".join(text for text, _ in line).rstrip()


def segments_text(line: list[tuple[str, str]]) -> Text:
    from rich.text import Text

    t = Text(no_wrap=True, overflow="crop")
    for text, style in line:
        t.append(text, style=style)
    t.rstrip()
    return t


def agent_of(e: Any) -> str | None:
    """The agent that wrote a listed session (``codex``, ``claude``): whose version its row shows."""
    return e.provider  # type: ignore[no-any-return]


def ls_row(e: Any, short_ids: dict[str, str], clock: Any = None) -> dict[str, object]:
    """One ``SessionEntry`` as the row ``ls`` and the browser list print (``ls_lines`` lays rows out):
    home-relative cwd, local times, short id, figures or "…" while they are not computed yet."""
    from pathlib import Path

    from transcript_reader.present.common import Clock, count, duration
    from transcript_reader.present.text import clean

    clock = clock or Clock()
    s = e.stats
    tok = e.tokens
    cwd = e.head.cwd
    home = str(Path.home())
    if cwd and (cwd == home or cwd.startswith(home.rstrip("/") + "/")):
        cwd = "~" + cwd[len(home):]
    unreadable = (e.head.error or "").startswith("cannot read")
    title = f"[unreadable: {e.head.error[len('cannot read: '):]}] {Path(e.path).name}" if unreadable else e.title
    row: dict[str, object] = {
        "when": clock.stamp(e.started, seconds=False),
        "took": duration(e.duration_s),
        "short_id": short_ids.get(e.session_id or "", ""),
        "title": clean(title) if title else None,
        "cwd_short": clean(cwd) if cwd else cwd,
        "model": clean(e.head.model) if e.head.model else None,
        "version": clean(e.head.cli_version) if e.head.cli_version else None,
        "agent_name": agent_of(e),
        "depth": e.depth,
        "parent_note": e.parent_note,
        "agent": clean(e.head.agent_nickname) if e.head.agent_nickname else None,
        "archived": e.archived,
        "tokens_short": count(tok.total) if tok is not None else "…" if s is None and not unreadable else "",
        "turns": "…", "commands": "…", "files": "…", "tests": "…",
    }
    if unreadable:
        row.update(turns="", commands="", files="", tests="")
    if s is not None:
        row.update(turns=s.turns, commands=f"{s.commands}" + (f" ({s.commands_failed}✗)" if s.commands_failed else ""),
                   files=s.files_changed,
                   tests=(f"{s.tests_passed}✓ {s.tests_failed}✗" if s.tests_passed or s.tests_failed else "-"))
    return row
