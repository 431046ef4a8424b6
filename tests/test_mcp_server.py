"""The MCP server, driven through the SDK's own client over in-memory streams.

These tests read as the spec of the wire behaviour: every assertion is on ``wire(result)``, the result as it
travels (``model_dump(by_alias=True, mode="json", exclude_none=True)``), never on SDK attribute names.
Transports (a real stdio subprocess, HTTP on loopback) are in ``test_mcp_transports.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client._memory import InMemoryTransport

from transcript_reader import mcp as mcp_server
from transcript_reader.mcp import ENVELOPE_CHARS, ServerConfig, create_server
from transcript_reader.mcp import policy as _policy  # noqa: F401 - mcp_server.policy below

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures" / "mcp"
CODEX_HOME = ROOT / "fixtures" / "codex_home"
SNAPSHOT = ROOT / "fixtures" / "snapshots" / "list_tools.json"
CANARY = "CANARY-7f3a9"

ERROR_CODES = {
    "path_required", "file_not_found", "not_a_file", "permission_denied", "outside_allowed_roots", "too_large",
    "unsupported_format", "provider_detection_failed", "provider_mismatch", "invalid_argument",
}


def wire(result: Any) -> dict[str, Any]:
    """A result as it travels on the wire, independent of SDK attribute names (minus the SDK's ``_meta``
    server stamp, which carries the package version)."""
    data: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    data.pop("_meta", None)
    return data


def config_for(*roots: Path, **kw: Any) -> ServerConfig:
    return ServerConfig(codex_home=CODEX_HOME, allow_roots=tuple(roots) or (FIX,), **kw)


def with_client(config: ServerConfig, fn: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(InMemoryTransport(create_server(config))) as client:
            return await fn(client)

    return anyio.run(main)


def call(config: ServerConfig, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def one(client: Client) -> dict[str, Any]:
        return wire(await client.call_tool(name, arguments))

    result: dict[str, Any] = with_client(config, one)
    return result


def ok_payload(result: dict[str, Any]) -> dict[str, Any]:
    """The payload of a successful call; the text block and the structured content say the same thing."""
    assert result.get("isError") is False, result
    (block,) = result["content"]
    assert block["type"] == "text"
    payload: dict[str, Any] = json.loads(block["text"])
    assert payload == result["structuredContent"]
    assert payload["ok"] is True
    return payload


def error_of(result: dict[str, Any]) -> tuple[str, str]:
    """(code, message) of a tool error, after checking its wire shape: isError, one text block holding
    exactly {"ok": false, "error": {"code", "message"}}, a one-line message, no traceback."""
    assert result["isError"] is True, result
    assert "structuredContent" not in result
    (block,) = result["content"]
    body = json.loads(block["text"])
    assert set(body) == {"ok", "error"} and body["ok"] is False
    assert set(body["error"]) == {"code", "message"}
    code, message = body["error"]["code"], body["error"]["message"]
    assert "\n" not in message and "Traceback" not in message and message
    return code, message


def read(config: ServerConfig, path: Path | str, **args: Any) -> dict[str, Any]:
    args.setdefault("projection", "timeline")
    return call(config, "agent_transcript_read_file", {"path": str(path), **args})


# ----------------------------------------------------------------------------------------------------------
# The tool list


def list_tools_wire(config: ServerConfig) -> list[dict[str, Any]]:
    async def one(client: Client) -> list[dict[str, Any]]:
        return [wire(t) for t in (await client.list_tools()).tools]

    tools: list[dict[str, Any]] = with_client(config, one)
    return tools


def test_tool_list_matches_golden(request: pytest.FixtureRequest) -> None:
    tools = list_tools_wire(config_for())
    if request.config.getoption("--update-golden", default=False):
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(json.dumps(tools, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert tools == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_every_tool_is_read_only_idempotent_non_destructive_and_the_list_is_small() -> None:
    """Every agent pays for the whole tool list at start: at most 6 KB on the wire (it was 20.7 KB), each
    tool saying what it is for in a few lines; what results share (executed, errors) is said once, in the
    server's instructions."""
    from transcript_reader.mcp.stdio import INSTRUCTIONS

    tools = list_tools_wire(config_for())
    assert [t["name"] for t in tools] == [
        "agent_transcript_read_file",
        "agent_transcript_search_file",
        "agent_transcript_inspect_file",
        "agent_transcript_list_sessions",
        "exec_script_analyze",
    ]
    assert len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode("utf-8")) <= 6 * 1024
    for tool in tools:
        assert tool["annotations"] == {
            "readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False
        }
        assert tool["inputSchema"]["type"] == "object"
        assert 100 < len(tool["description"]) < 500
    for word in ("executed", "unknown", "script", "record", "isError", "file_not_found"):
        assert word in INSTRUCTIONS


