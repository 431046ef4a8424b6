"""Exporting a session beyond the terminal: OpenTelemetry traces (``otlp``) and the redaction every export format shares (``redact``)."""
