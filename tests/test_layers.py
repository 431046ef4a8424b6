"""The architecture, enforced: imports flow one way (decode -> model -> projections -> presentation),
and the library never prints, exits or reads the environment (house style)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Presentation modules: the only places allowed to print, exit, read the environment or import
#: click / rich / the MCP SDK.
PRESENTATION = ("transcript_reader/cli/", "transcript_reader/present/", "transcript_reader/mcp/",
                "transcript_reader/__main__.py", "transcript_reader/browse/")
PRESENTATION_LIBS = {"click", "rich", "mcp", "textual"}


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _imports(path: Path, *, type_only: bool = True, members: bool = False) -> set[str]:
    """Modules ``path`` imports (at any depth, lazily too), with ``members`` the names it imports from
    them too (``from a import b`` may import the module ``a.b``); those under ``if TYPE_CHECKING:`` only
    with ``type_only`` (a type named across a circle is still a circle in the
    design, even when it costs nothing at run time)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    if not type_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for n in ast.walk(node))
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            if members:
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
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
        or name.startswith(("transcript_reader.cli", "transcript_reader.present", "transcript_reader.mcp"))
    }
    assert not bad, f"{_rel(path)} imports presentation code: {sorted(bad)}"


@pytest.mark.parametrize("path", _modules("transcript_reader"), ids=_rel)
def test_the_product_never_imports_the_dev_tools(path: Path) -> None:
    """corpus_tools (benchmarks, fuzzers, recorders) builds on the product, never the reverse: not even
    the CLI may import it, so a command a user runs works without it."""
    bad = {n for n in _imports(path) if n.split(".")[0] == "corpus_tools"}
    assert not bad, f"{_rel(path)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", _modules("exec_grammar"), ids=_rel)
def test_analyzer_stands_alone(path: Path) -> None:
    """exec_grammar is the foundation: it knows nothing of transcripts."""
    bad = {n for n in _imports(path) if n.split(".")[0] in {"transcript_reader", "corpus_tools"}}
    assert not bad, f"{_rel(path)} imports {sorted(bad)}"


@pytest.mark.parametrize("path", [p for p in LIBRARY if "/providers/" in _rel(p)], ids=_rel)
def test_decoders_do_not_import_projections(path: Path) -> None:
    bad = {n for n in _imports(path) if n.startswith(("transcript_reader.projections", "transcript_reader.projections.render",
                                                      "transcript_reader.api", "transcript_reader.sessions"))}
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


# ---------------------------------------------------------------- rules of the pipeline