def test_origin_ranges_and_defaults() -> None:
    """peers.md §1.1 and §1.5: the origin's ranges and defaults, unchanged."""
    props = {t["name"]: t["inputSchema"]["properties"] for t in list_tools_wire(config_for())}
    read_p, search_p = props["agent_transcript_read_file"], props["agent_transcript_search_file"]
    assert (read_p["tail"]["minimum"], read_p["tail"]["maximum"]) == (1, 10_000)
    assert (read_p["maxItems"]["minimum"], read_p["maxItems"]["maximum"], read_p["maxItems"]["default"]) == (1, 10_000, 100)
    assert (read_p["maxChars"]["minimum"], read_p["maxChars"]["maximum"], read_p["maxChars"]["default"]) == (
        100, 500_000, 24_000)
    assert (read_p["maxCharsPerItem"]["minimum"], read_p["maxCharsPerItem"]["maximum"],
            read_p["maxCharsPerItem"]["default"]) == (50, 100_000, 4_000)
    assert set(read_p["include"]["properties"]) >= {
        "userMessages", "assistantMessages", "toolReads", "toolWrites", "shellCommands", "patches", "testRuns",
        "rawToolOutputs"}
    assert set(read_p["projection"]["enum"]) >= {
        "final", "assistant_messages", "conversation", "tool_reads", "tool_writes", "file_changes",
        "shell_commands", "tests", "timeline", "handoff"}
    assert read_p["provider"]["enum"] == ["auto", "codex", "claude"] and read_p["provider"]["default"] == "auto"
    assert set(read_p["projection"]["enum"]) == set(mcp_server.PROJECTIONS)
    assert set(read_p["include"]["properties"]) == set(mcp_server.INCLUDE_FLAGS)
    assert set(search_p["kinds"]["items"]["enum"]) == set(mcp_server.SEARCH_KINDS)
    assert (search_p["maxMatches"]["minimum"], search_p["maxMatches"]["maximum"], search_p["maxMatches"]["default"]) == (
        1, 1_000, 25)
    assert (search_p["contextItems"]["minimum"], search_p["contextItems"]["maximum"],
            search_p["contextItems"]["default"]) == (0, 20, 1)
    assert (search_p["maxCharsPerMatch"]["minimum"], search_p["maxCharsPerMatch"]["maximum"],
            search_p["maxCharsPerMatch"]["default"]) == (50, 100_000, 2_000)


# ----------------------------------------------------------------------------------------------------------
# Each tool on the project's fixtures


def kinds(items: list[dict[str, Any]]) -> list[str]:
    return [i["kind"] for i in items]


def test_read_handoff_is_prompts_final_answer_changes_commands_tests() -> None:
    payload = ok_payload(read(config_for(), FIX / "pytest_run.rollout.jsonl", projection="handoff"))
    assert payload["projection"] == "handoff" and payload["provider"] == "codex"
    assert payload["read_as"]["projection"] == "final"
    items = payload["items"]
    assert set(kinds(items)) == {"user_message", "assistant_message", "shell_command", "patch", "test_run"}
    assert [i["command"] for i in items if i["kind"] == "shell_command"] == ["ls && cat calc.py", "python -m pytest -q"]
    assert all(i["exit_code"] == 0 and i["executed"] == "yes" for i in items if i["kind"] == "shell_command")
    (patch,) = [i for i in items if i["kind"] == "patch"]
    assert sorted(Path(f["path"]).name for f in patch["files"]) == ["NOTES.md", "calc.py"]
    (answer,) = [i for i in items if i["kind"] == "assistant_message"]
    assert answer["final"] is True and "tests pass" in answer["text"]
    (run,) = [i for i in items if i["kind"] == "test_run"]
    assert (run["framework"], run["result"], run["passed"]) == ("pytest", "pass", 2)
    assert payload["truncated"] is False


def test_tests_projection_returns_real_test_runs_only() -> None:
    with_run = ok_payload(read(config_for(), FIX / "pytest_run.rollout.jsonl", projection="tests"))
    assert kinds(with_run["items"]) == ["test_run"]
    assert with_run["items"][0]["command"] == "python -m pytest -q"
    # The origin returned every shell command here (peers.md §1.9); a session with no test has none.
    without = ok_payload(read(config_for(), FIX / "multi_step.rollout.jsonl", projection="tests"))
    assert without["items"] == []


@pytest.mark.parametrize(
    ("origin", "ours", "expected_kinds"),
    [
        ("final", "final", {"assistant_message"}),
        ("assistant_messages", "assistant_messages", {"assistant_message"}),
        ("conversation", "conversation", {"user_message", "assistant_message"}),
        ("shell_commands", "shell_commands", {"shell_command"}),
        ("tool_writes", "file_changes", {"patch"}),
        ("file_changes", "file_changes", {"patch"}),
    ],
)
def test_origin_projection_names_map_onto_ours(origin: str, ours: str, expected_kinds: set[str]) -> None:
    payload = ok_payload(read(config_for(), FIX / "multi_step.rollout.jsonl", projection=origin))
    assert payload["projection"] == origin
    assert payload.get("read_as", {"projection": origin})["projection"] == ours
    assert set(kinds(payload["items"])) == expected_kinds


def test_tool_reads_reads_tool_calls() -> None:
    payload = ok_payload(read(config_for(), FIX / "multi_step.rollout.jsonl", projection="tool_reads"))
    assert payload["read_as"]["projection"] == "tool_calls"
    assert set(kinds(payload["items"])) <= {"tool_call"}


