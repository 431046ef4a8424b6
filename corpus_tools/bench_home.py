"""A ``$CODEX_HOME`` of N sessions and about M MB for the search and listing benchmarks.

Each session is one of the source rollouts (``bench_run.workload_source``: the real Codex recordings of
``../shared/corpus`` when present, else ``fixtures/codex_home``) under a fresh id, start time (spread over
60 days) and one of 20 project directories, filed where Codex files it (``sessions/YYYY/MM/DD/``, one in
twenty under ``archived_sessions/``, one in twenty-five compressed ``.jsonl.zst``). Sizes follow a
long-tailed spread, as real homes do (most sessions small, a few very large), scaled so the home holds
about ``total_mb``: a session is grown by repeating its own middle lines, with call ids made unique per
copy so the reader pairs each call with its own output.
"""

from __future__ import annotations

import random
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import zstandard

_CALL = re.compile(rb'"call_(?!id")')


def _template(path: Path) -> tuple[str, bytes] | None:
    data = path.read_bytes()
    first = data.split(b"\n", 1)[0]
    try:
        head = orjson.loads(first)
        sid = head["payload"]["id"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None
    return (sid, data) if isinstance(sid, str) and sid else None


def _grow(data: bytes, target: int) -> bytes:
    lines = data.split(b"\n")
    if target <= len(data) or len(lines) < 6:
        return data
    third = len(lines) // 3
    head, middle, tail = lines[:third], [ln for ln in lines[third:2 * third] if ln], lines[2 * third:]
    out = [b"\n".join(head)]
    size = len(out[0])
    copy = 0
    body_len = sum(len(x) + 1 for x in middle) or 1
    while size + body_len < target:
        tag = b"_g%d_" % copy
        chunk = b"\n".join(_CALL.sub(b'"call' + tag, ln) for ln in middle)
        out.append(chunk)
        size += len(chunk) + 1
        copy += 1
    out.append(b"\n".join(tail))
    return b"\n".join(out)


def place_session(home: Path, i: int, when: datetime, new_id: str, text: bytes, zc: zstandard.ZstdCompressor,
                  compress: bool = True) -> int:
    """File session ``i`` where Codex files it (one in twenty archived, one in twenty-five compressed
    when ``compress``); returns its size on disk."""
    name = f"rollout-{when:%Y-%m-%dT%H-%M-%S}-{new_id}.jsonl"
    if i % 20 == 7:
        path = home / "archived_sessions" / name
    else:
        path = home / "sessions" / f"{when:%Y}" / f"{when:%m}" / f"{when:%d}" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if i % 25 == 3 and compress:
        path = path.with_name(path.name + ".zst")
        path.write_bytes(zc.compress(text))
    else:
        path.write_bytes(text)
    return path.stat().st_size


def build_home(home: Path, sources: list[Path], sessions: int, total_mb: float | None, seed: int = 7) -> int:
    """Write the home; returns its size in bytes. ``total_mb`` None keeps every session as recorded."""
    rng = random.Random(seed)
    templates = [t for t in (_template(p) for p in sources) if t is not None]
    if not templates:
        raise SystemExit("no source rollout with a session id to build a home from")
    if total_mb is not None:
        weights = [rng.paretovariate(1.2) for _ in range(sessions)]
        scale = total_mb * 1024 * 1024 / sum(weights)
        sizes = [int(w * scale) for w in weights]
    else:
        sizes = [0] * sessions
    start = datetime(2026, 10, 1, tzinfo=UTC)
    zc = zstandard.ZstdCompressor(level=3)
    total = 0
    index = []
    for i in range(sessions):
        old_id, data = templates[i % len(templates)]
        new_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        when = start + timedelta(seconds=rng.randrange(60 * 86400))
        text = data.replace(old_id.encode(), new_id.encode())
        text = text.replace(b"/home/user/project", f"/home/user/proj{i % 20:02d}".encode())
        text = _grow(text, sizes[i])
        total += place_session(home, i, when, new_id, text, zc, compress=len(text) < 4 << 20)
        if i % 10 == 0:
            index.append(f'{{"id":"{new_id}","thread_name":"bench session {i}","updated_at":"2026-12-01T00:00:00Z"}}')
    (home / "session_index.jsonl").write_text("\n".join(index) + "\n")
    return total
