"""present: the wording and layout shared by the terminal, Markdown and HTML renderings, on hand-built
items (every ``executed``/origin case, folding, diffs, backticks, marks)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
from transcript_reader.present.terminal import render_text

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
    return render_text(items(), None, opts, width=width)


def test_executed_and_origin_are_always_worded() -> None:
    out = render_terminal(c.Options(session_cwd="/p"))
    assert re.search(r"✗ exit 1 +2\.5s  ran · call  in src  \$ pytest -q", out)
    assert re.search(r"✓ exit 0 +ran · code cell  in \.  \$ ls", out)
    assert re.search(r"· not run +did not run · code cell  in \.  \$ rm -rf build", out)
    assert re.search(r"✗ exit 2 +ran · record  in \.  \$ make", out)
    assert re.search(r"· exit \? +unknown · call  in \.  \$ sleep 100", out)
    assert "⚑ tests fail  pytest: 3 passed, 1 failed" in out
    assert "⚠ line 10 unreadable: invalid JSON" in out
    # a command that did not run is said apart, not counted; test runs are counted as runs
    assert "1 turn · 4 commands (2 failed, 1 not run) · 2 files changed · 1 test run: 1 failing" in out


def test_outputs_fold_with_a_count_and_full_unfolds() -> None:
    folded = render_terminal(c.Options())
    # the pytest run failed (exit 1): its first 3 lines, then the last 15, where a failure is told
    assert "out 2" in folded and "out 3" not in folded and "out 4" not in folded and "out 5" in folded
    assert "… 2 more lines (the last lines follow)" in folded
    full = render_terminal(c.Options(full=True))
    assert "out 19" in full and "more lines" not in full


def test_long_prompts_answers_and_reasoning_fold_with_a_count_and_full_unfolds() -> None:
    """A pasted 20 MB log in a prompt was printed whole (250,000 lines, ~20x its size in memory
    inside rich). Prompts, answers and reasoning fold like outputs; --full shows them whole."""
    from transcript_reader.model import Reasoning

    pasted = "\n".join(f"log line {i:06d} " + "x" * 60 for i in range(250_000))
    answer = "\n\n".join(f"Paragraph {i}." for i in range(200))
    timeline = [UserMessage(line=1, text="look at this:\n" + pasted, timestamp="2026-11-30T10:00:00Z"),
                Reasoning(line=2, text="r" * 50_000),
                AssistantMessage(line=3, text=answer, final=True)]
    opts = c.Options(message_fold_lines=10, message_fold_chars=2_000)
    out = render_text(timeline, None, opts)
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
    out = render_text(timeline[1:], None, full)
    assert "Paragraph 199." in out and "more chars" not in out


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
    assert "… 2 more lines" in md
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
    assert "<details><summary>output: 2 more line(s)</summary>" in page
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


UNITTEST = "\n".join([f"test_{i} (t.T.test_{i}) ... ok" for i in range(12)] + [
    "test_add (t.T.test_add) ... FAIL", "", "=" * 70, "FAIL: test_add (t.T.test_add)", "-" * 70,
    "Traceback (most recent call last):", '  File "t.py", line 9, in test_add',
    "    self.assertEqual(add(2, 2), 4)", "AssertionError: 0 != 4", "", "-" * 70, "Ran 13 tests in 0.002s", "",
    "FAILED (failures=1)"])
ENVELOPE = "Chunk ID: 3f2a\nWall time: 0.2 seconds\nProcess exited with code 1\nOriginal token count: 90\nOutput:\n"


def _unittest(exit_code: int | None, output: str, raw: str | None = None) -> list:
    cmd = ShellCommand(line=2, command="python -m unittest -v", exit_code=exit_code, output=output,
                       output_chars=len(raw[len(ENVELOPE):]) if raw else len(output), call_id="u1",
                       executed=Executed.YES)
    out = [UserMessage(line=1, text="run the tests"), cmd]
    if raw is not None:
        out.append(RawOutput(line=3, call_id="u1", text=raw))
    return out


@pytest.mark.parametrize("render", ["terminal", "md", "html"])
def test_a_failed_run_keeps_its_tail_in_every_rendering(render: str) -> None:
    """A failed 13-test unittest run shows the FAIL block and the summary, not six '... ok' lines."""
    timeline = _unittest(1, UNITTEST)
    if render == "terminal":
        out = render_text(timeline, None, c.Options())
    elif render == "md":
        out = timeline_markdown(timeline, None, c.Options())
    else:
        out = timeline_html(timeline, None, c.Options())
    assert "FAIL: test_add" in out and "FAILED (failures=1)" in out and "AssertionError: 0 != 4" in out
    assert "test_0 (t.T.test_0) ... ok" in out  # the head stays too
    assert "test_5 (t.T.test_5) ... ok" not in out or render == "html"  # html: one click away


def test_a_passing_run_folds_to_its_head_and_a_failing_test_run_counts_as_a_failure() -> None:
    ok = UNITTEST.replace("FAILED (failures=1)", "OK")
    out = render_text(_unittest(0, ok), None, c.Options())
    assert "test_5 (t.T.test_5) ... ok" in out and "test_6 (t.T.test_6)" not in out and "Ran 13" not in out
    # `unittest | tail` exits 0 but its test run failed: the output folds as a failure's
    timeline = _unittest(0, UNITTEST) + [TestRun(line=2, framework="unittest", command="python -m unittest -v",
                                                 result=TestResult.FAIL, passed=12, failed=1)]
    assert "FAILED (failures=1)" in render_text(timeline, None, c.Options())


def test_full_and_folded_show_the_same_text_without_the_envelope() -> None:
    """--full reads the raw output, which Codex wraps in Chunk ID / Wall time / token count lines: they
    are removed as in the folded excerpt, so the two views differ only by what folding hides."""
    excerpt = UNITTEST[:300]
    timeline = _unittest(1, excerpt, raw=ENVELOPE + UNITTEST)
    full = render_text(timeline, None, c.Options(full=True))
    folded = render_text(timeline, None, c.Options())
    for text in (full, folded):
        assert "Chunk ID" not in text and "Wall time" not in text and "Original token count" not in text
    assert "FAILED (failures=1)" in full and full.count("... ok") == 12


def test_control_characters_are_shown_never_sent() -> None:
    """An OSC 52 sequence (clipboard write), OSC 0 (window title), ESC[2J (clear screen), a BEL and a C1
    CSI in content reach the output as visible escapes."""
    nasty = "\x1b]52;c;aGVsbG8=\x07 \x1b]0;pwned\x07 \x1b[2J \x9b31m \x07 done"
    timeline = [UserMessage(line=1, text="x" + nasty),
                ShellCommand(line=2, command="echo " + nasty, exit_code=0, output=nasty, output_chars=len(nasty),
                             executed=Executed.YES),
                AssistantMessage(line=3, text=nasty, final=True)]
    out = render_text(timeline, None, c.Options())
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert out.count("\\x1b]52;c;") == 4 and "\\x9b31m" in out


def test_ascii_fallback_and_wrapping_never_cut_a_command() -> None:
    import io as _io

    from transcript_reader.present.terminal import Layout, timeline_rows
    from transcript_reader.present.text import Out

    long = "python -m pytest tests/test_very_long_module_name.py::TestClass::test_something -x -q --tb=short"
    timeline = [UserMessage(line=1, text="go"), ShellCommand(line=2, command=long, exit_code=0, cwd="/p/sub",
                                                              executed=Executed.YES)]
    for width in (20, 60, 120, 220):
        buf = _io.StringIO()
        out = Out(buf, width=width, color=False, ascii=True)
        for r in timeline_rows(timeline, None, c.Options(session_cwd="/p"), Layout(width=width)):
            out.line(r)  # type: ignore[arg-type]
        text = buf.getvalue()
        assert all(len(row) <= width for row in text.split("\n")), (width, text)
        assert text.isascii()
        joined = "".join(row.strip() for row in text.split("\n"))
        assert long.replace(" ", "") in joined.replace(" ", ""), (width, text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab \t\r\n\x0b\x0c\x1b\x85é", max_size=300), limit=st.integers(1, 40))
def test_one_line_reads_only_what_it_shows_and_equals_the_whole_text_definition(text: str, limit: int) -> None:
    from transcript_reader.present.text import clean
    from transcript_reader.present.text import one_line as _one_line

    whole = " ".join(clean(text).split())
    assert _one_line(text, limit) == (whole if len(whole) <= limit else whole[: limit - 1] + "…")
