"""The analyzer against V8 itself: the invariant of ``corpus_tools.exec_oracle``
holds on every real script in ``../shared/corpus``, every hand case, the 20,000-script bench corpus and
the issue's own cases: same parse verdict, every call V8 makes listed (or covered by a whole-script
entry) with the value V8 sends, and no proven call that V8 did not make.

The oracle is ``exec_grammar/oracle/oracle.js`` run by node (nothing installed); without node every test
here skips with that reason. Each corpus test prints its agreement count (``-s`` shows it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corpus_tools.bench_exec import prepare_kit
from corpus_tools.exec_oracle import compare, hand_scripts, real_scripts
from exec_grammar import ShellCommandEntry, analyze
from exec_grammar.oracle import node_path, run_oracle

pytestmark = pytest.mark.skipif(node_path() is None, reason="node is not installed: no V8 to compare with")


def _agreement(items: list[tuple[str, str]]) -> tuple[int, list[str]]:
    bad: list[str] = []
    for (where, script), v8 in zip(items, run_oracle([s for _, s in items], timeout_ms=300), strict=True):
        problems = compare(script, analyze(script), v8)
        if problems:
            bad.append(f"{where}: {problems}")
    return len(items) - len(bad), bad


def test_real_corpus_agrees_with_v8() -> None:
    items = list(real_scripts())
    if not items:
        pytest.skip("../shared/corpus is absent (fresh clone): the hand cases and the bench corpus still run")
    agree, bad = _agreement(items)
    print(f"real corpus: {agree}/{len(items)} agree with V8")
    assert not bad, bad[:5]


def test_hand_cases_agree_with_v8() -> None:
    items = list(hand_scripts())
    own = sorted((Path(__file__).parent.parent / "fixtures" / "js" / "hand").glob("*.js"))
    # every hand case the project ships is compared; ../shared/bench/hand adds more where it is present
    assert len(own) >= 56 and len(items) >= len(own)
    agree, bad = _agreement(items)
    print(f"hand cases: {agree}/{len(items)} agree with V8")
    assert not bad, bad[:5]


@pytest.mark.slow
def test_bench_corpus_agrees_with_v8(tmp_path: Path) -> None:
    """The 20,000 scripts ``python -m corpus_tools.bench_exec`` times (seed 1), about a minute."""
    work = prepare_kit(tmp_path / "kit")
    subprocess.run([sys.executable, "gen_corpus.py", "20000", "1"], cwd=work, check=True, capture_output=True)
    files = sorted((work / "corpus").glob("*.js"))
    assert len(files) == 20000
    agree, bad = _agreement([(f.name, f.read_text(encoding="utf-8")) for f in files])
    print(f"bench corpus: {agree}/{len(files)} agree with V8")
    assert not bad, bad[:5]


#: The issue's cases (each bullet of "Why"), with what V8 does with them.
ISSUE_CASES: dict[str, str] = {
    "wrong no: a runtime error after a command": (
        "const r = await tools.exec_command({cmd: 'rm -rf build && make'});\ndone() = 1;"
    ),
    "wrong no: for (f() in o)": "await tools.exec_command({cmd: 'ls'});\nfor (f() in {a: 1}) {}",
    "verdict: with": "await tools.exec_command({cmd: 'ls'});\nwith (r) {}",
    "missed: escaped tools": "await \\u0074ools.exec_command({cmd: 'ls'});",
    "missed: escaped property": "await tools.\\u0065xec_command({cmd: 'ls'});",
    "missed: globalThis": "await globalThis.tools.exec_command({cmd: 'ls'});",
    "missed: globalThis['tools']": "await globalThis['tools'].exec_command({cmd: 'ls'});",
    "missed: eval": "await eval(\"tools.exec_command({cmd: 'ls'})\");",
    "missed: indirect eval": "await (0, eval)(\"tools.exec_command({cmd: 'ls'})\");",
    "missed: new Function": "await new Function(\"return tools.exec_command({cmd: 'ls'})\")();",
    "missed: AsyncFunction": (
        "const AF = (async () => {}).constructor;\nawait new AF(\"await tools.exec_command({cmd: 'ls'})\")();"
    ),
    "phantom: const tools": "const tools = {exec_command() {}};\ntools.exec_command({cmd: 'rm -rf /'});",
    "phantom: parameter": "function f(tools) { tools.exec_command({cmd: 'rm -rf /'}); }\nf({exec_command() {}});",
    "phantom: class": "class tools { static exec_command() {} }\ntools.exec_command({cmd: 'rm -rf /'});",
    "phantom: catch binding": "try { throw {exec_command() {}}; } catch (tools) { tools.exec_command({cmd: 'x'}); }",
    "phantom: for-of binding": "for (const tools of [{exec_command() {}}]) tools.exec_command({cmd: 'x'});",
    "phantom: destructured": "const {tools} = {tools: {exec_command() {}}};\ntools.exec_command({cmd: 'x'});",
    "phantom: function": "function tools() {}\ntools.exec_command = () => 1;\ntools.exec_command({cmd: 'x'});",
    "values: BigInt": "await tools.view_image({path: 'a.png', n: 10n});",
    "values: beyond 2^53": "await tools.exec_command({cmd: 'ls', n: 9007199254740993});",
    "values: __proto__": "await tools.exec_command({__proto__: {x: 1}, cmd: 'ls'});",
    "values: big integer": "await tools.exec_command({cmd: 'ls', n: " + "9" * 5000 + "});",
    "values: lone surrogate": "await tools.exec_command({cmd: 'echo \\uD800'});",
    "scope: sibling blocks": (
        "{ const patch = '*** Begin Patch\\n*** Add File: a.txt\\n+x\\n*** End Patch';"
        " await tools.apply_patch(patch); }\n"
        "{ const patch = '*** Begin Patch\\n*** Add File: b.txt\\n+y\\n*** End Patch';"
        " await tools.apply_patch(patch); }"
    ),
}


@pytest.fixture(scope="module")
def issue_v8() -> dict[str, object]:
    return dict(zip(ISSUE_CASES, run_oracle(list(ISSUE_CASES.values()), timeout_ms=500), strict=True))


@pytest.mark.parametrize("case", ISSUE_CASES)
def test_issue_case_agrees_with_v8(case: str, issue_v8: dict[str, object]) -> None:
    script = ISSUE_CASES[case]
    v8 = issue_v8[case]
    a = analyze(script)
    assert compare(script, a, v8) == []  # type: ignore[arg-type]
    if case.startswith("phantom"):
        assert v8.calls == () and a.calls == ()  # type: ignore[attr-defined]
        assert any(f.code == "tools-shadowed" for f in a.findings)
    if case.startswith("missed"):
        assert v8.calls  # type: ignore[attr-defined]
        assert a.calls or any(isinstance(e, ShellCommandEntry) and e.whole_script for e in a.entries)
    if case.startswith("wrong no"):
        assert a.parse_error is None and v8.verdict == "runtime"  # type: ignore[attr-defined]
        assert v8.calls and a.proven == (0,)  # type: ignore[attr-defined]
