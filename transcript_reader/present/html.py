"""A single self-contained HTML page of a timeline: inline CSS, no script, no network, readable on a
phone (fluid width, wrapped prose, code that scrolls sideways), outputs folded with ``<details>``,
JavaScript cells and diffs highlighted at export time (pygments tokens, classes defined inline).

Nothing is uploaded. The page holds what the transcript holds unless the items it is given were
redacted first (``export --redact``: ``transcript_reader.export.redact``); the header then counts what
was redacted.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Sequence

from pygments.lexers import DiffLexer, JavascriptLexer
from pygments.token import STANDARD_TYPES, _TokenType

from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    Notice,
    Origin,
    PatchItem,
    SessionInfo,
    ShellCommand,
    StdinWrite,
    TestResult,
    TestRun,
    ToolCallItem,
    Unreadable,
    UserMessage,
)
from transcript_reader.present import common as c

CSS = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--dim:#656d76;--line:#d0d7de;--code:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;
--warn:#9a6700;--acc:#0969da;--mark:#fff8c5}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--dim:#8d96a0;--line:#30363d;
--code:#161b22;--ok:#3fb950;--bad:#f85149;--warn:#d29922;--acc:#4493f8;--mark:#3b2e00}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:960px;padding:12px;background:var(--bg);color:var(--fg);
font:15px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif}
h1{font-size:1.35em;margin:.3em 0;overflow-wrap:anywhere}
h2{font-size:1.1em;border-bottom:1px solid var(--line);padding-bottom:.2em;margin-top:1.6em}
.meta,.dim{color:var(--dim);font-size:.9em;overflow-wrap:anywhere}
.prompt{border-left:4px solid var(--acc);padding:.3em .8em;margin:.6em 0;background:var(--code);
white-space:pre-wrap;overflow-wrap:anywhere}
.item{margin:.45em 0}
.nested{margin-left:1.2em;border-left:2px solid var(--line);padding-left:.6em}
.cmd{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em;
overflow-wrap:anywhere}
.badge{display:inline-block;border-radius:4px;padding:0 .35em;margin-right:.3em;font-size:.85em;
border:1px solid var(--line);white-space:nowrap}
.ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}
.cmd-text{font-weight:600}
pre{background:var(--code);border:1px solid var(--line);border-radius:6px;padding:.5em .7em;margin:.3em 0;
overflow-x:auto;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre.wrap{white-space:pre-wrap;overflow-wrap:anywhere}
details>summary{cursor:pointer;color:var(--dim);font-size:.88em}
.msg{margin:.8em 0}.msg .who{font-weight:600;color:var(--acc)}
.msg .body{white-space:pre-wrap;overflow-wrap:anywhere}
.md{overflow-wrap:anywhere}.md p{margin:.3em 0}.md code{background:var(--code);padding:0 .2em;border-radius:3px}
.md pre code{background:none;padding:0}
.final .who{color:var(--ok)}
mark.call{background:var(--mark);color:inherit;border-bottom:2px solid var(--warn)}
.files{margin:.2em 0 .2em 1.2em;padding:0;list-style:none;font-family:ui-monospace,monospace;font-size:.88em}
.add{color:var(--ok)}.del{color:var(--bad)}
.md h1,.md h2,.md h3,.md h4,.md h5,.md h6{font-size:1em;margin:.5em 0 .2em;border:0;padding:0}
.patch-failed .files,.patch-failed pre{opacity:.7}.patch-failed .files li{text-decoration:line-through}
table.header{border-collapse:collapse;margin:.6em 0;font-size:.9em}
table.header th{text-align:left;color:var(--dim);font-weight:400;padding:.1em 1em .1em 0;vertical-align:top}
table.header td{overflow-wrap:anywhere}
footer{margin-top:2em;border-top:1px solid var(--line);padding-top:.6em;font-weight:600}
/* pygments token classes (a subset, both schemes readable) */
.k,.kd,.kn,.kr,.kc{color:#cf222e}.s,.s1,.s2,.sb,.sa,.se,.si,.dl{color:#0a3069}.c,.c1,.cm{color:#6e7781}
.m,.mi,.mf{color:#0550ae}.nf,.fm{color:#8250df}.nb,.bp{color:#953800}.o{color:#cf222e}
.gi{color:#116329;background:#dafbe1}.gd{color:#82071e;background:#ffebe9}.gh,.gu{color:#0550ae;font-weight:600}
@media (prefers-color-scheme:dark){.k,.kd,.kn,.kr,.kc,.o{color:#ff7b72}.s,.s1,.s2,.sb,.sa,.se,.si,.dl{color:#a5d6ff}
.c,.c1,.cm{color:#8b949e}.m,.mi,.mf{color:#79c0ff}.nf,.fm{color:#d2a8ff}.nb,.bp{color:#ffa657}
.gi{color:#aff5b4;background:#033a16}.gd{color:#ffdcd7;background:#67060c}.gh,.gu{color:#79c0ff}}
"""

