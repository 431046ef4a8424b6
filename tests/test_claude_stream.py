"""Claude Code's ``--output-format stream-json`` output, read as its own format (``claude-stream-json``).

Every stream here was printed by the real CLI (``@anthropic-ai/claude-code`` 2.1.332) through
``corpus_tools.record.claude_recorder`` against the scripted mock model; the recordings whose runs feed
the prompt as stream-json input (``plain_replay``, ``task_replay``, ``edit_replay``, ``max_turns``) carry the
top-level prompt, echoed by ``--replay-user-messages``; the others (``claude -p PROMPT``) carry none.

Three witnesses, none of them the reader:

- the stream's own ``result`` lines (usage, ``num_turns``, ``is_error``, ``result``), read here with ``json``;
- the session file Claude Code wrote for the same run (``NAME.projects/…/<session>.jsonl``, and its
  sub-agents' files), read by the session-file decoder: prompts, commands with exit codes, changed files,
  final answers and token usage must agree wherever both record them;
- the goldens (``NAME.stream.golden.json``) pin the rest (notices, context, accounting).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import golden_path
from tests.test_golden import snapshot
from transcript_reader.api import Transcript
from transcript_reader.model import (
    AssistantMessage,
    ContextMessage,
    Executed,
    Format,
    PatchItem,
    ShellCommand,
    UserMessage,
)
from transcript_reader.providers.claude.stream import StreamDecoder

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "recorded" / "2.1.332"
STREAMS = sorted(RECORDED.glob("*.stream*.jsonl"))
IDS = [p.name for p in STREAMS]
#: Recordings whose prompt is in the stream (fed on stdin, echoed with --replay-user-messages).
REPLAYED = ("plain_replay", "task_replay", "edit_replay", "max_turns")


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _results(path: Path) -> list[dict[str, Any]]:
    return [e for e in _events(path) if e.get("type") == "result"]


def test_the_recordings_are_there() -> None:
    names = {p.name.split(".")[0] for p in STREAMS}
    assert {"bash_ok", "bash_fail", "edit_write", "multi_turn", "task_agent", "task_background", "denied",
            *REPLAYED} <= names
    assert len(STREAMS) == 12  # eleven runs' streams and the resumed second run of multi_turn


@pytest.mark.parametrize("path", STREAMS, ids=IDS)
def test_stream_golden(path: Path, update_golden: bool) -> None:
    got = snapshot(path)
    assert got["info"]["format"] == Format.CLAUDE_STREAM.value
    golden = golden_path(path)
    if update_golden or not golden.exists():
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if not update_golden:
            pytest.fail(f"{golden.name} did not exist; written now, review it and re-run")
    assert got == json.loads(golden.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", STREAMS, ids=IDS)
def test_every_line_is_accounted_for(path: Path) -> None:
    lines = Transcript(path).info().lines
    physical = len(path.read_bytes().splitlines())
    assert lines.lines == physical
    assert lines.lines == lines.decoded + lines.known_noise + lines.unknown + lines.unreadable + lines.blank
    assert lines.unknown == 0 and lines.unreadable == 0  # every event of the real CLI is known


# ---------------------------------------------------------------- the result lines as witness


@pytest.mark.parametrize("path", STREAMS, ids=IDS)
def test_usage_is_what_the_result_lines_state(path: Path) -> None:
    """Token usage is the sum of the runs' ``result.usage`` (an assistant line's usage is the API's
    ``message_start`` snapshot, ``output_tokens`` 1: never summed), cache writes and reads kept apart."""
    want = Counter[str]()
    for r in _results(path):
        u = r["usage"]
        want["input"] += u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
        want["cached_input"] += u["cache_read_input_tokens"]
        want["cache_write"] += u["cache_creation_input_tokens"]
        want["output"] += u["output_tokens"]
    tok = Transcript(path).info().tokens
    assert tok is not None
    assert (tok.input, tok.cached_input, tok.cache_write, tok.output, tok.total) == (
        want["input"], want["cached_input"], want["cache_write"], want["output"], want["input"] + want["output"])
    assert 0 < tok.cache_write < tok.input and 0 < tok.cached_input < tok.input


@pytest.mark.parametrize("path", STREAMS, ids=IDS)
def test_model_turns_match_num_turns(path: Path) -> None:
    """Each run's ``num_turns`` is the number of the main conversation's model messages the stream shows
    for that run, except a run stopped by ``--max-turns``: Claude Code counts the turn it refused to start."""
    dec = StreamDecoder()
    for n, event in enumerate(_events(path), 1):
        dec.decode(event, n)
    results = _results(path)
    assert len(results) == len(dec.model_turns) == dec.runs
    for r, ours in zip(results, dec.model_turns, strict=True):
        extra = 1 if r["subtype"] == "error_max_turns" else 0
        assert r["num_turns"] == ours + extra, (r["subtype"], r["num_turns"], ours)


@pytest.mark.parametrize("path", STREAMS, ids=IDS)
def test_runs_answers_and_status_are_the_result_lines(path: Path) -> None:
    t = Transcript(path)
    items = list(t.items())
    info = t.info()
    results = _results(path)
    assert info.turns == len(results)
    finals = [i.text for i in items if isinstance(i, AssistantMessage) and i.final]
    assert finals == [r["result"] for r in results if not r["is_error"]]
    failed = [r for r in results if r["is_error"]]
    assert info.run_status == ("failed" if failed else "completed")
    if failed:
        assert info.run_error is not None and failed[0]["subtype"] in info.run_error


def test_an_error_result_is_a_failed_run_never_an_empty_success() -> None:
    t = Transcript(RECORDED / "max_turns.stream.jsonl")
    items = list(t.items())
    info = t.info()
    assert info.run_status == "failed"
    assert info.run_error == "error_max_turns: Reached maximum number of turns (1)"
    assert not [i for i in items if isinstance(i, AssistantMessage) and i.final]
    assert [(i.command, i.exit_code) for i in items if isinstance(i, ShellCommand)] == [("ls", 0)]
    assert any(i.kind.value == "notice" and "run 1 failed (error_max_turns)" in i.message for i in items)


# ---------------------------------------------------------------- prompts and sub-agents


def test_a_sub_agents_prompt_is_never_the_users() -> None:
    """The sub-agent's task prompt (a ``user`` line with ``parent_tool_use_id``) is context of the
    sub-agent; the top-level prompt, when the stream echoes it, is the only prompt."""
    for name, prompts in (("task_agent", []),
                          ("task_replay", ["have a sub-agent count the lines of hello.txt, then show the file"])):
        items = list(Transcript(RECORDED / f"{name}.stream.jsonl").items())
        assert [i.text for i in items if isinstance(i, UserMessage)] == prompts
        sub = [i for i in items if isinstance(i, ContextMessage) and i.text.startswith("SUBTASK-")]
        assert len(sub) == 1 and sub[0].label == "sidechain"
        answers = [i.text for i in items if isinstance(i, AssistantMessage) and i.final]
        assert len(answers) == 1 and "hello.txt has 1 line" in answers[0]
        assert not any(isinstance(i, AssistantMessage) and i.text == "hello.txt has 1 line." for i in items)


def test_a_run_without_its_prompt_says_so() -> None:
    items = list(Transcript(RECORDED / "bash_ok.stream.jsonl").items())
    assert not [i for i in items if isinstance(i, UserMessage)]
    assert any(i.kind.value == "notice" and "its prompt is not in the stream" in i.message for i in items)
    assert Transcript(RECORDED / "bash_ok.stream.jsonl").info().title is None


def test_a_background_run_ends_where_the_next_begins() -> None:
    """``task_background``: the notification wakes a second run (a second ``init``) before the first run's
    ``result`` is printed; each run keeps its own answer."""
    items = list(Transcript(RECORDED / "task_background.stream.jsonl").items())
    finals = [(i.turn_id, i.text) for i in items if isinstance(i, AssistantMessage) and i.final]
    assert finals == [("run-1", "A sub-agent is counting the words in the background."),
                      ("run-2", "The sub-agent reports that hello.txt has 2 words.")]


# ---------------------------------------------------------------- the session file of the same run


def _facts(items: list[Any]) -> dict[str, list[Any]]:
    return {
        "prompts": [i.text for i in items if isinstance(i, UserMessage)],
        "commands": sorted((i.command, i.exit_code) for i in items
                           if isinstance(i, ShellCommand) and i.executed is Executed.YES),
        "files": sorted((f.path, f.added, f.removed) for i in items
                        if isinstance(i, PatchItem) and i.executed is Executed.YES and i.success for f in i.files),
        "finals": [i.text for i in items if isinstance(i, AssistantMessage) and i.final],
    }


SCENARIOS = sorted({p.name.split(".")[0] for p in STREAMS})


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_stream_and_the_session_file_agree(name: str) -> None:
    """Where both record a fact they agree: commands with exit codes and changed files (the stream holds
    the sub-agents' too, the session keeps them in ``subagents/``), final answers, token usage, and the
    prompt when the stream echoes it."""
    result = json.loads((RECORDED / f"{name}.result.json").read_text())
    session = RECORDED / result["transcript"]
    streams = sorted(RECORDED.glob(f"{name}.stream*.jsonl"), key=lambda p: (p.name.count("turn"), p.name))
    stream_items = [i for s in streams for i in Transcript(s).items()]
    mine = _facts(stream_items)
    theirs = _facts(list(Transcript(session).items()))
    for agent in sorted(session.parent.glob(f"{session.stem}/subagents/agent-*.jsonl")):
        sub = _facts(list(Transcript(agent).items()))
        theirs["commands"] = sorted(theirs["commands"] + sub["commands"])
        theirs["files"] = sorted(theirs["files"] + sub["files"])
    assert mine["commands"] == theirs["commands"]
    assert mine["files"] == theirs["files"]
    if name == "task_background":
        # the session file has no run boundary: the notification that woke the second run is context
        # there, so its one turn answers once (the second run's answer); the stream states both runs' results
        assert len(mine["finals"]) == 2 and mine["finals"][-1:] == theirs["finals"]
    else:
        assert mine["finals"] == theirs["finals"]
    if name in REPLAYED:
        assert mine["prompts"] == theirs["prompts"] and mine["prompts"]
    else:
        assert mine["prompts"] == []
    ours = [Transcript(s).info().tokens for s in streams]
    session_tokens = Transcript(session).info().tokens
    assert session_tokens is not None and all(t is not None for t in ours)
    assert (sum(t.input for t in ours if t), sum(t.cached_input for t in ours if t),
            sum(t.cache_write for t in ours if t)) == (
        session_tokens.input, session_tokens.cached_input, session_tokens.cache_write)
    assert sum(t.output for t in ours if t) == session_tokens.output


def test_the_witness_is_not_vacuous() -> None:
    got = {n: _facts([i for s in sorted(RECORDED.glob(f"{n}.stream*.jsonl")) for i in Transcript(s).items()])
           for n in SCENARIOS}
    assert got["task_replay"]["commands"] == [("cat hello.txt; exit 3", 3), ("wc -l hello.txt", 0)]
    assert [c for _, c in got["bash_fail"]["commands"]] == [1, 1]
    assert [f[0].rsplit("/", 1)[1] for f in got["edit_replay"]["files"]] == ["NOTES.md", "calc.py"]
    assert got["edit_replay"]["files"][1][1:] == (1, 1)
    assert got["denied"]["commands"] == []
    assert got["plain_replay"] == {"prompts": ["say hello in one word"], "commands": [], "files": [],
                                   "finals": ["Hello."]}
