"""Differential fuzzing of the exec-script analyzer against node's V8.

    python -m corpus_tools.fuzz_exec --count N [--seed S] [--out bench-work/fuzz] [--progress FILE]
    python -m corpus_tools.fuzz_exec --full --minutes M [--seed S]

**Verdicts** (the default, ``--count``): does the cell compile as the ES module Codex code mode runs it?
Node's answer comes from ``exec_grammar/oracle/oracle.js --compile-only`` (the same module compile as
the oracle's, nothing run), one long-lived process answering batches of cells; ours is
``analyze(cell).parse_error is None``. The inputs (``corpus_tools.fuzz_gen``) are, in turn, cells of a
small grammar aimed at the module-only rules, token-level mutants of real cells (``../shared/corpus``
and the hand cases; without them ``fixtures/js``) and the line-level mutants below. Each disagreement is
minimised (tokens, then characters, dropped while node and the analyzer still disagree the same way)
and written with the original to ``OUT/disagreements.jsonl``; the first few minimal cells of each kind
are printed. ``--progress FILE`` gets a line every 10,000 inputs (for a run left in the background).

**Full** (``--full``): line-level mutants are also run by the full oracle and checked with
``corpus_tools.exec_oracle.compare`` (verdict, calls, values, proofs); failures go to
``OUT/failures.jsonl``. ``tests/test_exec_fuzz.py`` runs a brief version of both in CI.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from corpus_tools.exec_oracle import ROOT, compare, hand_scripts, real_scripts
from corpus_tools.fuzz_gen import grammar_cell, token_mutant
from exec_grammar import analyze
from exec_grammar.lexer import iter_tokens
from exec_grammar.oracle import ORACLE_JS, node_path, run_oracle

__all__ = ["SNIPPETS", "NodeVerdicts", "fuzz_verdicts", "minimise", "mutate", "seeds", "main"]

#: Constructs inserted whole between lines by :func:`mutate`.
SNIPPETS: tuple[str, ...] = (
    "with (o) {}",
    "f() = 1;",
    "f() += 1;",
    "for (f() in {a: 1}) {}",
    "for (g() of [1]) {}",
    "a + f() = 1;",
    "delete x;",
    "var let = 1;",
    "var yield;",
    "let a1; let a1;",
    "var a2; let a2;",
    "{ function f3() {} function f3() {} }",
    "function f4(a, a) {}",
    "break;",
    "continue;",
    "const c5;",
    "/(/;",
    "x = /a{2,1}/;",
    "'\\u{110000}';",
    "super.x;",
    "a ?? b || c;",
    "() \n=> 1;",
    "l6: l6: ;",
    "({get g(a) {}});",
    "class K7 { constructor() {} constructor() {} }",
    "({__proto__: 1, __proto__: 2});",
    "({...a, b} = c);",
    "3in[];",
    "017;",
    "'\\08';",
    "<!-- c\n",
    "eval = 1;",
    "function h8() { await 1 }",
    "\\u0074ools.exec_command({cmd: 'esc'});",
    "await tools.\\u0065xec_command({cmd: 'esc2'});",
    "const tools = {exec_command() {}};",
    "{ const tools = {x() {}}; tools.x({}); }",
    "function f9(tools) { tools.exec_command({cmd: 'phantom'}); }",
    "globalThis.tools.exec_command({cmd: 'g'});",
    "eval(\"tools.exec_command({cmd: 'e'})\");",
    "new Function(\"tools.exec_command({cmd: 'fn'})\")();",
    "exit();",
    "yield_control();",
    "if (Math.random() > 2) { await tools.exec_command({cmd: 'never'}); }",
    "await tools.exec_command({cmd: 'top'});",
    "const r10 = await tools.exec_command({cmd: 'top2'});",
    "await tools.exec_command({cmd: 'n', n: 9007199254740993});",
    "await tools.exec_command({cmd: 'big', n: " + "9" * 400 + "});",
    "await tools.exec_command({__proto__: {a: 1}, cmd: 'proto'});",
    "await tools.exec_command({cmd: 'bigint', n: 10n});",
    "await tools.exec_command({cmd: 'echo \\uD800'});",
    "await tools.exec_command({cmd: 'h', x: 0x1f, y: 1e3, z: -0.5, w: [1, 'a', null, true]});",
    "try { await tools.exec_command({cmd: 't'}); } catch (e) {}",
    "x && await tools.exec_command({cmd: 'sc'});",
    "label: for (;;) { break label; }",
    "/*" + "*//*" * 80 + "*/",
    "//c\n" * 70,
    "await tools" + "/**/" * 70 + ".exec_command({cmd: 'comments'});",
    "const p11 = '*** Begin Patch\\n*** Add File: a.txt\\n+x\\n*** End Patch';\nawait tools.apply_patch(p11);",
    "return;",
    "if (x) return 1;",
    "new.target;",
    "import.meta.url;",
    "export const e12 = 1;",
    "export default 1;",
    "export { e13 };",
    "x = 1;\n--> c",
    "arguments;",
)
_PUNCT = "{}()[];,.=`'\"/\\\n:?!"
_WRAPS = ("{\n%s\n}", "if (x) {\n%s\n}", "(async () => {\n%s\n})();", "try {\n%s\n} finally {}", "function w() {\n%s\n}",
          "class W { static {\n%s\n} }", "function* w() {\n%s\n}", "L: {\n%s\n}", "export function w() {\n%s\n}")


def mutate(script: str, rnd: Any, steps: int = 3) -> str:
    """``script`` changed ``steps`` times by lines. ``rnd`` is a ``random.Random`` (or hypothesis' stand-in)."""
    lines = script.split("\n")
    for _ in range(steps):
        op = rnd.randrange(6)
        at = rnd.randrange(len(lines) + 1)
        if op <= 1:
            lines.insert(at, rnd.choice(SNIPPETS))
        elif op == 2 and len(lines) > 1:
            del lines[min(at, len(lines) - 1)]
        elif op == 3 and lines:
            i = min(at, len(lines) - 1)
            lines.insert(i, lines[i])
        elif op == 4 and lines:
            i = min(at, len(lines) - 1)
            lines[i] = rnd.choice(_WRAPS) % lines[i]
        else:
            text = "\n".join(lines)
            pos = rnd.randrange(len(text) + 1)
            text = text[:pos] + rnd.choice(_PUNCT) + text[pos:]
            lines = text.split("\n")
    return "\n".join(lines)


def seeds() -> list[str]:
    """The scripts mutated: the real corpus when present, else fixtures/js/real; and the hand cases."""
    out = [s for _, s in real_scripts()]
    if not out:
        out = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "fixtures" / "js" / "real").glob("*.js"))]
    out.extend(s for _, s in hand_scripts())
    return out


