"""``export --format otlp``: a session as one OpenTelemetry trace, spans session -> turn -> item.

The witness of the encoding is protobuf itself: every line of the file must parse back into the OTLP
``ExportTraceServiceRequest`` message (after the OTLP/JSON hex ids are turned back into protobuf's
base64), and the span figures must equal the reader's own (``inspect``'s counts and tokens)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is not installed")

from transcript_reader import api  # noqa: E402
from transcript_reader.errors import TranscriptError  # noqa: E402
from transcript_reader.export.otlp import span_id, to_ns, trace_id  # noqa: E402
from transcript_reader.export.otlp_sinks import JsonFileExporter, export_otlp  # noqa: E402
from transcript_reader.model import Executed, ShellCommand  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

SESSIONS = sorted(
    [p for p in (FIXTURES / "transcripts").iterdir() if p.suffix in (".jsonl", ".zst", ".json")
     and not p.name.endswith((".golden.json", ".expected.json"))]
    + sorted((FIXTURES / "exec_streams").glob("*.jsonl"))
    + sorted((FIXTURES / "claude" / "recorded").rglob("*.jsonl"))
)


def spans_of(text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(spans, resources)`` of an OTLP/JSON lines file."""
    spans: list[dict[str, Any]] = []
    resources: list[dict[str, Any]] = []
    for line in text.splitlines():
        doc = json.loads(line)
        for rs in doc["resourceSpans"]:
            resources.append(rs["resource"])
            for ss in rs["scopeSpans"]:
                spans.extend(ss["spans"])
    return spans, resources


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for kv in span.get("attributes", []):
        (kind, value), = kv["value"].items()
        out[kv["key"]] = int(value) if kind == "intValue" else value
    return out


def export_text(path: Path, **kw: Any) -> tuple[str, Any]:
    import io

    buf = io.StringIO()
    figures = export_otlp(path, JsonFileExporter(buf), **kw)
    return buf.getvalue(), figures


def readable(path: Path) -> bool:
    try:
        api.inspect(path)
    except TranscriptError:
        return False
    return True


