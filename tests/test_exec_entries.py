"""Entries  and the apply_patch parser (point 8)."""

from __future__ import annotations

import textwrap

import pytest

from exec_grammar import (
    PatchEntry,
    PatchFile,
    PatchOp,
    ShellCommandEntry,
    StdinWriteEntry,
    ToolCallEntry,
    analyze,
    parse_patch,
)


def entries(script: str):
    return analyze(textwrap.dedent(script)).entries


def test_each_decoded_exec_command_is_one_shell_command() -> None:
    got = entries(
        """
        const a = await tools.exec_command({cmd: "git status", workdir: "/repo", yield_time_ms: 1000,
          max_output_tokens: 200, tty: true, shell: "/bin/bash", login: false, justification: "why",
          sandbox_permissions: "require_escalated"});
        const b = await tools.exec_command({cmd: 'ls'});
        """
    )
    assert got == (
        ShellCommandEntry(
            command="git status",
            cwd="/repo",
            options={
                "yield_time_ms": 1000,
                "max_output_tokens": 200,
                "tty": True,
                "shell": "/bin/bash",
                "login": False,
                "justification": "why",
                "sandbox_permissions": "require_escalated",
            },
            order=0,
            call_names=("exec_command",),
        ),
        ShellCommandEntry(command="ls", order=1, call_names=("exec_command",)),
    )
    assert all(e.executed == "unknown" for e in got)


def test_shell_command_and_shell_calls_are_shell_commands() -> None:
    """Windows sessions call ``tools.shell_command({command})`` (public Codex scripts do), others may
    have ``tools.shell({command: argv})``: each is one shell command like exec_command, named by its tool."""
    got = entries(
        r"""
        const r = await tools.shell_command({command: "Get-ChildItem -Force", workdir: "C:\\repo",
          timeout_ms: 10000, sandbox_permissions: "require_escalated", justification: "list"});
        await tools.shell({command: ["bash", "-lc", "ls -la"], workdir: "/repo", timeout_ms: 500});
        await tools.shell({command: ["git", "status"]});
        """
    )
    assert got == (
        ShellCommandEntry(
            command="Get-ChildItem -Force",
            cwd="C:\\repo",
            options={"timeout_ms": 10000, "sandbox_permissions": "require_escalated", "justification": "list"},
            order=0,
            call_names=("shell_command",),
        ),
        ShellCommandEntry(command="ls -la", cwd="/repo", options={"timeout_ms": 500}, order=1,
                          call_names=("shell",)),
        ShellCommandEntry(command="git status", order=2, call_names=("shell",)),
    )


@pytest.mark.parametrize(
    "call",
    [
        "tools.shell_command({command: cmd})",
        "tools.shell_command({command: `ls ${dir}`})",
        "tools.shell_command({workdir: '/r'})",
        "tools.shell({command: ['bash', '-lc', x]})",
        "tools.shell({command: 'ls'.split(' ')})",
    ],
)
def test_an_unreadable_shell_call_gives_the_whole_script(call: str) -> None:
    script = f"await tools.exec_command({{cmd: 'ls'}});\nawait {call};\n"
    got = analyze(script).entries
    assert len(got) == 1 and isinstance(got[0], ShellCommandEntry) and got[0].whole_script
    assert got[0].command == script


def test_write_stdin_is_a_stdin_write() -> None:
    got = entries('await tools.write_stdin({session_id: 7, chars: "y\\n"});')
    assert got == (StdinWriteEntry(session_id=7, chars="y\n", order=0),)


def test_four_calls_two_template_commands_give_one_whole_script_entry() -> None:
    """Any computed exec_command argument makes the whole script the one command (never a partial list)."""
    script = textwrap.dedent(
        """
        const dir = "/repo";
        const a = await tools.exec_command({cmd: "ls", workdir: dir});
        const b = await tools.exec_command({cmd: `cat ${a.output.split("\\n")[0]}`});
        const c = await tools.exec_command({cmd: "pwd"});
        const d = await tools.exec_command({cmd: `wc -l ${b.output}`});
        """
    )
    a = analyze(script)
    assert [c.computed for c in a.calls] == [True, True, False, True]
    assert a.entries == (
        ShellCommandEntry(command=script, whole_script=True, order=0, call_names=("exec_command",) * 4),
    )


