"""How often the analyzer's verdict equals node's module verdict, on the cells the project is measured on.

    python -m corpus_tools.verdict_agreement [--bench N] [--seed S] [--work bench-work/agreement]

For each set: the real ``exec`` cells of ``../shared/corpus`` (the public scripts and the realcodex
recordings; without it ``fixtures/js/real``), the hand cases (``fixtures/js/hand`` and
``../shared/bench/hand``), and the bench corpus (``gen_corpus.py N S``, 20,000 cells of seed 1 by
default, the corpus ``corpus_tools.bench_exec`` times). Node's verdict is the module compile of
``exec_grammar/oracle/oracle.js --compile-only`` (does the cell compile as the ES module Codex runs),
ours is ``analyze(cell).parse_error is None``. Prints ``agree/total`` per set, how many node rejects,
and each disagreement. Exit status 1 when any set disagrees.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from corpus_tools.bench_exec import generate, prepare_kit
from corpus_tools.exec_oracle import ROOT, hand_scripts, real_scripts
from corpus_tools.fuzz_exec import NodeVerdicts, ours
from exec_grammar.oracle import node_path

__all__ = ["agreement", "main"]


def agreement(items: list[tuple[str, str]], nv: NodeVerdicts, batch: int = 256) -> tuple[int, int, list[str]]:
    """``(agreeing cells, cells node rejects, disagreements as 'where: ours vs node')``."""
    agree = rejects = 0
    bad: list[str] = []
    for i in range(0, len(items), batch):
        chunk = items[i : i + batch]
        for (where, cell), (ok, error) in zip(chunk, nv.ask([c for _, c in chunk]), strict=True):
            rejects += not ok
            our = ours(cell)
            if our[0] == ("ok" if ok else "parse"):
                agree += 1
            else:
                bad.append(f"{where}: analyzer {our[0]} ({our[1]}), node {'ok' if ok else error}")
    return agree, rejects, bad


def corpus_cells() -> list[tuple[str, str]]:
    items = list(real_scripts())
    if not items:
        items = [(f"fixtures/js/real/{p.name}", p.read_text(encoding="utf-8"))
                 for p in sorted((ROOT / "fixtures" / "js" / "real").glob("*.js"))]
    return items


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", type=int, default=20_000, help="cells of the bench corpus (0: skip it)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", type=Path, default=ROOT / "bench-work" / "agreement")
    args = ap.parse_args(argv)
    node = node_path()
    if node is None:
        print("verdict_agreement: node is not installed; there is no V8 to compare with", file=sys.stderr)
        return 2
    sets = [("corpus cells", corpus_cells()), ("hand cases", list(hand_scripts()))]
    if args.bench:
        files = generate(prepare_kit(args.work), args.bench, args.seed)
        sets.append((f"bench ({args.bench}, seed {args.seed})", [(f.name, f.read_text(encoding="utf-8")) for f in files]))
    failed = False
    with NodeVerdicts(node) as nv:
        for name, items in sets:
            agree, rejects, bad = agreement(items, nv)
            print(f"{name}: {agree}/{len(items)} agree with node (node rejects {rejects})")
            for b in bad[:20]:
                print(f"  {b[:300]}")
            failed |= bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