@pytest.mark.parametrize("path", [p for p in SESSIONS if readable(p)], ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_era_exports_one_trace_whose_spans_are_the_readers_items(path: Path) -> None:
    text, figures = export_text(path)
    info = api.inspect(path)
    spans, _ = spans_of(text)
    kinds = Counter(attrs(s)["transcript.kind"] for s in spans)
    # every item of the reader is one span of its kind, plus one session and one span a turn
    assert {k: n for k, n in kinds.items() if k not in ("session", "turn")} == dict(info.counts)
    assert kinds["session"] == 1
    assert len({s["traceId"] for s in spans}) == 1
    assert figures.spans == kinds
    by_id = {s["spanId"]: s for s in spans}
    assert len(by_id) == len(spans), "span ids are unique"
    (session,) = [s for s in spans if attrs(s)["transcript.kind"] == "session"]
    assert "parentSpanId" not in session
    for s in spans:
        kind = attrs(s)["transcript.kind"]
        if kind == "session":
            continue
        parent = by_id[s["parentSpanId"]]
        want = {"session"} if kind == "turn" else {"turn", "session"}
        assert attrs(parent)["transcript.kind"] in want
        assert int(s["startTimeUnixNano"]) <= int(s["endTimeUnixNano"])


@pytest.mark.parametrize("path", [p for p in SESSIONS if readable(p)][:12], ids=lambda p: p.name)
def test_the_file_is_the_otlp_protobuf_message_in_its_json_mapping(path: Path) -> None:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    text, _ = export_text(path)
    for line in text.splitlines():
        doc = json.loads(line)
        ids = 0
        for rs in doc["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for s in ss["spans"]:
                    assert len(s["traceId"]) == 32 and len(s["spanId"]) == 16  # hex, as OTLP/JSON says
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in s:
                            s[key] = base64.b64encode(bytes.fromhex(s[key])).decode()
                            ids += 1
                    for link in s.get("links", []):
                        for key in ("traceId", "spanId"):
                            link[key] = base64.b64encode(bytes.fromhex(link[key])).decode()
        msg = json_format.ParseDict(doc, ExportTraceServiceRequest())
        assert sum(len(ss.spans) for rs in msg.resource_spans for ss in rs.scope_spans) > 0
        assert ids


def test_the_same_session_exports_the_same_bytes_and_ids_derive_from_the_session_id() -> None:
    path = FIXTURES / "transcripts" / "tool_calls.jsonl"
    first, figures = export_text(path)
    second, _ = export_text(path)
    assert first == second
    info = api.inspect(path)
    assert info.session_id
    assert figures.trace_id == f"{trace_id(info.session_id):032x}"
    spans, resources = spans_of(first)
    (session,) = [s for s in spans if attrs(s)["transcript.kind"] == "session"]
    assert session["spanId"] == f"{span_id(info.session_id, 'session'):016x}"
    assert "service.instance.id" not in json.dumps(resources)  # the SDK's random id is not added


def test_times_are_the_transcripts_own() -> None:
    path = FIXTURES / "transcripts" / "direct_executed.jsonl"
    text, _ = export_text(path)
    spans, _ = spans_of(text)
    items = list(api.iter_items(path))
    by_line = {attrs(s).get("transcript.line"): s for s in spans if attrs(s)["transcript.kind"] not in ("turn", "session")}
    for item in items:
        if item.timestamp:
            assert int(by_line[item.line]["startTimeUnixNano"]) == to_ns(item.timestamp)
    info = api.inspect(path)
    (session,) = [s for s in spans if attrs(s)["transcript.kind"] == "session"]
    assert int(session["startTimeUnixNano"]) == to_ns(info.first_timestamp)
    assert int(session["endTimeUnixNano"]) >= to_ns(info.last_timestamp)


def test_a_command_keeps_its_exit_code_and_duration_and_a_failure_has_error_status() -> None:
    seen_failed = seen_ok = 0
    for path in [p for p in SESSIONS if readable(p)]:
        text, _ = export_text(path)
        spans, _ = spans_of(text)
        cmds = [i for i in api.iter_items(path) if isinstance(i, ShellCommand)]
        by_line: dict[int, list[dict[str, Any]]] = {}
        for s in spans:
            if attrs(s)["transcript.kind"] == "shell_command":
                by_line.setdefault(attrs(s)["transcript.line"], []).append(s)
        for cmd in cmds:
            got = [s for s in by_line[cmd.line] if attrs(s).get("process.exit.code") == cmd.exit_code]
            assert got, (path.name, cmd)
            s = got[0]
            code = s.get("status", {}).get("code", 0)
            if cmd.exit_code not in (None, 0):
                assert code == 2, "a failed command has error status"
                seen_failed += 1
            elif cmd.exit_code == 0 and cmd.status not in ("failed", "rejected"):
                assert code != 2
                seen_ok += 1
            if cmd.duration_s is not None and cmd.timestamp:
                took = int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])
                assert abs(took - cmd.duration_s * 1e9) < 1e3
            if cmd.executed is Executed.NO:
                assert attrs(s)["transcript.executed"] == "no"
    assert seen_failed and seen_ok


def test_an_aborted_turn_has_error_status() -> None:
    path = FIXTURES / "transcripts" / "notices.jsonl"
    aborted = {i.turn_id for i in api.iter_items(path) if i.kind.value == "notice" and i.category == "turn_aborted"}
    assert aborted, "the fixture has an aborted turn"
    text, _ = export_text(path)
    spans, _ = spans_of(text)
    turns = [s for s in spans if attrs(s)["transcript.kind"] == "turn"]
    failed = {attrs(s).get("transcript.turn_id") for s in turns if s.get("status", {}).get("code") == 2}
    assert aborted <= failed
    assert len(failed) < len(turns) or len(turns) == len(aborted)


def test_tokens_are_inspects_and_unknown_usage_is_left_out() -> None:
    with_usage = without = 0
    for path in [p for p in SESSIONS if readable(p)]:
        text, _ = export_text(path)
        spans, _ = spans_of(text)
        info = api.inspect(path)
        (session,) = [s for s in spans if attrs(s)["transcript.kind"] == "session"]
        a = attrs(session)
        token_spans = [s for s in spans if "gen_ai.usage.input_tokens" in attrs(s)]
        if info.tokens is None or info.tokens.source == "unknown":
            assert not token_spans, "an unknown count is never exported as 0"
            without += 1
            continue
        with_usage += 1
        assert sum(attrs(s)["gen_ai.usage.input_tokens"] for s in token_spans) == info.tokens.input
        assert sum(attrs(s)["gen_ai.usage.output_tokens"] for s in token_spans) == info.tokens.output
        assert a["gen_ai.usage.cache_read.input_tokens"] == info.tokens.cached_input
        if info.models:
            assert a["gen_ai.request.model"] == info.models[0]
    assert with_usage and without


