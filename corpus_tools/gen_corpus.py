"""A generated corpus of Codex 0.171-style code-mode rollouts, deterministic from a seed.

Why: the census's speed-up, the Dask-vs-local comparison and the Ctrl-C test need thousands of
realistic scripts in hundreds of rollouts, on a fresh clone (no ``../shared``). The line shapes are
those of the real 0.171.0 ``code_mode_*`` recordings (``session_meta`` with ``ordinal``,
``task_started``, ``additional_tools``, developer and ``<environment_context>`` messages,
``world_state``, ``turn_context``, ``custom_tool_call`` ``exec`` cells, ``token_usage_record``,
``item_completed`` CommandExecution / FileChange records between a cell and its output, the output as
a content array, ``token_count``, AgentMessage, ``task_complete``), with shorter instruction texts.
A few rollouts also make top-level ``exec_command`` function calls and freeform ``apply_patch`` calls.

Scripts come from fragments modelled on real cells and on the exec-script benchmark
(``../shared/bench/gen_corpus.py``): literal and JSON ``exec_command`` arguments, template and
concatenated commands (computed), ``Promise.all`` over ``.map``, ``apply_patch`` in three quote
styles (``${name}`` headers bound by a ``const`` or not), bracket access, MCP tools, ``write_stdin``,
decoys in comments/strings/regexes, regex-vs-division traps, dead branches, optional chaining, and
about 0.5% corrupted on purpose (their cell output says the script failed, and no record follows).

usage: python -m corpus_tools.gen_corpus OUT_DIR [--rollouts 500] [--seed 1] [--cells 44]
Writes OUT_DIR/sessions/2026/11/DD/rollout-…jsonl and OUT_DIR/corpus_manifest.json (totals).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

VERSION = "0.171.0"

CMDS = [
    "ls -la", "git status --short", "git diff --stat", "git log --oneline -10", "npm test",
    "npm run build 2>&1 | tail -40", "pytest -q tests/test_api.py", "pytest -x -q", "rg -n 'def main' src",
    "sed -n '1,120p' src/app.py", "cat package.json", "find . -name '*.py' | head -50", "go test ./...",
    "cargo check 2>&1", "python -c \"import sys; print(sys.version)\"", "grep -rn \"TODO\" src | head",
    "make -j4", "tail -n 100 logs/server.log", "wc -l src/*.ts", "jq '.dependencies' package.json",
    "node --version", "git rev-parse HEAD", "uname -a", "ruff check . --fix", "cargo test -q",
    "printf '%s\\n' \"$HOME\"", "for f in src/*.js; do echo \"$f\"; done", "echo `date`",
]
TEST_CMDS = {"npm test", "pytest -q tests/test_api.py", "pytest -x -q", "go test ./...", "cargo test -q"}
DIRS = ["/repo", "/workspace/app", "/home/user/project", "/srv/api", "/code/backend"]
FILES = ["src/app.py", "src/components/Button.tsx", "lib/utils.ts", "tests/test_models.py", "README.md",
         "cmd/server/main.go", "src/index.js", "src/lib.rs", "config/settings.py"]
MCP = ["mcp__github__get_issue", "mcp__linear__list_issues", "mcp__fs__read_file", "web__run", "view_image"]
WORDS = ("the agent reads the code then runs the tests and fixes what fails before it answers the user "
         "with a short summary of every change it made and why").split()


def js_str(s: str, quote: str = '"') -> str:
    """A JavaScript string literal (JSON escaping is valid JS for double quotes)."""
    if quote == '"':
        return json.dumps(s)
    body = json.dumps(s)[1:-1].replace('\\"', '"').replace("'", "\\'")
    return f"'{body}'"


@dataclass
class Planned:
    """What a script will have Codex run: commands (with exit codes) and patched files."""

    commands: list[tuple[str, str, int]] = field(default_factory=list)  # (command, cwd, exit code)
    patches: list[list[tuple[str, str]]] = field(default_factory=list)  # [(path, op)]
    exec_command_calls: int = 0


def _patch_text(rng: random.Random, path: str, op: str) -> str:
    if op == "add":
        body = "".join(f"+{rng.choice(WORDS)} {rng.choice(WORDS)}\n" for _ in range(rng.randint(1, 6)))
        return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"
    if op == "delete":
        return f"*** Begin Patch\n*** Delete File: {path}\n*** End Patch\n"
    hunk = "".join(f" {w}\n-{w} old\n+{w} new\n" for w in rng.sample(WORDS, rng.randint(1, 4)))
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n{hunk}*** End Patch\n"


def gen_script(rng: random.Random) -> tuple[str, Planned, bool]:
    """One exec script, what it runs, and whether it was corrupted on purpose."""
    plan = Planned()
    parts: list[str] = []
    if rng.random() < 0.3:
        yt, mt = rng.choice([1000, 5000, 20000]), rng.choice([2000, 6000])
        parts.append(f'// @exec: {{"yield_time_ms": {yt}, "max_output_tokens": {mt}}}')
    computed = rng.random() < 0.12
    for i in range(rng.randint(1, 5)):
        r = rng.random()
        cmd, cwd = rng.choice(CMDS), rng.choice(DIRS)
        code = 0 if rng.random() < 0.85 else rng.choice([1, 2, 127])
        if r < 0.35:
            tail = '?.trim() ?? ""' if rng.random() < 0.3 else ""
            parts.append(f"const r{i} = await tools.exec_command({{ cmd: {js_str(cmd, rng.choice(chr(34) + chr(39)))}"
                         f", workdir: {js_str(cwd)}, yield_time_ms: {rng.choice([1000, 10000])} }});\n"
                         f"text(r{i}.output{tail});")
            plan.commands.append((cmd, cwd, code))
            plan.exec_command_calls += 1
        elif r < 0.45:
            parts.append(f'const j{i} = await tools["exec_command"]({json.dumps({"cmd": cmd, "workdir": cwd})});\n'
                         f"if (j{i}.exit_code !== 0) text(`failed: ${{j{i}.exit_code}}`);")
            plan.commands.append((cmd, cwd, code))
            plan.exec_command_calls += 1
        elif r < 0.55:
            path = rng.choice(FILES)
            op = rng.choice(["update", "update", "add", "delete"])
            patch = _patch_text(rng, path, op)
            style = rng.random()
            if style < 0.4:
                parts.append(f"await tools.apply_patch({js_str(patch)});")
            elif style < 0.6:
                parts.append(f"await tools.apply_patch({js_str(patch, chr(39))});")
            elif style < 0.85:
                parts.append("await tools.apply_patch(`" + patch.replace("`", "\\`").replace("${", "\\${") + "`);")
            else:
                # a header through a const binding: resolvable by the analyzer (and one that is not)
                parts.append(f"const target{i} = {js_str(path)};\nawait tools.apply_patch(`"
                             + patch.replace(path, "${target" + str(i) + "}", 1) + "`);")
            plan.patches.append([(path, op)])
        elif r < 0.63 and computed:
            files = rng.sample(FILES, 3)
            parts.append(f"const files{i} = {json.dumps(files)};\nfor (const f of files{i}) {{\n"
                         f"  const o = await tools.exec_command({{ cmd: `wc -l ${{f}}`, workdir: {js_str(cwd)} }});\n"
                         f"  text(`${{f}}: ${{o.output}}`);\n}}")
            plan.commands.extend((f"wc -l {f}", cwd, 0) for f in files)
            plan.exec_command_calls += 1
        elif r < 0.70 and computed:
            files = rng.sample(FILES, 2)
            parts.append(f"const outs{i} = await Promise.all({json.dumps(files)}.map((p) => "
                         f"tools.exec_command({{ cmd: \"head -n 20 \" + p }})));\ntext(outs{i}.map((o) => o.output).join(\"\\n\"));")
            plan.commands.extend((f"head -n 20 {f}", "", 0) for f in files)
            plan.exec_command_calls += 1
        elif r < 0.76:
            tool = rng.choice(MCP)
            parts.append(f"const m{i} = await tools.{tool}({{ query: {js_str(rng.choice(WORDS))}, limit: {rng.randint(1, 50)} }});\n"
                         f"text(JSON.stringify(m{i}).slice(0, 400));")
        elif r < 0.80:
            parts.append(f"await tools.write_stdin({{ session_id: {rng.randint(1, 90)}, chars: \"q\\n\" }});")
        elif r < 0.86:
            parts.append(rng.choice([
                '// tools.exec_command({ cmd: "rm -rf /" }) is never run from a comment',
                f'const note{i} = "call tools.apply_patch(...) only once";',
                f"const re{i} = /tools\\.exec_command\\(/g;\ntext(re{i}.test(String(Date.now())));",
                f"const ratio{i} = 10 / 5 / 2;\nconst m{i} = ratio{i} / 3;",
                'if (true) /error/.test("no error") && text("matched");',
                "text(`the agent may call tools.exec_command later`);",
            ]))
        elif r < 0.90:
            parts.append("if (false) {\n  await tools.exec_command({ cmd: \"rm -rf build\" });\n}")
            plan.exec_command_calls += 1
        else:
            parts.append(f"const s{i} = {{ a: 1, b: [1, 2, 3], c: {{ d: \"x\" }} }};\ntext(s{i}?.c?.d ?? \"none\");\n"
                         f"store(\"k{i}\", s{i});")
    script = "\n".join(parts) + "\n"
    corrupted = rng.random() < 0.005
    if corrupted:
        cut = rng.randint(len(script) // 3, max(len(script) // 3, len(script) - 2))
        script = script[:cut] + " @@@ (" + script[cut:]
    return script, plan, corrupted


class _Writer:
    """Writes one rollout's lines in the 0.171.0 envelope with a running ordinal and clock."""

    def __init__(self, rng: random.Random, start: datetime) -> None:
        self.rng = rng
        self.now = start
        self.ordinal = 0
        self.lines: list[str] = []
        self.tokens = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
                       "reasoning_output_tokens": 0, "total_tokens": 0}
        self.pending_count: dict[str, Any] = {}

    def ts(self) -> str:
        self.now += timedelta(milliseconds=self.rng.randint(1, 900))
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"

    def emit(self, type_: str, payload: dict[str, Any]) -> None:
        line = {"timestamp": self.ts(), "ordinal": self.ordinal, "type": type_, "payload": payload}
        self.ordinal += 1
        self.lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))

    def usage(self, thread: str, turn: str, n: int) -> None:
        inp, out = self.rng.randint(8000, 30000), self.rng.randint(10, 400)
        cached = inp // 2
        last = {"input_tokens": inp, "cached_input_tokens": cached, "cache_write_input_tokens": 0,
                "output_tokens": out, "reasoning_output_tokens": 3, "total_tokens": inp + out}
        for k in self.tokens:
            self.tokens[k] += last[k]
        self.emit("token_usage_record", {"thread_id": thread, "turn_id": turn, "session_id": thread,
                                         "root_turn_id": turn, "response_id": f"resp_{n:05d}", "usage": last,
                                         "thread_token_usage": dict(self.tokens)})
        self.pending_count = {"type": "token_count", "info": {
            "total_token_usage": dict(self.tokens), "last_token_usage": last,
            "last_usage_includes_reasoning": True, "model_context_window": 258400}, "rate_limits": None}


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def gen_rollout(rng: random.Random, index: int, cells: int, totals: dict[str, int],
                scripts: list[str] | None = None) -> tuple[str, str]:
    """One rollout: (relative path, text). Each exec script is also appended to ``scripts`` if given."""
    start = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(minutes=37 * index + rng.randint(0, 30))
    w = _Writer(rng, start)
    thread = _uuid(rng)
    cwd = rng.choice(DIRS)
    model = rng.choice(["gpt-5.6-terra", "gpt-5.5"])
    w.emit("session_meta", {"account_scoped": True, "session_id": thread, "id": thread, "timestamp": w.ts(),
                            "cwd": cwd, "runtime_workspace_roots": [cwd], "originator": "codex_exec",
                            "cli_version": VERSION, "source": "exec", "thread_source": "user",
                            "model_provider": "openai",
                            "base_instructions": {"text": "You are Codex. " + " ".join(rng.choices(WORDS, k=300))},
                            "history_mode": "paginated", "context_window": {"window_id": _uuid(rng)}})
    n_turns = rng.choice([1, 1, 2, 3])
    per_turn = [cells // n_turns + (1 if t < cells % n_turns else 0) for t in range(n_turns)]
    resp = 0
    for t in range(n_turns):
        turn = _uuid(rng)
        totals["turns"] += 1
        w.emit("event_msg", {"type": "task_started", "turn_attribution": {"turn_id": turn, "turn_trigger": "exec"},
                             "turn_id": turn, "root_turn_id": turn, "started_at": int(w.now.timestamp()),
                             "model_context_window": 258400, "collaboration_mode_kind": "default"})
        if t == 0:
            w.emit("response_item", {"type": "additional_tools", "id": "at_" + _uuid(rng), "role": "developer",
                                     "tools": [{"type": "namespace", "name": "functions", "description": "",
                                                "tools": [{"type": "custom", "name": "exec",
                                                           "description": "Run JavaScript code to orchestrate tool calls"}]}]})
            w.emit("response_item", {"type": "message", "id": "msg_" + _uuid(rng), "role": "developer",
                                     "content": [{"type": "input_text", "text": " ".join(rng.choices(WORDS, k=400))}]})
            w.emit("response_item", {"type": "message", "id": "msg_" + _uuid(rng), "role": "user", "content": [
                {"type": "input_text", "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>"}]})
            w.emit("world_state", {"full": True, "state": {"agents_md": {}, "collaboration_mode": {"mode": "default", "model": model}}})
        w.emit("turn_context", {"turn_id": turn, "root_turn_id": turn, "cwd": cwd, "approval_policy": "never",
                                "model": model, "summary": "none", "sandbox_policy": {"type": "danger-full-access"}})
        prompt = " ".join(rng.choices(WORDS, k=rng.randint(4, 14)))
        w.emit("response_item", {"type": "message", "id": "msg_" + _uuid(rng), "role": "user",
                                 "content": [{"type": "input_text", "text": prompt}]})
        w.emit("event_msg", {"type": "item_completed", "thread_id": thread, "turn_id": turn, "item": {
            "type": "UserMessage", "id": _uuid(rng), "content": [{"type": "text", "text": prompt, "text_elements": []}]}})
        for c in range(per_turn[t]):
            call_id = f"call_{index}_{t}_{c}"
            if rng.random() < 0.04:  # a top-level exec_command function call (not code mode)
                cmd = rng.choice(CMDS)
                w.emit("response_item", {"type": "function_call", "status": "completed", "id": "item_" + _uuid(rng)[:16],
                                         "name": "exec_command", "arguments": json.dumps({"cmd": cmd, "yield_time_ms": 2000}),
                                         "call_id": call_id})
                w.emit("response_item", {"type": "function_call_output", "call_id": call_id,
                                         "output": "Chunk ID: ab12cd\nWall time: 0.0100 seconds\nProcess exited with code 0\nOutput:\nok\n"})
                totals["top_level_exec_command"] += 1
                continue
            if rng.random() < 0.02:  # a top-level freeform apply_patch
                path = rng.choice(FILES)
                w.emit("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call_id,
                                         "name": "apply_patch", "input": _patch_text(rng, path, "update")})
                w.emit("response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                                         "output": json.dumps({"output": f"Success. Updated the following files:\nM {path}\n",
                                                               "metadata": {"exit_code": 0, "duration_seconds": 0.0}})})
                totals["top_level_apply_patch"] += 1
                continue
            script, plan, corrupted = gen_script(rng)
            if scripts is not None:
                scripts.append(script)
            totals["exec_cells"] += 1
            totals["exec_command_calls"] += plan.exec_command_calls
            totals["corrupted"] += corrupted
            if rng.random() < 0.5:
                w.emit("response_item", {"type": "reasoning", "id": "item_" + _uuid(rng)[:16], "summary": [
                    {"type": "summary_text", "text": "**" + " ".join(rng.choices(WORDS, k=4)) + "**"}],
                    "content": None, "encrypted_content": None})
            w.emit("response_item", {"type": "custom_tool_call", "id": "item_" + _uuid(rng)[:16], "status": "completed",
                                     "call_id": call_id, "name": "exec", "input": script})
            resp += 1
            w.usage(thread, turn, resp)
            outputs = []
            if corrupted:
                status = "Script failed"
                outputs.append("Script error:\nSyntaxError: Unexpected token '@'")
            else:
                status = "Script completed"
                for cmd, ccwd, code in plan.commands:
                    out = f"{rng.randint(1, 9)} passed in 0.{rng.randint(10, 99)}s\n" if cmd in TEST_CMDS and code == 0 else (
                        f"1 failed, {rng.randint(1, 9)} passed\n" if cmd in TEST_CMDS else f"{rng.choice(WORDS)}\n")
                    w.emit("event_msg", {"type": "item_completed", "thread_id": thread, "turn_id": turn, "item": {
                        "type": "CommandExecution", "id": "exec-" + _uuid(rng), "process_id": str(rng.randint(100, 99999)),
                        "command": ["/bin/bash", "-lc", cmd], "cwd": "file://" + (ccwd or cwd),
                        "source": "unified_exec_startup", "status": "completed" if code == 0 else "failed",
                        "aggregated_output": out, "exit_code": code, "duration": {"secs": 0, "nanos": rng.randint(1000, 99999)}}})
                    outputs.append(out)
                for files in plan.patches:
                    changes = {f"{cwd}/{p}": {"type": op, "unified_diff": "@@ -1 +1 @@\n-a\n+b\n", "move_path": None}
                               for p, op in files}
                    w.emit("event_msg", {"type": "item_completed", "thread_id": thread, "turn_id": turn, "item": {
                        "type": "FileChange", "id": "exec-" + _uuid(rng), "changes": changes, "status": "completed",
                        "stdout": "Success. Updated the following files:\n" + "".join(f"M {p}\n" for p, _ in files),
                        "stderr": ""}})
            w.emit("response_item", {"type": "custom_tool_call_output", "id": "ctco_" + _uuid(rng), "call_id": call_id,
                                     "output": [{"type": "input_text", "text": f"{status}\nWall time 0.{rng.randint(0, 9)} seconds\nOutput:\n"}]
                                     + [{"type": "input_text", "text": o} for o in outputs[:4]]})
            w.emit("event_msg", w.pending_count)
        answer = " ".join(rng.choices(WORDS, k=rng.randint(8, 30))).capitalize() + "."
        w.emit("event_msg", {"type": "item_completed", "thread_id": thread, "turn_id": turn, "item": {
            "type": "AgentMessage", "id": "item_" + _uuid(rng)[:16], "content": [{"type": "Text", "text": answer}]}})
        w.emit("response_item", {"type": "message", "status": "completed", "id": "item_" + _uuid(rng)[:16],
                                 "role": "assistant", "content": [{"type": "output_text", "text": answer}],
                                 "phase": "final_answer"})
        w.emit("event_msg", {"type": "task_complete", "turn_id": turn, "last_agent_message": answer,
                             "duration_ms": rng.randint(1000, 900000)})
    totals["rollouts"] += 1
    totals["lines"] += len(w.lines)
    day = start.strftime("%Y/%m/%d")
    name = f"sessions/{day}/rollout-{start.strftime('%Y-%m-%dT%H-%M-%S')}-{thread}.jsonl"
    return name, "\n".join(w.lines) + "\n"


