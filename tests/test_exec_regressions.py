"""Regression tests for each hostile script the analyzer once misread, read by the analyzer alone (no node needed;
``tests/test_exec_oracle.py`` checks the same cases against V8 when node is there)."""

from __future__ import annotations

import json

from exec_grammar import PatchEntry, ShellCommandEntry, analyze
from exec_grammar.literals import COMPUTED, decode_literal
from exec_grammar.render import analysis_to_json


def _commands(script: str) -> list[str]:
    return [e.command for e in analyze(script).entries if isinstance(e, ShellCommandEntry)]


def test_wrong_no_runtime_error_is_not_a_parse_error() -> None:
    for tail in ("done() = 1;", "f() += 1;", "for (f() in o) {}", "for (f() of a) {}", "a = f() = 1;"):
        a = analyze(f"await tools.exec_command({{cmd: 'rm -rf build && make'}});\n{tail}")
        assert a.parse_error is None, tail
        assert _commands(a.source) == ["rm -rf build && make"]
        assert a.proven == (0,)
    # still syntax errors in V8: the target is not a call
    for tail in ("a + f() = 1;", "new F() = 1;", "f() &&= 1;", "f()?.x = 1;"):
        assert analyze(f"await tools.exec_command({{cmd: 'ls'}});\n{tail}").parse_error is not None, tail


def test_with_fails_at_parse_time() -> None:
    a = analyze("await tools.exec_command({cmd: 'ls'});\nwith (r) { x(); }")
    assert a.parse_error is not None and "with" in a.parse_error.message
    assert a.proven == ()


def test_missed_calls_escaped_names() -> None:
    a = analyze("await \\u0074ools.exec_command({cmd: 'a'});\nawait tools.\\u0065xec_command({cmd: 'ls'});")
    assert [c.name for c in a.calls] == ["exec_command", "exec_command"]
    assert _commands(a.source) == ["a", "ls"]


def test_missed_calls_routes_give_the_whole_script() -> None:
    for script in (
        "globalThis.tools.exec_command({cmd: 'ls'})",
        "globalThis['tools'].exec_command({cmd: 'ls'})",
        "eval(\"tools.exec_command({cmd: 'ls'})\")",
        "(0, eval)(\"tools.exec_command({cmd: 'ls'})\")",
        "new Function(\"tools.exec_command({cmd: 'ls'})\")()",
        "const AF = (async () => {}).constructor; await new AF(\"await tools.exec_command({cmd: 'ls'})\")();",
        "g\\u006cobalThis.tools.exec_command({cmd: 'ls'})",
    ):
        a = analyze(script)
        assert any(f.code == "tools-escape" for f in a.findings), script
        (entry,) = [e for e in a.entries if isinstance(e, ShellCommandEntry)]
        assert entry.whole_script and entry.command == script
    # harmless uses of the same names
    for script in ("globalThis.console; await tools.exec_command({cmd: 'ls'})",
                   "class A { constructor() {} } await tools.exec_command({cmd: 'ls'})",
                   "// eval(x)\nawait tools.exec_command({cmd: 'ls'})"):
        assert _commands(script) == ["ls"], script


def test_phantom_calls_of_a_shadowed_tools() -> None:
    for script in (
        "const tools = {exec_command() {}}; tools.exec_command({cmd: 'rm -rf /'});",
        "function f(tools) { tools.exec_command({cmd: 'rm -rf /'}); }",
        "class tools {} tools.exec_command({cmd: 'rm -rf /'});",
        "try {} catch (tools) { tools.exec_command({cmd: 'rm -rf /'}); }",
        "for (const tools of xs) { tools.exec_command({cmd: 'rm -rf /'}); }",
        "const {tools} = o; tools.exec_command({cmd: 'rm -rf /'});",
        "const [tools] = o; tools.exec_command({cmd: 'rm -rf /'});",
        "function tools() {} tools.exec_command({cmd: 'rm -rf /'});",
        "const f = (tools) => tools.exec_command({cmd: 'rm -rf /'});",
    ):
        a = analyze(script)
        assert a.calls == () and a.entries == (), script
        assert any(f.code == "tools-shadowed" for f in a.findings), script
    # the shadow ends with its scope
    a = analyze("{ const tools = {}; tools.x({}); }\nawait tools.exec_command({cmd: 'ls'});")
    assert _commands(a.source) == ["ls"]


