"""ccusage, the peer most people use to count Claude Code tokens, agrees with our sums on the real public
transcripts (fixtures/claude/public), model by model: uncached input, cache writes, cache reads and
output. It runs from ``bench-work/ccusage`` (``npm install --prefix bench-work/ccusage
ccusage@17.2.1``), offline, inside ``unshare -rn``; the test skips when either is missing.

On the real CLI's 2.1.332 recordings the two differ, and the CLI's own stream-json ``result`` sides with
us (tests/test_claude_witness.py): those lines carry no ``requestId``, and ccusage counts each content
block's copy of a message's usage again (bash_fail: input 407 vs 306, output 87 vs 66)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from transcript_reader.api import Transcript
from transcript_reader.providers.claude.decode import ClaudeDecoder

ROOT = Path(__file__).resolve().parents[1]
CCUSAGE = ROOT / "bench-work" / "ccusage" / "node_modules" / ".bin" / "ccusage"
PUBLIC = sorted((ROOT / "fixtures" / "claude" / "public").glob("*.jsonl"))


def _can_unshare() -> bool:
    return subprocess.run(["sh", "-c", "unshare -rn true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not CCUSAGE.exists(), reason="ccusage is not installed (npm install --prefix "
                    "bench-work/ccusage ccusage@17.2.1)")
@pytest.mark.skipif(not _can_unshare(), reason="this machine cannot create user+network namespaces")
def test_ccusage_agrees_on_public_transcripts(tmp_path: Path) -> None:
    projects = tmp_path / ".claude" / "projects" / "-public"
    projects.mkdir(parents=True)
    for p in PUBLIC:
        shutil.copyfile(p, projects / p.name)
    proc = subprocess.run(["unshare", "-rn", "env", f"HOME={tmp_path}", f"CLAUDE_CONFIG_DIR={tmp_path / '.claude'}",
                           str(CCUSAGE), "session", "--json", "--offline"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    theirs = {m["modelName"]: (m["inputTokens"], m["cacheCreationTokens"], m["cacheReadTokens"], m["outputTokens"])
              for s in json.loads(proc.stdout)["sessions"] for m in s["modelBreakdowns"]}
    ours: dict[str, tuple[int, int, int, int]] = {}
    for p in PUBLIC:
        t = Transcript(p)
        for _ in t.items():
            pass
        info = t.info()
        assert len(info.models) == 1, info.models  # one model a file: its sum is that model's
        dec = ClaudeDecoder()  # the uncached / cache-write split, which TokenUsage.input folds together
        for n, raw in enumerate(p.read_bytes().splitlines(), 1):
            dec.decode(json.loads(raw), n)
        uncached, writes, reads, out, _thinking = dec.usage
        assert (uncached + writes + reads, reads, out) == (info.tokens.input, info.tokens.cached_input,
                                                           info.tokens.output)
        ours[info.models[0]] = (uncached, writes, reads, out)
    assert ours == theirs
