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
from corpus_tools.record.recorder import SCENARIOS, Scenario, add_run_arguments, record, run_named


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m corpus_tools.record", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="record scenarios with a real Codex release (inside unshare -rn)")
    add_run_arguments(run, SCENARIOS, "0.171.0", "@openai/codex")
    run.add_argument("--no-check", action="store_true", help="skip the conformance check")
    chk = sub.add_parser("check", help="conformance of recordings: rollout vs exec --json stream")
    chk.add_argument("out", type=Path)
    args = ap.parse_args(argv)

    if args.cmd == "run":
        status = run_named(Scenario.load, record, SCENARIOS, args)
        if status or args.no_check:
            return status
    if not args.out.is_dir():
        print(f"record check: {args.out} is not a folder of recordings", file=sys.stderr)
        return 2
    results = check_dir(args.out)
    if not results:
        print(f"record check: no recordings in {args.out} (a recording is NAME.rollout.jsonl or "
              "NAME.rollout.json beside NAME.exec.jsonl, as `record run --out` writes them)", file=sys.stderr)
        return 1
    for r in results:
        print(json.dumps(r.to_json(), ensure_ascii=False))
    failed = sum(not r.ok for r in results)
    print(f"record check: {len(results)} recording(s), {failed} not conforming", file=sys.stderr)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
