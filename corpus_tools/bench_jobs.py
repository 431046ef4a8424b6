"""The jobs of ``python -m corpus_tools.bench``: each builds its workload, runs ours and its floor or peer
side by side (alternating, best of ``reps``), and returns rows of the one table.

Floors and peers: node+acorn and tree-sitter's bare parse for exec scripts; a bare ``orjson`` decode of
every line for the reader, ``show`` and the census; ``tail -n 100`` for the last items; ``rg`` over the
same home for search; the interpreter's start-up and ccusage-codex (when installed) for ``ls``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus_tools.bench_run import ROOT, Row, Timed, best, py, ratio, run, secs, tr

#: A bare decode of every line of a file: the floor every reading job is measured against.
DECODE = ("import orjson,sys\nloads=orjson.loads\nwith open(sys.argv[1],'rb',buffering=1<<20) as fh:\n"
          "    for line in fh:\n        if line.strip(): loads(line)\n")
#: The same over every file under a directory (the census's floor).
DECODE_TREE = ("import orjson,sys,pathlib,io,zstandard\nloads=orjson.loads\n"
               "for p in sorted(pathlib.Path(sys.argv[1]).rglob('rollout-*')):\n"
               "    fh=open(p,'rb',buffering=1<<20)\n"
               "    if p.name.endswith('.zst'): fh=io.BufferedReader(zstandard.ZstdDecompressor()"
               ".stream_reader(fh,read_across_frames=True))\n"
               "    for line in fh:\n        if line.strip():\n"
               "            try: loads(line)\n            except orjson.JSONDecodeError: pass\n")

Log = Callable[[str], None]


def _mb(t: Timed) -> str:
    return f"{t.peak_mb:.0f}"


def _alternate(a: list[str], b: list[str], reps: int, **kw: Any) -> tuple[Timed, Timed]:
    """Best of ``reps`` runs of each, alternating (drift on a shared machine hits both alike)."""
    ra: list[Timed] = []
    rb: list[Timed] = []
    for _ in range(max(1, reps)):
        ra.append(run(a, **kw))
        rb.append(run(b, **kw))
    fa, fb = min(ra, key=lambda r: r.wall), min(rb, key=lambda r: r.wall)
    return (Timed(fa.wall, max(r.peak_mb for r in ra), fa.first_line_s, fa.stdout, max(r.status for r in ra)),
            Timed(fb.wall, max(r.peak_mb for r in rb), fb.first_line_s, fb.stdout, max(r.status for r in rb)))


# ------------------------------------------------------------------ exec scripts


def job_exec(work: Path, scripts: int, passes: int, log: Log) -> list[Row]:
    """The analyzer against node+acorn and tree-sitter's bare parse (``bench_exec``'s harness)."""
    from corpus_tools import bench_exec as be

    if shutil.which("node") is None:
        return [Row("exec scripts", "-", "node+acorn", "node not installed", "-", "-")]
    modules = be.ensure_acorn(log)
    if modules is None:
        return [Row("exec scripts", "-", "node+acorn", "acorn could not be installed", "-", "-")]
    kit = be.prepare_kit(work / "exec")
    files = be.generate(kit, scripts, 1)
    log(f"exec: {len(files)} scripts; acorn, then analyze / calls / parse, each in a fresh process")
    acorn = be.acorn_stats(be.run_acorn(kit, modules, passes, "acorn.json"))
    docs = {v: be.run_python(v, kit, passes) for v in ("analyze", "calls", "parse")}
    st = {v: be.python_stats(d) for v, d in docs.items()}
    key = "sum_warm_min_s"
    rows = []
    for v, what in (("analyze", "full analyze()"), ("calls", "acorn's work (verdict, names, spans)")):
        rows.append(Row(f"exec, {what}, {len(files):,} scripts", secs(st[v][key]), "node+acorn parse+walk",
                        secs(acorn[key]), ratio(st[v][key], acorn[key]), f"{docs[v]['rss_peak_mb']:.0f}"))
        rows.append(Row(f"exec, {what}, vs the bare parse", secs(st[v][key]), "tree-sitter parse + has_error",
                        secs(st["parse"][key]), ratio(st[v][key], st["parse"][key]),
                        f"{docs[v]['rss_peak_mb']:.0f}", "≤ 2.2x" if v == "analyze" else "≤ 1.5x"))
    rows.append(Row("exec, full analyze() p99 per script", f"{st['analyze']['p99_ms']:.2f} ms", "acorn p99",
                    f"{acorn['p99_ms']:.2f} ms", ratio(st["analyze"]["p99_ms"], acorn["p99_ms"]), "-", "< 0.7 ms"))
    return rows


# ------------------------------------------------------------------ one big rollout


def build_rollout(path: Path, size_mb: float, log: Log) -> None:
    from corpus_tools.bench_reader import DEFAULT_SOURCES, FALLBACK_SOURCES, build

    sources = [p for p in DEFAULT_SOURCES if p.exists()] or FALLBACK_SOURCES
    if path.exists() and abs(path.stat().st_size / 2**20 - size_mb) < max(1.0, size_mb * 0.05):
        return
    t0 = time.perf_counter()
    build(path, size_mb, sources)
    log(f"built {path.name}: {path.stat().st_size / 1e6:,.0f} MB from {', '.join(p.name for p in sources)} "
        f"in {time.perf_counter() - t0:.0f} s")


_TIMELINE = ("from transcript_reader.api import Transcript\nimport sys\n"
             "t=Transcript(sys.argv[1])\nn=sum(1 for _ in t.items())\n")
_FINAL = ("from transcript_reader import read\nimport sys\n"
          "r=read(sys.argv[1], projection=sys.argv[2])\n")


def bytecode_env(cache: Path) -> dict[str, str]:
    """The environment with Python's bytecode cache on (in ``cache``), as an installed package runs: a
    ``PYTHONDONTWRITEBYTECODE`` set around the benchmark would make every child compile the package
    from source, a start-up cost no user pays (the floor, a bare ``orjson`` decode, compiles nothing)."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def job_reader(path: Path, label: str, reps: int) -> list[Row]:
    """The library's whole read (every item: the timeline) and the ``final`` and ``conversation``
    projections, each in a fresh interpreter, against a bare decode of the same file. The children run
    with the bytecode cache on (``bytecode_env``; one untimed run fills it)."""
    rows = []
    floor: Timed | None = None
    env = bytecode_env(path.parent / "pycache")
    warm = path.parent / "warm-up.jsonl"  # the first lines: every module a reading imports, compiled once
    with open(path, "rb") as fh:
        warm.write_bytes(b"".join(fh.readline() for _ in range(200)))
    run(py(_TIMELINE) + [str(warm)], env=env, cwd=ROOT)
    for what, code, extra, target in (("timeline", _TIMELINE, [], "≤ 4x"), ("final", _FINAL, ["final"], "≤ 1.5x"),
                                      ("conversation", _FINAL, ["conversation"], "≤ 1.5x")):
        ours, f = _alternate(py(code) + [str(path), *extra], py(DECODE) + [str(path)], reps, cwd=ROOT, env=env)
        floor = f if floor is None or f.wall < floor.wall else floor
        rows.append(Row(f"reader {what}, {label}", secs(ours.wall), "bare orjson decode", secs(floor.wall),
                        ratio(ours.wall, floor.wall), _mb(ours), target))
    return rows


