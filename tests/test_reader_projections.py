"""Projections, limits and search (the contract the CLI and the MCP server share), on the library."""

from __future__ import annotations

import pytest

from tests.conftest import TRANSCRIPT_FIXTURES
from transcript_reader import read, search
from transcript_reader.errors import InvalidArgumentError
from transcript_reader.projections import centred_excerpt

FIX = TRANSCRIPT_FIXTURES
ARGV = FIX / "pairing_shell_argv_envelope.jsonl"
CELLS = FIX / "code_mode_records.jsonl"


@pytest.mark.parametrize(("projection", "kinds"), [
    ("timeline", {"user_message", "assistant_message", "shell_command", "patch"}),
    ("conversation", {"user_message", "assistant_message"}),
    ("assistant_messages", {"assistant_message"}),
    ("shell_commands", {"shell_command"}),
    ("file_changes", {"patch"}),
    ("raw_outputs", {"raw_output"}),
    ("tool_calls", set()),
    ("tests", set()),
])
def test_projection_kinds(projection: str, kinds: set[str]) -> None:
    r = read(ARGV, projection=projection)
    assert {i.kind.value for i in r.items} == kinds and r.truncated is False


def test_final_projection_and_include() -> None:
    r = read(ARGV, projection="final")
    assert [i.text for i in r.items] == ["Done: a.txt added.", "You're welcome."]  # type: ignore[union-attr]
    r = read(ARGV, projection="final", include=["user_message"])
    assert [i.kind.value for i in r.items] == ["user_message", "assistant_message", "user_message",
                                                "assistant_message"]


def test_tests_and_tool_calls_projections_on_cells() -> None:
    assert [i.framework for i in read(CELLS, projection="tests").items] == ["pytest"]  # type: ignore[union-attr]
    names = [i.name for i in read(CELLS, projection="tool_calls").items]  # type: ignore[union-attr]
    assert names.count("exec") == 5 and "wait" in names and "mcp__docs__search" in names


def test_tail_max_items_and_counts() -> None:
    full = read(ARGV)
    tail = read(ARGV, tail=3)
    assert tail.items == full.items[-3:] and tail.dropped_items == len(full.items) - 3 and tail.truncated
    head = read(ARGV, max_items=2)
    assert head.items == full.items[:2] and head.total_items == len(full.items)


def test_max_chars_drops_whole_items_and_says_so() -> None:
    full = read(ARGV, projection="conversation")
    r = read(ARGV, projection="conversation", max_chars=len("run the tests") + 3)
    assert [i.text for i in r.items] == ["run the tests"]  # type: ignore[union-attr]
    assert r.truncated and r.dropped_items == len(full.items) - 1
    # with tail, the budget is spent from the end
    r = read(ARGV, projection="conversation", tail=10, max_chars=len("You're welcome."))
    assert [i.text for i in r.items] == ["You're welcome."]  # type: ignore[union-attr]


def test_max_chars_per_item_cuts_and_counts() -> None:
    r = read(ARGV, projection="shell_commands", max_chars_per_item=4)
    first = r.items[0]
    assert first.command == "ls m" and first.output == "" and first.truncated_chars > 0  # type: ignore[union-attr]
    assert r.truncated_chars == sum(i.truncated_chars for i in r.items) and r.truncated


def test_a_single_oversized_item_is_cut_not_dropped() -> None:
    r = read(ARGV, projection="conversation", max_items=1, max_chars=3)
    assert [i.text for i in r.items] == ["run"] and r.items[0].truncated_chars == 10  # type: ignore[union-attr]


@pytest.mark.parametrize("kwargs", [{"projection": "nope"}, {"include": ["nope"]}, {"tail": -1},
                                    {"max_chars": -5}])
def test_bad_arguments_are_typed_errors(kwargs: dict) -> None:
    with pytest.raises(InvalidArgumentError):
        read(ARGV, **kwargs)


def test_search_substring_is_case_insensitive_with_context() -> None:
    r = search(ARGV, "A.TXT", context=1)
    assert r.total_matches == len(r.matches) >= 2
    m = r.matches[0]
    assert m.item.kind.value == "patch" and "a.txt" in m.excerpt
    assert len(m.before) == 1 and len(m.after) == 1
    assert m.before[0].line < m.item.line < m.after[0].line


def test_search_regex_kinds_and_max_matches() -> None:
    r = search(CELLS, r"cat [ab]", regex=True, kinds=["shell_command"], max_matches=1)
    assert len(r.matches) == 1 and r.total_matches == 2 and r.truncated
    assert r.matches[0].item.command == "cat a"  # type: ignore[union-attr]
    with pytest.raises(InvalidArgumentError):
        search(CELLS, "(", regex=True)
    with pytest.raises(InvalidArgumentError):
        search(CELLS, "")


def test_search_hidden_kinds_only_when_asked() -> None:
    assert search(ARGV, "Looking").total_matches == 0
    assert search(ARGV, "Looking", kinds=["reasoning"]).total_matches == 1


def test_excerpt_is_centred_on_the_hit() -> None:
    text = "a" * 100 + "NEEDLE" + "b" * 100
    ex = centred_excerpt(text, 100, 106, 20)
    assert "NEEDLE" in ex and ex.startswith("…") and ex.endswith("…")
    left = ex[1:ex.index("NEEDLE")]
    right = ex[ex.index("NEEDLE") + 6:-1]
    assert abs(len(left) - len(right)) <= 1
    assert centred_excerpt("short", 0, 5, 20) == "short"


def test_max_chars_per_item_bounds_patch_diffs() -> None:
    """A patch's diffs are text a caller receives: the per-item budget cuts them and counts the cut."""
    full = read(TRANSCRIPT_FIXTURES / "patch_diffs.jsonl", projection="file_changes")
    diff_chars = sum(len(f.diff or "") for it in full.items for f in it.files)  # type: ignore[union-attr]
    assert diff_chars > 40
    cut = read(TRANSCRIPT_FIXTURES / "patch_diffs.jsonl", projection="file_changes", max_chars_per_item=10)
    for it in cut.items:
        assert sum(len(f.diff or "") for f in it.files) <= 10  # type: ignore[union-attr]
    assert cut.truncated_chars > 0
    assert sum(it.truncated_chars for it in cut.items) == cut.truncated_chars


def test_public_search_stays_the_function_after_every_subpackage_loads() -> None:
    """``transcript_reader.search`` is the entry point. A subpackage of the same name would replace it
    on the package as soon as any test (or user code) imported that subpackage, so none may exist."""
    import importlib
    import pkgutil

    import transcript_reader

    for mod in pkgutil.iter_modules(transcript_reader.__path__):
        if mod.name in transcript_reader.__all__:
            pytest.fail(f"transcript_reader.{mod.name} shadows the public entry point of the same name")
    importlib.import_module("transcript_reader.home_search")
    assert callable(transcript_reader.search) and transcript_reader.search.__module__ == "transcript_reader.api"