def inputs(rnd: random.Random, pool: list[str]) -> Iterator[str]:
    """The verdict fuzzer's inputs, endless: 40% grammar cells, 40% token mutants, 20% line mutants (a
    mutant of a mutant now and then, so changes pile up)."""
    last = ""
    while True:
        k = rnd.random()
        if k < 0.4:
            cell = grammar_cell(rnd)
        elif k < 0.8:
            base = last if last and rnd.random() < 0.2 else rnd.choice(pool)
            cell = token_mutant(base, rnd, steps=1 + rnd.randrange(3))
        else:
            cell = mutate(rnd.choice(pool), rnd, steps=1 + rnd.randrange(3))
        if len(cell) < 20_000:
            last = cell
            yield cell


class NodeVerdicts:
    """One long-lived ``oracle.js --compile-only`` process: :meth:`ask` sends a batch of cells and reads
    node's verdict for each (``(parsed, error)``). A thread writes the batch while the answers are read,
    so neither pipe fills up and blocks the other side."""

    def __init__(self, node: str) -> None:
        self._proc = subprocess.Popen(
            [node, "--experimental-vm-modules", "--no-warnings", str(ORACLE_JS), "--compile-only"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="surrogatepass",
        )
        self.asked = 0

    def ask(self, cells: list[str]) -> list[tuple[bool, str | None]]:
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        stdin = proc.stdin

        def write() -> None:
            for i, cell in enumerate(cells):
                stdin.write(json.dumps({"id": i, "script": cell}) + "\n")
            stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        out: list[tuple[bool, str | None]] = []
        for _ in cells:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the node oracle ended early")
            raw = json.loads(line)
            out.append((raw["verdict"] != "parse", raw.get("error")))
        writer.join()
        self.asked += len(cells)
        return out

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)

    def __enter__(self) -> NodeVerdicts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ours(cell: str) -> tuple[str, str | None]:
    """The analyzer's verdict: ``ok``, ``parse`` (with the message), ``unknown`` (V8 gave no verdict)
    or ``raised`` (analyze must never raise)."""
    try:
        a = analyze(cell)
    except Exception:
        return "raised", traceback.format_exc(limit=3)
    if a.parse_error is not None:
        return "parse", a.parse_error.message
    if any(f.code == "verdict-unknown" for f in a.findings):
        return "unknown", next(f.message for f in a.findings if f.code == "verdict-unknown")
    return "ok", None


