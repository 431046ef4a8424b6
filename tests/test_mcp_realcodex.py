"""The real Codex 0.171 CLI as our client: Codex 0.160+ offers MCP tools through ``tool_search``
and does not wait for a slow server, so a model whose first step is a tool search missed ours. Recorded with
the project's recorder (``corpus_tools.record``: real Codex, offline, ONLY inside an ``unshare -rnm``
namespace with loopback alone) against a scripted model: step 1 a ``tool_search``, step 2 a call of our
tool in the namespace the search returned, step 3 an answer.

The recording is kept in ``fixtures/mcp/realcodex/0.171.0/`` and checked on every run; the recording itself
is on demand (``TRANSCRIPT_READER_REAL_CODEX=1``: it installs ``@openai/codex@0.171.0`` from npm once).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_mcp_server import FIX

ROOT = Path(__file__).resolve().parents[1]
KEPT = FIX / "realcodex" / "0.171.0"
SCENARIO = FIX / "realcodex" / "tool_search_then_call.json"
NAME = "tool_search_then_call"
SERVER = "transcripts"
TOOL = "agent_transcript_inspect_file"


def scenario() -> Any:
    from corpus_tools.record.recorder import Scenario

    data = json.loads(SCENARIO.read_text(encoding="utf-8").replace("FIXTURE_DIR", str(FIX)))
    return Scenario(NAME, data["prompt"], data["steps"], tuple(data.get("args", ())))


def server_config() -> str:
    """The ``[mcp_servers]`` table Codex gets: this checkout's server, reading fixtures/mcp."""
    return (f'\n[mcp_servers.{SERVER}]\ncommand = "{sys.executable}"\n'
            f'args = ["-m", "transcript_reader", "mcp", "--allow-root", "{FIX}"]\n'
            f'env = {{ PYTHONPATH = "{ROOT}" }}\nstartup_timeout_sec = 30\n')


def summarize(mock_dir: Path) -> dict[str, Any]:
    """What the model saw, from the mock's request log: the deferred namespaces of the first request (is
    our server there on the first turn?), the tool_search output and our tool's output."""
    requests = [json.loads(p.read_text(encoding="utf-8"))["body"] for p in sorted(mock_dir.glob("req-*-POST.json"))]
    first_text = json.dumps(requests[0]["input"]) if requests else ""
    namespaces = sorted({line.split(":", 1)[0].lstrip("- ").strip()
                         for line in first_text.replace("\\n", "\n").splitlines() if line.startswith("- mcp__")})
    found: list[Any] = []
    output = None
    for body in requests:
        for item in body["input"]:
            if item.get("type") == "tool_search_output" and not found:
                found = [{"namespace": t.get("name"), "tools": [x.get("name") for x in t.get("tools") or ()]}
                         for t in item.get("tools") or ()]
            if item.get("type") == "function_call_output" and item.get("call_id") == "call_1":
                output = item.get("output")
    return {"requests": len(requests), "first_request_mcp_namespaces": namespaces, "tool_search_found": found,
            "call_output": output}


def check(summary: dict[str, Any], rollout: Path) -> None:
    assert summary["requests"] == 3
    assert f"mcp__{SERVER}" in summary["first_request_mcp_namespaces"]  # ready before the first model call
    ours = [f for f in summary["tool_search_found"] if f["namespace"] == f"mcp__{SERVER}"]
    assert ours and TOOL in ours[0]["tools"]
    body = summary["call_output"].split("Output:\n", 1)[-1]
    payload = json.loads(body)
    assert payload["ok"] is True and payload["info"]["session_id"] == "01a22d9c-2643-7350-8a76-f18f2f46ae21"
    # and our own reader reads the session Codex wrote: the search, then our tool's call with its output
    from transcript_reader import api
    from transcript_reader.projections import render

    items = [render.item_to_dict(i) for i in api.iter_items(rollout)]
    calls = [i for i in items if i["kind"] == "tool_call"]
    names = [c["name"] for c in calls]
    assert any("tool_search" in n for n in names), names
    (ours_call,) = [c for c in calls if TOOL in c["name"]]
    assert ours_call["executed"] == "yes" and '"ok":true' in (ours_call.get("result") or "")


