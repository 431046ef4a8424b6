"""The witness test for Claude Code: every recording in ``fixtures/claude/recorded`` (written by the real
CLI through ``corpus_tools.record.claude_recorder``) is read by the library, and its commands with exit
codes, changed files with +/- counts, final answer and token usage must equal what the CLI's own
``--output-format stream-json`` stream of the same run reports, in order; each sub-agent file must equal
the stream's events of its Task/Agent call.

When the pinned CLI is installed (``bench-work/claude``) and this machine can create a network namespace,
one scenario is also recorded afresh and checked the same way, so a change of the recorder or the mock is
caught here, not only when the fixtures are rewritten."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from corpus_tools.record.claude_conformance import check_recording, read_streams
from corpus_tools.record.claude_recorder import (
    DEFAULT_VERSION,
    ClaudeScenario,
    _native_binary,
    default_cache,
    record,
)

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "claude" / "recorded" / DEFAULT_VERSION
NAMES = sorted(p.name[: -len(".result.json")] for p in RECORDED.glob("*.result.json"))
SCENARIOS = ("bash_ok", "bash_fail", "edit_write", "multi_turn", "task_agent", "task_background", "denied",
             "plain_replay", "task_replay", "max_turns", "edit_replay")


def test_every_scenario_was_recorded() -> None:
    assert sorted(SCENARIOS) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_transcript_agrees_with_the_stream(name: str) -> None:
    conf = check_recording(RECORDED, name)
    assert conf.ok, conf.problems


def test_the_witness_saw_what_each_scenario_is_about() -> None:
    """The comparison is not vacuous: each scenario's stream holds the facts it was written for."""
    facts = {n: read_streams(sorted(RECORDED.glob(f"{n}.stream*.jsonl"))) for n in NAMES}
    assert facts["bash_ok"].commands[None] == [("ls && cat hello.txt", 0)]
    assert [c for _, c in facts["bash_fail"].commands[None]] == [1, 1]
    assert [f[0].rsplit("/", 1)[1] for f in facts["edit_write"].files[None]] == ["calc.py", "NOTES.md"]
    assert len(facts["multi_turn"].finals) == 2
    assert facts["task_agent"].commands["toolu_task_1"] == [("wc -l hello.txt", 0)]
    assert facts["task_background"].commands["toolu_bg_1"] == [("wc -w hello.txt", 0)]
    assert len(facts["task_background"].finals) == 2  # the launch, then the run the notification woke
    assert facts["denied"].commands == {}  # the denied rm never ran
    assert all(f.usage[0] > 0 and f.usage[2] > 0 for f in facts.values())


def _binary() -> Path | None:
    return _native_binary(default_cache() / DEFAULT_VERSION)


def _can_unshare() -> bool:
    return subprocess.run(["sh", "-c", "unshare -rn true"], capture_output=True).returncode == 0


@pytest.mark.skipif(_binary() is None, reason=f"@anthropic-ai/claude-code@{DEFAULT_VERSION} is not installed in "
                    "bench-work/claude (python -m corpus_tools.record.claude_recorder installs it)")
@pytest.mark.skipif(not _can_unshare(), reason="this machine cannot create user+network namespaces")
def test_a_fresh_recording_agrees_with_its_stream(tmp_path: Path) -> None:
    res = record(ClaudeScenario.load("bash_fail"), tmp_path, claude_bin=_binary(), timeout=120)
    assert res["claude_exit"] == [0]
    assert res["steps_served"] == ["main:0", "main:1", "main:2"]
    conf = check_recording(tmp_path, "bash_fail")
    assert conf.ok, conf.problems
    assert [c for _, c in conf.checked["commands"]] == [1, 1]
