"""Measuring helpers of ``python -m corpus_tools.bench``: a command timed in a child process with its peak
memory, a row of the table, and the workloads' sources.

Every figure of ours is the real command (``python -m transcript_reader …``) or one library call in a
fresh interpreter, so start-up and imports are in it as a user pays them; peak memory is the child's
``ru_maxrss`` (``os.wait4``), the child alone, never the harness.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_CORPUS = ROOT.parent / "shared" / "corpus"


@dataclass(frozen=True, slots=True)
class Timed:
    """One run of a child process: wall seconds, peak RSS in MB, seconds to its first output line (when
    asked for), its stdout (when kept) and its exit status."""

    wall: float
    peak_mb: float
    first_line_s: float | None
    stdout: bytes
    status: int


def run(cmd: list[str], *, env: dict[str, str] | None = None, keep_stdout: bool = False,
        first_line: bool = False, cwd: Path | None = None, stdin: bytes | None = None) -> Timed:
    """Run ``cmd`` once. ``first_line`` times the first line of its stdout (a search's first hit);
    otherwise stdout goes to /dev/null unless ``keep_stdout``."""
    pipe = keep_stdout or first_line
    # GNU time reports the peak RSS of the command alone (a child forked from this harness would start
    # with the harness's own pages counted in its ru_maxrss)
    timer = ["/usr/bin/time", "-f", "%M"] if os.path.exists("/usr/bin/time") else []
    err = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    proc = subprocess.Popen(timer + cmd, env=env, cwd=cwd, stdout=subprocess.PIPE if pipe else subprocess.DEVNULL,
                            stderr=err, stdin=subprocess.DEVNULL)
    first: float | None = None
    out = b""
    if pipe:
        assert proc.stdout is not None
        if first_line:
            line = proc.stdout.readline()
            first = time.perf_counter() - t0 if line else None
            out = line
        out += proc.stdout.read()
        proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss / 1024
    if timer:
        err.seek(0)
        tail = err.read().strip().rsplit(b"\n", 1)[-1]
        peak = int(tail) / 1024 if tail.isdigit() else float("nan")
    err.close()
    return Timed(wall, peak, first, out if keep_stdout or first_line else b"", proc.returncode)


def best(cmd: list[str], reps: int, **kw: object) -> Timed:
    """The fastest of ``reps`` runs (the least disturbed on a shared machine); its peak memory is the
    highest seen."""
    runs = [run(cmd, **kw) for _ in range(max(1, reps))]  # type: ignore[arg-type]
    fast = min(runs, key=lambda r: r.wall)
    firsts = [r.first_line_s for r in runs if r.first_line_s is not None]
    return Timed(fast.wall, max(r.peak_mb for r in runs), min(firsts) if firsts else None, fast.stdout,
                 max(r.status for r in runs))


def tr(*args: str) -> list[str]:
    """The real command line of ``transcript-reader ARGS``."""
    return [sys.executable, "-m", "transcript_reader", *args]


def py(code: str) -> list[str]:
    """A fresh interpreter running ``code`` (a library call, a floor)."""
    return [sys.executable, "-c", code]


@dataclass(frozen=True, slots=True)
class Row:
    """A line of the table: what was run, our figure, the floor or peer run next to it, their ratio."""

    job: str
    ours: str
    floor_name: str
    floor: str
    ratio: str
    peak_mb: str
    target: str = ""


def secs(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def table(rows: list[Row]) -> str:
    head = ("job", "ours", "floor / peer (same run)", "floor", "ratio", "peak MB", "target")
    cells = [head] + [(r.job, r.ours, r.floor_name, r.floor, r.ratio, r.peak_mb, r.target) for r in rows]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(c) + " |" for c in cells[1:]]
    return "\n".join(out)


def machine_line() -> str:
    import platform

    cpu = platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    la = os.getloadavg()
    return (f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()} "
            f"{platform.release()}; load average {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f} (1/5/15 min)")


def workload_source() -> tuple[str, list[Path]]:
    """Where the rollouts the workloads are built from come from: ``../shared/corpus`` (real Codex
    recordings) when present, else the project's own ``fixtures/`` (a fresh clone); the two are
    different workloads, so the table says which one it measured."""
    if SHARED_CORPUS.is_dir():
        files = sorted(p for p in (SHARED_CORPUS / "realcodex").rglob("*.rollout.jsonl") if p.stat().st_size > 0)
        if files:
            return f"../shared/corpus/realcodex ({len(files)} real Codex rollouts)", files
    files = sorted((ROOT / "fixtures" / "codex_home").rglob("rollout-*.jsonl"))
    return f"fixtures/codex_home ({len(files)} recordings)", files
