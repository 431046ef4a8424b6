"""The census's human report: one three-column table, a heading row per group of figures (stdout)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from transcript_reader.census.figures import Figures
from transcript_reader.present.text import clean

Section = tuple[str, list[tuple[Any, ...]]]


def _table(title: str, rows: list[tuple[Any, ...]]) -> Section:
    return title, rows


def _one_table(sections: list[Section]) -> Table:
    """All sections in one three-column table (a heading row per section), so headings never wrap."""
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column("figure", no_wrap=True)
    t.add_column("value", justify="right", no_wrap=True)
    t.add_column("detail", overflow="fold")
    for i, (title, rows) in enumerate(sections):
        if i:
            t.add_row("", "", "")
        t.add_row(f"[bold underline]{title}[/]", "", "")
        for row in rows:
            label, value = row[0], row[1]
            detail = row[2] if len(row) > 2 else ""
            # labels and samples come from the files (tool names, record types, paths): plain text, through
            # ``clean``, never read as rich markup nor sent as escapes
            t.add_row(Text(clean(str(label))), f"{value:,}" if isinstance(value, int) else clean(str(value)),
                      Text(clean(str(detail))))
    return t


def _counter_rows(counter: dict[str, int], limit: int = 40) -> list[tuple[Any, ...]]:
    items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    rows: list[tuple[Any, ...]] = [(f"  {k}", v) for k, v in items[:limit]]
    if len(items) > limit:
        rows.append((f"  … {len(items) - limit} more", sum(v for _, v in items[limit:])))
    return rows or [("  (none)", "")]


def _sample(fig: dict[str, Any], key: str, label: str) -> tuple[str, Any, str]:
    s = fig[key]
    return (label, s["count"], " ".join(s["sample"][:3]) + (" …" if len(s["sample"]) > 3 else ""))


def render(figures: Figures) -> Group:
    """The report as a renderable; ``--json`` carries the same figures (and every sample)."""
    f = figures.to_json()
    pt = f["parse_time"]
    parts = [
        _table("Transcripts", [
            ("files", f["files"], f"{f['bytes'] / 1e6:,.1f} MB"),
            ("read", f["transcripts"]),
            ("duplicates skipped", f["duplicates_skipped"], "same file reached twice (.., symlink, named twice)"),
            ("refused by the library", sum(f["errors"].values()), ", ".join(f"{k}={v}" for k, v in f["errors"].items())),
            ("sessions (distinct ids)", f["sessions"]),
            ("turns", f["turns"]),
        ]),
        _table("By format", _counter_rows(f["files_by_format"])),
        _table("By format and Codex version", _counter_rows(f["files_by_version"])),
        _table("Lines", _counter_rows(f["lines"]) + [_sample(f, "unreadable", "files with unreadable lines")]),
        _table("Unknown line types", _counter_rows(f["unknown_types"])),
        _table("Items by kind", _counter_rows(f["items_by_kind"])),
        _table("Top-level calls by tool", _counter_rows(f["direct_calls_by_tool"])
               + [("top-level apply_patch calls", f["top_level_apply_patch"])]),
        _table("Exec cells", [
            ("exec cells", f["exec_cells"]),
            ("scripts analysed", f["scripts"]),
            _sample(f, "primary_rejected", "primary parser rejected (lexer used)"),
            _sample(f, "lexer_disagrees", "primary vs lexer disagree"),
            ("esprima parsed / rejected", f"{f['esprima_parsed']:,} / {f['esprima_rejected']:,}"),
            _sample(f, "esprima_disagrees", "primary vs esprima disagree"),
            _sample(f, "whole_script", "whole-script fallbacks"),
            ("unresolved patch paths", f["unresolved_patch_paths"]),
        ] + [("parser " + k, v) for k, v in f["script_parsers"].items()]),
        _table("Script calls by tool", _counter_rows(f["script_calls_by_tool"])),
        _table("exec_command arguments", [
            ("all", f["exec_command_args"].get("all", 0)),
            ("not valid JSON", f["exec_command_args"].get("not_json", 0)),
            ("decoded (literal)", f["exec_command_args"].get("decoded", 0)),
            ("computed", f["exec_command_args"].get("computed", 0)),
        ]),
        _table("Script entries", _counter_rows(f["script_entries"])
               + [("executed " + k, v) for k, v in f["executed"].items()]
               + [("record-only " + k, v) for k, v in f["record_entries"].items()]),
        _table("Test runs", _counter_rows(f["test_runs"])),
        _table("Tokens", _counter_rows(f["tokens"]) + [("source " + k, v) for k, v in f["token_sources"].items()]),
        _table("Exec streams: run status", _counter_rows(f["run_status"])),
        _table("Parse time (primary parser)", [
            ("total", f"{pt['total_ms']:,.1f} ms"),
            ("p50", f"{pt['p50_us']:,.1f} µs"),
            ("p99", f"{pt['p99_us']:,.1f} µs"),
            ("worst", f"{pt['worst_us']:,.1f} µs", pt["worst"] or ""),
        ]),
    ]
    if f["crashes"]["count"]:
        parts.append(_table("Library crashes (please report)", [_sample(f, "crashes", "files")]))
    return Group(_one_table(parts))


def print_report(figures: Figures, console: Console) -> None:
    console.print(render(figures))
    if figures.interrupted:
        console.print("[bold yellow]Interrupted: these are the figures counted so far.[/]")