def test_include_flags_add_and_remove_kinds() -> None:
    path = FIX / "multi_step.rollout.jsonl"
    plain = ok_payload(read(config_for(), path, projection="final"))
    assert kinds(plain["items"]) == ["assistant_message"]
    more = ok_payload(read(config_for(), path, projection="final", include={"shellCommands": True}))
    assert kinds(more["items"]).count("shell_command") == 2
    fewer = ok_payload(read(config_for(), path, projection="timeline", include={"userMessages": False}))
    assert "user_message" not in kinds(fewer["items"]) and "shell_command" in kinds(fewer["items"])
    no_tests = ok_payload(read(config_for(), FIX / "pytest_run.rollout.jsonl", projection="handoff",
                               include={"testRuns": False}))
    assert "test_run" not in kinds(no_tests["items"]) and "patch" in kinds(no_tests["items"])
    raw = ok_payload(read(config_for(), path, projection="shell_commands", include={"rawToolOutputs": True}))
    assert "raw_output" in kinds(raw["items"])


def test_code_mode_items_say_where_they_came_from_and_whether_they_ran() -> None:
    payload = ok_payload(read(config_for(), FIX / "code_mode_multi_cell.rollout.jsonl", projection="shell_commands",
                              maxItems=1000))
    items = payload["items"]
    assert items, "the code-mode recording runs commands inside exec cells"
    assert {i["origin"] for i in items} <= {"direct", "script", "record"}
    assert {i["executed"] for i in items} <= {"yes", "no", "unknown"}
    assert any(i["origin"] in ("script", "record") for i in items)


def test_max_items_and_tail_window() -> None:
    path = FIX / "multi_step.rollout.jsonl"
    everything = ok_payload(read(config_for(), path, maxItems=1000))["items"]
    assert len(everything) > 3
    first = ok_payload(read(config_for(), path, maxItems=2))
    assert first["truncated"] is True and first["items"] == everything[:2]
    last = ok_payload(read(config_for(), path, tail=2))
    assert last["items"] == everything[-2:]
    # ours keeps the newest: maxItems applies from the end of the tail window (the origin's front-of-window
    # rule is the agent-code wire's, test_mcp_wire.py)
    newest = ok_payload(read(config_for(), path, tail=2, maxItems=1))
    assert newest["items"] == everything[-1:] and newest["truncated"] is True


def test_search_finds_items_with_context() -> None:
    payload = ok_payload(call(config_for(), "agent_transcript_search_file",
                              {"path": str(FIX / "multi_step.rollout.jsonl"), "query": "CAT CALC"}))
    assert payload["query"] == "CAT CALC" and payload["provider"] == "codex"
    assert payload["matches"], payload
    match = payload["matches"][0]
    assert match["item"]["kind"] == "shell_command" and match["item"]["command"] == "ls && cat calc.py"
    assert len(match.get("before", [])) <= 1 and len(match.get("after", [])) <= 1


def test_search_kinds_and_max_matches() -> None:
    path = str(FIX / "multi_step.rollout.jsonl")
    only_patches = ok_payload(call(config_for(), "agent_transcript_search_file",
                                   {"path": path, "query": "calc", "kinds": ["tool_write"], "contextItems": 0}))
    assert only_patches["matches"] and {m["item"]["kind"] for m in only_patches["matches"]} == {"patch"}
    one = ok_payload(call(config_for(), "agent_transcript_search_file",
                          {"path": path, "query": "calc", "maxMatches": 1}))
    assert len(one["matches"]) == 1 and one["truncated"] is True


def test_inspect_gives_metadata_and_no_content() -> None:
    payload = ok_payload(call(config_for(), "agent_transcript_inspect_file",
                              {"path": str(FIX / "multi_step.rollout.jsonl")}))
    info = payload["info"]
    assert payload["format"] == info["format"] == "rollout" and info["version"] == "0.171.0"
    assert info["session_id"] == "01a22d9c-2643-7350-8a76-f18f2f46ae21" and info["turns"] == 1
    assert info["counts"]["shell_command"] == 2 and info["tokens"]["total"] > 0
    assert "title" not in info
    text = json.dumps(payload)
    assert "fix calc.py and verify" not in text and "return a + b" not in text  # no prompt, no diff
    assert "items" not in payload


def test_list_sessions_under_codex_home() -> None:
    payload = ok_payload(call(config_for(), "agent_transcript_list_sessions", {"limit": 50}))
    rows = payload["sessions"]
    assert rows and all(Path(r["path"]).resolve().is_relative_to(CODEX_HOME.resolve()) for r in rows)
    assert payload["codex_home"] == str(CODEX_HOME)
    assert payload["truncated"] is False
    one = ok_payload(call(config_for(), "agent_transcript_list_sessions", {"limit": 1}))
    assert len([r for r in one["sessions"] if r.get("depth", 0) == 0]) == 1 and one["truncated"] is True
    assert one["sessions"][0] == rows[0]
    # a listed path reads with the read tool, under the default root policy (CODEX_HOME only)
    first = ok_payload(read(ServerConfig(codex_home=CODEX_HOME), rows[0]["path"], projection="final"))
    assert first["path"]
    nowhere = ok_payload(call(config_for(), "agent_transcript_list_sessions", {"cwd": "/no/such/project"}))
    assert nowhere["sessions"] == []


