"""``python -m corpus_tools.bench``: every benchmark of the project in one run, one table on stdout.

Measured side by side in one run on the same machine (no figure is compared across machines):

- census on the generated corpus (500 rollouts, ~20.7k exec scripts; corpus_tools.gen_corpus) with 1
  worker (in-process) and 2 worker processes: wall times and the speed-up (target >= 1.7x on 2 cores);
  with the default cross-checks (lexer + esprima on every script) and without (``--no-cross-check``);
- node+acorn single-threaded over the same scripts (``../shared/bench/bench_acorn.js``, npm-installed
  into a temporary copy), against the census wall times;
- the other helpers' benchmarks, when their modules exist (``corpus_tools.bench_exec``,
  ``corpus_tools.bench_reader``, ``corpus_tools.bench_ls``), run as ``python -m`` and their stdout
  included as it is.

Options: ``--corpus DIR`` reuses a generated corpus; ``--rollouts N``; ``--reps N`` (3: runs per worker count,
alternating, best wall time kept); ``--skip-acorn``; ``--skip-others``. A parallelism check (two CPU
spinners vs one) before each pair of runs says how many cores the machine really lent.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from corpus_tools.gen_corpus import generate

SHARED_BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
OTHERS = ("bench_exec", "bench_reader", "bench_ls")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}, {platform.system()} "
            f"{platform.release()}, load average {load:.2f} at start")


def time_census(corpus: Path, workers: int, cross_check: bool) -> tuple[float, float, dict[str, Any]]:
    """Wall seconds, CPU seconds and the figures of one census, run as the real command in a subprocess
    (interpreter start-up included). CPU is what the census reports (``cpu_s``: its own process plus
    what each worker process reported; workers start from a fork server that is nobody's waited
    child, so getrusage cannot see them)."""
    cmd = [sys.executable, "-m", "transcript_reader", "census", str(corpus / "sessions"), "--json", "--no-progress",
           "--workers", str(workers)]
    if not cross_check:
        cmd.append("--no-cross-check")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=7200)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"census failed: {proc.stderr.strip()[-500:]}")
    out = json.loads(proc.stdout)
    figures: dict[str, Any] = out["figures"]
    figures.pop("parse_time")  # a measurement, not a count
    return wall, float(out["cpu_s"]), figures


def _spin(seconds: float) -> None:
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass


def parallelism_check(seconds: float = 1.0) -> float:
    """How many cores this run really gets: wall time of one process burning ``seconds`` of CPU, times 2,
    over the wall time of two such processes side by side (2.0 on two free cores, 1.0 when the
    machine only lends one core's worth to this run, whatever the process count)."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    walls = []
    for n in (1, 2):
        procs = [ctx.Process(target=_spin, args=(seconds,)) for _ in range(n)]
        t0 = time.perf_counter()
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        walls.append(time.perf_counter() - t0)
    return 2 * walls[0] / walls[1]


def run_acorn(scripts_dir: Path, work: Path) -> dict[str, Any] | str:
    """node+acorn over the scripts, one pass, single-threaded; its JSON summary, or why it did not run."""
    if not SHARED_BENCH.is_dir():
        return f"skipped: {SHARED_BENCH} is absent"
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "skipped: node/npm not installed"
    kit = work / "acorn"
    shutil.copytree(SHARED_BENCH, kit, ignore=shutil.ignore_patterns("corpus", "node_modules"))
    npm = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=kit,
                         capture_output=True, text=True, timeout=600)
    if npm.returncode != 0:
        return f"skipped: npm install failed: {npm.stderr.strip()[-300:]}"
    proc = subprocess.run(["node", "bench_acorn.js", "--dir", str(scripts_dir), "--passes", "1",
                           "--out", str(work / "acorn.json")], cwd=kit, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        return f"failed: {proc.stderr.strip()[-300:]}"
    summary: dict[str, Any] = json.loads(proc.stderr.strip().splitlines()[-1])
    return summary


def run_others(timeout: int = 3600) -> list[tuple[str, str]]:
    out = []
    for name in OTHERS:
        module = f"corpus_tools.{name}"
        if importlib.util.find_spec(module) is None:
            out.append((name, "not present"))
            continue
        proc = subprocess.run([sys.executable, "-m", module], capture_output=True, text=True, timeout=timeout)
        text = proc.stdout.strip() or proc.stderr.strip()[-500:]
        out.append((name, text if proc.returncode == 0 else f"exit {proc.returncode}: {text}"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m corpus_tools.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, help="a corpus made by corpus_tools.gen_corpus (default: generate one)")
    ap.add_argument("--rollouts", type=int, default=500)
    ap.add_argument("--skip-acorn", action="store_true")
    ap.add_argument("--reps", type=int, default=3,
                    help="census runs per worker count without cross-checks, alternating 1 and 2 workers "
                         "(half as many with them); the best wall time counts")
    ap.add_argument("--skip-others", action="store_true")
    args = ap.parse_args(argv)
    rows: list[tuple[str, str]] = [("machine", machine())]
    rows.append(("parallelism check: 2 CPU spinners vs 1 (2.00 = two free cores)", f"{parallelism_check():.2f} cores"))
    with tempfile.TemporaryDirectory(prefix="corpus-bench-") as tmp:
        work = Path(tmp)
        corpus = args.corpus or work / "corpus"
        scripts_dir = work / "scripts"
        manifest = generate(corpus if args.corpus is None else work / "regen", rollouts=args.rollouts,
                            scripts_dir=scripts_dir)
        if args.corpus is None:
            rows.append(("generated corpus", f"{manifest['rollouts']} rollouts, {manifest['exec_cells']:,} exec "
                                             f"scripts, {manifest['bytes'] / 1e6:,.1f} MB (seed {manifest['seed']})"))
        results: dict[tuple[int, bool], float] = {}
        cpus: dict[tuple[int, bool], float] = {}
        counts: dict[tuple[int, bool], dict[str, Any]] = {}
        for cross in (False, True):
            label = "with" if cross else "without"
            walls: dict[int, list[float]] = {1: [], 2: []}
            spare: list[float] = []
            for rep in range(args.reps if not cross else max(1, args.reps // 2)):
                spare.append(parallelism_check(0.5))
                for workers in ((1, 2) if rep % 2 == 0 else (2, 1)):  # alternate: drift hits both
                    wall, cpu, c = time_census(corpus, workers, cross)
                    walls[workers].append(wall)
                    if wall <= min(walls[workers]):
                        results[(workers, cross)], cpus[(workers, cross)] = wall, cpu
                    counts[(workers, cross)] = c
            for workers in (1, 2):
                wall, cpu, c = results[(workers, cross)], cpus[(workers, cross)], counts[(workers, cross)]
                rows.append((f"census, {workers} worker{'s' if workers > 1 else ''}, {label} cross-checks",
                             f"best {wall:,.2f} s wall of {', '.join(f'{w:.2f}' for w in walls[workers])}; "
                             f"{cpu:,.2f} s CPU ({c['files']} files, {c['scripts']:,} scripts)"))
            same = counts[(1, cross)] == counts[(2, cross)]
            rows.append((f"speed-up 1 -> 2 workers, {label} cross-checks",
                         f"{results[(1, cross)] / results[(2, cross)]:.2f}x wall, best vs best (target >= 1.7x); "
                         f"figures identical: {same}; cores free before each pair: "
                         f"{', '.join(f'{x:.2f}' for x in spare)}"))
            # What 2 free cores would give: the 1-worker CPU time over half the 2-worker CPU time. Shown
            # because on a shared machine the wall-clock ratio measures the neighbours, not the census.
            # (The fork server's one-off imports are not in the 2-worker CPU.)
            rows.append((f"CPU-bound speed-up on 2 free cores, {label} cross-checks",
                         f"{cpus[(1, cross)] / (cpus[(2, cross)] / 2):.2f}x (1-worker CPU / half the 2-worker CPU)"))
        if not args.skip_acorn:
            acorn = run_acorn(scripts_dir, work)
            if isinstance(acorn, dict):
                acorn_s = acorn["cold_total_ms"] / 1000
                acorn_cpu = acorn["pass_cpu_ms"][0] / 1000
                rows.append(("node+acorn, 1 thread, same scripts (1 pass, incl. JIT warm-up)",
                             f"{acorn_s:,.2f} s wall, {acorn_cpu:,.2f} s CPU ({acorn['n']:,} scripts, "
                             f"{acorn['parse_errors']} rejected; {acorn['parser']})"))
                for cross in (False, True):
                    for workers in (1, 2):
                        rows.append((f"census wall / acorn, {workers} worker{'s' if workers > 1 else ''}, "
                                     f"{'with' if cross else 'without'} cross-checks",
                                     f"{results[(workers, cross)] / acorn_s:.2f}x wall"))
                for cross in (False, True):
                    rows.append((f"census CPU / acorn CPU, {'with' if cross else 'without'} cross-checks",
                                 f"{cpus[(1, cross)] / acorn_cpu:.2f}x (the census also reads every line and "
                                 "builds the timeline; acorn only parses the scripts)"))
            else:
                rows.append(("node+acorn", acorn))
    if not args.skip_others:
        rows.extend(run_others())
    width = max(len(k) for k, v in rows if "\n" not in v)
    print("| benchmark | figure |\n|---|---|")
    for k, v in rows:
        if "\n" in v:
            print(f"| {k} | (below) |")
        else:
            print(f"| {k.ljust(width)} | {v} |")
    for k, v in rows:
        if "\n" in v:
            print(f"\n### {k}\n\n{v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
