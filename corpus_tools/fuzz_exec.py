"""Differential fuzzing of the exec-script analyzer against V8.

    python -m corpus_tools.fuzz_exec --minutes N [--seed S] [--out bench-work/fuzz]

Real scripts (``../shared/corpus``; without it the hand cases and ``fixtures/js/real``) are mutated:
constructs from the issue inserted between lines (early errors, runtime errors, escaped names, routes to
``tools``, a local ``tools``, odd literals, comment runs, ``exit()``), lines deleted, duplicated or
wrapped in a block, branch or function, stray punctuation. Each mutant is analysed (which must not
raise) and run by the V8 oracle, and ``corpus_tools.exec_oracle.compare`` says whether they agree.
Prints the inputs tried and the disagreements; writes each failing input to ``OUT/failures.jsonl``.
``tests/test_exec_fuzz.py`` runs a short, derandomized hypothesis version of the same in CI.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from corpus_tools.exec_oracle import ROOT, compare, hand_scripts, real_scripts
from exec_grammar import analyze
from exec_grammar.oracle import node_path, run_oracle

__all__ = ["SNIPPETS", "mutate", "seeds", "main"]

#: Constructs from the issue, inserted whole between lines.
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
)
_PUNCT = "{}()[];,.=`'\"/\\\n:?!"
_WRAPS = ("{\n%s\n}", "if (x) {\n%s\n}", "(async () => {\n%s\n})();", "try {\n%s\n} finally {}", "function w() {\n%s\n}")


def mutate(script: str, rnd: Any, steps: int = 3) -> str:
    """``script`` changed ``steps`` times. ``rnd`` is a ``random.Random`` (or hypothesis' stand-in)."""
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
    """The scripts mutated: the real corpus when present, else the hand cases and fixtures/js/real."""
    out = [s for _, s in real_scripts()]
    if not out:
        out = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "fixtures" / "js" / "real").glob("*.js"))]
    out.extend(s for _, s in hand_scripts())
    return out


def check(script: str, v8: Any) -> list[str]:
    try:
        analysis = analyze(script)
    except Exception:  # the analyzer must never raise: that is a failure to report, not to die of
        return [f"analyze raised: {traceback.format_exc(limit=3)}"]
    return compare(script, analysis, v8)


def run(minutes: float, seed: int, out_dir: Path, log: Any = print) -> tuple[int, list[dict[str, Any]]]:
    """Fuzz for ``minutes``; return (inputs tried, failures)."""
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
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "bench-work" / "fuzz")
    args = ap.parse_args(argv)
    if node_path() is None:
        print("fuzz_exec: node is not installed; there is no V8 to compare with", file=sys.stderr)
        return 2
    tried, failures = run(args.minutes, args.seed, args.out)
    print(f"fuzz_exec: {tried} inputs tried in {args.minutes:g} min (seed {args.seed}), {len(failures)} failures")
    for f in failures[:10]:
        print(f"  {f['problems'][0][:160]}\n    script: {f['script'][:160]!r}")
    if failures:
        print(f"  all failing inputs: {args.out / 'failures.jsonl'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
