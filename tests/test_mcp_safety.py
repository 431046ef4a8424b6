"""The server as an attacker tries it, through the SDK's own client: a directory swapped for
a symlink while the tools are called, hard links, the listing's ``grep`` as a side channel, ``/proc``
paths in error messages, undecoded type strings. Each test names what leaked before.

A transcript *outside* the roots carries :data:`CANARY` as its prompt and its session id; no result may
ever contain it, nor the outside directory's path.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client._memory import InMemoryTransport

from tests.test_mcp_server import FIX, error_of, ok_payload, wire
from transcript_reader.mcp import ServerConfig, create_server

CANARY = "CANARY-7f3a9"
OUTSIDE_ID = "0badc0de-0000-7000-8000-00000000c0de"
FIXTURE = FIX / "pytest_run.rollout.jsonl"
#: How long the race runs (seconds); CI keeps it short, a longer run is one variable away.
RACE_SECONDS = float(os.environ.get("MCP_RACE_SECONDS", "4"))


def outside_copy(dest: Path) -> Path:
    """The fixture with its prompt and session id replaced by the canary's."""
    text = FIXTURE.read_text(encoding="utf-8")
    text = text.replace("fix calc.py and verify", CANARY).replace("01a22d9c-2643-7350-8a76-f18f2f46ae21", OUTSIDE_ID)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text, encoding="utf-8")
    return dest


def leaks(result: dict[str, Any], *secrets: str) -> bool:
    text = json.dumps(result)
    return any(s in text for s in (CANARY, OUTSIDE_ID, *secrets))


