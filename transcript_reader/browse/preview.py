"""The preview pane of the session list: what the row says, then what a whole read adds (the prompt,
the last final answer, the figures and tokens), once the preview worker has read it."""

from __future__ import annotations

from rich.text import Text

from transcript_reader.browse.sources import Preview
from transcript_reader.browse.text import visible
from transcript_reader.present.common import count, duration
from transcript_reader.present.listing import agent_of
from transcript_reader.sessions.discovery import SessionEntry

PROMPT_CHARS = 600
ANSWER_CHARS = 1200


def _cut(text: str, n: int) -> str:
    text = visible(text.strip())
    return text if len(text) <= n else text[: n - 1] + "…"


def preview_text(e: SessionEntry, p: Preview | None, short: dict[str, str]) -> Text:
    t = Text()
    t.append(visible(e.title or "(no prompt)") + "\n", style="bold")
    started = e.started.astimezone().strftime("%Y-%m-%d %H:%M") if e.started else "?"
    bits = [e.session_id or "", started, duration(e.duration_s), e.head.model or "",
            f"{agent_of(e) or 'version'} {e.head.cli_version}" if e.head.cli_version else ""]
    t.append(visible(" · ".join(b for b in bits if b)) + "\n", style="dim")
    if e.head.cwd:
        t.append(visible(e.head.cwd) + "\n", style="cyan")
    if e.parent_id:
        t.append(visible(f"sub-agent of {e.parent_id}" + (f" ({e.parent_note})" if e.parent_note else "")) + "\n",
                 style="dim")
    if e.head.error:
        t.append(visible(f"⚠ {e.head.error}") + "\n", style="bold red")
    s = e.stats
    if s is not None:
        t.append("\n")
        t.append(f"{s.turns} turn{'s' if s.turns != 1 else ''} · {s.commands} command{'s' if s.commands != 1 else ''}")
        if s.commands_failed:
            t.append(f" ({s.commands_failed} failed)", style="bold red")
        t.append(f" · {s.files_changed} file{'s' if s.files_changed != 1 else ''} changed")
        if s.tests_passed or s.tests_failed:
            t.append(" · tests ")
            t.append(f"{s.tests_passed}✓", style="green")
            t.append(" ")
            t.append(f"{s.tests_failed}✗", style="bold red" if s.tests_failed else "dim")
        if s.answered is False:
            t.append(" · no final answer", style="bold yellow")
        t.append("\n")
    tok = e.tokens
    if tok is not None and tok.total:
        t.append(f"tokens {count(tok.total)} (input {count(tok.input)}, cached {count(tok.cached_input)}, "
                 f"output {count(tok.output)})\n", style="dim")
    if p is None:
        t.append("\nreading the session…", style="dim italic")
        return t
    if p.error:
        t.append(visible(f"\n⚠ {p.error}\n"), style="bold red")
        return t
    if p.info is not None and p.info.tokens is None:
        t.append("tokens unknown (the file records no usage)\n", style="dim")
    c = p.cost
    if c is not None and p.info is not None and p.info.tokens is not None:
        if c.usd is not None:
            t.append(visible(f"cost ${c.usd:,.2f} · {c.source}, prices of {c.price_date}") + "\n", style="dim")
        else:
            t.append(visible(f"cost unknown: {c.reason}") + "\n", style="dim")
    if p.prompt:
        t.append("\n› ", style="bold green")
        t.append(_cut(p.prompt, PROMPT_CHARS) + "\n")
    t.append("\n")
    if p.final:
        t.append("final answer\n", style="bold green")
        t.append(_cut(p.final, ANSWER_CHARS) + "\n")
    else:
        t.append("no final answer\n", style="bold yellow")
    return t
