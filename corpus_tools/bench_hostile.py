"""Peak memory of the reader on hostile files (target: under 200 MB each).

Builds four files in a temporary directory, runs ``inspect`` and ``read --tail 100`` on each in a fresh
process (the CLI, as a user runs it), reports each one's peak RSS (``wait4`` rusage), wall time and
outcome, then removes the files:

- a ``.jsonl.zst`` of a few MB that decompresses to one 2 GiB line (a decompression bomb);
- 2,000 MiB of NUL bytes (a sparse file: no line end anywhere);
- a 300 MB TypeScript CLI ``.json`` document (pretty-printed, ~30,000 items);
- a 500 MB rollout whose second line is one 500 MB line;
- empty lines (300 and 150 MiB), prompts with bad characters (100 and 50 MiB), direct calls that all
  share one call id (100 and 50 MiB): each at two sizes, so that time linear in the input shows as the
  same seconds per MiB (the last column).

Before bounded reading: 4.3 GB, 4.2 GB, 1.2 GB and 1.5 GB respectively.

    python -m corpus_tools.bench_hostile            # about a minute; needs ~1 GB of free disk
    python -m corpus_tools.bench_hostile --only nul,zst
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import zstandard

MIB = 1 << 20
_TS = "2026-01-01T00:00:00.000Z"


def _meta_line(sid: str) -> bytes:
    return orjson.dumps({"timestamp": _TS, "type": "session_meta", "payload": {
        "id": sid, "timestamp": _TS, "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.171.0",
        "source": "cli"}}) + b"\n"


def _user_line(text: str) -> bytes:
    return orjson.dumps({"timestamp": _TS, "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}) + b"\n"


def _huge_line(write: Callable[[bytes], object], size: int) -> None:
    """One rollout line of ``size`` bytes (a user message whose text is ``size`` bytes of 'A')."""
    head = _user_line("").rstrip(b"\n")
    cut = head.index(b'"text":"') + len(b'"text":"')
    write(head[:cut])
    chunk = b"A" * MIB
    left = size
    while left > 0:
        write(chunk[:min(left, MIB)])
        left -= MIB
    write(head[cut:] + b"\n")


def build_zst_bomb(path: Path, line_mib: int = 2048) -> None:
    with open(path, "wb") as raw, zstandard.ZstdCompressor(level=1).stream_writer(raw) as w:
        w.write(_meta_line("01a22d9c-0000-7000-8000-00000000b0b1"))
        _huge_line(w.write, line_mib * MIB)
        w.write(_user_line("after the bomb"))


def build_nul(path: Path, mib: int = 2000) -> None:
    with open(path, "wb") as fh:
        fh.truncate(mib * MIB)


def build_single_line(path: Path, line_mib: int = 500) -> None:
    with open(path, "wb") as fh:
        fh.write(_meta_line("01a22d9c-0000-7000-8000-00000000b0b2"))
        _huge_line(fh.write, line_mib * MIB)
        fh.write(_user_line("after the long line"))


def build_ts_json(path: Path, size: int = 300 * MIB) -> None:
    session = {"timestamp": _TS, "id": "644b77d0-0000-4000-8000-00000000b0b3", "instructions": ""}
    out = "x" * 9000
    with open(path, "wb") as fh:
        fh.write(b'{\n  "session": ' + json.dumps(session).encode() + b',\n  "items": [\n')
        written, i = 0, 0
        while written < size:
            items = [
                {"role": "user", "content": [{"type": "input_text", "text": f"step {i}"}], "type": "message"},
                {"type": "function_call", "name": "shell", "arguments": json.dumps({"command": ["echo", str(i)]}),
                 "call_id": f"c{i}"},
                {"type": "function_call_output", "call_id": f"c{i}",
                 "output": json.dumps({"output": out, "metadata": {"exit_code": 0, "duration_seconds": 0.1}})},
            ]
            for item in items:
                blob = (b",\n" if written else b"") + b"    " + json.dumps(item).encode()
                fh.write(blob)
                written += len(blob)
            i += 1
        fh.write(b"\n  ]\n}\n")


def build_blank(path: Path, mib: int = 300) -> None:
    """A prompt, ``mib`` MiB of empty lines, a prompt: empty lines cost about their bytes."""
    with open(path, "wb") as fh:
        fh.write(_meta_line("01a22d9c-0000-7000-8000-00000000b0b4") + _user_line("before the blank lines"))
        chunk = b"\n" * MIB
        for _ in range(mib):
            fh.write(chunk)
        fh.write(_user_line("after the blank lines"))


def build_bad_chars(path: Path, mib: int = 100) -> None:
    """``mib`` MiB of prompts, each with bad characters (an escaped lone surrogate, overlong UTF-8, CESU-8):
    each line is read, its bad characters replaced, with a notice."""
    bad = [b"\\ud83d", b"\xc0\xaf", b"\xed\xa0\xbd\xed\xb8\x80"]
    with open(path, "wb") as fh:
        fh.write(_meta_line("01a22d9c-0000-7000-8000-00000000b0b5"))
        written, i = 0, 0
        while written < mib * MIB:
            line = _user_line(f"prompt {i} BAD " + "x" * 200).replace(b"BAD", bad[i % 3])
            fh.write(line)
            written += len(line)
            i += 1


def build_shared_ids(path: Path, mib: int = 100) -> None:
    """``mib`` MiB of direct calls that all share one call id, outputs following in turns of 100 calls:
    pairing stays linear (order decides; the ambiguity notice names a few lines, not all)."""
    with open(path, "wb") as fh:
        fh.write(_meta_line("01a22d9c-0000-7000-8000-00000000b0b6"))
        written, turn = 0, 0
        while written < mib * MIB:
            block = [orjson.dumps({"timestamp": _TS, "type": "event_msg", "payload": {
                "type": "task_started", "turn_id": f"t{turn}"}}) + b"\n"]
            for i in range(100):
                block.append(orjson.dumps({"timestamp": _TS, "type": "response_item", "payload": {
                    "type": "function_call", "name": "exec_command", "call_id": "same",
                    "arguments": orjson.dumps({"cmd": f"echo {turn}.{i}"}).decode()}}) + b"\n")
            for i in range(100):
                block.append(orjson.dumps({"timestamp": _TS, "type": "response_item", "payload": {
                    "type": "function_call_output", "call_id": "same",
                    "output": f"Exit code: 0\nWall time: 0.1 seconds\nOutput:\n{turn}.{i}\n"}}) + b"\n")
            data = b"".join(block)
            fh.write(data)
            written += len(data)
            turn += 1


def _half(build: Callable[..., None], mib: int) -> Callable[[Path], None]:
    return lambda path: build(path, mib)


FILES: dict[str, tuple[str, Callable[[Path], None]]] = {
    "zst": ("bomb.jsonl.zst", build_zst_bomb),
    "nul": ("nul.jsonl", build_nul),
    "ts": ("ts_cli.json", build_ts_json),
    "line": ("single_line.jsonl", build_single_line),
    # each hostile line kind at two sizes: time linear in the input shows as equal seconds per MiB
    "blank": ("blank_300.jsonl", build_blank),
    "blank_half": ("blank_150.jsonl", _half(build_blank, 150)),
    "badchar": ("bad_chars_100.jsonl", build_bad_chars),
    "badchar_half": ("bad_chars_50.jsonl", _half(build_bad_chars, 50)),
    "ids": ("shared_ids_100.jsonl", build_shared_ids),
    "ids_half": ("shared_ids_50.jsonl", _half(build_shared_ids, 50)),
}


def _peak_rss(args: list[str]) -> tuple[float, float, int, str]:
    """Run one CLI process and read its own peak RSS (``wait4``: per child, not a running maximum)."""
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "transcript_reader", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    # drain the pipes ourselves, then reap the child with wait4 to get its rusage
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    lines = (err or out).decode("utf-8", "replace").strip().splitlines()
    summary = lines[-1] if lines else ""
    if out.startswith(b"{"):
        try:
            doc = json.loads(out)
        except ValueError:
            doc = {}
        if doc.get("ok") is False:
            summary = f"error {doc['error']['code']}: {doc['error']['message'].split(': ', 1)[-1]}"
        elif "items" in doc:
            summary = f"{len(doc['items'])} items kept of {doc.get('stats', {}).get('total_items', '?')}"
        else:
            acc = (doc.get("info") or doc).get("lines") or {}
            summary = (f"lines={acc.get('lines')} decoded={acc.get('decoded')} "
                       f"unreadable={acc.get('unreadable')}")
    return usage.ru_maxrss / 1024, wall, proc.returncode, summary[:110]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(FILES), help="comma-separated subset of " + ",".join(FILES))
    ap.add_argument("--dir", type=Path, default=None, help="where to build the files (default: a temp dir)")
    args = ap.parse_args(argv)
    chosen = [k for k in args.only.split(",") if k]
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="bench-hostile-", dir=args.dir) as tmp:
        print(f"{'file':<22} {'size':>10} {'command':<16} {'peak RSS':>9} {'wall':>7} {'rc':>3}  outcome")
        for key in chosen:
            name, build = FILES[key]
            path = Path(tmp) / name
            t0 = time.monotonic()
            build(path)
            built = time.monotonic() - t0
            size = path.stat().st_size
            for cmd in (["inspect", str(path), "--json"], ["read", str(path), "--tail", "100", "--json"]):
                rss, wall, rc, summary = _peak_rss(cmd)
                worst = max(worst, rss)
                label = " ".join(cmd[:1] + cmd[2:-1])
                print(f"{name:<22} {size / MIB:>8.0f}Mi {label:<16} {rss:>7.1f}MB {wall:>6.1f}s {rc:>3}  {summary}"
                      f"  ({wall / max(size / MIB, 1e-9):.3f} s/MiB)")
            path.unlink()
            print(f"{'':<22} (built in {built:.1f}s, removed)")
    print(f"worst peak RSS: {worst:.1f} MB (target < 200 MB)")
    return 0 if worst < 200 else 1


if __name__ == "__main__":
    raise SystemExit(main())