e = html.escape


def _cls(ttype: _TokenType) -> str:
    """pygments' short CSS class of a token type (its nearest standard ancestor)."""
    while ttype not in STANDARD_TYPES and ttype.parent is not None:
        ttype = ttype.parent
    return STANDARD_TYPES.get(ttype, "")


def highlight(source: str, lexer_name: str, marks: Sequence[tuple[int, int]] = ()) -> str:
    """Source as HTML spans with pygments classes; ``marks`` (code-point offsets) are wrapped in
    ``<mark class="call">`` (tokens are split at mark boundaries so both nest properly)."""
    lexer = JavascriptLexer() if lexer_name == "js" else DiffLexer()
    bounds = sorted({b for span in marks for b in span})
    starts = {s for s, _ in marks}
    ends = {end for _, end in marks}
    out: list[str] = []
    open_marks = 0
    for offset, ttype, value in lexer.get_tokens_unprocessed(source):
        pieces: list[tuple[int, str]] = []
        cut = offset
        for b in bounds:
            if offset < b < offset + len(value):
                pieces.append((cut, value[cut - offset:b - offset]))
                cut = b
        pieces.append((cut, value[cut - offset:]))
        cls = _cls(ttype)
        for pos, text in pieces:
            if pos in ends and open_marks:
                out.append("</mark>")
                open_marks -= 1
            if pos in starts:
                out.append('<mark class="call">')
                open_marks += 1
            out.append(f'<span class="{cls}">{e(text)}</span>' if cls else e(text))
    out.extend("</mark>" * open_marks)
    return "".join(out)