def test_if_false_entries_are_executed_unknown() -> None:
    got = entries(
        """
        if (false) {
          await tools.exec_command({cmd: "rm -rf /tmp/cache"});
          await tools.apply_patch("*** Begin Patch\\n*** Delete File: old.txt\\n*** End Patch");
        }
        """
    )
    assert [type(e) for e in got] == [ShellCommandEntry, PatchEntry]
    assert [e.executed for e in got] == ["unknown", "unknown"]


def test_patch_path_resolved_through_one_const_binding() -> None:
    got = entries(
        """
        const path = "src/a.ts";
        await tools.apply_patch(`*** Begin Patch\\n*** Update File: ${path}\\n@@\\n-a\\n+b\\n*** End Patch`);
        """
    )
    assert got == (
        PatchEntry(
            files=(PatchFile("src/a.ts", PatchOp.UPDATE, None, 1, 1),),
            patch_texts=("*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch",),
        ),
    )


def test_patch_path_dropped_when_not_one_const_literal() -> None:
    """`${p}` from a let or from a call is dropped and counted, never shown. `${q}` resolves by scope,
    as V8 resolves it: the top-level `const q` (the block's own `q` is not visible there)."""
    got = entries(
        """
        let p = "a.ts";
        const q = "b.ts";
        { const q = "c.ts"; }
        const r = pick();
        await tools.apply_patch(`*** Begin Patch
        *** Update File: ${p}
        @@
        -x
        +y
        *** Update File: ${q}
        @@
        -x
        +y
        *** Add File: ${r}
        +new
        *** Delete File: keep/${"literal"}.txt
        *** Update File: src/ok.py
        @@
        -1
        +2
        *** End Patch`);
        """
    )
    (patch,) = got
    assert isinstance(patch, PatchEntry)
    assert [f.path for f in patch.files] == ["b.ts", "src/ok.py"]
    assert patch.unresolved_paths == 3
    assert patch.patch_texts == ()
    assert all("${" not in f.path for f in patch.files)


def test_patch_through_variable_and_all_patches_in_one_entry() -> None:
    got = entries(
        """
        const path = "src/a.ts";
        const patch = `*** Begin Patch
        *** Update File: ${path}
        *** Move to: src/b.ts
        @@
        -x
        +y
        *** End Patch`;
        await tools.apply_patch(patch);
        await tools.exec_command({cmd: "npm test"});
        await tools.apply_patch('*** Begin Patch\\n*** Add File: new.txt\\n+hello\\n*** End Patch\\n');
        await tools.apply_patch(makePatch());
        """
    )
    assert [type(e) for e in got] == [PatchEntry, ShellCommandEntry]
    patch = got[0]
    assert isinstance(patch, PatchEntry)
    assert patch.files == (
        PatchFile("src/a.ts", PatchOp.UPDATE, "src/b.ts", 1, 1),
        PatchFile("new.txt", PatchOp.ADD, None, 1, 0),
    )
    assert patch.unresolved_paths == 1  # makePatch(): its files are unknown
    assert patch.order == 0 and got[1].order == 1