def test_list_sessions_rejects_a_bad_date() -> None:
    code, message = error_of(call(config_for(), "agent_transcript_list_sessions", {"since": "yesterdayish"}))
    assert code == "invalid_argument" and "date" in message


SCRIPT = """
const r = await tools.exec_command({cmd: "ls -la", workdir: "/home/user/project"});
await tools.apply_patch("*** Begin Patch\\n*** Add File: NOTES.md\\n+hi\\n*** End Patch\\n");
text(r.output);
"""


def test_exec_script_analyze_gives_calls_and_entries() -> None:
    payload = ok_payload(call(config_for(), "exec_script_analyze", {"script": SCRIPT}))
    assert [c["name"] for c in payload["calls"]] == ["exec_command", "apply_patch"]
    entries = payload["entries"]
    assert [e["kind"] for e in entries] == ["shell_command", "patch"]
    assert entries[0]["command"] == "ls -la" and entries[0]["cwd"] == "/home/user/project"
    assert {e["executed"] for e in entries} == {"unknown"}


# ----------------------------------------------------------------------------------------------------------
# Every error code


def test_path_required() -> None:
    for args in ({"projection": "final"}, {"path": "", "projection": "final"}, {"path": "   ", "projection": "final"}):
        assert error_of(call(config_for(), "agent_transcript_read_file", args))[0] == "path_required"
    assert error_of(call(config_for(), "agent_transcript_inspect_file", {"path": 7}))[0] == "path_required"


def test_file_not_found(tmp_path: Path) -> None:
    code, message = error_of(read(config_for(tmp_path), tmp_path / "missing.jsonl"))
    assert code == "file_not_found" and "missing.jsonl" in message


def test_not_a_file_directory_and_fifo(tmp_path: Path) -> None:
    (tmp_path / "dir.jsonl").mkdir()
    assert error_of(read(config_for(tmp_path), tmp_path / "dir.jsonl"))[0] == "not_a_file"
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # nobody writes to it: opening it for reading would block forever
    for tool, extra in (("agent_transcript_read_file", {"projection": "timeline"}),
                        ("agent_transcript_search_file", {"query": "x"}),
                        ("agent_transcript_inspect_file", {})):
        assert error_of(call(config_for(tmp_path), tool, {"path": str(fifo), **extra}))[0] == "not_a_file"


def test_devices_and_proc_are_not_files() -> None:
    anywhere = ServerConfig(codex_home=CODEX_HOME, allow_any_path=True)
    for path in ("/dev/zero", "/dev/null", "/proc/self/environ", "/proc/self/status"):
        code, _ = error_of(read(anywhere, path))
        assert code == "not_a_file", path
    assert error_of(read(config_for(), "/dev/zero"))[0] == "outside_allowed_roots"


def test_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "locked.rollout.jsonl"
    shutil.copy(FIX / "multi_step.rollout.jsonl", target)
    target.chmod(0)
    if os.geteuid() == 0:
        # root reads mode-000 files, so the kernel's EACCES is simulated at the one place the server opens
        real_open = os.open

        def deny(path: Any, flags: int, *a: Any, **kw: Any) -> int:
            if Path(path) == target:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, flags, *a, **kw)

        monkeypatch.setattr(mcp_server.policy.os, "open", deny)
    code, message = error_of(read(config_for(tmp_path), target))
    assert code == "permission_denied" and "locked" in message


