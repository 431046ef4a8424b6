"""CONTRIBUTING.md lists every module of the library, one line each, and only modules that exist: a
module added or removed without its line fails here (the page stays a true map of the tree)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "CONTRIBUTING.md"


def listed() -> list[str]:
    return re.findall(r"^- `([\w/]+\.py)`:", PAGE.read_text(encoding="utf-8"), re.M)


def in_tree() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for package in ("transcript_reader", "exec_grammar")
            for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts}


def test_every_module_has_its_line_and_every_line_its_module() -> None:
    lines = listed()
    assert len(lines) == len(set(lines)), "a module is listed twice"
    missing = sorted(in_tree() - set(lines))
    gone = sorted(set(lines) - in_tree())
    assert not missing, f"modules without a line in CONTRIBUTING.md: {missing}"
    assert not gone, f"CONTRIBUTING.md lists modules that do not exist: {gone}"


def test_the_page_explains_each_extension_point() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for how in ("**A record kind**", "**A test runner**", "**An MCP tool**", "**A provider**"):
        assert how in text


def test_comments_say_the_behaviour_not_a_finding_id() -> None:
    """A comment on an odd branch names the behaviour or the fixture that forced it; an issue number or a
    finding id ("QA F7", "issue #3") means nothing to a reader of the tree, so none appears in the code,
    the tests, the tools or the docs."""
    cited_id = re.compile(r"\bQA\d?\s+[FG]\d|\bissue\s+#?\d+|\bseed \d{3}\b|\(#\d+\)")
    files = [p for package in ("transcript_reader", "exec_grammar", "corpus_tools", "tests", "docs", "fixtures")
             for p in (ROOT / package).rglob("*") if p.suffix in {".py", ".md", ".js"}
             and "__pycache__" not in p.parts and "node_modules" not in p.parts and p != Path(__file__)]
    files += [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    cited = [f"{p.relative_to(ROOT)}:{n}" for p in files
             for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if cited_id.search(line)]
    assert not cited, f"comments citing issue or finding ids: {cited[:10]}"