def test_malformed_patch_in_a_script_carries_the_parser_error() -> None:
    # the direct call reports "missing '*** End Patch'", so the script must too;
    # a well-formed patch keeps error None, and an unresolved ${body} is not blamed on the patch.
    bad = entries(
        """
        await tools.apply_patch("*** Begin Patch\\n*** Add File: b.txt\\n+x\\n");
        await tools.apply_patch("*** Begin Patch\\n*** Update File: a.py\\n@@\\n x\\nGARBAGE\\n*** End Patch\\n");
        """
    )
    assert len(bad) == 1 and isinstance(bad[0], PatchEntry)
    assert bad[0].error == "missing '*** End Patch'; line 5: unexpected line in a hunk: 'GARBAGE'"
    assert [f.path for f in bad[0].files] == ["b.txt", "a.py"]
    good = entries('await tools.apply_patch("*** Begin Patch\\n*** Add File: c.txt\\n+x\\n*** End Patch\\n");')
    assert isinstance(good[0], PatchEntry) and good[0].error is None
    unresolved = entries("await tools.apply_patch(`*** Begin Patch\\n*** Add File: d.txt\\n${body}`);")
    assert isinstance(unresolved[0], PatchEntry) and unresolved[0].error is None
    assert [f.path for f in unresolved[0].files] == ["d.txt"]


def test_other_tools_are_tool_call_entries() -> None:
    got = entries(
        """
        await tools.mcp__github__search({q: "x"});
        await tools.web__run({search_query: [{q: "y"}]});
        await tools.view_image({path: "/tmp/a.png"});
        """
    )
    assert got == (
        ToolCallEntry(name="mcp__github__search", argument_source='{q: "x"}', argument={"q": "x"}, order=0),
        ToolCallEntry(
            name="web__run",
            argument_source='{search_query: [{q: "y"}]}',
            argument={"search_query": [{"q": "y"}]},
            order=1,
        ),
        ToolCallEntry(
            name="view_image",
            argument_source='{path: "/tmp/a.png"}',
            argument={"path": "/tmp/a.png"},
            order=2,
        ),
    )


# --- a tool name that cannot be decided, or tools used other than by a direct call ----------

BACKENDS = ["tree-sitter", "lexer", "esprima"]


def _whole(script: str, parser: str = "tree-sitter"):
    a = analyze(textwrap.dedent(script), parser=parser)
    shells = [e for e in a.entries if isinstance(e, ShellCommandEntry)]
    return a, shells


@pytest.mark.parametrize("parser", BACKENDS)
def test_computed_tool_name_gives_the_whole_script(parser: str) -> None:
    """``tools[n](…)`` may be exec_command: one whole-script command, the call still listed as ``*``."""
    a, shells = _whole(
        """
        const n = "exec_command";
        await tools.exec_command({cmd: "ls"});
        await tools[n]({cmd: "rm -rf build"});
        """,
        parser,
    )
    assert [c.name for c in a.calls] == ["exec_command", "*"]
    assert len(shells) == 1 and shells[0].whole_script and shells[0].command == a.source
    assert shells[0].call_names == ("exec_command", "*") and shells[0].order == 0
    assert [(e.name, e.order) for e in a.entries if isinstance(e, ToolCallEntry)] == [("*", 1)]


@pytest.mark.parametrize(
    "script",
    [
        'const f = tools.exec_command;\nawait f({cmd: "aliased"});',
        'const { exec_command } = tools;\nawait exec_command({cmd: "destructured"});',
        'await tools.exec_command.call(null, {cmd: "viacall"});',
        'await tools.exec_command.apply(null, [{cmd: "viaapply"}]);',
        'const run = tools["exec_command"];\nawait run({cmd: "x"});',
        'const g = tools[name];\nawait g({cmd: "x"});',
        'await helper(tools);\nawait tools.view_image({path: "a.png"});',
        "const t = tools;\nawait t.exec_command({cmd: 'x'});",
    ],
)
@pytest.mark.parametrize("parser", BACKENDS)
def test_tools_used_other_than_by_a_call_gives_the_whole_script(script: str, parser: str) -> None:
    """An alias, destructuring, ``.call``/``.apply`` or ``tools`` passed on hides commands no call
    names: the whole script is the one command, and a ``tools-escape`` finding says where."""
    a, shells = _whole(script, parser)
    assert len(shells) == 1 and shells[0].whole_script and shells[0].command == a.source
    escapes = [f for f in a.findings if f.code == "tools-escape"]
    assert escapes and all(
        a.source[f.offset : f.offset + 5] == "tools" for f in escapes if f.offset is not None
    )