def test_outside_allowed_roots(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside.rollout.jsonl"
    shutil.copy(FIX / "multi_step.rollout.jsonl", outside)
    link = root / "link.rollout.jsonl"
    link.symlink_to(outside)
    (root / "sub").mkdir()
    cases = [outside, link, root / "sub" / ".." / ".." / "outside.rollout.jsonl", Path("/etc/passwd"),
             tmp_path / "does-not-exist-outside.jsonl"]
    for path in cases:
        code, message = error_of(read(config_for(root), path))
        assert code == "outside_allowed_roots", path
        assert "--allow-root" in message
    # the same file through a root that contains its real location reads fine
    assert ok_payload(read(config_for(tmp_path), link, projection="final"))["items"]
    # --allow-any-path lifts the policy
    assert ok_payload(read(ServerConfig(codex_home=None, allow_any_path=True), outside, projection="final"))["items"]


def test_default_policy_is_codex_home_only(tmp_path: Path) -> None:
    shutil.copy(FIX / "multi_step.rollout.jsonl", tmp_path / "s.jsonl")
    only_home = ServerConfig(codex_home=CODEX_HOME)
    assert error_of(read(only_home, tmp_path / "s.jsonl"))[0] == "outside_allowed_roots"
    assert error_of(read(ServerConfig(), tmp_path / "s.jsonl"))[0] == "outside_allowed_roots"


def test_too_large(tmp_path: Path) -> None:
    shutil.copy(FIX / "multi_step.rollout.jsonl", tmp_path / "s.jsonl")
    code, message = error_of(read(config_for(tmp_path, max_file_bytes=10_000), tmp_path / "s.jsonl"))
    assert code == "too_large" and "--max-file-mb" in message


def test_unsupported_format_never_echoes_content() -> None:
    for tool, extra in (("agent_transcript_read_file", {"projection": "timeline"}),
                        ("agent_transcript_search_file", {"query": "CANARY"}),
                        ("agent_transcript_inspect_file", {})):
        result = call(config_for(), tool, {"path": str(FIX / "not_a_transcript.txt"), **extra})
        assert error_of(result)[0] == "unsupported_format"
        assert CANARY not in json.dumps(result)


def test_provider_detection_failed_for_another_agents_jsonl() -> None:
    path = str(FIX / "unknown_agent.jsonl")
    auto = call(config_for(), "agent_transcript_read_file", {"path": path, "projection": "timeline"})
    assert error_of(auto)[0] == "provider_detection_failed" and CANARY not in json.dumps(auto)
    explicit = call(config_for(), "agent_transcript_read_file", {"path": path, "projection": "timeline",
                                                                  "provider": "codex"})
    assert error_of(explicit)[0] == "unsupported_format" and CANARY not in json.dumps(explicit)


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("agent_transcript_read_file", {"projection": "bogus"}, "projection"),
        ("agent_transcript_read_file", {"projection": "timeline", "maxItems": 0}, "maxItems"),
        ("agent_transcript_read_file", {"projection": "timeline", "maxItems": 10_001}, "maxItems"),
        ("agent_transcript_read_file", {"projection": "timeline", "maxChars": 99}, "maxChars"),
        ("agent_transcript_read_file", {"projection": "timeline", "tail": 0}, "tail"),
        ("agent_transcript_read_file", {"projection": "timeline", "provider": "gemini"}, "provider"),
        ("agent_transcript_read_file", {"projection": "timeline", "include": {"bogus": True}}, "include"),
        ("agent_transcript_read_file", {"projection": "timeline", "include": {"toolWrites": True, "patches": False}},
         "include"),
        ("agent_transcript_read_file", {"projection": "timeline", "surprise": 1}, "surprise"),
        ("agent_transcript_search_file", {"query": ""}, "query"),
        ("agent_transcript_search_file", {"query": "x", "contextItems": 21}, "contextItems"),
        ("agent_transcript_search_file", {"query": "x", "kinds": ["everything"]}, "kinds"),
        ("agent_transcript_search_file", {"query": "(a+)+$", "regex": True}, "regex"),
        ("agent_transcript_list_sessions", {"limit": 0}, "limit"),
        ("exec_script_analyze", {}, "script"),
        ("no_such_tool", {}, "unknown tool"),
    ],
)
def test_invalid_argument(tool: str, arguments: dict[str, Any], field: str) -> None:
    if tool.startswith("agent_transcript_") and not tool.endswith("list_sessions"):
        arguments = {"path": str(FIX / "multi_step.rollout.jsonl"), **arguments}
    code, message = error_of(call(config_for(), tool, arguments))
    assert code == "invalid_argument"
    assert field in message


def test_a_session_survives_every_bad_call(tmp_path: Path) -> None:
    """One client session: a run of bad calls, then a good one still answers (the server never crashes)."""
    os.mkfifo(tmp_path / "p.jsonl")
    bad = [
        ("agent_transcript_read_file", {}),
        ("agent_transcript_read_file", {"path": str(tmp_path / "p.jsonl"), "projection": "timeline"}),
        ("agent_transcript_read_file", {"path": "/etc/shadow", "projection": "timeline"}),
        ("agent_transcript_search_file", {"path": str(FIX / "not_a_transcript.txt"), "query": "x"}),
        ("exec_script_analyze", {"script": 42}),
        ("nope", {"x": 1}),
    ]

    async def run(client: Client) -> tuple[list[str], dict[str, Any]]:
        codes = [error_of(wire(await client.call_tool(name, args)))[0] for name, args in bad]
        good = wire(await client.call_tool("agent_transcript_inspect_file",
                                           {"path": str(FIX / "multi_step.rollout.jsonl")}))
        return codes, good

    codes, good = with_client(config_for(FIX, tmp_path), run)
    assert codes == ["path_required", "not_a_file", "outside_allowed_roots", "unsupported_format",
                     "invalid_argument", "invalid_argument"]
    assert set(codes) <= ERROR_CODES
    assert ok_payload(good)["format"] == "rollout"


# ----------------------------------------------------------------------------------------------------------
# The output bound


def test_bound_payload_drops_from_the_right_end() -> None:
    """The server-side guard alone, on a synthetic payload: it keeps the head (or the tail for a tail
    read), marks truncated, and the text always fits."""
    items = [{"kind": "user_message", "text": f"{i}-" + "x" * 500} for i in range(100)]
    stats = {"returned_items": 100, "dropped_items": 7}
    payload = {"ok": True, "path": "/p", "items": items, "truncated": False, "stats": stats}
    head, text = mcp_server.bound_payload(payload, "items", 5_000, drop_front=False)
    assert len(text) <= 5_000 and head["truncated"] is True and head["items"] == items[: len(head["items"])]
    assert head["items"] and head["stats"] == {"returned_items": len(head["items"]),
                                               "dropped_items": 7 + 100 - len(head["items"])}
    assert json.loads(text) == head
    rows, text = mcp_server.bound_payload({"ok": True, "sessions": items, "truncated": False}, "sessions", 3_000,
                                          drop_front=False)
    assert len(text) <= 3_000 and rows["dropped"] == 100 - len(rows["sessions"])
    tail, text = mcp_server.bound_payload(payload, "items", 5_000, drop_front=True)
    assert len(text) <= 5_000 and tail["items"] == items[-len(tail["items"]):]
    small, text = mcp_server.bound_payload(payload, "items", 10**7, drop_front=False)
    assert small is payload and json.loads(text) == payload