def test_big_integer_never_raises() -> None:
    script = "await tools.exec_command({cmd: 'ls', n: " + "9" * 5000 + "});"
    a = analyze(script)
    assert a.calls[0].argument == {"cmd": "ls", "n": float("inf")}
    assert json.dumps(analysis_to_json(a))  # the renderer's JSON: inf becomes null
    assert decode_literal("9" * 100_000) == float("inf")
    assert decode_literal("0x" + "f" * 5000) == float("inf")


def test_numbers_are_doubles() -> None:
    assert decode_literal("9007199254740993") == 9007199254740992  # V8 rounds
    assert decode_literal("123456789012345678901234567890") == 1.2345678901234568e29
    assert decode_literal("1e21") == 1e21 and decode_literal("1e20") == 10**20
    assert decode_literal("10n") is COMPUTED  # BigInt: JSON.stringify throws
    assert decode_literal("{n: 10n}") is COMPUTED
    assert decode_literal("0x10") == 16 and decode_literal("1_000") == 1000


def test_proto_is_not_a_key() -> None:
    assert decode_literal("{__proto__: {x: 1}, cmd: 'ls'}") == {"cmd": "ls"}
    assert decode_literal('{"__proto__": 1, "a": 2}') == {"a": 2}
    assert decode_literal("{a: {__proto__: null, b: 1}}") == {"a": {"b": 1}}


def test_lone_surrogate_kept_and_rendered_safely() -> None:
    a = analyze("await tools.exec_command({cmd: 'echo \\uD800'});")
    assert a.calls[0].argument == {"cmd": "echo \ud800"}
    assert "\\ud800" in json.dumps(analysis_to_json(a))


def test_patch_bindings_resolve_by_block_scope() -> None:
    script = (
        "{ const patch = '*** Begin Patch\\n*** Add File: a.txt\\n+x\\n*** End Patch';"
        " await tools.apply_patch(patch); }\n"
        "{ const patch = '*** Begin Patch\\n*** Add File: b.txt\\n+y\\n*** End Patch';"
        " await tools.apply_patch(patch); }"
    )
    (entry,) = analyze(script).entries
    assert isinstance(entry, PatchEntry)
    assert [f.path for f in entry.files] == ["a.txt", "b.txt"] and entry.unresolved_paths == 0


def test_comment_runs_read_from_a_blanked_copy() -> None:
    for script in (
        "await tools" + "/**/" * 20_000 + ".exec_command({cmd: 'ls'})",
        "await tools" + "//c\n" * 20_000 + ".exec_command({cmd: 'ls'})",
    ):
        a = analyze(script)
        assert a.parse_error is None and _commands(script) == ["ls"]
        assert a.calls[0].end.offset == len(script)  # offsets are the original script's


def test_proof_of_execution_rule() -> None:
    a = analyze(
        "const r = await tools.exec_command({cmd: 'a'});\n"
        "text(r.output);\n"
        "await tools.exec_command({cmd: 'b'});\n"
        "if (x) await tools.exec_command({cmd: 'c'});\n"
        "try { await tools.exec_command({cmd: 'd'}); } catch {}\n"
        "x && await tools.exec_command({cmd: 'e'});\n"
        "await tools.exec_command({cmd: `f${x}`});\n"
        "tools.exec_command({cmd: 'g'});\n"
        "f(await tools.exec_command({cmd: 'h'}));\n"
        "await tools?.exec_command({cmd: 'i'});\n"
        "async function k() { await tools.exec_command({cmd: 'j'}); }\n"
    )
    assert [a.calls[i].argument_source for i in a.proven] == ["{cmd: 'a'}", "{cmd: 'b'}"]
    # a statement that may end the cell early stops the proof
    a = analyze("await tools.exec_command({cmd: 'a'});\nif (x) exit();\nawait tools.exec_command({cmd: 'b'});")
    assert a.proven == (0,)
    a = analyze("await tools.exec_command({cmd: 'a'});\nf();\nawait tools.exec_command({cmd: 'b'});\n"
                "function f() { yield_control(); }")
    assert a.proven == (0,)
