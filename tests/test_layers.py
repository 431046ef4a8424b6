"""The architecture, enforced: imports flow one way (decode -> model -> projections -> presentation),
and the library never prints, exits or reads the environment (house style)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Presentation modules: the only places allowed to print, exit, read the environment or import
#: click / rich / the MCP SDK.
PRESENTATION = ("transcript_reader/cli/", "transcript_reader/present/", "transcript_reader/mcp_server.py",
                "transcript_reader/__main__.py", "transcript_reader/browse/")
PRESENTATION_LIBS = {"click", "rich", "mcp", "textual"}


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _is_presentation(rel: str) -> bool:
    return any(rel == p or rel.startswith(p) for p in PRESENTATION)


LIBRARY = [p for p in _modules("transcript_reader") + _modules("exec_grammar") if not _is_presentation(_rel(p))]


@pytest.mark.parametrize("path", LIBRARY, ids=_rel)
def test_library_does_not_import_presentation(path: Path) -> None:
    bad = {
        name
        for name in _imports(path)
        if name.split(".")[0] in PRESENTATION_LIBS | {"corpus_tools"}
        or name.startswith(("transcript_reader.cli", "transcript_reader.present", "transcript_reader.mcp_server"))
    }
    assert not bad, f"{_rel(path)} imports presentation code: {sorted(bad)}"


@pytest.mark.parametrize("path", _modules("exec_grammar"), ids=_rel)
def test_analyzer_stands_alone(path: Path) -> None:
    """exec_grammar is the foundation: it knows nothing of transcripts."""
    bad = {n for n in _imports(path) if n.split(".")[0] in {"transcript_reader", "corpus_tools"}}
    assert not bad, f"{_rel(path)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", [p for p in LIBRARY if "/providers/" in _rel(p)], ids=_rel)
def test_decoders_do_not_import_projections(path: Path) -> None:
    bad = {n for n in _imports(path) if n.startswith(("transcript_reader.projections", "transcript_reader.render",
                                                      "transcript_reader.api", "transcript_reader.discovery"))}
    assert not bad, f"{_rel(path)} reaches downstream: {sorted(bad)}"


@pytest.mark.parametrize("path", LIBRARY, ids=_rel)
def test_library_never_prints_exits_or_reads_environment(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    offences = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in {"print", "exit", "quit", "input"}:
                offences.append(f"{func.id}() at line {node.lineno}")
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                if (func.value.id, func.attr) in {("sys", "exit"), ("os", "getenv"), ("os", "_exit")}:
                    offences.append(f"{func.value.id}.{func.attr}() at line {node.lineno}")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) == ("os", "environ"):
                offences.append(f"os.environ at line {node.lineno}")
    assert not offences, f"{_rel(path)}: {offences}"