def _differs(our: str, node_ok: bool) -> bool:
    return our != ("ok" if node_ok else "parse")


def kind(our: tuple[str, str | None], node: tuple[bool, str | None]) -> str:
    """A disagreement's kind, for grouping: who accepts, and the rejecting side's message with names
    and regex bodies blanked."""
    msg = (node[1] if not node[0] else our[1]) or ""
    msg = re.sub(r"'[^']*'", "'_'", msg.splitlines()[0] if msg else "")
    msg = re.sub(r"/.*/\w*", "/_/", msg)
    side = "node rejects" if not node[0] else f"analyzer {our[0]}"
    return f"{side}: {msg}"


def minimise(cell: str, still: Callable[[list[str]], list[bool]], budget: int = 600) -> str:
    """The smallest variant of ``cell`` found for which ``still`` holds: runs of tokens, then single
    characters, are dropped greedily, each size tried in one batch (``still`` answers for a batch).
    Stops after ``budget`` candidates."""
    tried = 0

    def shrink(units: list[str]) -> list[str]:
        nonlocal tried
        size = max(1, len(units) // 2)
        while size >= 1 and tried < budget:
            cands = [units[:i] + units[i + size :] for i in range(0, len(units), size)]
            cands = cands[: budget - tried]
            tried += len(cands)
            verdicts = still(["".join(c) for c in cands])
            hit = next((c for c, ok in zip(cands, verdicts, strict=True) if ok), None)
            if hit is not None:
                units = hit
                size = min(size, max(1, len(units) // 2))
            else:
                size //= 2
        return units

    toks = [t.text for t in iter_tokens(cell)]
    best = "".join(shrink(toks))
    return "".join(shrink(list(best)))


def fuzz_verdicts(
    count: int,
    seed: int,
    node: str,
    out_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    batch: int = 256,
    minimise_per_kind: int = 3,
) -> dict[str, Any]:
    """Run ``count`` inputs; return the totals and the disagreements grouped by :func:`kind`."""
    rnd = random.Random(seed)
    pool = seeds() or ["await tools.exec_command({cmd: 'ls'});"]
    gen = inputs(rnd, pool)
    kinds: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    counts: collections.Counter[str] = collections.Counter()
    node_rejects = 0
    started = time.perf_counter()
    sink = None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        sink = (out_dir / "disagreements.jsonl").open("w", encoding="utf-8", errors="surrogatepass")
    done = 0
    next_report = 10_000
    with NodeVerdicts(node) as nv:

        def still(cells: list[str], want: tuple[str, bool]) -> list[bool]:
            verdicts = nv.ask(cells)
            return [ok == want[1] and ours(c)[0] == want[0] for c, (ok, _) in zip(cells, verdicts, strict=True)]

        while done < count:
            cells = [next(gen) for _ in range(min(batch, count - done))]
            for cell, nverdict in zip(cells, nv.ask(cells), strict=True):
                node_rejects += not nverdict[0]
                our = ours(cell)
                if not _differs(our[0], nverdict[0]):
                    continue
                k = kind(our, nverdict)
                counts[k] += 1
                entry: dict[str, Any] = {"kind": k, "cell": cell, "ours": our, "node": nverdict}
                if len(kinds[k]) < minimise_per_kind:
                    want = (our[0], nverdict[0])

                    def same_way(cs: list[str], w: tuple[str, bool] = want) -> list[bool]:
                        return still(cs, w)

                    entry["minimal"] = minimise(cell, same_way)
                    kinds[k].append(entry)
                if sink is not None:
                    sink.write(json.dumps(entry) + "\n")
                    sink.flush()
            done += len(cells)
            if progress is not None and done >= next_report:
                next_report += 10_000
                rate = (time.perf_counter() - started) / done * 100_000
                progress(f"{done} inputs, {sum(counts.values())} disagreements in {len(counts)} kinds, "
                         f"node rejects {node_rejects}, {rate:.0f} s per 100k")
    if sink is not None:
        sink.close()
    seconds = time.perf_counter() - started
    return {
        "inputs": done,
        "seed": seed,
        "node_rejects": node_rejects,
        "disagreements": sum(counts.values()),
        "kinds": dict(counts),
        "examples": dict(kinds),
        "seconds": seconds,
    }


def check(script: str, v8: Any) -> list[str]:
    """The full comparison of one script with the oracle's run of it (``exec_oracle.compare``)."""
    try:
        analysis = analyze(script)
    except Exception:  # the analyzer must never raise: that is a failure to report, not to die of
        return [f"analyze raised: {traceback.format_exc(limit=3)}"]
    return compare(script, analysis, v8)


def run(minutes: float, seed: int, out_dir: Path, log: Any = print) -> tuple[int, list[dict[str, Any]]]:
    """The full comparison for ``minutes``; return (inputs tried, failures)."""
    rnd = random.Random(seed)
    pool = seeds()
    deadline = time.monotonic() + minutes * 60
    pending: collections.deque[str] = collections.deque()

    def mutants() -> Iterator[str]:
        while time.monotonic() < deadline:
            m = mutate(rnd.choice(pool), rnd, steps=1 + rnd.randrange(4))
            pending.append(m)
            yield m

    tried = 0
    failures: list[dict[str, Any]] = []
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / "failures.jsonl").open("w", encoding="utf-8", errors="surrogatepass") as sink:
        for v8 in run_oracle(mutants(), timeout_ms=200):
            script = pending.popleft()
            tried += 1
            problems = check(script, v8)
            if problems:
                failures.append({"script": script, "problems": problems, "v8": v8.verdict, "error": v8.error})
                sink.write(json.dumps(failures[-1]) + "\n")
            if tried % 500 == 0:
                log(f"{tried} inputs, {len(failures)} failures")
    return tried, failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=10_000, help="inputs of the verdict fuzz")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "bench-work" / "fuzz")
    ap.add_argument("--progress", type=Path, help="append a progress line every 10,000 inputs")
    ap.add_argument("--full", action="store_true", help="run the full oracle comparison instead")
    ap.add_argument("--minutes", type=float, default=1.0, help="length of the --full run")
    args = ap.parse_args(argv)
    node = node_path()
    if node is None:
        print("fuzz_exec: node is not installed; there is no V8 to compare with", file=sys.stderr)
        return 2
    if args.full:
        tried, failures = run(args.minutes, args.seed, args.out)
        print(f"fuzz_exec: {tried} inputs tried in {args.minutes:g} min (seed {args.seed}), {len(failures)} failures")
        for f in failures[:10]:
            print(f"  {f['problems'][0][:160]}\n    script: {f['script'][:160]!r}")
        return 1 if failures else 0

    def log(line: str) -> None:
        if args.progress is not None:
            with args.progress.open("a", encoding="utf-8") as f:
                f.write(f"{time.strftime('%H:%M:%S')} {line}\n")

    r = fuzz_verdicts(args.count, args.seed, node, args.out, progress=log)
    per = r["seconds"] / max(r["inputs"], 1) * 100_000
    summary = (f"fuzz_exec: {r['inputs']} inputs (seed {args.seed}), node rejects {r['node_rejects']}, "
               f"{r['disagreements']} disagreements in {len(r['kinds'])} kinds; {r['seconds']:.0f} s ({per:.0f} s per 100k)")
    print(summary)
    log(summary)
    for k, n in sorted(r["kinds"].items(), key=lambda kv: -kv[1]):
        print(f"  {n:6d}  {k[:150]}")
        for e in r["examples"].get(k, [])[:2]:
            print(f"          minimal: {e['minimal'][:200]!r}")
    if r["disagreements"]:
        print(f"  all: {args.out / 'disagreements.jsonl'}")
    return 1 if r["disagreements"] else 0


if __name__ == "__main__":
    sys.exit(main())
