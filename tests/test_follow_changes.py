"""Following notices what Codex never does to a rollout: a file deleted while followed ends
the reading with a notice saying so (``show --follow`` no longer waits forever in silence), and an
in-place rewrite of the same size that changes bytes anywhere in what was read (not only the first
256) raises ``FileChangedError``; a line over the cap is skipped while following too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from transcript_reader import follow, iter_items
from transcript_reader.errors import FileChangedError
from transcript_reader.reading.follow import FollowStream

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


@pytest.mark.parametrize("how,looks,said", [
    ("delete", 1, "deleted"),  # the inode has no name left: at once
    ("move", FollowStream.MISSING_LOOKS, "moved away"),  # maybe a rename in progress: a few looks
])
def test_a_file_deleted_or_moved_away_ends_following_with_a_notice(tmp_path: Path, how: str, looks: int,
                                                                    said: str) -> None:
    src = FIXTURES / "pairing_records_direct.jsonl"
    p = tmp_path / "live.jsonl"
    p.write_bytes(src.read_bytes())
    seen = [0]

    def stop() -> bool:
        seen[0] += 1
        if seen[0] == 1:
            p.unlink() if how == "delete" else p.rename(tmp_path / "elsewhere.jsonl")
        return seen[0] > 50  # never reached: the file's going ends it

    got = list(follow(p, stop=stop, poll_s=0))
    assert seen[0] == looks
    assert got[:-1] == list(iter_items(src))
    last = got[-1]
    assert last.kind.value == "notice" and last.category == "follow"  # type: ignore[attr-defined]
    assert said in last.message  # type: ignore[attr-defined]


@pytest.mark.parametrize("where", [300, -200])
def test_an_in_place_rewrite_of_the_same_size_is_noticed(tmp_path: Path, where: int) -> None:
    data = (FIXTURES / "pairing_records_direct.jsonl").read_bytes()
    p = tmp_path / "live.jsonl"
    p.write_bytes(data)
    done = [False]

    def stop() -> bool:
        if not done[0]:
            at = where % len(data)
            with open(p, "r+b") as fh:  # one byte changed in place, size unchanged
                fh.seek(at)
                fh.write(b"X" if data[at:at + 1] != b"X" else b"Y")
            st = os.stat(p)
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # coarse clocks: a later mtime
            done[0] = True
        return False

    with pytest.raises(FileChangedError) as e:
        list(follow(p, stop=stop, poll_s=0))
    assert "rewritten" in e.value.reason


def test_a_rewrite_between_appends_is_noticed_by_the_sampled_blocks(tmp_path: Path) -> None:
    """Another session written over the file while Codex appends: blocks of the read prefix differ."""
    first = (FIXTURES / "pairing_records_direct.jsonl").read_bytes() * 40
    other = (FIXTURES / "code_mode_records.jsonl").read_bytes() * 40
    p = tmp_path / "live.jsonl"
    p.write_bytes(first)
    step = [0]

    def stop() -> bool:
        step[0] += 1
        if step[0] == 1:
            with open(p, "ab") as fh:
                fh.write(first[:500].split(b"\n")[0] + b"\n")
        elif step[0] == 2:
            with open(p, "r+b") as fh:
                fh.write(other[:len(first)])
        return step[0] > 5

    with pytest.raises(FileChangedError):
        list(follow(p, stop=stop, poll_s=0))


def test_a_growing_file_is_not_taken_for_a_rewrite(tmp_path: Path) -> None:
    data = (FIXTURES / "code_mode_records.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    p = tmp_path / "live.jsonl"
    p.write_bytes(b"".join(lines[:2]))
    rest = lines[2:]

    def stop() -> bool:
        if not rest:
            return True
        with open(p, "ab") as fh:
            fh.write(rest.pop(0))
        st = os.stat(p)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        return False

    assert list(follow(p, stop=stop, poll_s=0)) == list(iter_items(FIXTURES / "code_mode_records.jsonl"))


def test_a_line_over_the_cap_is_skipped_while_following(tmp_path: Path) -> None:
    data = (FIXTURES / "dedupe.jsonl").read_bytes()
    lines = data.splitlines(keepends=True)
    p = tmp_path / "live.jsonl"
    p.write_bytes(b"".join(lines[:2]))
    steps = [b'{"timestamp": "x", "type": "response_item", "payload": "' + b"z" * 3000, b"z" * 3000 + b'"}\n',
             b"".join(lines[2:])]

    def stop() -> bool:
        if not steps:
            return True
        with open(p, "ab") as fh:
            fh.write(steps.pop(0))
        return False

    long_line = len(steps[0]) + len(steps[1]) - 1  # without its newline
    with FollowStream(p, poll_s=0, stop=stop, line_bytes=4096) as fs:
        got = list(fs)
    assert len(got) == len(lines) + 1
    skipped = got[2]
    assert not isinstance(skipped, bytes) and skipped.length == long_line
    assert got[:2] + got[3:] == lines


def test_show_follow_on_a_deleted_file_says_so_and_exits(tmp_path: Path) -> None:
    p = tmp_path / "live.jsonl"
    p.write_bytes((FIXTURES / "pairing_records_direct.jsonl").read_bytes())
    proc = subprocess.Popen([sys.executable, "-m", "transcript_reader", "show", str(p), "--follow", "--no-color"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = ""
    while "Turn 1" not in first:  # the first turn is on screen: following has begun (however slow the start)
        line = proc.stdout.readline()
        assert line, "show --follow ended before it showed the session"
        first += line
    p.unlink()
    out, err = proc.communicate(timeout=120)
    out = first + out
    assert proc.returncode == 0, err
    assert "deleted" in out + err and "Traceback" not in err
