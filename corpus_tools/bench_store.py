"""Benchmark: the session store, side by side with the reader it is built from.

    python -m corpus_tools.bench_store build  [--sessions 200] [--mb 100] [--dir DIR] [--keep]
    python -m corpus_tools.bench_store ls     [--sessions 10000] [--runs 5] [--dir DIR] [--keep] [--against TREE…]
    python -m corpus_tools.bench_store census [--sessions 200] [--mb 100] [--dir DIR] [--keep]

``build``: a home of N sessions and about M MB (``bench_home``: the real recordings grown to a
long-tailed spread of sizes); then, in fresh processes, one single-process reader pass over every file
(``Transcript(path).items()`` and ``info()``, what a store build must at least do), the store built with
1 and with 2 workers (wall and CPU of the process and its workers), and the store's size against the
home's, per table.

``ls``: a home of N small sessions (the recordings as written); ``ls --all-projects --json`` timed cold
(no store: the first build; skipped when ``--dir`` holds a store already) and warm (median of
``--runs``, wall and CPU of the process; with ``--against``, each other checkout's warm ``ls`` in turn
with this one's, so "before" and "after" meet the same load), then a refresh after 1,000 lines are
appended to one session, timed in the CLI (``ls``) and in the library (``refresh``).

``census``: the census over the same home with 1 and 2 workers (wall), and its figures checked equal.

Print the load average beside the figures (the machine may be shared); every run prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _child(code: str, *args: str) -> dict[str, float]:
    """Run ``code`` in a fresh interpreter; it prints one JSON object (its figures)."""
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, check=False)
    if p.returncode != 0:
        raise SystemExit(f"child failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


_TIMER = """
import json, os, resource, sys, time
def cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
"""

_READER_PASS = _TIMER + """
from transcript_reader.sessions.store import open_store, walk
from transcript_reader.api import Transcript
home = sys.argv[1]
fids = walk(open_store(home, cache_dir=sys.argv[2]))[0]
t0, c0 = time.monotonic(), cpu()
n = 0
for f in fids:
    try:
        t = Transcript(f.path)
        for _ in t.items():
            n += 1
        t.info()
    except Exception:
        pass
print(json.dumps({"wall": time.monotonic() - t0, "cpu": cpu() - c0, "items": n, "files": len(fids)}))
"""

_BUILD = _TIMER + """
from transcript_reader.sessions.store import open_store, refresh
home, cache, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = open_store(home, cache_dir=cache)
t0, c0 = time.monotonic(), cpu()
st = refresh(store, workers=workers)
print(json.dumps({"wall": time.monotonic() - t0, "cpu": cpu() - c0, "read": st.read, "path": str(store.path)}))
"""

_REFRESH = _TIMER + """
from transcript_reader.sessions.store import open_store, refresh
store = open_store(sys.argv[1], cache_dir=sys.argv[2])
t0, c0 = time.monotonic(), cpu()
st = refresh(store, workers=int(sys.argv[3]))
print(json.dumps({"wall": time.monotonic() - t0, "cpu": cpu() - c0, "read": st.read, "files": st.files}))
"""


def _sizes(db: Path) -> dict[str, int]:
    """Bytes per table (and its indexes), from SQLite's dbstat, when this SQLite has it."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.OperationalError:
        return {}
    finally:
        con.close()
    out: dict[str, int] = {}
    for name, size in rows:
        key = "items_fts" if name.startswith("items_fts") else "items" if name.startswith(
            ("items", "sqlite_autoindex_items")) else "sessions" if "sessions" in name else name
        out[key] = out.get(key, 0) + size
    return out


def _home(root: Path, sessions: int, mb: float | None) -> tuple[Path, int]:
    from corpus_tools.bench_home import build_home
    from corpus_tools.bench_run import workload_source

    home = root / "codex_home"
    if not home.exists():
        _name, sources = workload_source()
        build_home(home, sources, sessions, mb)
    size = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
    return home, size