def test_the_kept_recording_shows_codex_finding_and_calling_the_server() -> None:
    summary = json.loads((KEPT / f"{NAME}.mcp.json").read_text(encoding="utf-8"))
    check(summary, KEPT / f"{NAME}.rollout.jsonl")
    result = json.loads((KEPT / f"{NAME}.result.json").read_text(encoding="utf-8"))
    assert result["version"] == "0.171.0" and result["codex_exit"] == 0 and result["steps_served"] == [0, 1, 2]


@pytest.mark.skipif(os.environ.get("TRANSCRIPT_READER_REAL_CODEX") != "1",
                    reason="on demand: TRANSCRIPT_READER_REAL_CODEX=1 records with the real Codex 0.171 "
                           "(npm install once, run only inside unshare -rnm)")
def test_real_codex_0171_finds_the_server_with_tool_search_and_calls_it(tmp_path: Path) -> None:
    from corpus_tools.record.recorder import RecorderError, record

    try:
        result = record(scenario(), tmp_path, version="0.171.0", extra_config=server_config(), timeout=180)
    except RecorderError as exc:  # no unshare, no npm, no registry: say exactly why
        pytest.skip(f"the real Codex cannot run here: {exc}")
    assert result["codex_exit"] == 0 and result["steps_served"] == [0, 1, 2], result
    summary = summarize(tmp_path / f"{NAME}.mock")
    check(summary, tmp_path / f"{NAME}.rollout.jsonl")
    if os.environ.get("TRANSCRIPT_READER_KEEP_RECORDING") == "1":  # refresh the kept fixture
        KEPT.mkdir(parents=True, exist_ok=True)
        for suffix in (".rollout.jsonl", ".exec.jsonl", ".result.json"):
            shutil.copyfile(tmp_path / f"{NAME}{suffix}", KEPT / f"{NAME}{suffix}")
        (KEPT / f"{NAME}.mcp.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")


# ---- which tool Codex's own tool_search ranks first, from our descriptions -------------------------------

#: A question an agent may ask, and the tool it should be led to. Codex ranks the tools itself (its
#: tool_search over names and descriptions); the scripted model only asks and then answers.
CHOICES = {
    "list recent agent sessions": "agent_transcript_list_sessions",
    "find where the agent saw an error in a session": "agent_transcript_search_file",
    "what commands did the agent run and which files changed": "agent_transcript_read_file",
    "session metadata tokens duration": "agent_transcript_inspect_file",
    "analyze a code mode exec cell javascript": "exec_script_analyze",
}
CHOICES_KEPT = KEPT / "tool_choice.json"


def _choice_scenario(query: str) -> Any:
    from corpus_tools.record.recorder import Scenario

    steps = [[{"type": "tool_search_call", "call_id": "ts_1", "execution": "client", "status": "completed",
               "arguments": {"query": query, "limit": 8}}],
             [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Found."}]}]]
    return Scenario("choice", query, steps, ())


def _first_of_ours(summary: dict[str, Any]) -> str | None:
    ours = [f for f in summary["tool_search_found"] if f["namespace"] == f"mcp__{SERVER}"]
    return ours[0]["tools"][0] if ours and ours[0]["tools"] else None


def test_the_kept_tool_choices_lead_to_the_right_tool() -> None:
    kept = json.loads(CHOICES_KEPT.read_text(encoding="utf-8"))
    assert kept["version"] == "0.171.0" and set(kept["first"]) == set(CHOICES)
    assert kept["first"] == CHOICES, kept


@pytest.mark.skipif(os.environ.get("TRANSCRIPT_READER_REAL_CODEX") != "1",
                    reason="on demand: TRANSCRIPT_READER_REAL_CODEX=1 records with the real Codex 0.171 "
                           "(npm install once, run only inside unshare -rnm)")
def test_real_codex_tool_search_ranks_the_right_tool_first(tmp_path: Path) -> None:
    from corpus_tools.record.recorder import RecorderError, record

    first = {}
    for i, query in enumerate(CHOICES):
        out = tmp_path / str(i)
        try:
            record(_choice_scenario(query), out, version="0.171.0", extra_config=server_config(), timeout=180)
        except RecorderError as exc:
            pytest.skip(f"the real Codex cannot run here: {exc}")
        first[query] = _first_of_ours(summarize(out / "choice.mock"))
    if os.environ.get("TRANSCRIPT_READER_KEEP_RECORDING") == "1":
        CHOICES_KEPT.write_text(json.dumps({"version": "0.171.0", "first": first}, indent=1) + "\n", encoding="utf-8")
    assert first == CHOICES, first