@pytest.mark.parametrize(
    "script",
    [
        "// const f = tools.exec_command;\nawait tools.exec_command({cmd: 'ls'});",
        "const s = 'tools.exec_command';\nawait tools.exec_command({cmd: 'ls'});",
        "const o = {tools: 1, a: mytools, b: x.tools};\nawait tools.exec_command({cmd: 'ls'});",
        "const v = tools.view_image;\nawait tools['exec_command']({cmd: 'ls'});",
        "await tools.exec_command?.({cmd: 'ls'});\nawait tools?.exec_command({cmd: 'pwd'});",
    ],
)
def test_quoted_or_other_tool_references_keep_the_command_list(script: str) -> None:
    """Only code that may run exec_command unseen counts: quoted text, object keys, other objects'
    ``tools`` and references to other tools leave the per-command list as it is."""
    a, shells = _whole(script)
    assert shells and not any(s.whole_script for s in shells)
    assert not [f for f in a.findings if f.code == "tools-escape"]


def test_quoted_call_in_patch_text_is_not_a_command() -> None:
    """A patch whose body quotes tools.exec_command(…) gives a patch, not a command."""
    got = entries(
        """
        await tools.apply_patch("*** Begin Patch\\n*** Add File: t.js\\n+await tools.exec_command({cmd: 'rm -rf /'});\\n*** End Patch");
        """
    )
    assert [type(e) for e in got] == [PatchEntry]


# --- parse_patch -------------------------------------------------------------------------------


def test_parse_patch_all_operations() -> None:
    patch = parse_patch(
        textwrap.dedent(
            """\
            *** Begin Patch
            *** Add File: docs/new.md
            +# Title
            +
            +text
            *** Delete File: old.txt
            *** Update File: src/app.py
            *** Move to: src/main.py
            @@ def main():
             context
            -old
            +new
            +newer
            @@
            -gone
            *** End of File
            *** End Patch
            """
        )
    )
    assert patch.error is None
    assert patch.files == (
        PatchFile("docs/new.md", PatchOp.ADD, None, 3, 0),
        PatchFile("old.txt", PatchOp.DELETE, None, 0, 0),
        PatchFile("src/app.py", PatchOp.UPDATE, "src/main.py", 2, 2),
    )


def test_parse_patch_malformed_is_reported() -> None:
    assert parse_patch("hello").error is not None
    missing_end = parse_patch("*** Begin Patch\n*** Delete File: a\n")
    assert missing_end.error is not None and [f.path for f in missing_end.files] == ["a"]
    garbage = parse_patch("*** Begin Patch\n*** Update File: a\n@@\n?what\n*** End Patch")
    assert garbage.error is not None
    empty_update = parse_patch("*** Begin Patch\n*** Update File: a\n*** End Patch")
    assert empty_update.error is not None
    assert parse_patch("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch").error is not None


def test_parse_patch_heredoc_wrapper() -> None:
    patch = parse_patch("<<'EOF'\n*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\nEOF\n")
    assert patch.error is None and patch.files == (PatchFile("a.txt", PatchOp.DELETE),)


_P = "*** Begin Patch\\n*** Update File: src/a.ts\\n@@\\n-old\\n+new\\n*** End Patch\\n"


@pytest.mark.parametrize(
    "script",
    [
        f'const patch = "{_P}";\nconst r = await tools.apply_patch({{patch}});',  # shorthand names the const
        f'await tools.apply_patch({{ patch: "{_P}" }});',
        f"await tools.apply_patch({{input: '{_P}'}});",
        f'const p = "{_P}"; await tools.apply_patch({{ input: p }});',
        f'await tools.apply_patch({{ "patch": `{_P}` }});',
    ],
)
def test_patch_passed_as_an_objects_one_field(script: str) -> None:
    """Scripts written for harnesses whose apply_patch takes an object (``{patch}``, ``{input: …}``)."""
    (patch,) = [e for e in analyze(script).entries if isinstance(e, PatchEntry)]
    assert [(f.path, f.op) for f in patch.files] == [("src/a.ts", PatchOp.UPDATE)]
    assert patch.unresolved_paths == 0


