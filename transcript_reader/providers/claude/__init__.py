"""The Claude Code provider: session files under ``~/.claude/projects/<slug>/*.jsonl`` (and
``$CLAUDE_CONFIG_DIR/projects``), read into the same decode records as Codex (``decode.py``, ``tools.py``)."""

from __future__ import annotations

from typing import Any

#: Keys only a Claude Code line carries (with a ``type`` Codex never writes at the top level).
_LINE_TYPES = frozenset({"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation",
                         "attachment", "progress"})
_KEYS = ("sessionId", "uuid", "leafUuid", "parentUuid")


def is_claude_line(obj: Any) -> bool:
    """True when one decoded JSON line is in Claude Code's shape: a known ``type`` and one of the
    session/uuid keys every such line carries (Codex lines have ``payload``/``msg``/``item``, never these)."""
    return (isinstance(obj, dict) and obj.get("type") in _LINE_TYPES and "payload" not in obj
            and any(k in obj for k in _KEYS))
