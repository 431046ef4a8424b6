"""Following a Claude Code session as the CLI writes it: a recording replayed line by line into a file
that ``api.follow`` reads gives exactly the items a whole read gives (a Bash call waits for its result
line, the final answer is settled when the reading ends)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tests.claude_home import RECORDED
from transcript_reader import api
from transcript_reader.projections.render import item_to_dict


def test_follow_gives_what_a_whole_read_gives(tmp_path: Path) -> None:
    src = next((RECORDED / "bash_fail.projects").glob("*/*.jsonl"))
    lines = src.read_bytes().splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"".join(lines[:3]))  # a session just started: its first prompt is written
    done = threading.Event()

    def writer() -> None:
        for line in lines[3:]:
            with open(live, "ab") as fh:
                fh.write(line[:-1])  # a line lands in two writes: the reader must wait for its newline
                fh.flush()
                fh.write(line[-1:])
            time.sleep(0.002)
        done.set()

    t = threading.Thread(target=writer)
    t.start()
    followed = [item_to_dict(i) for i in api.follow(live, stop=done.is_set, poll_s=0.01)]
    t.join()
    whole = [item_to_dict(i) for i in api.read(src, projection="timeline", include=["raw_output", "context",
                                                                                   "reasoning"]).items]
    visible = {d["kind"] for d in whole}
    assert [d for d in followed if d["kind"] in visible] == whole
    assert [d["exit_code"] for d in followed if d["kind"] == "shell_command"] == [1, 1]
