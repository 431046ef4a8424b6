"""A Codex thread that lives in several files is read as one session. The tests build a
``$CODEX_HOME`` in the shape codex-tui 0.160 writes with paginated history: a base file, a segment
Codex wrote after a rewind (same thread id, ``rollout-<time>-<thread id>_<segment id>.jsonl``, its
``session_meta`` carrying ``history_base: {thread_id, end_ordinal_exclusive, end_byte_offset}``), and a
``codex fork`` (``forked_from_id`` and a ``history_base`` into the parent, no copied history)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from transcript_reader import read
from transcript_reader.sessions.discovery import list_sessions

THREAD = "01a2a160-0000-7000-8000-00000000aaaa"
SEGMENT = "01a2a160-5555-7000-8000-00000000bbbb"
FORK = "01a2a160-9999-7000-8000-00000000cccc"
DAY = "2026/12/01"


class Rollout:
    """Lines of a paginated 0.160 rollout: an ``ordinal`` in every envelope, counted from ``start``."""

    def __init__(self, start: int = 0) -> None:
        self.lines: list[bytes] = []
        self.ordinal = start

    def add(self, ts: str, type_: str, payload: dict[str, Any]) -> None:
        self.lines.append(orjson.dumps({"timestamp": ts, "ordinal": self.ordinal, "type": type_,
                                        "payload": payload}) + b"\n")
        self.ordinal += 1

    def meta(self, ts: str, sid: str, **extra: Any) -> None:
        self.add(ts, "session_meta", {"id": sid, "timestamp": ts, "cwd": "/w", "originator": "codex-tui",
                                      "cli_version": "0.160.1", "source": "cli", "history_mode": "paginated",
                                      **extra})

    def turn(self, ts: str, turn_id: str, prompt: str, answer: str, command: str | None = None) -> None:
        self.add(ts, "event_msg", {"type": "task_started", "turn_id": turn_id})
        self.add(ts, "turn_context", {"cwd": "/w", "model": "gpt-5.5", "turn_id": turn_id})
        self.add(ts, "response_item", {"type": "message", "role": "user",
                                       "content": [{"type": "input_text", "text": prompt}]})
        if command:
            cid = f"call_{turn_id}"
            self.add(ts, "response_item", {"type": "function_call", "name": "exec_command", "call_id": cid,
                                           "arguments": json.dumps({"cmd": command})})
            self.add(ts, "response_item", {"type": "function_call_output", "call_id": cid,
                                           "output": "Process exited with code 0\nOutput:\nok\n"})
        self.add(ts, "response_item", {"type": "message", "role": "assistant", "phase": "final_answer",
                                       "content": [{"type": "output_text", "text": answer}]})
        self.add(ts, "event_msg", {"type": "task_complete", "turn_id": turn_id, "last_agent_message": answer})

    @property
    def data(self) -> bytes:
        return b"".join(self.lines)


def build_home(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """(home, base file, segment file, fork file)."""
    day = tmp_path / "codex_home" / "sessions" / DAY
    day.mkdir(parents=True)
    base = Rollout()
    base.meta("2026-12-01T10:00:00.000Z", THREAD)
    base.turn("2026-12-01T10:00:01.000Z", "t1", "first prompt", "answer one", command="make test")
    kept_bytes, kept_ordinals = len(base.data), base.ordinal
    base.turn("2026-12-01T10:01:00.000Z", "t2", "second prompt", "answer two (rewound)", command="rm -rf build")
    base_path = day / f"rollout-2026-12-01T10-00-00-{THREAD}.jsonl"
    base_path.write_bytes(base.data)

    seg = Rollout(start=kept_ordinals)
    seg.meta("2026-12-01T10:00:00.000Z", THREAD, history_base={
        "thread_id": THREAD, "end_ordinal_exclusive": kept_ordinals, "end_byte_offset": kept_bytes})
    seg.turn("2026-12-01T10:05:00.000Z", "t3", "second prompt, edited", "answer three")
    seg_path = day / f"rollout-2026-12-01T10-05-00-{THREAD}_{SEGMENT}.jsonl"
    seg_path.write_bytes(seg.data)

    fork = Rollout(start=kept_ordinals)
    fork.meta("2026-12-01T11:00:00.000Z", FORK, forked_from_id=THREAD, history_base={
        "thread_id": THREAD, "end_ordinal_exclusive": kept_ordinals, "end_byte_offset": kept_bytes})
    fork.turn("2026-12-01T11:00:01.000Z", "f1", "try another way", "fork answer")
    fork_path = day / f"rollout-2026-12-01T11-00-00-{FORK}.jsonl"
    fork_path.write_bytes(fork.data)
    os.utime(seg_path, ns=(base_path.stat().st_mtime_ns + 10**9,) * 2)
    return tmp_path / "codex_home", base_path, seg_path, fork_path


def cli(home: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "CODEX_HOME": str(home), "XDG_CACHE_HOME": str(home.parent / "cache")}
    p = subprocess.run([sys.executable, "-m", "transcript_reader", *args, "--json"], capture_output=True, text=True,
                       env=env, timeout=120, cwd=home.parent)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)  # type: ignore[no-any-return]


def timeline(doc: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for i in doc["items"]:
        k = i["kind"]
        if k == "user_message":
            out.append(("user", i["text"]))
        elif k == "assistant_message":
            out.append(("final" if i["final"] else "answer", i["text"]))
        elif k == "notice":
            out.append((i["category"], ""))
        elif k == "shell_command":
            out.append(("command", i["command"]))
    return out


def test_ls_lists_a_thread_in_several_files_once(tmp_path: Path) -> None:
    home, base, seg, _fork = build_home(tmp_path)
    rows = [e for e in list_sessions(home, cwd=None) if e.session_id == THREAD]
    assert len(rows) == 1
    row = rows[0]
    assert row.path == str(seg) and row.thread_files == (str(base), str(seg))
    assert row.title == "first prompt" and row.head.timestamp == "2026-12-01T10:00:00.000Z"
    listed = cli(home, "ls", "--all-projects")
    ids = [s["id"] for s in listed["sessions"]]
    assert ids.count(THREAD) == 1 and FORK in ids


def test_read_by_id_gives_the_whole_thread_with_the_rewound_turn_marked(tmp_path: Path) -> None:
    home, _base, _seg, _fork = build_home(tmp_path)
    doc = cli(home, "read", THREAD)
    got = timeline(doc)
    assert got == [
        ("thread", ""),
        ("user", "first prompt"), ("command", "make test"), ("final", "answer one"),
        ("rewound", ""), ("user", "second prompt"), ("command", "rm -rf build"), ("answer", "answer two (rewound)"),
        ("thread", ""), ("segment", ""),
        ("user", "second prompt, edited"), ("final", "answer three"),
    ]
    rewound = next(i for i in doc["items"] if i["kind"] == "notice" and i["category"] == "rewound")
    assert "rewound away" in rewound["message"] and SEGMENT in rewound["message"]
    info = cli(home, "inspect", THREAD)["info"]
    assert info["turns"] == 2  # the rewound turn is not one of the thread's
    a = info["lines"]
    assert a["lines"] == a["decoded"] + a["known_noise"] + a["unknown"] + a["unreadable"] + a["blank"]
    assert a["lines"] == len(_base.read_bytes().splitlines()) + len(_seg.read_bytes().splitlines())


def test_the_base_file_alone_never_shows_the_rewound_turn_as_a_final_answer(tmp_path: Path) -> None:
    _home, base, seg, _fork = build_home(tmp_path)
    r = read(base)
    finals = [i.text for i in r.items if i.kind.value == "assistant_message" and i.final]  # type: ignore[attr-defined]
    assert finals == ["answer one"]
    notices = [(i.category, i.message) for i in r.items if i.kind.value == "notice"]  # type: ignore[attr-defined]
    assert notices[0][0] == "rewound" and notices[-1] == ("thread", f"the thread continues in {seg.name}")


def test_a_fork_names_its_parent_and_where_the_copied_history_ends(tmp_path: Path) -> None:
    home, _base, _seg, fork = build_home(tmp_path)
    r = read(fork)
    first = r.items[0]
    assert first.kind.value == "notice" and first.category == "fork"  # type: ignore[attr-defined]
    assert THREAD in first.message and "ordinal 8" in first.message  # type: ignore[attr-defined]
    assert r.info is not None and r.info.forked_from_id == THREAD
    rows = {e.session_id: e for e in list_sessions(home, cwd=None)}
    assert rows[FORK].depth == 1 and rows[FORK].parent_id == THREAD  # listed under its parent


def test_a_file_without_history_base_reads_alone(tmp_path: Path) -> None:
    r = Rollout()
    r.meta("2026-12-01T10:00:00.000Z", THREAD)
    r.turn("2026-12-01T10:00:01.000Z", "t1", "hello", "hi")
    p = tmp_path / f"rollout-2026-12-01T10-00-00-{THREAD}.jsonl"
    p.write_bytes(r.data)
    got = read(p)
    assert [i.kind.value for i in got.items] == ["user_message", "assistant_message"]
