"""``python -m corpus_tools.bench``: the one benchmark command. It builds every workload, runs each of our
jobs next to its floor or peer in the same run, and prints one table: job, our time, the floor or peer,
the ratio, our peak memory, the target.

Workloads come from ``../shared/corpus`` (real Codex recordings) when it is present, else from the
project's ``fixtures/`` (a fresh clone); the table says which, since they are different workloads. Jobs
(``--jobs``, comma-separated; all by default):

- ``exec``: the exec-script analyzer vs node+acorn and vs tree-sitter's bare parse (``bench_exec``);
- ``reader``: the timeline, ``final`` and ``conversation`` vs a bare decode, per ``--sizes`` rollout;
- ``tail``: ``read --tail 100`` vs ``tail -n 100`` and the whole ``show --no-pager`` vs the decode;
- ``search``: cross-session search, a miss and a frequent word, vs ``rg`` on the same home
  (``--home-mb``, ``--home-sessions``), and the time to the first hit;
- ``ls``: cold and warm, per ``--ls-sessions`` home, vs the start-up floor (and ccusage-codex if installed);
- ``census``: MB/s per worker vs the decode, and the 1 -> 2 worker speed-up, over a home of real-shaped
  sessions (``--census-sessions``, ``--census-mb``).

``--quick`` is a short run (small sizes, named in the table). Generated workloads are kept under
``bench-work/`` (``--work``) and reused when their size matches.

    python -m corpus_tools.bench                      # everything, full sizes (about an hour)
    python -m corpus_tools.bench --quick              # a few minutes
    python -m corpus_tools.bench --jobs search,ls --home-mb 1024 --ls-sessions 1000,10000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from corpus_tools import bench_jobs as jobs
from corpus_tools.bench_home import build_home
from corpus_tools.bench_run import ROOT, Row, machine_line, table, workload_source

ALL_JOBS = ("exec", "reader", "tail", "search", "ls", "census")


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _sizes(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m corpus_tools.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", default=",".join(ALL_JOBS), help=f"comma-separated subset of {', '.join(ALL_JOBS)}")
    ap.add_argument("--quick", action="store_true", help="small sizes: a run of a few minutes")
    ap.add_argument("--sizes", default=None, help="rollout sizes in MB for reader/tail (default 100,1024)")
    ap.add_argument("--show-max-mb", type=float, default=None,
                    help="largest rollout the whole show is run on (default: every size)")
    ap.add_argument("--home-mb", type=float, default=None, help="size of the search home (default 1024)")
    ap.add_argument("--home-sessions", type=int, default=None, help="sessions in the search home (default 1000)")
    ap.add_argument("--ls-sessions", default=None, help="ls home sizes (default 1000,10000)")
    ap.add_argument("--census-sessions", type=int, default=None, help="sessions in the census home (default 200)")
    ap.add_argument("--census-mb", type=float, default=None, help="size of the census home (default 100)")
    ap.add_argument("--scripts", type=int, default=None, help="exec scripts (default 20000)")
    ap.add_argument("--reps", type=int, default=None, help="runs of each side, best kept (default 3; quick 2)")
    ap.add_argument("--work", type=Path, default=ROOT / "bench-work", help="where workloads are built and kept")
    a = ap.parse_args(argv)
    q = a.quick
    sizes = _sizes(a.sizes or ("20" if q else "100,1024"))
    home_mb = a.home_mb or (100.0 if q else 1024.0)
    home_n = a.home_sessions or (200 if q else 1000)
    ls_n = [int(x) for x in _sizes(a.ls_sessions or ("1000" if q else "1000,10000"))]
    scripts = a.scripts or (2000 if q else 20000)
    census_n = a.census_sessions or (50 if q else 200)
    census_mb = a.census_mb or (20.0 if q else 100.0)
    reps = a.reps or (2 if q else 3)
    wanted = [j.strip() for j in a.jobs.split(",") if j.strip()]
    unknown = set(wanted) - set(ALL_JOBS)
    if unknown:
        ap.error(f"unknown job(s): {', '.join(sorted(unknown))}")
    work: Path = a.work
    work.mkdir(parents=True, exist_ok=True)
    source, templates = workload_source()
    header = [f"machine: {machine_line()}", f"workloads from: {source}",
              f"sizes: rollouts {', '.join(f'{s:g} MB' for s in sizes)}; search home {home_n:,} sessions "
              f"~{home_mb:g} MB; ls homes {', '.join(f'{n:,}' for n in ls_n)} sessions; {scripts:,} exec scripts; "
              f"census home {census_n:,} sessions ~{census_mb:g} MB; best of {reps}" + (" (--quick)" if q else "")]
    for line in header:
        _log(line)
    rows: list[Row] = []

    def add(new: list[Row]) -> None:
        """Keep the rows, and log each at once: a run cut short still shows what it measured."""
        rows.extend(new)
        for r in new:
            _log(f"| {r.job} | {r.ours} | {r.floor_name} | {r.floor} | {r.ratio} | {r.peak_mb} | {r.target} |")

    t0 = time.perf_counter()
    if "exec" in wanted:
        add(jobs.job_exec(work, scripts, 3, _log))
    if "reader" in wanted or "tail" in wanted:
        for mb in sizes:
            path = work / f"rollout-{mb:g}mb.jsonl"
            jobs.build_rollout(path, mb, _log)
            label = f"{path.stat().st_size / 1e6:,.0f} MB rollout"
            if "reader" in wanted:
                _log(f"reader: {label}")
                add(jobs.job_reader(path, label, reps))
            if "tail" in wanted:
                _log(f"tail/show: {label}")
                add(jobs.job_tail_show(path, label, reps, a.show_max_mb is None or mb <= a.show_max_mb))
    def home_of(n: int, mb: float) -> tuple[Path, str]:
        home = work / f"home-{n}-{mb:g}mb"
        if not (home / "session_index.jsonl").exists():
            _log(f"building a home ({n} sessions, ~{mb:g} MB)")
            build_home(home, templates, n, mb)
        return home, f"{n:,} sessions, {sum(p.stat().st_size for p in home.rglob('*') if p.is_file()) / 1e6:,.0f} MB"

    if "search" in wanted:
        home, label = home_of(home_n, home_mb)
        add(jobs.job_search(home, work / "cache-search", label, reps, _log))
    if "ls" in wanted:
        for n in ls_n:
            home = work / f"home-{n}-ls"
            if not (home / "session_index.jsonl").exists():
                _log(f"building the ls home ({n} sessions as recorded)")
                build_home(home, templates, n, None)
            _log(f"ls: {n} sessions")
            add(jobs.job_ls(home, work / f"cache-ls-{n}", f"{n:,} sessions", reps))
    if "census" in wanted:
        home, label = home_of(census_n, census_mb)
        add(jobs.job_census(home, label, reps, _log))
    print("\n".join(f"- {line}" for line in header))
    print(f"- run took {time.perf_counter() - t0:,.0f} s; load average at the end: {machine_line().rsplit(';', 1)[1]}\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