#: Layers, lowest first: a module imports only from its own layer or below (presentation on top).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("analyzer", ("exec_grammar",)),
    ("model", ("transcript_reader.errors", "transcript_reader.model", "transcript_reader.timestamps")),
    ("io", ("transcript_reader.reading",)),
    ("providers", ("transcript_reader.providers",)),
    ("assembly", ("transcript_reader.testruns", "transcript_reader.assembly", "transcript_reader.usage.accounting")),
    ("projections", ("transcript_reader.projections", "transcript_reader.api", "transcript_reader.sessions",
                     "transcript_reader.__init__", "transcript_reader.home_search", "transcript_reader.census",
                     "transcript_reader.usage", "transcript_reader.export")),
    ("presentation", ("transcript_reader.cli", "transcript_reader.present", "transcript_reader.mcp",
                      "transcript_reader.browse", "transcript_reader.__main__")),
)


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1 and parts[:2] != ["transcript_reader", "__init__"]:
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int | None:
    for rank, (_name, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    return None


OURS = {_module_name(p): p for p in _modules("transcript_reader") + _modules("exec_grammar")}


def _ours(names: set[str]) -> set[str]:
    return {n for n in names if n in OURS}


@pytest.mark.parametrize("path", list(OURS.values()), ids=_rel)
def test_no_import_points_against_the_layers(path: Path) -> None:
    me = _layer(_module_name(path))
    assert me is not None, f"{_rel(path)} belongs to no layer: add it to LAYERS (and CONTRIBUTING.md)"
    up = sorted(n for n in _ours(_imports(path, type_only=False, members=True)) if (_layer(n) or 0) > me)
    assert not up, f"{_rel(path)} ({LAYERS[me][0]}) imports from a higher layer: {up}"


def test_the_import_graph_has_no_cycle() -> None:
    graph = {m: _ours(_imports(p, type_only=False, members=True)) - {m} for m, p in OURS.items()}
    # importing a submodule imports its package: an edge to the package is implied and not a cycle
    graph = {m: {n for n in deps if not m.startswith(n + ".")} for m, deps in graph.items()}
    cycles = _cycles(graph)
    assert not cycles, f"import cycles: {cycles[:5]}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    found: list[list[str]] = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                found.append(stack[stack.index(n):] + [n])
            elif n not in state:
                visit(n, stack)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    return found


#: Keys only a provider may read: the raw wire shapes of a transcript.
RAW_KEYS = frozenset({
    "payload", "event_msg", "response_item", "session_meta", "turn_context", "record_type",
    "total_token_usage", "last_agent_message", "aggregated_output", "function_call_output", "task_complete",
    "thread.started", "item.completed", "exec_command_end",
})


def _raw_key_reads(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and node.args and isinstance(node.args[0], ast.Constant)):
            key = node.args[0].value
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and any(
                isinstance(op, ast.In) for op in node.ops):
            key = node.left.value
        if isinstance(key, str) and key in RAW_KEYS:
            found.append(f"{key!r} at line {node.lineno}")
    return found


@pytest.mark.parametrize("path", [p for p in _modules("transcript_reader") if "/providers/" not in _rel(p)],
                         ids=_rel)
def test_raw_transcript_keys_are_read_only_inside_a_provider(path: Path) -> None:
    assert not _raw_key_reads(path), f"{_rel(path)} reads raw transcript keys: {_raw_key_reads(path)}"


@pytest.mark.parametrize("path", [p for p in _modules("transcript_reader") if _is_presentation(_rel(p))], ids=_rel)
def test_presentation_never_imports_a_decoder(path: Path) -> None:
    """Presentation reads transcripts through the library (api, discovery, render, the provider
    registry); a provider's own modules are none of its business."""
    bad = sorted(n for n in _imports(path) if n.startswith("transcript_reader.providers.")
                 and n not in ("transcript_reader.providers.head",))
    assert not bad, f"{_rel(path)} imports decoders: {bad}"


@pytest.mark.parametrize("path", [ROOT / "transcript_reader" / "sessions" / "discovery.py",
                                  ROOT / "transcript_reader" / "sessions" / "session_homes.py"], ids=_rel)
def test_discovery_finds_sessions_through_the_provider_registry(path: Path) -> None:
    """Listing and resolving sessions works for every provider alike: where a provider keeps its
    sessions, their names and what a file name says are the provider's (``Provider.session_files``,
    ``session_names``, ``session_id_from_name``), never read from its modules by discovery."""
    bad = sorted(n for n in _imports(path) if n.startswith(("transcript_reader.providers.codex",
                                                             "transcript_reader.providers.claude")))
    assert not bad, f"{_rel(path)} imports a provider's own modules: {bad}"


def _private_reach(path: Path) -> list[str]:
    """Private names of another module used here: ``from m import _x`` or ``m._x`` on an imported module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module != "__future__":
            for a in node.names:
                if a.name.startswith("_"):
                    found.append(f"{node.module}.{a.name}")
                elif node.module.startswith("transcript_reader"):
                    modules.add(a.asname or a.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name) and node.value.id in modules):
            found.append(f"{node.value.id}.{node.attr}")
    return sorted(set(found))


@pytest.mark.parametrize("path", _modules("transcript_reader/browse"), ids=_rel)
def test_browse_uses_public_presentation_helpers(path: Path) -> None:
    """The browser shares the terminal's presentation helpers (``present/``), never the CLI's code
    nor another module's private names."""
    cli = sorted(n for n in _imports(path) if n.startswith("transcript_reader.cli"))
    assert not cli, f"{_rel(path)} imports the CLI: {cli}"
    assert not _private_reach(path), f"{_rel(path)} uses private names: {_private_reach(path)}"


def test_one_json_error_envelope() -> None:
    """``{"ok": false, "error": …}`` is written by ``render.error_to_dict`` only."""
    offenders = []
    for p in _modules("transcript_reader") + _modules("corpus_tools"):
        if _rel(p) == "transcript_reader/projections/render.py":
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict) and any(
                    isinstance(k, ast.Constant) and k.value == "ok" for k in node.keys) and any(
                    isinstance(k, ast.Constant) and k.value == "error" for k in node.keys):
                offenders.append(f"{_rel(p)}:{node.lineno}")
    assert not offenders, f"hand-written error envelopes: {offenders}"


MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 300
#: Modules of other owners still over the limits (each owner splits
#: its own): a module leaves this list when it is split, and may never join it.
OVER_LIMIT_ELSEWHERE: frozenset[str] = frozenset()  # empty: every module is within the limits


@pytest.mark.parametrize("path", _modules("transcript_reader") + _modules("exec_grammar"), ids=_rel)
def test_modules_and_classes_stay_small(path: Path) -> None:
    if _rel(path) in OVER_LIMIT_ELSEWHERE:
        pytest.skip("over the limits; split under its owner's issue")
    text = path.read_text(encoding="utf-8")
    lines = text.count("\n")
    assert lines <= MAX_MODULE_LINES, f"{_rel(path)} has {lines} lines (at most {MAX_MODULE_LINES})"
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef):
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            assert size <= MAX_CLASS_LINES, f"{_rel(path)}: class {node.name} has {size} lines"


def _type_graph(names: dict[str, Path]) -> dict[str, set[str]]:
    """Imports among ``names``, type-only ones included (a submodule's edge to its own package is not a circle)."""
    return {m: {n for n in _ours(_imports(p, members=True)) if n in names and n != m and not m.startswith(n + ".")}
            for m, p in names.items()}


def test_the_whole_graph_has_no_circle_even_through_type_only_imports() -> None:
    """A type named across a circle is still a circle in the design, even when it costs nothing at run
    time. The assembly's collaborators are given views of their peers (``assembly/peers.py``), never the
    ``Assembler``; the exec stream's events are given their decoder as a protocol
    (``exec_events.StreamDecoder``) and its run state (``exec_run.RunState``)."""
    cycles = _cycles(_type_graph(OURS))
    assert not cycles, f"import cycles: {cycles[:5]}"
