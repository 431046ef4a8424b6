"""``export --format otlp`` of a big session, timed side by side with reading the same file.

Builds a rollout of ``--size-mb`` (default 1024) from real 0.171 turns (``bench_reader.build``: the
same workload the reader's own benchmark reads), then runs, each in a fresh process, alternating passes
and keeping the best of each:

- ``inspect`` (one streaming pass, every item built and counted: the reader's floor);
- ``read`` (the whole timeline as text, to /dev/null: what a plain read costs);
- ``export --format otlp -o FILE`` (every item a span, encoded and written as OTLP/JSON);
- ``export --format otlp --redact -o FILE`` (the same, every item scanned for secrets first);

with each one's peak RSS (the export streams: its memory must not grow with the file), the ratio of
each export to ``read``, the spans and bytes written, and the load average (the machine may be shared).

    python -m corpus_tools.bench_export                  # 1 GB
    python -m corpus_tools.bench_export --size-mb 64 --reps 1
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from corpus_tools.bench_reader import build
from corpus_tools.bench_run import ROOT, Row, machine_line, ratio, run, secs, table, tr, workload_source


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m corpus_tools.bench_export", description=__doc__.split("\n")[0])
    ap.add_argument("--size-mb", type=float, default=1024)
    ap.add_argument("--reps", type=int, default=1, help="passes of each command (best kept)")
    ap.add_argument("--work", default=str(ROOT / "bench-work"), help="where the rollout is built (reused)")
    ap.add_argument("--no-redact", action="store_true", help="skip the --redact export")
    ap.add_argument("--json", action="store_true", help="the figures as JSON")
    args = ap.parse_args(argv)

    label, sources = workload_source()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    path = work / f"big-{args.size_mb:g}mb.rollout.jsonl"
    if not path.exists() or abs(path.stat().st_size - args.size_mb * 1024 * 1024) > 0.05 * args.size_mb * 1024 * 1024:
        print(f"building {path} ({args.size_mb:g} MB from {label}) ...", file=sys.stderr, flush=True)
        build(path, args.size_mb, sources)
    size_mb = path.stat().st_size / 1024 / 1024
    load_before = os.getloadavg()
    out = Path(tempfile.mkdtemp(prefix="bench-export-")) / "trace.otlp.jsonl"
    env = {**os.environ, "CODEX_HOME": str(work / "empty-home")}
    jobs: dict[str, list[str]] = {
        "inspect": tr("inspect", str(path)),
        "read": tr("read", str(path)),
        "export otlp": tr("export", str(path), "--format", "otlp", "-o", str(out)),
    }
    if not args.no_redact:
        jobs["export otlp --redact"] = tr("export", str(path), "--format", "otlp", "--redact", "-o", str(out))
    best: dict[str, tuple[float, float]] = {}
    spans: dict[str, int] = {}
    for _ in range(max(1, args.reps)):
        for name, cmd in jobs.items():  # alternating: a burst of load falls on every job alike
            print(f"running {name} ...", file=sys.stderr, flush=True)
            t = run(cmd, env=env)
            if t.status != 0:
                print(f"{name} failed (exit {t.status})", file=sys.stderr)
                return 1
            wall, peak = best.get(name, (float("inf"), 0.0))
            best[name] = (min(wall, t.wall), max(peak, t.peak_mb))
            if name.startswith("export"):
                spans[name] = _spans(out)
                spans[name + " bytes"] = out.stat().st_size
    load_after = os.getloadavg()
    out.unlink(missing_ok=True)
    floor = best["read"][0]
    rows = [Row(job=name, ours=secs(wall), floor_name="read (same run)", floor=secs(floor),
                ratio=ratio(wall, floor), peak_mb=f"{peak:.0f}",
                target="streams: peak MB flat with size" if name.startswith("export") else "")
            for name, (wall, peak) in best.items()]
    figures = {"file_mb": round(size_mb, 1), "workload": label, "jobs": {k: {"wall_s": round(w, 2), "peak_mb": round(p)}
                                                                       for k, (w, p) in best.items()},
               "spans": spans, "load_before": load_before, "load_after": load_after}
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"export --format otlp of a {size_mb:.0f} MB rollout ({label}); {machine_line()}")
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    print(table(rows))
    for k, v in spans.items():
        print(f"{k}: {v:,}")
    return 0


def _spans(path: Path) -> int:
    """Spans in an OTLP/JSON lines file (read a line at a time)."""
    n = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            for rs in doc.get("resourceSpans", []):
                for ss in rs.get("scopeSpans", []):
                    n += len(ss.get("spans", []))
    return n


if __name__ == "__main__":
    raise SystemExit(main())
