"""``export --otlp-endpoint`` against a real OTLP receiver: Arize Phoenix, installed from PyPI into its
own environment (``.ci/run`` puts it in ``bench-work/phoenix``; ``TRANSCRIPT_READER_PHOENIX`` may name
another Python that has it). The test starts it on the loopback (telemetry off, a fresh working
directory), sends sessions to it over OTLP/HTTP with the CLI, and reads the spans back through Phoenix's
own REST API: per trace, the spans of each ``transcript.kind`` are the reader's items of that kind (plus
one session and its turns), and the token figures are ``inspect``'s. Skipped, with the reason, when
Phoenix is not installed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from transcript_reader import api

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

#: Sessions sent, each with its own session id (the trace id derives from it): Codex with usage, commands
#: and a patch; tool and MCP calls with a sub-agent; code-mode cells; an exec stream with test runs; the
#: 0.29 era; Claude Code.
SESSIONS = [
    FIXTURES / "transcripts" / "pairing_records_direct.jsonl",
    FIXTURES / "transcripts" / "tool_calls.jsonl",
    FIXTURES / "transcripts" / "code_mode_records.jsonl",
    FIXTURES / "exec_streams" / "test_run.jsonl",
    FIXTURES / "transcripts" / "early_rust_0_29.jsonl",
    next((FIXTURES / "claude" / "recorded").rglob("bash_fail.projects/*/*.jsonl"), FIXTURES / "missing"),
]


def _phoenix_python() -> str | None:
    named = os.environ.get("TRANSCRIPT_READER_PHOENIX")
    candidates = [named] if named else [str(ROOT / "bench-work" / "phoenix" / "bin" / "python")]
    for python in candidates:
        if python and Path(python).exists():
            r = subprocess.run([python, "-c", "import phoenix.server.main"], capture_output=True, timeout=120)
            if r.returncode == 0:
                return python
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:  # noqa: S310 - a loopback URL this test built
        return json.loads(r.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Any:
    python = _phoenix_python()
    if python is None:
        pytest.skip("Arize Phoenix is not installed (bash .ci/run installs it into bench-work/phoenix; or set "
                    "TRANSCRIPT_READER_PHOENIX to a Python that has arize-phoenix)")
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc_port = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))}
    env.update(PHOENIX_HOST="127.0.0.1", PHOENIX_PORT=str(port), PHOENIX_GRPC_PORT=str(grpc_port),
               PHOENIX_WORKING_DIR=str(work), PHOENIX_TELEMETRY_ENABLED="false")
    log = open(work / "serve.log", "wb")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen([python, str(ROOT / "tests" / "phoenix_launch.py")], env=env, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 240
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"Phoenix exited ({proc.returncode}): {(work / 'serve.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=5):  # noqa: S310
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("Phoenix did not answer within 240 s")
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _spans_of_trace(base: str, trace: str, want: int) -> list[dict[str, Any]]:
    """Every span of ``trace`` Phoenix has, through its REST API (paged), waiting for its ingestion."""
    deadline = time.monotonic() + 60
    while True:
        got: list[dict[str, Any]] = []
        cursor = None
        while True:
            url = f"{base}/v1/projects/default/spans?limit=1000" + (f"&cursor={cursor}" if cursor else "")
            page = _get(url)
            got += [s for s in page["data"] if s["context"]["trace_id"] == trace]
            cursor = page.get("next_cursor")
            if not cursor:
                break
        if len(got) >= want or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.parametrize("session", SESSIONS, ids=lambda p: p.name)
def test_phoenix_receives_the_readers_items_and_tokens(phoenix: str, session: Path, tmp_path: Path) -> None:
    assert session.exists(), session
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}, "CODEX_HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "transcript_reader", "export", str(session), "--otlp-endpoint", phoenix],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    trace = r.stderr.split("exported trace ", 1)[1].split()[0]
    sent = int(r.stderr.split("(", 1)[1].split(" spans")[0].replace(",", ""))
    spans = _spans_of_trace(phoenix, trace, sent)
    assert len(spans) == sent
    info = api.inspect(session)
    kinds = Counter(s["attributes"]["transcript.kind"] for s in spans)
    assert {k: n for k, n in kinds.items() if k not in ("session", "turn")} == dict(info.counts)
    assert kinds["session"] == 1
    assert kinds["turn"] >= 1 if info.turns else True
    attrs = [s["attributes"] for s in spans]
    tokens = [a for a in attrs if "gen_ai.usage.input_tokens" in a]
    if info.tokens is None or info.tokens.source == "unknown":
        assert not tokens
    else:
        assert sum(a["gen_ai.usage.input_tokens"] for a in tokens) == info.tokens.input
        assert sum(a["gen_ai.usage.output_tokens"] for a in tokens) == info.tokens.output
        assert sum(a["gen_ai.usage.cache_read.input_tokens"] for a in tokens) == info.tokens.cached_input
    failed_cmds = sum(1 for s in spans if s["attributes"]["transcript.kind"] == "shell_command"
                      and s["status_code"] == "ERROR")
    want_failed = sum(1 for i in api.iter_items(session) if i.kind.value == "shell_command"
                      and (getattr(i, "exit_code", None) not in (None, 0) or getattr(i, "status", None) in ("failed", "rejected")))
    assert failed_cmds == want_failed
