"""What an agent and a user reach for: session references wherever a path is taken,
``projection`` defaulting to ``handoff``, a listing that pages, ``mcp --check``, and a server that answers
``initialize`` and ``tools/list`` before it loads anything heavy. Through the SDK client."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from tests.test_mcp_server import CODEX_HOME, FIX, SNAPSHOT, call, error_of, ok_payload
from tests.test_mcp_transports import ROOT, server_env
from transcript_reader.mcp import WIRES, ServerConfig
from transcript_reader.mcp.catalog import packaged_tools, tool_definitions
from transcript_reader.mcp.names import SERVER_VERSION

SESSIONS = ["01a22d9c-2643-7350-8a76-f18f2f46ae21", "01a22d9c-5471-7953-942f-93603d8b9241",
            "01a22d9c-7777-7000-8000-000000000001", "01a22d9c-7777-7000-8000-000000000002"]


def home_of(tmp_path: Path, n: int = 4) -> Path:
    """A CODEX_HOME with ``n`` sessions, the newest last in SESSIONS order."""
    home = tmp_path / "home"
    day = home / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    text = (FIX / "pytest_run.rollout.jsonl").read_text(encoding="utf-8")
    for k, sid in enumerate(SESSIONS[:n]):
        stamp = f"2026-11-30T1{k}:00:00"
        body = text.replace("01a22d9c-2643-7350-8a76-f18f2f46ae21", sid).replace("2026-11-30T17:58", f"2026-11-30T1{k}:00")
        (day / f"rollout-{stamp.replace(':', '-')}-{sid}.jsonl").write_text(body, encoding="utf-8")
    return home


def inspect(config: ServerConfig, ref: str) -> dict[str, Any]:
    return call(config, "agent_transcript_inspect_file", {"path": ref})


def test_a_path_argument_takes_ids_prefixes_last_and_last_n(tmp_path: Path) -> None:
    config = ServerConfig(codex_home=home_of(tmp_path))
    newest, previous = SESSIONS[3], SESSIONS[2]
    assert ok_payload(inspect(config, "last"))["info"]["session_id"] == newest
    assert ok_payload(inspect(config, "last~1"))["info"]["session_id"] == previous
    assert ok_payload(inspect(config, SESSIONS[1]))["info"]["session_id"] == SESSIONS[1]
    assert ok_payload(inspect(config, "01a22d9c-54"))["info"]["session_id"] == SESSIONS[1]  # a unique prefix
    name = next((config.codex_home or tmp_path).rglob(f"*{SESSIONS[0]}.jsonl")).name
    assert ok_payload(inspect(config, name))["info"]["session_id"] == SESSIONS[0]
    read = ok_payload(call(config, "agent_transcript_read_file", {"path": "last"}))
    assert read["projection"] == "handoff" and Path(read["path"]).name.endswith(f"{newest}.jsonl")
    for ref, why in (("last~9", "only 4 session(s)"), ("01a22d9c-7777", "ambiguous"), ("deadbeef", "no session"),
                     ("abc", "at least 4 characters")):
        code, message = error_of(inspect(config, ref))
        assert code == "session_not_found" and why in message, (ref, message)


def test_references_resolve_only_inside_the_roots(tmp_path: Path) -> None:
    home = home_of(tmp_path, 2)
    outside = tmp_path / "outside" / f"rollout-2026-11-30T19-00-00-{SESSIONS[3]}.jsonl"
    outside.parent.mkdir()
    shutil.copy(next(home.rglob(f"*{SESSIONS[1]}.jsonl")), outside)
    day = next(home.rglob("30"))
    (day / outside.name).symlink_to(outside)  # the newest by name and time, but outside the roots
    config = ServerConfig(codex_home=home)
    assert ok_payload(inspect(config, "last"))["info"]["session_id"] == SESSIONS[1]
    assert error_of(inspect(config, SESSIONS[3]))[0] == "session_not_found"


def test_list_sessions_pages_with_a_cursor(tmp_path: Path) -> None:
    config = ServerConfig(codex_home=home_of(tmp_path))
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        args: dict[str, Any] = {"limit": 1, **({"cursor": cursor} if cursor else {})}
        page = ok_payload(call(config, "agent_transcript_list_sessions", args))
        seen += [Path(r["path"]).name for r in page["sessions"]]
        pages += 1
        cursor = page.get("next_cursor")
        assert page["truncated"] is (cursor is not None)
        if cursor is None:
            break
    assert pages == 4 and [s.rsplit("-", 5)[-5:] for s in seen] and len(set(seen)) == 4
    assert [next(sid for sid in SESSIONS if sid in s) for s in seen] == SESSIONS[::-1]  # newest first, each once
    whole = ok_payload(call(config, "agent_transcript_list_sessions", {}))
    assert [Path(r["path"]).name for r in whole["sessions"]] == seen and "next_cursor" not in whole


def test_mcp_check_prints_what_a_client_sees() -> None:
    done = subprocess.run([sys.executable, "-m", "transcript_reader", "mcp", "--check"], capture_output=True,
                          text=True, env=server_env(), cwd=str(ROOT), timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"CODEX_HOME  {CODEX_HOME}" in out and "initialize answered in" in out
    for tool in packaged_tools():
        assert tool["name"] in out
    assert "sample      inspect last -> " in out and "format rollout" in out


def test_mcp_check_fails_when_the_sample_call_fails(tmp_path: Path) -> None:
    env = {**server_env(), "CODEX_HOME": str(tmp_path / "missing")}
    done = subprocess.run([sys.executable, "-m", "transcript_reader", "mcp", "--check"], capture_output=True,
                          text=True, env=env, cwd=str(ROOT), timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and "(missing)" in done.stdout and "no session under CODEX_HOME yet" in done.stdout


def test_the_packaged_tool_lists_are_what_the_code_builds() -> None:
    """The stdio server answers tools/list from files shipped in the package; they must be the models'
    schemas exactly (``python -m transcript_reader.mcp.catalog`` rewrites them)."""
    for wire in WIRES:
        assert packaged_tools(wire) == tool_definitions(wire), wire
    assert packaged_tools() == json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert SERVER_VERSION == version("transcript-reader")


def test_initialize_and_tools_list_are_answered_before_any_heavy_import() -> None:
    """Codex 0.160+ does not wait for a slow server: the handshake must not import the SDK, pydantic or the
    reader. The stdio loop is run on in-memory streams in a fresh interpreter, which then lists what it
    imported."""
    code = (
        "import io, json, sys\n"
        "from transcript_reader.mcp.policy import ServerConfig\n"
        "from transcript_reader.mcp.stdio import StdioServer\n"
        "lines = [{'jsonrpc': '2.0', 'id': 0, 'method': 'initialize', 'params': {'protocolVersion': '2025-06-18'}},\n"
        "         {'jsonrpc': '2.0', 'method': 'notifications/initialized'},\n"
        "         {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list'}]\n"
        "out = io.BytesIO()\n"
        "StdioServer(ServerConfig(), io.BytesIO(b''.join(json.dumps(x).encode() + b'\\n' for x in lines)), out).serve()\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic', 'anyio',\n"
        "    'exec_grammar', 'tree_sitter', 'esprima', 'orjson', 'zstandard') or m in ('transcript_reader.api',\n"
        "    'transcript_reader.model', 'transcript_reader.sessions.discovery', 'importlib.metadata'))\n"
        "print(json.dumps({'heavy': heavy, 'answers': [json.loads(x) for x in out.getvalue().splitlines()]}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=server_env(),
                          cwd=str(ROOT), timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["heavy"] == []
    init, listed = report["answers"]
    assert init["result"]["serverInfo"] == {"name": "transcript-reader", "version": SERVER_VERSION}
    assert listed["result"]["tools"] == packaged_tools()


def test_unknown_methods_and_bad_lines_get_json_rpc_errors() -> None:
    from transcript_reader.mcp.stdio import StdioServer

    lines = [b"not json\n", b"[1, 2]\n", json.dumps({"jsonrpc": "2.0", "id": 7, "method": "resources/list"}).encode() + b"\n",
             json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": 3}}).encode() + b"\n",
             json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}).encode() + b"\n"]
    out = io.BytesIO()
    StdioServer(ServerConfig(), io.BytesIO(b"".join(lines)), out).serve()
    answers = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [a.get("error", {}).get("code") for a in answers] == [-32700, -32600, -32601, -32602, None]
    assert answers[-1] == {"jsonrpc": "2.0", "id": 9, "result": {}}


# ----------------------------------------------------------------------------------------------------------
# The listing's text filter: the sessions whose items hold a text, answered from the session store


WORD = "zebra-quartz"


def home_with_word(tmp_path: Path) -> Path:
    """Four sessions; the prompts of the second and the fourth (newest) hold WORD."""
    home = home_of(tmp_path)
    for sid in (SESSIONS[1], SESSIONS[3]):
        f = next(home.rglob(f"*{sid}.jsonl"))
        f.write_text(f.read_text(encoding="utf-8").replace("fix calc.py and verify", f"fix calc.py, {WORD}"),
                     encoding="utf-8")
    return home


def listed_with_text(config: ServerConfig, text: str, limit: int = 20) -> list[dict[str, Any]]:
    """Every row the listing gives for ``text``, page by page."""
    rows: list[dict[str, Any]] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"text": text, "limit": limit, **({"cursor": cursor} if cursor else {})}
        page = ok_payload(call(config, "agent_transcript_list_sessions", args))
        assert page["searched_all"] is True
        rows += page["sessions"]
        cursor = page.get("next_cursor")
        if cursor is None:
            return rows


def test_the_listing_text_filter_finds_what_search_finds_with_or_without_the_store(
        tmp_path: Path, monkeypatch: Any) -> None:
    from transcript_reader import api
    from transcript_reader.home_search import files
    from transcript_reader.sessions import discovery

    home = home_with_word(tmp_path)
    # the witness: the reader's own search of each file
    expected = [sid for sid in SESSIONS[::-1]
                if api.search(str(next(home.rglob(f"*{sid}.jsonl"))), WORD.upper()).total_matches]
    assert expected == [SESSIONS[3], SESSIONS[1]]
    from_files = listed_with_text(ServerConfig(codex_home=home), WORD.upper())
    assert [r["id"] for r in from_files] == expected
    for row in from_files:
        (hit,) = row["hits"]
        assert hit["kind"] == "user_message" and WORD in hit["excerpt"] and hit["line"] > 0
    store_dir = tmp_path / "cache"
    discovery.list_sessions(home, scope=discovery.Scope.ALL, store_dir=store_dir)  # what `ls` does: fills it
    assert list(store_dir.glob("store-*.sqlite"))
    from_store = ServerConfig(codex_home=home, store_dir=store_dir)

    def no_read(*_args: Any, **_kw: Any) -> None:
        raise AssertionError("a session the store holds was read from its file")

    monkeypatch.setattr(files, "search_one", no_read)
    found = [(r["id"], r["hits"]) for r in from_files]
    # rows from the store carry its whole-read figures too; the sessions and their hits are the same
    assert [(r["id"], r["hits"]) for r in listed_with_text(from_store, WORD.upper())] == found
    paged = listed_with_text(from_store, WORD, limit=1)  # one session per page, through the cursor
    assert [(r["id"], r["hits"]) for r in paged] == found
    assert listed_with_text(from_store, "no-such-text-anywhere") == []


def test_a_text_search_cut_by_the_time_budget_says_so_and_goes_on_from_its_cursor(
        tmp_path: Path, monkeypatch: Any) -> None:
    """Absence is proven only by a search that reached every session: a cut one says searched_all
    false, and its cursor resumes after the last session searched, so that no hit is skipped."""
    from transcript_reader.mcp import session_text
    from transcript_reader.sessions import discovery

    home = home_with_word(tmp_path)
    config = ServerConfig(codex_home=home)
    entries = discovery.list_sessions(home, scope=discovery.Scope.ALL)
    groups = [[e] for e in entries]
    assert [e.session_id for e in entries] == SESSIONS[::-1]
    ticks = iter(range(1, 100))
    monkeypatch.setattr(session_text.time, "monotonic", lambda: next(ticks))
    found = session_text.match_groups(groups, WORD, 20, config, "all", deadline=2.5)  # two sessions searched
    assert not found.searched_all and found.resume == 1
    assert [g[0].session_id for g in found.groups] == [SESSIONS[3]]
    ticks = iter(range(1, 100))
    found = session_text.match_groups(groups, WORD, 20, config, "all", deadline=0.5)  # none searched
    assert not found.searched_all and found.resume == -1 and not found.groups
    found = session_text.match_groups(groups, WORD, 1, config, "all", deadline=float("inf"))
    assert found.searched_all and [g[0].session_id for g in found.groups] == [SESSIONS[3], SESSIONS[1]]