def markdown_html(text: str) -> str:
    """An assistant message's Markdown as HTML: raw HTML in the message is escaped, never passed
    through, and images are not rendered (an ``<img>`` would try to load, and the page loads nothing)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).disable("image")
    return md.render(text.strip() or "*(empty message)*")


#: A result longer than this (one long line of JSON, say) is folded even when it has few lines.
FOLD_CHARS = 600


def _folded(text: str, opts: c.Options, label: str = "output", *, failed: bool = False) -> str:
    """An output with the same folding as the terminal (a failure keeps its last lines): the hidden
    part is one click away in a ``<details>``, where it sits in the text."""
    if not text:
        return ""
    folded = c.fold_output(text, opts, failed=failed)
    if not folded.cut:
        if opts.full or len(text) <= FOLD_CHARS:
            return f'<pre class="wrap">{e(chr(10).join(folded.head))}</pre>'
        return (f'<pre class="wrap">{e(text[:FOLD_CHARS])}…</pre><details><summary>{label}: '
                f'{len(text) - FOLD_CHARS:,} more chars</summary><pre class="wrap">{e(text)}</pre></details>')
    rows = text.rstrip("\n").split("\n")
    cut_at = len(folded.head)
    hidden = e("\n".join(rows[cut_at:cut_at + folded.cut]))
    out = (f'<pre class="wrap">{e(chr(10).join(folded.head))}</pre><details><summary>{label}: '
           f'{folded.cut:,} more line(s)</summary><pre class="wrap">{hidden}</pre></details>')
    if folded.tail:
        out += f'<pre class="wrap">{e(chr(10).join(folded.tail))}</pre>'
    return out


def _command(item: ShellCommand, opts: c.Options, full_outputs: dict[str, str]) -> str:
    word, tone = c.status_word(item)
    parts = [f'<span class="badge {tone}">{e(word)}</span>']
    if item.duration_s is not None:
        parts.append(f'<span class="badge">{e(c.duration(item.duration_s))}</span>')
    parts.append(f'<span class="badge {"" if item.executed.value == "yes" else "warn"}">'
                 f'{e(c.provenance(item.executed, item.origin))}</span>')
    cwd = c.short_cwd(item.cwd, opts.session_cwd)
    if cwd:
        parts.append(f'<span class="dim">in {e(cwd)}</span> ')
    parts.append(f'<span class="cmd-text">$ {e(item.command)}</span>')
    text, _ = c.output_text(item, full_outputs, opts)
    out = f'<div class="item cmd">{"".join(parts)}</div>'
    if text:
        out += _folded(text, opts, failed=c.command_failed(item) or (item.line, item.command) in opts.failing_runs)
        if not opts.full and item.output_chars > len(text):
            out += f'<div class="dim">output excerpt: {len(text):,} of {item.output_chars:,} chars</div>'
    return out


def _patch(item: PatchItem, opts: c.Options) -> str:
    failed = item.success is False
    tone = "bad" if failed else "ok"
    state = "patch failed: not applied" if failed else "patch"
    head = (f'<div class="item cmd"><span class="badge {tone}">{state}</span>'
            f'<span class="badge">{e(c.provenance(item.executed, item.origin))}</span></div>')
    files = "".join(
        f'<li>{e(letter)} {e(path)} <span class="add">+{added}</span> <span class="del">−{removed}</span></li>'
        for letter, path, added, removed in c.patch_summary(item)
    )
    out = head + f'<ul class="files">{files}</ul>'
    if item.unresolved_paths:
        out += f'<div class="warn">{item.unresolved_paths} path(s) computed by the script (not resolved)</div>'
    if item.error:
        out += f'<pre class="wrap bad">{e(item.error.strip())}</pre>'
    if opts.diff:
        for f in item.files:
            if f.diff:
                what = "diff (not applied)" if failed else "diff"
                out += (f"<details{'' if failed else ' open'}><summary>{what} {e(f.path)}</summary>"
                        f"<pre>{highlight(f.diff, 'diff')}</pre></details>")
    return f'<div class="patch-failed">{out}</div>' if failed else out


def _item(item: AnyItem, opts: c.Options, full_outputs: dict[str, str]) -> str:
    if isinstance(item, ShellCommand):
        return _command(item, opts, full_outputs)
    if isinstance(item, PatchItem):
        return _patch(item, opts)
    if isinstance(item, UserMessage):  # typed into the running turn
        return f'<div class="prompt">{e(item.text.strip())}</div>'
    if isinstance(item, AssistantMessage):
        cls = "msg final" if item.final else "msg"
        who = "assistant" + (" · final answer" if item.final else "") + (" · refused" if item.refusal else "")
        return f'<div class="{cls}"><div class="who">{who}</div><div class="md">{markdown_html(item.text)}</div></div>'
    if isinstance(item, TestRun):
        tone = {TestResult.PASS: "ok", TestResult.FAIL: "bad"}.get(item.result, "warn")
        return (f'<div class="item cmd"><span class="badge {tone}">tests {e(item.result.value)}</span>'
                f'{e(item.framework)}: {e(c.test_summary(item))}</div>')
    if isinstance(item, ToolCallItem):
        if c.is_script_cell(item):
            failed = '<span class="badge bad">failed</span>' if item.success is False else ""
            head = f'<div class="item"><span class="badge">code cell</span>{failed}</div>'
            source = item.script or item.arguments  # the whole cell, not the excerpt
            if opts.scripts and source:
                from transcript_reader.present.richtext import script_call_spans

                head += f'<pre class="js">{highlight(source, "js", script_call_spans(source))}</pre>'
            return head
        args = " ".join(item.arguments.split())[:300]
        out = f'<div class="item cmd"><span class="badge">tool</span><b>{e(item.name)}</b> <span class="dim">{e(args)}</span>'
        if item.success is False:
            out += ' <span class="badge bad">failed</span>'
        out += "</div>"
        if item.result:
            out += _folded(item.result, opts, "result", failed=item.success is False)
        return out
    if isinstance(item, StdinWrite):
        return f'<div class="item cmd"><span class="badge">stdin</span>{e(repr(item.chars)[:200])}</div>'
    if isinstance(item, Notice):
        return f'<div class="item warn">{e(item.category)}: {e(item.message.strip())}</div>'
    if isinstance(item, Unreadable):
        return f'<div class="item bad">line {item.line} unreadable: {e(item.reason)}</div>'
    return ""


def timeline_html(items: Sequence[AnyItem], info: SessionInfo | None, opts: c.Options,
                  *, title: str | None = None, tally: c.Tally | None = None, clock: c.Clock | None = None,
                  header: Sequence[tuple[str, str]] = ()) -> str:
    """The page; ``header`` rows (``present.header``: model, tokens, cost, files, tests, what was
    redacted) are shown as a table under the title."""
    name = (title or (info.title if info else None) or "Codex session").strip()
    body: list[str] = [f"<h1>{e(name)}</h1>"]
    if info is not None:
        when = (clock or c.Clock()).stamp(info.first_timestamp, zone=True) if info.first_timestamp else None
        meta = [x for x in (info.session_id, when, info.cwd,
                            ", ".join(info.models) if info.models else None,
                            c.agent_version(info, "Codex")) if x]
        body.append(f'<div class="meta">{" · ".join(e(m) for m in meta)}</div>')
    if header:
        rows = "\n".join(f"<tr><th>{e(label)}</th><td>{e(value)}</td></tr>" for label, value in header)
        body.append(f'<table class="header">\n{rows}\n</table>')
    full_outputs = c.raw_outputs(items) if opts.full else {}
    opts = dataclasses.replace(opts, failing_runs=c.failing_runs(items))
    for turn in c.group_turns(items, info.turns if info is not None else 0):
        body.append("<section>")
        if turn.index:
            body.append(f"<h2>Turn {turn.index}</h2>")
            if not turn.items and turn.prompt is None:
                body.append(f'<div class="meta">{c.NOTHING_RECORDED}</div>')
        if turn.prompt is not None:
            body.append(f'<div class="prompt">{e(turn.prompt.text.strip())}</div>')
        cell: ToolCallItem | None = None
        nested_open = False
        for item in turn.items:
            nested = (cell is not None and getattr(item, "origin", None) in (Origin.SCRIPT, Origin.RECORD)
                      and item.line == cell.line)
            if cell is not None and not nested:
                body.append(_close_cell(cell, opts, nested_open))
                cell, nested_open = None, False
            if nested and not nested_open:
                body.append('<div class="nested">')
                nested_open = True
            body.append(_item(item, opts, full_outputs))
            if isinstance(item, ToolCallItem) and c.is_script_cell(item):
                cell = item
        if cell is not None:
            body.append(_close_cell(cell, opts, nested_open))
        body.append("</section>")
    parts = c.footer_parts(tally if tally is not None else items, info)
    body.append(f"<footer>{' · '.join(e(p) for p in parts)}</footer>")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">'
        f"<title>{e(name)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _close_cell(cell: ToolCallItem, opts: c.Options, nested_open: bool) -> str:
    out = "</div>" if nested_open else ""
    if cell.result:
        out += '<div class="dim">cell output</div>' + _folded(cell.result, opts, failed=cell.success is False)
    return out
