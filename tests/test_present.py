"""present: the wording and layout shared by the terminal, Markdown and HTML renderings, on hand-built
items (every ``executed``/origin case, folding, diffs, backticks, marks)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from transcript_reader.model import (
    AssistantMessage,
    Executed,
    FileChange,
    Origin,
    PatchItem,
    RawOutput,
    ShellCommand,
    TestResult,
    TestRun,
    ToolCallItem,
    Unreadable,
    UserMessage,
)
from transcript_reader.present import common as c
from transcript_reader.present.html import highlight, timeline_html
from transcript_reader.present.markdown import code, fence, timeline_markdown
from transcript_reader.present.terminal import print_timeline

DIFF = "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
LONG = "\n".join(f"out {i}" for i in range(20))


def items() -> list:
    return [
        UserMessage(line=1, text="fix it", timestamp="2026-11-30T10:00:00Z"),
        ShellCommand(line=2, command="pytest -q", cwd="/p/src", exit_code=1, output=LONG, output_chars=len(LONG),
                     duration_s=2.5, call_id="c1", executed=Executed.YES),
        RawOutput(line=3, call_id="c1", text=LONG),
        ToolCallItem(line=4, name="exec", arguments='const r = await tools.exec_command({cmd: "ls"});\ntext(r.output);',
                     result="README.md", call_id="c2", executed=Executed.YES),
        ShellCommand(line=4, command="ls", cwd="/p", exit_code=0, output="README.md", output_chars=9,
                     origin=Origin.SCRIPT, executed=Executed.YES),
        ShellCommand(line=4, command="rm -rf build", cwd="/p", origin=Origin.SCRIPT, executed=Executed.NO),
        ShellCommand(line=4, command="make", cwd="/p", origin=Origin.RECORD, executed=Executed.YES, exit_code=2),
        ShellCommand(line=6, command="sleep 100", cwd="/p", executed=Executed.UNKNOWN),
        PatchItem(line=7, files=(FileChange("calc.py", "update", added=1, removed=1, diff=DIFF),
                                 FileChange("old.py", "update", move_to="new.py")), success=True,
                  executed=Executed.YES),
        TestRun(line=8, framework="pytest", command="pytest -q", result=TestResult.FAIL, passed=3, failed=1,
                executed=Executed.YES),
        AssistantMessage(line=9, text="Done: use `` `x` `` carefully.\n\n```py\nprint(1)\n```", final=True),
        Unreadable(line=10, reason="invalid JSON"),
    ]


def render_terminal(opts: c.Options, width: int = 100) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, no_color=True, force_terminal=False)
    print_timeline(console, items(), None, opts)
    return buf.getvalue()


def test_executed_and_origin_are_always_worded() -> None:
    out = render_terminal(c.Options(session_cwd="/p"))
    assert re.search(r"✗ exit 1 +2\.5s  ran · call  in src  \$ pytest -q", out)
    assert re.search(r"✓ exit 0 +ran · code cell  in \.  \$ ls", out)
    assert re.search(r"· not run +did not run · code cell  in \.  \$ rm -rf build", out)
    assert re.search(r"✗ exit 2 +ran · record  in \.  \$ make", out)
    assert re.search(r"· exit \? +unknown · call  in \.  \$ sleep 100", out)
    assert "⚑ tests fail  pytest: 3 passed, 1 failed" in out
    assert "⚠ line 10 unreadable: invalid JSON" in out
    assert "1 turn · 5 commands (2 failed) · 2 files changed · test runs 0 passed, 1 failed" in out


def test_outputs_fold_with_a_count_and_full_unfolds() -> None:
    folded = render_terminal(c.Options())
    assert "out 5" in folded and "out 6" not in folded
    assert "… 14 more lines (--full)" in folded
    full = render_terminal(c.Options(full=True))
    assert "out 19" in full and "more lines" not in full


def test_long_prompts_answers_and_reasoning_fold_with_a_count_and_full_unfolds() -> None:
    """QA F27: a pasted 20 MB log in a prompt was printed whole (250,000 lines, ~20x its size in memory
    inside rich). Prompts, answers and reasoning fold like outputs; --full shows them whole."""
    from transcript_reader.model import Reasoning

    pasted = "\n".join(f"log line {i:06d} " + "x" * 60 for i in range(250_000))
    answer = "\n\n".join(f"Paragraph {i}." for i in range(200))
    timeline = [UserMessage(line=1, text="look at this:\n" + pasted, timestamp="2026-11-30T10:00:00Z"),
                Reasoning(line=2, text="r" * 50_000),
                AssistantMessage(line=3, text=answer, final=True)]
    opts = c.Options(message_fold_lines=10, message_fold_chars=2_000)
    buf = io.StringIO()
    print_timeline(Console(file=buf, width=100, no_color=True, force_terminal=False), timeline, None, opts)
    out = buf.getvalue()
    assert "log line 000008 " in out and "log line 000009 " not in out
    # shown: "look at this:" and 9 log lines of 76 characters; the other 249,991 lines are counted
    prompt_chars = len("look at this:\n") + len(pasted)
    assert f"… 249,991 more lines, {prompt_chars - (13 + 9 * 77):,} more chars (--full)" in out
    shown_answer = "\n\n".join(f"Paragraph {i}." for i in range(5))
    assert "Paragraph 4." in out and "Paragraph 5." not in out
    assert f"… {2 * 200 - 1 - 10} more lines, {len(answer) - len(shown_answer):,} more chars (--full)" in out
    assert "… 48,000 more chars (--full)" in out
    assert len(out) < 20_000
    full = c.Options(full=True, message_fold_lines=10, message_fold_chars=2_000)
    buf = io.StringIO()
    print_timeline(Console(file=buf, width=100, no_color=True, force_terminal=False), timeline[1:], None, full)
    assert "Paragraph 199." in buf.getvalue() and "more chars" not in buf.getvalue()


def test_fold_message_counts_what_it_cuts() -> None:
    assert c.fold_message("a\nb\nc\nd\n", 2, 100, False) == c.Folded("a\nb", cut_lines=2, cut_chars=5)
    assert c.fold_message("a\nb\n", 2, 100, False) == c.Folded("a\nb\n")
    assert c.fold_message("y" * 500, 2, 100, False) == c.Folded("y" * 100, cut_lines=0, cut_chars=400)
    assert c.fold_message("a\nb\nc", 2, 100, True) == c.Folded("a\nb\nc")
    assert c.Folded("a\nb", cut_lines=2, cut_chars=5).note() == "… 2 more lines, 5 more chars (--full)"
    assert c.Folded("y", cut_chars=400).note() == "… 400 more chars (--full)"


def test_terminal_diff_and_script_marks() -> None:
    out = render_terminal(c.Options(diff=True, scripts=True))
    assert "-    return a - b" in out and "+    return a + b" in out
    assert "M old.py → new.py" in out
    assert "const r = await tools.exec_command" in out
    assert out.index("$ ls") > out.index("const r = await")  # the cell's entries follow its script…
    assert out.index("↳ cell output") > out.index("$ make")  # …and its output follows them


def test_markdown_export() -> None:
    md = timeline_markdown(items(), None, c.Options(diff=True, scripts=True, session_cwd="/p"), title="T")
    assert md.startswith("# T\n")
    assert "- ❌ exit 1 · 2.5s · ran · call · in `src`: `pytest -q`" in md
    assert "- ⚪ not run · did not run · code cell · in `.`: `rm -rf build`" in md
    assert "```diff\n" in md and "```js\n" in md
    assert "  - M `old.py → new.py` +0 −0" in md
    assert "… 14 more lines" in md
    assert "\n\n\n" not in md


@pytest.mark.parametrize("text", ["plain", "has ``` fence", "````four", "`edge`"])
def test_fences_and_inline_code_survive_backticks(text: str) -> None:
    block = fence(text)
    opening = block.split("\n")[0]
    assert opening.startswith("```") and opening not in text
    assert block.endswith(opening) and text in block
    inline = code(text)
    ticks = re.match(r"`+", inline).group(0)  # type: ignore[union-attr]
    assert ticks not in text and inline.endswith(ticks)


def test_html_folds_and_escapes() -> None:
    page = timeline_html(items(), None, c.Options(diff=True, scripts=True), title="<T>")
    assert "<title>&lt;T&gt;</title>" in page
    assert "<details><summary>output: 14 more line(s)</summary>" in page
    assert '<span class="gd">' in page and '<span class="gi">' in page  # diff highlighted
    assert page.count('class="cmd-text"') == 5
    assert "<script" not in page
    assert '<pre><code class="language-py">print(1)' in page  # the answer's Markdown is rendered


def test_html_markdown_escapes_raw_html_and_loads_no_image() -> None:
    from transcript_reader.present.html import markdown_html

    out = markdown_html("**ok** <img src=x onerror=alert(1)> ![pic](https://example.com/p.png)")
    assert "<strong>ok</strong>" in out and "<img" not in out and "&lt;img" in out


def test_highlight_marks_nest_with_tokens() -> None:
    src = 'const r = await tools.exec_command({cmd: "ls"});'
    start = src.index("tools.")
    end = src.index(");") + 1
    html = highlight(src, "js", [(start, end)])
    assert html.count('<mark class="call">') == 1 and html.count("</mark>") == 1
    inner = html.split('<mark class="call">')[1].split("</mark>")[0]
    assert re.sub(r"<[^>]+>", "", inner).replace("&quot;", '"') == src[start:end]


def test_group_turns_and_helpers() -> None:
    turns = c.group_turns(items())
    assert len(turns) == 1 and turns[0].prompt is not None
    assert not any(isinstance(i, RawOutput) for i in turns[0].items)
    assert c.short_cwd("/p/src/x", "/p") == "src/x" and c.short_cwd("/p", "/p") == "."
    assert c.short_cwd("/elsewhere", "/p") == "/elsewhere"
    assert c.duration(0.25) == "250ms" and c.duration(75) == "1m15s" and c.duration(3700) == "1h01m"
    assert c.count(49976) == "50k" and c.count(1234) == "1.2k" and c.count(12) == "12"