@pytest.fixture(scope="module")
def big_transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 20 MB built by repeating the turn lines of a real recording (its header once)."""
    lines = (FIX / "multi_step.rollout.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    header, body = lines[:1], lines[1:]
    body_size = sum(len(x.encode()) for x in body)
    path = tmp_path_factory.mktemp("big") / "big.rollout.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(header)
        for _ in range(20 * 1024 * 1024 // body_size + 1):
            fh.writelines(body)
    assert path.stat().st_size >= 20 * 1024 * 1024
    return path


@pytest.mark.slow
def test_output_is_bounded_on_a_large_transcript(big_transcript: Path) -> None:
    config = config_for(big_transcript.parent)
    cases = [
        ("agent_transcript_read_file", {"projection": "timeline"}, 24_000),
        ("agent_transcript_read_file", {"projection": "raw_outputs", "tail": 10_000, "maxItems": 10_000,
                                        "maxChars": 100, "maxCharsPerItem": 100_000}, 100),
        ("agent_transcript_read_file", {"projection": "timeline", "maxItems": 10_000, "maxChars": 50_000,
                                        "maxCharsPerItem": 100_000, "include": {"rawToolOutputs": True}}, 50_000),
        ("agent_transcript_search_file", {"query": "calc", "maxMatches": 1_000, "contextItems": 20,
                                          "maxCharsPerMatch": 100_000}, 24_000),
        ("agent_transcript_inspect_file", {}, 0),
    ]

    async def run(client: Client) -> list[dict[str, Any]]:
        return [wire(await client.call_tool(name, {"path": str(big_transcript), **args})) for name, args, _ in cases]

    results = with_client(config, run)
    for (name, args, max_chars), result in zip(cases, results, strict=True):
        payload = ok_payload(result)
        text = result["content"][0]["text"]
        assert len(text) <= max_chars + ENVELOPE_CHARS, (name, args, len(text))
        if name != "agent_transcript_inspect_file":
            assert payload["truncated"] is True, (name, args)


def test_stat_mode_of_fixtures_is_regular() -> None:
    """The fixtures the tests rely on are plain files (a checkout that turned them into links would make
    the root tests meaningless)."""
    for path in FIX.rglob("*"):
        assert stat.S_ISREG(os.lstat(path).st_mode) or stat.S_ISDIR(os.lstat(path).st_mode), path


def test_lines_that_do_not_decode_are_never_quoted(tmp_path: Path) -> None:
    """Real lines with three broken ones carrying a canary: the result counts them as unreadable and
    names the reason, but never repeats their text, and search cannot find the canary."""
    real = (FIX / "multi_step.rollout.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    broken = [
        f"{CANARY} not json at all\n",
        '{"timestamp":"2026-11-30T17:58:58.752Z","type":"response_item","payload":{"type":"message",'
        f'"role":"assistant","content":[{{"type":"output_text","text":"{CANARY} \x01 cut\n',
    ]
    path = tmp_path / "mixed.rollout.jsonl"
    path.write_text("".join(real[:5] + broken + real[5:]) + '{"type":"event_msg","payload":{"message":"'
                    + CANARY, encoding="utf-8")
    config = config_for(tmp_path)
    timeline = read(config, path, maxItems=1000)
    payload = ok_payload(timeline)
    unreadable = [i for i in payload["items"] if i["kind"] == "unreadable"]
    assert len(unreadable) == 3 and all(i["reason"] for i in unreadable)
    assert payload["stats"]["lines"]["unreadable"] == 3
    found = ok_payload(call(config, "agent_transcript_search_file", {"path": str(path), "query": CANARY}))
    assert found.pop("query") == CANARY and found["matches"] == []  # the query is echoed, nothing else
    inspected = call(config, "agent_transcript_inspect_file", {"path": str(path)})
    for result in (timeline, found, inspected):
        assert CANARY not in json.dumps(result)


def test_a_symlinked_codex_home_still_contains_its_files(tmp_path: Path) -> None:
    real_home = tmp_path / "real-home"
    (real_home / "sessions").mkdir(parents=True)
    shutil.copy(FIX / "multi_step.rollout.jsonl", real_home / "sessions" / "s.jsonl")
    link_home = tmp_path / "codex-home"
    link_home.symlink_to(real_home)
    config = ServerConfig(codex_home=link_home)
    assert ok_payload(read(config, link_home / "sessions" / "s.jsonl", projection="final"))["items"]


def test_exec_script_analyze_output_is_bounded() -> None:
    script = "\n".join(f'await tools.exec_command({{cmd: "echo {i} {"y" * 80}"}});' for i in range(1_500))
    assert len(script) < 200_000
    result = call(config_for(), "exec_script_analyze", {"script": script, "maxChars": 100})
    payload = ok_payload(result)
    assert len(result["content"][0]["text"]) <= 100 + ENVELOPE_CHARS
    assert payload["truncated"] is True and payload["dropped"] > 0
    too_long = call(config_for(), "exec_script_analyze", {"script": "x" * 200_001})
    assert error_of(too_long) == ("too_large", "script is 200,001 characters, over the limit of 200,000")


MCP_DOC = ROOT / "docs" / "mcp.md"


def readme_mcp_section() -> str:
    """The MCP server's reference page (the README links to it)."""
    return MCP_DOC.read_text(encoding="utf-8")


