"""A cold listing reads heads in forked workers and in chunks: the rows are the same as one process
reading line by line."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import sessions_home as H
from transcript_reader.model import Format, TokenUsage
from transcript_reader.projections.render import entry_to_dict
from transcript_reader.providers.codex import head as codex_head
from transcript_reader.providers.head import SessionHead, SessionTail
from transcript_reader.sessions import discovery as D
from transcript_reader.sessions import head_reads
from transcript_reader.sessions.head_reads import head_from_row, head_row


def _readline_reference(fh: io.BytesIO, budget: int) -> Iterator[bytes]:
    """The head reader's earlier line splitter (``readline`` within the budget), the spec of the
    chunked one."""
    used = 0
    while used < budget:
        line = fh.readline(budget - used)
        if not line:
            return
        used += len(line)
        if not line.endswith(b"\n"):
            if used < budget:
                yield line
            return
        yield line


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300).map(lambda b: b.replace(b"\r", b"\n")) | st.lists(
    st.sampled_from([b"\n", b"ab", b"{}\n", b"x" * 17, b"\n\n"]), max_size=40).map(b"".join),
       budget=st.integers(1, 400), chunk=st.integers(1, 64))
def test_chunked_head_lines_equal_readline_within_the_budget(data: bytes, budget: int, chunk: int) -> None:
    saved = codex_head._CHUNK
    codex_head._CHUNK = chunk  # small chunks put lines across chunk boundaries
    try:
        got = list(codex_head._iter_head_lines(io.BytesIO(data), budget))
    finally:
        codex_head._CHUNK = saved
    assert got == list(_readline_reference(io.BytesIO(data), budget))


def test_a_row_reads_back_as_the_head_and_tail_it_was_made_of() -> None:
    head = SessionHead(format=Format.ROLLOUT, session_id="s", timestamp="t", cwd="/p", model="m", title="hi")
    tail = SessionTail(last_timestamp="z", tokens=TokenUsage(input=1, cached_input=2, output=3, reasoning=4,
                                                             total=5, source="last cumulative token_count"))
    assert head_from_row(head_row(head, tail)) == (head, tail)
    bare = SessionHead(format=None, error="not a Codex transcript")
    assert head_from_row(head_row(bare, SessionTail())) == (bare, SessionTail())
    # rows of an older cache (dicts) or cut short are not rows: the file is read again
    assert head_from_row([{"format": "rollout"}, {}]) is None
    assert head_from_row([["rollout"], [None, None]]) is None
    assert head_from_row([["nope"] + [None] * 12, [None, None]]) is None


def _rows(entries: list[D.SessionEntry]) -> list[dict[str, object]]:
    return [entry_to_dict(e) for e in entries]


def test_workers_give_the_rows_one_process_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = H.build_home(tmp_path / "h")
    serial = D.list_sessions(home.home, scope=D.Scope.ALL)
    monkeypatch.setattr(head_reads, "MIN_PARALLEL", 1)
    calls: list[int] = []
    real = head_reads._in_pool

    def spy(jobs: list[tuple[object, str]], workers: int) -> object:
        calls.append(len(jobs))
        return real(jobs, workers)  # type: ignore[arg-type]

    monkeypatch.setattr(head_reads, "_in_pool", spy)
    parallel = D.list_sessions(home.home, scope=D.Scope.ALL, workers=2)
    assert calls == [len(list(D.iter_session_files(home.home, D.Scope.ALL)))]  # every file, read by the pool
    assert _rows(parallel) == _rows(serial)


def test_a_broken_pool_falls_back_to_reading_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = H.build_home(tmp_path / "h")
    serial = D.list_sessions(home.home, scope=D.Scope.ALL)
    monkeypatch.setattr(head_reads, "MIN_PARALLEL", 1)

    def broken(*_a: object) -> object:
        raise OSError("no processes left")

    monkeypatch.setattr(head_reads, "_in_pool", broken)
    assert _rows(D.list_sessions(home.home, scope=D.Scope.ALL, workers=2)) == _rows(serial)
