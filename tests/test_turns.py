"""Turns: a turn is a turn id, not a user message; harness context is never a prompt, whatever
its text; a user record without content is no empty prompt; a turn cut off by a dead process says so; a
``thread_rolled_back`` inside one file rewinds its turns' answers. The rollouts are built here in the
shapes real Codex writes (checked against ``../shared/corpus/realcodex``: 0.100 writes a turn's context
before its ``task_started`` and ``event_msg/user_message`` copies; 0.144+ after it; 0.150+ writes
``item_completed/UserMessage`` copies; the public alaarab/phren 0.157.1 fixture shows a sanitizer that
rewrote every text, so a prompt's two copies no longer have the same text)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import CORPUS
from tests.test_ls_inspect_agree import FILES, _ids
from transcript_reader import api
from transcript_reader.errors import TranscriptError
from transcript_reader.model import AssistantMessage, ContextMessage, Notice, UserMessage
from transcript_reader.present import common as c
from transcript_reader.present.html import timeline_html
from transcript_reader.present.markdown import timeline_markdown
from transcript_reader.present.terminal import Layout, render_text, timeline_rows
from transcript_reader.present.text import Line
from transcript_reader.projections import selector
from transcript_reader.sessions.discovery import list_sessions, read_entry

SID = "01a2a170-0000-7000-8000-00000000dddd"


class Rollout:
    def __init__(self, version: str = "0.120.0") -> None:
        self.lines: list[bytes] = []
        self.version = version
        self.add("2026-12-01T10:00:00.000Z", "session_meta",
                 {"id": SID, "timestamp": "2026-12-01T10:00:00.000Z", "cwd": "/w", "originator": "codex_cli_rs",
                  "cli_version": version, "source": "cli"})

    def add(self, ts: str, type_: str, payload: dict[str, Any]) -> None:
        self.lines.append(orjson.dumps({"timestamp": ts, "type": type_, "payload": payload}) + b"\n")

    def ev(self, ts: str, payload: dict[str, Any]) -> None:
        self.add(ts, "event_msg", payload)

    def user_item(self, ts: str, text: str, role: str = "user") -> None:
        self.add(ts, "response_item", {"type": "message", "role": role,
                                       "content": [{"type": "input_text", "text": text}] if text else []})

    def prompt(self, ts: str, text: str, copy: str | None = None, event_first: bool = False) -> None:
        """A person's prompt: its response_item copy (``copy``: the text a sanitizer left there) and
        its event copy, in the order of the era (response first; ``event_first`` as in 0.1xx TUI files)."""
        event: dict[str, Any]
        if tuple(int(x) for x in self.version.split(".")[:2]) >= (0, 150):
            event = {"type": "item_completed", "turn_id": "?", "item": {
                "type": "UserMessage", "id": "u", "content": [{"type": "text", "text": text}] if text else []}}
        else:
            event = {"type": "user_message", "message": text, "images": []}
        if event_first:
            self.ev(ts, event)
        self.user_item(ts, text if copy is None else copy)
        if not event_first:
            self.ev(ts, event)

    def answer(self, ts: str, text: str) -> None:
        self.add(ts, "response_item", {"type": "message", "role": "assistant",
                                       "content": [{"type": "output_text", "text": text}]})
        self.ev(ts, {"type": "agent_message", "message": text})

    def start(self, ts: str, turn: str) -> None:
        self.ev(ts, {"type": "task_started", "turn_id": turn})
        self.add(ts, "turn_context", {"cwd": "/w", "model": "gpt-5.5", "turn_id": turn})

    def complete(self, ts: str, turn: str, last: str | None) -> None:
        self.ev(ts, {"type": "task_complete", "turn_id": turn, "last_agent_message": last})

    def turn(self, ts: str, turn: str, prompt: str, answer: str) -> None:
        """A whole turn: started, prompted, answered, completed (all at ``ts``)."""
        self.start(ts, turn)
        self.prompt(ts, prompt)
        self.answer(ts, answer)
        self.complete(ts, turn, answer)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(self.lines))
        return path


def _show(path: Path) -> str:
    items = list(api.iter_items(path))
    return render_text(items, api.inspect(path), c.Options(), width=None)


def _sections(text: str) -> int:
    return len(re.findall(r"^Turn \d+", text, re.M))


def _footer_turns(text: str) -> int:
    m = re.search(r"^(\d+) turns?\b", text, re.M)
    assert m is not None, text
    return int(m.group(1))


# ---- turns by turn id -----------------------------------------------------------------------------


def test_a_message_typed_into_a_running_turn_stays_in_it(tmp_path: Path) -> None:
    r = Rollout()
    r.start("2026-12-01T10:00:01.000Z", "t1")
    r.prompt("2026-12-01T10:00:01.000Z", "fix the build")
    r.answer("2026-12-01T10:00:02.000Z", "Looking at the Makefile.")
    r.prompt("2026-12-01T10:00:03.000Z", "also run the tests")  # steering: same turn
    r.answer("2026-12-01T10:00:04.000Z", "Built and tested.")
    r.complete("2026-12-01T10:00:05.000Z", "t1", "Built and tested.")
    r.turn("2026-12-01T10:01:00.000Z", "t2", "thanks", "You're welcome.")
    path = r.write(tmp_path / "steer.jsonl")
    items = list(api.iter_items(path))
    assert [i.text for i in items if isinstance(i, UserMessage)] == ["fix the build", "also run the tests", "thanks"]
    assert [i.turn_id for i in items if isinstance(i, UserMessage)] == ["t1", "t1", "t2"]
    text = _show(path)
    assert _sections(text) == _footer_turns(text) == api.inspect(path).turns == 2
    assert "› also run the tests" in text  # shown, inside turn 1
    assert text.index("› also run the tests") < text.index("Turn 2")
    md = timeline_markdown(items, api.inspect(path), c.Options())
    assert md.count("## Turn ") == 2 and "> also run the tests" in md


def test_a_turn_whose_prompt_is_not_first_still_has_one_section(tmp_path: Path) -> None:
    """0.144+: a turn's context comes after task_started and before the prompt; the empty user record
    mid-turn must not open an empty "›" section holding the final answer."""
    r = Rollout()
    r.start("2026-12-01T10:00:01.000Z", "t1")
    r.user_item("2026-12-01T10:00:01.000Z", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>")
    r.prompt("2026-12-01T10:00:01.000Z", "what is wrong with calc.py?")
    r.answer("2026-12-01T10:00:02.000Z", "Let me look.")
    r.prompt("2026-12-01T10:00:03.000Z", "")  # a user record without content, both copies
    r.answer("2026-12-01T10:00:04.000Z", "add subtracts.")
    r.complete("2026-12-01T10:00:05.000Z", "t1", "add subtracts.")
    path = r.write(tmp_path / "empty.jsonl")
    items = list(api.iter_items(path))
    info = api.inspect(path)
    users = [i for i in items if isinstance(i, UserMessage)]
    assert [u.text for u in users] == ["what is wrong with calc.py?"]  # no empty user_message
    assert [i.category for i in items if isinstance(i, Notice)] == ["empty_message"]
    final = [i for i in items if isinstance(i, AssistantMessage) and i.final]
    assert [f.text for f in final] == ["add subtracts."]
    acc = info.lines
    assert acc.lines == len(r.lines) == acc.decoded + acc.known_noise + acc.unknown + acc.unreadable + acc.blank
    text = _show(path)
    assert _sections(text) == _footer_turns(text) == info.turns == 1
    assert "\n› \n" not in text and not re.search(r"^› *$", text, re.M)


def test_user_record_without_content_when_its_other_copy_has_the_text(tmp_path: Path) -> None:
    """An event copy without content (or a response copy without content) takes the other copy's text."""
    r = Rollout()
    r.start("2026-12-01T10:00:01.000Z", "t1")
    r.prompt("2026-12-01T10:00:01.000Z", "", copy="the prompt text")
    r.answer("2026-12-01T10:00:02.000Z", "done")
    r.complete("2026-12-01T10:00:03.000Z", "t1", "done")
    r.start("2026-12-01T10:01:00.000Z", "t2")
    r.user_item("2026-12-01T10:01:00.000Z", "")
    r.ev("2026-12-01T10:01:00.000Z", {"type": "user_message", "message": "second prompt"})
    r.answer("2026-12-01T10:01:01.000Z", "done again")
    r.complete("2026-12-01T10:01:02.000Z", "t2", "done again")
    path = r.write(tmp_path / "halfempty.jsonl")
    items = list(api.iter_items(path))
    assert [i.text for i in items if isinstance(i, UserMessage)] == ["the prompt text", "second prompt"]
    assert not [i for i in items if isinstance(i, Notice)]
    assert api.inspect(path).title == "the prompt text"


