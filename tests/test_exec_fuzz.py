"""Differential fuzzing against V8, briefly: real scripts mutated with hostile
constructs (``corpus_tools.fuzz_exec``), each analysed and run by the V8 oracle; the analyzer must agree
with V8 on every one (``corpus_tools.exec_oracle.compare``). Derandomized, so CI is repeatable; for a
long run: ``python -m corpus_tools.fuzz_exec --minutes N``. Skips without node."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_tools.fuzz_exec import check, mutate, seeds
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
