"""What esprima still earns next to the analyzer's own reading (tree-sitter for the calls, V8 for the
verdict): on every cell both read, whether the calls (name, span, argument text) and the entries agree,
and how many cells each can read at all.

    python -m corpus_tools.esprima_check                      # the bench sample, the real corpus, the hand cases
    python -m corpus_tools.esprima_check DIR_OR_FILE ... [--limit N]

The bench sample is the first ``--limit`` (default 2,000) scripts of ``bench-work/exec/corpus`` (written by
``python -m corpus_tools.bench_exec``); the real corpus is ``../shared/corpus`` when present.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _calls(a: Any) -> list[tuple[str, int, int, str]]:
    return [(c.name, c.start.offset, c.end.offset, c.argument_source) for c in a.calls]


def _entries(a: Any) -> list[tuple[str, Any]]:
    return [(e.kind.value, getattr(e, "command", None)) for e in a.entries]


def check(files: list[Path]) -> tuple[Counter[str], float, float, list[str]]:
    """(counts, seconds of the analyzer, seconds of esprima, files whose calls differ)."""
    from exec_grammar import analyze

    counts: Counter[str] = Counter()
    ours = theirs = 0.0
    differ: list[str] = []
    for f in files:
        script = f.read_text(encoding="utf-8", errors="surrogatepass")
        t = time.process_time()
        a = analyze(script)
        ours += time.process_time() - t
        t = time.process_time()
        e = analyze(script, parser="esprima")
        theirs += time.process_time() - t
        compiles = a.parse_error is None
        parses = e.parse_error is None and e.parser.value == "esprima"
        counts["cells"] += 1
        counts["V8 compiles"] += compiles
        counts["esprima parses"] += parses
        counts["V8 compiles, esprima rejects"] += compiles and not parses
        counts["esprima parses, V8 rejects"] += parses and not compiles
        if compiles and parses:
            counts["both read"] += 1
            counts["calls differ"] += _calls(a) != _calls(e)
            if _calls(a) != _calls(e):
                differ.append(str(f))
            counts["entries differ"] += _entries(a) != _entries(e)
    return counts, ours, theirs, differ


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--limit", type=int, default=2000, help="bench scripts to read (default 2,000)")
    args = ap.parse_args(argv)
    groups: list[tuple[str, list[Path]]] = []
    if args.paths:
        files: list[Path] = []
        for p in args.paths:
            files.extend(sorted(p.rglob("*.js")) if p.is_dir() else [p])
        groups.append(("given", files))
    else:
        bench = ROOT / "bench-work" / "exec" / "corpus"
        if bench.is_dir():
            groups.append(("bench sample", sorted(bench.glob("*.js"))[: args.limit]))
        shared = ROOT.parent / "shared" / "corpus"
        if shared.is_dir():
            groups.append(("real corpus", sorted(shared.rglob("*.js"))))
        groups.append(("hand cases", sorted((ROOT / "fixtures" / "js" / "hand").glob("*.js"))))
    for label, files in groups:
        counts, ours, theirs, differ = check(files)
        print(f"{label}: " + ", ".join(f"{k} {v:,}" for k, v in counts.items())
              + f"; CPU: analyzer {ours:.2f} s, esprima {theirs:.2f} s")
        for f in differ[:5]:
            print(f"  calls differ: {f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
