"""The header of an exported page (HTML, Markdown): the facts a reader of a shared session wants first,
each said as the transcript knows it (an unknown is "unknown", never 0): the model, the tokens, the
cost, the files changed, the tests, and, for a redacted export, what was redacted (counted, never shown)."""

from __future__ import annotations

from typing import Any

from transcript_reader.model import SessionInfo
from transcript_reader.present.common import Tally


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def header_rows(tally: Tally, info: SessionInfo | None, cost: Any = None, redaction: Any = None
                ) -> list[tuple[str, str]]:
    """``(label, value)`` rows; ``cost`` an ``export.cost.Cost`` or None, ``redaction`` a
    ``export.redact.Summary`` when the export was redacted."""
    rows: list[tuple[str, str]] = []
    rows.append(("Model", ", ".join(info.models) if info is not None and info.models else "unknown"))
    tok = info.tokens if info is not None else None
    if tok is None or tok.source == "unknown":  # None / "unknown": the file records no usage
        rows.append(("Tokens", "unknown (the transcript records no usage)"))
    else:
        rows.append(("Tokens", f"{tok.total:,} (input {tok.input:,}, cached {tok.cached_input:,}, "
                               f"output {tok.output:,})"))
    rows.append(("Cost", f"${cost.usd:,.4f} ({cost.source})" if cost is not None else "unknown"))
    rows.append(("Files changed", str(len(tally.files))))
    runs = tally.runs_passed + tally.runs_failed + tally.runs_other
    if runs:
        bits = [f"{n} {w}" for n, w in ((tally.runs_passed, "passing"), (tally.runs_failed, "failing"),
                                        (tally.runs_other, "without a result")) if n]
        rows.append(("Tests", f"{_plural(runs, 'run')}: {', '.join(bits)}"))
    else:
        rows.append(("Tests", "none run"))
    if redaction is not None:
        rows.append(("Redacted", redaction.words()))
    return rows