def test_old_eras_without_turn_ids_keep_a_turn_per_prompt(tmp_path: Path) -> None:
    r = Rollout(version="0.40.0")
    r.user_item("2026-12-01T10:00:00.000Z", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>")
    for n, ts in enumerate(("2026-12-01T10:00:01.000Z", "2026-12-01T10:00:05.000Z")):
        r.prompt(ts, f"prompt {n}")
        r.add(ts, "turn_context", {"cwd": "/w", "model": "gpt-5"})
        r.answer(ts, f"answer {n}")
    path = r.write(tmp_path / "old.jsonl")
    items = list(api.iter_items(path))
    assert [i.turn_id for i in items if isinstance(i, UserMessage)] == ["turn-1", "turn-2"]
    assert [i.final for i in items if isinstance(i, AssistantMessage)] == [True, True]
    text = _show(path)
    assert _sections(text) == _footer_turns(text) == 2


# ---- context is never a prompt ----------------------------------------------------------------------


def _sanitized_0_100(tmp_path: Path) -> Path:
    """Codex 0.100's shape, its context (permissions, AGENTS.md, environment) before each turn's
    task_started, every context text replaced by a sanitizer."""
    r = Rollout(version="0.100.0")
    for n, turn in enumerate(("t1", "t2")):
        ts = f"2026-12-01T10:0{n}:00.000Z"
        r.user_item(ts, "[redacted]", role="developer")
        r.user_item(ts, "[redacted]")
        r.user_item(ts, "<redacted>")
        r.start(ts, turn)
        r.prompt(ts, f"real prompt {n + 1}")
        r.answer(ts, f"answer {n + 1}")
        r.complete(ts, turn, f"answer {n + 1}")
    return r.write(tmp_path / "codex_home" / "sessions" / "2026" / "12" / "01"
                   / f"rollout-2026-12-01T10-00-00-{SID}.jsonl")


def _sanitized_0_157(tmp_path: Path) -> Path:
    """0.157's shape (alaarab/phren): context after task_started, item_completed/UserMessage copies, and
    a sanitizer that rewrote every text, so a prompt's response copy differs from its event copy."""
    r = Rollout(version="0.157.1")
    for n, turn in enumerate(("t1", "t2", "t3")):
        ts = f"2026-12-01T10:0{n}:00.000Z"
        r.start(ts, turn)
        r.user_item(ts, f"Neutral text {10 * n + 1}.", role="developer")
        if n == 0:
            r.user_item(ts, f"Neutral text {10 * n + 2}.")  # AGENTS.md + environment, rewritten
        r.prompt(ts, f"Neutral text {10 * n + 4}.", copy=f"Neutral text {10 * n + 3}.")
        r.answer(ts, f"Neutral text {10 * n + 5}.")
        r.complete(ts, turn, f"Neutral text {10 * n + 5}.")
    return r.write(tmp_path / "codex_home" / "sessions" / "2026" / "12" / "01"
                   / f"rollout-2026-12-01T10-00-00-{SID}.jsonl")


def _titles(path: Path, home: Path) -> dict[str, Any]:
    from transcript_reader.cli.show import head_info

    rows = [s for s in list_sessions(home) if Path(s.path) == path]
    return {"inspect": api.inspect(path).title, "ls": read_entry(path, False, {}).head.title,
            "show header": head_info(str(path)).title, "list_sessions": rows[0].head.title if rows else "?"}


def test_redacted_context_before_task_started_is_no_prompt(tmp_path: Path) -> None:
    path = _sanitized_0_100(tmp_path)
    items = list(api.iter_items(path))
    assert [i.text for i in items if isinstance(i, UserMessage)] == ["real prompt 1", "real prompt 2"]
    assert sum(isinstance(i, ContextMessage) for i in items) == 6  # kept, as context
    text = _show(path)
    assert _sections(text) == _footer_turns(text) == api.inspect(path).turns == 2
    assert set(_titles(path, tmp_path / "codex_home").values()) == {"real prompt 1"}


def test_rewritten_context_and_copies_are_no_prompts(tmp_path: Path) -> None:
    path = _sanitized_0_157(tmp_path)
    items = list(api.iter_items(path))
    assert [i.text for i in items if isinstance(i, UserMessage)] == ["Neutral text 4.", "Neutral text 14.",
                                                                      "Neutral text 24."]
    text = _show(path)
    assert _sections(text) == _footer_turns(text) == api.inspect(path).turns == 3
    assert set(_titles(path, tmp_path / "codex_home").values()) == {"Neutral text 4."}


def test_event_copy_first_then_its_response_copy(tmp_path: Path) -> None:
    r = Rollout()
    r.start("2026-12-01T10:00:01.000Z", "t1")
    r.prompt("2026-12-01T10:00:01.000Z", "list the files", event_first=True)
    r.prompt("2026-12-01T10:00:02.000Z", "and their sizes", copy="[redacted]", event_first=True)
    r.answer("2026-12-01T10:00:03.000Z", "two files")
    r.complete("2026-12-01T10:00:04.000Z", "t1", "two files")
    path = r.write(tmp_path / "evfirst.jsonl")
    items = list(api.iter_items(path))
    assert [i.text for i in items if isinstance(i, UserMessage)] == ["list the files", "and their sizes"]
    assert [i.text for i in items if isinstance(i, ContextMessage)] == ["[redacted]"]


def test_a_file_without_event_copies_keeps_its_prompts(tmp_path: Path) -> None:
    """Hand-made rollouts (and the threads fixtures) write response items only: they stay prompts."""
    r = Rollout()
    r.start("2026-12-01T10:00:01.000Z", "t1")
    r.user_item("2026-12-01T10:00:01.000Z", "only a response copy")
    r.answer("2026-12-01T10:00:02.000Z", "ok")
    r.complete("2026-12-01T10:00:03.000Z", "t1", "ok")
    path = r.write(tmp_path / "noevents.jsonl")
    assert [i.text for i in api.iter_items(path) if isinstance(i, UserMessage)] == ["only a response copy"]
    assert api.inspect(path).title == read_entry(path, False, {}).head.title == "only a response copy"


# ---- a turn cut off by a dead process --------------------------------------------------------------


def test_turn_cut_off_then_resumed_has_a_notice_and_no_final_answer(tmp_path: Path) -> None:
    r = Rollout()
    r.start("2026-12-01T10:00:00.000Z", "t1")
    r.prompt("2026-12-01T10:00:00.000Z", "refactor the parser")
    r.answer("2026-12-01T10:00:30.000Z", "Halfway through the refactor.")
    # the process died here: no task_complete; resumed 15 minutes later
    r.add("2026-12-01T10:15:00.000Z", "session_meta", {"id": SID, "timestamp": "2026-12-01T10:00:00.000Z",
                                                       "cwd": "/w", "cli_version": "0.120.0"})
    r.turn("2026-12-01T10:15:00.000Z", "t2", "continue", "Done.")
    path = r.write(tmp_path / "resumed.jsonl")
    items = list(api.iter_items(path))
    notes = [i for i in items if isinstance(i, Notice) and i.category == "interrupted"]
    assert len(notes) == 1 and notes[0].turn_id == "t1" and "15 min" in notes[0].message
    answers = {i.text: i.final for i in items if isinstance(i, AssistantMessage)}
    assert answers == {"Halfway through the refactor.": False, "Done.": True}
    text = _show(path)
    assert text.index("interrupted") < text.index("Turn 2")


def test_a_final_answer_phase_in_a_cut_off_turn_is_not_final(tmp_path: Path) -> None:
    r = Rollout(version="0.160.0")
    r.start("2026-12-01T10:00:00.000Z", "t1")
    r.prompt("2026-12-01T10:00:00.000Z", "do it")
    r.add("2026-12-01T10:00:01.000Z", "response_item", {"type": "message", "role": "assistant",
                                                        "phase": "final_answer",
                                                        "content": [{"type": "output_text", "text": "Did it."}]})
    r.start("2026-12-01T10:20:00.000Z", "t2")
    r.prompt("2026-12-01T10:20:00.000Z", "again")
    path = r.write(tmp_path / "phase.jsonl")
    items = list(api.iter_items(path))
    assert [i.final for i in items if isinstance(i, AssistantMessage)] == [False]
    assert [i.category for i in items if isinstance(i, Notice)] == ["interrupted"]


# ---- thread_rolled_back inside one file --------------------------------------------------------------


def _rolled_back(tmp_path: Path, num_turns: int) -> Path:
    r = Rollout()
    for n in range(1, 4):
        r.turn(f"2026-12-01T10:0{n}:00.000Z", f"t{n}", f"prompt {n}", f"answer {n}")
    r.ev("2026-12-01T10:05:00.000Z", {"type": "thread_rolled_back", "num_turns": num_turns})
    r.turn("2026-12-01T10:06:00.000Z", "t4", "prompt 3, edited", "answer 4")
    return r.write(tmp_path / f"rollback{num_turns}.jsonl")


def test_rolled_back_turns_lose_their_final_answers(tmp_path: Path) -> None:
    for n, rewound in ((1, {"t3"}), (2, {"t2", "t3"})):
        items = list(api.iter_items(_rolled_back(tmp_path, n)))
        finals = {i.turn_id: i.final for i in items if isinstance(i, AssistantMessage)}
        assert finals == {t: t not in rewound for t in ("t1", "t2", "t3", "t4")}
        marks = [i for i in items if isinstance(i, Notice) and i.category == "rewound"]
        assert {m.turn_id for m in marks} == rewound
        # each mark comes right before the answer it demotes, in source order
        for m in marks:
            nxt = items[items.index(m) + 1]
            assert isinstance(nxt, AssistantMessage) and nxt.turn_id == m.turn_id and not nxt.final
        assert [i.line for i in items] == sorted(i.line for i in items)
        projected = api.read(_rolled_back(tmp_path, n), projection="final").items
        assert {i.turn_id for i in projected} == {"t1", "t2", "t3", "t4"} - rewound


def test_a_rollback_beyond_the_answers_kept_back_says_so(tmp_path: Path) -> None:
    """Answers are kept back ``ROLLBACK_HOLD`` turns: one rewound further back went out final, and the
    rollback's notice says its answer is not final."""
    from transcript_reader.assembly.turns import ROLLBACK_HOLD

    r = Rollout()
    total = ROLLBACK_HOLD + 2
    for n in range(1, total + 1):
        r.turn(f"2026-12-01T10:{n:02d}:00.000Z", f"t{n}", f"prompt {n}", f"answer {n}")
    r.ev("2026-12-01T11:00:00.000Z", {"type": "thread_rolled_back", "num_turns": total - 1})
    items = list(api.iter_items(r.write(tmp_path / "deep.jsonl")))
    finals = {i.turn_id for i in items if isinstance(i, AssistantMessage) and i.final}
    kept_back = {f"t{n}" for n in range(total - ROLLBACK_HOLD + 1, total + 1)}
    assert finals == {f"t{n}" for n in range(1, total - ROLLBACK_HOLD + 1)}  # went out before the rollback
    assert {i.turn_id for i in items if isinstance(i, Notice) and i.category == "rewound"} == kept_back
    note = next(i for i in items if isinstance(i, Notice) and i.category == "rollback")
    assert "t2" in note.message and "not final" in note.message


def test_a_rollback_in_a_segment_file_does_not_mark_twice(tmp_path: Path) -> None:
    """Paginated history (0.160): the rollback event opens the segment; the base's rewound turn is
    marked once, by the thread reading, and the rollback names no turn of this file."""
    from tests.test_threads import build_home

    _home, _base, seg, _fork = build_home(tmp_path)
    lines = seg.read_bytes().split(b"\n")
    rollback = orjson.dumps({"timestamp": "2026-12-01T10:05:00.000Z", "ordinal": 0, "type": "event_msg",
                             "payload": {"type": "thread_rolled_back", "num_turns": 1}})
    seg.write_bytes(b"\n".join([lines[0], rollback, *lines[1:]]))
    items = list(api.iter_items(seg))
    assert [i.turn_id for i in items if isinstance(i, Notice) and i.category == "rewound"] == ["t2"]
    assert {i.turn_id: i.final for i in items if isinstance(i, AssistantMessage)} == {"t1": True, "t2": False,
                                                                                     "t3": True}
    note = next(i for i in items if isinstance(i, Notice) and i.category == "rollback")
    assert note.message == "rolled back 1 turn(s): 1 earlier turn(s) not in this file"


def test_a_followed_file_says_an_answer_already_shown_was_rewound(tmp_path: Path) -> None:
    path = _rolled_back(tmp_path, 1)
    stops = iter([False, True])
    items = list(api.follow(path, stop=lambda: next(stops, True), poll_s=0.01))
    rollback = [i for i in items if isinstance(i, Notice) and i.category == "rollback"]
    assert len(rollback) == 1 and "is not final" in rollback[0].message and "t3" in rollback[0].message


# ---- show sections, the footer and inspect agree on every transcript -------------------------------


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_sections_footer_and_inspect_agree(path: Path) -> None:
    """Over ``fixtures/`` and ``../shared/corpus``: the "Turn N" sections ``show`` prints (all items, and
    its default selection), the footer's turn count and ``inspect``'s turns are one number."""
    try:
        t = api.Transcript(path)
        items = list(t.items())
    except TranscriptError:
        pytest.skip("not a transcript the reader reads (its own tests pin the error)")
    info = t.info()
    whole = render_text(items, info, c.Options(), width=None)
    assert _sections(whole) == _footer_turns(whole) == info.turns
    shown = "\n".join("".join(seg[0] for seg in r.segs) if isinstance(r, Line) else str(r) for r in
                      timeline_rows(items, info, c.Options(), Layout(width=None), select=selector("timeline")))
    assert _sections(shown) == _footer_turns(shown) == info.turns
    # the exports' sections too
    assert timeline_markdown(items, info, c.Options()).count("\n## Turn ") == info.turns
    assert timeline_html(items, info, c.Options()).count("<h2>Turn ") == info.turns


def test_show_through_a_real_process(tmp_path: Path) -> None:
    """``show`` itself (its streaming view and footer): a steered turn, and an exec stream's turn that
    recorded nothing, each have the sections the footer counts."""
    import subprocess
    import sys

    r = Rollout()
    r.start("2026-12-01T10:00:01.000Z", "t1")
    r.prompt("2026-12-01T10:00:01.000Z", "fix the build")
    r.prompt("2026-12-01T10:00:02.000Z", "and the tests")
    r.answer("2026-12-01T10:00:03.000Z", "Both fixed.")
    r.complete("2026-12-01T10:00:04.000Z", "t1", "Both fixed.")
    empty = tmp_path / "empty_turn.exec.jsonl"
    empty.write_text('{"type":"thread.started","thread_id":"0199aaaa-0000-7000-8000-000000000009"}\n'
                     '{"type":"turn.started"}\n{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}\n')
    for path, turns in ((r.write(tmp_path / "steer.jsonl"), 1), (empty, 1)):
        p = subprocess.run([sys.executable, "-m", "transcript_reader", "show", str(path), "--no-pager", "--no-color"],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert _sections(p.stdout) == _footer_turns(p.stdout) == turns, p.stdout


def test_the_corpus_is_compared_when_present() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent: only fixtures/ were compared")
    assert any(p.is_relative_to(CORPUS) for p in FILES)
