"""Following a session Codex is still writing (``api.follow``, ``show --follow``): each byte is read once,
items come out as they settle, a line being written waits for its newline, and stopping ends the
reading as a whole read would."""

from __future__ import annotations

from pathlib import Path

import pytest

from transcript_reader import follow, iter_items
from transcript_reader.errors import InvalidArgumentError
from transcript_reader.reading.follow import FollowStream

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


class _Writer:
    """Appends a transcript's lines in steps, one step each time the follower runs out of data: a
    deterministic stand-in for Codex writing (no threads, no timing)."""

    def __init__(self, path: Path, steps: list[bytes], truncate: bool = True) -> None:
        self.path = path
        self.steps = steps
        self.stops = 0
        if truncate:
            path.write_bytes(b"")

    def stop(self) -> bool:
        self.stops += 1
        if not self.steps:
            return True
        with open(self.path, "ab") as fh:
            fh.write(self.steps.pop(0))
        return False


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    out, last = [], 0
    for c in [*cuts, len(data)]:
        out.append(data[last:c])
        last = c
    return [c for c in out if c]


@pytest.mark.parametrize("name", ["pairing_records_direct.jsonl", "code_mode_records.jsonl", "dedupe.jsonl",
                                  "truncated_last_line.jsonl", "../exec_streams/bad_lines.jsonl"])
def test_following_a_growing_file_gives_what_a_whole_read_gives(name: str, tmp_path: Path) -> None:
    data = (FIXTURES / name).read_bytes()
    name = Path(name).name
    # cut everywhere awkward: mid-line, right after a newline, mid-JSON
    cuts = sorted({len(data) // 7, len(data) // 3, len(data) // 3 + 1, len(data) // 2, (2 * len(data)) // 3})
    live = tmp_path / name
    writer = _Writer(live, _chunks(data, cuts))
    live.write_bytes(writer.steps.pop(0))  # the session file exists, its first line maybe half written
    got = list(follow(live, stop=writer.stop, poll_s=0))
    assert writer.stops >= len(cuts), "the follower did not wait for the data written later"
    assert got == list(iter_items(live))


def test_a_line_being_written_waits_for_its_newline(tmp_path: Path) -> None:
    p = tmp_path / "live.jsonl"
    p.write_bytes(b'{"a": 1}\n{"b": ')
    steps = [b'2}\n', b'{"c": 3}']  # the last line never gets its newline
    seen: list[bytes] = []

    stop = _Writer(p, steps, truncate=False).stop

    with FollowStream(p, poll_s=0, stop=stop, sleep=lambda s: None) as stream:
        seen.extend(stream)
    assert seen == [b'{"a": 1}\n', b'{"b": 2}\n', b'{"c": 3}']


def test_items_come_out_before_the_session_ends(tmp_path: Path) -> None:
    """The first turn is printed while Codex is still writing the second (the point of following)."""
    data = (FIXTURES / "pairing_records_direct.jsonl").read_bytes().splitlines(keepends=True)
    p = tmp_path / "live.jsonl"
    p.write_bytes(b"".join(data[: len(data) // 2]))
    rest = data[len(data) // 2:]
    given: list[int] = []
    written_when: list[int] = []

    def stop() -> bool:
        written_when.append(len(given))
        if not rest:
            return True
        with open(p, "ab") as fh:
            fh.write(rest.pop(0))
        return False

    for item in follow(p, stop=stop, poll_s=0):
        given.append(item.line)
    assert written_when[0] > 0, "no item was given before the data first ran out"


def test_zst_and_ts_json_cannot_be_followed() -> None:
    with pytest.raises(InvalidArgumentError):
        list(follow(FIXTURES / "compressed_rollout.jsonl.zst", stop=lambda: True))
    with pytest.raises(InvalidArgumentError):
        list(follow(FIXTURES / "ts_cli_0_1.json", stop=lambda: True))


def test_a_bom_written_after_following_began_is_skipped(tmp_path: Path) -> None:
    """The file was empty when following began; its first line then arrives with a BOM."""
    p = tmp_path / "live.jsonl"
    p.write_bytes(b"")
    data = b"\xef\xbb\xbf" + (FIXTURES / "dedupe.jsonl").read_bytes()
    steps = [data[:2], data[2:40], data[40:]]

    stop = _Writer(p, steps, truncate=False).stop

    got = list(follow(p, stop=stop, poll_s=0, format="rollout"))
    assert got == list(iter_items(FIXTURES / "dedupe.jsonl"))


def test_a_file_truncated_while_followed_is_an_error(tmp_path: Path) -> None:
    """An exec stream redirected again with ``>`` is truncated and rewritten; what was read no
    longer describes the file, so following stops with a typed error (the CLI then starts over)."""
    from transcript_reader.errors import FileChangedError

    src = (FIXTURES / "pairing_records_direct.jsonl").read_bytes()
    p = tmp_path / "live.jsonl"
    p.write_bytes(src)
    rewritten = [False]

    def stop() -> bool:
        if not rewritten[0]:
            p.write_bytes(src[: len(src) // 3])  # truncated and written anew, shorter than what was read
            rewritten[0] = True
        return False

    with pytest.raises(FileChangedError):
        list(follow(p, stop=stop, poll_s=0))


def test_a_file_written_anew_to_a_larger_size_is_noticed(tmp_path: Path) -> None:
    """Truncated and written again, longer than before, between two looks: its first bytes differ."""
    from transcript_reader.errors import FileChangedError

    first = (FIXTURES / "dedupe.jsonl").read_bytes()
    second = (FIXTURES / "pairing_records_direct.jsonl").read_bytes() * 2
    p = tmp_path / "live.jsonl"
    p.write_bytes(first)
    done = [False]

    def stop() -> bool:
        if not done[0]:
            p.write_bytes(second)
            done[0] = True
        return False

    with pytest.raises(FileChangedError):
        list(follow(p, stop=stop, poll_s=0))


def test_a_bom_file_is_followed_without_a_false_change(tmp_path: Path) -> None:
    p = tmp_path / "live.jsonl"
    data = (FIXTURES / "dedupe.jsonl").read_bytes()
    p.write_bytes(b"\xef\xbb\xbf" + data[:100])
    steps = [data[100:]]

    stop = _Writer(p, steps, truncate=False).stop

    assert list(follow(p, stop=stop, poll_s=0)) == list(iter_items(FIXTURES / "dedupe.jsonl"))