def generate(out_dir: str | os.PathLike[str], *, rollouts: int = 500, seed: int = 1, cells: int = 44,
             scripts_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Write the corpus; returns (and writes) the manifest of totals. The number of cells per rollout
    varies around ``cells`` (between half and one and a half of it). ``scripts_dir`` also gets every
    exec script as ``NNNNNN.js`` (the input of the node+acorn anchor in the benchmark)."""
    rng = random.Random(seed)
    out = Path(out_dir)
    totals: dict[str, int] = dict.fromkeys(
        ("rollouts", "turns", "lines", "exec_cells", "exec_command_calls", "corrupted",
         "top_level_exec_command", "top_level_apply_patch", "bytes"), 0)
    written = 0
    for i in range(rollouts):
        n_cells = rng.randint(max(1, cells // 2), max(1, cells + cells // 2))
        scripts: list[str] = []
        rel, text = gen_rollout(random.Random(rng.getrandbits(64)), i, n_cells, totals, scripts)
        if scripts_dir is not None:
            sd = Path(scripts_dir)
            sd.mkdir(parents=True, exist_ok=True)
            for script in scripts:
                (sd / f"{written:06d}.js").write_text(script, encoding="utf-8")
                written += 1
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        totals["bytes"] += len(data)
    manifest = {"generator": "corpus_tools.gen_corpus", "version": VERSION, "seed": seed, **totals}
    (out / "corpus_manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def write_hostile(out_dir: str | os.PathLike[str], *, big_line_mb: int = 20, seed: int = 7) -> dict[str, Path]:
    """Hostile files for the census, by name: ``junk`` (binary noise), ``giant_junk_line`` (one
    ``big_line_mb`` MB line of text that is not JSON), ``giant_cut_line`` (a rollout line opened and never
    closed, ``big_line_mb`` MB), ``giant_valid_line`` (a valid rollout whose second line is a
    ``big_line_mb`` MB tool output) and ``bad_utf8`` (JSON lines with invalid UTF-8 in a string)."""
    rng = random.Random(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    size = big_line_mb << 20
    files = {name: out / f"{name}.jsonl" for name in
             ("junk", "giant_junk_line", "giant_cut_line", "giant_valid_line", "bad_utf8")}
    files["junk"].write_bytes(bytes(rng.getrandbits(8) for _ in range(64 * 1024)))
    files["giant_junk_line"].write_bytes(b"x" * size + b"\n")
    head = (b'{"timestamp":"2026-11-01T00:00:00.000Z","type":"response_item","payload":{"type":"message",'
            b'"role":"user","content":[{"type":"input_text","text":"')
    files["giant_cut_line"].write_bytes(head + b"x" * size + b"\n")
    meta = {"timestamp": "2026-11-01T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": "00000000-0000-4000-8000-00000000b16b", "cwd": "/repo", "cli_version": VERSION}}
    call = {"timestamp": "2026-11-01T00:00:01.000Z", "type": "response_item", "payload": {
        "type": "function_call", "name": "exec_command", "call_id": "call_big",
        "arguments": json.dumps({"cmd": "cat big.log"})}}
    with files["giant_valid_line"].open("wb") as f:
        f.write(json.dumps(meta).encode() + b"\n" + json.dumps(call).encode() + b"\n")
        f.write(b'{"timestamp":"2026-11-01T00:00:02.000Z","type":"response_item","payload":{"type":'
                b'"function_call_output","call_id":"call_big","output":"Process exited with code 0\\nOutput:\\n')
        f.write(b"y" * size + b'"}}\n')
    files["bad_utf8"].write_bytes(
        json.dumps(meta).replace("b16b", "bad8").encode() + b"\n"
        b'{"timestamp":"2026-11-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user",'
        b'"content":[{"type":"input_text","text":"caf\xe9 \xff\xfe"}]}}\n')
    return files


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--rollouts", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cells", type=int, default=44, help="average exec cells per rollout")
    args = ap.parse_args(argv)
    manifest = generate(args.out_dir, rollouts=args.rollouts, seed=args.seed, cells=args.cells)
    print(json.dumps(manifest))


if __name__ == "__main__":
    main()