def test_readme_documents_registration_and_every_tool() -> None:
    section = readme_mcp_section()
    assert "[mcp_servers.transcripts]" in section and "~/.codex/config.toml" in section
    for tool in list_tools_wire(config_for()):
        assert f"`{tool['name']}`" in section
    for code in ERROR_CODES:
        assert f"`{code}`" in section


def test_readme_example_answer_is_what_the_server_says() -> None:
    """The README's example answer (abridged) must be a sub-structure of the real answer to its call."""
    blocks = [b.split("```", 1)[0] for b in readme_mcp_section().split("```json\n")[1:]]
    request, answer = json.loads(blocks[0]), json.loads(blocks[1])
    arguments = {**request["arguments"], "path": str(FIX / Path(request["arguments"]["path"]).name)}
    real = ok_payload(call(config_for(), request["name"], arguments))

    def contained(small: Any, big: Any) -> bool:
        if isinstance(small, dict):
            return isinstance(big, dict) and all(k in big and contained(v, big[k]) for k, v in small.items()
                                                  if k != "path")
        if isinstance(small, list):
            return all(any(contained(s, b) for b in big) for s in small)
        return bool(small == big)

    assert contained(answer, real)


def test_an_adversarial_envelope_is_shrunk_not_dropped(tmp_path: Path) -> None:
    """Thousands of distinct unknown record types (each listed in the line accounting) must not blow up
    inspect or read: the tables keep their biggest entries plus "(others)", so the sums still hold."""
    path = tmp_path / "types.rollout.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write((FIX / "multi_step.rollout.jsonl").open(encoding="utf-8").readline())
        for i in range(5_000):  # distinct names that look like type names (letters only), so each is shown
            name = "weird_" + "".join(chr(97 + (i // 26 ** k) % 26) for k in range(3))
            fh.write(json.dumps({"timestamp": "2026-11-30T17:58:58.752Z", "type": name, "payload": {}}) + "\n")
    config = config_for(tmp_path)
    inspected = call(config, "agent_transcript_inspect_file", {"path": str(path)})
    info = ok_payload(inspected)["info"]
    assert len(inspected["content"][0]["text"]) <= mcp_server.INSPECT_CHARS
    assert sum(info["lines"]["unknown_types"].values()) == info["lines"]["unknown"] == 5_000
    # capped by the reader ("(other types)") or, failing that, by the server ("(others)")
    assert any(k.startswith("(other") for k in info["lines"]["unknown_types"])
    timeline = read(config, path)
    payload = ok_payload(timeline)
    assert len(timeline["content"][0]["text"]) <= 24_000 + ENVELOPE_CHARS
    assert sum(payload["stats"]["lines"]["unknown_types"].values()) == 5_000


def test_cut_strings_and_shrink_envelope() -> None:
    item = {"kind": "patch", "truncated_chars": 3, "files": [{"path": "a", "diff": "d" * 10_000}], "cwd": "c" * 60}
    mcp_server.cut_strings(item, 50)
    assert item["files"][0]["diff"].startswith("d" * 50) and len(item["files"][0]["diff"]) < 70
    assert item["cwd"].startswith("c" * 50) and item["truncated_chars"] == 3 + 9_950 + 10
    table = {f"t{i}": i for i in range(100)}
    shrunk = mcp_server.shrink_envelope({"lines": {"unknown_types": table}, "cwd": "x" * 5_000})
    assert len(shrunk["lines"]["unknown_types"]) == mcp_server.TOP_ENTRIES + 1
    assert sum(shrunk["lines"]["unknown_types"].values()) == sum(table.values())
    assert shrunk["lines"]["unknown_types"]["t99"] == 99 and len(shrunk["cwd"]) == 1_001


SHARED = ROOT.parent / "shared"
TRANSCRIPTS = sorted(p for p in (ROOT / "fixtures" / "transcripts").iterdir()
                     if p.is_file() and not p.name.endswith(".golden.json")) \
    if (ROOT / "fixtures" / "transcripts").is_dir() else []


def _same_as_library(path: Path, config: ServerConfig, *, with_search: bool = True) -> None:
    """The server's read and inspect answer exactly what the library renders (nothing lost or invented on
    the way), and search finds the same matches."""
    from transcript_reader import api
    from transcript_reader.projections import render

    big = {"maxItems": 10_000, "maxChars": 500_000, "maxCharsPerItem": 100_000}
    served = ok_payload(read(config, path, **big))
    mine = render.read_result_to_dict(api.read(path, projection="timeline", max_items=10_000, max_chars=500_000,
                                               max_chars_per_item=100_000))
    if not served["truncated"]:
        assert served["items"] == mine["items"]
    info = ok_payload(call(config, "agent_transcript_inspect_file", {"path": str(path)}))["info"]
    expected = render.inspect_to_dict(api.inspect(path))["info"]
    expected.pop("title", None)
    assert info == expected
    if not with_search:
        return
    found = ok_payload(call(config, "agent_transcript_search_file", {"path": str(path), "query": "e"}))
    assert len(found["matches"]) == min(25, render.search_result_to_dict(api.search(path, "e"))["stats"]["total_matches"])


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_every_project_fixture_reads_through_the_server(path: Path) -> None:
    _same_as_library(path, config_for(path.parent))


def test_every_real_recording_reads_through_the_server() -> None:
    corpus = SHARED / "corpus" / "realcodex"
    if not corpus.is_dir():
        pytest.skip(f"{corpus} is absent (a fresh clone without ../shared): the project fixtures cover this")
    files = sorted(p for p in corpus.glob("*/*.rollout.json*") if p.stat().st_size > 0)
    assert len(files) > 50
    config = config_for(corpus)
    for path in files:
        _same_as_library(path, config, with_search=False)


def test_a_bug_of_ours_is_an_internal_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """If the library itself fails unexpectedly, the call still ends in a coded tool error and the session
    goes on; the traceback goes to the server's log only."""
    from transcript_reader import api

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internal detail /home/someone")

    monkeypatch.setattr(api, "read", broken)

    async def run(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        bad = wire(await client.call_tool("agent_transcript_read_file",
                                          {"path": str(FIX / "multi_step.rollout.jsonl"), "projection": "final"}))
        good = wire(await client.call_tool("agent_transcript_inspect_file",
                                           {"path": str(FIX / "multi_step.rollout.jsonl")}))
        return bad, good

    bad, good = with_client(config_for(), run)
    code, message = error_of(bad)
    assert code == "internal_error" and "secret" not in json.dumps(bad)
    assert ok_payload(good)["info"]["format"] == "rollout"


def test_list_sessions_hides_a_symlink_out_of_the_roots(tmp_path: Path) -> None:
    home = tmp_path / "home"
    day = home / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    inside = "rollout-2026-11-30T17-58-57-01a22d9c-2643-7350-8a76-f18f2f46ae21.jsonl"
    shutil.copy(FIX / "multi_step.rollout.jsonl", day / inside)
    secret = tmp_path / "elsewhere.jsonl"
    shutil.copy(FIX / "pytest_run.rollout.jsonl", secret)
    (day / "rollout-2026-11-30T18-00-00-01a22d9c-0000-7000-8000-000000000000.jsonl").symlink_to(secret)
    listed = ok_payload(call(ServerConfig(codex_home=home), "agent_transcript_list_sessions", {}))
    assert [Path(r["path"]).name for r in listed["sessions"]] == [inside]
    assert "outside_allowed_roots" not in listed  # nothing about an outside entry, not even a count
    anywhere = ok_payload(call(ServerConfig(codex_home=home, allow_any_path=True),
                               "agent_transcript_list_sessions", {}))
    assert len(anywhere["sessions"]) == 2 and "outside_allowed_roots" not in anywhere


def test_server_cuts_show_in_the_stats() -> None:
    """Patch diffs (which the reader keeps up to 64 KB a file) are held to maxCharsPerItem too, and the
    cut is counted in the item and in the result's stats."""
    payload = ok_payload(read(config_for(), FIX / "multi_step.rollout.jsonl", projection="file_changes",
                              maxCharsPerItem=50))
    (patch,) = payload["items"]
    diffs = [f["diff"] for f in patch["files"] if f["diff"]]
    assert diffs and all(len(d) <= 50 + len("\n[truncated]") for d in diffs)
    # calc.py's recorded diff is longer than 50: the reader cuts it within the item's budget
    assert sum(len(d) for d in diffs) <= 50
    assert patch["truncated_chars"] > 0
    assert payload["stats"]["truncated_chars"] >= patch["truncated_chars"]
    assert payload["stats"]["truncated_items"] == 1


def test_provider_means_what_it_says() -> None:
    """A Claude Code file reads as claude under auto and claude; asked for as codex (and a Codex rollout
    asked for as claude) it is a typed error naming the file's provider, never an empty success."""
    claude = str(FIX / "other_agent.jsonl")
    codex = str(FIX / "multi_step.rollout.jsonl")
    for provider in ("auto", "claude"):
        payload = ok_payload(call(config_for(), "agent_transcript_read_file",
                                  {"path": claude, "projection": "conversation", "provider": provider}))
        assert payload["provider"] == "claude" and payload["format"] == "claude-code"
        assert [i["kind"] for i in payload["items"]] == ["user_message", "assistant_message"]
    for tool, extra in (("agent_transcript_read_file", {"projection": "timeline"}),
                        ("agent_transcript_search_file", {"query": "calc"}),
                        ("agent_transcript_inspect_file", {})):
        code, message = error_of(call(config_for(), tool, {"path": codex, "provider": "claude", **extra}))
        assert code == "provider_mismatch" and "a Codex transcript, not a Claude Code one" in message
        code, message = error_of(call(config_for(), tool, {"path": claude, "provider": "codex", **extra}))
        assert code == "provider_mismatch" and "a Claude Code transcript, not a Codex one" in message