def bench_build(args: argparse.Namespace, root: Path) -> None:
    home, size = _home(root, args.sessions, args.mb)
    print(f"home: {args.sessions} sessions, {size / 1e6:.1f} MB; load {_load()}")
    rp = _child(_READER_PASS, str(home), str(root / "unused"))
    print(f"reader pass (1 process): wall {rp['wall']:.2f} s, cpu {rp['cpu']:.2f} s, {rp['items']} items")
    for workers in args.workers:
        cache = root / f"cache-{workers}"
        shutil.rmtree(cache, ignore_errors=True)
        b = _child(_BUILD, str(home), str(cache), str(workers))
        db = Path(str(b["path"]))
        disk = sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))
        print(f"build, {workers} worker(s): wall {b['wall']:.2f} s ({b['wall'] / rp['wall']:.2f}x the reader pass), "
              f"cpu {b['cpu']:.2f} s ({b['cpu'] / rp['cpu']:.2f}x); store {disk / 1e6:.1f} MB "
              f"= {disk / size:.2f}x the home; load {_load()}")
    tables = _sizes(db)
    if tables:
        print("store by table: " + ", ".join(f"{k} {v / 1e6:.1f} MB ({v / size:.2f}x)" for k, v in
                                             sorted(tables.items(), key=lambda kv: -kv[1])))


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _ls(home: Path, cache: Path, tree: Path = ROOT) -> tuple[float, float]:
    """Wall and CPU seconds of one ``ls --all-projects --json`` run by the checkout at ``tree``."""
    env = {**os.environ, "CODEX_HOME": str(home), "XDG_CACHE_HOME": str(cache),
           "CLAUDE_CONFIG_DIR": str(cache / "no-claude"), "PYTHONPATH": str(tree)}
    c0, t0 = _children_cpu(), time.monotonic()
    subprocess.run([sys.executable, "-m", "transcript_reader", "ls", "--all-projects", "--json"], env=env,
                   stdout=subprocess.DEVNULL, check=True, cwd=tree)
    return time.monotonic() - t0, _children_cpu() - c0


def _floor() -> tuple[float, float]:
    c0, t0 = _children_cpu(), time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], stdout=subprocess.DEVNULL, check=True)
    return time.monotonic() - t0, _children_cpu() - c0


def _median(runs: list[tuple[float, float]]) -> str:
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    return f"median {wall:.3f} s wall, {cpu:.3f} s CPU (min {min(r[0] for r in runs):.3f} s wall)"


def bench_ls(args: argparse.Namespace, root: Path) -> None:
    home, size = _home(root, args.sessions, None)
    cache = root / "cache"
    print(f"home: {args.sessions} sessions, {size / 1e6:.1f} MB; load {_load()}")
    if not (cache / "transcript-reader").exists():
        cold = _ls(home, cache)
        print(f"ls --all-projects, cold (builds the store): {cold[0]:.2f} s wall, {cold[1]:.2f} s CPU; load {_load()}")
    trees = [("this tree", ROOT)] + [(f"against {t}", t) for t in args.against]
    warm: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in trees}
    for _ in range(args.runs):  # alternating, so a change of load hits every tree alike
        for name, tree in trees:
            warm[name].append(_ls(home, cache, tree))
    floor = [_floor() for _ in range(3)]
    for name, _tree in trees:
        print(f"ls --all-projects, warm, {name}: {_median(warm[name])}; load {_load()}")
    print(f"python -c pass (interpreter start-up): {_median(floor)}")
    victim = max((p for p in home.rglob("rollout-*.jsonl")), key=lambda p: p.stat().st_size)
    lines = [ln for ln in victim.read_bytes().split(b"\n") if ln][-50:]
    for what in ("ls", "refresh"):
        with victim.open("ab") as fh:
            for k in range(1000):
                fh.write(lines[k % len(lines)] + b"\n")
        if what == "ls":
            t = _ls(home, cache)
            print(f"after 1,000 lines appended to one session: ls {t[0]:.3f} s wall, {t[1]:.3f} s CPU; load {_load()}")
        else:
            r = _child(_REFRESH, str(home), str(cache / "transcript-reader"), "2")
            print(f"after 1,000 more lines: refresh (library) {r['wall']:.3f} s wall, {r['cpu']:.3f} s CPU, "
                  f"{r['read']:.0f} file(s) read of {r['files']:.0f}; load {_load()}")


def bench_census(args: argparse.Namespace, root: Path) -> None:
    home, size = _home(root, args.sessions, args.mb)
    print(f"home: {args.sessions} sessions, {size / 1e6:.1f} MB; load {_load()}")
    walls = {}
    outs = {}
    for workers in (1, 2):
        out = root / f"census-{workers}.json"
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "transcript_reader", "census", str(home), "--workers", str(workers),
                        "--json"], stdout=out.open("w"), check=False, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        walls[workers] = time.monotonic() - t0
        outs[workers] = out.read_text()
        print(f"census, {workers} worker(s): wall {walls[workers]:.2f} s; load {_load()}")
    print(f"census 1 -> 2 workers: {walls[1] / walls[2]:.2f}x")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("build", "ls", "census"))
    ap.add_argument("--sessions", type=int, default=None)
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=None, help="keep the home here (reused when it exists)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--against", type=Path, nargs="*", default=[],
                    help="ls: other checkouts of the project, timed warm alternately with this one")
    args = ap.parse_args(argv)
    if args.sessions is None:
        args.sessions = 10000 if args.what == "ls" else 200
    root = args.dir or Path(tempfile.mkdtemp(prefix="bench-store-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        {"build": bench_build, "ls": bench_ls, "census": bench_census}[args.what](args, root)
    finally:
        if args.dir is None and not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
