"""Benchmark: how fast the MCP server is ready, and how much a read returns at the default budget.

Two figures, both measured through the real server process (``transcript-reader mcp``
over stdio, raw JSON-RPC lines as Codex sends them), so the same script measures any version of the server:

- ``latency``: wall time from spawning the server to the answer of ``initialize``, and to the answer of
  ``tools/list``, in ``--runs`` fresh processes (each a cold interpreter; the OS file cache is warm after
  the first run). Printed next to the floor: a bare ``python -c pass`` start.
- ``budget``: items an ``agent_transcript_read_file`` call returns with the origin's defaults (maxChars
  24,000, maxItems 100, maxCharsPerItem 4,000) for the projections ``timeline`` and ``handoff``, on the
  public Codex Desktop rollouts of ``../shared/corpus/public`` (or the files given), next to the count the
  origin's windowing gives for the same session (:func:`origin_count`, a re-statement of peers.md §1.5/§1.13).

    python -m corpus_tools.bench_mcp latency [--runs 10]
    python -m corpus_tools.bench_mcp budget [FILE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = ROOT.parent / "shared" / "corpus" / "public"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "codex-mcp-client", "title": "Codex", "version": "0.171.0"}}}


def _server(home: Path, roots: list[Path]) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "transcript_reader", "mcp"]
    for r in roots:
        args += ["--allow-root", str(r)]
    env = {**os.environ, "CODEX_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, cwd=str(ROOT))


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _answer(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the server exited before answering request {request_id}")
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            return message


def _close(proc: subprocess.Popen[bytes]) -> None:
    from transcript_reader.mcp.worker import close_and_wait

    close_and_wait(proc)


def latency(runs: int) -> dict[str, float]:
    """Median seconds to ``initialize`` and to ``tools/list`` over ``runs`` fresh server processes."""
    init, listed, floor = [], [], []
    with tempfile.TemporaryDirectory() as home:
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            proc = _server(Path(home), [])
            _send(proc, INIT)
            _answer(proc, 0)
            init.append(time.perf_counter() - t0)
            _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
            _answer(proc, 1)
            listed.append(time.perf_counter() - t0)
            _close(proc)
    return {"initialize_s": statistics.median(init), "tools_list_s": statistics.median(listed),
            "python_floor_s": statistics.median(floor), "initialize_min_s": min(init),
            "initialize_max_s": max(init)}


def desktop_rollouts() -> list[Path]:
    """The public corpus rows its manifest calls real Codex Desktop rollouts."""
    manifest = PUBLIC / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    out = []
    for row in manifest.read_text(encoding="utf-8").splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) > 7 and cols[7].startswith("real Codex Desktop rollout"):
            out.append(PUBLIC / cols[0])
    return out


def read_counts(paths: list[Path], projections: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Items each projection returns at the default budget, through one server process."""
    out: dict[str, dict[str, Any]] = {}
    roots = sorted({p.parent for p in paths})
    with tempfile.TemporaryDirectory() as home:
        proc = _server(Path(home), roots)
        try:
            _send(proc, INIT)
            _answer(proc, 0)
            _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            n = 1
            for path in paths:
                row: dict[str, Any] = {}
                for projection in projections:
                    _send(proc, {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {
                        "name": "agent_transcript_read_file",
                        "arguments": {"path": str(path), "projection": projection}}})
                    result = _answer(proc, n)["result"]
                    n += 1
                    payload = json.loads(result["content"][0]["text"])
                    if result.get("isError"):
                        row[projection] = {"error": payload.get("error")}
                        continue
                    stats = payload.get("stats") or {}
                    row[projection] = {
                        "items": len(payload.get("items") or ()),
                        "of": stats.get("total_items", stats.get("totalEvents")),
                        "truncated": payload.get("truncated"),
                        "chars": len(result["content"][0]["text"]),
                        "kinds": sorted({i.get("kind") for i in payload.get("items") or ()}),
                    }
                row["origin_timeline"] = origin_count(path)
                out[path.name] = row
        finally:
            _close(proc)
    return out


# The origin's reading, re-stated from peers.md §1.5 and §1.13 (its timeline: user/assistant messages,
# tool reads and writes, shell commands and patches; raw outputs hidden; outputs never paired, so a shell
# item is its command and cwd alone). Only the size of each item matters here: the windowing keeps the
# first items whose joined text fits in maxChars, at most maxItems, each text cut to maxCharsPerItem.

_SHELL_NAMES = {"exec_command", "Bash", "shell", "shell_command", "local_shell"}
_WRITE_NAMES = {"apply_patch", "Write", "Edit", "MultiEdit"}


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if isinstance(block, dict) and block.get("type") in ("input_text", "output_text", "text"):
            parts.append(str(block.get("text") or ""))
    return "\n".join(parts)


def _origin_items(path: Path) -> list[str]:
    items: list[str] = []
    last: tuple[str, str] | None = None
    with open(path, "rb") as fh:
        for raw in fh:
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(rec, dict):
                continue
            p: dict[str, Any] = rec["payload"] if isinstance(rec.get("payload"), dict) else rec
            t = rec.get("type")
            pt = p.get("type")
            text = None
            kind = ""
            if t == "event_msg" and pt in ("user_message", "agent_message"):
                kind, text = pt, str(p.get("message") or "")
            elif pt == "message" and p.get("role") in ("user", "assistant"):
                kind, text = p["role"], _texts(p.get("content"))
            elif pt in ("function_call", "custom_tool_call"):
                name = str(p.get("name") or "")
                args = p.get("arguments") if pt == "function_call" else p.get("input")
                try:
                    parsed = json.loads(args) if isinstance(args, str) and pt == "function_call" else {}
                except ValueError:
                    parsed = {}
                parsed = parsed if isinstance(parsed, dict) else {}
                if name in _SHELL_NAMES or "cmd" in parsed or "command" in parsed:
                    cmd = parsed.get("cmd", parsed.get("command", args))
                    kind = "shell"
                    text = " ".join([str(parsed.get("workdir") or ""), json.dumps(cmd) if not isinstance(cmd, str)
                                     else cmd]).strip()
                elif name in _WRITE_NAMES or any(w in name for w in ("write", "edit", "delete")):
                    kind, text = "write", f"{name} {args if isinstance(args, str) else ''}"
                else:
                    kind, text = "read", f"{name} {args if isinstance(args, str) else ''}"
            if text is None:
                continue
            key = (kind, text)
            if key == last:  # the adjacent event_msg/response_item twin (§1.8)
                continue
            last = key
            items.append(text)
    return items


def origin_count(path: Path, max_items: int = 100, max_chars: int = 24_000, per_item: int = 4_000) -> int:
    kept = used = 0
    for text in _origin_items(path):
        size = min(len(text), per_item)
        if kept >= max_items or used + size > max_chars:
            break
        kept += 1
        used += size
    return kept


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m corpus_tools.bench_mcp", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    lat = sub.add_parser("latency", help="initialize / tools/list latency of fresh server processes")
    lat.add_argument("--runs", type=int, default=10)
    bud = sub.add_parser("budget", help="items a default read returns on the public Desktop rollouts")
    bud.add_argument("files", nargs="*", type=Path)
    args = ap.parse_args(argv)
    if args.what == "latency":
        print(json.dumps(latency(args.runs), indent=2))
        return 0
    files = [p.resolve() for p in args.files] or desktop_rollouts()
    if not files:
        print("no Desktop rollouts found (../shared/corpus/public is absent); give files", file=sys.stderr)
        return 1
    print(json.dumps(read_counts(files, ("timeline", "handoff")), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
