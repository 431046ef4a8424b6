"""``python -m corpus_tools.bench_search``: cross-session search against ``rg -c -i -F WORD`` over the same
home, side by side in one run: a miss, a rare word and a frequent word (in the most sessions), each the
median of alternating runs (ours, rg, ours, rg, …), warm (the session store built by a first run), with
the time to the first hit printed and the load average before and after.

``--before DIR`` adds, in the same alternation, the same command run from another checkout's code
(``PYTHONPATH=DIR``, its own cache directory, warmed the same way): the figures before a change next to
the figures after it. Every command runs in the work directory, so that ``python -m`` does not import
the checkout it is started from ahead of ``PYTHONPATH``.

    python -m corpus_tools.bench_search --sessions 200 --mb 100 --reps 5
    python -m corpus_tools.bench_search --sessions 1000 --mb 1024 --reps 3 --before ../main
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from corpus_tools.bench_home import build_home
from corpus_tools.bench_jobs import bytecode_env
from corpus_tools.bench_run import Timed, machine_line, run, secs, workload_source

MISS = "zqxvbnmkwordmiss"
#: Words a frequent-word case is picked from (the one in the most sessions).
FREQUENT = ("pytest", "README", "error", "file", "exec_command")


def sessions_with(home: Path, word: str) -> int:
    p = subprocess.run(["rg", "-l", "-i", "-F", word, str(home)], capture_output=True, text=True)
    return len(p.stdout.splitlines())


RARE = "quokkaplanted"


def plant_rare(home: Path, sessions: int = 3) -> None:
    """Append an assistant message holding :data:`RARE` to a few plain session files (the rare-word
    case: a word a handful of sessions hold in what the reader shows; a user message would be read as
    context, the prompt being its event copy)."""
    files = sorted(p for p in home.rglob("rollout-*.jsonl"))
    for f in files[:: max(1, len(files) // sessions)][:sessions]:
        line = orjson.dumps({"timestamp": "2026-01-01T00:00:00.000Z", "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text",
                                                                  "text": f"I looked at the {RARE} word"}]}})
        with open(f, "ab") as fh:
            fh.write(line + b"\n")


def _env(home: Path, cache: Path, pythonpath: str | None) -> dict[str, str]:
    """The command's environment: the bench's home and store, and Python's bytecode cache on (as an
    installed package runs: with ``PYTHONDONTWRITEBYTECODE`` set around the bench every run compiled
    the package from source, about 100 ms a search no user pays)."""
    env = {**bytecode_env(cache / "pycache"), "CODEX_HOME": str(home), "XDG_CACHE_HOME": str(cache), "COLUMNS": "160"}
    env.pop("NO_COLOR", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _median(runs: list[Timed]) -> tuple[float, float | None]:
    firsts = [r.first_line_s for r in runs if r.first_line_s is not None]
    return statistics.median(r.wall for r in runs), (statistics.median(firsts) if firsts else None)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--home", type=Path, help="an existing home (else one is built in --work)")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--before", type=Path, help="another checkout whose code runs the same commands")
    ap.add_argument("--only-before", action="store_true", help="run --before's code and rg only (a slow 'before')")
    a = ap.parse_args(argv)
    if shutil.which("rg") is None:
        sys.exit("rg not installed (apt-get install ripgrep)")
    work = a.work or Path(tempfile.mkdtemp(prefix="bench-search-"))
    home = a.home or work / "home"
    if a.home is None and not home.is_dir():
        label, sources = workload_source()
        print(f"building a home of {a.sessions} sessions, ~{a.mb:.0f} MB from {label}", flush=True)
        build_home(home, sources, a.sessions, a.mb)
        plant_rare(home)
    size = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
    n_files = sum(1 for p in home.rglob("*") if p.is_file() and ".jsonl" in p.name)
    frequent = max(FREQUENT, key=lambda w: sessions_with(home, w))
    words = [("miss", MISS, 0), ("rare", RARE, sessions_with(home, RARE)), ("frequent", frequent, sessions_with(home, frequent))]
    variants: list[tuple[str, str | None, Path]] = [] if a.only_before else [("ours", None, work / "cache-after")]
    if a.before is not None:
        variants.append(("before", str(a.before.resolve()), work / "cache-before"))
    print(machine_line(), flush=True)
    print(f"home: {n_files} session files, {size / 2**20:.0f} MB; words: "
          + ", ".join(f"{k} {w!r} ({n} sessions)" for k, w, n in words), flush=True)

    def ours(word: str, pythonpath: str | None, cache: Path) -> tuple[list[str], dict[str, str]]:
        return ([sys.executable, "-m", "transcript_reader", "search", word, "--all", "--all-projects"],
                _env(home, cache, pythonpath))

    for name, pp, cache in variants:  # warm: the store (or the scan cache, before it) built once
        cmd, env = ours(MISS, pp, cache)
        w = run(cmd, env=env, cwd=work)
        print(f"{name}: first run (builds what later runs reuse): {secs(w.wall)}", flush=True)
    load_before = os.getloadavg()
    print("| word | sessions | " + " | ".join(f"{n} median" for n, _, _ in variants)
          + " | rg -c -i -F median | " + " | ".join(f"{n}/rg" for n, _, _ in variants)
          + " | " + " | ".join(f"{n} first hit" for n, _, _ in variants) + " |")
    print("|---" * (3 + 3 * len(variants)) + "|")
    for kind, word, n in words:
        times: dict[str, list[Timed]] = {name: [] for name, _, _ in variants}
        rg: list[Timed] = []
        for _ in range(max(1, a.reps)):
            for name, pp, cache in variants:
                cmd, env = ours(word, pp, cache)
                times[name].append(run(cmd, env=env, first_line=True, cwd=work))
            rg.append(run(["rg", "-c", "-i", "-F", word, str(home)], cwd=work))
        rg_med, _ = _median(rg)
        med = {name: _median(t) for name, t in times.items()}
        print(f"| {kind} {word!r} | {n} | " + " | ".join(secs(med[v][0]) for v, _, _ in variants)
              + f" | {secs(rg_med)} | " + " | ".join(f"{med[v][0] / rg_med:.2f}x" for v, _, _ in variants)
              + " | " + " | ".join(secs(med[v][1]) for v, _, _ in variants) + " |", flush=True)
    la = os.getloadavg()
    print(f"load average before the runs {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f}, "
          f"after {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f} (1/5/15 min); {a.reps} alternating runs each, medians")


if __name__ == "__main__":
    main()
