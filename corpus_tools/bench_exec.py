"""Benchmark: the exec-script analyzer against node+acorn, on the same scripts, in one run.

    python -m corpus_tools.bench_exec [--scripts 20000] [--passes 3] [--seed 1] [--lexer]
                                      [--compare LABEL=DIR ...] [--rounds N]

Steps: generate the corpus with the benchmark kit's ``gen_corpus.py`` (``../shared/bench`` when present,
else the copy in ``fixtures/js/bench``) into ``bench-work/exec/``; run node+acorn (``bench_acorn.js``);
run each Python variant in its own fresh process; run acorn again (a drift check); print times, ratios,
p99 and worst script times, peak memory, and whether the calls agree with acorn's.

Python variants:
- ``analyze``: ``exec_grammar.analyze(script)``, everything a reader gets (calls with positions and
  decoded arguments, parse verdict incl. context errors, pragma, entries);
- ``calls``: the tree-sitter backend alone (parse, verdict, call names and code-point spans, first
  argument span): the same work the acorn anchor does;
- ``parse``: tree-sitter's parse and ``has_error`` alone, the floor every tree-sitter variant pays;
- ``lexer`` (with ``--lexer``): ``analyze(script, parser="lexer")``.

Timing follows the anchor: pass 1 is cold; per script, the minimum over the warm passes ("Σ warm-min",
robust to scheduler noise) is summed; the best whole warm pass is shown too. Peak memory is the
process's VmHWM. acorn needs node and npm: it is installed once into ``bench-work/node`` if missing.

``--compare before=/tmp/old`` also runs each Python variant from another source tree (an unpacked
``git archive`` of an earlier commit: its own ``bench_exec`` worker, with this venv), in the same run
and on the same corpus, alternating with this tree's run of that variant, so a change is measured side
by side rather than against numbers taken under another load. Every tree is timed by this file's
worker (its own packages on ``PYTHONPATH``). ``--rounds N`` repeats the whole alternation N times and
takes each script's minimum over all rounds: on a loaded machine the quiet moments decide. Per-script
thread CPU time is recorded too, and the ratios to the bare parse are given on both clocks.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "bench-work" / "exec"
NODE_DIR = ROOT / "bench-work" / "node"
SHARED_BENCH = ROOT.parent / "shared" / "bench"
VENDORED_BENCH = ROOT / "fixtures" / "js" / "bench"
ACORN_VERSIONS = ("acorn@8.19.0", "acorn-walk@8.3.5")


def find_node_modules() -> Path | None:
    """A node_modules directory holding acorn and acorn-walk, or None."""
    for d in (NODE_DIR / "node_modules", SHARED_BENCH / "node_modules"):
        if (d / "acorn").is_dir() and (d / "acorn-walk").is_dir():
            return d
    return None


def ensure_acorn(log: Any = print) -> Path | None:
    found = find_node_modules()
    if found is not None or shutil.which("npm") is None:
        return found
    log(f"installing {' '.join(ACORN_VERSIONS)} into {NODE_DIR} …")
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR), *ACORN_VERSIONS],
        check=False,
        timeout=300,
    )
    return find_node_modules()


def prepare_kit(work: Path) -> Path:
    """Copy the generator and the anchor (and the hand cases) into ``work``; return it."""
    work.mkdir(parents=True, exist_ok=True)
    src = SHARED_BENCH if (SHARED_BENCH / "gen_corpus.py").is_file() else VENDORED_BENCH
    for name in ("gen_corpus.py", "bench_acorn.js"):
        shutil.copyfile(src / name, work / name)
    hand_src = (
        SHARED_BENCH / "hand" if (SHARED_BENCH / "hand").is_dir() else ROOT / "fixtures" / "js" / "hand"
    )
    hand = work / "hand"
    hand.mkdir(exist_ok=True)
    for f in hand_src.iterdir():
        if f.suffix in (".js", ".json"):
            shutil.copyfile(f, hand / f.name)
    return work


def generate(work: Path, scripts: int, seed: int) -> list[Path]:
    stamp = work / "corpus.stamp"
    want = f"{scripts} {seed} {(work / 'gen_corpus.py').stat().st_size}"
    if not (stamp.is_file() and stamp.read_text() == want):
        subprocess.run([sys.executable, "gen_corpus.py", str(scripts), str(seed)], cwd=work, check=True)
        stamp.write_text(want)
    return sorted((work / "corpus").glob("*.js"))


def run_acorn(work: Path, node_modules: Path, passes: int, out: str) -> dict[str, Any]:
    env = dict(os.environ, NODE_PATH=str(node_modules))
    p = subprocess.run(
        ["node", "bench_acorn.js", "--dir", "corpus", "--passes", str(passes), "--out", out],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(p.stderr.strip().splitlines()[-1])
    doc = json.loads((work / out).read_text())
    return {"summary": summary, "results": doc["results"], "per_script_min_ms": doc["per_script_min_ms"]}


# --- the Python side, one variant per fresh process --------------------------------------------------


def _vm_hwm_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _vm_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _variant(name: str):
    if name == "parse":
        import tree_sitter
        import tree_sitter_javascript

        ts_parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_javascript.language()))

        def parse(script: str) -> tuple[bool, list[tuple[str, int, int]]]:
            return not ts_parser.parse(script.encode("utf-8", "surrogatepass")).root_node.has_error, []

        return parse
    if name == "calls":
        from exec_grammar.backends import treesitter

        def calls(script: str) -> tuple[bool, list[tuple[str, int, int]]]:
            r = treesitter.parse_calls(script)
            return r.error is None, [(c.name, c.start, c.end) for c in r.calls]

        return calls
    from exec_grammar import analyze

    parser = "lexer" if name == "lexer" else "tree-sitter"

    def full(script: str) -> tuple[bool, list[tuple[str, int, int]]]:
        a = analyze(script, parser=parser)
        return a.parse_error is None, [(c.name, c.start.offset, c.end.offset) for c in a.calls]

    return full


def worker(variant: str, corpus: Path, passes: int, out: Path) -> None:
    files = sorted(corpus.glob("*.js"))
    codes = [f.read_text(encoding="utf-8") for f in files]
    fn = _variant(variant)
    fn("await tools.x({});")  # imports and parser construction are not part of any script's time
    gc.collect()
    rss_base = _vm_rss_mb()
    times: list[list[float]] = []
    cpu_times: list[list[float]] = []
    proc_times: list[list[float]] = []
    totals: list[float] = []
    results: list[Any] = []
    clock = time.perf_counter_ns
    cpu = time.thread_time_ns
    proc = time.process_time_ns
    for p in range(passes):
        t = [0.0] * len(codes)
        c = [0.0] * len(codes)
        pc = [0.0] * len(codes)
        # Each pass appends its own comment to every script (every variant alike): V8 keeps compiled
        # sources in a cache keyed by their text, so a warm pass over the same texts would time V8's
        # cache, not a compile (about a third of the cost); no session repeats a cell that way.
        tag = f"\n// bench pass {p}"
        passed = [code + tag for code in codes]
        t0 = clock()
        for i, code in enumerate(passed):
            s = clock()
            sc = cpu()
            sp = proc()
            r = fn(code)
            pc[i] = (proc() - sp) / 1e6
            c[i] = (cpu() - sc) / 1e6
            t[i] = (clock() - s) / 1e6
            if p == 0:
                # Kept as one string per script (untimed): the harness should not leave ~140,000
                # tuples alive for Python's cyclic GC to walk during the timed calls.
                results.append(json.dumps(r))
        totals.append((clock() - t0) / 1e6)
        times.append(t)
        cpu_times.append(c)
        proc_times.append(pc)
    import exec_grammar

    doc = {
        "variant": variant,
        "module": exec_grammar.__file__,  # which source tree ran (--compare)
        "files": [f.name for f in files],
        "pass_totals_ms": totals,
        "times": times,
        "cpu_times": cpu_times,
        "proc_times": proc_times,
        "results": [json.loads(r) for r in results],
        "rss_base_mb": rss_base,
        "rss_peak_mb": _vm_hwm_mb(),
    }
    out.write_text(json.dumps(doc))


def run_python(variant: str, work: Path, passes: int, tree: Path = ROOT, label: str = "") -> dict[str, Any]:
    out = work / f"py_{variant}{'_' + label if label else ''}.json"
    # This file's worker, run against ``tree``'s packages (PYTHONPATH comes before this venv's editable
    # install), so every tree is timed by the same harness.
    subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            variant,
            "--passes",
            str(passes),
            "--corpus",
            str(work / "corpus"),
            "--out",
            str(out),
        ],
        cwd=tree,
        env=dict(os.environ, PYTHONPATH=str(tree)),
        check=True,
    )
    doc = dict(json.loads(out.read_text()))
    if not str(doc.get("module", "")).startswith(str(tree)):
        raise RuntimeError(f"the {variant} worker for {tree} imported {doc.get('module')}")
    return doc


def merge_rounds(first: dict[str, Any], later: dict[str, Any]) -> None:
    """Add the warm passes of a later round to ``first`` (per-script minima then span all rounds)."""
    for key in ("times", "cpu_times", "proc_times", "pass_totals_ms"):
        first[key].extend(later[key][1:])
    first["rss_peak_mb"] = max(first["rss_peak_mb"], later["rss_peak_mb"])


# --- statistics and report -------------------------------------------------------------------------


def _stats(per_script_min: list[float], pass_totals: list[float], cold: list[float]) -> dict[str, float]:
    s = sorted(per_script_min)
    n = len(s)
    return {
        "cold_s": pass_totals[0] / 1000,
        "best_warm_pass_s": min(pass_totals[1:] or pass_totals) / 1000,
        "sum_warm_min_s": sum(s) / 1000,
        "mean_ms": sum(s) / n,
        "p50_ms": s[n // 2],
        "p99_ms": s[min(n - 1, int(0.99 * n))],
        "worst_warm_ms": s[-1],
        "worst_cold_ms": max(cold),
    }


def python_stats(doc: dict[str, Any], key: str = "times") -> dict[str, float]:
    times = doc[key]
    warm = times[1:] or times
    per_min = [min(t[i] for t in warm) for i in range(len(times[0]))]
    st = _stats(per_min, doc["pass_totals_ms"], times[0])
    worst = max(range(len(per_min)), key=per_min.__getitem__)
    st["worst_file"] = doc["files"][worst]
    return st


def acorn_stats(acorn: dict[str, Any]) -> dict[str, Any]:
    s = acorn["summary"]
    per = acorn["per_script_min_ms"]
    st = _stats([per[f] for f in sorted(per)], s["pass_totals_ms"], [s["cold_max_ms"]])
    st["worst_file"] = s["warm_max_file"]
    return st


def agreement(doc: dict[str, Any], acorn: dict[str, Any]) -> dict[str, int]:
    """Scripts acorn parses whose call names (in order) and spans equal ours; verdict agreement."""
    res = acorn["results"]
    names_equal = spans_equal = parsed = false_errors = missed_errors = 0
    for f, (ok, calls) in zip(doc["files"], doc["results"]):
        ref = res[f]
        if not ref["ok"]:
            missed_errors += ok
            continue
        parsed += 1
        false_errors += not ok
        ours = [tuple(c) for c in calls]
        theirs = [(c[0], c[1], c[2]) for c in ref["calls"]]
        names_equal += [c[0] for c in ours] == [c[0] for c in theirs]
        spans_equal += ours == theirs
    return {
        "acorn_parses": parsed,
        "names_equal": names_equal,
        "spans_equal": spans_equal,
        "false_errors": false_errors,
        "missed_errors": missed_errors,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scripts", type=int, default=20000)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lexer", action="store_true", help="also time the lexer-only mode")
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="also run the Python variants from the source tree DIR (e.g. an earlier commit), side by side",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run every (variant, tree) this many times, alternating; per-script minima span the rounds",
    )
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, Path(args.corpus), args.passes, Path(args.out))
        return 0
    if shutil.which("node") is None:
        print("error: node is required for the acorn anchor", file=sys.stderr)
        return 1
    node_modules = ensure_acorn()
    if node_modules is None:
        print("error: acorn is not installed and npm could not install it", file=sys.stderr)
        return 1
    work = prepare_kit(WORK)
    files = generate(work, args.scripts, args.seed)
    size = sum(f.stat().st_size for f in files)
    print(f"corpus: {len(files)} scripts, {size / 1e6:.1f} MB, seed {args.seed}; passes: {args.passes}")
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}, Python {sys.version.split()[0]}"
    )
    acorn1 = run_acorn(work, node_modules, args.passes, "acorn.json")
    variants = ["analyze", "calls", "parse"] + (["lexer"] if args.lexer else [])
    trees = [("", ROOT)] + [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in args.compare]
    docs: dict[str, dict[str, Any]] = {}
    for _round in range(args.rounds):
        for v in variants:  # alternating trees per variant: drift in the load hits them alike
            for label, tree in trees:
                key = f"{v} [{label}]" if label else v
                doc = run_python(v, work, args.passes, tree, label)
                if key in docs:
                    merge_rounds(docs[key], doc)
                else:
                    docs[key] = doc
    names = list(docs)
    acorn2 = run_acorn(work, node_modules, args.passes, "acorn2.json")
    a1, a2 = acorn_stats(acorn1), acorn_stats(acorn2)
    # The faster of the two acorn runs is the reference: the harder target for us.
    ref = a1 if a1["sum_warm_min_s"] <= a2["sum_warm_min_s"] else a2
    print(
        f"acorn drift: Σ warm-min {a1['sum_warm_min_s']:.2f} s before, {a2['sum_warm_min_s']:.2f} s after; "
        f"load average now {os.getloadavg()[0]:.2f}"
    )
    header = (
        f"{'variant':34} {'cold s':>7} {'best pass s':>11} {'Σ warm-min s':>12} {'ratio':>6} {'ratio(pass)':>11} "
        f"{'mean ms':>8} {'p99 ms':>7} {'worst ms':>8} {'cold worst':>10} {'peak MB':>8}"
    )
    print(header)
    rows = [("node+acorn " + acorn1["summary"]["parser"].split()[1], ref, acorn1["summary"]["rss_peak_mb"])]
    rows += [(f"python {v}", python_stats(docs[v]), docs[v]["rss_peak_mb"]) for v in names]
    for label, st, peak in rows:
        print(
            f"{label:34} {st['cold_s']:7.2f} {st['best_warm_pass_s']:11.2f} {st['sum_warm_min_s']:12.2f} "
            f"{st['sum_warm_min_s'] / ref['sum_warm_min_s']:5.2f}x {st['best_warm_pass_s'] / ref['best_warm_pass_s']:10.2f}x "
            f"{st['mean_ms']:8.3f} {st['p99_ms']:7.3f} {st['worst_warm_ms']:8.2f} {st['worst_cold_ms']:10.1f} {peak:8.0f}"
        )
    for label, _tree in trees:
        tag = f" [{label}]" if label else ""
        parse = docs.get("parse" + tag)
        if parse is None:
            continue
        floor = python_stats(parse)["sum_warm_min_s"]
        cpu_floor = python_stats(parse, "cpu_times")["sum_warm_min_s"]
        print(
            f"vs the bare parse{tag or ' (this tree)'}: "
            + ", ".join(
                f"{v} {python_stats(docs[v + tag])['sum_warm_min_s'] / floor:.2f}x"
                f" (CPU {python_stats(docs[v + tag], 'cpu_times')['sum_warm_min_s'] / cpu_floor:.2f}x)"
                for v in variants
                if v != "parse"
            )
            + f"; Σ warm-min CPU: parse {cpu_floor:.2f} s, "
            + ", ".join(
                f"{v} {python_stats(docs[v + tag], 'cpu_times')['sum_warm_min_s']:.2f} s" for v in variants if v != "parse"
            )
        )
        proc_floor = python_stats(parse, "proc_times")["sum_warm_min_s"]
        print(
            f"  process CPU (every thread: V8 compiles on its own){tag}: "
            + ", ".join(
                f"{v} {python_stats(docs[v + tag], 'proc_times')['sum_warm_min_s'] / proc_floor:.2f}x"
                f" (p99 {python_stats(docs[v + tag], 'proc_times')['p99_ms']:.3f} ms)"
                for v in variants
                if v != "parse"
            )
            + "; p99 of the calling thread's CPU: "
            + ", ".join(f"{v} {python_stats(docs[v + tag], 'cpu_times')['p99_ms']:.3f} ms" for v in variants)
        )
    for label, st, _ in rows:
        print(f"  worst warm script, {label}: {st['worst_file']} ({st['worst_warm_ms']:.2f} ms)")
    for v in names:
        if v.startswith("parse"):
            continue
        ag = agreement(docs[v], acorn1)
        print(
            f"agreement, python {v}: call names equal acorn's on {ag['names_equal']}/{ag['acorn_parses']} scripts "
            f"acorn parses ({100 * ag['names_equal'] / max(1, ag['acorn_parses']):.2f}%), spans on "
            f"{ag['spans_equal']}; parse verdict: {ag['false_errors']} false errors, {ag['missed_errors']} missed"
        )
    print(
        "peak memory: VmHWM of each process (base after loading the corpus: "
        + ", ".join(f"{v} {docs[v]['rss_base_mb']:.0f} MB" for v in names)
        + f", acorn {acorn1['summary']['rss_base_mb']:.0f} MB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
