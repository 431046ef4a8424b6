"""The analyzer checked against V8: the invariant, and the scripts it is checked on.

For one script, :func:`compare` returns what the static reading got wrong, given what V8 did with it
(``exec_grammar.oracle``):

- the parse verdict must be V8's (an import that fails to link counts as parsed: V8 compiled it);
- every call V8 made before the cell ended is listed by the analyzer (same tool name, on the lines the
  listed call spans) or covered by a whole-script entry;
- a listed call with a literal argument receives that value, as V8 sends it (``JSON.stringify``);
- a proven call (``Analysis.proven``) is one V8 made, whenever V8 ran the script to its end.

Used by ``tests/test_exec_oracle.py`` (the real corpus, the hand cases, the bench corpus) and by the
differential fuzzer ``corpus_tools.fuzz_exec``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from exec_grammar import Analysis, ShellCommandEntry
from exec_grammar.oracle import OracleResult

__all__ = ["compare", "hand_scripts", "real_scripts", "same_value"]

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def same_value(ours: Any, v8: Any) -> bool:
    """Our decoded literal equals the value V8's ``JSON.stringify`` sent (numbers as doubles; a
    non-finite double is sent as null)."""
    if isinstance(ours, bool) or isinstance(v8, bool):
        return ours is v8
    if isinstance(ours, int | float) and not isinstance(ours, bool):
        if isinstance(ours, float) and not math.isfinite(ours):
            return v8 is None
        return isinstance(v8, int | float) and float(ours) == float(v8)
    if isinstance(ours, str):
        return ours == v8
    if ours is None:
        return v8 is None
    if isinstance(ours, list):
        return isinstance(v8, list) and len(ours) == len(v8) and all(map(same_value, ours, v8))
    if isinstance(ours, dict):
        return (
            isinstance(v8, dict)
            and set(ours) == set(v8)
            and all(same_value(ours[k], v8[k]) for k in ours)
        )
    return False


def compare(script: str, analysis: Analysis, v8: OracleResult) -> list[str]:
    """What the analysis says that V8 contradicts (empty: they agree)."""
    problems: list[str] = []
    if v8.verdict in ("oracle-error", "bad-input"):
        return problems  # the witness itself failed (a loaded machine's timeout): nothing to compare
    ours_parsed = analysis.parse_error is None
    if ours_parsed != v8.parsed:
        problems.append(
            f"verdict: analyzer {'parses' if ours_parsed else 'rejects'} ({analysis.parse_error}), "
            f"V8 {v8.verdict} ({v8.error})"
        )
        return problems
    if not v8.parsed:
        return problems
    whole = any(isinstance(e, ShellCommandEntry) and e.whole_script for e in analysis.entries)
    calls = analysis.calls
    made: list[int] = []  # index of the listed call each V8 call matched
    for oc in v8.calls:
        if oc.after_end:
            continue
        i = _site(calls, oc.name, oc.line, oc.column)
        if i < 0:
            if not whole:
                problems.append(f"missed: V8 called {oc.name} (line {oc.line}), the analyzer lists no such call")
            continue
        made.append(i)
        c = calls[i]
        if not c.computed and c.argument_source and oc.json is not None and not same_value(c.argument, oc.argument):
            problems.append(
                f"value: {oc.name} (line {oc.line}) receives {oc.json[:200]}, the analyzer decodes {c.argument!r:.200}"
            )
    if v8.completed and not v8.exited and not v8.limit:
        for i in analysis.proven:
            if i not in made:
                c = calls[i]
                problems.append(f"proof: the analyzer proves {c.name} (line {c.start.line}) ran; V8 did not call it")
    return problems


def _site(calls: Any, name: str, line: int | None, column: int | None) -> int:
    """The listed call V8's call came from: the innermost one of that name (``*``, a computed name,
    matches any) whose span holds V8's call site; without a site (code run by eval), -1."""
    if line is None:
        return -1
    best = -1
    for i, c in enumerate(calls):
        if c.name != name and c.name != "*":
            continue
        at = (line, (column or 1) - 1)
        if (c.start.line, c.start.column) <= at < (c.end.line, c.end.column) or (
            column is None and c.start.line <= line <= c.end.line
        ):
            if best < 0 or calls[best].start.offset <= c.start.offset:
                best = i
    return best


def real_scripts() -> Iterator[tuple[str, str]]:
    """Every real exec script in ``../shared/corpus``: the public scripts and the ``exec`` inputs of the
    real Codex recordings."""
    corpus = SHARED / "corpus"
    for p in sorted((corpus / "public" / "exec-scripts").glob("*.js")):
        yield f"public/{p.name}", p.read_text(encoding="utf-8")
    for rollout in sorted(corpus.glob("realcodex/*/*.rollout.jsonl")):
        for no, line in enumerate(rollout.read_text(encoding="utf-8").splitlines(), 1):
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            payload = rec.get("payload") if isinstance(rec, dict) else None
            if isinstance(payload, dict) and payload.get("type") == "custom_tool_call" and payload.get("name") == "exec":
                if isinstance(payload.get("input"), str):
                    yield f"{rollout.relative_to(corpus)}:{no}", payload["input"]


def hand_scripts() -> Iterator[tuple[str, str]]:
    """The hand-written cases: ``fixtures/js/hand`` and, when present, ``../shared/bench/hand``."""
    for d in (ROOT / "fixtures" / "js" / "hand", SHARED / "bench" / "hand"):
        for p in sorted(d.glob("*.js")) if d.is_dir() else ():
            yield f"{d.name}/{p.name}" if d.parent.name == "bench" else f"fixtures/{p.name}", p.read_text(
                encoding="utf-8"
            )
