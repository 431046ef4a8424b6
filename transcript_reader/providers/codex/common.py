"""Wire shapes shared by every era that writes Responses API items: ``response_item`` payloads (0.40+),
bare items (early Rust 0.20/0.29) and the TypeScript CLI's ``items`` list (0.1.x) are the same objects,
so they are decoded once here. Also the text conventions of call outputs (the JSON ``metadata``
envelope, ``Exit code:``, ``Process exited with code``, ``Script completed`` headers).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from transcript_reader.providers.codex import refusals
from transcript_reader.providers.records import (
    DECODED,
    NOISE,
    UNKNOWN,
    UNKNOWN_COMMAND,
    Call,
    Decoded,
    Message,
    Meta,
    NoticeRec,
    Output,
    ReasoningRec,
    Record,
)

#: Response item types carried only for the model (opaque, encrypted or snapshots): known noise.
NOISE_ITEM_TYPES = frozenset(
    {"ghost_snapshot", "compaction", "compaction_summary", "additional_tools", "other"}
)


_from_argv: Callable[[tuple[str, ...]], str] | None = None


def command_from_argv(argv: tuple[str, ...]) -> str:
    """``exec_grammar.shell.command_from_argv``, imported at the first call: importing exec_grammar loads
    the analyzer and its parsers, which a reading of messages only (``final``) never needs. Kept once
    imported (an import statement run per call costs more than the call)."""
    global _from_argv
    if _from_argv is None:
        from exec_grammar.shell import command_from_argv as from_argv

        _from_argv = from_argv
    return _from_argv(argv)


_CONTEXT_TAG = re.compile(r"^\s*<([A-Za-z_][\w-]*)[\s>]")
#: user-role messages that Codex (not the person) wrote.
CONTEXT_TAGS = frozenset(
    {"environment_context", "user_instructions", "turn_aborted", "skills_instructions", "INSTRUCTIONS",
     "user_shell_command", "recommended_plugins", "permissions", "collaboration_mode", "personality",
     "multi_agent_mode", "apps_instructions", "subagent_notification", "model_switch", "realtime",
     "instructions", "developer_instructions", "skill", "plugins", "memory", "goal"}
)


def context_label(role: str, text: str) -> str | None:
    """The context label of a harness-injected message, or None for what a person typed."""
    if role in ("developer", "system"):
        return role
    if role != "user":
        return None
    if text.startswith("# AGENTS.md instructions") or text.startswith("# AGENTS.md"):
        return "agents_md"
    m = _CONTEXT_TAG.match(text)
    if m and (m.group(1) in CONTEXT_TAGS or text.rstrip().endswith(f"</{m.group(1)}>")):
        return m.group(1)
    return None


_ENV_CWD = re.compile(r"<cwd>(.*?)</cwd>", re.S)


def environment_cwd(text: str) -> str | None:
    """The cwd an ``<environment_context>`` message names (early Rust files record it nowhere else)."""
    if not text.lstrip().startswith("<environment_context"):
        return None
    m = _ENV_CWD.search(text)
    return m.group(1).strip() or None if m else None


def content_text(content: Any) -> tuple[str, tuple[str, ...], bool, str]:
    """(text, images, has_refusal, refusal_text) of a message ``content`` (string or parts)."""
    if isinstance(content, str):
        return content, (), False, ""
    if not isinstance(content, list):
        return "", (), False, ""
    texts: list[str] = []
    images: list[str] = []
    refusal = False
    refusal_text: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        t = part.get("type")
        if t == "refusal":
            # a refusal-typed part declines by its presence, even with an empty text
            refusal = True
            r = part.get("refusal")
            if isinstance(r, str):
                refusal_text.append(r)
            continue
        txt = part.get("text")
        if isinstance(txt, str):
            texts.append(txt)
        elif t in ("input_image", "image", "local_image"):
            url = part.get("image_url") or part.get("path")
            if isinstance(url, str) and url:  # a part with a null url is no image (public stage0 fixture)
                images.append(_image_ref(url))
    return "".join(texts) if len(texts) <= 1 else "\n".join(texts), tuple(images), refusal, "".join(refusal_text)


def _image_ref(url: str) -> str:
    if url.startswith("data:"):
        return url[: url.find(",")] + ",…" if "," in url else "data:…"
    return url


def output_text(output: Any) -> tuple[str, bool | None]:
    """A call output as text: a string, a content-item array, or an object ``{content, success}``."""
    if isinstance(output, str):
        return output, None
    if isinstance(output, list):
        parts: list[str] = []
        for part in output:
            if isinstance(part, dict):
                t = part.get("text")
                if isinstance(t, str):
                    parts.append(t)
                elif part.get("type") in ("input_image", "image", "inputImage"):  # camelCase: dynamic tools
                    parts.append("[image]")
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts), None
    if isinstance(output, dict):
        if isinstance(output.get("text"), str):  # a single content item (public stage0 fixture)
            return output["text"], None
        success = output.get("success")
        text, _ = output_text(output.get("content"))
        return text, success if isinstance(success, bool) else None
    if output is None:
        return "", None
    return str(output), None


@dataclass(slots=True)
class ParsedOutput:
    body: str
    exit_code: int | None = None
    duration_s: float | None = None
    running_session: str | None = None
    rejected: bool = False
    script_status: str | None = None  # completed, failed, terminated, running
    script_error: str | None = None
    cell_id: str | None = None
    #: Codex's own word on the call instead of its output (``refusals``: refused, aborted, timed_out,
    #: failed); ``rejected`` is the ``refused`` verdict
    verdict: str | None = None


_EXIT_HDR = re.compile(r"^Exit code: (-?\d+)\nWall time: ([\d.]+) seconds\nOutput:\n", re.S)
_CHUNK_HDR = re.compile(
    r"^(?:Chunk ID: \S+\n)?Wall time: ([\d.]+) seconds\n"
    r"(?:Process exited with code (-?\d+)|Process running with session ID (\S+))\n"
    r"(?:Original token count: \d+\n)?Output:\n?",
    re.S,
)
_SCRIPT_HDR = re.compile(
    r"^Script (completed|failed|terminated|running with cell ID (\S+))\n(?:Wall time:? [\d.]+ seconds\n)?"
    r"(?:(?:Final )?[Oo]utput:\n?)?",
    re.S,
)


#: How Codex ends the parent history it copies into a forked sub-agent's rollout: a synthetic output of
#: the ``spawn_agent`` call (codex-rs ``FORKED_SPAWN_AGENT_OUTPUT_MESSAGE``). What follows is the
#: sub-agent's own work.
FORK_HANDOFF_PREFIX = "You are the newly spawned agent. The prior conversation history was forked from"


def is_fork_handoff(text: str) -> bool:
    """Whether an output is the marker that ends the parent history replayed into a forked sub-agent."""
    return text.startswith(FORK_HANDOFF_PREFIX)


def parse_output(text: str) -> ParsedOutput:
    """Split a call output into its header figures and body (eras differ; see codex-formats.md §5)."""
    said = refusals.verdict(text)
    if said is not None:
        return ParsedOutput(body=text, rejected=said == refusals.REFUSED, verdict=said)
    if text.startswith("{") and '"metadata"' in text[:200] or text.startswith('{"output"'):
        try:
            env = orjson.loads(text)
        except orjson.JSONDecodeError:
            env = None
        if isinstance(env, dict) and "output" in env:
            meta = _d(env.get("metadata"))
            code = meta.get("exit_code")
            dur = meta.get("duration_seconds")
            body = env.get("output")
            return ParsedOutput(
                body=body if isinstance(body, str) else str(body),
                exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
                duration_s=float(dur) if isinstance(dur, int | float) and not isinstance(dur, bool) else None,
            )
    m = _EXIT_HDR.match(text)
    if m:
        return ParsedOutput(body=text[m.end():], exit_code=int(m.group(1)), duration_s=float(m.group(2)))
    m = _CHUNK_HDR.match(text)
    if m:
        return ParsedOutput(
            body=text[m.end():],
            exit_code=int(m.group(2)) if m.group(2) is not None else None,
            duration_s=float(m.group(1)),
            running_session=m.group(3),
        )
    m = _SCRIPT_HDR.match(text)
    if m:
        status = m.group(1)
        cell = m.group(2)
        body = text[m.end():]
        err = None
        if status == "failed":
            i = body.find("Script error:")
            if i >= 0:
                err = body[i + len("Script error:"):].strip()
        return ParsedOutput(
            body=body, script_status="running" if cell else status, script_error=err, cell_id=cell
        )
    return ParsedOutput(body=text)


def _json_args(arguments: Any) -> tuple[dict[str, Any] | None, str]:
    """Function-call ``arguments`` is a JSON-encoded string (tool_search_call: an object)."""
    if isinstance(arguments, dict):
        return arguments, orjson.dumps(arguments).decode()
    if isinstance(arguments, str):
        try:
            obj = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            try:
                # raw control characters inside a string (JSON forbids them; a hand-edited or re-encoded
                # transcript has them): still readable, so still the call's arguments
                obj = json.loads(arguments, strict=False)
            except (ValueError, RecursionError):
                return None, arguments
        return (obj if isinstance(obj, dict) else None), arguments
    return None, "" if arguments is None else str(arguments)


def _terminal(status: str | None) -> bool | None:
    """Success of a call complete on its own line: known only from a terminal status."""
    return {"completed": True, "failed": False, "incomplete": False}.get(status or "")


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def tool_name(payload: dict[str, Any]) -> str:
    name = payload.get("name")
    name = name if isinstance(name, str) else "?"
    ns = payload.get("namespace")
    if isinstance(ns, str) and ns and not name.startswith(ns.rstrip("_")):
        return ns.rstrip("_") + "__" + name
    return name


#: The function tools that run a shell command: a call to one is a command whatever its arguments say.
SHELL_TOOLS = frozenset({"shell", "container.exec", "local_shell", "shell_command", "exec_command"})


def call_from_function(name: str, arguments: Any, call_id: str | None, status: str | None) -> Call:
    """Classify a function_call by tool name (shell, shell_command, exec_command, write_stdin, …)."""
    args, raw = _json_args(arguments)
    a = args or {}
    cwd = _str(a.get("workdir")) or _str(a.get("cwd"))
    if name in ("shell", "container.exec", "local_shell"):
        cmd = a.get("command")
        if isinstance(cmd, list) and all(isinstance(x, str) for x in cmd):
            argv = tuple(cmd)
            if argv and argv[0] == "apply_patch" and len(argv) >= 2:
                # 0.20-0.40: apply_patch through the shell tool (corpus realcodex/0.40.0/multi_step)
                return Call(kind="patch", tool="apply_patch", call_id=call_id, patch_text=argv[1], cwd=cwd,
                            name=name, status=status)
            return Call(kind="shell", tool="shell", call_id=call_id, command=command_from_argv(argv), argv=argv,
                        cwd=cwd, name=name, status=status)
        if isinstance(cmd, str):
            return Call(kind="shell", tool="shell", call_id=call_id, command=cmd, cwd=cwd, name=name, status=status)
    if name == "shell_command":
        cmd = a.get("command")
        if isinstance(cmd, str):
            return Call(kind="shell", tool="shell_command", call_id=call_id, command=cmd, cwd=cwd, name=name,
                        status=status)
    if name == "exec_command":
        cmd = a.get("cmd", a.get("command"))
        if isinstance(cmd, str):
            return Call(kind="shell", tool="exec_command", call_id=call_id, command=cmd, cwd=cwd, name=name,
                        status=status)
        if isinstance(cmd, list) and all(isinstance(x, str) for x in cmd):
            return Call(kind="shell", tool="exec_command", call_id=call_id, command=command_from_argv(tuple(cmd)),
                        argv=tuple(cmd), cwd=cwd, name=name, status=status)
    if name == "write_stdin":
        sid = a.get("session_id")
        chars = a.get("chars")
        return Call(kind="stdin", tool="write_stdin", call_id=call_id,
                    session_id=None if sid is None else str(sid), chars=chars if isinstance(chars, str) else "",
                    name=name, status=status)
    if name == "apply_patch":
        # a patch whose text cannot be read (stripped, redacted) is still a patch: its success comes
        # from its output or its end event, its files from the end event when there is one
        text = a.get("input", a.get("patch"))
        return Call(kind="patch", tool="apply_patch", call_id=call_id, patch_text=text if isinstance(text, str) else "",
                    name=name, status=status)
    if name in SHELL_TOOLS:
        # a shell call whose command cannot be read (arguments redacted, stripped, or not JSON: real
        # sanitized 0.160 sessions): still a command, its exit code read from its output, the command
        # said to be unknown
        return Call(kind="shell", tool="shell" if name == "container.exec" else name, call_id=call_id,
                    command=UNKNOWN_COMMAND, cwd=cwd, name=name, arguments=raw, status=status)
    cell_id = _str(a.get("cell_id")) if name == "wait" else None
    return Call(kind="tool", tool=name, call_id=call_id, name=name, arguments=raw, status=status, cell_id=cell_id)


def decode_response_item(p: Any, line: int, ts: str | None, src: str = "response_item") -> Decoded:
    """A Responses API item (``response_item`` payload, a bare early-Rust line, a TS CLI item)."""
    if not isinstance(p, dict):
        return Decoded(line, UNKNOWN, "response_item/?", timestamp=ts)
    t = p.get("type")
    if not isinstance(t, str):
        # TS CLI items may omit "type" on messages (corpus realcodex/0.1.x: {"role", "content", "type"})
        t = "message" if "role" in p else "?"
    recs: tuple[Record, ...]
    if t == "message":
        role = _str(p.get("role")) or "user"
        text, images, refusal, refusal_text = content_text(p.get("content"))
        phase = _str(p.get("phase"))
        if refusal:
            text = refusal_text + ("\n\n" + text if text else "") if refusal_text else (text or "")
        label = context_label(role, text) if not refusal else None
        recs = (Message(role=role, text=text, src="response", images=images, phase=phase, refusal=refusal,
                        context_label=label),)
        if label == "environment_context":
            cwd = environment_cwd(text)
            if cwd is not None:
                recs += (Meta(cwd=cwd),)
        return Decoded(line, DECODED, t, recs, ts)
    if t == "reasoning":
        summary = p.get("summary")
        parts = [s["text"] for s in summary if isinstance(s, dict) and isinstance(s.get("text"), str)] \
            if isinstance(summary, list) else []
        if not parts:
            content = p.get("content")
            if isinstance(content, list):
                parts = [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]
        if not parts:
            return Decoded(line, DECODED, t, (), ts)  # encrypted only: nothing to show, still understood
        return Decoded(line, DECODED, t, (ReasoningRec("\n\n".join(parts), "response"),), ts)
    if t == "function_call":
        name = tool_name(p)
        call = call_from_function(name, p.get("arguments"), _str(p.get("call_id")), _str(p.get("status")))
        return Decoded(line, DECODED, t, (call,), ts)
    if t == "local_shell_call":
        action = _d(p.get("action"))
        cmd = action.get("command")
        argv = tuple(x for x in cmd if isinstance(x, str)) if isinstance(cmd, list) else ()
        call = Call(kind="shell", tool="local_shell", call_id=_str(p.get("call_id")) or _str(p.get("id")),
                    command=command_from_argv(argv) if argv else UNKNOWN_COMMAND, argv=argv or None,
                    cwd=_str(action.get("working_directory")), name="local_shell", status=_str(p.get("status")))
        return Decoded(line, DECODED, t, (call,), ts)
    if t == "custom_tool_call":
        name = tool_name(p)
        inp = p.get("input")
        inp = inp if isinstance(inp, str) else ""
        cid = _str(p.get("call_id"))
        if name == "apply_patch":
            return Decoded(line, DECODED, t, (Call(kind="patch", tool="apply_patch", call_id=cid, patch_text=inp,
                                                   name=name, status=_str(p.get("status"))),), ts)
        if name in ("shell", "shell_command", "exec_command", "write_stdin", "container.exec") \
                and inp.lstrip().startswith("{"):
            # a function tool recorded as a custom call with JSON input (public stage0 fixture)
            call = call_from_function(name, inp, cid, _str(p.get("status")))
            return Decoded(line, DECODED, t, (call,), ts)
        if name == "exec":
            return Decoded(line, DECODED, t, (Call(kind="cell", tool="exec", call_id=cid, script=inp, name=name,
                                                   arguments=inp, status=_str(p.get("status"))),), ts)
        return Decoded(line, DECODED, t, (Call(kind="tool", tool=name, call_id=cid, name=name, arguments=inp,
                                               status=_str(p.get("status"))),), ts)
    if t in ("function_call_output", "custom_tool_call_output"):
        text, success = output_text(p.get("output"))
        return Decoded(line, DECODED, t, (Output(_str(p.get("call_id")), text, success),), ts)
    if t == "web_search_call":
        action = _d(p.get("action"))
        q = action.get("query") or action.get("url") or action.get("queries") or ""
        status = _str(p.get("status"))
        arg = q if isinstance(q, str) else orjson.dumps(q).decode()
        return Decoded(line, DECODED, t, (Call(kind="tool", tool="web_search", call_id=_str(p.get("id")),
                                               name="web_search", arguments=arg, status=status,
                                               success=_terminal(status),
                                               result=""),), ts)
    if t == "tool_search_output":
        tools = p.get("tools")
        names = [str(x.get("name")) for x in tools if isinstance(x, dict)] if isinstance(tools, list) else []
        status = _str(p.get("status"))
        return Decoded(line, DECODED, t, (Output(_str(p.get("call_id")), ", ".join(names),
                                                 None if status is None else status == "completed"),), ts)
    if t == "image_generation_call":
        status = _str(p.get("status"))
        return Decoded(line, DECODED, t, (Call(kind="tool", tool="image_generation", call_id=_str(p.get("id")),
                                               name="image_generation",
                                               arguments=_str(p.get("revised_prompt")) or "", status=status,
                                               success=_terminal(status),
                                               result="[image]"),), ts)
    if t == "tool_search_call":
        _, raw = _json_args(p.get("arguments"))
        return Decoded(line, DECODED, t, (Call(kind="tool", tool="tool_search", call_id=_str(p.get("call_id")),
                                               name="tool_search", arguments=raw, status=_str(p.get("status"))),), ts)
    if t == "context_compaction":
        return Decoded(line, DECODED, t, (NoticeRec("compaction", "context compacted"),), ts)
    if t == "agent_message":
        text, _, _, _ = content_text(p.get("content"))
        author = _str(p.get("author")) or "agent"
        return Decoded(line, DECODED, t, (Message(role=author, text=text, src="response",
                                                  context_label="inter_agent"),), ts)
    if t in NOISE_ITEM_TYPES:
        return Decoded(line, NOISE, f"response_item/{t}", (), ts)
    return Decoded(line, UNKNOWN, f"response_item/{t}", (), ts)
