"""Conformance of a Claude Code recording: the reader's reading of the session file(s) must match the
``--output-format stream-json`` stream of the same run, which the CLI prints itself and which this module
reads on its own (no library code), as the independent witness. What is compared, in order:

- commands that ran, with their exit codes (transcript: shell commands with ``executed == yes``; stream:
  ``Bash`` tool uses whose result is not a refusal; exit code N from an error result ``Exit code N``, 0 from
  a result that is not an error);
- changed files with their +/- counts (stream: the ``structuredPatch`` of each Edit/Write result, or the
  written content of a new file);
- the final answer (the stream's ``result`` event) and the token usage (its ``usage``: input + cache
  writes + cache reads, cache reads, output).

A sub-agent's events carry ``parent_tool_use_id`` in the stream and live in their own file
(``subagents/agent-ID.jsonl``); each agent file is compared with the stream's events of its tool use.
A resumed session has one stream per run (``NAME.stream.jsonl``, ``NAME.stream.turn2.jsonl``…), put end
to end.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_EXIT = re.compile(r"^(?:Error: )?Exit code (-?\d+)\b")
_REFUSED = re.compile(r"needs approval|haven't granted it yet|doesn't want to|<tool_use_error>|"
                      r"\[Request interrupted by user for tool use\]")
PATCH_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")

Command = tuple[str, int | None]
FileCount = tuple[str, int, int]


@dataclass
class StreamFacts:
    commands: dict[str | None, list[Command]] = field(default_factory=dict)  # by parent tool use (None: main)
    files: dict[str | None, list[FileCount]] = field(default_factory=dict)
    finals: list[str | None] = field(default_factory=list)
    usage: list[int] = field(default_factory=lambda: [0, 0, 0])  # input (all), cache reads, output
    agent_tool_uses: list[str] = field(default_factory=list)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _lines(text: str) -> int:
    return 0 if not text else text.count("\n") + (0 if text.endswith("\n") else 1)


def read_streams(paths: list[Path]) -> StreamFacts:
    facts = StreamFacts()
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for path in paths:
        for raw in path.read_text(encoding="utf-8").splitlines():
            ev = json.loads(raw)
            parent = ev.get("parent_tool_use_id")
            if ev.get("type") == "result":
                # a run that ended in error (``error_max_turns``…) gave no answer, whatever its text
                facts.finals.append(None if ev.get("is_error") is True else ev.get("result") or "")
                u = ev.get("usage") or {}
                facts.usage[0] += (u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
                                   + u.get("cache_read_input_tokens", 0))
                facts.usage[1] += u.get("cache_read_input_tokens", 0)
                facts.usage[2] += u.get("output_tokens", 0)
            msg = ev.get("message") if isinstance(ev.get("message"), dict) else {}
            for b in msg.get("content") or [] if isinstance(msg.get("content"), list) else []:
                if b.get("type") == "tool_use":
                    calls[b["id"]] = (b["name"], b.get("input") or {})
                    if b["name"] in ("Task", "Agent"):
                        facts.agent_tool_uses.append(b["id"])
                elif b.get("type") == "tool_result" and b.get("tool_use_id") in calls:
                    name, inp = calls[b["tool_use_id"]]
                    text = _text(b.get("content"))
                    error = b.get("is_error") is True
                    if error and _REFUSED.search(text[:400]):
                        continue  # did not run
                    if name == "Bash":
                        m = _EXIT.match(text)
                        code = int(m.group(1)) if m else (None if error else 0)
                        facts.commands.setdefault(parent, []).append((inp.get("command", ""), code))
                    elif name in PATCH_TOOLS and not error:
                        facts.files.setdefault(parent, []).append(_file_count(inp, ev.get("tool_use_result")))
    return facts


def _file_count(inp: dict[str, Any], tur: Any) -> FileCount:
    tur = tur if isinstance(tur, dict) else {}
    path = inp.get("file_path") or inp.get("notebook_path") or tur.get("filePath") or ""
    if tur.get("type") == "create":
        return path, _lines(inp.get("content", "")), 0
    lines = [x for h in tur.get("structuredPatch") or [] for x in h.get("lines", [])]
    return path, sum(x.startswith("+") for x in lines), sum(x.startswith("-") for x in lines)


@dataclass
class TranscriptFacts:
    commands: list[Command]
    files: list[FileCount]
    final: str | None
    usage: list[int]


def read_transcript(path: Path) -> TranscriptFacts:
    """The library's reading of one session file."""
    from transcript_reader.api import Transcript
    from transcript_reader.model import AssistantMessage, Executed, PatchItem, ShellCommand, TokenUsage

    t = Transcript(path)
    commands: list[Command] = []
    files: list[FileCount] = []
    final = None
    for it in t.items():
        if isinstance(it, ShellCommand) and it.executed is Executed.YES:
            commands.append((it.command, it.exit_code))
        elif isinstance(it, PatchItem) and it.executed is Executed.YES and it.success:
            files.extend((f.path, f.added, f.removed) for f in it.files)
        elif isinstance(it, AssistantMessage) and it.final:
            final = it.text
    tok = t.info().tokens or TokenUsage()  # no usage recorded: compared as zeros against the stream's
    return TranscriptFacts(commands, files, final, [tok.input, tok.cached_input, tok.output])


@dataclass
class ClaudeConformance:
    name: str
    problems: list[str] = field(default_factory=list)
    checked: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_recording(root: Path, name: str) -> ClaudeConformance:
    result = json.loads((root / f"{name}.result.json").read_text())
    conf = ClaudeConformance(name)
    streams = sorted(root.glob(f"{name}.stream*.jsonl"), key=lambda p: (p.name.count("turn"), p.name))
    facts = read_streams(streams)
    main = root / result["transcript"]
    mine = read_transcript(main)
    conf.checked = {"commands": mine.commands, "files": mine.files, "final": mine.final, "usage": mine.usage}
    _same(conf, "commands", mine.commands, facts.commands.get(None, []))
    _same(conf, "files", mine.files, facts.files.get(None, []))
    _same(conf, "final answer", mine.final, facts.finals[-1] if facts.finals else None)
    _same(conf, "usage", mine.usage, facts.usage)
    agents = sorted(main.parent.glob(f"{main.stem}/subagents/agent-*.jsonl"))
    if len(agents) != len(facts.agent_tool_uses):
        conf.problems.append(f"{len(agents)} sub-agent files, {len(facts.agent_tool_uses)} Task/Agent calls")
    for tool_use in facts.agent_tool_uses:
        meta = [a for a in agents if _meta_tool_use(a) == tool_use]
        if len(meta) != 1:
            conf.problems.append(f"no sub-agent file for tool use {tool_use}")
            continue
        sub = read_transcript(meta[0])
        conf.checked.setdefault("agents", {})[tool_use] = sub.commands
        _same(conf, f"sub-agent {tool_use} commands", sub.commands, facts.commands.get(tool_use, []))
        _same(conf, f"sub-agent {tool_use} files", sub.files, facts.files.get(tool_use, []))
    return conf


def _meta_tool_use(agent_file: Path) -> str | None:
    meta = agent_file.with_suffix(".meta.json")
    try:
        return json.loads(meta.read_text()).get("toolUseId")
    except (OSError, ValueError):
        return None


def _same(conf: ClaudeConformance, what: str, mine: Any, theirs: Any) -> None:
    if mine != theirs:
        conf.problems.append(f"{what}: transcript {mine!r} != stream {theirs!r}")
