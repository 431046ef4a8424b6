"""``python -m corpus_tools.record``: record scenarios with a Codex release, then check conformance.

    python -m corpus_tools.record run --version 0.171.0 --out recordings/0.171.0 [SCENARIO…]
    python -m corpus_tools.record check recordings/0.171.0

``run`` refuses (exit 3) when no isolated network namespace can be created; Codex is never started then.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from corpus_tools.record.conformance import check_dir
from corpus_tools.record.recorder import SCENARIOS, RecorderError, Scenario, record


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m corpus_tools.record", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="record scenarios with a real Codex release (inside unshare -rn)")
    run.add_argument("scenarios", nargs="*", help=f"names in {SCENARIOS} or JSON files (default: all)")
    run.add_argument("--version", default="0.171.0", help="npm version of @openai/codex")
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--cache", type=Path, default=None, help="where npm installs Codex")
    run.add_argument("--timeout", type=int, default=180)
    run.add_argument("--no-check", action="store_true", help="skip the conformance check")
    chk = sub.add_parser("check", help="conformance of recordings: rollout vs exec --json stream")
    chk.add_argument("out", type=Path)
    args = ap.parse_args(argv)

    if args.cmd == "run":
        names = args.scenarios or sorted(p.stem for p in SCENARIOS.glob("*.json"))
        try:
            for n in names:
                res = record(Scenario.load(n), args.out, version=args.version, cache=args.cache,
                             timeout=args.timeout)
                print(json.dumps(res))
        except RecorderError as exc:
            print(f"recorder: {exc}", file=sys.stderr)
            return 3
        if args.no_check:
            return 0
    results = check_dir(args.out)
    for r in results:
        print(json.dumps(r.to_json(), ensure_ascii=False))
    return 0 if results and all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