def job_tail_show(path: Path, label: str, reps: int, show: bool) -> list[Row]:
    """``read --tail 100`` against ``tail -n 100``, and the whole ``show --no-pager`` against the decode."""
    ours, tail = _alternate(tr("read", str(path), "--tail", "100", "--json"), ["tail", "-n", "100", str(path)], reps)
    rows = [Row(f"read --tail 100, {label}", secs(ours.wall), "tail -n 100", secs(tail.wall),
                ratio(ours.wall, tail.wall), _mb(ours), "≤ 0.5 s")]
    if show:
        env = {**os.environ, "COLUMNS": "160", "NO_COLOR": "1"}
        s, dec = _alternate(tr("show", str(path), "--no-pager"), py(DECODE) + [str(path)], max(1, reps // 2), env=env)
        rows.append(Row(f"show --no-pager (whole), {label}", secs(s.wall), "bare orjson decode", secs(dec.wall),
                        ratio(s.wall, dec.wall), _mb(s), "≤ 10x"))
    return rows


# ------------------------------------------------------------------ homes: search, ls


def _home_env(home: Path, cache: Path) -> dict[str, str]:
    env = {**os.environ, "CODEX_HOME": str(home), "XDG_CACHE_HOME": str(cache), "COLUMNS": "160"}
    env.pop("NO_COLOR", None)
    return env


def pick_hit_word(home: Path) -> str:
    """A word many sessions hold (the frequent-word case), chosen by ``rg`` over the home."""
    best_word, best_n = "file", -1
    for word in ("pytest", "README", "error", "file"):
        p = subprocess.run(["rg", "-l", "-i", "-F", "-z", word, str(home)], capture_output=True, text=True)
        n = len(p.stdout.splitlines())
        if n > best_n:
            best_word, best_n = word, n
    return best_word


def job_search(home: Path, cache: Path, label: str, reps: int, log: Log) -> list[Row]:
    """Cross-session search, a miss and a frequent word, against ``rg -c -i -F`` on the same home: the
    first search (no session store yet: it is built, every session read once) and warm ones (best of
    ``reps``, alternating with rg). ``python -m corpus_tools.bench_search`` adds a rare word, medians
    and the code of another checkout side by side."""
    if shutil.which("rg") is None:
        return [Row(f"search, {label}", "-", "rg", "rg not installed (apt-get install ripgrep)", "-", "-")]
    env = _home_env(home, cache)
    rows = []
    hit = pick_hit_word(home)
    words = (("miss", "zqxvbnmkwordmiss"), (f"frequent word {hit!r}", hit))

    def row(what: str, ours: Timed, rg: Timed, target: str) -> Row:
        hits = sum(1 for ln in ours.stdout.splitlines() if ln.startswith(b'{"ok": true'))
        rg_hits = sum(int(ln.rsplit(b":", 1)[1]) for ln in rg.stdout.splitlines() if b":" in ln)
        return Row(f"search {what}, {label}", secs(ours.wall) + f" ({hits:,} hits)", "rg -c -i -F",
                   secs(rg.wall) + f" ({rg_hits:,} lines)", ratio(ours.wall, rg.wall), _mb(ours), target)

    def cmd(word: str) -> list[str]:
        return tr("search", word, "--all", "--all-projects", "--archived", "--json")

    shutil.rmtree(cache, ignore_errors=True)
    log("search: the first search (builds the session store)")
    first = run(cmd(words[0][1]), env=env)
    rows.append(Row(f"search, first run (session store built), {label}", secs(first.wall), "-", "-", "-",
                    _mb(first)))
    for what, word in words:
        rg_cmd = ["rg", "-c", "-i", "-F", word, str(home)]
        ours, rg = _alternate(cmd(word), rg_cmd, reps, env=env, first_line=True)
        rows.append(row(f"{what}, warm", ours, rg, "≤ 1.0x"))
        if ours.first_line_s is not None and what != "miss":
            rows.append(Row(f"search {what}, first hit, {label}", secs(ours.first_line_s), "-", "-", "-", "-",
                            "< 0.2 s"))
    return rows


def job_ls(home: Path, cache: Path, label: str, reps: int) -> list[Row]:
    """``ls`` over every session: cold (no ``ls`` cache: every session's head and tail read) and warm,
    with the interpreter's start-up measured next to it, and ccusage-codex when installed."""
    env = _home_env(home, cache)
    cmd = tr("ls", "--all", "--all-projects", "--archived", "--json")
    start = best(tr("--version"), reps, env=env)
    colds = []
    for _ in range(max(1, reps)):
        shutil.rmtree(cache, ignore_errors=True)
        colds.append(run(cmd, env=env))
    cold = min(colds, key=lambda r: r.wall)
    warm = best(cmd, reps, env=env)
    peer = shutil.which("ccusage-codex")
    rows = [Row(f"ls cold (no ls cache), {label}", secs(cold.wall), "interpreter start-up (--version)",
                secs(start.wall), ratio(cold.wall, start.wall), _mb(cold), "≤ 1.5 s at 10,000"),
            Row(f"ls warm, {label}", secs(warm.wall), "interpreter start-up (--version)", secs(start.wall),
                ratio(warm.wall, start.wall), _mb(warm), "≤ 0.3 s at 10,000")]
    if peer:
        p = best([peer, "session", "--json"], reps, env=env)
        rows.append(Row(f"ls, {label}", secs(warm.wall), "ccusage-codex session --json", secs(p.wall),
                        ratio(warm.wall, p.wall), _mb(warm)))
    else:
        rows.append(Row(f"ls, {label}", secs(warm.wall), "ccusage-codex", "not installed", "-", "-"))
    return rows


# ------------------------------------------------------------------ census


def job_census(home: Path, label: str, reps: int, log: Log) -> list[Row]:
    """The census (without its cross-checks) with 1 and 2 workers over a home's sessions, against a
    bare decode of the same files; MB/s per worker and the speed-up."""
    import json

    sessions = home / "sessions"
    size = sum(p.stat().st_size for p in sessions.rglob("rollout-*"))
    log(f"census: {label}")

    def cmd(workers: int) -> list[str]:
        return tr("census", str(sessions), "--json", "--no-progress", "--no-cross-check", "--workers", str(workers))

    runs: dict[int, list[Timed]] = {1: [], 2: []}
    floors: list[Timed] = []
    for rep in range(max(1, reps)):
        floors.append(run(py(DECODE_TREE) + [str(sessions)]))
        for w in ((1, 2) if rep % 2 == 0 else (2, 1)):
            runs[w].append(run(cmd(w), keep_stdout=True))
    one, two = (min(runs[w], key=lambda r: r.wall) for w in (1, 2))
    floor = min(floors, key=lambda r: r.wall)
    def figures(t: Timed) -> dict[str, object]:
        f = dict(json.loads(t.stdout)["figures"])
        f.pop("parse_time", None)  # a measurement, not a count
        return f

    same = figures(one) == figures(two)
    mb = size / 2**20
    return [
        Row(f"census, 1 worker, {label}", f"{secs(one.wall)} ({mb / one.wall:,.0f} MB/s)", "bare orjson decode",
            f"{secs(floor.wall)} ({mb / floor.wall:,.0f} MB/s)", ratio(one.wall, floor.wall), _mb(one), "≤ 4x"),
        Row(f"census, 1 -> 2 workers, {label}", f"{secs(two.wall)} with 2", "1 worker", secs(one.wall),
            f"{one.wall / two.wall:.2f}x speed-up" + ("" if same else " (figures differ!)"), _mb(two), "≥ 1.85x"),
    ]


def python_version() -> str:
    return sys.version.split()[0]
