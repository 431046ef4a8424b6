"""Token accounting against witnesses that are not the reader's code: a raw-line count of every real
recording's ``token_count`` lines (a few lines of JSON parsing here), the exec stream Codex printed for
the same run, and hypothesis sequences of usage events (re-emissions, resets) against the rule
(``transcript_reader/usage/accounting.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import CORPUS, FIXTURES
from transcript_reader import api
from transcript_reader.model import TokenUsage
from transcript_reader.usage.accounting import Accountant

REAL = CORPUS / "realcodex"
ROLLOUTS = sorted(REAL.glob("*/*.rollout.json*")) if REAL.is_dir() else []


def raw_count(path: Path) -> int | None:
    """Total tokens by the rule, read straight off the lines: each token_count whose running total moved
    adds its ``last_token_usage``; None when no line carries usage."""
    prev, total, seen = None, 0, False
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        p = obj.get("payload") if isinstance(obj, dict) else None
        if not (isinstance(p, dict) and p.get("type") == "token_count" and isinstance(p.get("info"), dict)):
            continue
        running = p["info"]["total_token_usage"]
        if running == prev:
            continue  # re-emitted
        prev, seen = running, True
        total += p["info"]["last_token_usage"]["total_tokens"]
    return total if seen else None


@pytest.mark.skipif(not ROLLOUTS, reason="../shared/corpus/realcodex is absent")
@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_real_recording_equals_the_raw_line_count(path: Path) -> None:
    info = api.inspect(path)
    expected = raw_count(path) if path.suffix == ".jsonl" else None
    assert (info.tokens.total if info.tokens is not None else None) == expected


@pytest.mark.skipif(not (REAL / "0.50.0").is_dir(), reason="../shared/corpus/realcodex is absent")
@pytest.mark.parametrize("version", ["0.50.0"])
def test_a_resumed_file_counts_both_runs_as_codex_exec_reported_them(version: str) -> None:
    """``two_turns_resume``: the second run restarts the counter in the same file; the sum of both
    ``codex exec --json`` runs' ``turn.completed`` usage is the session's usage (16,787 on 0.50, where the
    last counter alone says 8,534)."""
    d = REAL / version
    witness = 0
    for stream in sorted(d.glob("two_turns_resume.exec*.jsonl")):
        for line in stream.read_text().splitlines():
            ev = json.loads(line)
            if ev.get("type") == "turn.completed":
                witness += ev["usage"]["input_tokens"] + ev["usage"]["output_tokens"]
    info = api.inspect(d / "two_turns_resume.rollout.jsonl")
    assert info.tokens is not None and info.tokens.total == witness


def test_a_file_without_usage_is_unknown_not_zero() -> None:
    info = api.inspect(FIXTURES / "transcripts" / "dedupe.jsonl")
    assert info.tokens is None and info.usage == ()


def test_a_forks_replayed_parent_usage_is_not_the_childs(tmp_path: Path) -> None:
    def tc(ts: str, total: int, last: int) -> dict:
        u = lambda n: {"input_tokens": n - 1, "cached_input_tokens": 0, "output_tokens": 1,  # noqa: E731
                       "reasoning_output_tokens": 0, "total_tokens": n}
        return {"timestamp": ts, "type": "event_msg",
                "payload": {"type": "token_count", "info": {"total_token_usage": u(total), "last_token_usage": u(last)}}}
    child, parent = "00000000-0000-7000-8000-0000000000b2", "00000000-0000-7000-8000-0000000000b1"
    lines = [
        {"timestamp": "2026-03-01T00:00:10.000Z", "type": "session_meta",
         "payload": {"id": child, "forked_from_id": parent, "timestamp": "2026-03-01T00:00:10.000Z"}},
        {"timestamp": "2026-03-01T00:00:10.000Z", "type": "session_meta", "payload": {"id": parent}},
        {"timestamp": "2026-03-01T00:00:10.000Z", "type": "turn_context", "payload": {"model": "gpt-5"}},
        tc("2026-03-01T00:00:10.000Z", 100, 100),  # the parent's usage, copied
        tc("2026-03-01T00:00:12.000Z", 130, 30),   # the child's own call
        tc("2026-03-01T00:00:12.500Z", 130, 30),   # re-emitted
    ]
    f = tmp_path / "fork.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    info = api.inspect(f)
    assert info.tokens is not None and info.tokens.total == 30


def test_usage_goes_to_the_model_that_spent_it() -> None:
    a = Accountant()
    a.model = "gpt-5"
    a.add(TokenUsage(input=10, output=1, total=11), TokenUsage(total=11), timestamp="2026-01-01T00:00:00Z")
    a.model = "gpt-5.5"
    a.add(TokenUsage(input=20, output=2, total=22), TokenUsage(total=33), timestamp="2026-01-02T00:00:00Z")
    assert {(r.model, r.day, r.tokens.total) for r in a.rows()} == {("gpt-5", "2026-01-01", 11),
                                                                    ("gpt-5.5", "2026-01-02", 22)}


# a session as Codex writes it: calls, each sometimes re-emitted, and resumes that restart the counter
calls = st.lists(st.tuples(st.integers(1, 10_000), st.booleans(), st.booleans()), min_size=0, max_size=30)


@settings(max_examples=200, deadline=None)
@given(calls)
def test_the_rule_on_sequences_of_usage_events(seq: list[tuple[int, bool, bool]]) -> None:
    """Each item: a call's tokens, whether the event is written twice, whether a resume restarted the
    counter before it. The accounted total is the sum of the calls, whatever the re-emissions and
    resets; no event at all is unknown."""
    a = Accountant()
    running = 0
    for n, twice, reset in seq:
        if reset and n != running:  # a restarted counter landing on the old total reads as a re-emission
            running = 0
        running += n
        for _ in range(2 if twice else 1):
            a.add(TokenUsage(input=n, total=n), TokenUsage(input=running, total=running))
    total = a.total()
    if not seq:
        assert total is None
    else:
        assert total is not None and total.total == sum(n for n, _, _ in seq)
        assert a.tally.calls == len(seq)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=20))
def test_running_totals_alone_count_their_differences(steps: list[int]) -> None:
    a = Accountant()
    running = 0
    for n in steps:
        running += n
        a.add(None, TokenUsage(input=running, total=running))
    total = a.total()
    assert total is not None and total.total == sum(steps)


def test_usage_of_gives_the_inspect_figure_and_its_rows() -> None:
    from transcript_reader.usage.session import usage_of
    u = usage_of(FIXTURES / "claude" / "transcripts" / "handmade_tools.jsonl")
    assert u.tokens is not None and u.tokens.cache_write > 0
    assert sum(r.tokens.total for r in u.rows) == u.tokens.total
