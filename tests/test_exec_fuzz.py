"""Differential fuzzing against V8, briefly: real scripts mutated with hostile constructs
(``corpus_tools.fuzz_exec``), each analysed and run by the V8 oracle; the analyzer must agree with V8 on
every one (``corpus_tools.exec_oracle.compare``); and the verdict fuzz (grammar cells and token mutants,
node's module compile against ``analyze``). Seeded, so CI is repeatable; for a long run:
``python -m corpus_tools.fuzz_exec --count N --seed S`` (``--full --minutes N`` for the full comparison).
Skips without node."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_tools.fuzz_exec import check, fuzz_verdicts, minimise, mutate, seeds
from corpus_tools.fuzz_gen import grammar_cell, token_mutant
from exec_grammar.oracle import node_path, run_oracle

pytestmark = pytest.mark.skipif(node_path() is None, reason="node is not installed: no V8 to compare with")

SEEDS = seeds()


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.randoms(use_true_random=False), st.integers(min_value=1, max_value=4))
def test_mutated_real_scripts_agree_with_v8(rnd: random.Random, steps: int) -> None:
    mutants = [mutate(rnd.choice(SEEDS), rnd, steps=steps) for _ in range(12)]
    failures = []
    for script, v8 in zip(mutants, run_oracle(mutants, timeout_ms=300), strict=True):
        problems = check(script, v8)
        if problems:
            failures.append((problems, script))
    assert not failures, failures[:3]


def test_verdict_fuzz_agrees_with_node() -> None:
    """A brief run of the verdict fuzz (``python -m corpus_tools.fuzz_exec --count N`` is the long one):
    grammar cells aimed at the module-only rules and token mutants of real cells, each compiled by
    node as a module and analysed; the verdicts must be equal on every one."""
    node = node_path()
    assert node is not None
    r = fuzz_verdicts(2000, seed=7, node=node, minimise_per_kind=1)
    assert r["inputs"] == 2000 and r["node_rejects"] > 0
    examples = {k: [e["minimal"] for e in v] for k, v in r["examples"].items()}
    assert r["disagreements"] == 0, examples


def test_minimise_keeps_what_the_predicate_needs() -> None:
    cell = "const a = 1;\nif (a) { f(a, [1, 2]); }\nreturn;\nlet b = 2;"
    small = minimise(cell, lambda cells: ["return" in c for c in cells])
    assert small == "return"


def test_generators_are_repeatable() -> None:
    a = [grammar_cell(random.Random(5)) for _ in range(3)]
    b = [grammar_cell(random.Random(5)) for _ in range(3)]
    assert a == b
    assert token_mutant("await tools.exec_command({cmd: 'ls'});", random.Random(1), 3) == token_mutant(
        "await tools.exec_command({cmd: 'ls'});", random.Random(1), 3
    )