def test_mcp_calls_name_their_server_and_a_sub_agent_is_a_linked_trace() -> None:
    path = FIXTURES / "transcripts" / "tool_calls.jsonl"
    text, _ = export_text(path)
    spans, _ = spans_of(text)
    tools = {attrs(s)["gen_ai.tool.name"]: s for s in spans if attrs(s)["transcript.kind"] == "tool_call"}
    assert attrs(tools["mcp__docs__search"])["transcript.mcp.server"] == "docs"
    assert tools["mcp__docs__search"]["status"]["code"] == 2  # the call failed
    spawn = tools["spawn_agent"]
    (link,) = spawn["links"]
    assert link["traceId"] == f"{trace_id('child-1'):032x}"
    assert link["spanId"] == f"{span_id('child-1', 'session'):016x}"
    # and the child names its parent: its session span links back to the parent's trace
    info = api.inspect(path)
    (session,) = [s for s in spans if attrs(s)["transcript.kind"] == "session"]
    assert info.parent_session_id
    assert session["links"][0]["traceId"] == f"{trace_id(info.parent_session_id):032x}"


def test_spans_leave_as_items_arrive_not_at_the_end() -> None:
    """Bounded memory: with a batch of 4 the exporter is called while the session is still being read."""
    from transcript_reader.export.otlp import SpanWriter, export_items
    from transcript_reader.export.otlp_sinks import Batcher

    path = FIXTURES / "transcripts" / "notices.jsonl"
    t = api.Transcript(path)
    read = 0
    calls: list[tuple[int, int]] = []

    class Recorder:
        def export(self, spans: Any) -> Any:
            from opentelemetry.sdk.trace.export import SpanExportResult

            calls.append((read, len(spans)))
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            pass

    def counted() -> Any:
        nonlocal read
        for item in t.items():
            read += 1
            yield item

    writer = SpanWriter(Batcher(Recorder(), 4), session_key="k", agent="codex", agent_version=None, model=None,
                        start_ns=None)
    figures = export_items(counted(), writer, t.info, lambda info: None)
    assert len(calls) >= 2 and all(n <= 4 for _, n in calls)
    assert calls[0][0] < read, "the first batch left before the last item was read"
    assert sum(n for _, n in calls) == sum(figures.spans.values())


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "transcript_reader", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def test_cli_writes_the_file_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "trace.jsonl"
    r = _cli("export", str(FIXTURES / "transcripts" / "tool_calls.jsonl"), "--format", "otlp", "-o", str(out))
    assert r.returncode == 0, r.stderr
    spans, _ = spans_of(out.read_text())
    assert f"({len(spans)} spans)" in r.stderr
    stdout = _cli("export", str(FIXTURES / "transcripts" / "tool_calls.jsonl"), "--format", "otlp")
    assert stdout.stdout == out.read_text()


def test_cli_an_unreachable_endpoint_is_one_error_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = _cli("export", str(FIXTURES / "transcripts" / "tool_calls.jsonl"), "--otlp-endpoint",
             f"http://127.0.0.1:{port}", "--otlp-timeout", "2")
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert "Error: the OTLP endpoint" in r.stderr


def test_cli_without_the_otel_extra_says_how_to_install_it(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['opentelemetry.sdk.trace'] = None; "
            "from transcript_reader.cli import main; sys.argv = ['transcript-reader', 'export', sys.argv[1], "
            "'--format', 'otlp']; main()")
    r = subprocess.run([sys.executable, "-c", code, str(FIXTURES / "transcripts" / "tool_calls.jsonl")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "pip install 'transcript-reader[otel]'" in r.stderr
    assert "Traceback" not in r.stderr


def test_the_session_span_carries_the_cost_with_its_source_or_the_reason() -> None:
    """Priced: ``gen_ai.usage.cost`` with its source and price date; not priced: no cost attribute (never
    0), the reason instead."""
    pytest.importorskip("genai_prices", reason="genai-prices (the price source) is not installed")
    from transcript_reader.usage.pricing import price_session

    priced = unpriced = 0
    for path in [p for p in SESSIONS if readable(p)]:
        text, _ = export_text(path)
        spans, _ = spans_of(text)
        (session,) = [s for s in spans if attrs(s)["transcript.kind"] == "session"]
        a = attrs(session)
        price = price_session(api.inspect(path))
        assert a.get("transcript.cost.source") == price.source
        if price.usd is None:
            assert "gen_ai.usage.cost" not in a and "transcript.cost.usd" not in a
            assert a["transcript.cost.reason"] == price.reason
            unpriced += 1
        else:
            assert a["gen_ai.usage.cost"] == a["transcript.cost.usd"] == pytest.approx(price.usd)
            assert a["transcript.cost.price_date"] == price.price_date and "transcript.cost.reason" not in a
            priced += 1
    assert priced and unpriced