@pytest.mark.parametrize(
    "script",
    ["await tools.apply_patch({ patch: p, dry_run: true });", "await tools.apply_patch({patch});",
     "await tools.apply_patch({ other: 'x' });"],
)
def test_an_object_patch_that_cannot_be_read_is_unresolved(script: str) -> None:
    (patch,) = [e for e in analyze(script).entries if isinstance(e, PatchEntry)]
    assert patch.files == () and patch.unresolved_paths == 1


@pytest.mark.parametrize(
    "script",
    [
        "const name = pick();\nawait tools.apply_patch(`*** Begin Patch\\n*** Add File: src/` + name + `\\n+hi\\n*** End Patch\\n`);",
        "await tools.apply_patch({patch: `*** Begin Patch\\n*** Update File: src/` + name + `.py\\n@@\\n-a\\n+b\\n*** End Patch\\n`});",
        "await tools.apply_patch({input: `*** Begin Patch\\n*** Delete File: a.txt\\n*** End Patch\\n`.replaceAll('a.txt','b.txt')});",
    ],
)
def test_a_template_that_is_only_part_of_the_argument_is_unresolved(script: str) -> None:
    """The first template of `` `…src/` + name `` or `` `…`.replace(…) `` is not the patch; reading it
    named a wrong file (``src/``, ``a.txt`` where ``b.txt`` changed)."""
    (patch,) = [e for e in analyze(script).entries if isinstance(e, PatchEntry)]
    assert patch.files == () and patch.unresolved_paths == 1


def test_object_patch_argument_is_read_in_linear_work() -> None:
    """A regex over the value backtracked cubically on whitespace runs (519 s for one argument);
    the tokens are read once. Counted in lexer tokens, not timed."""
    from exec_grammar.entries import _patch_field

    for n in (1_000, 100_000):
        src = "{patch: p" + " " * n + "," + " " * n + "y}"
        assert _patch_field(src) is None  # two values: not a one-field patch object
    blank = " \n" * 20_000
    script = ("const f = 'a.py';\nawait tools.apply_patch({patch: `*** Begin Patch\n*** Update File: ${f}\n@@\n x\n"
              + blank + "-y\n+z\n*** End Patch\n`});")
    (patch,) = [e for e in analyze(script).entries if isinstance(e, PatchEntry)]
    assert [f.path for f in patch.files] == ["a.py"]


@pytest.mark.parametrize("parser", ["tree-sitter", "lexer"])
@pytest.mark.parametrize("script", ["const s = await tools.codex_app.lookup_ticket({id: 'A'});",
                                    "await tools.view_image.call(null, {path: 'a.png'});"])
def test_a_member_of_a_tool_is_never_silently_dropped(script: str, parser: str) -> None:
    """``tools.ns.tool(…)`` named no call and no entry; reaching a member of a tool may run a tool
    no direct call names, so the script is the one whole-script command, as for other escapes."""
    a = analyze(script, parser=parser)
    assert any(f.code == "tools-escape" for f in a.findings)
    assert [(type(e), e.whole_script) for e in a.entries if isinstance(e, ShellCommandEntry)] == [
        (ShellCommandEntry, True)]


def test_string_raw_patch_in_an_object_field() -> None:
    """``{patch: String.raw`…`}`` names its files like the bare ``String.raw`…``` argument."""
    script = "await tools.apply_patch({patch: String.raw`*** Begin Patch\n*** Add File: C:\\x\\a.txt\n+hi\n*** End Patch\n`});"
    (patch,) = [e for e in analyze(script).entries if isinstance(e, PatchEntry)]
    assert [f.path for f in patch.files] == ["C:\\x\\a.txt"] and patch.unresolved_paths == 0
