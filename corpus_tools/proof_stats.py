"""How many cells keep their proof of execution under ``exec_grammar.proof``'s allow-list, and why the
others lose it: ``python -m corpus_tools.proof_stats [DIR…]`` (``*.js`` files; with no folder, the real
corpus and the hand cases of ``corpus_tools.exec_oracle``). A cell counts when one of its calls lies on
its unconditional path (``Analysis.proven``); it keeps the proof when ``proven_calls`` keeps it."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from exec_grammar.analysis import analyze
from exec_grammar.proof import proof_blocker


def proof_stats(scripts: Iterable[str]) -> tuple[int, int, Counter[str]]:
    """``(cells with a proven call, cells that keep it, why the others lose it)``."""
    candidates = kept = 0
    why: Counter[str] = Counter()
    for script in scripts:
        if not analyze(script).proven:
            continue
        candidates += 1
        blocker = proof_blocker(script)
        if blocker is None:
            kept += 1
        else:
            why[blocker[1]] += 1
    return candidates, kept, why


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args:
        scripts: Iterable[str] = (p.read_text(encoding="utf-8") for d in args for p in sorted(Path(d).glob("*.js")))
    else:
        from corpus_tools.exec_oracle import hand_scripts, real_scripts

        scripts = (s for _, s in [*real_scripts(), *hand_scripts()])
    candidates, kept, why = proof_stats(scripts)
    print(f"{kept} of {candidates} cells with a proven call keep their proof")
    for reason, n in why.most_common():
        print(f"  {n:6d}  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