def calls(config: ServerConfig, batch: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    async def main() -> list[dict[str, Any]]:
        async with Client(InMemoryTransport(create_server(config))) as client:
            return [wire(await client.call_tool(name, args)) for name, args in batch]

    out: list[dict[str, Any]] = anyio.run(main)
    return out


# ----------------------------------------------------------------------------------------------------------
# The race: check-then-open read an outside transcript in 75 of 14,062 calls


def test_swapping_a_directory_and_a_symlink_never_leads_a_call_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    shutil.copy(FIXTURE, root / "d" / "s.jsonl")
    shutil.copy(FIXTURE, root / "f.jsonl")
    outside_copy(outside / "s.jsonl")
    outside_copy(outside / "f.jsonl")
    stop = threading.Event()
    swaps = 0

    def swapper() -> None:
        """Flip root/d between the real directory and a symlink to outside/, and root/f.jsonl between
        the real file and a symlink to outside/f.jsonl, as fast as it can."""
        nonlocal swaps
        real_dir, real_file, tmp_link = root / "d.real", root / "f.real", root / "f.link"
        while not stop.is_set():
            os.rename(root / "d", real_dir)
            os.symlink(outside, root / "d")
            os.rename(root / "f.jsonl", real_file)
            os.symlink(outside / "f.jsonl", tmp_link)
            os.replace(tmp_link, root / "f.jsonl")
            os.unlink(root / "d")
            os.rename(real_dir, root / "d")
            os.replace(real_file, root / "f.jsonl")
            swaps += 1

    config = ServerConfig(allow_roots=(root,), call_timeout_s=30)
    paths = [str(root / "d" / "s.jsonl"), str(root / "f.jsonl")]
    tools = [("agent_transcript_read_file", {"projection": "conversation"}),
             ("agent_transcript_search_file", {"query": "CANARY"}),
             ("agent_transcript_inspect_file", {})]
    seen: dict[str, int] = {}
    leaked: list[dict[str, Any]] = []
    odd: list[dict[str, Any]] = []
    count = 0

    async def main() -> None:
        nonlocal count
        async with Client(InMemoryTransport(create_server(config))) as client:
            deadline = time.monotonic() + RACE_SECONDS

            async def caller(k: int) -> None:
                nonlocal count
                n = k
                while time.monotonic() < deadline:
                    name, args = tools[n % len(tools)]
                    result = wire(await client.call_tool(name, {**args, "path": paths[n % len(paths)]}))
                    n += 1
                    count += 1
                    if leaks(result, str(outside)):
                        leaked.append(result)
                    key = "ok" if not result.get("isError") else error_of(result)[0]
                    if key not in {"ok", "outside_allowed_roots", "file_not_found", "not_a_file"}:
                        odd.append(result)
                    seen[key] = seen.get(key, 0) + 1

            async with anyio.create_task_group() as tg:
                for k in range(4):
                    tg.start_soon(caller, k)

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    try:
        anyio.run(main)
    finally:
        stop.set()
        thread.join(timeout=30)
    print(f"\nrace: {count} calls, {swaps} swaps, outcomes {seen}", file=sys.stderr)
    assert count > 50 and swaps > 10, (count, swaps)
    assert leaked == [], f"{len(leaked)} of {count} calls leaked: {leaked[:2]}"
    # every call either read the inside file or was refused with a typed code; never an internal error
    assert set(seen) <= {"ok", "outside_allowed_roots", "file_not_found", "not_a_file"}, (seen, odd)
    assert seen.get("ok", 0) > 0


# ----------------------------------------------------------------------------------------------------------
# Hard links: a link inside a root to a file outside it was read


def test_a_hard_link_is_refused_and_not_listed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    day = home / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    secret = outside_copy(tmp_path / "outside" / "secret.jsonl")
    link = day / "rollout-2026-11-30T18-00-00-01a22d9c-1111-7000-8000-000000000001.jsonl"
    os.link(secret, link)
    config = ServerConfig(codex_home=home)
    read, inspect, listed = calls(config, [
        ("agent_transcript_read_file", {"path": str(link)}),
        ("agent_transcript_inspect_file", {"path": str(link)}),
        ("agent_transcript_list_sessions", {}),
    ])
    for result in (read, inspect):
        code, message = error_of(result)
        assert code == "hard_linked" and "2 hard links" in message and str(link) in message
        assert not leaks(result, str(secret))
    assert ok_payload(listed)["sessions"] == [] and not leaks(listed)
    # the same file with one link is read (the refusal is about the link count, not the place)
    os.unlink(secret)
    assert ok_payload(calls(config, [("agent_transcript_inspect_file", {"path": str(link)})])[0])


# ----------------------------------------------------------------------------------------------------------
# The grep side channel: list_sessions matched grep on outside heads and counted only matching rows


def test_grep_on_the_listing_tells_nothing_about_an_outside_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    day = home / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    shutil.copy(FIX / "multi_step.rollout.jsonl", day / "rollout-2026-11-30T17-58-57-01a22d9c-2643-7350-8a76-f18f2f46ae21.jsonl")
    config = ServerConfig(codex_home=home)
    probes = ([{"grep": g} for g in ("C", "CA", "CANARY", CANARY, "0badc0de", "zzz")] + [{}, {"archived": True}]
              + [{"text": t} for t in ("CANARY", CANARY, "calc.py")])
    without = [ok_payload(r) for r in calls(config, [("agent_transcript_list_sessions", p) for p in probes])]
    secret = outside_copy(tmp_path / "outside" / "s.jsonl")
    (day / f"rollout-2026-11-30T18-00-00-{OUTSIDE_ID}.jsonl").symlink_to(secret)
    with_link = [ok_payload(r) for r in calls(config, [("agent_transcript_list_sessions", p) for p in probes])]
    assert with_link == without  # answers identical whatever the outside file holds: nothing to probe
    assert not any(leaks(r, str(secret)) for r in with_link)


# ----------------------------------------------------------------------------------------------------------
# Disclosure in errors: /proc/self/cwd named the server's cwd, /proc/self/exe the interpreter…


PROC_PATHS = ["/proc/self/cwd", "/proc/self/exe", "/proc/self/root", "/proc/self/fd/0", "/proc/self/fd/1",
              "/proc/self/environ", "/proc/1/cwd", "/proc/self/cwd/pyproject.toml", "/dev/stdin"]


@pytest.mark.parametrize("allow_any", [False, True], ids=["roots", "allow-any-path"])
def test_errors_on_proc_paths_name_only_the_path_given(tmp_path: Path, allow_any: bool) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "cwd-link.jsonl").symlink_to("/proc/self/cwd")
    (root / "exe-link.jsonl").symlink_to("/proc/self/exe")
    given = [*PROC_PATHS, str(root / "cwd-link.jsonl"), str(root / "exe-link.jsonl")]
    config = ServerConfig(allow_roots=(root,), allow_any_path=allow_any)
    batch = [(tool, {"path": p}) for p in given
             for tool in ("agent_transcript_read_file", "agent_transcript_inspect_file")]
    secrets = {os.getcwd(), os.path.realpath(sys.executable)}
    for p in given:
        try:
            real = os.path.realpath(p)
        except OSError:  # /proc/1/cwd: not ours to follow
            continue
        if real != p:
            secrets.add(real)
    for (_, args), result in zip(batch, calls(config, batch)):
        code, message = error_of(result)
        # (with --allow-any-path a link to /proc/self/exe leads to the interpreter, a file but no transcript)
        assert code in {"outside_allowed_roots", "not_a_file", "unsupported_format"}, (args, code)
        assert args["path"] in message
        named = [s for s in secrets if s and s not in args["path"] and s in message]
        assert not named, f"{args['path']}: the message names {named}: {message}"


# ----------------------------------------------------------------------------------------------------------
# Echoed undecoded content: info.lines.unknown_types repeated the type string of a line that did not decode


def test_an_undecoded_type_string_never_reaches_a_result(tmp_path: Path) -> None:
    key = "sk-live-51HxYzAbC0123456789deadbeef"
    path = tmp_path / "s.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(FIXTURE.read_text(encoding="utf-8"))
        fh.write(json.dumps({"timestamp": "2026-11-30T17:58:59.000Z", "type": key, "payload": {"x": 1}}) + "\n")
        fh.write(json.dumps({"timestamp": "2026-11-30T17:58:59.000Z", "type": "future_record", "payload": {}}) + "\n")
    config = ServerConfig(allow_roots=(tmp_path,))
    results = calls(config, [
        ("agent_transcript_inspect_file", {"path": str(path)}),
        ("agent_transcript_read_file", {"path": str(path), "projection": "timeline"}),
        ("agent_transcript_search_file", {"path": str(path), "query": "sk-live"}),
    ])
    for result in results:
        assert key not in json.dumps(result) and "51HxYz" not in json.dumps(result)
    types = ok_payload(results[0])["info"]["lines"]["unknown_types"]
    assert types == {"(not a type name)": 1, "future_record": 1}  # a real type name is still shown
