"""Tokens and cost where a person or an agent reads a session: ``inspect`` (text and ``--json``), the
``show`` header, the exported page's header and the MCP inspect answer; each says the same figure as
``usage.pricing`` and the accounting, an unknown as null / "unknown" (never 0). A command that prices
nothing never imports the price data (it costs ~0.4 s to import)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client._memory import InMemoryTransport

from tests.conftest import FIXTURES
from transcript_reader import api
from transcript_reader.mcp import ServerConfig, create_server
from transcript_reader.present.header import cost_words, tokens_words
from transcript_reader.usage.pricing import price_session

pytest.importorskip("genai_prices", reason="genai-prices (the price source) is not installed")

ROOT = Path(__file__).resolve().parents[1]
#: A real Codex 0.171.0 recording (gpt-5.5, usage on every call) and a 0.20 one that records no usage.
PRICED = ROOT / "transcript_reader" / "examples" / "codex-0.171.0-multi_step.rollout.jsonl"
NO_USAGE = next(p for p in sorted((FIXTURES / "transcripts").glob("*.jsonl"))
                if api.inspect(p).tokens is None)
CLAUDE = next((FIXTURES / "claude" / "recorded").rglob("*.projects/*/*.jsonl"))


def cli(*args: str, env: dict[str, str] | None = None) -> str:
    out = subprocess.run([sys.executable, "-m", "transcript_reader", *args], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "NO_COLOR": "1", **(env or {})})
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("path", [PRICED, NO_USAGE, CLAUDE], ids=lambda p: p.name)
def test_inspect_json_carries_tokens_and_the_cost_with_its_source(path: Path) -> None:
    info = api.inspect(path)
    got = json.loads(cli("inspect", str(path), "--json"))["info"]
    price = price_session(info)
    assert got["cost"] == {"usd": price.usd, "source": price.source, "price_date": price.price_date,
                           "reason": price.reason}
    if info.tokens is None:
        assert got["tokens"] is None and got["cost"]["usd"] is None
        assert got["cost"]["reason"] == "no usage recorded"
    else:
        assert {k: got["tokens"][k] for k in ("input", "cached_input", "output", "reasoning", "total")} == {
            "input": info.tokens.input, "cached_input": info.tokens.cached_input, "output": info.tokens.output,
            "reasoning": info.tokens.reasoning, "total": info.tokens.total}
        assert got["cost"]["usd"] is not None and got["cost"]["usd"] > 0
        assert got["cost"]["price_date"] == info.usage[-1].day


@pytest.mark.parametrize("path", [PRICED, NO_USAGE], ids=lambda p: p.name)
def test_inspect_text_and_the_show_header_say_tokens_and_cost(path: Path) -> None:
    info = api.inspect(path)
    words = cost_words(price_session(info))
    assert f"cost               {words}" in cli("inspect", str(path)).splitlines()
    header = cli("show", str(path), "--no-pager").splitlines()[:4]
    assert f"tokens {tokens_words(info.tokens)} · cost {words}" in header
    if info.tokens is None:
        assert words == "unknown (no usage recorded)" and "$0" not in words
    else:
        assert words.startswith("$") and "genai-prices" in words and info.usage[-1].day in words


def test_the_exported_page_header_names_the_cost_and_its_source() -> None:
    page = cli("export", str(CLAUDE), "--format", "md")
    assert f"| Cost | {cost_words(price_session(api.inspect(CLAUDE)))} |" in page
    assert "| Cost | unknown (no usage recorded) |" in cli("export", str(NO_USAGE), "--format", "md")


def test_the_mcp_inspect_answer_carries_the_cost() -> None:
    async def main() -> dict[str, object]:
        config = ServerConfig(codex_home=FIXTURES / "codex_home", allow_roots=(ROOT,))
        async with Client(InMemoryTransport(create_server(config))) as client:
            result = await client.call_tool("agent_transcript_inspect_file", {"path": str(PRICED)})
            payload: dict[str, object] = json.loads(result.content[0].text)  # type: ignore[union-attr]
            return payload

    info = anyio.run(main)["info"]
    assert isinstance(info, dict)
    assert info["cost"] == price_session(api.inspect(PRICED)).as_json() and info["cost"]["usd"]


def test_commands_that_price_nothing_never_import_the_price_data() -> None:
    """``ls`` and ``read`` run in this process's interpreter; the price data must not be among its modules
    afterwards (``inspect`` is the control: it prices, so it does import it)."""
    probe = (
        "import sys\n"
        "from transcript_reader.cli import main\n"
        "for args in {runs!r}:\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('genai_prices' in sys.modules)\n"
    )
    env = {**os.environ, "CODEX_HOME": str(FIXTURES / "codex_home"), "NO_COLOR": "1"}

    def imported(*runs: list[str]) -> bool:
        out = subprocess.run([sys.executable, "-c", probe.format(runs=list(runs))], capture_output=True,
                             text=True, timeout=120, env=env, cwd=ROOT)
        assert out.stdout.strip(), out.stderr
        return out.stdout.strip().splitlines()[-1] == "True"

    assert not imported(["ls", "--all-projects"], ["ls", "--all-projects", "--json"],
                        ["read", str(PRICED), "--json"])
    assert imported(["inspect", str(PRICED), "--json"])


def test_the_show_header_answers_from_the_store_without_reading_the_file(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the home's store holds the very file version, ``show``'s header takes its tokens and cost
    from there (the same words as a read gives) and reads nothing before the first item."""
    from transcript_reader.cli import show

    day = tmp_path / "codex" / "sessions" / "2026" / "01" / "02"
    day.mkdir(parents=True)
    path = day / "rollout-2026-01-02T03-04-05-0199a0b0-0000-7000-8000-000000000001.jsonl"
    path.write_bytes(PRICED.read_bytes())
    env = {"CODEX_HOME": str(tmp_path / "codex"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "CLAUDE_CONFIG_DIR": str(tmp_path / "no-claude")}
    want = show.usage_line(str(path))  # no store yet: read from the file
    cli("ls", "--all", "--all-projects", env={**os.environ, **env})  # builds the store
    for k, v in env.items():
        monkeypatch.setenv(k, v)

    def no_read(*_a: object, **_k: object) -> None:
        raise AssertionError("the header read the file although the store holds it")

    monkeypatch.setattr(api, "inspect", no_read)
    assert show.usage_line(str(path)) == want
    assert want.startswith("tokens ") and "$" in want
