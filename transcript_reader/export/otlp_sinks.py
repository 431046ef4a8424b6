"""Where a session's spans go: an OTLP/HTTP endpoint (the SDK's own exporter) or a file of OTLP/JSON
written with that exporter's own protobuf encoder and protobuf's JSON mapping; and ``export_otlp``,
which reads a session into one of them.

The OpenTelemetry packages are an optional extra (``pip install 'transcript-reader[otel]'``): without
them an export says so (``MissingDependencyError``), nothing else needs them.

The file holds one OTLP ``ExportTraceServiceRequest`` a line, in the OTLP/JSON encoding
(``resourceSpans`` -> ``scopeSpans`` -> ``spans``; trace and span ids as hex, enums as numbers), the
shape the OpenTelemetry Collector's file exporter writes and its ``otlpjsonfile`` receiver reads; a
small session is one line. A line is written per batch of spans, so the file grows as the session is
read and nothing is held for the end.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from transcript_reader.errors import TranscriptError
from transcript_reader.export.cost import Cost, session_cost
from transcript_reader.export.otlp import ExportFigures, SpanWriter, export_items, to_ns
from transcript_reader.export.redact import Redactor
from transcript_reader.model import Format, SessionInfo


class MissingDependencyError(TranscriptError):
    """An optional extra the command needs is not installed."""

    code = "missing_dependency"


class ExportError(TranscriptError):
    """The spans could not be delivered (the endpoint refused them, or could not be reached)."""

    code = "export_error"


def require_otel() -> None:
    """Raise ``MissingDependencyError`` with the install command when the OpenTelemetry SDK or its
    OTLP exporter is missing."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as e:
        raise MissingDependencyError(
            f"OTLP export needs the OpenTelemetry SDK and OTLP exporter ({e.name} is missing): "
            "pip install 'transcript-reader[otel]'") from None


class Batcher:
    """An SDK ``SpanProcessor`` that hands ended spans to an exporter in batches, in this thread, and
    remembers a failed export (a processor must not raise; ``check`` raises it for the caller). The
    SDK's ``BatchSpanProcessor`` would drop a failure silently and buffer in another thread."""

    def __init__(self, exporter: Any, batch: int = 512) -> None:
        self.exporter = exporter
        self.batch = batch
        self.spans: list[Any] = []
        self.failure: str | None = None

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        pass

    def _on_ending(self, span: Any) -> None:  # the SDK's SpanProcessor hook before on_end
        pass

    def on_end(self, span: Any) -> None:
        self.spans.append(span)
        if len(self.spans) >= self.batch:
            self.flush()

    def flush(self) -> None:
        if not self.spans or self.failure is not None:
            return
        from opentelemetry.sdk.trace.export import SpanExportResult

        spans, self.spans = self.spans, []
        try:
            result = self.exporter.export(spans)
        except OSError as e:
            self.failure = f"cannot write the spans: {e.strerror or e}"
        else:
            if result is not SpanExportResult.SUCCESS:
                self.failure = getattr(self.exporter, "why", None) or "the OTLP endpoint did not accept the spans"
        self.check()

    def check(self) -> None:
        if self.failure is not None:
            raise ExportError(self.failure)

    def drop(self) -> None:
        self.spans = []

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        self.flush()
        return True


def _hex_ids(node: Any) -> None:
    """OTLP/JSON writes trace and span ids as hex; protobuf's JSON mapping writes bytes as base64."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for value in node:
            _hex_ids(value)


class JsonFileExporter:
    """An SDK ``SpanExporter`` writing OTLP/JSON lines to ``out`` (see the module's docstring)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def export(self, spans: Sequence[Any]) -> Any:
        from google.protobuf import json_format
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        doc = json_format.MessageToDict(encode_spans(spans), use_integers_for_enums=True)
        _hex_ids(doc)
        self.out.write(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL of ``endpoint``: a bare ``http://host:4318`` gets the ``/v1/traces``
    path (as the OTLP exporter's own base-endpoint setting does); a URL with a path is used as given."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        from transcript_reader.errors import InvalidArgumentError

        raise InvalidArgumentError(f"not an http(s) OTLP endpoint: {endpoint!r}")
    if parts.path in ("", "/"):
        return endpoint.rstrip("/") + "/v1/traces"
    return endpoint


class HttpExporter:
    """The SDK's OTLP/HTTP span exporter, with the reason of a failed export kept for the error."""

    def __init__(self, endpoint: str, *, timeout_s: float = 30.0, headers: dict[str, str] | None = None) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.url = traces_url(endpoint)
        self.inner = OTLPSpanExporter(endpoint=self.url, timeout=timeout_s, headers=headers)
        self.why: str | None = None

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        result = self.inner.export(spans)
        if result is not SpanExportResult.SUCCESS:
            self.why = f"the OTLP endpoint {self.url} did not accept the spans (refused, unreachable or an error)"
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()


def agent_of(fmt: Format) -> str:
    return "claude-code" if fmt in (Format.CLAUDE, Format.CLAUDE_STREAM) else "codex"


def _mtime_ns(path: Any) -> int:
    """The file's modification time, whole seconds (a transcript that records no time is placed there)."""
    import os

    try:
        return int(os.stat(path).st_mtime) * 1_000_000_000
    except (OSError, TypeError, ValueError):
        return 0


def export_otlp(path: Any, exporter: Any, *, redactor: Redactor | None = None,
                cost: Callable[[SessionInfo], Cost | None] = session_cost, batch: int = 512) -> ExportFigures:
    """Read the session at ``path`` and export it to ``exporter`` (an SDK ``SpanExporter``) as one trace,
    streaming; ``redactor`` redacts every item (and the session's figures) first. The trace's ids derive
    from the session id the file's head names (its file name when the head has none)."""
    require_otel()
    from transcript_reader.api import Transcript

    t = Transcript(path)
    head = t.provider.read_head(t.path)
    key = head.session_id or t.provider.session_id_from_name(Path(str(t.path)).name) or Path(str(t.path)).name
    if redactor is not None:
        redactor.add_home_of(head.cwd)
    writer = SpanWriter(Batcher(exporter, batch), session_key=key, agent=agent_of(t.format),
                        agent_version=head.cli_version, model=head.model, start_ns=to_ns(head.timestamp),
                        fallback_ns=_mtime_ns(t.path))
    items = t.items() if redactor is None else (redactor.item(i) for i in t.items())

    def info() -> SessionInfo:
        got = t.info()
        return redactor.info(got) if redactor is not None else got  # type: ignore[return-value]

    return export_items(items, writer, info, cost)
