"""Record real Claude Code sessions offline: install ``@anthropic-ai/claude-code@VERSION`` from npm, then run
``claude -p … --output-format stream-json --verbose`` against the scripted mock of the Messages API
(``claude_mock.py``), ONLY inside a fresh network namespace, the same way the Codex recorder does.

Safety (fail closed): the CLI would reach Anthropic's hosts (API, telemetry, updates), so it never runs with a
network. ``record`` re-executes this module under ``unshare -rn`` (``-rnm`` when a private mount namespace is
allowed: the session then runs in ``/home/user/project`` on a tmpfs); inside, :func:`assert_isolated` checks
that ``lo`` is the only interface before anything starts. If ``unshare`` is missing or refuses, a
:class:`RecorderError` is raised and no Claude binary is started. The CLI is pointed at the mock with
``ANTHROPIC_BASE_URL`` and a dummy ``ANTHROPIC_API_KEY``; ``HOME`` and ``CLAUDE_CONFIG_DIR`` are in the
throw-away home; telemetry, the auto-updater and non-essential traffic are switched off by their variables.

A scenario (``claude_scenarios/NAME.json``) has ``runs`` (one ``claude -p`` each: ``prompt``, ``args``,
``resume``: continue the session of the first run with ``--resume ID``; ``stdin``: send the prompt as a
``--input-format stream-json`` message with ``--replay-user-messages``, so the stream echoes it), ``steps`` (assistant content blocks
per model response) and ``agents`` (a sub-agent's own steps, by a substring of its task prompt). ``PROJECT``
in a step is replaced by the session's working directory.

Layout of one recording in OUT: ``NAME.projects/`` (everything Claude Code wrote under
``$CLAUDE_CONFIG_DIR/projects``: the session file and any sub-agent files), ``NAME.stream.jsonl`` (the
``stream-json`` stdout of the first run; ``NAME.stream.turn2.jsonl``… for later runs), ``NAME.stderr``,
``NAME.mock/`` (every request and answer of the mock), ``NAME.result.json`` (exit codes, steps served, the
transcript's path inside ``NAME.projects``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus_tools.record.recorder import (
    RecorderError,
    add_run_arguments,
    assert_isolated,
    check_unshare,
    inside_entry,
    make_workspace,
    run_inside,
    run_named,
    scenario_json,
)

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "claude_scenarios"
INSIDE_FLAG = "--inside-netns"
PACKAGE = "@anthropic-ai/claude-code"
#: The version the fixtures in ``fixtures/claude/recorded`` were written with.
DEFAULT_VERSION = "2.1.332"
# Switches that keep the CLI from reaching for anything but the mock (it could not anyway: no network).
QUIET_ENV = {"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_BUG_COMMAND": "1"}


@dataclass(frozen=True)
class ClaudeScenario:
    name: str
    runs: list[dict[str, Any]]
    steps: list[list[dict[str, Any]]]
    agents: dict[str, list[list[dict[str, Any]]]]

    @classmethod
    def load(cls, name_or_path: str) -> ClaudeScenario:
        name, data = scenario_json(name_or_path, SCENARIOS, "Claude scenario")
        runs = data.get("runs") or [{"prompt": "hello"}]
        return cls(name, runs, data["steps"], data.get("agents") or {})

    def with_project(self, project: str) -> ClaudeScenario:
        """The steps with ``PROJECT`` replaced by the session's working directory (tools take absolute paths)."""
        steps = json.loads(json.dumps(self.steps).replace("PROJECT", project))
        agents = json.loads(json.dumps(self.agents).replace("PROJECT", project))
        return ClaudeScenario(self.name, self.runs, steps, agents)


def default_cache() -> Path:
    return Path(__file__).resolve().parents[2] / "bench-work" / "claude"


def install_claude(version: str, cache: Path | None = None) -> Path:
    """npm-install ``@anthropic-ai/claude-code@version`` into ``cache/version`` (once) and return the native
    binary. The package is a wrapper whose postinstall copies the platform binary into place; here the
    binary is taken straight from the platform package, so no install script has to run."""
    root = (cache or default_cache()) / version
    found = _native_binary(root)
    if found is not None:
        return found
    if shutil.which("npm") is None:
        raise RecorderError(f"npm is not installed; it is needed to install {PACKAGE}")
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps({"name": "claude-kit", "private": True}))
    proc = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--engine-strict=false",
         f"{PACKAGE}@{version}"],
        cwd=root, capture_output=True, text=True, timeout=900,
    )
    found = _native_binary(root)
    if proc.returncode != 0 or found is None:
        raise RecorderError(f"npm install {PACKAGE}@{version} failed or shipped no native binary for this "
                            f"platform: {proc.stderr.strip()[-800:]}")
    return found


def _native_binary(root: Path) -> Path | None:
    scope = root / "node_modules" / "@anthropic-ai"
    for pkg in sorted(scope.glob("claude-code-linux-*")) if scope.is_dir() else []:
        exe = pkg / "claude"
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe
    return None


