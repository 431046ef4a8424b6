"""The reader's fuzz harness, briefly (``python -m corpus_tools.fuzz_reader --minutes N``
runs it for longer over the shared corpus too): mutated fixture transcripts never let an untyped error
out, their line accounting adds up to the physical line count, and what an intact line states (a user
message, a shell command) is in the item stream."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_tools.fuzz_reader import (
    MUTATIONS,
    build_input,
    check_input,
    expected_facts,
    mutate_line,
    run_lines,
    seed_files,
)

SEEDS = seed_files(fixtures_only=True)
STEP = st.tuples(st.sampled_from(MUTATIONS), st.floats(0, 1, exclude_max=True), st.floats(0, 1))


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, len(SEEDS) - 1), st.integers(0, len(SEEDS) - 1), st.lists(STEP, min_size=1, max_size=5))
def test_mutated_transcripts_keep_the_invariants(tmp_path_factory: object, si: int, oi: int,
                                                 plan: list[tuple[str, float, float]]) -> None:
    work = Path(tmp_path_factory.mktemp("fuzz"))  # type: ignore[attr-defined]
    fi = build_input(SEEDS[si], SEEDS[oi], plan)
    # a file whose first lines now have another format's shape loses lines to format detection (the
    # file-level vote); that is reported by the harness, not asserted here
    failures = [f for f in check_input(fi, work) if "(read as " not in f]
    assert failures == [], (fi.seed, fi.mutations)


def test_the_independent_reading_finds_prompts_and_commands() -> None:
    line = (b'{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"exec_command",'
            b'"arguments":"{\\"cmd\\": \\"make test\\"}","call_id":"c"}}\n')
    assert expected_facts(line) == ([], ["make test"])
    user = b'{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"fix it"}}\n'
    assert expected_facts(user) == (["fix it"], [])


def test_every_mutation_changes_a_line_or_says_why() -> None:
    line = b'{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"fix it"}}\n'
    rnd = random.Random(1)
    for how in ("replace_value", "delete_key", "truncate", "flip_byte", "invalid_utf8", "nul"):
        assert mutate_line(line, how, rnd) != line, how


def test_a_brief_dense_run_keeps_every_line_typed_and_accounted() -> None:
    """The long run (``--mutated-lines 1000000``) in small: half of every input's lines mutated, bad
    characters and runs of empty lines among the mutations."""
    import io

    out = io.StringIO()
    inputs, lines, mutated, kinds = run_lines(3000, density=0.5, seed=7, fixtures_only=True, out=out)
    assert mutated >= 3000 and lines > mutated and inputs > 0
    bad = {k: n for k, n in kinds.items() if k.startswith(("untyped", "accounting", "lines "))}
    assert bad == {}, out.getvalue()


def test_the_dense_mutations_change_a_line() -> None:
    line = b'{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"fix it"}}\n'
    rnd = random.Random(2)
    for how in ("bad_char", "blank_run"):
        assert mutate_line(line, how, rnd) != line, how