def record(scenario: ClaudeScenario, out: Path, *, version: str = DEFAULT_VERSION, claude_bin: Path | None = None,
           cache: Path | None = None, timeout: int = 180, unshare: str = "unshare") -> dict[str, Any]:
    """Record one scenario with one Claude Code version; returns the run's result (also NAME.result.json)."""
    namespace = check_unshare(unshare)
    binary = claude_bin or install_claude(version, cache)
    out.mkdir(parents=True, exist_ok=True)
    spec = {"scenario": {"name": scenario.name, "runs": scenario.runs, "steps": scenario.steps,
                         "agents": scenario.agents},
            "claude": str(binary), "out": str(out.resolve()), "timeout": timeout, "version": version,
            "path": os.environ.get("PATH", "/usr/bin:/bin")}
    return run_inside(namespace, "corpus_tools.record.claude_recorder", spec, out / f"{scenario.name}.result.json",
                      timeout=timeout * max(1, len(scenario.runs)) + 60)


def _session_id(stream: Path) -> str | None:
    """The session id from a stream-json file's ``system/init`` event (what ``--resume`` needs)."""
    try:
        for line in stream.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            if isinstance(obj, dict) and obj.get("session_id"):
                return str(obj["session_id"])
    except (OSError, ValueError):
        return None
    return None


def _inside(spec_path: str) -> int:
    """Runs in the namespace: isolate, serve the scenario, run each ``claude -p``, keep what it wrote."""
    from corpus_tools.record.claude_mock import ClaudeMockServer

    spec = json.loads(Path(spec_path).read_text())
    assert_isolated("Claude Code")
    sc = spec["scenario"]
    name, out = sc["name"], Path(spec["out"])
    work, home, config, project = make_workspace([spec["out"], spec["claude"], sys.executable, str(HERE)],
                                                 "claude-rec-", ".claude")
    (project / "test_calc.py").write_text(
        "import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\n"
        "if __name__ == '__main__':\n    unittest.main()\n")
    scenario = ClaudeScenario(name, sc["runs"], sc["steps"], sc["agents"]).with_project(str(project))
    mock_dir = out / f"{name}.mock"
    shutil.rmtree(mock_dir, ignore_errors=True)
    exits: list[int | str] = []
    session: str | None = None
    with ClaudeMockServer(scenario.steps, scenario.agents, log_dir=mock_dir) as srv:
        env = {"PATH": spec["path"], "HOME": str(home), "CLAUDE_CONFIG_DIR": str(config), "LANG": "C.UTF-8",
               "TERM": "dumb", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{srv.port}",
               "ANTHROPIC_API_KEY": "sk-ant-mock-dummy", **QUIET_ENV}
        with open(out / f"{name}.stderr", "w") as stderr:
            for i, run in enumerate(scenario.runs):
                stream = out / (f"{name}.stream.jsonl" if i == 0 else f"{name}.stream.turn{i + 1}.jsonl")
                if run.get("stdin"):
                    # the prompt as a stream-json input message, echoed back by --replay-user-messages: the
                    # only way the stream itself carries the top-level prompt
                    args = [spec["claude"], "-p", "--input-format", "stream-json", "--replay-user-messages",
                            "--output-format", "stream-json", "--verbose", *run.get("args", ())]
                    feed: bytes | None = (json.dumps({"type": "user", "message": {
                        "role": "user", "content": [{"type": "text", "text": run["prompt"]}]}}) + "\n").encode()
                else:
                    args = [spec["claude"], "-p", run["prompt"], "--output-format", "stream-json", "--verbose",
                            *run.get("args", ())]
                    feed = None
                if run.get("resume"):
                    if session is None:
                        raise RecorderError(f"{name}: run {i + 1} resumes, but no session id was seen")
                    args += ["--resume", session]
                with open(stream, "w") as stdout:
                    try:
                        proc = subprocess.run(args, cwd=project, env=env, input=feed,
                                              stdin=subprocess.DEVNULL if feed is None else None, stdout=stdout,
                                              stderr=stderr, timeout=spec["timeout"])
                        exits.append(proc.returncode)
                    except subprocess.TimeoutExpired:
                        exits.append("timeout")
                session = session or _session_id(stream)
        served = list(srv.served)
    projects = config / "projects"
    dest = out / f"{name}.projects"
    shutil.rmtree(dest, ignore_errors=True)
    transcript = None
    if projects.is_dir():
        shutil.copytree(projects, dest, ignore=shutil.ignore_patterns("memory"))
        mains = sorted(p for p in dest.glob("*/*.jsonl") if session is None or p.stem == session)
        transcript = mains[0].relative_to(out).as_posix() if mains else None
    result: dict[str, Any] = {"scenario": name, "version": spec["version"], "claude_exit": exits,
                              "steps_served": served, "cwd": str(project), "session_id": session,
                              "transcript": transcript}
    (out / f"{name}.result.json").write_text(json.dumps(result, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m corpus_tools.record.claude_recorder --out DIR [SCENARIO…]``: record (default: all)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m corpus_tools.record.claude_recorder",
                                 description="record Claude Code scenarios with the real CLI (inside unshare -rn)")
    add_run_arguments(ap, SCENARIOS, DEFAULT_VERSION, PACKAGE)
    return run_named(ClaudeScenario.load, record, SCENARIOS, ap.parse_args(argv))


if __name__ == "__main__":
    status = inside_entry(_inside, sys.argv)
    sys.exit(main() if status is None else status)
